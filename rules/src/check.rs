//! [`Checker`]: the one way into the rules. Built once with the settings, the cluster and what is known
//! about the images ([`Checker::builder`], in the manner of kube-rs's `Config` and its builders), then
//! asked about texts ([`Checker::check_text`], findings handed on as each document is evaluated), single
//! objects ([`Checker::check_value`]) and the files given as cluster context
//! ([`Checker::check_context_files`]).
//!
//! ```
//! use winplace_rules::{Checker, Settings};
//! let settings = Settings::default();
//! let checker = Checker::builder().settings(&settings).build();
//! let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - {name: app, image: mcr.microsoft.com/windows/servercore:ltsc2022}\n";
//! let mut rules = Vec::new();
//! let parse_errors = checker.check_text("pod.yaml", text, |finding| rules.push(finding.rule));
//! assert!(parse_errors.is_empty());
//! assert!(rules.contains(&"windows-pod-without-os-selector".to_string()));
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use crate::finding::{self, Finding, Report};
use crate::infra::{self, ContextFiles};
use crate::input::{self, Document, LineMap, ParseError};
use crate::model::{self, ClusterContext, Object};
use crate::placement::{NodeIndex, PreparedCluster, Resolver, fit, may_admit_linux_labelled};
use crate::rules::{self, ImageFacts, coverage::Coverage};
use crate::settings::Settings;
use crate::windows::ImageClass;

/// The label selector of the nodes the rules read for a pod that cannot go to a Linux node: every node
/// not labelled `kubernetes.io/os: linux` (the Windows nodes, and any node without the label, whose OS
/// its `nodeInfo` tells). Kubernetes' `!=` selects the nodes without the key too. See
/// [`Checker::needs_linux_nodes`].
pub const NOT_LINUX_NODES: &str = "kubernetes.io/os!=linux";

/// The label selector of the nodes labelled `kubernetes.io/os: linux`: the other nodes than those
/// [`NOT_LINUX_NODES`] selects, so that the two lists hold every node exactly once. The rules read no
/// `nodeInfo` of such a node (its OS is its label, and only a Windows node has a build): the Kubewarden
/// policy asks for them without it
/// ([`LINUX_NODE_FIELDS`](crate::model::cluster_objects::LINUX_NODE_FIELDS)).
pub const LINUX_NODES: &str = "kubernetes.io/os=linux";

/// Checks manifests against one set of settings, one cluster and one set of image facts.
///
/// Build it with [`Checker::builder`]; everything left out has its default: default settings, no
/// cluster (the settings stand in for it), every image judged by its name. The cluster's nodes are
/// indexed once, when the checker is built, for every text and object checked with it.
///
/// ```
/// use winplace_rules::{Checker, ClusterContext, Settings};
/// use winplace_rules::rules::ImageFacts;
/// let settings = Settings::default();
/// let cluster = ClusterContext::default();
/// let mut facts = ImageFacts::default();
/// facts.unresolved.insert("contoso.azurecr.io/app:1".into(), "the registry answered 401 Unauthorized".into());
/// let checker = Checker::builder().settings(&settings).cluster(&cluster).images(&facts).build();
/// let report = checker.report("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: contoso.azurecr.io/app:1}]\n");
/// assert!(report.findings.iter().any(|f| f.rule == "image-manifest-unresolved"));
/// ```
pub struct Checker<'a> {
    settings: Cow<'a, Settings>,
    cluster: Option<&'a ClusterContext>,
    /// `cluster`'s nodes, indexed once; `None` without nodes. Shared with the checkers
    /// [`Checker::with_settings`] makes, which check against the same cluster.
    nodes: Option<Arc<NodeIndex>>,
    /// Images whose manifests were read: classified from them.
    manifests: Option<&'a BTreeMap<String, ImageClass>>,
    /// Images whose manifests could not be read, with why: `image-manifest-unresolved`.
    unresolved: Option<&'a BTreeMap<String, String>>,
}

/// Builds a [`Checker`]; see [`Checker::builder`].
#[derive(Default)]
pub struct CheckerBuilder<'a> {
    settings: Option<&'a Settings>,
    cluster: Option<&'a ClusterContext>,
    manifests: Option<&'a BTreeMap<String, ImageClass>>,
    unresolved: Option<&'a BTreeMap<String, String>>,
}

impl<'a> CheckerBuilder<'a> {
    /// The settings (default: [`Settings::default`]).
    pub fn settings(mut self, settings: &'a Settings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// The cluster: Nodes and RuntimeClasses (`kubectl get`, a snapshot, the live cluster, the Nodes of
    /// infrastructure files). `None`, the default, lets the settings stand in for it. Nodes and
    /// RuntimeClasses in a checked text are added to it for that text.
    pub fn cluster(mut self, cluster: impl Into<Option<&'a ClusterContext>>) -> Self {
        self.cluster = cluster.into();
        self
    }

    /// What a registry client learnt about the images (`winplace check --resolve-images`): the images
    /// it read are classified from their manifests, and each container whose image it could not read
    /// gets an `image-manifest-unresolved` info finding.
    pub fn images(mut self, facts: &'a ImageFacts) -> Self {
        self.manifests = Some(&facts.manifests);
        self.unresolved = Some(&facts.unresolved);
        self
    }

    /// The manifests a host read (image reference as written in the pod → what its manifest says; the
    /// Kubewarden policy's OCI capability), without failed look-ups: a failed look-up keeps the image's
    /// name-based classification and is not reported.
    pub fn image_manifests(mut self, manifests: &'a BTreeMap<String, ImageClass>) -> Self {
        self.manifests = Some(manifests);
        self
    }

    /// The checker: the cluster's nodes are indexed here, once.
    pub fn build(self) -> Checker<'a> {
        let nodes = self
            .cluster
            .filter(|c| !c.nodes.is_empty())
            .map(|c| Arc::new(NodeIndex::from_context(c)));
        Checker {
            settings: self
                .settings
                .map_or_else(|| Cow::Owned(Settings::default()), Cow::Borrowed),
            cluster: self.cluster,
            nodes,
            manifests: self.manifests.filter(|m| !m.is_empty()),
            unresolved: self.unresolved.filter(|u| !u.is_empty()),
        }
    }
}

impl<'a> Checker<'a> {
    /// A builder with every default: `Checker::builder().settings(&s).cluster(&c).images(&f).build()`.
    pub fn builder() -> CheckerBuilder<'a> {
        CheckerBuilder::default()
    }

    /// The settings it checks with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The cluster it checks against, as given to the builder.
    pub fn cluster(&self) -> Option<&'a ClusterContext> {
        self.cluster
    }

    /// The images' manifests it classifies images from, as given to the builder (`None` when none).
    pub fn image_manifests(&self) -> Option<&'a BTreeMap<String, ImageClass>> {
        self.manifests
    }

    /// The same checker (cluster, images) with other settings, sharing its index of the cluster's
    /// nodes instead of building a second one: the admission review checks a gated pod with the
    /// settings that leave its placement to the controller.
    ///
    /// ```
    /// use winplace_rules::{Checker, Settings};
    /// let strict = Settings::default();
    /// let checker = Checker::builder().settings(&strict).build();
    /// let mutating = Settings { mutate: true, ..Settings::default() };
    /// let other = checker.with_settings(&mutating);
    /// assert!(other.settings().mutate && !checker.settings().mutate);
    /// ```
    pub fn with_settings<'b>(&'b self, settings: &'b Settings) -> Checker<'b> {
        Checker {
            settings: Cow::Borrowed(settings),
            cluster: self.cluster,
            nodes: self.nodes.clone(),
            manifests: self.manifests,
            unresolved: self.unresolved,
        }
    }

    /// Parses `text` (multi-document YAML or JSON, `List` objects allowed) and evaluates every object
    /// in it, handing each finding to `sink` as soon as its document is evaluated, in [`Report::sort`]'s
    /// order; returns the parse errors. A caller that writes findings out (`winplace check` on 100,000
    /// documents) never holds those of the whole text.
    ///
    /// `file` names the input in findings and parse errors. Nodes and RuntimeClasses anywhere in the text
    /// are context for every object in it; node pools of infrastructure files are checked as the Nodes
    /// they would make; a text with nothing the rules read gets `not-checked`.
    ///
    /// ```
    /// let input = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n---\nkind: [\n";
    /// let checker = winplace_rules::Checker::builder().build();
    /// let mut rules = Vec::new();
    /// let errors = checker.check_text("pods.yaml", input, |f| rules.push(f.rule));
    /// assert!(rules.contains(&"windows-pod-without-os-selector".to_string()));
    /// assert_eq!(errors.len(), 1);
    /// ```
    pub fn check_text(
        &self,
        file: &str,
        text: &str,
        mut sink: impl FnMut(Finding),
    ) -> Vec<ParseError> {
        let settings = self.settings();
        let limits = input::Limits::default();
        // Nodes and RuntimeClasses anywhere in the text are context for every object in it: a first pass
        // keeps only those, so that the second can evaluate and drop one document at a time.
        // Infrastructure files (eksctl, Karpenter, AKS/GKE pool lists, MachineSets) are kept too: they
        // are checked as the nodes they would make, and a Karpenter NodePool needs its EC2NodeClass.
        let mut own = Vec::new();
        let mut pool_documents = Vec::new();
        if may_hold_context(text) {
            input::parse_each(file, text, &limits, &mut |read| {
                if let Ok(doc) = read {
                    own.extend(
                        model::objects(std::slice::from_ref(&doc))
                            .into_iter()
                            .filter(|o| matches!(o.kind.as_str(), "Node" | "RuntimeClass")),
                    );
                    if may_describe_pools(&doc) {
                        pool_documents.push(doc);
                    }
                }
            });
        }
        let pools = infra::read(&pool_documents);
        drop(pool_documents);
        // The node pools' findings are known before the documents are evaluated: merged into their order.
        let mut pool_findings = Vec::new();
        rules::node_pools::check(&pools.pools, settings, &mut pool_findings);
        pool_findings.sort_by(finding::order);
        let mut ordered = InOrder::new(pool_findings, &mut sink);
        let mut coverage = Coverage::default();
        if !pools.pools.is_empty() || !pools.errors.is_empty() {
            coverage.saw_node_pools();
        }
        drop(pools);
        let merged = rules::merged_context(&own, self.cluster);
        drop(own);
        let mut parse_errors = Vec::new();
        self.with_cluster(merged, |cluster| {
            let mut batch = Vec::new();
            input::parse_each(file, text, &limits, &mut |read| match read {
                Ok(doc) => {
                    let objects = model::into_objects(doc);
                    coverage.see(&objects, settings);
                    self.evaluate(&objects, cluster, &mut batch);
                    // A document's findings lie on its own lines, after those of the documents before it.
                    batch.sort_by(finding::order);
                    ordered.send(batch.drain(..));
                }
                Err(e) => parse_errors.push(e),
            });
        });
        let mut last = Vec::new();
        coverage.finish(settings, &mut last);
        ordered.send(last.into_iter());
        ordered.finish();
        parse_errors
    }

    /// [`Checker::check_text`] with the findings collected: the report of `text`, sorted
    /// ([`Report::sort`]).
    ///
    /// ```
    /// let checker = winplace_rules::Checker::builder().build();
    /// let report = checker.report("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n");
    /// assert!(report.findings.iter().any(|f| f.rule == "windows-pod-without-os-selector"));
    /// ```
    pub fn report(&self, file: &str, text: &str) -> Report {
        let mut findings = Vec::new();
        let parse_errors = self.check_text(file, text, |finding| findings.push(finding));
        Report {
            findings,
            parse_errors,
        }
    }

    /// Evaluates one object given as JSON (an admission request's object, a live cluster object); a
    /// Node or a RuntimeClass is context for itself. Findings carry no file or line (the object did not
    /// come from text), in the order the rules emit them; one object's findings are few, so they are
    /// returned together.
    ///
    /// ```
    /// let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
    ///     "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}});
    /// let findings = winplace_rules::Checker::builder().build().check_value(pod);
    /// assert!(findings.iter().any(|f| f.rule == "windows-pod-without-os-selector" && f.line.is_none()));
    /// ```
    pub fn check_value(&self, value: Value) -> Vec<Finding> {
        let document = Document {
            file: String::new(),
            index: 0,
            line: 1,
            value,
            lines: LineMap::default(),
        };
        let mut findings = Vec::new();
        self.check_objects(&model::into_objects(document), &mut findings);
        findings
    }

    /// Findings about the files given as cluster context ([`crate::infra::read_context`]): the rules on
    /// their objects (the node rules on their Nodes), then on their node pools (`node-pool-build-unknown`,
    /// the node rules on the pools' Nodes). The files are their own context: the checker's cluster and
    /// image facts are not read, only its settings.
    ///
    /// ```
    /// use winplace_rules::{Checker, infra};
    /// let pools = r#"[{"name": "win", "osType": "Windows", "osSku": "WindowsAnnual", "count": 1}]"#;
    /// let files = infra::read_context(&[("pools.json", pools)]);
    /// let findings = Checker::builder().build().check_context_files(&files);
    /// assert!(findings.iter().any(|f| f.rule == "node-pool-build-unknown"));
    /// ```
    pub fn check_context_files(&self, files: &ContextFiles) -> Vec<Finding> {
        let own = Checker::builder().settings(self.settings()).build();
        let mut findings = Vec::new();
        own.check_objects(&files.objects, &mut findings);
        rules::node_pools::check(&files.pools, self.settings(), &mut findings);
        findings
    }

    /// The images of `text` worth asking a registry about ([`rules::images_to_resolve`] with these
    /// settings), read one document at a time: what `winplace check --resolve-images` looks up before it
    /// checks the text with what it found.
    ///
    /// ```
    /// let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, image: contoso.azurecr.io/billing:4.2}\n  - {name: b, image: nginx:1.27}\n";
    /// let checker = winplace_rules::Checker::builder().build();
    /// assert_eq!(checker.images_to_resolve("p.yaml", text), ["contoso.azurecr.io/billing:4.2"]);
    /// ```
    pub fn images_to_resolve(&self, file: &str, text: &str) -> Vec<String> {
        let mut images: Vec<String> = Vec::new();
        input::parse_each(file, text, &input::Limits::default(), &mut |read| {
            if let Ok(doc) = read {
                for image in rules::images_to_resolve(&model::into_objects(doc), self.settings()) {
                    if !images.contains(&image) {
                        images.push(image);
                    }
                }
            }
        });
        images
    }

    /// Whether the findings on `value` may read nodes labelled `kubernetes.io/os: linux`, when this
    /// checker's cluster holds every other node ([`NOT_LINUX_NODES`]) and every RuntimeClass: `false`
    /// only when each pod template of `value` can go to no such node (nodeSelector and required affinity,
    /// after the RuntimeClass merge, rule them out; no `nodeName`) and has a node to go to among the
    /// nodes held. Then every rule reads the same from the nodes held as from the whole cluster: the
    /// nodes the pod can go to are all held, and what the rules read of the cluster beyond them is
    /// about its Windows nodes (their builds and taints). A pod no held node takes is reported with the
    /// reasons of every node, so it needs them all; so do Nodes and RuntimeClasses in `value`.
    ///
    /// The Kubewarden policy asks its host for the nodes [`NOT_LINUX_NODES`] selects, and for the whole
    /// List only when this says so (docs/reference/kubewarden-hosting.md §4).
    ///
    /// ```
    /// use winplace_rules::{Checker, ClusterContext};
    /// let windows: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}}})).unwrap();
    /// let held = ClusterContext { nodes: vec![windows], ..Default::default() };
    /// let checker = Checker::builder().cluster(&held).build();
    /// let pod = |selector: serde_json::Value| serde_json::json!({"apiVersion": "v1", "kind": "Pod",
    ///     "metadata": {"name": "p"}, "spec": {"nodeSelector": selector,
    ///     "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}});
    /// assert!(!checker.needs_linux_nodes(&pod(serde_json::json!({"kubernetes.io/os": "windows"}))));
    /// assert!(checker.needs_linux_nodes(&pod(serde_json::json!({}))));
    /// ```
    pub fn needs_linux_nodes(&self, value: &Value) -> bool {
        self.reads_linux_nodes(value, true)
    }

    /// The part of [`Checker::needs_linux_nodes`] that the nodes do not decide: whether `value` holds
    /// Nodes or RuntimeClasses, or a pod template of it names a `nodeName` or may go to a node labelled
    /// `kubernetes.io/os: linux` by its nodeSelector and required affinity after the RuntimeClass merge
    /// (the checker's cluster needs only its RuntimeClasses for this). When this says so,
    /// `needs_linux_nodes` says so whatever nodes are held: the Kubewarden policy then asks its host for
    /// the whole Node list at once instead of the nodes [`NOT_LINUX_NODES`] selects first.
    ///
    /// ```
    /// use winplace_rules::Checker;
    /// let checker = Checker::builder().build();
    /// let pod = |selector: serde_json::Value| serde_json::json!({"apiVersion": "v1", "kind": "Pod",
    ///     "metadata": {"name": "p"}, "spec": {"nodeSelector": selector,
    ///     "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2022"}]}});
    /// assert!(!checker.may_go_to_linux_nodes(&pod(serde_json::json!({"kubernetes.io/os": "windows"}))));
    /// assert!(checker.may_go_to_linux_nodes(&pod(serde_json::json!({}))));
    /// ```
    pub fn may_go_to_linux_nodes(&self, value: &Value) -> bool {
        self.reads_linux_nodes(value, false)
    }

    /// [`Checker::needs_linux_nodes`]; without `by_fit`, not asking whether any node held takes the pod
    /// ([`Checker::may_go_to_linux_nodes`]).
    fn reads_linux_nodes(&self, value: &Value, by_fit: bool) -> bool {
        let document = Document {
            file: String::new(),
            index: 0,
            line: 1,
            value: value.clone(),
            lines: LineMap::default(),
        };
        let objects = model::into_objects(document);
        if objects
            .iter()
            .any(|o| matches!(o.kind.as_str(), "Node" | "RuntimeClass"))
        {
            return true;
        }
        let mut resolver = Resolver::new(self.cluster, self.settings());
        if let Some(manifests) = self.manifests {
            resolver = resolver.with_manifests(manifests);
        }
        rules::checked_templates(&objects, self.settings()).any(|(_, template)| {
            let p = resolver.resolve(&template);
            p.node_name.is_some()
                || may_admit_linux_labelled(p.node_selector.as_ref(), p.required_affinity.as_ref())
                || by_fit
                    && self
                        .nodes
                        .as_ref()
                        .is_none_or(|index| fit(&p, index).candidates.is_empty())
        })
    }

    /// Evaluates `objects` (their own Nodes and RuntimeClasses added to the cluster), appending the
    /// findings unsorted: for the crate's callers that hold parsed objects (the fix loop, what-if).
    pub(crate) fn check_objects(&self, objects: &[Object], findings: &mut Vec<Finding>) {
        let merged = rules::merged_context(objects, self.cluster);
        self.with_cluster(merged, |cluster| self.evaluate(objects, cluster, findings));
    }

    /// Runs `f` with the cluster prepared: `merged` is the checker's cluster with the checked input's own
    /// Nodes and RuntimeClasses ([`rules::merged_context`]); the checker's node index serves when they
    /// add none, else the merged context's nodes are indexed afresh.
    fn with_cluster<R>(
        &self,
        merged: Option<Cow<'_, ClusterContext>>,
        f: impl FnOnce(PreparedCluster<'_>) -> R,
    ) -> R {
        let fresh;
        let nodes = match &merged {
            Some(Cow::Owned(context)) => {
                fresh = Some(context)
                    .filter(|c| !c.nodes.is_empty())
                    .map(NodeIndex::from_context);
                fresh.as_ref()
            }
            Some(Cow::Borrowed(_)) => self.nodes.as_deref(),
            None => None,
        };
        let context = merged.as_deref();
        let mut resolver = Resolver::new(context, self.settings());
        if let Some(manifests) = self.manifests {
            resolver = resolver.with_manifests(manifests);
        }
        f(PreparedCluster {
            context,
            resolver: &resolver,
            nodes,
        })
    }

    /// Every rule on `objects`, then `image-manifest-unresolved` on their containers.
    fn evaluate(&self, objects: &[Object], cluster: PreparedCluster<'_>, out: &mut Vec<Finding>) {
        rules::evaluate_prepared(objects, cluster, self.settings(), out);
        if let Some(unresolved) = self.unresolved {
            rules::check_unresolved(objects, self.settings(), unresolved, out);
        }
    }
}

/// Hands findings to a sink in [`Report::sort`]'s order, merging in findings known beforehand (sorted)
/// as the ones sent in order pass them.
struct InOrder<'s> {
    known: VecDeque<Finding>,
    sink: &'s mut dyn FnMut(Finding),
}

impl<'s> InOrder<'s> {
    fn new(known: Vec<Finding>, sink: &'s mut dyn FnMut(Finding)) -> Self {
        InOrder {
            known: known.into(),
            sink,
        }
    }

    /// Sends `findings` (sorted, and after every finding sent before), each after the known findings
    /// that sort before it; on a tie the sent one goes first, as in a stable sort of the two appended.
    fn send(&mut self, findings: impl Iterator<Item = Finding>) {
        for finding in findings {
            while self
                .known
                .front()
                .is_some_and(|k| finding::order(k, &finding).is_lt())
            {
                if let Some(k) = self.known.pop_front() {
                    (self.sink)(k);
                }
            }
            (self.sink)(finding);
        }
    }

    /// Sends the known findings not sent yet.
    fn finish(self) {
        for k in self.known {
            (self.sink)(k);
        }
    }
}

/// Whether `text` may hold a Node or a RuntimeClass: a `kind` is written `Node` or `RuntimeClass` in
/// YAML and JSON, unless escaped (`\u004e`, YAML's `"\x4e"`), hence the backslash.
fn may_hold_context(text: &str) -> bool {
    text.contains("Node")
        || text.contains("RuntimeClass")
        || text.contains('\\')
        || text.contains("ClusterConfig")
        || text.contains("MachineSet")
        // `az aks nodepool list` and `gcloud container node-pools list` print JSON arrays.
        || text.trim_start().starts_with('[')
}

/// Whether a document may be an infrastructure file's (see [`infra::read`]): the kinds it reads, or
/// no kind at all (AKS and GKE pool lists).
fn may_describe_pools(doc: &Document) -> bool {
    matches!(
        doc.value.get("kind").and_then(|k| k.as_str()),
        None | Some("ClusterConfig" | "NodePool" | "EC2NodeClass" | "MachineSet")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::{ImageOs, ImageSource};

    /// What [`Checker::check_text`] did before it streamed: every document and object held at once
    /// (also what `check --resolve-images` did, with image facts, until it streamed too).
    fn all_at_once(file: &str, text: &str, checker: &Checker<'_>) -> Report {
        let settings = checker.settings();
        let parsed = input::parse(file, text, &input::Limits::default());
        let objects = model::objects(&parsed.documents);
        let mut findings = Vec::new();
        checker.check_objects(&objects, &mut findings);
        let mut report = Report {
            findings,
            parse_errors: parsed.errors,
        };
        let pools = infra::read(&parsed.documents);
        let mut coverage = rules::coverage::Coverage::default();
        coverage.see(&objects, settings);
        if !pools.pools.is_empty() || !pools.errors.is_empty() {
            coverage.saw_node_pools();
        }
        coverage.finish(settings, &mut report.findings);
        rules::node_pools::check(&pools.pools, settings, &mut report.findings);
        report.sort();
        report
    }

    #[test]
    fn node_pools_findings_are_merged_in_line_order() {
        // Pods before, between and after an eksctl ClusterConfig whose Windows node group is
        // untainted: the pool's findings come out among the pods' in line order, as a sort would put them.
        let pod = |name: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n"
            )
        };
        let eksctl = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: eu-west-1}\nnodeGroups:\n- name: win\n  amiFamily: WindowsServer2022CoreContainer\n  desiredCapacity: 2\n- name: lin\n  amiFamily: AmazonLinux2023\n";
        let text = format!("{}---\n{eksctl}---\n{}---\n{eksctl}", pod("a"), pod("b"));
        let checker = Checker::builder().build();
        let streamed = checker.report("t.yaml", &text);
        assert_eq!(streamed, all_at_once("t.yaml", &text, &checker));
        let lines: Vec<u32> = streamed.findings.iter().filter_map(|f| f.line).collect();
        let pools_first_line = 9;
        assert!(
            lines.iter().any(|l| *l < pools_first_line)
                && lines.iter().any(|l| *l >= pools_first_line),
            "{lines:?}"
        );
        assert!(
            streamed.findings.iter().any(|f| f.object.kind != "Pod"),
            "the node groups have findings: {:?}",
            streamed
                .findings
                .iter()
                .map(|f| (&f.rule, f.line))
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn streaming_check_equals_the_whole_text_at_once_with_context_anywhere_in_it() {
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  runtimeClassName: win\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        // The Node and the RuntimeClass come after the pod and in a List: still its context.
        let later = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: w1\n    labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}\n- apiVersion: node.k8s.io/v1\n  kind: RuntimeClass\n  metadata: {name: win}\n  handler: runhcs-wcow-process\n";
        let broken = "kind: [\n";
        let text = format!("{pod}---\n{broken}---\n{later}");
        let plain = Checker::builder().build();
        let streamed = plain.report("t.yaml", &text);
        assert_eq!(streamed, all_at_once("t.yaml", &text, &plain));
        assert_eq!(streamed.parse_errors.len(), 1);
        let without_context = plain.report("p.yaml", pod);
        assert_ne!(
            streamed
                .findings
                .iter()
                .map(|f| &f.rule)
                .collect::<Vec<_>>(),
            without_context
                .findings
                .iter()
                .map(|f| &f.rule)
                .collect::<Vec<_>>(),
            "the later Node and RuntimeClass change the findings"
        );
        // With context given too, over every corpus input.
        let corpus = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus"));
        let mut inputs = 0;
        for entry in std::fs::read_dir(corpus).expect("corpus").flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("input.yaml")) else {
                continue;
            };
            let context = std::fs::read_to_string(entry.path().join("cluster.yaml"))
                .ok()
                .map(|c| {
                    let parsed = input::parse("c", &c, &input::Limits::default());
                    ClusterContext::from_objects(&model::objects(&parsed.documents)).0
                });
            let checker = Checker::builder().cluster(context.as_ref()).build();
            assert_eq!(
                checker.report("i.yaml", &text),
                all_at_once("i.yaml", &text, &checker),
                "{}",
                entry.path().display()
            );
            inputs += 1;
        }
        assert!(inputs > 10, "{inputs} corpus inputs");
    }

    /// `check --resolve-images` streams too: with image facts (a manifest read, a look-up failed), the
    /// findings handed on document by document are those of the whole text at once, in its order.
    #[test]
    fn streaming_with_image_facts_equals_the_whole_text_at_once() {
        let pod = |name: &str, image: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeSelector: {{kubernetes.io/os: windows}}\n  containers:\n  - name: app\n    image: {image}\n"
            )
        };
        let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: w1\n  labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}\n";
        let text = format!(
            "{}---\n{}---\n{node}---\n{}",
            pod("a", "contoso.azurecr.io/app:1"),
            pod("b", "contoso.azurecr.io/gone:2"),
            pod("c", "contoso.azurecr.io/app:1")
        );
        let mut facts = ImageFacts::default();
        facts.manifests.insert(
            "contoso.azurecr.io/app:1".into(),
            ImageClass {
                os: ImageOs::Windows {
                    builds: vec![20348],
                },
                source: ImageSource::Manifest,
                reason: "the manifest of contoso.azurecr.io/app:1 says Windows Server 2022".into(),
            },
        );
        facts
            .unresolved
            .insert("contoso.azurecr.io/gone:2".into(), "timeout".into());
        let checker = Checker::builder().images(&facts).build();
        assert_eq!(
            checker.images_to_resolve("t.yaml", &text),
            ["contoso.azurecr.io/app:1", "contoso.azurecr.io/gone:2"]
        );
        let mut streamed = Vec::new();
        let errors = checker.check_text("t.yaml", &text, |f| streamed.push(f));
        let whole = all_at_once("t.yaml", &text, &checker);
        assert_eq!((&streamed, &errors), (&whole.findings, &whole.parse_errors));
        let rules: Vec<&str> = streamed.iter().map(|f| f.rule.as_str()).collect();
        assert!(rules.contains(&"image-manifest-unresolved"), "{rules:?}");
        // The manifest's build (2022) on a 2019-only cluster: the only node cannot run the pods with it.
        assert!(
            streamed
                .iter()
                .any(|f| f.object.name == "a" && f.rule == "schedulable-on-incompatible-build"),
            "{rules:?}"
        );
        // The same without the facts judges by name: no manifest build, no unresolved note.
        let by_name = Checker::builder().build().report("t.yaml", &text);
        assert_ne!(by_name.findings, streamed);
    }
}
