//! A full relist ([`Change::Reset`](super::Change::Reset)): at once ([`Audit::reset`]) or streamed object
//! by object ([`Audit::begin_reset`], the `reset_*` calls, [`Audit::finish_reset`]), so that a watcher's
//! initial list or a snapshot never has to be held whole.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};

use super::{Audit, Dirty, Touched, node_name};
use crate::model::RuntimeClassEntry;
use crate::model::cluster_objects::trim_node;
use crate::model::listed_pod::ListedPod;

/// A reset being fed object by object.
#[derive(Debug, Clone)]
pub(super) struct Resetting {
    pub(super) dirty: Dirty,
    /// Rows before the reset (all touched).
    old_nodes: Vec<String>,
    old_workloads: Vec<Arc<str>>,
    /// The nodes so far, reduced.
    nodes: Vec<Node>,
}

impl Audit {
    /// Replaces everything, like [`Change::Reset`](super::Change::Reset), reading the objects in place (a watcher's store need not
    /// be cloned, and dropping the objects stays the caller's cost). Returns every node and workload that
    /// was or is.
    pub fn reset(
        &mut self,
        nodes: &[Node],
        pods: &[Pod],
        runtime_classes: &[RuntimeClassEntry],
    ) -> Touched {
        self.begin_reset();
        for node in nodes {
            self.reset_node(node);
        }
        for entry in runtime_classes {
            self.reset_runtime_class(entry);
        }
        self.pods.reserve(pods.len());
        for pod in pods {
            self.reset_pod(pod);
        }
        self.finish_reset()
    }

    /// Starts a reset fed one object at a time ([`Audit::reset_node`], [`Audit::reset_pod`],
    /// [`Audit::reset_runtime_class`], in any order, then [`Audit::finish_reset`]): a watcher's initial list
    /// or a snapshot read item by item never has to be held whole. The old state is dropped now; readers
    /// see an empty cluster until the reset finishes, and [`Audit::apply`] finishes it first.
    pub fn begin_reset(&mut self) {
        let old_nodes: Vec<String> = self.nodes.keys().cloned().collect();
        let old_workloads: Vec<Arc<str>> = self.workloads.keys().cloned().collect();
        let evaluations = self.evaluations;
        let settings = std::mem::take(&mut self.settings);
        // What registries said about images outlives the cluster's objects.
        let image_facts = std::mem::take(&mut self.image_facts);
        *self = Audit {
            settings,
            evaluations,
            image_facts,
            ..Audit::default()
        };
        self.resetting = Some(Box::new(Resetting {
            dirty: Dirty {
                all: true,
                cluster: true,
                runtime_class_objects: true,
                ..Dirty::default()
            },
            old_nodes,
            old_workloads,
            nodes: Vec::new(),
        }));
    }

    /// Adds a node to the reset under way (starting one if none is).
    pub fn reset_node(&mut self, node: &Node) {
        if self.resetting.is_none() {
            self.begin_reset();
        }
        if let Some(r) = self.resetting.as_mut() {
            r.nodes.push(trim_node(node));
        }
    }

    /// Adds a pod to the reset under way (starting one if none is).
    pub fn reset_pod(&mut self, pod: &Pod) {
        if self.resetting.is_none() {
            self.begin_reset();
        }
        if let Some(mut r) = self.resetting.take() {
            self.upsert_pod(pod, &mut r.dirty);
            self.resetting = Some(r);
        }
    }

    /// Adds a pod of a list, decoded narrowly ([`ListedPod`]), to the reset under way (starting one if
    /// none is): the same as [`Audit::reset_pod`] of the whole pod, its whole spec read only for its
    /// template's first pod.
    pub fn reset_listed_pod(&mut self, pod: &ListedPod) {
        if self.resetting.is_none() {
            self.begin_reset();
        }
        if let Some(mut r) = self.resetting.take() {
            self.upsert_pod_with(&pod.pod, &|| pod.spec(), &mut r.dirty);
            self.resetting = Some(r);
        }
    }

    /// Adds a RuntimeClass to the reset under way (starting one if none is).
    pub fn reset_runtime_class(&mut self, entry: &RuntimeClassEntry) {
        if self.resetting.is_none() {
            self.begin_reset();
        }
        self.insert_runtime_class(entry.clone());
    }

    /// Audits what the reset under way was fed; returns every node and workload that was or is (nothing
    /// when no reset is under way).
    pub fn finish_reset(&mut self) -> Touched {
        let Some(r) = self.resetting.take() else {
            return Touched::default();
        };
        let Resetting {
            dirty,
            old_nodes,
            old_workloads,
            nodes: mut reduced,
        } = *r;
        // A relist never holds two nodes of one name; if it does, the last one wins.
        reduced.reverse();
        reduced.sort_by(|a, b| node_name(a).cmp(node_name(b)));
        reduced.dedup_by(|a, b| node_name(a) == node_name(b));
        for node in &reduced {
            self.nodes
                .insert(node_name(node).to_string(), Self::new_node_entry(node));
        }
        self.context.nodes = reduced;
        let mut touched = self.flush(dirty);
        // Events about pods the list did not hold are about pods gone.
        self.waiting_events = Default::default();
        touched.nodes = old_nodes
            .into_iter()
            .chain(self.nodes.keys().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        touched.workloads = old_workloads
            .into_iter()
            .chain(self.workloads.keys().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|k| k.to_string())
            .collect();
        touched
    }
}
