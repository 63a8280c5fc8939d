//! Logs of the real binary: no ANSI colour codes when standard error is not a terminal (even without
//! `NO_COLOR`), `--log-format json` writes one JSON object per line, and a server that is not ready
//! says so once, not at ERROR per probe.

use crate::common::http;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Guard against a hang while waiting for the server's first lines.
const GUARD: Duration = Duration::from_secs(60);

/// Starts `winplace` with `args` (standard error piped, no colour or format from the environment, `RUST_LOG`
/// as given or unset) and a thread that sends its standard error line by line.
fn spawn_logging(
    args: &[&std::ffi::OsStr],
    rust_log: Option<&str>,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_winplace"));
    command
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("WINPLACE_LOG_FORMAT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match rust_log {
        Some(level) => command.env("RUST_LOG", level),
        None => command.env_remove("RUST_LOG"),
    };
    let mut child = command.spawn().expect("the winplace binary runs");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Starts `winplace serve --demo` on a free port with `extra` arguments, collects standard error up to
/// the "serving on" line, stops the server and returns the lines.
fn serve_log(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<&std::ffi::OsStr> = ["serve", "--demo", "--listen", "127.0.0.1:0"]
        .iter()
        .map(std::ffi::OsStr::new)
        .collect();
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let (mut child, rx) = spawn_logging(&args, None);
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

/// Every `/readyz` 503 used to be logged at ERROR by the trace layer: a probe every few
/// seconds filled the logs. The refused snapshot is one ERROR (where it happens), the change of
/// readiness one WARN, and the probes nothing more.
#[test]
fn a_server_that_is_not_ready_says_so_once_not_per_probe() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("cluster.json");
    std::fs::write(&empty, "\n").expect("write");
    let args: Vec<&std::ffi::OsStr> = ["serve", "--listen", "127.0.0.1:0", "--snapshot"]
        .iter()
        .map(std::ffi::OsStr::new)
        .chain([empty.as_os_str()])
        .collect();
    let (mut child, rx) = spawn_logging(&args, Some("info"));
    let mut lines = Vec::new();
    let start = Instant::now();
    let addr = loop {
        let line = rx
            .recv_timeout(GUARD.saturating_sub(start.elapsed()))
            .unwrap_or_else(|_| panic!("the server did not start: {lines:?}"));
        let addr = line
            .split("serving on http://")
            .nth(1)
            .map(|a| a.trim().to_string());
        lines.push(line);
        if let Some(addr) = addr {
            break addr;
        }
    };
    // Until the refusal is known the answer is 503 too (not synced); then 503 with the reason, probe
    // after probe.
    let mut codes = Vec::new();
    let mut refused = 0;
    while refused < 5 && start.elapsed() < GUARD {
        let (code, answer) = http::get(&addr, "/readyz", GUARD);
        codes.push(code);
        if answer.contains("the file is empty") {
            refused += 1;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(refused, 5, "the refusal never reached /readyz: {codes:?}");
    let _ = child.kill();
    let _ = child.wait();
    lines.extend(rx.try_iter());
    assert!(codes.iter().all(|&c| c == 503), "{codes:?}");
    let at = |level: &str| -> Vec<&String> {
        lines
            .iter()
            .filter(|l| l.split_whitespace().nth(1) == Some(level))
            .collect()
    };
    let errors = at("ERROR");
    assert_eq!(errors.len(), 1, "one ERROR, the refused file: {lines:#?}");
    assert!(errors[0].contains("the file is empty"), "{errors:?}");
    let warnings = at("WARN");
    assert_eq!(warnings.len(), 1, "one WARN, not ready: {lines:#?}");
    assert!(warnings[0].contains("not ready"), "{warnings:?}");
}
