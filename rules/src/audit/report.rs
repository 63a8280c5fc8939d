//! What the audit reports: the JSON the server's API returns and the dashboard renders.

use crate::finding::{Finding, ObjectRef};
use crate::placement::PodOs;
use crate::windows::Os;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

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

impl PlacementState {
    /// The kebab-case name the API writes (`at-risk`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlacementState::Fine => "fine",
            PlacementState::AtRisk => "at-risk",
            PlacementState::Misplaced => "misplaced",
        }
    }

    /// The name for people (`at risk`), in the dashboard and the text reports.
    pub fn label(self) -> &'static str {
        match self {
            PlacementState::Fine => "fine",
            PlacementState::AtRisk => "at risk",
            PlacementState::Misplaced => "misplaced",
        }
    }
}

/// A node's OS as the report names it: its `kubernetes.io/os` label, when that is one winplace knows.
///
/// ```
/// use winplace_rules::audit::NodeOs;
/// assert_eq!(serde_json::to_value(NodeOs::Unknown).unwrap(), "unknown");
/// assert_eq!(NodeOs::from(Some(winplace_rules::windows::Os::Windows)), NodeOs::Windows);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeOs {
    /// `linux`.
    Linux,
    /// `windows`.
    Windows,
    /// `unknown`: no `kubernetes.io/os` label, or a value that is neither `linux` nor `windows`.
    Unknown,
}

impl NodeOs {
    /// The lowercase name the API writes (`windows`).
    pub fn as_str(self) -> &'static str {
        match self {
            NodeOs::Linux => "linux",
            NodeOs::Windows => "windows",
            NodeOs::Unknown => "unknown",
        }
    }

    /// The OS, unless it is unknown.
    pub fn os(self) -> Option<Os> {
        match self {
            NodeOs::Linux => Some(Os::Linux),
            NodeOs::Windows => Some(Os::Windows),
            NodeOs::Unknown => None,
        }
    }
}

impl From<Option<Os>> for NodeOs {
    fn from(os: Option<Os>) -> Self {
        match os {
            Some(Os::Linux) => NodeOs::Linux,
            Some(Os::Windows) => NodeOs::Windows,
            None => NodeOs::Unknown,
        }
    }
}

impl fmt::Display for NodeOs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
    pub os: NodeOs,
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
    /// Whether process isolation runs this image on this host (hcsshim's rule, which the released
    /// containerd applies: [`crate::windows::host_runs_image`]).
    pub compatible: bool,
    /// Whether the runtimes disagree about it ([`crate::windows::Compatibility::Disputed`]: a host past
    /// the newest LTSC that containerd's `main` branch lets run the image, released containerd does not).
    /// Absent from JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disputed: bool,
    /// Pods with an image of `image_build` running on nodes of `node_build`.
    pub pods: usize,
}

/// The cluster at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Node groups in [`NodeGroupKey`](super::NodeGroupKey) order: Windows by ascending build (unknown
    /// build last), then Linux, then unknown OS.
    pub node_groups: Vec<NodeGroupSummary>,
    /// Total nodes.
    pub nodes: usize,
    /// Total pods.
    pub pods: usize,
    /// Total workloads (rows of the workload table).
    pub workloads: usize,
    /// Workloads by state (every state, zero included).
    pub workload_states: BTreeMap<PlacementState, usize>,
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
    pub os: NodeOs,
    /// Windows build (`10.0.20348`).
    pub build: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Taints as `key=value:Effect`.
    pub taints: Vec<String>,
    /// `status.nodeInfo` fields that matter: kernelVersion, osImage, containerRuntimeVersion, kubeletVersion, architecture.
    pub node_info: BTreeMap<String, String>,
    /// `status.declaredFeatures`: the features the node's kubelet declares (node declared features,
    /// Kubernetes 1.37); empty when it publishes none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub declared_features: Vec<String>,
    /// Pods bound to the node.
    pub pods: Vec<PodRef>,
    /// Node findings (node rules) and live-state findings of its pods. Shared (`Arc`) with the engine's
    /// records and the pods' workload rows, which hold the same findings: a misplaced pod's live findings
    /// are held once, not three times.
    pub findings: Vec<Arc<Finding>>,
}

/// A workload row: the owner (Deployment, DaemonSet, …, or a bare Pod) with its pods and findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadReport {
    /// The owner as far as ownerReferences tell (a ReplicaSet's Deployment through its name).
    pub owner: ObjectRef,
    /// The OS the workload needs: `windows`, `linux`, `any` or `conflict`.
    pub os: PodOs,
    /// Worst state of its pods and findings.
    pub state: PlacementState,
    /// Its pods.
    pub pods: Vec<PodRef>,
    /// Catalogue findings (once per distinct pod template) and live-state findings, shared (`Arc`) with
    /// the engine's templates and pod records rather than copied.
    pub findings: Vec<Arc<Finding>>,
    /// The distinct images of its pod templates, each with the OS and builds the rules used and where
    /// they came from (name, manifest, settings).
    #[serde(default)]
    pub images: Vec<crate::windows::ImageProvenance>,
    /// What is failing now in its pods, explained (one per pod and cause). Shared (`Arc`) with the
    /// report's list of every incident ([`AuditReport::incidents`]), which holds the same ones.
    #[serde(default)]
    pub incidents: Vec<Arc<Incident>>,
}

/// Something failing now, read from what the cluster says (a pod's status, the Events about it) and
/// explained by an error signature ([`crate::explain`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Incident {
    /// The pod, `Pod/namespace/name`.
    pub object: String,
    /// Its workload, `Kind/namespace/name`.
    pub workload: String,
    /// Why it fails.
    pub cause: crate::explain::Cause,
    /// Since when, as the cluster wrote it (the first event's timestamp), when known.
    pub since: Option<String>,
    /// How many times the cluster reported it.
    pub count: u64,
    /// The cluster's message.
    pub message: String,
    /// What to do.
    pub fix: String,
    /// The catalogue rule that would have caught it before deployment.
    pub rule: Option<String>,
    /// It is the pod sandbox (the node's pause image) that fails, not the pod's containers.
    #[serde(default)]
    pub sandbox: bool,
    /// What it means.
    #[serde(default)]
    pub meaning: String,
    /// The node the pod is bound to.
    #[serde(default)]
    pub node: Option<String>,
}

/// The audit of a whole cluster.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditReport {
    /// At a glance.
    pub summary: Summary,
    /// Every node (shared with the [`Audit`](super::Audit) that made the report: no copy).
    pub nodes: Vec<Arc<NodeReport>>,
    /// Every workload (shared likewise).
    pub workloads: Vec<Arc<WorkloadReport>>,
    /// What is failing now, every workload's incidents (shared with the rows: no copy).
    #[serde(default)]
    pub incidents: Vec<Arc<Incident>>,
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

impl Touched {
    /// Everything either touched, sorted and without repeats.
    ///
    /// ```
    /// use winplace_rules::audit::Touched;
    /// let a = Touched { nodes: vec!["n2".into()], workloads: vec!["Pod/a/p".into()] };
    /// let b = Touched { nodes: vec!["n1".into(), "n2".into()], workloads: vec![] };
    /// let both = a.union(b);
    /// assert_eq!(both.nodes, ["n1", "n2"]);
    /// assert_eq!(both.workloads, ["Pod/a/p"]);
    /// ```
    pub fn union(self, other: Touched) -> Touched {
        let merge = |a: Vec<String>, b: Vec<String>| -> Vec<String> {
            let set: std::collections::BTreeSet<String> = a.into_iter().chain(b).collect();
            set.into_iter().collect()
        };
        Touched {
            nodes: merge(self.nodes, other.nodes),
            workloads: merge(self.workloads, other.workloads),
        }
    }
}
