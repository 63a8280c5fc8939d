//! One report of a run, written in its format as it is rendered, so that a report of many findings never
//! exists whole in memory beside them: text, JSON and SARIF (`output`), JUnit (`junit`), GitLab Code
//! Quality (`code_quality`).

use std::io::Write as _;

use winplace_rules::Severity;

use super::Outcome;
use super::output::{self, Format};

/// Writes the report of `outcome` in `format` to `out`. `color`: the text report's; `fail_on`: the lowest
/// severity that fails (JUnit's failed testcases are those the exit code counts).
pub fn render_to(
    outcome: &Outcome,
    format: Format,
    color: bool,
    fail_on: Severity,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(out);
    match format {
        Format::Text => output::write_text(outcome, color, &mut out)?,
        Format::Json => output::write_json(outcome, &mut out)?,
        Format::Sarif => output::write_sarif(outcome, &mut out)?,
        Format::Junit => super::junit::write(outcome, fail_on, &mut out)?,
        Format::Codequality => super::code_quality::write(outcome, &mut out)?,
    }
    out.flush()
}

/// The report of `outcome` in `format`, as text (what [`render_to`] writes; errors at `error`).
#[cfg(test)]
pub fn render(outcome: &Outcome, format: Format, color: bool) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = render_to(outcome, format, color, Severity::Error, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}
