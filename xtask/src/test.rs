//! Every check, in the order that fails fastest.

use crate::util::{cargo, root, run, target_dir};
use std::process::Command;

/// fmt, clippy, build, cargo test (with the waPC host test), Playwright.
pub fn all() -> Result<(), String> {
    crate::setup::rust_and_wasm_tools()?;
    crate::setup::browser_tools()?;
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
        "winplace-policy",
        "--features",
        "kubewarden",
        "--target",
        "wasm32-wasip1",
        "--",
        "-D",
        "warnings",
    ]))?;
    crate::build::all(false)?;
    run(Command::new(cargo()).args(["test", "--workspace"]))?;
    let bin = target_dir()?.join("debug/winplace");
    run(Command::new("npx")
        .args(["playwright", "test"])
        .env("WINPLACE_BIN", bin)
        .current_dir(root().join("playwright-tests")))
}

/// The benchmarks whose figures the README reports.
pub fn benches() -> Result<(), String> {
    run(Command::new(cargo()).args(["bench", "--workspace"]))
}
