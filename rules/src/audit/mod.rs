//! The cluster audit: the catalogue applied to every workload of a live cluster, plus the live-state and
//! node rules, kept current as objects change.
//!
//! Pure: no I/O, no clocks — the caller feeds [`Change`]s and reads the reports.
//!
//! How it scales (docs/limits.md, "Memory"): pods are grouped into workload rows by owner ([`owner`]), and each
//! workload's pods into *templates* by their revision label. The catalogue runs once per template, on a
//! representative pod, against a [`Resolver`](crate::placement::Resolver) and a [`NodeIndex`] built once per change of the nodes; the
//! live-state rules (cheap, per pod) read the template's resolved placement. So a full audit costs
//! templates × node classes for the catalogue plus a constant per pod, and holds a few hundred bytes per pod
//! (the pods themselves are not kept).
//!
//! Incremental updates ([`Audit::apply`]):
//! * a pod change re-audits that pod (live-state rules), its workload row and its node's row; a pod of a new
//!   template has the catalogue run on it once;
//! * a node change that leaves what the rules read unchanged (labels, taints, cordon, `nodeInfo`: conditions
//!   and heartbeats are dropped on the way in) touches nothing;
//! * a node's labels changing (but not its OS or build labels), or a Linux node's taints or cordon, is
//!   *local*: the node index is updated in place and only the templates whose fit on that node changes
//!   ([`node_change_reaches`](crate::placement::node_change_reaches): it rejects them for other reasons, or
//!   stops or starts taking them) re-run, with the pods bound to the node and the pending pods of those
//!   templates;
//! * any other node change (a node added or deleted, its OS or build, a Windows node's taints, which every
//!   Windows pod's tolerations and every Linux pod's advice read) rebuilds the index and re-runs the
//!   catalogue on every template, then re-audits the pods of templates whose result changed, the pods bound
//!   to that node and the pending pods;
//! * a RuntimeClass change re-runs the catalogue on the templates that name it.
//!
//! The engine lives in rooms (files of this folder):
//! * `mod.rs`: the engine's state ([`Audit`] and its records), [`Audit::apply`] and the readers;
//! * `reset.rs`: a full relist, fed at once or object by object;
//! * `changes.rs`: how one object's change updates the state and marks what to re-audit;
//! * `flush.rs`: re-auditing what a change marked (a relist's pods and rows on both cores: `both_cores.rs`);
//! * `gated.rs`: the pods that carry winplace's scheduling gate, and since when;
//! * `classes.rs`: the node classes the template rules see, and the per-node label keys;
//! * `templates.rs`: the catalogue on each pod template; `object_rules.rs`: the node and RuntimeClass rules;
//! * `live.rs`: the live-state rules per pod, and the build matrix;
//! * `rows.rs`: the node and workload rows; `summary.rs`: the cluster at a glance; `node_group.rs`: the
//!   grouping of nodes by OS and build ([`NodeGroupKey`]); [`report`]: the JSON types; [`owner`]: workload
//!   rows by owner, and which pod of a list is the first of its template
//!   ([`owner::TemplatesMet`], for readers that decode pods narrowly: [`Audit::reset_listed_pod`]).
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

mod both_cores;
mod changes;
mod classes;
mod flush;
mod gated;
mod images;
mod incidents;
mod live;
mod node_group;
mod object_rules;
pub mod owner;
pub mod report;
mod reset;
mod rows;
mod spec_text;
mod summary;
mod templates;

pub use gated::GatedPods;
pub use incidents::{EVENTS_PER_POD, MAX_WAITING_PODS};
pub use node_group::NodeGroupKey;
pub use report::*;

use std::borrow::Borrow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use rustc_hash::FxHashMap;

use crate::finding::Finding;
use crate::model::{ClusterContext, RuntimeClassEntry};
use crate::placement::{NodeIndex, Placement};
use crate::rules::live_state::{PodFacts, TemplateFacts};
use crate::settings::Settings;
use crate::windows::Os;
use owner::Owner;
use reset::Resetting;
use spec_text::SpecText;

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
    /// An Event about a pod that a signature explains was added or changed.
    Event(Box<crate::model::events::PodEvent>),
    /// An Event was deleted (its `namespace/name` and its pod's).
    EventDeleted {
        /// The Event's `namespace/name`.
        key: String,
        /// Its pod's `namespace/name`.
        pod: String,
    },
}

/// One template of a workload: a representative pod's spec and what the catalogue found in it.
#[derive(Debug, Clone)]
struct Template {
    /// The name of the object the rules read (the representative pod's, for bare pods and custom
    /// owners): that object, the workload with `spec` as its pod template, is built when the catalogue
    /// runs ([`templates::template_object`]) rather than kept, which would hold the spec twice.
    object_name: String,
    /// The representative's spec, as compact JSON ([`SpecText`]: a tenth of the typed spec's bytes).
    spec: SpecText,
    /// The representative pod; its updates replace the spec (`None` once it is gone).
    representative: Option<Arc<str>>,
    /// `spec.runtimeClassName`.
    runtime_class: Option<String>,
    /// Pods made from it.
    members: usize,
    /// The catalogue's findings, reported under the workload (the row shares them).
    findings: Vec<Arc<Finding>>,
    /// What the live rules read of the placement.
    facts: TemplateFacts,
    /// The resolved placement's [scheduling part](Placement::scheduling_part), for the fit of pending
    /// pods and whether a node's change reaches the template.
    placement: Option<Placement>,
    /// A warning or error among `findings`.
    at_risk: bool,
    /// Its distinct images as judged (OS, builds, where they came from), for the workload's row.
    images: Vec<crate::windows::ImageProvenance>,
}

#[derive(Debug, Clone)]
struct Workload {
    /// `Kind/namespace/name`.
    key: Arc<str>,
    owner: Owner,
    /// Templates by revision label value. Boxed: a B-tree leaf allocates room for eleven values, and a
    /// template is kilobytes, so most workloads (one template) would pay for ten empty ones.
    templates: BTreeMap<Arc<str>, Box<Template>>,
    /// Pods (`namespace/name`), sorted.
    pods: BTreeSet<Arc<str>>,
    /// Shared with the reports handed out ([`Audit::report`]), so that publishing one costs no copy.
    report: Arc<WorkloadReport>,
}

#[derive(Debug, Clone)]
struct PodRecord {
    facts: PodFacts,
    /// Key of its workload.
    workload: Arc<str>,
    /// Its template (revision label value).
    revision: Arc<str>,
    /// Live-state findings (its workload's and node's rows share them).
    live: Vec<Arc<Finding>>,
    state: PlacementState,
    /// `(image build, node build)` cells of the build matrix this pod counts in.
    cells: Vec<(u32, u32)>,
    /// What its status says that a signature explains.
    status_incidents: Vec<incidents::StatusIncident>,
    /// The latest explained Events about it.
    events: Vec<crate::model::events::PodEvent>,
}

#[derive(Debug, Clone)]
struct NodeEntry {
    os: Option<Os>,
    build: Option<u32>,
    /// Node-rule findings (the row shares them).
    findings: Vec<Arc<Finding>>,
    /// Shared like [`Workload::report`].
    report: Arc<NodeReport>,
}

/// What a change leaves to re-audit.
#[derive(Debug, Default, Clone)]
struct Dirty {
    /// Everything (a reset).
    all: bool,
    /// The nodes changed in what the rules read: rebuild the index and the classes.
    cluster: bool,
    /// Re-run every template after the nodes changed (a node added, or a change every template can see:
    /// see [`NodeEdit::is_local`]); otherwise only the templates whose fit a [`NodeEdit`] reaches.
    all_templates: bool,
    /// Nodes changed in place, before and after (trimmed).
    node_edits: Vec<NodeEdit>,
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

/// One node changed in place: the node before and after (both trimmed to what the rules read).
#[derive(Debug, Clone)]
struct NodeEdit {
    before: Node,
    after: Node,
}

impl NodeEdit {
    /// Whether only the templates whose fit on this node changes can see this change: the node's labels
    /// changed (but not the ones that say its OS or build), or a Linux node's taints or cordon changed.
    ///
    /// Everything else the template rules read of the nodes is cluster-wide: the Windows builds (image
    /// compatibility, build advice), whether there are Windows nodes, the Windows nodes' taints (the
    /// tolerations a Windows pod needs, the taint that keeps Linux pods off them), the node info. A change to
    /// any of those re-runs every template, as a new node does.
    fn is_local(&self) -> bool {
        use crate::placement::{BETA_OS_LABEL, BUILD_LABEL, OS_LABEL};
        let (before, after) = (&self.before, &self.after);
        let os = |n: &Node| os_of(n);
        if os(before) != os(after) {
            return false;
        }
        let windows = os(before).0 == Some(Os::Windows);
        let label = |n: &Node, k: &str| n.metadata.labels.as_ref().and_then(|l| l.get(k)).cloned();
        if [OS_LABEL, BETA_OS_LABEL, BUILD_LABEL]
            .iter()
            .any(|k| label(before, k) != label(after, k))
        {
            return false;
        }
        // What may differ: the labels, and for a Linux node the taints and the cordon.
        let rest = |n: &Node| {
            let mut n = n.clone();
            n.metadata.labels = None;
            if !windows && let Some(spec) = n.spec.as_mut() {
                spec.taints = None;
                spec.unschedulable = None;
            }
            n
        };
        rest(before) == rest(after)
    }
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
    /// The nodes prepared for fits; its per-node label keys (hostname, ...) make the templates that read
    /// them see every node.
    index: NodeIndex,
    nodes: BTreeMap<String, NodeEntry>,
    /// Boxed: the table holds a pointer per pod, so that growing it moves 8 bytes per pod, not a record
    /// (at 150,000 pods its growth copied and faulted in some 130 MB of records).
    pods: FxHashMap<Arc<str>, Box<PodRecord>>,
    workloads: BTreeMap<Arc<str>, Workload>,
    /// Pods by the node they are bound to (also for nodes not, or not yet, known).
    bound: FxHashMap<String, BTreeSet<Arc<str>>>,
    /// Unbound pods the scheduler failed to place on taints or selectors.
    pending: BTreeSet<Arc<str>>,
    /// Pods per `(image build, node build)`.
    matrix: BTreeMap<(u32, u32), usize>,
    runtime_class_findings: Vec<Finding>,
    /// How many times the catalogue ran on a template (for tests and metrics).
    evaluations: u64,
    /// A reset being fed object by object.
    resetting: Option<Box<Resetting>>,
    /// What a registry client learnt about the images ([`Audit::set_image_facts`]).
    image_facts: crate::rules::ImageFacts,
    /// Explained Events about pods not listed yet, by pod (bounded: [`MAX_WAITING_PODS`]).
    waiting_events: FxHashMap<String, Vec<crate::model::events::PodEvent>>,
    /// The pods that carry the placement gate, with their creation time in seconds since the epoch
    /// ([`gated`]): few, and only while they wait for the placement controller.
    gated: FxHashMap<Arc<str>, Option<i64>>,
}

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

/// A [`pod_key`] back into `(namespace, name)`.
///
/// ```
/// use winplace_rules::audit::{pod_key, split_key};
/// assert_eq!(split_key(&pod_key("shop", "web-1")), ("shop", "web-1"));
/// ```
pub fn split_key(key: &str) -> (&str, &str) {
    key.split_once('/').unwrap_or(("", key))
}

/// `metadata.name` (empty when missing).
fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or("")
}

/// The node's OS and, for Windows, its build.
fn os_of(node: &Node) -> (Option<Os>, Option<u32>) {
    crate::model::node_os_build(node)
}

/// Findings in report order (object, path, rule, message), without duplicates.
fn sort_findings<F: Borrow<Finding>>(findings: &mut Vec<F>) {
    findings.sort_by(|a, b| {
        let (a, b) = (a.borrow(), b.borrow());
        (&a.object, &a.path, &a.rule, &a.message).cmp(&(&b.object, &b.path, &b.rule, &b.message))
    });
    findings.dedup_by(|a, b| (*a).borrow() == (*b).borrow());
}

/// `fresh` as the shared findings to keep: `held` itself when they are equal (so that rows built from it
/// stay shared and compare equal at a pointer's cost), else `fresh` wrapped.
fn share_findings(held: &mut Vec<Arc<Finding>>, fresh: Vec<Finding>) -> bool {
    let same = held.len() == fresh.len() && held.iter().zip(&fresh).all(|(h, f)| **h == *f);
    if !same {
        *held = fresh
            .into_iter()
            .map(|mut f| {
                // Held for as long as the object lives: a message built by `format!` carries up to
                // twice its length in spare capacity (a kilobyte per misplaced pod).
                f.message.shrink_to_fit();
                f.path.shrink_to_fit();
                Arc::new(f)
            })
            .collect();
    }
    !same
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

    /// Reads the retirement calendar at `date` from now on (setting `lifecycle.date`; the server moves it
    /// when the day changes, `server/src/clock.rs`): the node rules, the only ones that read the date, run
    /// again on every node, and the nodes whose findings changed are returned. Nothing runs when the date
    /// is the one already applied.
    pub fn set_date(&mut self, date: crate::lifecycle::Date) -> Touched {
        if self.settings.lifecycle.date == Some(date) {
            return Touched::default();
        }
        self.settings.lifecycle.date = Some(date);
        let names: BTreeSet<String> = self.nodes.keys().cloned().collect();
        self.flush(Dirty {
            nodes: names.clone(),
            node_rules: names,
            ..Dirty::default()
        })
    }

    /// Applies one change; returns what it touched (for the live update stream).
    pub fn apply(&mut self, change: Change) -> Touched {
        self.apply_all([change])
    }

    /// Applies changes in order and re-audits what they touched once, at the end: each pod, workload
    /// row, node row and template they reach is re-audited once however many of the changes reach it,
    /// so a flood of pod events costs the objects it touched, not one pass per event (a node's row
    /// lists its pods: rebuilt per event, a flood onto one node would cost the square of its pods).
    /// Returns what they touched together.
    ///
    /// ```
    /// use winplace_rules::audit::{Audit, Change};
    /// use k8s_openapi::api::core::v1::{Node, Pod};
    /// let node: Node = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "lin-1", "labels": {"kubernetes.io/os": "linux"}}})).unwrap();
    /// let pod = |i: usize| -> Pod { serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": format!("p-{i}"), "namespace": "apps"},
    ///     "spec": {"nodeName": "lin-1", "containers": [{"name": "c", "image": "nginx:1.27"}]}})).unwrap() };
    /// let mut audit = Audit::default();
    /// audit.apply(Change::Node(Box::new(node)));
    /// let touched = audit.apply_all((0..100).map(|i| Change::Pod(Box::new(pod(i)))));
    /// assert_eq!((touched.nodes.len(), touched.workloads.len()), (1, 100));
    /// let gone = audit.apply_all((0..100).map(|i| Change::PodDeleted("apps".into(), format!("p-{i}"))));
    /// assert_eq!((gone.workloads.len(), audit.summary().pods), (100, 0));
    /// ```
    pub fn apply_all(&mut self, changes: impl IntoIterator<Item = Change>) -> Touched {
        // A reset fed object by object ends before anything else happens.
        let mut touched = self.finish_reset();
        let mut dirty: Option<Dirty> = None;
        for change in changes {
            if let Change::Reset {
                nodes,
                pods,
                runtime_classes,
            } = change
            {
                // What came before the reset is re-audited by it.
                drop(dirty.take());
                touched = touched.union(self.reset(&nodes, &pods, &runtime_classes));
                continue;
            }
            let dirty = dirty.get_or_insert_with(Dirty::default);
            match change {
                Change::Reset { .. } => {}
                Change::Node(node) => self.upsert_node(&node, dirty),
                Change::NodeDeleted(name) => self.remove_node(&name, dirty),
                Change::Pod(pod) => self.upsert_pod(&pod, dirty),
                Change::PodDeleted(ns, name) => self.remove_pod(&pod_key(&ns, &name), dirty),
                Change::RuntimeClass(entry) => self.upsert_runtime_class(*entry, dirty),
                Change::RuntimeClassDeleted(name) => self.remove_runtime_class(name, dirty),
                Change::Event(event) => self.upsert_event(*event, dirty),
                Change::EventDeleted { key, pod } => self.remove_event(&key, &pod, dirty),
            }
        }
        match dirty {
            Some(dirty) => {
                let flushed = self.flush(dirty);
                if touched == Touched::default() {
                    flushed
                } else {
                    touched.union(flushed)
                }
            }
            None => touched,
        }
    }

    /// Every node row, by name.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeReport> + '_ {
        self.nodes.values().map(|e| &*e.report)
    }

    /// The row of node `name`.
    pub fn node(&self, name: &str) -> Option<&NodeReport> {
        self.nodes.get(name).map(|e| &*e.report)
    }

    /// Every workload row, by `Kind/namespace/name`.
    pub fn workloads(&self) -> impl Iterator<Item = &WorkloadReport> + '_ {
        self.workloads.values().map(|w| &*w.report)
    }

    /// The keys of every workload row (`Kind/namespace/name`, as [`Touched::workloads`] names them), in
    /// order.
    pub fn workload_keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.workloads.keys().map(|k| &**k)
    }

    /// The workload row `Kind/namespace/name` (as [`Touched::workloads`] names it).
    pub fn workload(&self, key: &str) -> Option<&WorkloadReport> {
        self.workloads.get(key).map(|w| &*w.report)
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

    /// The whole report. Its rows are shared with the audit (no row is copied); the audit replaces a
    /// row it rebuilds, so the report stays as it was.
    pub fn report(&self) -> AuditReport {
        AuditReport {
            summary: self.summary(),
            nodes: self.nodes.values().map(|e| e.report.clone()).collect(),
            workloads: self.workloads.values().map(|w| w.report.clone()).collect(),
            incidents: self.shared_incidents().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests;
