//! The build: policy.wasm, the dashboard, the server.

use crate::setup::wasm_opt;
use crate::util::{cargo, root, run, target_dir};
use std::process::Command;

/// Builds everything; the server in release mode when `release`, else in the dev profile tests use.
///
/// The server's dependencies compile beside the wasm modules; the server embeds static/, so once the
/// wasm is there its own crate is compiled again (only it: the build script watches static/).
pub fn all(release: bool) -> Result<(), String> {
    wasm_beside(|| server(release))?;
    server(release)
}

/// Builds policy.wasm and the dashboard into static/ on other threads while `beside` runs on this one;
/// `beside` must not need static/.
///
/// Two cores, and long single-threaded phases (the wasm LTO links, wasm-opt, big single crates such as
/// k8s-openapi): work that does not wait for the wasm fills them. The wasm modules build in a target
/// directory of their own (`wasm/` inside the target directory), so that cargo's lock on the main one
/// does not make the two builds take turns. The wasm tools (wasm-bindgen-cli, compiled from crates.io on
/// a fresh machine, and npm's binaryen) install on a third thread, and policy.wasm is shrunk while cargo
/// compiles the dashboard.
pub fn wasm_beside(beside: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    crate::setup::rust_targets()?;
    let tools = std::thread::spawn(crate::setup::wasm_tools);
    let wasm = std::thread::spawn(move || {
        compile_policy()?;
        let policy = std::thread::spawn(move || {
            joined(tools, "installing the wasm tools")?;
            finish_policy()
        });
        let dashboard = compile_dashboard();
        let policy = joined(policy, "shrinking policy.wasm");
        dashboard?;
        policy?;
        finish_dashboard()
    });
    // Both sides finish (or fail) before either result is reported.
    let beside = beside();
    let wasm = joined(wasm, "building the wasm modules");
    beside?;
    wasm
}

/// The result of a thread's work (a panic becomes an error naming the work).
fn joined(handle: std::thread::JoinHandle<Result<(), String>>, what: &str) -> Result<(), String> {
    handle
        .join()
        .unwrap_or_else(|_| Err(format!("{what} panicked")))
}

/// `cargo build`, with `--timings` (an HTML report under the target directory's `cargo-timings/`) when
/// `XTASK_TIMINGS` is set: where a build's time goes.
fn cargo_build() -> Command {
    let mut cmd = Command::new(cargo());
    cmd.arg("build");
    if std::env::var_os("XTASK_TIMINGS").is_some() {
        cmd.arg("--timings");
    }
    cmd
}

/// Where the wasm modules are built: a target directory of their own (see [`wasm_beside`]).
fn wasm_target_dir() -> Result<std::path::PathBuf, String> {
    Ok(target_dir()?.join("wasm"))
}

/// `policy.wasm` for wasm32-wasip1: cargo's part.
fn compile_policy() -> Result<(), String> {
    run(cargo_build()
        .arg("--target-dir")
        .arg(wasm_target_dir()?)
        .args([
            "-p",
            "winplace-kubewarden",
            "--lib",
            "--target",
            "wasm32-wasip1",
            "--profile",
            "wasm-release",
        ]))
}

/// `policy.wasm` shrunk with wasm-opt into static/ (the server embeds it), with its metadata.
fn finish_policy() -> Result<(), String> {
    let raw = wasm_target_dir()?.join("wasm32-wasip1/wasm-release/winplace_kubewarden.wasm");
    let out = root().join("static/policy.wasm");
    optimize(&raw, &out)?;
    copy(
        &root().join("kubewarden/metadata.yml"),
        &root().join("static/policy-metadata.yml"),
    )
}

/// The Leptos app: cargo's part.
fn compile_dashboard() -> Result<(), String> {
    run(cargo_build()
        .arg("--target-dir")
        .arg(wasm_target_dir()?)
        .args([
            "-p",
            "winplace-dashboard",
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm-release",
        ]))
}

/// The Leptos app: wasm-bindgen (web target) → wasm-opt, into static/pkg.
fn finish_dashboard() -> Result<(), String> {
    let raw =
        wasm_target_dir()?.join("wasm32-unknown-unknown/wasm-release/winplace-dashboard.wasm");
    let pkg = root().join("static/pkg");
    run(Command::new("wasm-bindgen")
        .arg("--target")
        .arg("web")
        .arg("--no-typescript")
        .arg("--out-dir")
        .arg(&pkg)
        .arg("--out-name")
        .arg("winplace_dashboard")
        .arg(&raw))?;
    let bg = pkg.join("winplace_dashboard_bg.wasm");
    optimize(&bg.clone(), &bg)
}

/// The `winplace` binary (it embeds static/ at compile time, so it is built last).
pub fn server(release: bool) -> Result<(), String> {
    let mut cmd = cargo_build();
    cmd.args(["-p", "winplace"]);
    if release {
        cmd.arg("--release");
    }
    run(&mut cmd)
}

fn optimize(input: &std::path::Path, output: &std::path::Path) -> Result<(), String> {
    let tool = wasm_opt();
    if !tool.exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask setup`",
            tool.display()
        ));
    }
    let tmp = output.with_extension("opt.wasm");
    run(Command::new(&tool)
        .arg("-Oz")
        .arg("--enable-bulk-memory")
        .arg("--enable-nontrapping-float-to-int")
        .arg("--enable-sign-ext")
        .arg("--enable-reference-types")
        .arg("--enable-multivalue")
        .arg("--enable-mutable-globals")
        .arg(input)
        .arg("-o")
        .arg(&tmp))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))
}

fn copy(from: &std::path::Path, to: &std::path::Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))
}
