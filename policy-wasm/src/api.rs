//! The server's JSON API, shared with the dashboard so that both sides use one definition.
//!
//! Every answer carries [`Meta`]: where the data comes from and how fresh it is.

use crate::audit::{NodeReport, Summary, Touched, WorkloadReport};
use crate::model::ClusterContext;
use crate::view::SourceInfo;
use serde::{Deserialize, Serialize};

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

/// `GET /api/nodes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodesResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// Every node with its pods and findings.
    pub nodes: Vec<NodeReport>,
}

/// `GET /api/workloads`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadsResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// Workloads (filtered as the query asked).
    pub workloads: Vec<WorkloadReport>,
}

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
