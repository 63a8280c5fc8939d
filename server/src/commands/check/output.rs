//! Report formats of `winplace check` (text, JSON, SARIF 2.1.0) and of `winplace rules`.

use std::fmt::Write as _;
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use serde_json::{Value, json};
use winplace_rules::rules::catalog::{self, RULES};
use winplace_rules::{Finding, Severity};

use super::Outcome;

/// Output formats of `winplace check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Findings grouped by file, with line numbers (colored on a terminal).
    Text,
    /// One JSON document: findings, parse errors, summary.
    Json,
    /// SARIF 2.1.0, for code-scanning interfaces.
    Sarif,
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

/// The report of `outcome` in `format`.
pub fn render(outcome: &Outcome, format: Format, color: bool) -> String {
    match format {
        Format::Text => text(outcome, color),
        Format::Json => {
            let mut s = json_text(outcome);
            s.push('\n');
            s
        }
        Format::Sarif => {
            let mut s = serde_json::to_string_pretty(&sarif(outcome)).unwrap_or_default();
            s.push('\n');
            s
        }
    }
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

/// `file:line: severity rule: message (path)` lines grouped by file, each followed by its fix.
fn text(outcome: &Outcome, color: bool) -> String {
    let mut out = String::new();
    // (file, line, line of text, fix line)
    let mut rows: Vec<(String, u32, String)> = Vec::new();
    for e in &outcome.errors {
        let line = format!(
            "{}:{}:{}: {} {}: {}",
            e.file,
            e.line,
            e.column,
            paint(color, severity_style(Severity::Error), "error"),
            paint(color, Style::new().bold(), "input-error"),
            e.message
        );
        rows.push((e.file.clone(), e.line, line));
    }
    for f in &outcome.findings {
        let file = f.file.clone().unwrap_or_else(|| "-".to_string());
        let mut line = format!(
            "{file}:{}: {} {}: {}",
            f.line.map_or("-".to_string(), |l| l.to_string()),
            paint(color, severity_style(f.severity), f.severity.as_str()),
            paint(color, Style::new().bold(), &f.rule),
            f.message
        );
        if !f.path.is_empty() {
            let _ = write!(line, " ({})", f.path);
        }
        if let Some(fix) = &f.fix {
            let _ = write!(
                line,
                "\n    {} {}",
                paint(
                    color,
                    Style::new().fg_color(Some(AnsiColor::Green.into())),
                    "fix:"
                ),
                fix.description
            );
        }
        rows.push((file, f.line.unwrap_or(0), line));
    }
    // Grouped by file in first-seen order, then by line.
    let mut order: Vec<String> = Vec::new();
    for (file, _, _) in &rows {
        if !order.contains(file) {
            order.push(file.clone());
        }
    }
    for (i, file) in order.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut group: Vec<&(String, u32, String)> = rows.iter().filter(|r| &r.0 == file).collect();
        group.sort_by_key(|r| r.1);
        for (_, _, line) in group {
            out.push_str(line);
            out.push('\n');
        }
    }
    for (file, n) in &outcome.fixed {
        let _ = writeln!(out, "{file}: {} applied", plural(*n, "fix", "fixes"));
    }
    if !rows.is_empty() || !outcome.fixed.is_empty() {
        out.push('\n');
    }
    let s = summary(outcome);
    let mut line = format!(
        "{}, {}, {} in {}",
        plural(s.0, "error", "errors"),
        plural(s.1, "warning", "warnings"),
        plural(s.2, "info", "infos"),
        plural(outcome.files, "file", "files")
    );
    if !outcome.errors.is_empty() {
        let _ = write!(
            line,
            "; {} reading input",
            plural(outcome.errors.len(), "error", "errors")
        );
    }
    out.push_str(&paint(color, Style::new().bold(), &line));
    out.push('\n');
    out
}

/// Errors, warnings and infos among the findings.
fn summary(outcome: &Outcome) -> (usize, usize, usize) {
    let count = |s| outcome.findings.iter().filter(|f| f.severity == s).count();
    (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info),
    )
}

/// `object` of a JSON finding.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonObject<'a> {
    api_version: &'a str,
    kind: &'a str,
    namespace: Option<&'a str>,
    name: &'a str,
}

/// `fix` of a JSON finding.
#[derive(serde::Serialize)]
struct JsonFix<'a> {
    description: &'a str,
    patch: &'a [Value],
}

/// One finding of the JSON report (fields in this order).
#[derive(serde::Serialize)]
struct JsonFinding<'a> {
    rule: &'a str,
    severity: Severity,
    object: JsonObject<'a>,
    file: Option<&'a str>,
    line: Option<u32>,
    path: &'a str,
    message: &'a str,
    fix: Option<JsonFix<'a>>,
}

/// One parse error of the JSON report.
#[derive(serde::Serialize)]
struct JsonParseError<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    message: &'a str,
}

/// The summary of the JSON report.
#[derive(serde::Serialize)]
struct JsonSummary {
    errors: usize,
    warnings: usize,
    infos: usize,
}

/// The JSON report.
#[derive(serde::Serialize)]
struct JsonReport<'a> {
    findings: Vec<JsonFinding<'a>>,
    parse_errors: Vec<JsonParseError<'a>>,
    summary: JsonSummary,
}

/// The JSON report (`{findings, parse_errors, summary}`) as text, fields in schema order.
fn json_text(outcome: &Outcome) -> String {
    serde_json::to_string_pretty(&json_struct(outcome)).unwrap_or_default()
}

fn json_struct(outcome: &Outcome) -> JsonReport<'_> {
    let (errors, warnings, infos) = summary(outcome);
    JsonReport {
        findings: outcome
            .findings
            .iter()
            .map(|f: &Finding| JsonFinding {
                rule: &f.rule,
                severity: f.severity,
                object: JsonObject {
                    api_version: &f.object.api_version,
                    kind: &f.object.kind,
                    namespace: f.object.namespace.as_deref(),
                    name: &f.object.name,
                },
                file: f.file.as_deref(),
                line: f.line,
                path: &f.path,
                message: &f.message,
                fix: f.fix.as_ref().map(|x| JsonFix {
                    description: &x.description,
                    patch: &x.patch,
                }),
            })
            .collect(),
        parse_errors: outcome
            .errors
            .iter()
            .map(|e| JsonParseError {
                file: &e.file,
                line: e.line,
                column: e.column,
                message: &e.message,
            })
            .collect(),
        summary: JsonSummary {
            errors,
            warnings,
            infos,
        },
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

/// SARIF 2.1.0: one run, the catalogue as rules, findings as results, read errors as notifications.
pub fn sarif(outcome: &Outcome) -> Value {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.title,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": r.summary},
                "helpUri": catalog::doc_url(r.id),
                "defaultConfiguration": {"level": sarif_level(r.severity)},
                "properties": {"family": r.family.as_str(), "fixable": r.fixable},
            })
        })
        .collect();
    let results: Vec<Value> = outcome
        .findings
        .iter()
        .map(|f| {
            let mut text = f.message.clone();
            if let Some(fix) = &f.fix {
                text.push_str(&format!(" Fix: {}", fix.description));
            }
            let mut physical =
                json!({"artifactLocation": {"uri": uri(f.file.as_deref().unwrap_or("-"))}});
            if let Some(line) = f.line {
                physical["region"] = json!({"startLine": line});
            }
            let mut result = json!({
                "ruleId": f.rule,
                "level": sarif_level(f.severity),
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": physical,
                    "logicalLocations": [{
                        "fullyQualifiedName": format!("{}:{}", f.object.display_name(), f.path),
                        "kind": "object",
                    }],
                }],
            });
            if let Some(i) = RULES.iter().position(|r| r.id == f.rule) {
                result["ruleIndex"] = json!(i);
            }
            result
        })
        .collect();
    let notifications: Vec<Value> = outcome
        .errors
        .iter()
        .map(|e| {
            json!({
                "level": "error",
                "message": {"text": e.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": uri(&e.file)},
                    "region": {"startLine": e.line, "startColumn": e.column},
                }}],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "winplace",
                "informationUri": "https://github.com/winplace/winplace",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": outcome.errors.is_empty(),
                "toolExecutionNotifications": notifications,
            }],
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn no_color_without_a_request() {
        let outcome = Outcome::default();
        let plain = render(&outcome, Format::Text, false);
        assert!(!plain.contains('\u{1b}'));
        assert_eq!(plain, "0 errors, 0 warnings, 0 infos in 0 files\n");
        assert!(render(&outcome, Format::Text, true).contains('\u{1b}'));
    }
}
