//! What the audit reports: the JSON the server's API returns and the dashboard renders.

use crate::finding::{Finding, ObjectRef};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Whether a pod (or workload) is where it should be.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "kebab-case")]
pub enum PlacementState {
    /// Nothing wrong.
    #[default]
    Fine,
    /// Could go wrong (warnings, or errors that have not bitten yet: e.g. schedulable on the wrong OS).
    AtRisk,
    /// Wrong now: on the wrong OS or build, pending on placement, failing with the container-OS error.
    Misplaced,
}

/// Counts of findings by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SeverityCounts {
    /// Error findings.
    pub errors: usize,
    /// Warning findings.
    pub warnings: usize,
    /// Info findings.
    pub infos: usize,
}

/// Nodes sharing an OS and a Windows build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeGroupSummary {
    /// `windows`, `linux` or `unknown`.
    pub os: String,
    /// Windows build label (`10.0.20348`).
    pub build: Option<String>,
    /// "Windows Server 2022 (10.0.20348)", "Linux".
    pub title: String,
    /// Number of nodes.
    pub nodes: usize,
    /// Names of the taints every node of the group carries (`os=windows:NoSchedule`).
    pub common_taints: Vec<String>,
    /// Nodes of the group without any NoSchedule/NoExecute taint.
    pub untainted: usize,
}

/// One cell of the build matrix: Windows image build × node build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildMatrixCell {
    /// Image build (`10.0.17763`).
    pub image_build: String,
    /// Node build (`10.0.20348`).
    pub node_build: String,
    /// Whether process isolation runs this image on this host (hcsshim's rule).
    pub compatible: bool,
    /// Pods with an image of `image_build` running on nodes of `node_build`.
    pub pods: usize,
}

/// The cluster at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Node groups: Windows by ascending build, then Linux, then unknown.
    pub node_groups: Vec<NodeGroupSummary>,
    /// Total nodes.
    pub nodes: usize,
    /// Total pods.
    pub pods: usize,
    /// Total workloads (rows of the workload table).
    pub workloads: usize,
    /// Workloads by state.
    pub workload_states: BTreeMap<String, usize>,
    /// Findings by severity.
    pub findings: SeverityCounts,
    /// Findings by rule id.
    pub findings_by_rule: BTreeMap<String, usize>,
    /// Image builds × node builds.
    pub build_matrix: Vec<BuildMatrixCell>,
}

/// A pod as listed under its node or workload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Node it is bound to.
    pub node: Option<String>,
    /// `status.phase`.
    pub phase: String,
    /// Placement state of this pod.
    pub state: PlacementState,
}

/// One node with its pods and findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    /// Name.
    pub name: String,
    /// `windows`, `linux` or `unknown`.
    pub os: String,
    /// Windows build (`10.0.20348`).
    pub build: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as `key=value:Effect`.
    pub taints: Vec<String>,
    /// `status.nodeInfo` fields that matter: kernelVersion, osImage, containerRuntimeVersion, kubeletVersion, architecture.
    pub node_info: BTreeMap<String, String>,
    /// Pods bound to the node.
    pub pods: Vec<PodRef>,
    /// Node findings (node rules) and live-state findings of its pods.
    pub findings: Vec<Finding>,
}

/// A workload row: the owner (Deployment, DaemonSet, …, or a bare Pod) with its pods and findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadReport {
    /// The owner as far as ownerReferences tell (a ReplicaSet's Deployment through its name).
    pub owner: ObjectRef,
    /// The OS the workload needs: `windows`, `linux`, `any` or `conflict`.
    pub os: String,
    /// Worst state of its pods and findings.
    pub state: PlacementState,
    /// Its pods.
    pub pods: Vec<PodRef>,
    /// Catalogue findings (once per distinct pod template) and live-state findings.
    pub findings: Vec<Finding>,
}

/// The audit of a whole cluster.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// At a glance.
    pub summary: Summary,
    /// Every node.
    pub nodes: Vec<NodeReport>,
    /// Every workload.
    pub workloads: Vec<WorkloadReport>,
}

/// What a change touched, for the live update stream.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Touched {
    /// Nodes whose report changed.
    pub nodes: Vec<String>,
    /// Workloads whose report changed (`Kind/namespace/name`).
    pub workloads: Vec<String>,
}
