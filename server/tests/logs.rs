//! Logs of the real binary: no ANSI colour codes when standard error is not a terminal (even without
//! `NO_COLOR`), and `--log-format json` writes one JSON object per line.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Guard against a hang while waiting for the server's first lines.
const GUARD: Duration = Duration::from_secs(60);

/// Starts `winplace serve --demo` on a free port with `extra` arguments, collects standard error up to
/// the "serving on" line, stops the server and returns the lines.
fn serve_log(extra: &[&str]) -> Vec<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
        .args(extra)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .env_remove("WINPLACE_LOG_FORMAT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the winplace binary runs");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    let mut lines = Vec::new();
    while start.elapsed() < GUARD {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                let done = line.contains("serving on");
                lines.push(line);
                if done {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        lines.iter().any(|l| l.contains("serving on")),
        "the server did not start: {lines:?}"
    );
    lines
}

#[test]
fn text_logs_have_no_colour_codes_when_stderr_is_not_a_terminal() {
    let lines = serve_log(&[]);
    for line in &lines {
        assert!(!line.contains('\u{1b}'), "ANSI escape in {line:?}");
    }
    assert!(lines.iter().any(|l| l.contains("INFO")), "{lines:?}");
}

#[test]
fn json_logs_are_one_object_per_line() {
    let lines = serve_log(&["--log-format", "json"]);
    for line in &lines {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
        assert!(value["level"].is_string(), "{line}");
        assert!(value["timestamp"].is_string(), "{line}");
        assert!(value["fields"]["message"].is_string(), "{line}");
    }
    assert!(lines.iter().any(|l| l.contains("serving on")), "{lines:?}");
}
