//! The cluster at a glance ([`Summary`]): nodes grouped by [`NodeGroupKey`], counts, workloads by state,
//! findings by severity and by rule, and the image-build × node-build matrix.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;

use super::{
    Audit, BuildMatrixCell, NodeGroupKey, NodeGroupSummary, NodeOs, PlacementState, SeverityCounts,
    Summary,
};
use crate::finding::{Finding, Severity};
use crate::schedule::taints::{filters, taint_display};
use crate::windows::{Compatibility, Os, WindowsVersion, compatibility_of_builds};

impl Audit {
    /// The cluster at a glance: node groups, counts, workload states, findings by severity and rule, and
    /// the build matrix (computed on each call).
    pub fn summary(&self) -> Summary {
        let mut groups: BTreeMap<NodeGroupKey, Vec<&Node>> = BTreeMap::new();
        for (entry, node) in self.nodes.values().zip(&self.context.nodes) {
            let key = NodeGroupKey::new(NodeOs::from(entry.os), entry.build);
            groups.entry(key).or_default().push(node);
        }
        let node_groups = groups
            .into_iter()
            .map(|(key, nodes)| {
                let taint_sets: Vec<BTreeSet<String>> = nodes
                    .iter()
                    .map(|n| {
                        crate::model::node_taints(n)
                            .iter()
                            .map(taint_display)
                            .collect()
                    })
                    .collect();
                let common = taint_sets
                    .split_first()
                    .map(|(first, rest)| {
                        first
                            .iter()
                            .filter(|t| rest.iter().all(|s| s.contains(*t)))
                            .cloned()
                            .collect::<Vec<String>>()
                    })
                    .unwrap_or_default();
                let untainted = nodes
                    .iter()
                    .filter(|n| !crate::model::node_taints(n).iter().any(filters))
                    .count();
                NodeGroupSummary {
                    os: key.os(),
                    build: key.build_label(),
                    title: key.title(),
                    nodes: nodes.len(),
                    common_taints: common,
                    untainted,
                }
            })
            .collect();
        let mut findings = SeverityCounts::default();
        let mut by_rule: BTreeMap<String, usize> = BTreeMap::new();
        let mut count = |f: &Finding| {
            match f.severity {
                Severity::Error => findings.errors += 1,
                Severity::Warning => findings.warnings += 1,
                Severity::Info => findings.infos += 1,
            }
            *by_rule.entry(f.rule.clone()).or_default() += 1;
        };
        let mut states: BTreeMap<PlacementState, usize> = [
            PlacementState::Fine,
            PlacementState::AtRisk,
            PlacementState::Misplaced,
        ]
        .into_iter()
        .map(|s| (s, 0))
        .collect();
        for workload in self.workloads.values() {
            workload
                .report
                .findings
                .iter()
                .map(|f| &**f)
                .for_each(&mut count);
            *states.entry(workload.report.state).or_default() += 1;
        }
        for entry in self.nodes.values() {
            entry.findings.iter().map(|f| &**f).for_each(&mut count);
        }
        self.runtime_class_findings.iter().for_each(&mut count);
        // Image builds of every Windows template × the cluster's Windows builds.
        let mut image_builds: BTreeSet<u32> = self.matrix.keys().map(|(i, _)| *i).collect();
        for workload in self.workloads.values() {
            for template in workload.templates.values() {
                for image in &template.facts.images {
                    if image.os == Some(Os::Windows) {
                        image_builds.extend(image.builds.iter().copied());
                    }
                }
            }
        }
        let node_builds: BTreeSet<u32> = self.nodes.values().filter_map(|e| e.build).collect();
        let mut build_matrix = Vec::new();
        for &i in &image_builds {
            for &n in &node_builds {
                let verdict = compatibility_of_builds(n, i);
                build_matrix.push(BuildMatrixCell {
                    image_build: WindowsVersion::new(i).label(),
                    node_build: WindowsVersion::new(n).label(),
                    compatible: verdict == Compatibility::Runs,
                    disputed: verdict == Compatibility::Disputed,
                    pods: self.matrix.get(&(i, n)).copied().unwrap_or(0),
                });
            }
        }
        Summary {
            node_groups,
            nodes: self.nodes.len(),
            pods: self.pods.len(),
            workloads: self.workloads.len(),
            workload_states: states,
            findings,
            findings_by_rule: by_rule,
            build_matrix,
        }
    }
}
