//! The report's rows, rebuilt from the engine's state when a change touches them: a workload's row (its
//! templates' findings, its pods' states and live findings, the OS it needs) and a node's row.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{
    Audit, NodeOs, NodeReport, PlacementState, PodRef, WorkloadReport, node_name, sort_findings,
    split_key,
};
use crate::finding::Finding;
use crate::placement::PodOs;
use crate::schedule::taints::taint_display;
use crate::windows::{ImageProvenance, WindowsVersion};

impl Audit {
    /// Pod `key` as its node's and workload's rows list it.
    fn pod_ref(&self, key: &str) -> Option<PodRef> {
        let r = self.pods.get(key)?;
        let (namespace, name) = split_key(key);
        Some(PodRef {
            namespace: namespace.to_string(),
            name: name.to_string(),
            node: r.facts.node.clone(),
            phase: r.facts.phase.clone(),
            state: r.state,
        })
    }

    /// Puts `row` (from [`Audit::workload_row`]) in place as workload `wk`'s; returns whether it changed.
    pub(super) fn store_workload_row(&mut self, wk: &str, row: Option<WorkloadReport>) -> bool {
        let (Some(report), Some(workload)) = (row, self.workloads.get_mut(wk)) else {
            return false;
        };
        let changed = *workload.report != report;
        if changed {
            workload.report = Arc::new(report);
        }
        changed
    }

    /// Workload `wk`'s row as the state has it now (`None` for a workload not held).
    pub(super) fn workload_row(&self, wk: &str) -> Option<WorkloadReport> {
        let incidents = self.workload_incidents(wk);
        let workload = self.workloads.get(wk)?;
        let mut findings: Vec<Arc<Finding>> = workload
            .templates
            .values()
            .flat_map(|t| t.findings.iter().cloned())
            .collect();
        let mut state = PlacementState::Fine;
        if workload.templates.values().any(|t| t.at_risk) {
            state = PlacementState::AtRisk;
        }
        let mut pods = Vec::with_capacity(workload.pods.len());
        for key in &workload.pods {
            let Some(r) = self.pods.get(key) else {
                continue;
            };
            state = state.max(r.state);
            findings.extend(r.live.iter().cloned());
            if let Some(p) = self.pod_ref(key) {
                pods.push(p);
            }
        }
        sort_findings(&mut findings);
        let os = PodOs::of_templates(workload.templates.values().map(|t| t.facts.os));
        let mut images: Vec<ImageProvenance> = Vec::new();
        for image in workload.templates.values().flat_map(|t| &t.images) {
            if !images.iter().any(|i| i.image == image.image) {
                images.push(image.clone());
            }
        }
        Some(WorkloadReport {
            owner: workload.owner.object.clone(),
            os,
            state,
            pods,
            findings,
            images,
            incidents,
        })
    }

    /// Puts `row` (from [`Audit::node_row`]) in place as node `name`'s; returns whether it changed.
    pub(super) fn store_node_row(&mut self, name: &str, row: Option<NodeReport>) -> bool {
        let (Some(report), Some(entry)) = (row, self.nodes.get_mut(name)) else {
            return false;
        };
        let changed = *entry.report != report;
        if changed {
            entry.report = Arc::new(report);
        }
        changed
    }

    /// Node `name`'s row as the state has it now (`None` for a node not held).
    pub(super) fn node_row(&self, name: &str) -> Option<NodeReport> {
        let i = self
            .context
            .nodes
            .binary_search_by(|n| node_name(n).cmp(name))
            .ok()?;
        let node = self.context.nodes.get(i)?;
        let entry = self.nodes.get(name)?;
        let mut findings = entry.findings.clone();
        let mut pods = Vec::new();
        for key in self.bound.get(name).into_iter().flatten() {
            if let Some(r) = self.pods.get(key) {
                findings.extend(r.live.iter().cloned());
            }
            if let Some(p) = self.pod_ref(key) {
                pods.push(p);
            }
        }
        sort_findings(&mut findings);
        let taints = crate::model::node_taints(node)
            .iter()
            .map(taint_display)
            .collect();
        let mut node_info = BTreeMap::new();
        if let Some(info) = node.status.as_ref().and_then(|s| s.node_info.as_ref()) {
            for (k, v) in [
                ("kernelVersion", &info.kernel_version),
                ("osImage", &info.os_image),
                ("containerRuntimeVersion", &info.container_runtime_version),
                ("kubeletVersion", &info.kubelet_version),
                ("architecture", &info.architecture),
                ("operatingSystem", &info.operating_system),
            ] {
                if !v.is_empty() {
                    node_info.insert(k.to_string(), v.clone());
                }
            }
        }
        Some(NodeReport {
            name: name.to_string(),
            os: NodeOs::from(entry.os),
            build: entry.build.map(|b| WindowsVersion::new(b).label()),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            taints,
            node_info,
            declared_features: node
                .status
                .as_ref()
                .and_then(|s| s.declared_features.clone())
                .unwrap_or_default(),
            pods,
            findings,
        })
    }
}
