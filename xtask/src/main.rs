//! Build orchestration for winplace: `cargo xtask <command>`.
//!
//! - `setup`  installs what the build needs: Rust targets and wasm-opt (npm `binaryen`, never Debian's 108,
//!   which corrupts wasm-bindgen output); wasm-bindgen is a library linked into xtask; and the tests'
//!   Python packages (cel-expr-python, Helm's library, actionlint) in `.tools/python`.
//! - `build [--release]`  policy.wasm, the dashboard (static/pkg: its main module and the chunks of its lazy
//!   routes, `split.rs`) and the `winplace` binary that embeds both.
//! - `policy`  only static/policy.wasm (and its metadata): what the waPC host tests and the admission
//!   bench read, minutes sooner than `build` when only the policy changed.
//! - `run [--release]`  setup, build (the server in the dev profile the tests use, or in release), then
//!   `winplace serve` on the embedded demo cluster at http://127.0.0.1:8080.
//! - `test`  every check CI runs: fmt, clippy, cargo test, the waPC host test, Playwright in Chromium.
//! - `imports`  the import graph of the crates, file by file: fails on a circle or on an upward import
//!   between layers that `imports.rs` does not allow (part of `test`).
//! - `fuzz [SECONDS]`  every cargo-fuzz target in `fuzz/` for SECONDS each (default 600); not part of `test`.
//! - `image --output FILE [--binary PATH]`  the server's OCI image archive, reproducibly, without a
//!   container engine (`image.rs`); the statically linked release binary unless `--binary` names one.
//! - `man [--out DIR]`  the man pages (`winplace.1`, `winplace-check.1`, …), which the binary renders from
//!   its own command line (clap_mangen): `$CARGO_TARGET_DIR/man` unless `--out` names a folder.
//! - `release --output DIR [--from INPUTS]`  the release set, offline and reproducibly (`release/`): the
//!   image index for linux/amd64 and arm64 with its SBOM and provenance, the policy artifact, the CLI for
//!   Linux and Windows, the krew manifest, the chart, SHA256SUMS. Cross-compiles: not part of `test`.
//!
//! Nothing here downloads a prebuilt binary from anywhere but a package registry: every tool comes from
//! crates.io, npm, PyPI, Debian or rustup.

mod annotate;
mod build;
mod fuzz;
mod image;
mod imports;
mod oci;
mod release;
mod setup;
mod split;
mod test;
mod util;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::rust_and_wasm_tools(),
        Some("build") => build::all(args.iter().any(|a| a == "--release")),
        Some("policy") => build::policy(),
        Some("run") => run(&args[1..]),
        Some("test") => test::all(),
        Some("image") => image::command(&args[1..]),
        Some("man") => man(&args[1..]),
        Some("release") => release::command(&args[1..]),
        Some("imports") => imports::command(),
        Some("bench") => test::benches(),
        Some("fuzz") => match args.get(1).map(|s| s.parse::<u64>()) {
            None => fuzz::all(fuzz::DEFAULT_SECONDS),
            Some(Ok(seconds)) => fuzz::all(seconds),
            Some(Err(_)) => Err(format!(
                "fuzz: SECONDS must be a whole number, not {:?}",
                args[1]
            )),
        },
        _ => {
            eprintln!(
                "usage: cargo xtask <setup|build [--release]|policy|run [--release] [-- serve args]|test|bench|imports|fuzz [SECONDS]|image --output FILE [--binary PATH]|man [--out DIR]|release --output DIR [--from INPUTS]>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the man pages: builds the `winplace` binary (the dev profile the tests use; the pages do not
/// depend on it) and runs `winplace man --dir DIR`, which renders one page per command from the same
/// definitions its parser uses. xtask depends on none of the workspace's crates, hence the binary.
fn man(args: &[String]) -> Result<(), String> {
    let out = match args {
        [] => util::target_dir()?.join("man"),
        [flag, dir] if flag == "--out" => std::path::PathBuf::from(dir),
        _ => return Err("man: usage: cargo xtask man [--out DIR]".into()),
    };
    util::run(std::process::Command::new(util::cargo()).args(["build", "-p", "winplace"]))?;
    let bin = util::target_dir()?.join("debug").join("winplace");
    util::run(
        std::process::Command::new(bin)
            .arg("man")
            .arg("--dir")
            .arg(&out),
    )?;
    println!("man pages in {}", out.display());
    Ok(())
}

/// Builds and serves the demo: the dev-profile server (the profile `cargo xtask test` builds, so a test
/// after a run compiles none of its dependencies again, and the build that serves soonest on a fresh
/// machine: a release build of the server takes minutes more), or the release one with `--release`. Other
/// arguments go to `serve`.
fn run(args: &[String]) -> Result<(), String> {
    let release = args.first().is_some_and(|a| a == "--release");
    let extra = if release { &args[1..] } else { args };
    build::all(release)?;
    let bin = util::target_dir()?
        .join(if release { "release" } else { "debug" })
        .join("winplace");
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("serve").args(extra.iter().filter(|a| *a != "--"));
    util::run(&mut cmd)
}
