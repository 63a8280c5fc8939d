//! Build orchestration for winplace: `cargo xtask <command>`.
//!
//! - `setup`  installs what the build needs: Rust targets, wasm-bindgen-cli at the Cargo.lock version, wasm-opt
//!   (npm `binaryen`, never Debian's 108, which corrupts wasm-bindgen output).
//! - `build [--release]`  policy.wasm, the dashboard (static/pkg: its main module and the chunks of its lazy
//!   routes, `split.rs`) and the `winplace` binary that embeds both.
//! - `run`  setup, release build, then `winplace serve` on the embedded demo cluster at http://127.0.0.1:8080.
//! - `test`  every check CI runs: fmt, clippy, cargo test, the waPC host test, Playwright in Chromium.
//! - `fuzz [SECONDS]`  every cargo-fuzz target in `fuzz/` for SECONDS each (default 600); not part of `test`.
//!
//! Nothing here downloads a prebuilt binary: every tool comes from crates.io, npm or Debian.

mod annotate;
mod build;
mod fuzz;
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
        Some("run") => run(&args[1..]),
        Some("test") => test::all(),
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
                "usage: cargo xtask <setup|build [--release]|run [-- serve args]|test|bench|fuzz [SECONDS]>"
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

fn run(extra: &[String]) -> Result<(), String> {
    build::all(true)?;
    let bin = util::target_dir()?.join("release/winplace");
    let mut cmd = std::process::Command::new(bin);
    cmd.arg("serve").args(extra.iter().filter(|a| *a != "--"));
    util::run(&mut cmd)
}
