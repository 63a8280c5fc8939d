//! Installs the build's tools, each only when missing or at the wrong version.

use crate::util::{output, root, run};
use std::path::PathBuf;
use std::process::Command;

/// Rust targets, the tests' Python packages and npm's binaryen (wasm-bindgen is linked into xtask:
/// `build::bindgen`).
pub fn rust_and_wasm_tools() -> Result<(), String> {
    rust_targets()?;
    python_tools()?;
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

/// The Python packages the tests run, pinned: Google's CEL checker (`cel-expr-python`, over cel-cpp) and
/// protobuf, which `rules/tests/cel_types.py` type-checks the exported policies with
/// (`rules/tests/export_compile.rs`).
pub const PYTHON_PACKAGES: [&str; 2] = ["cel-expr-python==0.1.3", "protobuf==7.36.2"];

/// A virtual environment in `.tools/python` holding [`PYTHON_PACKAGES`] (PyPI, through pip), made once:
/// `python3 -m venv` needs Debian's `python3-venv` where the system Python lacks it.
pub fn python_tools() -> Result<(), String> {
    let dir = root().join(".tools/python");
    let stamp = dir.join("installed.txt");
    let wanted = PYTHON_PACKAGES.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(());
    }
    if !dir.join("bin/python3").exists()
        && run(Command::new("python3").args(["-m", "venv"]).arg(&dir)).is_err()
    {
        apt_install(&["python3-venv"])?;
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
    }
    run(Command::new(dir.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(PYTHON_PACKAGES))?;
    std::fs::write(&stamp, wanted).map_err(|e| format!("{}: {e}", stamp.display()))
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
