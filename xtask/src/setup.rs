//! Installs the build's tools, each only when missing or at the wrong version.

use crate::util::{output, root, run};
use std::path::PathBuf;
use std::process::Command;

/// Rust targets and npm's binaryen (wasm-bindgen is linked into xtask: `build::bindgen`).
pub fn rust_and_wasm_tools() -> Result<(), String> {
    rust_targets()?;
    wasm_tools()
}

/// The two wasm targets (cargo needs them before it compiles for wasm).
pub fn rust_targets() -> Result<(), String> {
    let installed = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    for target in ["wasm32-unknown-unknown", "wasm32-wasip1"] {
        if !installed.lines().any(|l| l.trim() == target) {
            run(Command::new("rustup").args(["target", "add", target]))?;
        }
    }
    Ok(())
}

/// wasm-opt, from npm's binaryen: needed only after cargo has compiled the wasm, so the build installs it
/// beside its own cargo runs.
pub fn wasm_tools() -> Result<(), String> {
    if !wasm_opt().exists() {
        let dir = root().join(".tools/binaryen");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        run(Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                ".",
                BINARYEN,
            ])
            .current_dir(&dir))?;
    }
    Ok(())
}

/// The npm package wasm-opt comes from, at the version every build uses (also part of the key of the
/// build's cache of wasm-opt's outputs).
pub const BINARYEN: &str = "binaryen@132.0.0";

/// Debian's `docker-registry` (the CNCF distribution registry) and `skopeo`, which
/// `server/tests/registry.rs` runs: a real registry on 127.0.0.1 and the tool that pushes its images; and
/// `xmllint` (libxml2-utils), with which `server/tests/ci_formats.rs` validates the JUnit report against
/// the schemas CI services publish.
pub fn registry_tools() -> Result<(), String> {
    let missing: Vec<&str> = [
        ("/usr/bin/docker-registry", "docker-registry"),
        ("/usr/bin/skopeo", "skopeo"),
        ("/usr/bin/xmllint", "libxml2-utils"),
    ]
    .into_iter()
    .filter(|(bin, _)| !std::path::Path::new(bin).exists())
    .map(|(_, package)| package)
    .collect();
    apt_install(&missing)
}

/// `apt-get install` of `packages` (nothing when empty), after `apt-get update`.
pub fn apt_install(packages: &[&str]) -> Result<(), String> {
    if packages.is_empty() {
        return Ok(());
    }
    run(Command::new("apt-get").arg("update"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// Chromium from Debian (never Playwright's own download) and the Playwright npm packages.
pub fn browser_tools() -> Result<(), String> {
    if !std::path::Path::new("/usr/bin/chromium").exists() {
        run(Command::new("apt-get").arg("update"))?;
        run(Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    let dir = root().join("playwright-tests");
    // Every package a spec imports: a new one in package.json reinstalls on machines that had the old set.
    let wanted = ["@playwright/test", "@microsoft/jest-sarif", "ajv"];
    if !wanted
        .iter()
        .all(|p| dir.join("node_modules").join(p).exists())
    {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir))?;
    }
    Ok(())
}

/// wasm-opt from npm's binaryen (≥ 116).
pub fn wasm_opt() -> PathBuf {
    root().join(".tools/binaryen/node_modules/.bin/wasm-opt")
}
