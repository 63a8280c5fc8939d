//! The build: policy.wasm, the dashboard, the server.

use crate::setup::wasm_opt;
use crate::util::{cargo, root, run, target_dir};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Builds everything; the server in release mode when `release`, else in the dev profile tests use.
///
/// Two cores, and long single-threaded phases (the wasm LTO links, wasm-opt): what does not need cargo
/// runs beside it. The wasm tools (wasm-bindgen-cli, compiled from crates.io on a fresh machine, and
/// npm's binaryen) install on a second thread while cargo compiles, and policy.wasm is shrunk there while
/// cargo compiles the dashboard. The server comes last: it embeds static/. (Building the wasm in a target
/// directory of its own, beside clippy and the server's dependencies, was measured and was no faster on
/// two cores: see the README's numbers.)
pub fn all(release: bool) -> Result<(), String> {
    crate::setup::rust_targets()?;
    let tools = std::thread::spawn(crate::setup::wasm_tools);
    let policy = compile_policy().map(|()| {
        std::thread::spawn(move || {
            joined(tools.join(), "installing the wasm tools")?;
            finish_policy()
        })
    });
    let dashboard = compile_dashboard();
    // Both halves finish (or fail) before either result is reported.
    let policy = match policy {
        Ok(finishing) => joined(finishing.join(), "shrinking policy.wasm"),
        Err(e) => Err(e),
    };
    dashboard?;
    policy?;
    finish_dashboard()?;
    server(release)
}

/// The result of a thread's work, from its `join()` (a panic becomes an error naming the work).
fn joined(joined: std::thread::Result<Result<(), String>>, what: &str) -> Result<(), String> {
    joined.unwrap_or_else(|_| Err(format!("{what} panicked")))
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

/// `policy.wasm` for wasm32-wasip1: cargo's part, in the `policy-release` profile (speed first: see
/// Cargo.toml).
fn compile_policy() -> Result<(), String> {
    run(cargo_build().args([
        "-p",
        "winplace-policy-wasm",
        "--lib",
        "--target",
        "wasm32-wasip1",
        "--profile",
        "policy-release",
    ]))
}

/// `policy.wasm` shrunk with wasm-opt into static/ (the server embeds it), annotated with its metadata as
/// `kwctl annotate` does, and the metadata beside it.
fn finish_policy() -> Result<(), String> {
    let raw = target_dir()?.join("wasm32-wasip1/policy-release/winplace_policy_wasm.wasm");
    let out = root().join("static/policy.wasm");
    optimize(&raw, &out, "-O3")?;
    // After wasm-opt, which would drop an unknown custom section.
    crate::annotate::annotate(&out, &root().join("policy-wasm/metadata.yml"))?;
    copy(
        &root().join("policy-wasm/metadata.yml"),
        &root().join("static/policy-metadata.yml"),
    )
}

/// The Leptos app: cargo's part. `.cargo/config.toml` gives this target its flags: the relocations the
/// splitter follows (`split.rs`) and Leptos' type-erased views.
fn compile_dashboard() -> Result<(), String> {
    run(cargo_build().args([
        "-p",
        "winplace-dashboard",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "wasm-release",
    ]))
}

/// wasm-bindgen's name for the dashboard: `winplace_dashboard.js` and `winplace_dashboard_bg.wasm`.
const DASHBOARD: &str = "winplace_dashboard";

/// The Leptos app into static/pkg: split (the main module and the lazily loaded chunks, `split.rs`) →
/// wasm-bindgen (web target) on the main module → wasm-opt on every module.
fn finish_dashboard() -> Result<(), String> {
    let raw = target_dir()?.join("wasm32-unknown-unknown/wasm-release/winplace-dashboard.wasm");
    let main = raw.with_file_name("winplace-dashboard.main.wasm");
    let pkg = root().join("static/pkg");
    // A fresh folder: chunks are named after their split points, and the server embeds whatever is there.
    match std::fs::remove_dir_all(&pkg) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", pkg.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(&pkg).map_err(|e| format!("{}: {e}", pkg.display()))?;
    let chunks = crate::split::split(&raw, &main, &pkg, &format!("./{DASHBOARD}.js"))?;
    // --keep-lld-exports: the chunks import the main module's stack pointer, table and functions by
    // the names the linker exported.
    run(Command::new("wasm-bindgen")
        .arg("--target")
        .arg("web")
        .arg("--no-typescript")
        .arg("--keep-lld-exports")
        .arg("--out-dir")
        .arg(&pkg)
        .arg("--out-name")
        .arg(DASHBOARD)
        .arg(&main))?;
    let mut modules = chunks;
    modules.push(pkg.join(format!("{DASHBOARD}_bg.wasm")));
    optimize_all(modules)
}

/// wasm-opt on each of `modules` in place, two at a time (it keeps one core busy), the largest first.
fn optimize_all(mut modules: Vec<PathBuf>) -> Result<(), String> {
    modules.sort_by_key(|m| std::cmp::Reverse(std::fs::metadata(m).map(|m| m.len()).unwrap_or(0)));
    let next = AtomicUsize::new(0);
    let work = || {
        while let Some(module) = modules.get(next.fetch_add(1, Ordering::Relaxed)) {
            optimize(module, module, "-Oz")?;
        }
        Ok(())
    };
    std::thread::scope(|scope| {
        let other = scope.spawn(work);
        let here = work();
        joined(other.join(), "shrinking the dashboard's modules").and(here)
    })
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

/// wasm-opt at `level` (`-Oz`: smallest; `-O3`: fastest).
fn optimize(input: &std::path::Path, output: &std::path::Path, level: &str) -> Result<(), String> {
    let tool = wasm_opt();
    if !tool.exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask setup`",
            tool.display()
        ));
    }
    let tmp = output.with_extension("opt.wasm");
    run(Command::new(&tool)
        .arg(level)
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
