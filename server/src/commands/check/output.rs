//! The text, JSON and SARIF 2.1.0 reports of `winplace check` (`render` writes each report in its format;
//! JUnit and GitLab Code Quality have their own modules).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use serde::Serialize;
use serde_json::{Value, json};
use winplace_rules::catalog::{self, RULES};
use winplace_rules::{Finding, ParseError, Severity};

use super::Outcome;
use super::findings::{Entry, FindingLog, Run};

/// Output formats of `winplace check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Findings grouped by file, with line numbers (colored on a terminal).
    Text,
    /// One JSON document: findings, parse errors, summary.
    Json,
    /// SARIF 2.1.0, for code-scanning interfaces (GitHub, Azure DevOps' SARIF viewer).
    Sarif,
    /// JUnit XML: one testsuite per file, one testcase per object and rule (Azure DevOps, Jenkins,
    /// GitLab test reports).
    Junit,
    /// GitLab Code Quality JSON (the merge request widget).
    Codequality,
}

/// Whether to color the text report: only on a terminal, and never when `NO_COLOR` is set.
pub fn color_wanted(stderr: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let terminal = if stderr {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    };
    terminal && !no_color
}

/// Writes the text report of `outcome` to `out`.
pub fn write_text(
    outcome: &Outcome,
    color: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    text(outcome, color, out)
}

/// Writes the JSON report of `outcome` to `out` ([`CheckReport`]).
pub fn write_json(outcome: &Outcome, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &CheckReport::of(outcome))?;
    out.write_all(b"\n")
}

/// Writes the SARIF log of `outcome` to `out`, one result at a time.
pub fn write_sarif(outcome: &Outcome, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // Relative paths are relative to where the command ran: that directory is the SRCROOT.
    let base = std::env::current_dir()
        .ok()
        .map(|dir| format!("{}/", file_uri(&dir.display().to_string())));
    let log = SarifLog {
        outcome,
        base: base.as_deref(),
    };
    serde_json::to_writer_pretty(&mut *out, &log)?;
    out.write_all(b"\n")
}

fn paint(color: bool, style: Style, text: &str) -> String {
    if color {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

fn severity_style(s: Severity) -> Style {
    let c = match s {
        Severity::Error => AnsiColor::Red,
        Severity::Warning => AnsiColor::Yellow,
        Severity::Info => AnsiColor::Cyan,
    };
    Style::new().fg_color(Some(c.into())).bold()
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line of the text report (`file:line: severity rule: message (path)`) and the lines under it (the
/// chart template and object Helm rendered it from, the fix): a read error or a finding.
enum Row<'a> {
    Error(&'a ParseError),
    Finding(&'a Finding, Option<&'a str>),
}

impl Row<'_> {
    fn line(&self) -> u32 {
        match self {
            Row::Error(e) => e.line,
            Row::Finding(f, _) => f.line.unwrap_or(0),
        }
    }

    fn write(&self, color: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Row::Error(e) => writeln!(
                out,
                "{}:{}:{}: {} {}: {}",
                e.file,
                e.line,
                e.column,
                paint(color, severity_style(Severity::Error), "error"),
                paint(color, Style::new().bold(), "input-error"),
                e.message
            ),
            Row::Finding(f, helm_template) => {
                write!(
                    out,
                    "{}:{}: {} {}: {}",
                    f.file.as_deref().unwrap_or("-"),
                    f.line.map_or("-".to_string(), |l| l.to_string()),
                    paint(color, severity_style(f.severity), f.severity.as_str()),
                    paint(color, Style::new().bold(), &f.rule),
                    f.message
                )?;
                if !f.path.is_empty() {
                    write!(out, " ({})", f.path)?;
                }
                if let Some(template) = helm_template {
                    write!(out, "\n    from {template}: {}", f.object.display_name())?;
                }
                if let Some(fix) = &f.fix {
                    let label = paint(
                        color,
                        Style::new().fg_color(Some(AnsiColor::Green.into())),
                        "fix:",
                    );
                    write!(out, "\n    {label} {}", fix.description)?;
                }
                writeln!(out)
            }
        }
    }
}

/// The text report: read errors and findings grouped by file in first-seen order (the files of read
/// errors first), then by line, errors before findings on a line; what `--fix` did; the summary line.
///
/// The findings are decoded from the log one at a time and merged with the file's few errors; only a
/// file whose findings came in several runs or out of line order is gathered and sorted whole.
fn text(outcome: &Outcome, color: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut order: Vec<&str> = Vec::new();
    let mut errors: HashMap<&str, Vec<&ParseError>> = HashMap::new();
    for e in &outcome.errors {
        errors
            .entry(e.file.as_str())
            .or_insert_with(|| {
                order.push(e.file.as_str());
                Vec::new()
            })
            .push(e);
    }
    let mut runs: HashMap<&str, Vec<&Run>> = HashMap::new();
    for run in outcome.findings.runs() {
        let file = run.file.as_deref().unwrap_or("-");
        if !errors.contains_key(file) && !runs.contains_key(file) {
            order.push(file);
        }
        runs.entry(file).or_default().push(run);
    }
    for (i, file) in order.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let mut file_errors = errors.remove(file).unwrap_or_default();
        // Stable: errors of one line keep their order.
        file_errors.sort_by_key(|e| e.line);
        let file_runs = runs.remove(file).unwrap_or_default();
        match file_runs.as_slice() {
            [] => write_merged(&file_errors, std::iter::empty(), color, out)?,
            [run] if run.by_line => {
                write_merged(&file_errors, outcome.findings.run_entries(run), color, out)?
            }
            _ => {
                let mut findings = Vec::new();
                for run in &file_runs {
                    for entry in outcome.findings.run_entries(run) {
                        findings.push(entry.map_err(std::io::Error::other)?);
                    }
                }
                findings.sort_by_key(|e| e.finding.line.unwrap_or(0));
                write_merged(&file_errors, findings.into_iter().map(Ok), color, out)?;
            }
        }
    }
    for (file, n) in &outcome.fixed {
        writeln!(out, "{file}: {} applied", plural(*n, "fix", "fixes"))?;
    }
    for (file, n, why) in &outcome.not_fixed {
        writeln!(out, "{file}: {} {why}", plural(*n, "fix", "fixes"))?;
    }
    if !order.is_empty() || !outcome.fixed.is_empty() || !outcome.not_fixed.is_empty() {
        writeln!(out)?;
    }
    let s = summary(outcome);
    let mut line = format!(
        "{}, {}, {} in {}",
        plural(s.0, "error", "errors"),
        plural(s.1, "warning", "warnings"),
        plural(s.2, "info", "infos"),
        plural(outcome.files, "file", "files")
    );
    let unwritten = outcome.unwritten;
    let reading = outcome.errors.len().saturating_sub(unwritten);
    if reading > 0 {
        let _ = write!(
            line,
            "; {} reading input",
            plural(reading, "error", "errors")
        );
    }
    if unwritten > 0 {
        let _ = write!(
            line,
            "; {} not written",
            plural(unwritten, "repaired file", "repaired files")
        );
    }
    writeln!(out, "{}", paint(color, Style::new().bold(), &line))
}

/// One file's rows: its errors (sorted by line) merged with its findings (in line order), an error
/// before a finding of the same line.
fn write_merged(
    errors: &[&ParseError],
    findings: impl Iterator<Item = Result<Entry, serde_json::Error>>,
    color: bool,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut errors = errors.iter().peekable();
    for entry in findings {
        let entry = entry.map_err(std::io::Error::other)?;
        let row = Row::Finding(&entry.finding, entry.helm_template.as_deref());
        while let Some(e) = errors.next_if(|e| e.line <= row.line()) {
            Row::Error(e).write(color, out)?;
        }
        row.write(color, out)?;
    }
    for e in errors {
        Row::Error(e).write(color, out)?;
    }
    Ok(())
}

/// Errors, warnings and infos among the findings.
pub(super) fn summary(outcome: &Outcome) -> (usize, usize, usize) {
    let count = |s| outcome.findings.count(s);
    (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    )
}

/// The JSON report: the findings and parse errors as the rules crate serializes them, and the counts.
///
/// The shape docs/cli.md documents: `{"findings": [{rule, severity, object{apiVersion, kind, namespace,
/// name}, file, line, path, message, fix, helm_template?}], "parse_errors": [{file, line, column,
/// message}], "summary": {errors, warnings, infos}, "settings_file"}`.
#[derive(Debug, Serialize)]
pub struct CheckReport<'a> {
    /// Every finding.
    pub findings: &'a FindingLog,
    /// Input that could not be read.
    pub parse_errors: &'a [ParseError],
    /// Findings by severity.
    pub summary: CheckSummary,
    /// The settings file read (`--settings`, or `.winplace.yaml` found), `null` for the defaults.
    pub settings_file: Option<&'a str>,
}

/// Findings by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CheckSummary {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
}

impl<'a> CheckReport<'a> {
    /// The report of `outcome`.
    pub fn of(outcome: &'a Outcome) -> Self {
        let (errors, warnings, infos) = summary(outcome);
        CheckReport {
            findings: &outcome.findings,
            parse_errors: &outcome.errors,
            summary: CheckSummary {
                errors,
                warnings,
                infos,
            },
            settings_file: outcome.settings_file.as_deref(),
        }
    }
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A path as a relative URI reference (forward slashes, reserved characters escaped).
fn uri(path: &str) -> String {
    let mut out = String::new();
    for c in path.replace('\\', "/").chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '.' | '_' | '~' | '/' | ':' => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "%{b:02X}");
                }
            }
        }
    }
    out
}

/// The `uriBaseId` relative paths are resolved against (SARIF §3.4.4; `%SRCROOT%` is the name GitHub
/// code scanning and the SARIF SDK use for the source root).
pub const SRCROOT: &str = "%SRCROOT%";

/// Whether a path is absolute on Unix (`/a`) or Windows (`C:\a`, `C:/a`, `\\server\share`).
pub(super) fn is_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    path.starts_with('/')
        || path.starts_with("\\\\")
        || (b.len() >= 3
            && b[0].is_ascii_alphabetic()
            && b[1] == b':'
            && matches!(b[2], b'\\' | b'/'))
}

/// An absolute path as a `file://` URI (`/a b` → `file:///a%20b`, `C:\a` → `file:///C:/a`).
fn file_uri(path: &str) -> String {
    let uri = uri(path);
    if uri.starts_with('/') {
        format!("file://{uri}")
    } else {
        format!("file:///{uri}")
    }
}

/// Where a finding is: an absolute path as a `file://` URI; a relative one as a relative reference
/// resolved against [`SRCROOT`]. (A bare relative reference with no base is what SARIF validators
/// reject as SARIF1004, and so is an absolute path written as a relative reference.)
fn artifact_location(path: &str) -> Value {
    if is_absolute(path) {
        json!({"uri": file_uri(path)})
    } else {
        json!({"uri": uri(path), "uriBaseId": SRCROOT})
    }
}

/// SARIF 2.1.0: one run, the catalogue as rules, findings as results, read errors as notifications.
/// `base`: the `file://` URI (ending in `/`) that relative paths are relative to, when known; it becomes
/// the run's `originalUriBaseIds` entry for [`SRCROOT`].
#[cfg(test)]
pub fn sarif(outcome: &Outcome, base: Option<&str>) -> Value {
    serde_json::to_value(SarifLog { outcome, base }).unwrap_or_default()
}

/// The SARIF log of an outcome, serialized as it is written: one result at a time, never the whole log as
/// a JSON tree (keys in the order `serde_json`'s maps keep them, sorted, as [`sarif`] has always had them).
struct SarifLog<'a> {
    outcome: &'a Outcome,
    base: Option<&'a str>,
}

impl Serialize for SarifLog<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut log = serializer.serialize_map(Some(3))?;
        log.serialize_entry("$schema", "https://json.schemastore.org/sarif-2.1.0.json")?;
        log.serialize_entry("runs", &[SarifRun(self)])?;
        log.serialize_entry("version", "2.1.0")?;
        log.end()
    }
}

/// The log's one run.
struct SarifRun<'a>(&'a SarifLog<'a>);

impl Serialize for SarifRun<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let SarifLog { outcome, base } = self.0;
        let notifications: Vec<Value> = outcome.errors.iter().map(sarif_notification).collect();
        let rules: Vec<Value> = RULES.iter().map(sarif_rule).collect();
        let mut run = serializer.serialize_map(None)?;
        run.serialize_entry(
            "invocations",
            &json!([{
                "executionSuccessful": outcome.errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }]),
        )?;
        if let Some(base) = base {
            run.serialize_entry("originalUriBaseIds", &json!({SRCROOT: {"uri": base}}))?;
        }
        run.serialize_entry("results", &SarifResults(&outcome.findings))?;
        run.serialize_entry(
            "tool",
            &json!({"driver": {
                "informationUri": "https://github.com/winplace/winplace",
                "name": "winplace",
                "rules": rules,
                "version": env!("CARGO_PKG_VERSION"),
            }}),
        )?;
        run.end()
    }
}

/// The findings as SARIF results, each built as it is written.
struct SarifResults<'a>(&'a FindingLog);

impl Serialize for SarifResults<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for entry in self.0.entries() {
            seq.serialize_element(&sarif_result(&entry.map_err(S::Error::custom)?))?;
        }
        seq.end()
    }
}

/// A catalogue entry as a SARIF reporting descriptor.
fn sarif_rule(r: &catalog::RuleMeta) -> Value {
    json!({
        "id": r.id,
        "name": r.title,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.summary},
        "helpUri": catalog::doc_url(r.id),
        "defaultConfiguration": {"level": sarif_level(r.severity)},
        "properties": {
            "family": r.family.as_str(),
            "fixable": r.fixable,
            "precision": precision(r.severity),
        },
    })
}

/// How often a rule's results are true, as GitHub code scanning reads `properties.precision`
/// (`very-high`, `high`, `medium`, `low`; docs/reference/sarif.md). Errors restate what the API server,
/// the scheduler or the kubelet do to the object (its own validation and filters): very-high. Warnings
/// depend on what the rules presume without the cluster (an image's build from its tag, the nodes'
/// taints from the settings): high. Infos are notes: medium.
fn precision(s: Severity) -> &'static str {
    match s {
        Severity::Error => "very-high",
        Severity::Warning => "high",
        Severity::Info => "medium",
    }
}

/// The name of winplace's fingerprint in a result's `partialFingerprints` (SARIF 2.1.0, result object: a
/// name with a version, so that a changed recipe is a new name; not `primaryLocationLineHash`, which
/// GitHub computes itself from the file's text and overwrites).
pub const FINGERPRINT: &str = "winplaceFinding/v1";

/// A finding's identity across runs, whatever line it is on: SHA-256 of its rule, its file, its object
/// (apiVersion, kind, namespace, name) and its field path, NUL-separated, in hex. Moving the object
/// within its file, or editing other lines, keeps it; renaming the object or moving it to another file
/// makes a new one, as GitHub would treat a new alert.
pub fn fingerprint(f: &Finding) -> String {
    use sha2::Digest as _;
    let mut h = sha2::Sha256::new();
    for part in [
        f.rule.as_str(),
        f.file.as_deref().unwrap_or("-"),
        f.object.api_version.as_str(),
        f.object.kind.as_str(),
        f.object.namespace.as_deref().unwrap_or(""),
        f.object.name.as_str(),
        f.path.as_str(),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .fold(String::with_capacity(64), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

/// A finding as a SARIF result. A finding on an object Helm rendered names its chart template in the
/// message and as a related location (the rendered text is where the line is; the template is what to
/// edit), and in the result's `properties.helmTemplate`.
fn sarif_result(entry: &Entry) -> Value {
    let f = &entry.finding;
    let mut text = f.message.clone();
    if let Some(template) = &entry.helm_template {
        text.push_str(&format!(
            " Rendered by Helm from {template} ({}).",
            f.object.display_name()
        ));
    }
    if let Some(fix) = &f.fix {
        text.push_str(&format!(" Fix: {}", fix.description));
    }
    let mut physical =
        json!({"artifactLocation": artifact_location(f.file.as_deref().unwrap_or("-"))});
    if let Some(line) = f.line {
        physical["region"] = json!({"startLine": line});
    }
    let mut result = json!({
        "ruleId": f.rule,
        "level": sarif_level(f.severity),
        "message": {"text": text},
        "partialFingerprints": {FINGERPRINT: fingerprint(f)},
        "properties": {"precision": precision(f.severity)},
        "locations": [{
            "physicalLocation": physical,
            "logicalLocations": [{
                "fullyQualifiedName": format!("{}:{}", f.object.display_name(), f.path),
                "kind": "object",
            }],
        }],
    });
    if let Some(template) = &entry.helm_template {
        result["relatedLocations"] = json!([{
            "id": 1,
            "message": {"text": format!("the Helm template {} was rendered from", f.object.display_name())},
            "physicalLocation": {"artifactLocation": artifact_location(template)},
        }]);
        result["properties"]["helmTemplate"] = json!(template.as_ref());
    }
    if let Some(i) = RULES.iter().position(|r| r.id == f.rule) {
        result["ruleIndex"] = json!(i);
    }
    result
}

/// A read error as a SARIF tool execution notification.
fn sarif_notification(e: &ParseError) -> Value {
    json!({
        "level": "error",
        "message": {"text": e.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": artifact_location(&e.file),
            "region": {"startLine": e.line, "startColumn": e.column},
        }}],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::check::render::render;

    #[test]
    fn uris_escape_what_uris_cannot_hold() {
        let rows = [
            ("deploy/app.yaml", "deploy/app.yaml"),
            ("my dir\\a b.yaml", "my%20dir/a%20b.yaml"),
            ("<stdin>", "%3Cstdin%3E"),
            ("é.yaml", "%C3%A9.yaml"),
        ];
        for (path, want) in rows {
            assert_eq!(uri(path), want);
        }
    }

    #[test]
    fn locations_are_file_uris_or_relative_to_srcroot() {
        let rows = [
            (
                "deploy/app.yaml",
                json!({"uri": "deploy/app.yaml", "uriBaseId": SRCROOT}),
            ),
            (
                "/srv/k8s/a b.yaml",
                json!({"uri": "file:///srv/k8s/a%20b.yaml"}),
            ),
            (
                "C:\\k8s\\app.yaml",
                json!({"uri": "file:///C:/k8s/app.yaml"}),
            ),
            ("-", json!({"uri": "-", "uriBaseId": SRCROOT})),
        ];
        for (path, want) in rows {
            assert_eq!(artifact_location(path), want, "{path}");
        }
        let with_base = sarif(&Outcome::default(), Some("file:///srv/checkout/"));
        assert_eq!(
            with_base["runs"][0]["originalUriBaseIds"][SRCROOT]["uri"],
            "file:///srv/checkout/"
        );
        let without = sarif(&Outcome::default(), None);
        assert!(without["runs"][0].get("originalUriBaseIds").is_none());
    }

    #[test]
    fn no_color_without_a_request() {
        let outcome = Outcome::default();
        let plain = render(&outcome, Format::Text, false);
        assert!(!plain.contains('\u{1b}'));
        assert_eq!(plain, "0 errors, 0 warnings, 0 infos in 0 files\n");
        assert!(render(&outcome, Format::Text, true).contains('\u{1b}'));
    }

    /// A finding with every field set, one without file, line, namespace or fix, and a parse error.
    fn sample() -> Outcome {
        let object = |namespace: Option<&str>| winplace_rules::ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: namespace.map(str::to_string),
            name: "web".into(),
        };
        Outcome {
            findings: [
                Finding {
                    rule: "windows-pod-without-os-selector".into(),
                    severity: Severity::Error,
                    object: object(Some("shop")),
                    file: Some("input.yaml".into()),
                    line: Some(7),
                    path: "spec.template.spec.nodeSelector".into(),
                    message: "pin it".into(),
                    fix: Some(winplace_rules::Fix {
                        description: "add the selector".into(),
                        patch: vec![json!({"op": "add", "path": "/a", "value": 1})].into(),
                    }),
                },
                Finding {
                    rule: "windows-image-build-unknown".into(),
                    severity: Severity::Info,
                    object: object(None),
                    file: None,
                    line: None,
                    path: String::new(),
                    message: "unknown".into(),
                    fix: None,
                },
            ]
            .into_iter()
            .collect(),
            errors: vec![winplace_rules::ParseError {
                file: "bad.yaml".into(),
                line: 2,
                column: 3,
                message: "did not find expected node content".into(),
            }],
            fixed: Vec::new(),
            files: 2,
            ..Outcome::default()
        }
    }

    #[test]
    fn json_report_keys_in_schema_order() {
        let want = r#"{
  "findings": [
    {
      "rule": "windows-pod-without-os-selector",
      "severity": "error",
      "object": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": "shop",
        "name": "web"
      },
      "file": "input.yaml",
      "line": 7,
      "path": "spec.template.spec.nodeSelector",
      "message": "pin it",
      "fix": {
        "description": "add the selector",
        "patch": [
          {
            "op": "add",
            "path": "/a",
            "value": 1
          }
        ]
      }
    },
    {
      "rule": "windows-image-build-unknown",
      "severity": "info",
      "object": {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": null,
        "name": "web"
      },
      "file": null,
      "line": null,
      "path": "",
      "message": "unknown",
      "fix": null
    }
  ],
  "parse_errors": [
    {
      "file": "bad.yaml",
      "line": 2,
      "column": 3,
      "message": "did not find expected node content"
    }
  ],
  "summary": {
    "errors": 1,
    "warnings": 0,
    "infos": 1
  },
  "settings_file": null
}
"#;
        assert_eq!(render(&sample(), Format::Json, false), want);
    }

    /// The text report as it was rendered with every finding in memory: errors then findings, grouped
    /// by file in first-seen order, each group sorted by line (stable).
    fn text_all_at_once(outcome: &Outcome, findings: &[Finding]) -> String {
        let mut order: Vec<&str> = Vec::new();
        let mut groups: HashMap<&str, Vec<Row<'_>>> = HashMap::new();
        let rows = outcome
            .errors
            .iter()
            .map(|e| (e.file.as_str(), Row::Error(e)))
            .chain(
                findings
                    .iter()
                    .map(|f| (f.file.as_deref().unwrap_or("-"), Row::Finding(f, None))),
            );
        for (file, row) in rows {
            groups
                .entry(file)
                .or_insert_with(|| {
                    order.push(file);
                    Vec::new()
                })
                .push(row);
        }
        let mut out = Vec::new();
        for (i, file) in order.iter().enumerate() {
            if i > 0 {
                out.push(b'\n');
            }
            let group = groups.get_mut(file).expect("grouped");
            group.sort_by_key(Row::line);
            for row in group.iter() {
                row.write(false, &mut out).expect("vec");
            }
        }
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn text_report_merges_errors_and_findings_as_a_whole_sort_would() {
        let finding = |file: Option<&str>, line: Option<u32>, rule: &str| Finding {
            file: file.map(str::to_string),
            line,
            ..Finding::new(
                rule,
                Severity::Warning,
                winplace_rules::ObjectRef::new("v1", "Pod", Some("ns"), "p"),
            )
        };
        let error = |file: &str, line: u32| winplace_rules::ParseError {
            file: file.into(),
            line,
            column: 1,
            message: format!("bad at {line}"),
        };
        // a.yaml: one run in line order, errors on a finding's line, before, between and after; b.yaml:
        // two runs (a file given twice) and c.yaml out of line order; a finding of no file; an error of a
        // file without findings first.
        let findings = vec![
            finding(Some("a.yaml"), Some(3), "r1"),
            finding(Some("a.yaml"), Some(5), "r2"),
            finding(Some("a.yaml"), Some(5), "r3"),
            finding(Some("a.yaml"), Some(9), "r4"),
            finding(Some("b.yaml"), Some(8), "r5"),
            finding(None, None, "r6"),
            finding(Some("b.yaml"), Some(2), "r7"),
            finding(Some("c.yaml"), Some(7), "r8"),
            finding(Some("c.yaml"), Some(1), "r9"),
        ];
        let outcome = Outcome {
            findings: findings.iter().cloned().collect(),
            errors: vec![
                error("z.yaml", 4),
                error("a.yaml", 5),
                error("a.yaml", 1),
                error("a.yaml", 12),
                error("b.yaml", 4),
                error("a.yaml", 5),
            ],
            files: 4,
            ..Outcome::default()
        };
        let report = render(&outcome, Format::Text, false);
        let want = text_all_at_once(&outcome, &findings);
        assert!(report.starts_with(&want), "{report}\n---\n{want}");
        assert!(report.contains("a.yaml:5:1: error input-error: bad at 5\na.yaml:5:1: error input-error: bad at 5\na.yaml:5: warning r2"), "{report}");
    }
}
