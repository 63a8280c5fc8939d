//! `winplace rules`: the catalogue as a table or JSON (the JSON rows are those of `GET /api/rules`).

use clap::{Args, ValueEnum};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Write;
use std::process::ExitCode;
use winplace_rules::catalog::{self, RULES};

/// Arguments of `winplace rules`.
#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

/// Output formats of `winplace rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// A table.
    Text,
    /// A JSON array.
    Json,
}

/// `winplace rules` output: id, severity, family, title (text), or every field of the catalogue (JSON).
pub fn rules(format: ListFormat) -> String {
    match format {
        ListFormat::Json => {
            let rows: Vec<Value> = RULES.iter().map(catalog::rule_json).collect();
            let mut s = serde_json::to_string_pretty(&rows).unwrap_or_default();
            s.push('\n');
            s
        }
        ListFormat::Text => {
            let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
            let mut out = format!(
                "{:width$}  {:8}  {:15}  TITLE\n",
                "ID", "SEVERITY", "FAMILY"
            );
            for r in RULES {
                let _ = writeln!(
                    out,
                    "{:width$}  {:8}  {:15}  {}",
                    r.id,
                    r.severity.as_str(),
                    r.family.as_str(),
                    r.title
                );
            }
            out
        }
    }
}

/// Runs `winplace rules`: the catalogue as a table or JSON.
pub fn run(args: RulesArgs) -> anyhow::Result<ExitCode> {
    let text = rules(args.format);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_list_every_rule() {
        let text = rules(ListFormat::Text);
        assert_eq!(text.lines().count(), RULES.len() + 1);
        let json: Value = serde_json::from_str(&rules(ListFormat::Json)).expect("json");
        assert_eq!(json.as_array().map(Vec::len), Some(RULES.len()));
        assert_eq!(json[0]["id"], RULES[0].id);
    }
}
