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
        "winplace-kubewarden",
        "--target",
        "wasm32-wasip1",
        "--",
        "-D",
        "warnings",
    ]))?;
    crate::build::all(false)?;
    let extra = crate::util::extra_corpus();
    if let Some(dir) = &extra {
        eprintln!("extra corpus cases from {}", dir.display());
    }
    let with_extra = |cmd: &mut Command| {
        if let Some(dir) = &extra {
            cmd.env("WINPLACE_EXTRA_CORPUS", dir);
        }
    };
    let mut test = Command::new(cargo());
    test.args(["test", "--workspace"]);
    with_extra(&mut test);
    run(&mut test)?;
    let bin = target_dir()?.join("debug/winplace");
    let mut browser = Command::new("npx");
    browser
        .args(["playwright", "test"])
        .env("WINPLACE_BIN", bin)
        .current_dir(root().join("playwright-tests"));
    with_extra(&mut browser);
    run(&mut browser)
}

/// The benchmarks whose figures the README reports.
pub fn benches() -> Result<(), String> {
    run(Command::new(cargo()).args(["bench", "--workspace"]))
}
