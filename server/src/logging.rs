//! Logging setup: human-readable text (coloured only on a terminal) or one JSON object per line for
//! log collectors, on standard error, filtered by `RUST_LOG`.

use std::io::IsTerminal as _;

use clap::ValueEnum;

/// The filter when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "winplace=info,tower_http=info";

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One line of text per event; ANSI colours only when standard error is a terminal and `NO_COLOR`
    /// is not set.
    #[default]
    Text,
    /// One JSON object per line (`timestamp`, `level`, `fields.message`, `target`, …), for log
    /// collectors in clusters.
    Json,
}

/// Whether text logs are coloured: standard error is a terminal and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
pub fn colour_wanted() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Installs the global subscriber (once, from `main`).
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| DEFAULT_FILTER.into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.with_ansi(colour_wanted()).init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
}
