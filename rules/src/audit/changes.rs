//! How one object's change updates the engine's state, and what it marks to re-audit ([`Dirty`]): nodes
//! (reduced to what the rules read, so heartbeats change nothing), RuntimeClasses, and pods, which are
//! grouped into workload rows by owner and into templates by revision, so that the catalogue runs once per
//! template, not once per pod.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};

use super::{
    Audit, Dirty, NodeEdit, NodeEntry, NodeOs, NodeReport, PlacementState, PodRecord, SpecText,
    Template, Workload, WorkloadReport, node_name, os_of, owner, pod_key,
};
use crate::model::RuntimeClassEntry;
use crate::model::cluster_objects::trim_node;
use crate::placement::PodOs;
use crate::rules::live_state::{self, TemplateFacts};
use crate::windows::WindowsVersion;

impl Audit {
    /// The entry of a node not audited yet (no findings, an empty row).
    pub(super) fn new_node_entry(node: &Node) -> NodeEntry {
        let (os, build) = os_of(node);
        NodeEntry {
            os,
            build,
            findings: Vec::new(),
            report: Arc::new(NodeReport {
                name: node_name(node).to_string(),
                os: NodeOs::from(os),
                build: build.map(|b| WindowsVersion::new(b).label()),
                labels: BTreeMap::new(),
                taints: Vec::new(),
                node_info: BTreeMap::new(),
                declared_features: Vec::new(),
                pods: Vec::new(),
                findings: Vec::new(),
            }),
        }
    }

    /// A node added or changed; one whose change the rules do not read (a heartbeat) touches nothing.
    pub(super) fn upsert_node(&mut self, node: &Node, dirty: &mut Dirty) {
        let node = trim_node(node);
        let name = node_name(&node).to_string();
        if name.is_empty() {
            return;
        }
        let entry = Self::new_node_entry(&node);
        let nodes = &mut self.context.nodes;
        match nodes.binary_search_by(|n| node_name(n).cmp(&name)) {
            Ok(i) => {
                if nodes.get(i) == Some(&node) {
                    // A heartbeat or a condition: nothing the audit reads.
                    return;
                }
                if let Some(slot) = nodes.get_mut(i) {
                    let before = std::mem::replace(slot, node.clone());
                    dirty.node_edits.push(NodeEdit {
                        before,
                        after: node,
                    });
                }
            }
            Err(i) => {
                nodes.insert(i, node);
                dirty.all_templates = true;
            }
        }
        self.nodes.insert(name.clone(), entry);
        self.node_changed(&name, dirty);
        dirty.node_rules.insert(name);
    }

    /// Marks the cluster, the node's row and the pods bound to it.
    fn node_changed(&mut self, name: &str, dirty: &mut Dirty) {
        dirty.cluster = true;
        dirty.nodes.insert(name.to_string());
        if let Some(pods) = self.bound.get(name) {
            dirty.pods.extend(pods.iter().cloned());
        }
    }

    /// A node deleted.
    pub(super) fn remove_node(&mut self, name: &str, dirty: &mut Dirty) {
        let Ok(i) = self
            .context
            .nodes
            .binary_search_by(|n| node_name(n).cmp(name))
        else {
            return;
        };
        self.context.nodes.remove(i);
        self.nodes.remove(name);
        self.node_changed(name, dirty);
        dirty.all_templates = true;
        dirty.removed_nodes.insert(name.to_string());
    }

    /// Puts a RuntimeClass in its place (by name and API version), replacing one of the same key.
    pub(super) fn insert_runtime_class(&mut self, entry: RuntimeClassEntry) {
        let key = |e: &RuntimeClassEntry| (e.object.metadata.name.clone(), e.api_version.clone());
        let rcs = &mut self.context.runtime_classes;
        match rcs.binary_search_by(|e| key(e).cmp(&key(&entry))) {
            Ok(i) => {
                if let Some(slot) = rcs.get_mut(i) {
                    *slot = entry;
                }
            }
            Err(i) => rcs.insert(i, entry),
        }
    }

    /// A RuntimeClass added or changed: re-runs the templates that name it and the RuntimeClass rules.
    pub(super) fn upsert_runtime_class(&mut self, entry: RuntimeClassEntry, dirty: &mut Dirty) {
        let name = entry.object.metadata.name.clone().unwrap_or_default();
        if self.context.runtime_classes.contains(&entry) {
            return;
        }
        self.insert_runtime_class(entry);
        dirty.runtime_classes.insert(name);
        dirty.runtime_class_objects = true;
    }

    /// A RuntimeClass deleted (by name).
    pub(super) fn remove_runtime_class(&mut self, name: String, dirty: &mut Dirty) {
        let before = self.context.runtime_classes.len();
        self.context
            .runtime_classes
            .retain(|e| e.object.metadata.name.as_deref() != Some(name.as_str()));
        if self.context.runtime_classes.len() != before {
            dirty.runtime_classes.insert(name);
            dirty.runtime_class_objects = true;
        }
    }

    /// A pod added or changed: files it under its workload and template (a new template is evaluated), its
    /// node and the pending pods.
    pub(super) fn upsert_pod(&mut self, pod: &Pod, dirty: &mut Dirty) {
        self.upsert_pod_with(pod, &|| pod.spec.clone(), dirty);
    }

    /// [`Audit::upsert_pod`] of a pod whose whole spec `whole_spec` gives, read only when the pod's
    /// template needs it (a new template, or its representative changed): a listed pod carries only the
    /// part of its spec every pod's rules read.
    pub(super) fn upsert_pod_with(
        &mut self,
        pod: &Pod,
        whole_spec: &dyn Fn() -> Option<PodSpec>,
        dirty: &mut Dirty,
    ) {
        let facts = live_state::pod_facts(pod);
        let parts = owner::owner_parts(pod);
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let key_text = pod_key(parts.namespace, name);
        let mut workload_key = String::new();
        parts.write_key(&mut workload_key);
        let revision = owner::revision_of(pod, parts.workload_kind);
        let mut fresh = true;
        let mut key: Option<Arc<str>> = None;
        if let Some((k, old)) = self.pods.get_key_value(key_text.as_str()) {
            key = Some(k.clone());
            let same_template =
                &*old.workload == workload_key.as_str() && &*old.revision == revision;
            let old_node = old.facts.node.clone();
            if !same_template {
                self.remove_pod(&key_text, dirty);
            } else {
                fresh = false;
                if old_node != facts.node
                    && let Some(n) = &old_node
                {
                    self.unbind(n, &key_text);
                    dirty.nodes.insert(n.clone());
                }
            }
        }
        let key: Arc<str> = key.unwrap_or_else(|| Arc::from(key_text));
        if !self.workloads.contains_key(workload_key.as_str()) {
            let owner = parts.to_owner();
            let wk: Arc<str> = Arc::from(workload_key.as_str());
            self.workloads.insert(
                wk.clone(),
                Workload {
                    key: wk,
                    report: Arc::new(WorkloadReport {
                        owner: owner.object.clone(),
                        os: PodOs::Any,
                        state: PlacementState::Fine,
                        pods: Vec::new(),
                        findings: Vec::new(),
                        images: Vec::new(),
                        incidents: Vec::new(),
                    }),
                    owner,
                    templates: BTreeMap::new(),
                    pods: BTreeSet::new(),
                },
            );
        }
        let Some(workload) = self.workloads.get_mut(workload_key.as_str()) else {
            return;
        };
        let wk = workload.key.clone();
        workload.pods.insert(key.clone());
        let rev: Arc<str> = match workload.templates.get_key_value(revision) {
            Some((rev, _)) => rev.clone(),
            None => Arc::from(revision),
        };
        match workload.templates.get_mut(&rev) {
            Some(template) => {
                if fresh {
                    template.members += 1;
                }
                if template.representative.as_ref() == Some(&key) {
                    // The representative changed in place (an image update of a bare pod, say).
                    let spec =
                        owner::template_spec(whole_spec().unwrap_or_default(), &workload.owner);
                    let text = SpecText::of(&spec);
                    if text != template.spec {
                        template.object_name = name.to_string();
                        template.runtime_class = spec.runtime_class_name.clone();
                        template.spec = text;
                        dirty.templates.insert((wk.clone(), rev.clone()));
                    }
                }
            }
            None => {
                let spec = owner::template_spec(whole_spec().unwrap_or_default(), &workload.owner);
                {
                    workload.templates.insert(
                        rev.clone(),
                        Box::new(Template {
                            object_name: name.to_string(),
                            runtime_class: spec.runtime_class_name.clone(),
                            spec: SpecText::of(&spec),
                            representative: Some(key.clone()),
                            members: 1,
                            findings: Vec::new(),
                            facts: TemplateFacts::default(),
                            placement: None,
                            at_risk: false,
                            images: Vec::new(),
                        }),
                    );
                    dirty.templates.insert((wk.clone(), rev.clone()));
                }
            }
        }
        if let Some(node) = &facts.node {
            match self.bound.get_mut(node.as_str()) {
                Some(set) => {
                    set.insert(key.clone());
                }
                None => {
                    self.bound
                        .insert(node.clone(), BTreeSet::from([key.clone()]));
                }
            }
            if !dirty.all {
                dirty.nodes.insert(node.clone());
            }
        }
        if live_state::is_pending(&facts) {
            self.pending.insert(key.clone());
        } else if !fresh {
            // A pod new to the audit is in no set yet (a relist's are all new).
            self.pending.remove(&key);
        }
        self.note_gate(&key, pod);
        let status_incidents = super::incidents::from_status(pod);
        match self.pods.get_mut(&key) {
            Some(record) => {
                record.facts = facts;
                record.status_incidents = status_incidents;
            }
            None => {
                let events = self.take_waiting_events(&key);
                self.pods.insert(
                    key.clone(),
                    Box::new(PodRecord {
                        facts,
                        workload: wk.clone(),
                        revision: rev,
                        live: Vec::new(),
                        state: PlacementState::Fine,
                        cells: Vec::new(),
                        status_incidents,
                        events,
                    }),
                );
            }
        }
        if !dirty.all {
            dirty.pods.insert(key);
            dirty.workloads.insert(wk);
        }
    }

    /// Forgets that pod `key` is bound to `node`.
    fn unbind(&mut self, node: &str, key: &str) {
        if let Some(set) = self.bound.get_mut(node) {
            set.remove(key);
            if set.is_empty() {
                self.bound.remove(node);
            }
        }
    }

    /// A pod deleted (or moved to another template): its cells, its binding, its template's count, and its
    /// workload row once the last pod is gone.
    pub(super) fn remove_pod(&mut self, key: &str, dirty: &mut Dirty) {
        self.gated.remove(key);
        let Some(record) = self.pods.remove(key) else {
            return;
        };
        for cell in &record.cells {
            self.uncount(*cell);
        }
        self.pending.remove(key);
        if let Some(node) = &record.facts.node {
            self.unbind(node, key);
            dirty.nodes.insert(node.clone());
        }
        dirty.pods.remove(key);
        dirty.workloads.insert(record.workload.clone());
        let Some(workload) = self.workloads.get_mut(&record.workload) else {
            return;
        };
        workload.pods.remove(key);
        if let Some(template) = workload.templates.get_mut(&record.revision) {
            template.members = template.members.saturating_sub(1);
            if template.members == 0 {
                workload.templates.remove(&record.revision);
            } else if template.representative.as_deref() == Some(key) {
                // Its siblings share the template; keep the spec.
                template.representative = None;
            }
        }
        if workload.pods.is_empty() {
            self.workloads.remove(&record.workload);
        }
    }

    /// Takes one pod off a cell of the build matrix.
    fn uncount(&mut self, cell: (u32, u32)) {
        if let Some(n) = self.matrix.get_mut(&cell) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.matrix.remove(&cell);
            }
        }
    }
}
