//! The build: policy.wasm, the dashboard, the server.

use crate::setup::wasm_opt;
use crate::util::{cargo, root, run, target_dir};
use std::process::Command;

/// Builds everything; the server in release mode when `release`, else in the dev profile tests use.
pub fn all(release: bool) -> Result<(), String> {
    policy()?;
    dashboard()?;
    server(release)
}

/// `policy.wasm` for wasm32-wasip1, shrunk with wasm-opt, into static/ (the server embeds it).
pub fn policy() -> Result<(), String> {
    run(Command::new(cargo()).args([
        "build",
        "-p",
        "winplace-kubewarden",
        "--lib",
        "--target",
        "wasm32-wasip1",
        "--profile",
        "wasm-release",
    ]))?;
    let raw = target_dir()?.join("wasm32-wasip1/wasm-release/winplace_rules.wasm");
    let out = root().join("static/policy.wasm");
    optimize(&raw, &out)?;
    copy(
        &root().join("kubewarden/metadata.yml"),
        &root().join("static/policy-metadata.yml"),
    )
}

/// The Leptos app: cargo → wasm-bindgen (web target) → wasm-opt, into static/pkg.
pub fn dashboard() -> Result<(), String> {
    run(Command::new(cargo()).args([
        "build",
        "-p",
        "winplace-dashboard",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "wasm-release",
    ]))?;
    let raw = target_dir()?.join("wasm32-unknown-unknown/wasm-release/winplace-dashboard.wasm");
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
    let mut cmd = Command::new(cargo());
    cmd.args(["build", "-p", "winplace"]);
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
