//! Every check, in the order that fails fastest.

use crate::util::{cargo, root, run, target_dir};
use std::process::Command;

/// fmt, clippy, build, cargo test (with the waPC host test), Playwright.
///
/// Chromium (apt) and the Playwright packages (npm) are installed on a second thread while cargo works:
/// downloads cost no CPU, and nothing needs them before Playwright. The registry tools (apt) are installed
/// first, before that thread starts (two apt-gets would fight over its lock): `cargo test` needs them.
pub fn all() -> Result<(), String> {
    crate::setup::rust_targets()?;
    crate::setup::registry_tools()?;
    let browser = std::thread::spawn(crate::setup::browser_tools);
    let checked = checks();
    let installed = browser
        .join()
        .unwrap_or_else(|_| Err("installing the browser tools panicked".into()));
    checked?;
    installed?;
    playwright()
}

/// Everything but the browser tests.
fn checks() -> Result<(), String> {
    run(Command::new(cargo()).args(["fmt", "--all", "--check"]))?;
    run(Command::new(cargo()).args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(Command::new(cargo()).args([
        "clippy",
        "-p",
        "winplace-policy-wasm",
        "--target",
        "wasm32-wasip1",
        "--",
        "-D",
        "warnings",
    ]))?;
    crate::build::all(false)?;
    let mut test = Command::new(cargo());
    test.args(["test", "--workspace"]);
    with_extra_corpus(&mut test);
    run(&mut test)
}

/// Names the extra corpus folder, when there is one, to the tests that run the corpus.
fn with_extra_corpus(cmd: &mut Command) {
    if let Some(dir) = crate::util::extra_corpus() {
        eprintln!("extra corpus cases from {}", dir.display());
        cmd.env("WINPLACE_EXTRA_CORPUS", dir);
    }
}

/// Playwright in Debian's Chromium against the dev-profile server the checks built.
fn playwright() -> Result<(), String> {
    let bin = target_dir()?.join("debug/winplace");
    // policy.wasm in wasmtime, for the Admission view's parity test (built by `cargo test`: an example).
    let replay = target_dir()?.join("debug/examples/replay");
    let mut browser = Command::new("npx");
    browser
        .args(["playwright", "test"])
        .env("WINPLACE_BIN", bin)
        .env("WINPLACE_REPLAY_BIN", replay)
        .current_dir(root().join("playwright-tests"));
    with_extra_corpus(&mut browser);
    run(&mut browser)
}

/// The benchmarks whose figures the README reports.
pub fn benches() -> Result<(), String> {
    run(Command::new(cargo()).args(["bench", "--workspace"]))
}
