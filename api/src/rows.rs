//! The light rows of the list answers: a node or a workload with its pods counted by state, not listed.
//!
//! At 5,000 nodes and 150,000 pods, listing every pod under its node and its workload made `/api/nodes`
//! 25 MB; the map needs only how many pods of each state a node holds. The pods of one node come from
//! `GET /api/nodes/{name}` when it is opened. Likewise a workload's row counts its findings and incidents;
//! they come from `GET /api/workloads/{namespace}/{kind}/{name}` when the row is opened.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;
use winplace_rules::audit::{
    NodeGroupKey, NodeOs, NodeReport, PlacementState, PodRef, SeverityCounts, WorkloadReport,
};
use winplace_rules::placement::PodOs;
use winplace_rules::windows::ImageProvenance;
use winplace_rules::{Finding, ObjectRef, Severity};

/// Pods counted by placement state.
///
/// ```
/// use winplace_api::StateCounts;
/// use winplace_rules::audit::PlacementState::*;
/// let counts = StateCounts::of([Fine, Misplaced, Fine]);
/// assert_eq!((counts.fine, counts.at_risk, counts.misplaced, counts.total()), (2, 0, 1, 3));
/// assert_eq!(counts.worst(), Some(Misplaced));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateCounts {
    /// Pods where they should be.
    pub fine: usize,
    /// Pods that could go wrong.
    pub at_risk: usize,
    /// Pods that are wrong now.
    pub misplaced: usize,
}

impl StateCounts {
    /// Counts `states`.
    pub fn of(states: impl IntoIterator<Item = PlacementState>) -> Self {
        let mut counts = StateCounts::default();
        for state in states {
            match state {
                PlacementState::Fine => counts.fine += 1,
                PlacementState::AtRisk => counts.at_risk += 1,
                PlacementState::Misplaced => counts.misplaced += 1,
            }
        }
        counts
    }

    /// Counts the states of `pods`.
    pub fn of_pods(pods: &[PodRef]) -> Self {
        Self::of(pods.iter().map(|p| p.state))
    }

    /// All pods counted.
    pub fn total(&self) -> usize {
        self.fine + self.at_risk + self.misplaced
    }

    /// The worst state counted, `None` when nothing was.
    pub fn worst(&self) -> Option<PlacementState> {
        if self.misplaced > 0 {
            Some(PlacementState::Misplaced)
        } else if self.at_risk > 0 {
            Some(PlacementState::AtRisk)
        } else if self.fine > 0 {
            Some(PlacementState::Fine)
        } else {
            None
        }
    }
}

/// One node of `GET /api/nodes`: what the node map draws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRow {
    /// Name.
    pub name: String,
    /// `windows`, `linux` or `unknown`.
    pub os: NodeOs,
    /// Windows build (`10.0.20348`).
    pub build: Option<String>,
    /// Taints as `key=value:Effect`.
    pub taints: Vec<String>,
    /// Its pods by state.
    pub pods: StateCounts,
    /// How many findings the node has (node rules and live-state findings of its pods).
    pub findings: usize,
    /// Worst state of its pods, and at least at risk when the node has findings.
    pub state: PlacementState,
}

impl NodeRow {
    /// The row of a node of the report.
    pub fn of(node: &NodeReport) -> Self {
        let pods = StateCounts::of_pods(&node.pods);
        let worst = pods.worst().unwrap_or_default();
        let state = if node.findings.is_empty() {
            worst
        } else {
            worst.max(PlacementState::AtRisk)
        };
        NodeRow {
            name: node.name.clone(),
            os: node.os,
            build: node.build.clone(),
            taints: node.taints.clone(),
            pods,
            findings: node.findings.len(),
            state,
        }
    }

    /// The node map's group of this node (the summary's grouping).
    pub fn group(&self) -> NodeGroupKey {
        NodeGroupKey::of_build_label(self.os, self.build.as_deref())
    }
}

/// One workload of `GET /api/workloads`: what the list shows (its pods counted by state, its findings
/// counted by severity, the rules they come from, how many incidents). An opened row asks
/// `GET /api/workloads/{namespace}/{kind}/{name}` for its findings, images and incidents
/// ([`WorkloadDetails`]): a page of rows stays small whatever a workload holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadRow {
    /// The owner (Deployment, DaemonSet, …, or a bare Pod).
    pub owner: ObjectRef,
    /// The OS the workload needs: `windows`, `linux`, `any` or `conflict`.
    pub os: PodOs,
    /// Worst state of its pods and findings.
    pub state: PlacementState,
    /// Its pods by state.
    pub pods: StateCounts,
    /// Its findings by severity (catalogue findings once per distinct pod template, and live-state
    /// findings): the same findings [`WorkloadDetails::findings`] lists.
    pub findings: SeverityCounts,
    /// The distinct rule ids of its findings, sorted.
    pub rules: Vec<String>,
    /// How many incidents (what is failing now in its pods) [`WorkloadDetails::incidents`] lists.
    pub incidents: usize,
}

impl WorkloadRow {
    /// The row of a workload of the report.
    pub fn of(w: &WorkloadReport) -> Self {
        let rules: BTreeSet<&str> = w.findings.iter().map(|f| f.rule.as_str()).collect();
        WorkloadRow {
            owner: w.owner.clone(),
            os: w.os,
            state: w.state,
            pods: StateCounts::of_pods(&w.pods),
            findings: severity_counts(&w.findings),
            rules: rules.into_iter().map(str::to_string).collect(),
            incidents: w.incidents.len(),
        }
    }
}

/// Findings counted by severity.
pub fn severity_counts(findings: &[Arc<Finding>]) -> SeverityCounts {
    let mut counts = SeverityCounts::default();
    for f in findings {
        match f.severity {
            Severity::Error => counts.errors += 1,
            Severity::Warning => counts.warnings += 1,
            Severity::Info => counts.infos += 1,
        }
    }
    counts
}

/// The most findings one answer of `GET /api/workloads/{namespace}/{kind}/{name}` lists; `?offset=`
/// pages through the rest.
pub const MAX_WORKLOAD_FINDINGS: usize = 500;

/// One workload opened (`GET /api/workloads/{namespace}/{kind}/{name}`): its row's fields and what the
/// row counts, in full: findings (a page of at most [`MAX_WORKLOAD_FINDINGS`]), images, incidents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadDetails {
    /// The owner (Deployment, DaemonSet, …, or a bare Pod).
    pub owner: ObjectRef,
    /// The OS the workload needs.
    pub os: PodOs,
    /// Worst state of its pods and findings.
    pub state: PlacementState,
    /// Its pods by state.
    pub pods: StateCounts,
    /// How many findings it has (all pages).
    pub findings_total: usize,
    /// Findings skipped before this page.
    pub findings_offset: usize,
    /// This page of its findings, in the report's order, shared with the report (no finding copied).
    pub findings: Vec<Arc<Finding>>,
    /// Its distinct images: the OS and builds the rules used for each, and where they came from
    /// (`name`, `manifest` with its digest, `settings`), with why a registry look-up failed.
    pub images: Vec<ImageProvenance>,
    /// What is failing now in its pods, explained (shared with the report).
    pub incidents: Vec<Arc<winplace_rules::audit::Incident>>,
}

impl WorkloadDetails {
    /// The details of a workload of the report: its findings from `offset`, at most
    /// [`MAX_WORKLOAD_FINDINGS`].
    pub fn of(w: &WorkloadReport, offset: usize) -> Self {
        WorkloadDetails {
            owner: w.owner.clone(),
            os: w.os,
            state: w.state,
            pods: StateCounts::of_pods(&w.pods),
            findings_total: w.findings.len(),
            findings_offset: offset,
            findings: w
                .findings
                .iter()
                .skip(offset)
                .take(MAX_WORKLOAD_FINDINGS)
                .cloned()
                .collect(),
            images: w.images.clone(),
            incidents: w.incidents.clone(),
        }
    }
}

/// The order of `GET /api/workloads`: worst state first, then by owner (kind, namespace, name).
pub fn worst_first(a: &WorkloadReport, b: &WorkloadReport) -> Ordering {
    b.state.cmp(&a.state).then_with(|| a.owner.cmp(&b.owner))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn pod(state: PlacementState) -> PodRef {
        PodRef {
            namespace: "ns".into(),
            name: "p".into(),
            node: Some("n".into()),
            phase: "Running".into(),
            state,
        }
    }

    fn node(states: &[PlacementState], findings: usize) -> NodeReport {
        NodeReport {
            name: "n".into(),
            os: NodeOs::Windows,
            build: Some("10.0.20348".into()),
            labels: BTreeMap::from([("kubernetes.io/os".into(), "windows".into())]),
            taints: vec!["os=windows:NoSchedule".into()],
            node_info: BTreeMap::new(),
            declared_features: Vec::new(),
            pods: states.iter().map(|s| pod(*s)).collect(),
            findings: (0..findings)
                .map(|_| {
                    Finding::new(
                        "windows-node-untainted",
                        Severity::Warning,
                        ObjectRef::new("v1", "Node", None, "n"),
                    )
                })
                .map(Arc::new)
                .collect(),
        }
    }

    #[test]
    fn a_node_row_counts_its_pods_and_is_as_bad_as_its_worst() {
        use PlacementState::*;
        // (pod states, node findings, counts (fine, at risk, misplaced), state)
        type Row = (
            &'static [PlacementState],
            usize,
            (usize, usize, usize),
            PlacementState,
        );
        let rows: [Row; 5] = [
            (&[], 0, (0, 0, 0), Fine),
            (&[Fine, Fine], 0, (2, 0, 0), Fine),
            (&[Fine, AtRisk], 0, (1, 1, 0), AtRisk),
            (&[AtRisk, Misplaced, Fine], 0, (1, 1, 1), Misplaced),
            // A node finding makes a node of fine pods at risk.
            (&[Fine], 1, (1, 0, 0), AtRisk),
        ];
        for (states, findings, (fine, at_risk, misplaced), state) in rows {
            let row = NodeRow::of(&node(states, findings));
            assert_eq!(
                row.pods,
                StateCounts {
                    fine,
                    at_risk,
                    misplaced
                },
                "{states:?}"
            );
            assert_eq!(row.state, state, "{states:?} {findings}");
            assert_eq!(row.findings, findings);
            assert_eq!(row.group(), NodeGroupKey::Windows(20348));
        }
    }

    #[test]
    fn a_node_row_leaves_the_pods_and_labels_out_of_its_json() {
        let row = NodeRow::of(&node(&[PlacementState::Fine; 3], 0));
        let json = serde_json::to_value(&row).unwrap();
        assert_eq!(
            json["pods"],
            serde_json::json!({"fine": 3, "atRisk": 0, "misplaced": 0})
        );
        assert!(json.get("labels").is_none());
        let back: NodeRow = serde_json::from_value(json).unwrap();
        assert_eq!(back, row);
    }

    #[test]
    fn an_opened_workload_carries_each_image_with_its_provenance_and_its_row_none() {
        use winplace_rules::placement::PodOs;
        use winplace_rules::windows::{ImageOs, Provenance};
        let report = WorkloadReport {
            owner: ObjectRef::new("apps/v1", "Deployment", Some("shop"), "billing"),
            os: PodOs::Windows,
            state: PlacementState::Fine,
            pods: vec![pod(PlacementState::Fine)],
            findings: vec![],
            images: vec![
                ImageProvenance {
                    image: "contoso.azurecr.io/billing:4.2".into(),
                    os: ImageOs::Windows {
                        builds: vec![17763],
                    },
                    from: Provenance::Manifest,
                    digest: Some("sha256:52d5".into()),
                    unresolved: None,
                    reason: "the manifest says Windows Server 2019".into(),
                },
                ImageProvenance {
                    image: "contoso.azurecr.io/audit:1".into(),
                    os: ImageOs::Unrecognized,
                    from: Provenance::Name,
                    digest: None,
                    unresolved: Some("timeout".into()),
                    reason: "no table or image rule recognizes contoso.azurecr.io/audit".into(),
                },
            ],
            incidents: vec![],
        };
        let row = serde_json::to_value(WorkloadRow::of(&report)).unwrap();
        assert!(row.get("images").is_none(), "{row}");
        let details = WorkloadDetails::of(&report, 0);
        let json = serde_json::to_value(&details).unwrap();
        assert_eq!(json["images"][0]["from"], "manifest");
        assert_eq!(json["images"][0]["digest"], "sha256:52d5");
        assert_eq!(
            json["images"][0]["os"],
            serde_json::json!({"os": "windows", "builds": [17763]})
        );
        assert_eq!(json["images"][1]["from"], "name");
        assert_eq!(json["images"][1]["unresolved"], "timeout");
        assert!(json["images"][1].get("digest").is_none());
        let back: WorkloadDetails = serde_json::from_value(json).unwrap();
        assert_eq!(back, details);
    }
}
