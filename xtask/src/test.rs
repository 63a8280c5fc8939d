//! Every check, in the order that fails fastest.

use crate::util::{cargo, root, run, target_dir};
use std::process::Command;

/// fmt, the import graph, clippy, build, cargo test (with the waPC host test), Playwright.
///
/// Chromium (apt) and the Playwright packages (npm) are installed on a second thread while cargo works:
/// downloads cost no CPU, and nothing needs them before Playwright. The registry tools (apt) are installed
/// first, before that thread starts (two apt-gets would fight over its lock): `cargo test` needs them, and
/// so the Python packages (PyPI) the CEL type check, the chart and the workflow lint run.
pub fn all() -> Result<(), String> {
    crate::setup::rust_targets()?;
    crate::setup::registry_tools()?;
    crate::setup::python_tools("test", &crate::setup::TEST_PYTHON_PACKAGES)?;
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
///
/// clippy lints the workspace while `cargo test` builds it: clippy-driver, cargo-clippy's rustc, is the
/// workspace crates' compiler (`RUSTC_WORKSPACE_WRAPPER`, what `cargo clippy` sets) for every test
/// target, the benches, the examples and the binaries, so the lints run where `cargo clippy
/// --all-targets` runs them and the dependencies are compiled once instead of once more in check mode
/// (`linted`). Only
/// policy.wasm's own target keeps a `cargo clippy` of its own: its release build is what ships, and stays
/// rustc's.
fn checks() -> Result<(), String> {
    run(Command::new(cargo()).args(["fmt", "--all", "--check"]))?;
    crate::imports::command()?;
    // policy.wasm's own lints, in the dev profile: cargo locks that profile's folders, not the release
    // builds' of `assets`, so the two run at once and the lints fill a core the wasm links leave idle.
    let lints = std::thread::spawn(|| {
        run(Command::new(cargo()).args([
            "clippy",
            "-p",
            "winplace-policy-wasm",
            "--target",
            "wasm32-wasip1",
            "--",
            "-D",
            "warnings",
        ]))
    });
    let assets = crate::build::assets();
    lints
        .join()
        .unwrap_or_else(|_| Err("linting policy.wasm panicked".into()))?;
    assets?;
    // Every target `cargo clippy --all-targets` lints, built (benches and examples too) but not run, the
    // dev server among them (target/debug/winplace, which Playwright runs). In one cargo run, so that
    // every crate of the workspace is built as a selected package, which the driver lints (a crate built
    // first as a dependency of one package would be reused unlinted) ...
    run(linted(Command::new(cargo()).args([
        "test",
        "--workspace",
        "--all-targets",
        "--no-run",
    ])))?;
    // ... then the tests, built above with the same compiler, so nothing is built again.
    let mut test = Command::new(cargo());
    test.args(["test", "--workspace"]);
    with_extra_corpus(&mut test);
    run(linted(&mut test))
}

/// `cmd` with clippy-driver compiling the workspace's crates and denying every warning, as
/// `cargo clippy -- -D warnings` runs it (cargo-clippy passes its arguments to the driver in
/// `CLIPPY_ARGS`, each followed by `__CLIPPY_HACKERY__`). The driver is cargo-clippy's, beside this cargo.
fn linted(cmd: &mut Command) -> &mut Command {
    let cargo = std::path::PathBuf::from(cargo());
    let driver = cargo
        .parent()
        .map(|dir| dir.join("clippy-driver"))
        .filter(|driver| driver.exists())
        .unwrap_or_else(|| "clippy-driver".into());
    cmd.env("RUSTC_WORKSPACE_WRAPPER", driver).env(
        "CLIPPY_ARGS",
        "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__",
    )
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
