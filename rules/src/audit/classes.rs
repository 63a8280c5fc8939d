//! Node classes: the nodes the template rules cannot tell apart, so that the catalogue reads one node per
//! class instead of every node, and the per-node label keys (hostname, ...) that make a template read
//! every node after all.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Node, PodSpec};

use super::os_of;
use crate::model::RuntimeClassEntry;
use crate::schedule::taints::filters;
use crate::windows::Os;

/// A label key with more values than this is a per-node label (the same threshold as [`NodeIndex`](crate::placement::NodeIndex)'s; the
/// class context stays exact with any threshold, see [`reads_single_nodes`]).
const PER_NODE_KEY_VALUES: usize = 64;

/// Label keys with more than [`PER_NODE_KEY_VALUES`] values.
pub(super) fn per_node_keys(nodes: &[Node]) -> BTreeSet<String> {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for node in nodes {
        for (k, v) in node.metadata.labels.iter().flatten() {
            let set = values.entry(k).or_default();
            if set.len() <= PER_NODE_KEY_VALUES {
                set.insert(v);
            }
        }
    }
    values
        .into_iter()
        .filter(|(_, vs)| vs.len() > PER_NODE_KEY_VALUES)
        .map(|(k, _)| k.to_string())
        .collect()
}

/// The first node of every class of nodes that the template rules cannot tell apart (labels without the
/// per-node keys, filtering taints, cordon, OS and build), in the nodes' order.
///
/// What the template rules read of the context's nodes (the Windows taints, the taints a pod misses on the
/// Windows nodes its selectors admit, the Windows builds) is the same for these as for all nodes, and in
/// the same order, as long as the pod's selectors read no per-node key; that costs classes, not nodes, per
/// template. Which nodes fit (and their names in messages) still comes from the full [`NodeIndex`](crate::placement::NodeIndex).
pub(super) fn class_representatives(nodes: &[Node], per_node: &BTreeSet<String>) -> Vec<Node> {
    type Key<'a> = (
        Vec<(&'a str, &'a str)>,
        Vec<(&'a str, Option<&'a str>, &'a str)>,
        bool,
        (Option<Os>, Option<u32>),
    );
    let mut seen: BTreeSet<Key<'_>> = BTreeSet::new();
    let mut out = Vec::new();
    for node in nodes {
        let labels = node
            .metadata
            .labels
            .iter()
            .flatten()
            .filter(|(k, _)| !per_node.contains(*k))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let spec = node.spec.as_ref();
        let taints = crate::model::node_taints(node)
            .iter()
            .filter(|t| filters(t))
            .map(|t| (t.key.as_str(), t.value.as_deref(), t.effect.as_str()))
            .collect();
        let cordoned = spec.and_then(|s| s.unschedulable) == Some(true);
        if seen.insert((labels, taints, cordoned, os_of(node))) {
            out.push(node.clone());
        }
    }
    out
}

/// Whether a template's selectors read a per-node label or node names, so that the template rules must see
/// every node.
pub(super) fn reads_single_nodes(
    spec: &PodSpec,
    runtime_class: Option<&RuntimeClassEntry>,
    per_node: &BTreeSet<String>,
) -> bool {
    let selector_keys = spec
        .node_selector
        .iter()
        .flatten()
        .chain(
            runtime_class
                .and_then(|rc| rc.object.scheduling.as_ref())
                .and_then(|s| s.node_selector.as_ref())
                .into_iter()
                .flatten(),
        )
        .any(|(k, _)| per_node.contains(k));
    let affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_some_and(|r| {
            r.node_selector_terms.iter().any(|t| {
                t.match_fields.as_ref().is_some_and(|f| !f.is_empty())
                    || t.match_expressions
                        .iter()
                        .flatten()
                        .any(|e| per_node.contains(&e.key))
            })
        });
    selector_keys || affinity
}
