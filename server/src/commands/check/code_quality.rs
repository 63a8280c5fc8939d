//! `winplace check --format codequality`: GitLab's Code Quality report (the merge request widget and
//! the changes view), a JSON array of issues with the fields GitLab documents (docs/reference/code-quality.md):
//! `description`, `check_name`, `fingerprint`, `severity` (`info`, `minor`, `major`, `critical`,
//! `blocker`), `location.path` (relative to the repository) and `location.lines.begin`.
//!
//! The fingerprint is the SARIF result's `partialFingerprints` value (`output::fingerprint`): the same
//! finding is the same issue in both, and moving it within its file keeps it. Input that could not be
//! read is a `blocker` issue of check `input-error` (the file was not checked). Written one issue at a
//! time, as the other reports are.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use serde::Serialize;
use winplace_rules::{ParseError, Severity};

use super::Outcome;
use super::findings::Entry;
use super::output::{fingerprint, is_absolute};

/// One issue, in GitLab's field order.
#[derive(Debug, Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Debug, Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Debug, Serialize)]
struct Lines {
    begin: u32,
}

/// GitLab's severity of a finding: an error is what the API server, the scheduler or the kubelet will
/// do to the workload (`critical`: it will not run where it lands), a warning a failure the rule
/// presumes without the cluster (`major`), an info a note (`info`).
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// `location.path`: relative to the repository, as GitLab matches it with the merge request's files. A
/// relative path (what `winplace check` is given in CI, from the checkout) stays as it is, with `/`
/// separators; an absolute one under the working directory is made relative to it.
fn relative(path: &str, cwd: Option<&Path>) -> String {
    let path = path.replace('\\', "/");
    if !is_absolute(&path) {
        return path.strip_prefix("./").unwrap_or(&path).to_string();
    }
    cwd.and_then(|cwd| Path::new(&path).strip_prefix(cwd).ok())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or(path)
}

fn finding_issue<'a>(entry: &'a Entry, cwd: Option<&Path>) -> Issue<'a> {
    let f = &entry.finding;
    let mut description = f.message.clone();
    if let Some(template) = &entry.helm_template {
        description.push_str(&format!(
            " Rendered by Helm from {template} ({}).",
            f.object.display_name()
        ));
    }
    if let Some(fix) = &f.fix {
        description.push_str(&format!(" Fix: {}", fix.description));
    }
    Issue {
        description,
        check_name: &f.rule,
        fingerprint: fingerprint(f),
        severity: severity(f.severity),
        location: Location {
            path: relative(f.file.as_deref().unwrap_or("-"), cwd),
            lines: Lines {
                begin: f.line.unwrap_or(1).max(1),
            },
        },
    }
}

fn error_issue<'a>(e: &'a ParseError, cwd: Option<&Path>) -> Issue<'a> {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for part in [
        "input-error",
        e.file.as_str(),
        &e.line.to_string(),
        &e.message,
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let fingerprint = h
        .finalize()
        .iter()
        .fold(String::with_capacity(64), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        });
    Issue {
        description: format!("This file was not checked: {}", e.message),
        check_name: "input-error",
        fingerprint,
        severity: "blocker",
        location: Location {
            path: relative(&e.file, cwd),
            lines: Lines {
                begin: e.line.max(1),
            },
        },
    }
}

/// Writes the Code Quality report of `outcome`: read errors, then findings, in input order.
pub fn write(outcome: &Outcome, out: &mut dyn Write) -> std::io::Result<()> {
    let cwd = std::env::current_dir().ok();
    let cwd = cwd.as_deref();
    out.write_all(b"[")?;
    let mut first = true;
    let mut item = |out: &mut dyn Write, issue: &Issue<'_>| -> std::io::Result<()> {
        out.write_all(if first { b"\n  " } else { b",\n  " })?;
        first = false;
        serde_json::to_writer(&mut *out, issue)?;
        Ok(())
    };
    for e in &outcome.errors {
        item(&mut *out, &error_issue(e, cwd))?;
    }
    for entry in outcome.findings.entries() {
        let entry = entry.map_err(std::io::Error::other)?;
        item(&mut *out, &finding_issue(&entry, cwd))?;
    }
    out.write_all(if first { b"]\n" } else { b"\n]\n" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_relative_to_the_repository() {
        let cwd = Path::new("/builds/shop");
        let rows = [
            ("deploy/app.yaml", "deploy/app.yaml"),
            ("./deploy/app.yaml", "deploy/app.yaml"),
            ("deploy\\win\\app.yaml", "deploy/win/app.yaml"),
            ("/builds/shop/deploy/app.yaml", "deploy/app.yaml"),
            ("/elsewhere/app.yaml", "/elsewhere/app.yaml"),
            ("<stdin>", "<stdin>"),
        ];
        for (path, want) in rows {
            assert_eq!(relative(path, Some(cwd)), want, "{path}");
        }
    }
}
