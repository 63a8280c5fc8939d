//! Node classes: the nodes the template rules cannot tell apart, so that the catalogue reads one node per
//! class instead of every node. The per-node label keys (hostname, ...) that make a template read every
//! node after all are the [`NodeIndex`](crate::placement::NodeIndex)'s.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::PodSpec;

use crate::model::RuntimeClassEntry;
use crate::schedule::affinity::{has_match_fields, required_node_affinity, term_expressions};

// The class context is one node per class of the [`NodeIndex`](crate::placement::NodeIndex) (labels
// without the per-node keys, filtering taints, cordon, OS and build), in the nodes' order. What the template
// rules read of the context's nodes (the Windows taints, the taints a pod misses on the Windows nodes its
// selectors admit, the Windows builds) is the same for these as for all nodes, and in the same order, as
// long as the pod's selectors read no per-node key; that costs classes, not nodes, per template. Which
// nodes fit (and their names in messages) still comes from the full index.

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
    let required = required_node_affinity(spec.affinity.as_ref());
    let affinity = has_match_fields(required)
        || term_expressions(required).any(|e| per_node.contains(&e.requirement.key));
    selector_keys || affinity
}
