//! `winplace serve --reports`: the live audit's findings kept in the cluster as OpenReports `Report`s
//! (or `wgpolicyk8s.io` PolicyReports), where Policy Reporter, Rancher and `kubectl get` read them
//! (docs/reports.md).
//!
//! * [`desired`]: the reports the published audit asks for, one per namespace with findings and one
//!   cluster report for the nodes;
//! * [`writer`]: the one replica that holds the reports' Lease applies a report only when what it says
//!   changed (server-side apply under one field manager, strict field validation), at most one round
//!   of writes per `--reports-interval`, and deletes the reports of namespaces left without findings.

pub mod desired;
pub mod writer;

use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::commands::policy_report::ReportApi;

/// The default of `--reports-interval`: the shortest time between two rounds of writes.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);
/// The default of `--reports-lease-name`.
pub const DEFAULT_LEASE_NAME: &str = "winplace-reports";
/// The field manager of every write (server-side apply).
pub const FIELD_MANAGER: &str = "winplace-reports";

/// Which report API `--reports` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportsFormat {
    /// `openreports.io/v1alpha1` `Report` and `ClusterReport` (Kubewarden's default since 1.33).
    Openreports,
    /// `wgpolicyk8s.io/v1alpha2` `PolicyReport` and `ClusterPolicyReport` (clusters on the older CRDs).
    Policyreport,
}

impl ReportsFormat {
    /// The report API of this format.
    pub fn api(self) -> ReportApi {
        match self {
            ReportsFormat::Openreports => ReportApi::OpenReports,
            ReportsFormat::Policyreport => ReportApi::PolicyReport,
        }
    }
}

/// The flags of `winplace serve --reports`.
#[derive(Debug, Clone, Args)]
pub struct ReportsArgs {
    /// Keep the live audit's findings in the cluster as reports: one per namespace with findings (named
    /// `winplace`) and one cluster report for the nodes. Needs the RBAC of the chart's `reports.enabled`
    /// (docs/reports.md).
    #[arg(long, env = "WINPLACE_REPORTS")]
    pub reports: bool,
    /// The report API to write.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "openreports")]
    pub reports_format: ReportsFormat,
    /// The shortest time between two rounds of writes, in seconds: changes that arrive faster are
    /// written together, each changed report once.
    #[arg(long, value_name = "SECONDS", default_value = "10",
          value_parser = crate::inputs::parse_seconds)]
    pub reports_interval: Duration,
    /// The `coordination.k8s.io/v1` Lease that elects the one replica that writes reports (in the
    /// placement Lease's namespace, with its identity and duration: `--place-lease-*`).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_LEASE_NAME)]
    pub reports_lease_name: String,
}
