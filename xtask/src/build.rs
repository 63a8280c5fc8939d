//! The build: policy.wasm, the dashboard, the server.

use crate::setup::wasm_opt;
use crate::util::{cargo, root, run, target_dir};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Builds everything; the server in release mode when `release`, else in the dev profile tests use.
///
/// Two cores, and long single-threaded phases (the wasm LTO links, wasm-opt): the two wasm builds run
/// at once (`assets`), npm's binaryen installs on a thread of its own, and wasm-opt's outputs are cached by
/// their input (`optimize`), so a build after an unchanged one does not run it again. The server comes
/// last: it embeds static/.
pub fn all(release: bool) -> Result<(), String> {
    assets()?;
    server(release)
}

/// What the server embeds: policy.wasm and the dashboard, in static/.
///
/// The two wasm builds run at once: each has its own profile (`policy-release`, `wasm-release`), so cargo
/// locks its own folders and neither waits for the other, and each leaves a core idle much of its time
/// (codegen-units = 1 and LTO: long single-threaded phases). policy.wasm is shrunk by wasm-opt on the same
/// thread as soon as it is built, while the dashboard is still compiling.
pub fn assets() -> Result<(), String> {
    crate::setup::rust_targets()?;
    let tools = std::thread::spawn(crate::setup::wasm_tools);
    let policy = std::thread::spawn(move || {
        let compiled = compile_policy();
        // The tools are joined whatever happened, so that no install outlives the build.
        let tools = joined(tools.join(), "installing the wasm tools");
        compiled?;
        tools?;
        finish_policy()
    });
    let dashboard = compile_dashboard();
    // Both halves finish (or fail) before either result is reported.
    let policy = joined(policy.join(), "building policy.wasm");
    dashboard?;
    policy?;
    finish_dashboard()
}

/// Only `static/policy.wasm` (`cargo xtask policy`): what [`assets`] builds of the policy, without the
/// dashboard and the server, for the waPC host tests and the admission bench.
pub fn policy() -> Result<(), String> {
    crate::setup::rust_targets()?;
    crate::setup::wasm_tools()?;
    compile_policy()?;
    finish_policy()
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
    bindgen(&main, &pkg)?;
    let mut modules = chunks;
    modules.push(pkg.join(format!("{DASHBOARD}_bg.wasm")));
    optimize_all(modules)
}

/// wasm-bindgen (web target, no TypeScript) on the main module into `pkg`, as
/// `wasm-bindgen --target web --no-typescript --keep-lld-exports --out-dir PKG --out-name winplace_dashboard`
/// does: the CLI is a thin layer over `wasm-bindgen-cli-support`, which xtask links at the Cargo.lock
/// version of wasm-bindgen (cargo allows only one: wasm-bindgen-shared `links` it), so no CLI has to be
/// compiled and installed first. `--keep-lld-exports`: the chunks import the main module's stack pointer,
/// table and functions by the names the linker exported.
fn bindgen(main: &Path, pkg: &Path) -> Result<(), String> {
    let started = std::time::Instant::now();
    let cpu = crate::util::cpu::this_process();
    let failed = |e: anyhow::Error| format!("wasm-bindgen {}: {e:#}", main.display());
    let mut bindgen = wasm_bindgen_cli_support::Bindgen::new();
    // The CLI's defaults for every option it sets, so that the output is the CLI's.
    bindgen
        .web(true)
        .map_err(failed)?
        .input_path(main)
        .debug(false)
        .demangle(true)
        .keep_lld_exports(true)
        .keep_debug(false)
        .remove_name_section(false)
        .remove_producers_section(false)
        .typescript(false)
        .out_name(DASHBOARD);
    bindgen.generate(pkg).map_err(failed)?;
    eprintln!(
        "<== {:.1} s: wasm-bindgen {} into {} (CPU {:.1} s)",
        started.elapsed().as_secs_f64(),
        main.display(),
        pkg.display(),
        (crate::util::cpu::this_process() - cpu).as_secs_f64()
    );
    Ok(())
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

/// wasm-opt's options besides the level: the wasm features our modules use.
const WASM_OPT_FEATURES: [&str; 6] = [
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-reference-types",
    "--enable-multivalue",
    "--enable-mutable-globals",
];

/// wasm-opt at `level` (`-Oz`: smallest; `-O3`: fastest), `input` to `output`.
///
/// The outputs are kept in `wasm-opt-cache/` in the target directory under the SHA-256 of what decides
/// them (binaryen's version, the options, the input's bytes): wasm-opt takes minutes on policy.wasm and
/// the dashboard, and `cargo xtask test` after `cargo xtask run` (or a second test run) hands it the same
/// inputs.
fn optimize(input: &Path, output: &Path, level: &str) -> Result<(), String> {
    let bytes = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let mut key = Sha256::new();
    for part in [crate::setup::BINARYEN, level]
        .into_iter()
        .chain(WASM_OPT_FEATURES)
    {
        key.update(part.as_bytes());
        key.update([0]);
    }
    key.update(&bytes);
    let key: String = key.finalize().iter().map(|b| format!("{b:02x}")).collect();
    let cache = target_dir()?.join("wasm-opt-cache");
    let cached = cache.join(format!("{key}.wasm"));
    if cached.exists() {
        eprintln!(
            "<== 0.0 s: wasm-opt {level} {}: cached ({})",
            input.display(),
            cached.display()
        );
        return copy(&cached, output);
    }
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
        .args(WASM_OPT_FEATURES)
        .arg(input)
        .arg("-o")
        .arg(&tmp))?;
    // Into the cache first (a file of its own, renamed: a build that stops half-way leaves no partial
    // entry), then into place.
    std::fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let entry = cache.join(format!(
        "{key}.{}.tmp",
        output.file_name().unwrap_or_default().to_string_lossy()
    ));
    copy(&tmp, &entry)?;
    std::fs::rename(&entry, &cached).map_err(|e| format!("{}: {e}", cached.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))
}
