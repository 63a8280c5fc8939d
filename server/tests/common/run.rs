//! Running the built `winplace` binary as a user would: in a folder, with standard input, colors off and
//! no kubeconfig or log settings of the machine running the tests.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `winplace args...` in `dir` with `stdin` (empty when `None`) and waits for it.
pub fn winplace(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the winplace binary runs");
    if let Some(mut pipe) = child.stdin.take() {
        pipe.write_all(stdin.unwrap_or("").as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("winplace finishes")
}
