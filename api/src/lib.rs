//! winplace's HTTP API: the JSON answers of `winplace serve` and the query filters, shared by the server
//! (which builds and filters them) and the dashboard (which decodes and filters them), so both sides use
//! one definition. `docs/api.md` documents every endpoint with examples.
//!
//! Every answer carries [`Meta`]: where the data comes from and how fresh it is.
//!
//! ```
//! use winplace_api::{SourceInfo, SourceKind};
//! let source = SourceInfo { kind: SourceKind::Demo, description: "embedded demo cluster".into() };
//! assert_eq!(serde_json::to_value(&source).unwrap()["kind"], "demo");
//! ```

#![warn(missing_docs)]

mod filter;
mod placements;
mod rows;

pub use filter::{
    DEFAULT_PAGE, FilterError, MAX_PAGE, NodeFilter, StateFilter, WorkloadFilter, name_contains,
};
pub use placements::{PlacementOutcome, PlacementRow, PlacementsResponse, RECENT_PLACEMENTS};
pub use rows::{
    MAX_WORKLOAD_FINDINGS, NodeRow, StateCounts, WorkloadDetails, WorkloadRow, severity_counts,
    worst_first,
};
/// Each image of a workload row: its OS/build and where they came from.
pub use winplace_rules::windows::{ImageOs, ImageProvenance, Provenance};

use serde::{Deserialize, Serialize};
use winplace_rules::audit::{NodeReport, Summary, Touched};
use winplace_rules::model::ClusterContext;

/// Where the cluster data comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    /// The embedded demo cluster: not a real cluster.
    Demo,
    /// A `kubectl get -o json` file.
    Snapshot,
    /// A live cluster, watched through the Kubernetes API.
    Live,
}

impl SourceKind {
    /// `demo`, `snapshot` or `live`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Demo => "demo",
            SourceKind::Snapshot => "snapshot",
            SourceKind::Live => "live",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the cluster data comes from, with a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    /// Demo, snapshot or live.
    pub kind: SourceKind,
    /// A sentence for the user ("embedded demo cluster — not a real cluster").
    pub description: String,
}

/// How current the data is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Freshness {
    /// The first full sync has completed.
    pub synced: bool,
    /// Time of the last event or sync, in milliseconds since the Unix epoch.
    pub last_update_ms: Option<u64>,
    /// The watch has been broken for longer than the grace period: what is shown may be out of date.
    pub stale: bool,
    /// Increases with every change; the live stream announces it.
    pub revision: u64,
    /// The source's last list was not published, and why (a snapshot cut short, or without nodes): what
    /// is shown is the last complete state (or nothing, before the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// What is failing now, in words: the last error of each watch that has not worked since (`cannot
    /// list pods: 403 Forbidden — the ClusterRole needs list and watch on pods (…)`, a list with no
    /// answer, …). Cleared when that watch makes progress again, or once it has reported nothing for
    /// the recovery period (a resumed watch on a quiet cluster says nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Changes the source delivered that are not applied yet: while a backlog lasts (a flood of watch
    /// events), what is shown is that many events behind the cluster.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub behind: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What every answer carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// Demo, snapshot or live.
    pub source: SourceInfo,
    /// How current the data is.
    pub freshness: Freshness,
}

/// `GET /api/summary`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// Counts, node groups, build matrix.
    pub summary: Summary,
}

/// `GET /api/nodes`: the node map, one light row per node (pods counted, not listed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodesResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// Every node (filtered as the query asked), by name.
    pub nodes: Vec<NodeRow>,
}

/// `GET /api/nodes/{name}`: one node in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// The node with its labels, nodeInfo, pods and findings.
    pub node: NodeReport,
}

/// `GET /api/workloads`: one page of the workloads that match the query, worst first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadsResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// How many workloads match the filters (all pages).
    pub total: usize,
    /// Matching workloads skipped before this page.
    pub offset: usize,
    /// This page: at most `limit` workloads, in [`worst_first`] order.
    pub workloads: Vec<WorkloadRow>,
    /// The namespaces of all workloads, filtered or not (the filter's choices).
    pub namespaces: Vec<String>,
    /// The rules some workload has a finding of, filtered or not (the filter's choices).
    pub rules: Vec<String>,
}

/// `GET /api/workloads/{namespace}/{kind}/{name}`: one workload opened, with its findings (a page),
/// images and incidents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// The workload in full.
    pub workload: WorkloadDetails,
}

/// `GET /api/incidents`: what is failing now, explained (the overview's "Failing now").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IncidentsResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// How many incidents there are (all of them; the list stops at `limit`).
    pub total: usize,
    /// The incidents, workload by workload (at most [`MAX_INCIDENTS`]), shared with the report.
    pub incidents: Vec<std::sync::Arc<winplace_rules::audit::Incident>>,
}

/// The most incidents `GET /api/incidents` lists.
pub const MAX_INCIDENTS: usize = 500;

/// `GET /api/context`: what the playground needs to evaluate pasted manifests against this cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// Nodes and RuntimeClasses.
    pub context: ClusterContext,
}

/// One Server-Sent Event on `GET /api/events` (event name `change`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeEvent {
    /// The revision after the change.
    pub revision: u64,
    /// What changed.
    pub touched: Touched,
}
