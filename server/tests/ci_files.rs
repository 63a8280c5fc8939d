//! The CI integration files at the repository root: `.pre-commit-hooks.yaml` is a valid pre-commit hook
//! manifest (the rules of pre-commit's `clientlib.py`, `MANIFEST_HOOK_DICT`) whose hook runs a command
//! this binary has, on the files `winplace check` reads.

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
