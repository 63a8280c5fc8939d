//! The corpus (`corpus/` at the repository's root, plus any folders named in `$WINPLACE_EXTRA_CORPUS`)
//! and how a case's findings are compared with its `expect.yaml` (see `corpus/README.md`). Included with
//! `#[path]` by the rules crate's test and by the server's integration tests (the CLI and the parity test), so all compare the same way.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use winplace_rules::input::{Limits, parse};
use winplace_rules::{ClusterContext, Finding, Settings, model};

/// The repository's corpus folder.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"))
}

/// Further corpus folders: `$WINPLACE_EXTRA_CORPUS`, a list of folders separated by `:` (`cargo xtask
/// test` names the extra cases that appear beside the repository before they are copied into it).
/// Folders that do not exist are left out, and said so on stderr.
pub fn extra_corpus_dirs() -> Vec<PathBuf> {
    let Ok(list) = std::env::var("WINPLACE_EXTRA_CORPUS") else {
        return Vec::new();
    };
    std::env::split_paths(&list)
        .filter(|dir| {
            let exists = dir.is_dir();
            if !exists && !dir.as_os_str().is_empty() {
                eprintln!("extra corpus {} is not a folder: left out", dir.display());
            }
            exists
        })
        .collect()
}

/// One expected finding; `path`, `severity` and `message` (a part of the message) are compared only when
/// given.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Expected {
    pub rule: String,
    pub object: String,
    pub path: Option<String>,
    pub severity: Option<String>,
    pub message: Option<String>,
}

/// One finding as produced. Info-level findings count only when a case lists them (corpus/README.md).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Got {
    pub rule: String,
    pub object: String,
    pub path: String,
    pub severity: String,
    pub message: String,
    /// `file:line`, to help whoever reads a difference.
    pub place: String,
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on {}", self.rule, self.object)?;
        if let Some(p) = &self.path {
            write!(f, " at {p}")?;
        }
        if let Some(s) = &self.severity {
            write!(f, " ({s})")?;
        }
        if let Some(m) = &self.message {
            write!(f, " saying {m:?}")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Got {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} on {} at {} ({}) [{}]",
            self.rule, self.object, self.path, self.severity, self.place
        )
    }
}

/// One corpus case, read from its folder.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub input: String,
    pub cluster: Option<String>,
    pub settings_text: Option<String>,
    pub expected: Vec<Expected>,
    /// Lines of the expected parse errors (`parse_errors: [{line: N}]`).
    pub parse_error_lines: Vec<u32>,
    /// `fixed.yaml`: the whole input after every fix is applied (`--fix`), byte for byte.
    pub fixed: Option<String>,
}

fn read_yaml(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let parsed = parse(&path.display().to_string(), &text, &Limits::default());
    if let Some(e) = parsed.errors.first() {
        return Err(e.to_string());
    }
    parsed
        .documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .ok_or_else(|| format!("{}: empty", path.display()))
}

fn text_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(|x| match x {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    })
}

impl Case {
    /// Reads the case in `dir`.
    pub fn read(dir: &Path) -> Result<Case, String> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let input = std::fs::read_to_string(dir.join("input.yaml"))
            .map_err(|e| format!("{name}/input.yaml: {e}"))?;
        let cluster = std::fs::read_to_string(dir.join("cluster.yaml")).ok();
        let settings_text = std::fs::read_to_string(dir.join("settings.yaml")).ok();
        let expect = read_yaml(&dir.join("expect.yaml"))?;
        let mut expected = Vec::new();
        for (i, f) in expect
            .get("findings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let (Some(rule), Some(object)) = (text_field(f, "rule"), text_field(f, "object"))
            else {
                return Err(format!(
                    "{name}/expect.yaml: findings[{i}] needs rule and object"
                ));
            };
            expected.push(Expected {
                rule,
                object,
                path: text_field(f, "path"),
                severity: text_field(f, "severity"),
                message: text_field(f, "message"),
            });
        }
        let parse_error_lines = expect
            .get("parse_errors")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("line").and_then(Value::as_u64))
            .map(|l| u32::try_from(l).unwrap_or(u32::MAX))
            .collect();
        Ok(Case {
            name,
            dir: dir.to_path_buf(),
            input,
            cluster,
            settings_text,
            expected,
            parse_error_lines,
            fixed: std::fs::read_to_string(dir.join("fixed.yaml")).ok(),
        })
    }

    /// The case's settings (defaults when it has no settings.yaml).
    pub fn settings(&self) -> Result<Settings, String> {
        let Some(text) = &self.settings_text else {
            return Ok(Settings::default());
        };
        Settings::from_text(&format!("{}/settings.yaml", self.name), text)
            .map_err(|e| e.to_string())
    }

    /// The cluster context of cluster.yaml (`None` without one).
    pub fn context(&self) -> Result<Option<ClusterContext>, String> {
        let Some(text) = &self.cluster else {
            return Ok(None);
        };
        let parsed = parse("cluster.yaml", text, &Limits::default());
        if let Some(e) = parsed.errors.first() {
            return Err(format!("{}/{e}", self.name));
        }
        let (ctx, errors) = ClusterContext::from_objects(&model::objects(&parsed.documents));
        match errors.first() {
            Some(e) => Err(format!("{}/cluster.yaml: {e}", self.name)),
            None => Ok(Some(ctx)),
        }
    }
}

/// Every case of the repository's corpus, then of each extra corpus folder, each folder sorted by name.
/// An extra case is named `extra:<name>` so that a difference says which copy it came from.
pub fn cases() -> Vec<Result<Case, String>> {
    let mut out = cases_in(&corpus_dir(), "");
    for dir in extra_corpus_dirs() {
        out.extend(cases_in(&dir, "extra:"));
    }
    out
}

/// The cases of one corpus folder, named `<prefix><folder name>`.
pub fn cases_in(dir: &Path, prefix: &str) -> Vec<Result<Case, String>> {
    let mut dirs: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(e) => return vec![Err(format!("corpus folder {}: {e}", dir.display()))],
    };
    dirs.sort();
    dirs.iter()
        .map(|d| {
            Case::read(d).map(|mut case| {
                case.name = format!("{prefix}{}", case.name);
                case
            })
        })
        .collect()
}

/// Findings of the rules crate as compared.
pub fn got_from_findings(findings: &[Finding]) -> Vec<Got> {
    findings
        .iter()
        .map(|f| Got {
            rule: f.rule.clone(),
            object: f.object.display_name(),
            path: f.path.clone(),
            severity: f.severity.as_str().to_string(),
            message: f.message.clone(),
            place: format!(
                "{}:{}",
                f.file.as_deref().unwrap_or("-"),
                f.line.map_or("-".to_string(), |l| l.to_string())
            ),
        })
        .collect()
}

/// Findings of `winplace check --format json` output as compared.
pub fn got_from_json(output: &Value) -> Vec<Got> {
    let mut out = Vec::new();
    for f in output
        .get("findings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let o = &f["object"];
        let os = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
        let kind = os("kind").unwrap_or_default();
        let name = os("name").unwrap_or_default();
        let object = match os("namespace") {
            Some(ns) => format!("{kind}/{ns}/{name}"),
            None => format!("{kind}/{name}"),
        };
        out.push(Got {
            rule: s("rule"),
            object,
            path: s("path"),
            severity: s("severity"),
            message: s("message"),
            place: format!(
                "{}:{}",
                s("file"),
                f.get("line").map_or("-".to_string(), |l| l.to_string())
            ),
        });
    }
    out
}

fn matches(e: &Expected, g: &Got) -> bool {
    e.rule == g.rule
        && e.object == g.object
        && e.path.as_ref().is_none_or(|p| p == &g.path)
        && e.severity.as_ref().is_none_or(|s| s == &g.severity)
        && e.message
            .as_ref()
            .is_none_or(|m| g.message.contains(m.as_str()))
}

/// The differences between what a case expects and what was produced, one line each (empty when equal).
///
/// Findings are a multiset; expectations that name more fields are matched first so that a vaguer one
/// does not take the finding a precise one needs.
pub fn compare(case: &Case, got: &[Got], parse_error_lines: &[u32]) -> Vec<String> {
    let mut expected: Vec<&Expected> = case.expected.iter().collect();
    expected.sort_by_key(|e| {
        std::cmp::Reverse(
            usize::from(e.path.is_some())
                + usize::from(e.severity.is_some())
                + usize::from(e.message.is_some()),
        )
    });
    let mut used = vec![false; got.len()];
    let mut diffs = Vec::new();
    for e in expected {
        let hit = got
            .iter()
            .enumerate()
            .find(|(i, g)| !used[*i] && matches(e, g));
        match hit {
            Some((i, _)) => used[i] = true,
            None => {
                // Say what came closest: same rule and object, other path or severity.
                let near: Vec<String> = got
                    .iter()
                    .filter(|g| g.rule == e.rule && g.object == e.object)
                    .map(|g| format!("{} ({}) saying {:?}", g.path, g.severity, g.message))
                    .collect();
                let hint = if near.is_empty() {
                    String::new()
                } else {
                    format!(" — produced instead at: {}", near.join(", "))
                };
                diffs.push(format!("  missing:    {e}{hint}"));
            }
        }
    }
    // Info findings are notes: they must be there when listed, and are not unexpected when not.
    for (g, used) in got.iter().zip(&used) {
        if !used && g.severity != "info" {
            diffs.push(format!("  unexpected: {g}"));
        }
    }
    let count = |lines: &[u32]| {
        let mut m: BTreeMap<u32, usize> = BTreeMap::new();
        for l in lines {
            *m.entry(*l).or_default() += 1;
        }
        m
    };
    let (want, have) = (count(&case.parse_error_lines), count(parse_error_lines));
    if want != have {
        diffs.push(format!(
            "  parse errors at lines {:?}, expected at lines {:?}",
            parse_error_lines, case.parse_error_lines
        ));
    }
    diffs
}
