//! One module per subcommand of `winplace`.

pub mod audit;
pub mod check;
pub mod completion;
pub mod context;
pub mod demo_snapshot;
pub mod explain;
pub mod export;
pub mod live_reports;
pub mod man;
pub mod policy_report;
pub mod rules;
pub mod serve;
pub mod support_horizon;
pub mod what_if;
