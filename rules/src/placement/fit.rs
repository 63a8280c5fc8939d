//! Which nodes could take a pod, and why the others could not — built for 5,000 nodes × thousands of
//! templates (docs/limits.md).
//!
//! [`NodeIndex`] is built once per cluster. It groups nodes into *classes* of nodes the scheduler cannot
//! tell apart for placement: same labels (leaving out per-node labels such as `kubernetes.io/hostname`,
//! i.e. keys with more than [`PER_NODE_KEY_VALUES`] distinct values), same filtering taints, same
//! cordon state, same OS and build. A class keeps a bitset of its members. [`fit`] then evaluates the
//! pod once per class — nodeSelector AND required affinity (§3.3, §3.4), `NoSchedule`/`NoExecute` taints
//! (§3.2), cordoned nodes — and ORs the bitsets of the classes that pass. A pod whose constraints read a
//! per-node label, use `matchFields` or set `spec.nodeName` is evaluated node by node instead (still exact).
//!
//! ```
//! use k8s_openapi::api::core::v1::Node;
//! use winplace_rules::placement::{fit, NodeIndex};
//! # use winplace_rules::{input, model, placement, Settings};
//! let node: Node = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}},
//!     "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}
//! })).unwrap();
//! let index = NodeIndex::new(&[node]);
//! # let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: busybox}]\n";
//! # let parsed = input::parse("p.yaml", text, &input::Limits::default());
//! # let objects = model::objects(&parsed.documents);
//! # let template = model::pod_template(&objects[0]).unwrap().unwrap();
//! let placement = placement::resolve(&template, None, &Settings::default());
//! let fit = fit(&placement, &index);
//! assert_eq!(fit.candidates.count(), 0);
//! assert_eq!(fit.rejected[0].summary(&index), "1 node (win-1): untolerated taint os=windows:NoSchedule");
//! ```

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use k8s_openapi::api::core::v1::{Node, NodeSelector, NodeSelectorTerm, Taint, Toleration};

use super::Placement;
use crate::model::{ClusterContext, node_os};
use crate::schedule::affinity::{
    NodeFacts, has_match_fields, required_affinity_matches, requirement_matches, term_expressions,
};
use crate::schedule::selector::node_selector_matches;
use crate::schedule::taints::{
    Gates, filters, first_untolerated, first_untolerated_no_execute, is_condition_taint,
    taint_display, tolerated_by_any,
};
use crate::windows::Os;

/// A label key with more distinct values than this is a per-node label (hostname, instance id) and is left
/// out of node classes.
pub const PER_NODE_KEY_VALUES: usize = 64;

/// The taint the node lifecycle controller puts on cordoned nodes; tolerating it lets a pod onto them.
const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// A set of node indexes (into [`NodeIndex::nodes`]) as a bitset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeSet {
    bits: Vec<u64>,
}

impl NodeSet {
    /// An empty set for `len` nodes.
    pub fn new(len: usize) -> Self {
        NodeSet {
            bits: vec![0; len.div_ceil(64)],
        }
    }

    /// Adds node `i`.
    pub fn insert(&mut self, i: usize) {
        if let Some(word) = self.bits.get_mut(i / 64) {
            *word |= 1u64 << (i % 64);
        }
    }

    /// Removes node `i`.
    pub fn remove(&mut self, i: usize) {
        if let Some(word) = self.bits.get_mut(i / 64) {
            *word &= !(1u64 << (i % 64));
        }
    }

    /// Whether node `i` is in the set.
    pub fn contains(&self, i: usize) -> bool {
        self.bits
            .get(i / 64)
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// Adds every node of `other`.
    pub fn union_with(&mut self, other: &NodeSet) {
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }

    /// The number of nodes in the set.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// The node indexes, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.bits.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let bit = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(wi * 64 + bit)
            })
        })
    }
}

/// One node as the index keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedNode {
    /// `metadata.name`.
    pub name: String,
    /// Its OS (`kubernetes.io/os` label, else `status.nodeInfo.operatingSystem`), when it is linux or windows.
    pub os: Option<Os>,
    /// A Windows node's build number (kernelVersion, else the build label).
    pub build: Option<u32>,
    /// All its labels.
    pub labels: BTreeMap<String, String>,
    /// Its `NoSchedule` and `NoExecute` taints, in order.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// Its class (see the module docs).
    pub class: usize,
}

#[derive(Debug, Clone)]
struct NodeClass {
    /// The members' labels without per-node keys.
    labels: BTreeMap<String, String>,
    taints: Vec<Taint>,
    unschedulable: bool,
    os: Option<Os>,
    build: Option<u32>,
    members: NodeSet,
    /// A member, for exact per-node evaluation.
    first: usize,
}

/// The cluster's nodes, prepared for [`fit`]: per-node facts and classes of interchangeable nodes.
#[derive(Debug, Clone, Default)]
pub struct NodeIndex {
    nodes: Vec<IndexedNode>,
    classes: Vec<NodeClass>,
    per_node_keys: BTreeSet<String>,
}

/// What makes two nodes interchangeable for [`fit`], borrowed from the nodes: labels without the per-node
/// keys, the filtering taints, the cordon, the OS and the build.
type ClassKey<'a> = (
    Vec<(&'a str, &'a str)>,
    Vec<(&'a str, &'a str, &'a str)>,
    bool,
    Option<Os>,
    Option<u32>,
);

impl NodeIndex {
    /// Indexes `nodes`.
    pub fn new(nodes: &[Node]) -> Self {
        // Only whether a key has more than PER_NODE_KEY_VALUES values matters: stop counting there.
        let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for node in nodes {
            for (k, v) in node.metadata.labels.iter().flatten() {
                let set = values.entry(k).or_default();
                if set.len() <= PER_NODE_KEY_VALUES {
                    set.insert(v);
                }
            }
        }
        let per_node_keys: BTreeSet<String> = values
            .iter()
            .filter(|(_, vs)| vs.len() > PER_NODE_KEY_VALUES)
            .map(|(k, _)| k.to_string())
            .collect();
        let mut index = NodeIndex {
            nodes: Vec::with_capacity(nodes.len()),
            classes: Vec::new(),
            per_node_keys,
        };
        let mut by_key: FxHashMap<ClassKey<'_>, usize> = FxHashMap::default();
        for (i, node) in nodes.iter().enumerate() {
            let labels = node.metadata.labels.clone().unwrap_or_default();
            let (os, build) = crate::model::node_os_build(node);
            let spec = node.spec.as_ref();
            let taints: Vec<&Taint> = crate::model::node_taints(node)
                .iter()
                .filter(|t| filters(t))
                .collect();
            let unschedulable = spec.and_then(|s| s.unschedulable) == Some(true);
            let key: ClassKey<'_> = (
                node.metadata
                    .labels
                    .iter()
                    .flatten()
                    .filter(|(k, _)| !index.per_node_keys.contains(*k))
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
                taints
                    .iter()
                    .map(|t| {
                        (
                            t.key.as_str(),
                            t.value.as_deref().unwrap_or_default(),
                            t.effect.as_str(),
                        )
                    })
                    .collect(),
                unschedulable,
                os,
                build,
            );
            let taints: Vec<Taint> = taints.into_iter().cloned().collect();
            let next = index.classes.len();
            let class = *by_key.entry(key).or_insert(next);
            if class == next {
                let projected = labels
                    .iter()
                    .filter(|(k, _)| !index.per_node_keys.contains(*k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                index.classes.push(NodeClass {
                    labels: projected,
                    taints: taints.clone(),
                    unschedulable,
                    os,
                    build,
                    members: NodeSet::new(nodes.len()),
                    first: i,
                });
            }
            if let Some(c) = index.classes.get_mut(class) {
                c.members.insert(i);
            }
            index.nodes.push(IndexedNode {
                name: node.metadata.name.clone().unwrap_or_default(),
                os,
                build,
                labels,
                taints,
                unschedulable,
                class,
            });
        }
        index
    }

    /// Puts the new version of a node already in the index (found by name) in its place, moving it between
    /// classes as its labels, taints or cordon say, without re-indexing the other nodes. Returns `false`,
    /// leaving the index as it was, when the change would make a label key start or stop having a value per
    /// node (or the node is not in the index): then index the nodes anew with [`NodeIndex::new`].
    ///
    /// The result is the index [`NodeIndex::new`] would build from the nodes with this one replaced.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::Node;
    /// use winplace_rules::placement::NodeIndex;
    /// let node = |name: &str, team: &str| -> Node {
    ///     serde_json::from_value(serde_json::json!({"metadata": {"name": name,
    ///         "labels": {"kubernetes.io/os": "linux", "team": team}}})).unwrap()
    /// };
    /// let mut index = NodeIndex::new(&[node("a", "x"), node("b", "x")]);
    /// assert_eq!(index.class_count(), 1);
    /// assert!(index.replace_node(&node("a", "y")));
    /// assert_eq!(index.class_count(), 2);
    /// assert_eq!(index.class_firsts().collect::<Vec<_>>(), [0, 1]);
    /// ```
    pub fn replace_node(&mut self, node: &Node) -> bool {
        let name = node.metadata.name.as_deref().unwrap_or_default();
        let Some(i) = self.nodes.iter().position(|n| n.name == name) else {
            return false;
        };
        let labels = node.metadata.labels.clone().unwrap_or_default();
        // A key whose values changed may cross the per-node threshold: count its values anew.
        let old_labels = self.nodes.get(i).map(|n| &n.labels);
        let changed_keys: BTreeSet<&String> = labels
            .iter()
            .filter(|(k, v)| old_labels.and_then(|l| l.get(*k)) != Some(*v))
            .map(|(k, _)| k)
            .chain(
                old_labels
                    .into_iter()
                    .flatten()
                    .filter(|(k, _)| !labels.contains_key(*k))
                    .map(|(k, _)| k),
            )
            .collect();
        for key in changed_keys {
            let mut values: BTreeSet<&str> = BTreeSet::new();
            for (j, n) in self.nodes.iter().enumerate() {
                let l = if j == i { &labels } else { &n.labels };
                if let Some(v) = l.get(key) {
                    values.insert(v);
                    if values.len() > PER_NODE_KEY_VALUES {
                        break;
                    }
                }
            }
            if (values.len() > PER_NODE_KEY_VALUES) != self.per_node_keys.contains(key) {
                return false;
            }
        }
        let (os, build) = crate::model::node_os_build(node);
        let taints: Vec<Taint> = crate::model::node_taints(node)
            .iter()
            .filter(|t| filters(t))
            .cloned()
            .collect();
        let unschedulable = node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
        let projected: BTreeMap<String, String> = labels
            .iter()
            .filter(|(k, _)| !self.per_node_keys.contains(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // Class keys compare taints by key, value (absent = empty) and effect.
        let taint_key = |ts: &[Taint]| -> Vec<(String, String, String)> {
            ts.iter()
                .map(|t| {
                    let value = t.value.clone().unwrap_or_default();
                    (t.key.clone(), value, t.effect.clone())
                })
                .collect()
        };
        let wanted = taint_key(&taints);
        let target = self.classes.iter().position(|c| {
            c.labels == projected
                && c.unschedulable == unschedulable
                && c.os == os
                && c.build == build
                && taint_key(&c.taints) == wanted
        });
        let Some(old) = self.nodes.get(i).map(|n| n.class) else {
            return false;
        };
        if target != Some(old) {
            if let Some(c) = self.classes.get_mut(old) {
                c.members.remove(i);
                if c.first == i {
                    c.first = c.members.iter().next().unwrap_or(usize::MAX);
                }
            }
            match target.and_then(|t| self.classes.get_mut(t)) {
                Some(c) => {
                    c.members.insert(i);
                    c.first = c.first.min(i);
                }
                None => {
                    let mut members = NodeSet::new(self.nodes.len());
                    members.insert(i);
                    self.classes.push(NodeClass {
                        labels: projected,
                        taints: taints.clone(),
                        unschedulable,
                        os,
                        build,
                        members,
                        first: i,
                    });
                }
            }
            self.renumber_classes();
        }
        if let Some(n) = self.nodes.get_mut(i) {
            n.os = os;
            n.build = build;
            n.labels = labels;
            n.taints = taints;
            n.unschedulable = unschedulable;
        }
        true
    }

    /// Drops empty classes and puts the others in the order of their first node, as [`NodeIndex::new`]
    /// numbers them; the nodes' class numbers follow.
    fn renumber_classes(&mut self) {
        self.classes.retain(|c| !c.members.is_empty());
        let mut order: Vec<usize> = (0..self.classes.len()).collect();
        order.sort_by_key(|&c| self.classes.get(c).map_or(usize::MAX, |c| c.first));
        let mut classes: Vec<Option<NodeClass>> = std::mem::take(&mut self.classes)
            .into_iter()
            .map(Some)
            .collect();
        self.classes = order
            .iter()
            .filter_map(|&c| classes.get_mut(c).and_then(Option::take))
            .collect();
        for (c, class) in self.classes.iter().enumerate() {
            for i in class.members.iter() {
                if let Some(n) = self.nodes.get_mut(i) {
                    n.class = c;
                }
            }
        }
    }

    /// Indexes the nodes of a cluster context.
    pub fn from_context(context: &ClusterContext) -> Self {
        NodeIndex::new(&context.nodes)
    }

    /// The nodes, in the order they were given.
    pub fn nodes(&self) -> &[IndexedNode] {
        &self.nodes
    }

    /// The position of the first node of each class, in class order (the order in which classes first
    /// appear among the nodes): one node per class of nodes [`fit`] cannot tell apart.
    pub fn class_firsts(&self) -> impl Iterator<Item = usize> + '_ {
        self.classes.iter().map(|c| c.first)
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&IndexedNode> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The label keys with a value per node (more than 64 values): selectors that read them are
    /// evaluated node by node.
    pub fn per_node_keys(&self) -> &BTreeSet<String> {
        &self.per_node_keys
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The number of node classes (groups of nodes [`fit`] evaluates once).
    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// The distinct builds of the Windows nodes, ascending.
    pub fn windows_builds(&self) -> Vec<u32> {
        let set: BTreeSet<u32> = self.classes.iter().filter_map(|c| c.build).collect();
        set.into_iter().collect()
    }

    /// Whether there is a node of `os`.
    pub fn has_os(&self, os: Os) -> bool {
        self.classes.iter().any(|c| c.os == Some(os))
    }

    /// The smallest set of taints a pod must additionally tolerate to reach a Windows node its
    /// selectors admit (all Windows nodes when they admit none). A node's condition taints
    /// (`node.kubernetes.io/not-ready`, … [`is_condition_taint`]) are never among them: they pass with
    /// the condition, and a pod that tolerated them could be placed on a node that is not ready.
    ///
    /// `None` when there is no Windows node; `Some(empty)` when the pod already reaches one.
    pub fn untolerated_windows_taints(&self, placement: &Placement) -> Option<Vec<Taint>> {
        let windows: Vec<&NodeClass> = self
            .classes
            .iter()
            .filter(|c| c.os == Some(Os::Windows))
            .collect();
        if windows.is_empty() {
            return None;
        }
        let admitted: Vec<&&NodeClass> = windows
            .iter()
            .filter(|c| self.node_matches_selector(placement, c.first))
            .collect();
        let considered: Vec<&NodeClass> = if admitted.is_empty() {
            windows
        } else {
            admitted.into_iter().copied().collect()
        };
        considered
            .iter()
            .map(|c| {
                c.taints
                    .iter()
                    .filter(|t| !is_condition_taint(&t.key))
                    .filter(|t| !tolerated_by_any(&placement.tolerations, t, Gates::default()))
                    .cloned()
                    .collect::<Vec<Taint>>()
            })
            .min_by_key(Vec::len)
    }

    fn node_matches_selector(&self, placement: &Placement, i: usize) -> bool {
        let Some(node) = self.nodes.get(i) else {
            return false;
        };
        let facts = NodeFacts {
            name: &node.name,
            labels: &node.labels,
        };
        selector_ok(placement, facts)
    }
}

/// [`NodeIndex::untolerated_windows_taints`] straight from the nodes, without building an index (for one
/// template, e.g. at admission).
pub fn untolerated_windows_taints(nodes: &[Node], placement: &Placement) -> Option<Vec<Taint>> {
    let windows: Vec<&Node> = nodes
        .iter()
        .filter(|n| node_os(n) == Some(Os::Windows.as_str()))
        .collect();
    if windows.is_empty() {
        return None;
    }
    let admitted: Vec<&Node> = windows
        .iter()
        .copied()
        .filter(|n| selector_ok(placement, NodeFacts::from_node(n)))
        .collect();
    let considered = if admitted.is_empty() {
        windows
    } else {
        admitted
    };
    considered
        .iter()
        .map(|n| {
            crate::model::node_taints(n)
                .iter()
                .filter(|t| filters(t) && !is_condition_taint(&t.key))
                .filter(|t| !tolerated_by_any(&placement.tolerations, t, Gates::default()))
                .cloned()
                .collect::<Vec<Taint>>()
        })
        .min_by_key(Vec::len)
}

fn selector_ok(placement: &Placement, facts: NodeFacts) -> bool {
    placement
        .node_selector
        .as_ref()
        .is_none_or(|s| node_selector_matches(s, facts.labels))
        && required_affinity_matches(placement.required_affinity.as_ref(), facts)
}

/// Why a node cannot take the pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    /// The pod sets `spec.nodeName` to another node.
    NodeName(String),
    /// The node is cordoned and the pod does not tolerate `node.kubernetes.io/unschedulable`.
    Unschedulable,
    /// The first `NoSchedule`/`NoExecute` taint the pod does not tolerate.
    Taint(Taint),
    /// nodeSelector or required affinity fails; what differs (`kubernetes.io/os is linux, not windows`).
    Selector(Vec<String>),
}

impl Rejection {
    /// A phrase for messages.
    pub fn message(&self) -> String {
        match self {
            Rejection::NodeName(name) => format!("spec.nodeName is {name}"),
            Rejection::Unschedulable => "cordoned (unschedulable)".to_string(),
            Rejection::Taint(t) => format!("untolerated taint {}", taint_display(t)),
            Rejection::Selector(details) => format!(
                "node(s) didn't match Pod's node affinity/selector ({})",
                details.join("; ")
            ),
        }
    }
}

/// Nodes that fail for the same reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct RejectGroup {
    /// The nodes.
    pub nodes: NodeSet,
    /// How many.
    pub count: usize,
    /// Every reason, in the scheduler's filter order (cordon, taints, affinity).
    pub reasons: Vec<Rejection>,
}

/// How many node names a summary lists before `…`.
const NAMES_SHOWN: usize = 3;

fn names(nodes: &NodeSet, index: &NodeIndex) -> String {
    let mut out: Vec<&str> = nodes
        .iter()
        .take(NAMES_SHOWN)
        .filter_map(|i| index.nodes.get(i).map(|n| n.name.as_str()))
        .collect();
    if nodes.count() > NAMES_SHOWN {
        out.push("…");
    }
    out.join(", ")
}

fn count_nodes(n: usize) -> String {
    if n == 1 {
        "1 node".to_string()
    } else {
        format!("{n} nodes")
    }
}

impl RejectGroup {
    /// `3 nodes (a, b, c): untolerated taint os=windows:NoSchedule`.
    pub fn summary(&self, index: &NodeIndex) -> String {
        let reasons: Vec<String> = self.reasons.iter().map(Rejection::message).collect();
        format!(
            "{} ({}): {}",
            count_nodes(self.count),
            names(&self.nodes, index),
            reasons.join(", ")
        )
    }
}

/// Where a pod fits.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The nodes that pass every filter.
    pub candidates: NodeSet,
    /// The other nodes, grouped by identical reasons, largest group first.
    pub rejected: Vec<RejectGroup>,
}

impl Fit {
    /// The candidate nodes.
    pub fn candidate_nodes<'a>(
        &'a self,
        index: &'a NodeIndex,
    ) -> impl Iterator<Item = &'a IndexedNode> + 'a {
        self.candidates.iter().filter_map(|i| index.nodes.get(i))
    }

    /// Every rejected group's summary, joined with `; `.
    pub fn summary(&self, index: &NodeIndex) -> String {
        let parts: Vec<String> = self.rejected.iter().map(|g| g.summary(index)).collect();
        parts.join("; ")
    }
}

/// Whether the pod's constraints can be evaluated per class: they read no per-node label, no `matchFields`,
/// and the pod goes through the scheduler.
fn class_level(placement: &Placement, index: &NodeIndex) -> bool {
    if placement.node_name.is_some() {
        return false;
    }
    let per_node = |k: &str| index.per_node_keys.contains(k);
    if placement
        .node_selector
        .iter()
        .flatten()
        .any(|(k, _)| per_node(k))
    {
        return false;
    }
    let required = placement.required_affinity.as_ref();
    !has_match_fields(required) && term_expressions(required).all(|e| !per_node(&e.requirement.key))
}

fn tolerates_unschedulable(tolerations: &[Toleration]) -> bool {
    let taint = Taint {
        key: UNSCHEDULABLE_TAINT.to_string(),
        effect: "NoSchedule".to_string(),
        ..Default::default()
    };
    tolerated_by_any(tolerations, &taint, Gates::default())
}

/// The reasons a node with these facts rejects the pod (empty: it fits), in the scheduler's filter order.
fn reasons(
    placement: &Placement,
    index: &NodeIndex,
    facts: NodeFacts,
    taints: &[Taint],
    unschedulable: bool,
) -> Vec<Rejection> {
    let mut out = Vec::new();
    if let Some(want) = &placement.node_name {
        // The scheduler is skipped; the kubelet checks affinity and NoExecute taints only (§1.6).
        if facts.name != want {
            out.push(Rejection::NodeName(want.clone()));
            return out;
        }
        if let Some(t) = first_untolerated_no_execute(taints, &placement.tolerations) {
            out.push(Rejection::Taint(t.clone()));
        }
    } else {
        if unschedulable && !tolerates_unschedulable(&placement.tolerations) {
            out.push(Rejection::Unschedulable);
        }
        if let Some(t) = first_untolerated(taints, &placement.tolerations, Gates::default()) {
            out.push(Rejection::Taint(t.clone()));
        }
    }
    if !selector_ok(placement, facts) {
        out.push(Rejection::Selector(selector_details(
            placement.node_selector.as_ref(),
            placement.required_affinity.as_ref(),
            facts,
            &index.per_node_keys,
        )));
    }
    out
}

fn is_empty_term(term: &NodeSelectorTerm) -> bool {
    term.match_expressions.as_ref().is_none_or(Vec::is_empty)
        && term.match_fields.as_ref().is_none_or(Vec::is_empty)
}

/// What differs between the pod's selectors and a node's labels. The values of per-node keys are left
/// out, so that nodes failing the same way group together.
fn selector_details(
    node_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    facts: NodeFacts,
    per_node_keys: &BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in node_selector.into_iter().flatten() {
        match facts.labels.get(k) {
            Some(have) if have == v => {}
            Some(_) if per_node_keys.contains(k) => out.push(format!("{k} is not {v}")),
            Some(have) => out.push(format!("{k} is {have}, not {v}")),
            None => out.push(format!("no {k} label, needs {v}")),
        }
    }
    if !out.is_empty() || required_affinity_matches(required, facts) {
        return out;
    }
    let terms: Vec<&NodeSelectorTerm> = required
        .into_iter()
        .flat_map(|r| r.node_selector_terms.iter())
        .filter(|t| !is_empty_term(t))
        .collect();
    match terms.as_slice() {
        [term] => {
            for req in term.match_expressions.iter().flatten() {
                if requirement_matches(req, facts.labels) != Ok(true) {
                    let values = req.values.as_deref().unwrap_or(&[]).join(", ");
                    let have = match facts.labels.get(&req.key) {
                        Some(_) if per_node_keys.contains(&req.key) => "not met".to_string(),
                        Some(v) => format!("node has {v}"),
                        None => "label absent".to_string(),
                    };
                    out.push(format!(
                        "affinity {} {} [{values}]: {have}",
                        req.key, req.operator
                    ));
                }
            }
            if out.is_empty() {
                out.push("required node affinity matchFields".to_string());
            }
        }
        [] => out.push("required node affinity has no usable term".to_string()),
        many => out.push(format!(
            "none of the {} required node affinity terms match",
            many.len()
        )),
    }
    out
}

/// Whether one node's change can change where `placement` fits: the node rejects the pod for other reasons
/// after the change than before (or becomes a candidate, or stops being one), or the pod's selectors read
/// per-node labels or node names, so that its fit is not decided node by node.
///
/// `before` and `after` are the node in the index before and after the change. A pod for which this is
/// `false` has the same candidates, the same rejected groups (same reasons, same members, same names) and so
/// the same fit messages: the audit does not re-run its rules when only such a node changed.
///
/// ```
/// use k8s_openapi::api::core::v1::Node;
/// use winplace_rules::placement::{NodeIndex, Placement, node_change_reaches};
/// let node = |labels: serde_json::Value| -> Node {
///     serde_json::from_value(serde_json::json!({"metadata": {"name": "n1", "labels": labels}})).unwrap()
/// };
/// let before = NodeIndex::new(&[node(serde_json::json!({"kubernetes.io/os": "linux", "team": "a"}))]);
/// let after = NodeIndex::new(&[node(serde_json::json!({"kubernetes.io/os": "linux", "team": "b"}))]);
/// let (b, a) = (&before.nodes()[0], &after.nodes()[0]);
/// let mut pinned = Placement::default();
/// pinned.node_selector = Some([("team".to_string(), "a".to_string())].into());
/// assert!(node_change_reaches(&pinned, (&before, b), (&after, a)), "the node stops matching");
/// let anywhere = Placement::default();
/// assert!(!node_change_reaches(&anywhere, (&before, b), (&after, a)), "a label nobody selects on");
/// ```
pub fn node_change_reaches(
    placement: &Placement,
    before: (&NodeIndex, &IndexedNode),
    after: (&NodeIndex, &IndexedNode),
) -> bool {
    if !class_level(placement, before.0) || !class_level(placement, after.0) {
        return true;
    }
    let (b, a) = (before.1, after.1);
    // The common case: labels changed that the pod's selectors do not read.
    if b.taints == a.taints
        && b.unschedulable == a.unschedulable
        && selector_keys(placement).all(|k| b.labels.get(k) == a.labels.get(k))
    {
        return false;
    }
    let verdict = |(index, node): (&NodeIndex, &IndexedNode)| {
        let facts = NodeFacts {
            name: &node.name,
            labels: &node.labels,
        };
        reasons(placement, index, facts, &node.taints, node.unschedulable)
    };
    verdict(before) != verdict(after)
}

/// The label keys the pod's nodeSelector and required node affinity read.
fn selector_keys(placement: &Placement) -> impl Iterator<Item = &str> + '_ {
    let selector = placement
        .node_selector
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str());
    let affinity =
        term_expressions(placement.required_affinity.as_ref()).map(|e| e.requirement.key.as_str());
    selector.chain(affinity)
}

/// Which nodes of `index` could take the pod, and why each other group could not.
pub fn fit(placement: &Placement, index: &NodeIndex) -> Fit {
    fit_with(placement, index, class_level(placement, index))
}

/// [`fit`], per class when `by_class` (only valid when [`class_level`] says so), else per node.
fn fit_with(placement: &Placement, index: &NodeIndex, by_class: bool) -> Fit {
    let n = index.nodes.len();
    let mut candidates = NodeSet::new(n);
    let mut groups: Vec<RejectGroup> = Vec::new();
    let mut by_reason: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut reject = |reasons: Vec<Rejection>, members: &NodeSet, count: usize| {
        let key: Vec<String> = reasons.iter().map(Rejection::message).collect();
        let g = *by_reason.entry(key).or_insert_with(|| {
            groups.push(RejectGroup {
                nodes: NodeSet::new(n),
                count: 0,
                reasons,
            });
            groups.len() - 1
        });
        if let Some(group) = groups.get_mut(g) {
            group.nodes.union_with(members);
            group.count += count;
        }
    };
    if by_class {
        for class in &index.classes {
            let facts = NodeFacts {
                name: "",
                labels: &class.labels,
            };
            let r = reasons(placement, index, facts, &class.taints, class.unschedulable);
            if r.is_empty() {
                candidates.union_with(&class.members);
            } else {
                reject(r, &class.members, class.members.count());
            }
        }
    } else {
        for (i, node) in index.nodes.iter().enumerate() {
            let facts = NodeFacts {
                name: &node.name,
                labels: &node.labels,
            };
            let r = reasons(placement, index, facts, &node.taints, node.unschedulable);
            if r.is_empty() {
                candidates.insert(i);
            } else {
                let mut one = NodeSet::new(n);
                one.insert(i);
                reject(r, &one, 1);
            }
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.count));
    Fit {
        candidates,
        rejected: groups,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{placement, pod};
    use crate::settings::Settings;
    use crate::test_kit::{linux_node, node, windows_node};
    use serde_json::json;

    fn win(name: &str, build: &str) -> Node {
        windows_node(name, build).typed()
    }

    fn linux(name: &str) -> Node {
        linux_node(name).taints(json!([])).typed()
    }

    /// `replace_node` gives the index `new` builds from the changed nodes: same nodes, same classes in the
    /// same order (so the same fits and messages).
    #[test]
    fn replacing_a_node_in_place_equals_indexing_anew() {
        let mut nodes = cluster_nodes();
        let mut index = NodeIndex::new(&nodes);
        let edits: Vec<(usize, Node)> = vec![
            (
                3,
                node("l-a").label_map(json!({"kubernetes.io/os": "linux", "team": "x"})).taints(json!([])).typed(),
            ),
            (
                0,
                node("w22-a").label_map(json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348", "team": "x"})).taints(json!([])).typed(),
            ),
            (
                4,
                node("l-b").label_map(json!({"kubernetes.io/os": "linux", "team": "x"})).taints(json!([{"key": "gpu", "effect": "NoSchedule"}])).typed(),
            ),
            (3, linux("l-a")),
            (0, win("w22-a", "10.0.20348")),
            (
                5,
                node("l-c").label_map(json!({"kubernetes.io/os": "linux", "team": "x"})).taints(json!([{"key": "gpu", "effect": "NoSchedule"}])).typed(),
            ),
            (4, linux("l-b")),
        ];
        for (i, changed) in edits {
            nodes[i] = changed.clone();
            assert!(index.replace_node(&changed));
            let fresh = NodeIndex::new(&nodes);
            assert_eq!(index.nodes(), fresh.nodes(), "after replacing {i}");
            assert_eq!(
                index.class_firsts().collect::<Vec<_>>(),
                fresh.class_firsts().collect::<Vec<_>>()
            );
            let spec = "  containers: [{name: c, image: nginx}]\n  tolerations: [{key: os, operator: Exists}]\n";
            let p = placement(&pod(spec), None, &Settings::default());
            assert_eq!(fit(&p, &index), fit(&p, &fresh));
        }
        // A node the index does not hold, and a change that makes a key per-node, are refused.
        assert!(!index.replace_node(&linux("elsewhere")));
        let many: Vec<Node> = (0..70)
            .map(|i| {
                node(&format!("n{i:02}"))
                    .label_map(json!({"host": format!("h{i}")}))
                    .taints(json!([]))
                    .typed()
            })
            .collect();
        let mut index = NodeIndex::new(&many);
        assert!(index.per_node_keys().contains("host"));
        assert!(
            !index.replace_node(&node("n00").label_map(json!({})).taints(json!([])).typed())
                || index.per_node_keys().contains("host")
        );
    }

    /// A pod spec and the nodes it fits and the nodes it does not.
    struct FitCase<'a> {
        reference: &'a str,
        spec: String,
        candidates: Vec<&'a str>,
        rejected: Vec<&'a str>,
    }

    /// Asserts each case's candidates and rejected groups on `index`.
    fn assert_fits(index: &NodeIndex, cases: Vec<FitCase>) {
        for case in cases {
            let (names, groups) = summaries(&case.spec, index);
            assert_eq!(names, case.candidates, "{}", case.reference);
            assert_eq!(groups, case.rejected, "{}", case.reference);
        }
    }

    fn cluster_nodes() -> Vec<Node> {
        vec![
            win("w22-a", "10.0.20348"),
            win("w22-b", "10.0.20348"),
            win("w25-a", "10.0.26100"),
            linux("l-a"),
            linux("l-b"),
            linux("l-c"),
        ]
    }

    fn cluster() -> NodeIndex {
        NodeIndex::new(&cluster_nodes())
    }

    const TOLERATE: &str =
        "  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";
    const IMAGE: &str =
        "  containers: [{name: c, image: mcr.microsoft.com/windows/servercore:ltsc2022}]\n";

    fn summaries(spec: &str, index: &NodeIndex) -> (Vec<String>, Vec<String>) {
        let p = placement(&pod(spec), None, &Settings::default());
        let f = fit(&p, index);
        let names = f.candidate_nodes(index).map(|n| n.name.clone()).collect();
        (names, f.rejected.iter().map(|g| g.summary(index)).collect())
    }

    #[test]
    fn fits_with_reasons() {
        let index = cluster();
        assert_eq!(index.class_count(), 3);
        assert_eq!(index.windows_builds(), [20348, 26100]);
        let rows = vec![
            FitCase {
                reference: "§3.2 + §3.3: pinned and tolerating",
                spec: format!("  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{IMAGE}"),
                candidates: vec!["w22-a", "w22-b", "w25-a"],
                rejected: vec![
                    "3 nodes (l-a, l-b, l-c): node(s) didn't match Pod's node affinity/selector (kubernetes.io/os is linux, not windows)",
                ],
            },
            FitCase {
                reference: "§3.2: untolerated taint",
                spec: IMAGE.to_string(),
                candidates: vec!["l-a", "l-b", "l-c"],
                rejected: vec![
                    "3 nodes (w22-a, w22-b, w25-a): untolerated taint os=windows:NoSchedule",
                ],
            },
            FitCase {
                reference: "§5.4: build label",
                spec: format!(
                    "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.26100\"}}\n{TOLERATE}{IMAGE}"
                ),
                candidates: vec!["w25-a"],
                rejected: vec![
                    "3 nodes (l-a, l-b, l-c): node(s) didn't match Pod's node affinity/selector (kubernetes.io/os is linux, not windows; no node.kubernetes.io/windows-build label, needs 10.0.26100)",
                    "2 nodes (w22-a, w22-b): node(s) didn't match Pod's node affinity/selector (node.kubernetes.io/windows-build is 10.0.20348, not 10.0.26100)",
                ],
            },
            FitCase {
                reference: "§3.4: affinity and taint together",
                spec: format!(
                    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.17763\"]}}]\n{IMAGE}"
                ),
                candidates: vec![],
                rejected: vec![
                    "3 nodes (l-a, l-b, l-c): node(s) didn't match Pod's node affinity/selector (affinity node.kubernetes.io/windows-build In [10.0.17763]: label absent)",
                    "2 nodes (w22-a, w22-b): untolerated taint os=windows:NoSchedule, node(s) didn't match Pod's node affinity/selector (affinity node.kubernetes.io/windows-build In [10.0.17763]: node has 10.0.20348)",
                    "1 node (w25-a): untolerated taint os=windows:NoSchedule, node(s) didn't match Pod's node affinity/selector (affinity node.kubernetes.io/windows-build In [10.0.17763]: node has 10.0.26100)",
                ],
            },
        ];
        assert_fits(&index, rows);
    }

    #[test]
    fn cordons_prefer_no_schedule_and_node_name() {
        let cordoned = linux_node("cordoned")
            .set(&["spec"], "unschedulable", json!(true))
            .typed();
        let soft = node("soft")
            .label_map(json!({"kubernetes.io/os": "linux"}))
            .taints(json!([{"key": "x", "effect": "PreferNoSchedule"}]))
            .typed();
        let evict = node("evict")
            .label_map(json!({"kubernetes.io/os": "linux"}))
            .taints(
                json!([{"key": "e", "effect": "NoExecute"}, {"key": "s", "effect": "NoSchedule"}]),
            )
            .typed();
        let index = NodeIndex::new(&[cordoned, soft, evict]);
        let busybox = "  containers: [{name: c, image: busybox}]\n";
        let rows = vec![
            FitCase {
                reference: "§3.2: PreferNoSchedule never filters; cordon",
                spec: busybox.to_string(),
                candidates: vec!["soft"],
                rejected: vec![
                    "1 node (cordoned): cordoned (unschedulable)",
                    "1 node (evict): untolerated taint e:NoExecute",
                ],
            },
            FitCase {
                reference: "cordon tolerated",
                spec: format!(
                    "  tolerations: [{{key: node.kubernetes.io/unschedulable, operator: Exists}}]\n{busybox}"
                ),
                candidates: vec!["cordoned", "soft"],
                rejected: vec!["1 node (evict): untolerated taint e:NoExecute"],
            },
            FitCase {
                reference: "§1.6: nodeName skips the scheduler; the kubelet checks NoExecute only",
                spec: format!(
                    "  nodeName: evict\n  tolerations: [{{key: e, operator: Exists}}]\n{busybox}"
                ),
                candidates: vec!["evict"],
                rejected: vec!["2 nodes (cordoned, soft): spec.nodeName is evict"],
            },
            FitCase {
                reference: "§1.6: nodeName onto a NoExecute taint",
                spec: format!("  nodeName: evict\n{busybox}"),
                candidates: vec![],
                rejected: vec![
                    "2 nodes (cordoned, soft): spec.nodeName is evict",
                    "1 node (evict): untolerated taint e:NoExecute",
                ],
            },
        ];
        assert_fits(&index, rows);
    }

    #[test]
    fn per_node_labels_and_match_fields_are_exact() {
        // 100 nodes with unique hostnames: the hostname is a per-node key and not part of the classes.
        let nodes: Vec<Node> = (0..100)
            .map(|i| node(&format!("n{i}")).label_map(json!({"kubernetes.io/os": "linux", "kubernetes.io/hostname": format!("n{i}"), "zone": format!("z{}", i % 3)})).taints(json!([])).typed())
            .collect();
        let index = NodeIndex::new(&nodes);
        assert_eq!(index.class_count(), 3);
        let rows = [
            (
                "  nodeSelector: {kubernetes.io/hostname: n7}\n",
                vec!["n7"],
                1,
            ),
            (
                "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchFields: [{key: metadata.name, operator: In, values: [n42]}]\n",
                vec!["n42"],
                1,
            ),
            (
                "  nodeSelector: {zone: z1, kubernetes.io/hostname: n4}\n",
                vec!["n4"],
                3,
            ),
        ];
        for (spec, want, group_count) in rows {
            let (names, groups) = summaries(
                &format!("{spec}  containers: [{{name: c, image: busybox}}]\n"),
                &index,
            );
            assert_eq!(names, want, "{spec}");
            assert_eq!(groups.len(), group_count, "{spec}: {groups:?}");
        }
    }

    #[test]
    fn classes_agree_with_nodes() {
        // Evaluating per class must give the same candidates and groups as per node.
        let index = cluster();
        let specs = [
            IMAGE.to_string(),
            format!("  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{IMAGE}"),
            format!("  tolerations: [{{operator: Exists}}]\n{IMAGE}"),
            format!(
                "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{{key: kubernetes.io/os, operator: NotIn, values: [linux]}}]\n        - matchExpressions: [{{key: node.kubernetes.io/windows-build, operator: Exists}}]\n{TOLERATE}{IMAGE}"
            ),
        ];
        for spec in specs {
            let p = placement(&pod(&spec), None, &Settings::default());
            let (a, b) = (fit_with(&p, &index, true), fit_with(&p, &index, false));
            assert_eq!(a.candidates, b.candidates, "{spec}");
            let groups = |f: &Fit| {
                f.rejected
                    .iter()
                    .map(|g| (g.summary(&index), g.nodes.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(groups(&a), groups(&b), "{spec}");
        }
    }

    #[test]
    fn untolerated_windows_taints_pick_the_cheapest_pool() {
        let gpu = node("w-gpu").label_map(json!({"kubernetes.io/os": "windows"})).taints(json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}, {"key": "gpu", "value": "true", "effect": "NoSchedule"}])).typed();
        let index = NodeIndex::new(&[gpu, win("w", "10.0.20348"), linux("l")]);
        let p = placement(&pod(IMAGE), None, &Settings::default());
        let taints = index.untolerated_windows_taints(&p).expect("windows nodes");
        assert_eq!(
            taints.iter().map(taint_display).collect::<Vec<_>>(),
            ["os=windows:NoSchedule"]
        );
        let p = placement(
            &pod(&format!("{TOLERATE}{IMAGE}")),
            None,
            &Settings::default(),
        );
        assert_eq!(index.untolerated_windows_taints(&p), Some(vec![]));
        assert_eq!(
            NodeIndex::new(&[linux("l")]).untolerated_windows_taints(&p),
            None
        );
    }

    #[test]
    fn node_sets() {
        let mut s = NodeSet::new(130);
        for i in [0, 63, 64, 129] {
            s.insert(i);
        }
        s.insert(500); // out of range: ignored
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 63, 64, 129]);
        assert_eq!(s.count(), 4);
        assert!(s.contains(64) && !s.contains(65));
        let mut t = NodeSet::new(130);
        assert!(t.is_empty());
        t.union_with(&s);
        assert_eq!(t, s);
    }

    /// The audit holds only a placement's scheduling part: fits and node changes must read nothing else.
    #[test]
    fn the_scheduling_part_fits_as_the_whole_placement() {
        let nodes = cluster_nodes();
        let index = NodeIndex::new(&nodes);
        let mut edited = nodes.clone();
        edited[1] = node("w22-b").label_map(json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348", "team": "x"})).taints(json!([])).typed();
        let after = NodeIndex::new(&edited);
        let specs = [
            format!("{IMAGE}{TOLERATE}  nodeSelector: {{kubernetes.io/os: windows}}\n"),
            format!("{IMAGE}  nodeSelector: {{kubernetes.io/os: windows, team: x}}\n"),
            format!(
                "{IMAGE}{TOLERATE}  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: node.kubernetes.io/windows-build, operator: In, values: [10.0.26100]}}]}}]}}}}}}\n"
            ),
            format!("{IMAGE}  nodeName: l-a\n"),
            "  containers: [{name: c, image: nginx}]\n  tolerations: [{operator: Exists}]\n"
                .to_string(),
        ];
        for spec in &specs {
            let whole = placement(&pod(spec), None, &Settings::default());
            let part = whole.scheduling_part();
            assert_eq!(fit(&part, &index), fit(&whole, &index), "{spec}");
            assert_eq!(fit(&part, &after), fit(&whole, &after), "{spec}");
            let (b, a) = (&index.nodes()[1], &after.nodes()[1]);
            assert_eq!(
                node_change_reaches(&part, (&index, b), (&after, a)),
                node_change_reaches(&whole, (&index, b), (&after, a)),
                "{spec}"
            );
        }
    }
}
