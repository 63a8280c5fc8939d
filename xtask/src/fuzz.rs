//! `cargo xtask fuzz [SECONDS]`: every cargo-fuzz target in `fuzz/` for SECONDS each (default 600),
//! seeded from the repository's own manifests. Installs cargo-fuzz when missing; on the stable
//! toolchain libFuzzer's flags need `RUSTC_BOOTSTRAP=1`. A crash leaves its input in
//! `fuzz/artifacts/<target>/`: turn it into a regression test, then fix it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util;

/// Seconds per target when none are given: the goal docs/fuzzing.md sets.
pub const DEFAULT_SECONDS: u64 = 600;

/// Each target, the cargo feature it needs (the snapshot reader links the whole server) and the files
/// (relative to the root; `*` matches one path segment) it starts from.
const TARGETS: &[(&str, Option<&str>, &[&str])] = &[
    (
        "check_text",
        None,
        &[
            "corpus/*/input.yaml",
            "corpus/*/cluster.yaml",
            "deploy/vap/*.yaml",
            "deploy/policy/*.yaml",
        ],
    ),
    (
        "admission",
        None,
        &[
            "policy-wasm/test_data/*.json",
            "policy-wasm/test_data/*/*.json",
        ],
    ),
    (
        "settings",
        None,
        &["corpus/*/settings.yaml", "policy-wasm/test_data/*.json"],
    ),
    (
        "snapshot",
        Some("snapshot"),
        &["server/demo/*.yaml", "corpus/*/cluster.yaml"],
    ),
];

/// Files matching `pattern` (segments of `*` or literal names) under `root`, sorted.
fn matching(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    for segment in pattern.split('/') {
        let mut next = Vec::new();
        for dir in &found {
            if segment == "*" || segment.starts_with("*.") {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    let ok = match segment.strip_prefix('*') {
                        Some("") => true,
                        Some(ext) => name.ends_with(ext),
                        None => false,
                    };
                    if ok {
                        next.push(e.path());
                    }
                }
            } else {
                next.push(dir.join(segment));
            }
        }
        found = next;
    }
    found.retain(|p| p.is_file());
    found.sort();
    found
}

/// Copies the seeds of `target` into its working corpus `fuzz/corpus/<target>/`.
fn seed(root: &Path, target: &str, patterns: &[&str]) -> Result<PathBuf, String> {
    let dir = root.join("fuzz/corpus").join(target);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut n = 0;
    for pattern in patterns {
        for file in matching(root, pattern) {
            let rel = file.strip_prefix(root).unwrap_or(&file);
            let name = format!("seed-{}", rel.display()).replace('/', "_");
            std::fs::copy(&file, dir.join(name)).map_err(|e| format!("{}: {e}", file.display()))?;
            n += 1;
        }
    }
    if n == 0 {
        return Err(format!("no seed files for {target}"));
    }
    eprintln!("{target}: {n} seed files");
    Ok(dir)
}

/// Installs cargo-fuzz with cargo when `cargo fuzz` is not there.
fn ensure_cargo_fuzz() -> Result<(), String> {
    if util::output(&util::cargo(), &["fuzz", "--version"]).is_some() {
        return Ok(());
    }
    util::run(Command::new(util::cargo()).args(["install", "cargo-fuzz", "--locked"]))
}

/// Runs every target for `seconds`; fails when one crashed (after running the others).
pub fn all(seconds: u64) -> Result<(), String> {
    ensure_cargo_fuzz()?;
    let root = util::root();
    let mut crashed = Vec::new();
    for (target, feature, patterns) in TARGETS {
        let corpus = seed(&root, target, patterns)?;
        let mut cmd = Command::new(util::cargo());
        cmd.env("RUSTC_BOOTSTRAP", "1")
            .args(["fuzz", "run", target]);
        if let Some(feature) = feature {
            cmd.args(["--features", feature]);
        }
        cmd.arg(&corpus).args([
            "--".to_string(),
            format!("-max_total_time={seconds}"),
            "-max_len=65536".into(),
            "-rss_limit_mb=2048".into(),
            "-timeout=10".into(),
            "-print_final_stats=1".into(),
        ]);
        if let Err(e) = util::run(&mut cmd) {
            eprintln!("{target}: {e}; the input is in fuzz/artifacts/{target}/");
            crashed.push(*target);
        }
    }
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!("crashes in {}", crashed.join(", ")))
    }
}
