//! The cluster audit: the catalogue applied to every workload of a live cluster, plus the live-state and
//! node rules, kept current as objects change.
//!
//! Pure: no I/O, no clocks — the caller feeds [`Change`]s and reads the reports.
//!
//! How it scales (DESIGN "Scale"): pods are grouped into workload rows by owner ([`owner`]), and each
//! workload's pods into *templates* by their revision label. The catalogue runs once per template, on a
//! representative pod, against a [`Resolver`] and a [`NodeIndex`] built once per change of the nodes; the
//! live-state rules (cheap, per pod) read the template's resolved placement. So a full audit costs
//! templates × node classes for the catalogue plus a constant per pod, and holds a few hundred bytes per pod
//! (the pods themselves are not kept).
//!
//! Incremental updates ([`Audit::apply`]):
//! * a pod change re-audits that pod (live-state rules), its workload row and its node's row; a pod of a new
//!   template has the catalogue run on it once;
//! * a node change that leaves what the rules read unchanged (labels, taints, cordon, `nodeInfo`: conditions
//!   and heartbeats are dropped on the way in) touches nothing; any other node change rebuilds the node
//!   index and re-runs the catalogue on every template (a node can change where any template fits, and which
//!   Windows builds the cluster has), then re-audits the pods of templates whose result changed, the pods
//!   bound to that node and the pending pods;
//! * a RuntimeClass change re-runs the catalogue on the templates that name it.
//!
//! ```
//! use winplace_rules::audit::{Audit, Change};
//! use k8s_openapi::api::core::v1::{Node, Pod};
//! let node: Node = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "lin-1", "labels": {"kubernetes.io/os": "linux"}}})).unwrap();
//! let pods: Vec<Pod> = (0..3).map(|i| serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": format!("web-7d9-{i}"), "namespace": "apps",
//!         "labels": {"pod-template-hash": "7d9"},
//!         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9",
//!             "uid": "u", "controller": true}]},
//!     "spec": {"nodeName": "lin-1", "containers": [{"name": "c", "image": "nginx:1.27"}]}})).unwrap()).collect();
//! let mut audit = Audit::new(winplace_rules::Settings::default());
//! audit.apply(Change::Reset { nodes: vec![node], pods, runtime_classes: vec![] });
//! let summary = audit.summary();
//! assert_eq!((summary.nodes, summary.pods), (1, 3));
//! assert_eq!(summary.workloads, 1, "replicas are grouped under their workload");
//! ```

mod node_group;
pub mod owner;
pub mod report;

pub use node_group::NodeGroupKey;
pub use report::*;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use serde_json::Value;

use crate::finding::{Finding, Severity};
use crate::input::LineMap;
use crate::model::cluster_objects::trim_node;
use crate::model::node_os;
use crate::model::{ClusterContext, Object, PodTemplate, RuntimeClassEntry, WorkloadKind};
use crate::placement::{NodeIndex, Placement, Resolver, fit};
use crate::rules::live_state::{self, LiveNode, PodFacts, TemplateFacts};
use crate::rules::{evaluate_object, evaluate_template};
use crate::schedule::taints::{filters, taint_display};
use crate::settings::Settings;
use crate::windows::Os;
use crate::windows::builds::WindowsVersion;
use crate::windows::compat::host_runs_image_build;
use owner::Owner;

/// A change to the cluster, as a watcher reports it.
#[derive(Debug, Clone)]
pub enum Change {
    /// Replace everything (first list, or a relist after `410 Gone`).
    Reset {
        /// Every node.
        nodes: Vec<Node>,
        /// Every pod in every namespace.
        pods: Vec<Pod>,
        /// Every RuntimeClass.
        runtime_classes: Vec<RuntimeClassEntry>,
    },
    /// A node was added or changed.
    Node(Box<Node>),
    /// A node was deleted (by name).
    NodeDeleted(String),
    /// A pod was added or changed.
    Pod(Box<Pod>),
    /// A pod was deleted (namespace, name).
    PodDeleted(String, String),
    /// A RuntimeClass was added or changed.
    RuntimeClass(Box<RuntimeClassEntry>),
    /// A RuntimeClass was deleted (by name).
    RuntimeClassDeleted(String),
}

/// One template of a workload: a representative pod's spec and what the catalogue found in it.
#[derive(Debug, Clone)]
struct Template {
    /// The workload object with the representative's spec as its pod template (what the rules read).
    object: Object,
    /// The same spec, typed.
    spec: PodSpec,
    /// The representative pod; its updates replace the spec (`None` once it is gone).
    representative: Option<Arc<str>>,
    /// `spec.runtimeClassName`.
    runtime_class: Option<String>,
    /// Pods made from it.
    members: usize,
    /// The catalogue's findings, reported under the workload.
    findings: Vec<Finding>,
    /// What the live rules read of the placement.
    facts: TemplateFacts,
    /// The resolved placement (for the fit of pending pods).
    placement: Option<Placement>,
    /// A warning or error among `findings`.
    at_risk: bool,
}

#[derive(Debug, Clone)]
struct Workload {
    /// `Kind/namespace/name`.
    key: Arc<str>,
    owner: Owner,
    /// Templates by revision label value.
    templates: BTreeMap<Arc<str>, Template>,
    /// Pods (`namespace/name`), sorted.
    pods: BTreeSet<Arc<str>>,
    report: WorkloadReport,
}

#[derive(Debug, Clone)]
struct PodRecord {
    facts: PodFacts,
    /// Key of its workload.
    workload: Arc<str>,
    /// Its template (revision label value).
    revision: Arc<str>,
    /// Live-state findings.
    live: Vec<Finding>,
    state: PlacementState,
    /// `(image build, node build)` cells of the build matrix this pod counts in.
    cells: Vec<(u32, u32)>,
}

#[derive(Debug, Clone)]
struct NodeEntry {
    os: Option<Os>,
    build: Option<u32>,
    /// Node-rule findings.
    findings: Vec<Finding>,
    report: NodeReport,
}

/// A reset being fed object by object.
#[derive(Debug, Clone)]
struct Resetting {
    dirty: Dirty,
    /// Rows before the reset (all touched).
    old_nodes: Vec<String>,
    old_workloads: Vec<Arc<str>>,
    /// The nodes so far, reduced.
    nodes: Vec<Node>,
}

/// What a change leaves to re-audit.
#[derive(Debug, Default, Clone)]
struct Dirty {
    /// Everything (a reset).
    all: bool,
    /// The nodes changed in what the rules read: rebuild the index, re-run every template.
    cluster: bool,
    /// Templates to (re-)evaluate: (workload, revision).
    templates: BTreeSet<(Arc<str>, Arc<str>)>,
    /// Re-run templates naming these RuntimeClasses.
    runtime_classes: BTreeSet<String>,
    /// The RuntimeClasses changed: re-run their object rules.
    runtime_class_objects: bool,
    pods: BTreeSet<Arc<str>>,
    workloads: BTreeSet<Arc<str>>,
    nodes: BTreeSet<String>,
    /// Re-run the node rules of these nodes.
    node_rules: BTreeSet<String>,
    /// Nodes deleted.
    removed_nodes: BTreeSet<String>,
}

/// The audit engine: holds the cluster and the findings, and re-audits only what a change touches.
///
/// Readers: [`Audit::summary`], [`Audit::nodes`], [`Audit::node`], [`Audit::workloads`], [`Audit::workload`]
/// (cheap: the rows are kept up to date by [`Audit::apply`]); [`Audit::report`] clones everything.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    settings: Settings,
    /// Nodes (sorted by name, reduced to what the rules read) and RuntimeClasses (sorted by name).
    context: ClusterContext,
    /// One node per class of nodes the template rules cannot tell apart, and the RuntimeClasses.
    classes: ClusterContext,
    /// Label keys with a value per node (hostname, ...): templates that read them see every node.
    per_node_keys: BTreeSet<String>,
    index: NodeIndex,
    nodes: BTreeMap<String, NodeEntry>,
    pods: FxMap<Arc<str>, PodRecord>,
    workloads: BTreeMap<Arc<str>, Workload>,
    /// Pods by the node they are bound to (also for nodes not, or not yet, known).
    bound: FxMap<String, BTreeSet<Arc<str>>>,
    /// Unbound pods the scheduler failed to place on taints or selectors.
    pending: BTreeSet<Arc<str>>,
    /// Pods per `(image build, node build)`.
    matrix: BTreeMap<(u32, u32), usize>,
    runtime_class_findings: Vec<Finding>,
    /// How many times the catalogue ran on a template (for tests and metrics).
    evaluations: u64,
    /// A reset being fed object by object.
    resetting: Option<Box<Resetting>>,
}

/// A fast hash for the audit's maps (keys are pod and node names; the rustc hasher's mixing step).
#[derive(Debug, Clone, Copy, Default)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The key of a pod everywhere winplace keeps pods: `namespace/name`.
pub fn pod_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// The [`pod_key`] of `pod` (a pod without a namespace is in `default`).
pub fn pod_key_of(pod: &Pod) -> String {
    pod_key(
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or(""),
    )
}

/// `namespace/name` → (namespace, name).
fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or("")
}

fn os_of(node: &Node) -> (Option<Os>, Option<u32>) {
    crate::model::node_os_build(node)
}

fn node_object(node: &Node) -> Option<Object> {
    let mut value = serde_json::to_value(node).ok()?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from("v1"));
        map.insert("kind".into(), Value::from("Node"));
    }
    Object::from_value("", 0, value, LineMap::default())
}

/// The workload object that carries `spec` as its pod template (a Pod for bare pods and custom owners).
fn template_object(owner: &Owner, pod_name: &str, spec: &PodSpec) -> Option<Object> {
    let spec_value = serde_json::to_value(spec).ok()?;
    let ns = owner.object.namespace.clone().unwrap_or_default();
    let (api_version, kind, name, prefix) = match owner.kind {
        Some(k) if k != WorkloadKind::Pod => (
            owner.object.api_version.as_str(),
            owner.object.kind.as_str(),
            owner.object.name.as_str(),
            k.pod_spec_path(),
        ),
        _ => ("v1", "Pod", pod_name, WorkloadKind::Pod.pod_spec_path()),
    };
    let mut value = spec_value;
    for segment in prefix.segments().iter().rev() {
        let mut map = serde_json::Map::new();
        map.insert(segment.as_key(), value);
        value = Value::Object(map);
    }
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(api_version));
        map.insert("kind".into(), Value::from(kind));
        map.insert(
            "metadata".into(),
            serde_json::json!({"name": name, "namespace": ns}),
        );
    }
    Object::from_value("", 0, value, LineMap::default())
}

fn sort_findings(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| {
        (&a.object, &a.path, &a.rule, &a.message).cmp(&(&b.object, &b.path, &b.rule, &b.message))
    });
    findings.dedup();
}

/// The build an image of `builds` runs as on a host of `host`: the newest one the host runs, else (it cannot
/// run any) the newest below or at the host, else the oldest.
fn effective_image_build(host: u32, builds: &[u32]) -> Option<u32> {
    builds
        .iter()
        .copied()
        .filter(|b| host_runs_image_build(host, *b))
        .max()
        .or_else(|| builds.iter().copied().filter(|b| *b <= host).max())
        .or_else(|| builds.iter().copied().min())
}

/// A label key with more values than this is a per-node label (the same threshold as [`NodeIndex`]'s; the
/// class context stays exact with any threshold, see [`reads_single_nodes`]).
const PER_NODE_KEY_VALUES: usize = 64;

/// Label keys with more than [`PER_NODE_KEY_VALUES`] values.
fn per_node_keys(nodes: &[Node]) -> BTreeSet<String> {
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
/// template. Which nodes fit (and their names in messages) still comes from the full [`NodeIndex`].
fn class_representatives(nodes: &[Node], per_node: &BTreeSet<String>) -> Vec<Node> {
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
fn reads_single_nodes(
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

impl Audit {
    /// An empty audit with these settings.
    pub fn new(settings: Settings) -> Self {
        Audit {
            settings,
            ..Audit::default()
        }
    }

    /// The settings the audit applies.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Applies one change; returns what it touched (for the live update stream).
    pub fn apply(&mut self, change: Change) -> Touched {
        // A reset fed object by object ends before anything else happens.
        let finished = self.finish_reset();
        let mut dirty = Dirty::default();
        match change {
            Change::Reset {
                nodes,
                pods,
                runtime_classes,
            } => return self.reset(&nodes, &pods, &runtime_classes),
            Change::Node(node) => self.upsert_node(&node, &mut dirty),
            Change::NodeDeleted(name) => self.remove_node(&name, &mut dirty),
            Change::Pod(pod) => self.upsert_pod(&pod, &mut dirty),
            Change::PodDeleted(ns, name) => self.remove_pod(&pod_key(&ns, &name), &mut dirty),
            Change::RuntimeClass(entry) => self.upsert_runtime_class(*entry, &mut dirty),
            Change::RuntimeClassDeleted(name) => {
                let before = self.context.runtime_classes.len();
                self.context
                    .runtime_classes
                    .retain(|e| e.object.metadata.name.as_deref() != Some(name.as_str()));
                if self.context.runtime_classes.len() != before {
                    dirty.runtime_classes.insert(name);
                    dirty.runtime_class_objects = true;
                }
            }
        }
        let touched = self.flush(dirty);
        if finished == Touched::default() {
            return touched;
        }
        // A reset was finished on the way: report the union.
        let union = |a: Vec<String>, b: Vec<String>| -> Vec<String> {
            a.into_iter()
                .chain(b)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        Touched {
            nodes: union(finished.nodes, touched.nodes),
            workloads: union(finished.workloads, touched.workloads),
        }
    }

    /// Replaces everything, like [`Change::Reset`], reading the objects in place (a watcher's store need not
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
        *self = Audit {
            settings,
            evaluations,
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

    fn new_node_entry(node: &Node) -> NodeEntry {
        let (os, build) = os_of(node);
        NodeEntry {
            os,
            build,
            findings: Vec::new(),
            report: NodeReport {
                name: node_name(node).to_string(),
                os: NodeOs::from(os),
                build: build.map(|b| WindowsVersion::new(b).label()),
                labels: BTreeMap::new(),
                taints: Vec::new(),
                node_info: BTreeMap::new(),
                pods: Vec::new(),
                findings: Vec::new(),
            },
        }
    }

    fn upsert_node(&mut self, node: &Node, dirty: &mut Dirty) {
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
                    *slot = node;
                }
            }
            Err(i) => nodes.insert(i, node),
        }
        self.nodes.insert(name.clone(), entry);
        self.node_changed(&name, dirty);
        dirty.node_rules.insert(name);
    }

    fn node_changed(&mut self, name: &str, dirty: &mut Dirty) {
        dirty.cluster = true;
        dirty.nodes.insert(name.to_string());
        if let Some(pods) = self.bound.get(name) {
            dirty.pods.extend(pods.iter().cloned());
        }
    }

    fn remove_node(&mut self, name: &str, dirty: &mut Dirty) {
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
        dirty.removed_nodes.insert(name.to_string());
    }

    fn insert_runtime_class(&mut self, entry: RuntimeClassEntry) {
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

    fn upsert_runtime_class(&mut self, entry: RuntimeClassEntry, dirty: &mut Dirty) {
        let name = entry.object.metadata.name.clone().unwrap_or_default();
        if self.context.runtime_classes.contains(&entry) {
            return;
        }
        self.insert_runtime_class(entry);
        dirty.runtime_classes.insert(name);
        dirty.runtime_class_objects = true;
    }

    fn upsert_pod(&mut self, pod: &Pod, dirty: &mut Dirty) {
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
                    report: WorkloadReport {
                        owner: owner.object.clone(),
                        os: WorkloadOs::Any,
                        state: PlacementState::Fine,
                        pods: Vec::new(),
                        findings: Vec::new(),
                    },
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
                        owner::template_spec(pod.spec.clone().unwrap_or_default(), &workload.owner);
                    if spec != template.spec
                        && let Some(object) = template_object(&workload.owner, name, &spec)
                    {
                        template.object = object;
                        template.runtime_class = spec.runtime_class_name.clone();
                        template.spec = spec;
                        dirty.templates.insert((wk.clone(), rev.clone()));
                    }
                }
            }
            None => {
                let spec =
                    owner::template_spec(pod.spec.clone().unwrap_or_default(), &workload.owner);
                if let Some(object) = template_object(&workload.owner, name, &spec) {
                    workload.templates.insert(
                        rev.clone(),
                        Template {
                            object,
                            runtime_class: spec.runtime_class_name.clone(),
                            spec,
                            representative: Some(key.clone()),
                            members: 1,
                            findings: Vec::new(),
                            facts: TemplateFacts::default(),
                            placement: None,
                            at_risk: false,
                        },
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
        } else {
            self.pending.remove(&key);
        }
        match self.pods.get_mut(&key) {
            Some(record) => record.facts = facts,
            None => {
                self.pods.insert(
                    key.clone(),
                    PodRecord {
                        facts,
                        workload: wk.clone(),
                        revision: rev,
                        live: Vec::new(),
                        state: PlacementState::Fine,
                        cells: Vec::new(),
                    },
                );
            }
        }
        if !dirty.all {
            dirty.pods.insert(key);
            dirty.workloads.insert(wk);
        }
    }

    fn unbind(&mut self, node: &str, key: &str) {
        if let Some(set) = self.bound.get_mut(node) {
            set.remove(key);
            if set.is_empty() {
                self.bound.remove(node);
            }
        }
    }

    fn remove_pod(&mut self, key: &str, dirty: &mut Dirty) {
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

    fn uncount(&mut self, cell: (u32, u32)) {
        if let Some(n) = self.matrix.get_mut(&cell) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.matrix.remove(&cell);
            }
        }
    }

    /// Re-audits what `dirty` names and returns what changed.
    fn flush(&mut self, mut dirty: Dirty) -> Touched {
        let mut touched_nodes: BTreeSet<String> = BTreeSet::new();
        let mut touched_workloads: BTreeSet<Arc<str>> = BTreeSet::new();
        if dirty.cluster {
            self.index = NodeIndex::new(&self.context.nodes);
            self.per_node_keys = per_node_keys(&self.context.nodes);
            self.classes.nodes = class_representatives(&self.context.nodes, &self.per_node_keys);
        }
        // The class context carries the RuntimeClasses too.
        if dirty.cluster || dirty.runtime_class_objects {
            self.classes.runtime_classes = self.context.runtime_classes.clone();
        }
        if dirty.runtime_class_objects {
            self.runtime_class_findings = self.evaluate_runtime_classes();
        }
        if dirty.all {
            dirty.node_rules = self.nodes.keys().cloned().collect();
        }
        self.run_node_rules(&dirty.node_rules);
        // Which templates to run the catalogue on.
        let mut todo: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (wk, workload) in &self.workloads {
            for (rev, template) in &workload.templates {
                let named = template
                    .runtime_class
                    .as_ref()
                    .is_some_and(|rc| dirty.runtime_classes.contains(rc));
                if dirty.cluster || named || dirty.templates.contains(&(wk.clone(), rev.clone())) {
                    todo.push((wk.clone(), rev.clone()));
                }
            }
        }
        if !todo.is_empty() {
            self.evaluate_templates(&todo, &mut dirty);
            // The fit of pending pods reads the templates' placement and the nodes.
            dirty.pods.extend(self.pending.iter().cloned());
        }
        let mut fits: FxMap<(Arc<str>, Arc<str>), String> = FxMap::default();
        let nodes: FxMap<&str, LiveNode<'_>> = self
            .nodes
            .iter()
            .map(|(name, e)| {
                let live = LiveNode {
                    name,
                    os: e.os,
                    build: e.build,
                };
                (name.as_str(), live)
            })
            .collect();
        let mut cx = PodPass {
            nodes: &nodes,
            index: &self.index,
            settings: &self.settings,
            fits: &mut fits,
            matrix: &mut self.matrix,
            all: dirty.all,
        };
        if dirty.all {
            for workload in self.workloads.values() {
                for key in &workload.pods {
                    if let Some(record) = self.pods.get_mut(key) {
                        cx.audit(key, record, workload);
                    }
                }
            }
        } else {
            for key in std::mem::take(&mut dirty.pods) {
                if let Some(record) = self.pods.get_mut(&key)
                    && let Some(workload) = self.workloads.get(&record.workload)
                    && cx.audit(&key, record, workload)
                {
                    dirty.workloads.insert(workload.key.clone());
                    if let Some(node) = &record.facts.node {
                        dirty.nodes.insert(node.clone());
                    }
                }
            }
        }
        drop(nodes);
        let workloads: Vec<Arc<str>> = if dirty.all {
            self.workloads.keys().cloned().collect()
        } else {
            dirty.workloads.iter().cloned().collect()
        };
        for wk in workloads {
            if !self.workloads.contains_key(&wk) || self.rebuild_workload(&wk) {
                touched_workloads.insert(wk);
            }
        }
        let nodes: Vec<String> = if dirty.all {
            self.nodes.keys().cloned().collect()
        } else {
            dirty.nodes.iter().cloned().collect()
        };
        for name in nodes {
            let gone = !self.nodes.contains_key(&name) && dirty.removed_nodes.contains(&name);
            if gone || self.rebuild_node(&name) {
                touched_nodes.insert(name);
            }
        }
        Touched {
            nodes: touched_nodes.into_iter().collect(),
            workloads: touched_workloads
                .into_iter()
                .map(|k| k.to_string())
                .collect(),
        }
    }

    fn evaluate_runtime_classes(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        for entry in &self.context.runtime_classes {
            let Ok(mut value) = serde_json::to_value(&entry.object) else {
                continue;
            };
            if let Some(map) = value.as_object_mut() {
                map.insert("apiVersion".into(), Value::from(entry.api_version.as_str()));
                map.insert("kind".into(), Value::from("RuntimeClass"));
            }
            if let Some(object) = Object::from_value("", 0, value, LineMap::default()) {
                evaluate_object(&object, &self.settings, &mut findings);
            }
        }
        sort_findings(&mut findings);
        findings
    }

    fn run_node_rules(&mut self, names: &BTreeSet<String>) {
        for name in names {
            let Ok(i) = self
                .context
                .nodes
                .binary_search_by(|n| node_name(n).cmp(name))
            else {
                continue;
            };
            let mut findings = Vec::new();
            let node = self.context.nodes.get(i);
            // The node rules are about Windows nodes only: skip serializing the others.
            if let Some(object) = node
                .filter(|n| node_os(n) == Some("windows"))
                .and_then(node_object)
            {
                evaluate_object(&object, &self.settings, &mut findings);
            }
            sort_findings(&mut findings);
            if let Some(entry) = self.nodes.get_mut(name) {
                entry.findings = findings;
            }
        }
    }

    /// Runs the catalogue on each template of `todo`; the pods of templates whose result changed are
    /// re-audited.
    fn evaluate_templates(&mut self, todo: &[(Arc<str>, Arc<str>)], dirty: &mut Dirty) {
        let full = Some(&self.context);
        let classes = Some(&self.classes);
        // Resolving reads the RuntimeClasses and the Windows builds, the same in both contexts.
        let resolver = Resolver::new(classes, &self.settings);
        let index = Some(&self.index).filter(|i| !i.is_empty());
        let settings = &self.settings;
        let per_node = &self.per_node_keys;
        let mut changed: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        let mut evaluations = 0u64;
        for (wk, rev) in todo {
            let Some(workload) = self.workloads.get_mut(wk) else {
                continue;
            };
            let owner = workload.owner.object.clone();
            let exempt = owner
                .namespace
                .as_ref()
                .is_some_and(|ns| settings.exempt_namespaces.contains(ns));
            let Some(template) = workload.templates.get_mut(rev) else {
                continue;
            };
            let kind = match workload.owner.kind {
                Some(k) if k != WorkloadKind::Pod => k,
                _ => WorkloadKind::Pod,
            };
            let prefix = kind.pod_spec_path();
            let Some(raw) = template.object.get(&prefix) else {
                continue;
            };
            let pod_template = PodTemplate {
                kind,
                prefix,
                raw,
                spec: template.spec.clone(),
                labels: BTreeMap::new(),
            };
            let runtime_class = template
                .runtime_class
                .as_deref()
                .and_then(|rc| self.context.runtime_class(rc));
            let context = if reads_single_nodes(&template.spec, runtime_class, per_node) {
                full
            } else {
                classes
            };
            let mut findings = Vec::new();
            let placement = if exempt {
                resolver.resolve(&pod_template)
            } else {
                evaluations += 1;
                evaluate_template(
                    &template.object,
                    &pod_template,
                    (context, &resolver, index),
                    settings,
                    &mut findings,
                )
            };
            for f in &mut findings {
                f.object = owner.clone();
            }
            sort_findings(&mut findings);
            let facts = live_state::template_facts(&placement);
            let at_risk = findings.iter().any(|f| f.severity >= Severity::Warning);
            if findings != template.findings
                || facts != template.facts
                || at_risk != template.at_risk
            {
                changed.push((wk.clone(), rev.clone()));
                dirty.workloads.insert(wk.clone());
            }
            template.findings = findings;
            template.facts = facts;
            template.at_risk = at_risk;
            template.placement = Some(placement);
        }
        self.evaluations += evaluations;
        if dirty.all {
            return;
        }
        for (wk, rev) in changed {
            if let Some(workload) = self.workloads.get(&wk) {
                for key in &workload.pods {
                    if self.pods.get(key).is_some_and(|r| r.revision == rev) {
                        dirty.pods.insert(key.clone());
                    }
                }
            }
        }
    }

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

    /// Rebuilds a workload row; returns whether it changed.
    fn rebuild_workload(&mut self, wk: &str) -> bool {
        let Some(workload) = self.workloads.get(wk) else {
            return false;
        };
        let mut findings: Vec<Finding> = workload
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
        let os = WorkloadOs::of_templates(workload.templates.values().map(|t| t.facts.os));
        let report = WorkloadReport {
            owner: workload.owner.object.clone(),
            os,
            state,
            pods,
            findings,
        };
        let Some(workload) = self.workloads.get_mut(wk) else {
            return false;
        };
        let changed = workload.report != report;
        workload.report = report;
        changed
    }

    /// Rebuilds a node row; returns whether it changed.
    fn rebuild_node(&mut self, name: &str) -> bool {
        let Ok(i) = self
            .context
            .nodes
            .binary_search_by(|n| node_name(n).cmp(name))
        else {
            return false;
        };
        let Some(node) = self.context.nodes.get(i) else {
            return false;
        };
        let Some(entry) = self.nodes.get(name) else {
            return false;
        };
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
        let report = NodeReport {
            name: name.to_string(),
            os: NodeOs::from(entry.os),
            build: entry.build.map(|b| WindowsVersion::new(b).label()),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            taints,
            node_info,
            pods,
            findings,
        };
        let Some(entry) = self.nodes.get_mut(name) else {
            return false;
        };
        let changed = entry.report != report;
        entry.report = report;
        changed
    }

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
            workload.report.findings.iter().for_each(&mut count);
            *states.entry(workload.report.state).or_default() += 1;
        }
        for entry in self.nodes.values() {
            entry.findings.iter().for_each(&mut count);
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
                build_matrix.push(BuildMatrixCell {
                    image_build: WindowsVersion::new(i).label(),
                    node_build: WindowsVersion::new(n).label(),
                    compatible: host_runs_image_build(n, i),
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

    /// Every node row, by name.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeReport> + '_ {
        self.nodes.values().map(|e| &e.report)
    }

    /// The row of node `name`.
    pub fn node(&self, name: &str) -> Option<&NodeReport> {
        self.nodes.get(name).map(|e| &e.report)
    }

    /// Every workload row, by `Kind/namespace/name`.
    pub fn workloads(&self) -> impl Iterator<Item = &WorkloadReport> + '_ {
        self.workloads.values().map(|w| &w.report)
    }

    /// The workload row `Kind/namespace/name` (as [`Touched::workloads`] names it).
    pub fn workload(&self, key: &str) -> Option<&WorkloadReport> {
        self.workloads.get(key).map(|w| &w.report)
    }

    /// Findings of the RuntimeClass object rules (counted in the summary; no row shows them).
    pub fn runtime_class_findings(&self) -> &[Finding] {
        &self.runtime_class_findings
    }

    /// The nodes (reduced to what the rules read) and RuntimeClasses: the playground's cluster context.
    pub fn context(&self) -> &ClusterContext {
        &self.context
    }

    /// The number of distinct pod templates the catalogue runs on.
    pub fn template_count(&self) -> usize {
        self.workloads.values().map(|w| w.templates.len()).sum()
    }

    /// How many times the catalogue ran on a template since the audit was created.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// The whole report (clones every row).
    pub fn report(&self) -> AuditReport {
        AuditReport {
            summary: self.summary(),
            nodes: self.nodes().cloned().collect(),
            workloads: self.workloads().cloned().collect(),
        }
    }
}

/// What the live-state pass over pods reads and counts.
struct PodPass<'a> {
    nodes: &'a FxMap<&'a str, LiveNode<'a>>,
    index: &'a NodeIndex,
    settings: &'a Settings,
    /// winplace's fit of each pending template, computed once per pass.
    fits: &'a mut FxMap<(Arc<str>, Arc<str>), String>,
    matrix: &'a mut BTreeMap<(u32, u32), usize>,
    all: bool,
}

impl PodPass<'_> {
    /// Runs the live-state rules on one pod of `workload`; returns whether its findings or state changed
    /// (always, in a full pass).
    fn audit(&mut self, key: &str, record: &mut PodRecord, workload: &Workload) -> bool {
        let Some(template) = workload.templates.get(&record.revision) else {
            return false;
        };
        let (namespace, name) = split_key(key);
        let exempt = self
            .settings
            .exempt_namespaces
            .iter()
            .any(|n| n == namespace);
        let node = record
            .facts
            .node
            .as_deref()
            .and_then(|n| self.nodes.get(n))
            .copied();
        let fit_text = match (&template.placement, live_state::is_pending(&record.facts)) {
            (Some(placement), true) => Some(
                self.fits
                    .entry((record.workload.clone(), record.revision.clone()))
                    .or_insert_with(|| fit_words(placement, self.index))
                    .clone(),
            ),
            _ => None,
        };
        let live = if exempt {
            Vec::new()
        } else {
            live_state::check(
                (namespace, name),
                &record.facts,
                Some(&template.facts),
                node,
                fit_text.as_deref(),
                self.settings,
            )
        };
        let state = if live.iter().any(|f| f.severity >= Severity::Warning) {
            PlacementState::Misplaced
        } else if template.at_risk {
            PlacementState::AtRisk
        } else {
            PlacementState::Fine
        };
        let mut cells: Vec<(u32, u32)> = Vec::new();
        let running = !matches!(record.facts.phase.as_str(), "Succeeded" | "Failed");
        if let (Some(n), true) = (node, running)
            && let (Some(Os::Windows), Some(host)) = (n.os, n.build)
        {
            for image in &template.facts.images {
                if image.os == Some(Os::Windows)
                    && let Some(b) = effective_image_build(host, &image.builds)
                {
                    cells.push((b, host));
                }
            }
            cells.sort_unstable();
            cells.dedup();
        }
        if cells != record.cells {
            for cell in &record.cells {
                if let Some(n) = self.matrix.get_mut(cell) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.matrix.remove(cell);
                    }
                }
            }
            for cell in &cells {
                *self.matrix.entry(*cell).or_default() += 1;
            }
            record.cells = cells;
        }
        let changed = self.all || live != record.live || state != record.state;
        record.live = live;
        record.state = state;
        changed
    }
}

/// winplace's account of the nodes for a pending pod.
fn fit_words(placement: &Placement, index: &NodeIndex) -> String {
    if index.is_empty() {
        return String::new();
    }
    let f = fit(placement, index);
    if f.candidates.is_empty() {
        return format!(
            "winplace finds no node that can take it: {}.",
            f.summary(index)
        );
    }
    let names: Vec<&str> = f
        .candidate_nodes(index)
        .take(3)
        .map(|n| n.name.as_str())
        .collect();
    let more = if f.candidates.count() > names.len() {
        ", …"
    } else {
        ""
    };
    format!(
        "winplace finds {} node(s) that pass its taints and selectors now ({}{more}): the nodes changed since the scheduler tried, or it failed on something else.",
        f.candidates.count(),
        names.join(", ")
    )
}

#[cfg(test)]
mod tests;
