//! What-if: a cluster changed by a plan (Windows builds or node pools removed, pools added), and each
//! workload's errors before and after, with what would make a newly failing workload fit.
//!
//! The same rules run on both clusters; only error findings of the catalogue's manifest rules count (live
//! state, such as where a pod happens to run now, says nothing about a planned cluster).
//!
//! ```
//! use winplace_rules::{Settings, infra, input, model, plan};
//! let nodes = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: w19, labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763, agentpool: win19}}}\n- {apiVersion: v1, kind: Node, metadata: {name: l1, labels: {kubernetes.io/os: linux, agentpool: sys}}}\n";
//! let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers: [{name: c, image: 'mcr.microsoft.com/windows/servercore:ltsc2019'}]\n";
//! let ctx = infra::read_context(&[("nodes.yaml", nodes)]).context;
//! let objects = model::objects(&input::parse("app.yaml", app, &input::Limits::default()).documents);
//! let the_plan = plan::Plan { remove_pools: vec!["win19".into()], ..plan::Plan::default() };
//! let report = plan::plan_objects(&objects, &ctx, &the_plan, &Settings::default());
//! assert_eq!(report.changes[0].object, "Pod/default/app");
//! assert!(report.changes[0].after.contains(&"no-schedulable-node".to_string()));
//! assert!(report.breaks());
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use serde::{Deserialize, Serialize};

use crate::check::Checker;
use crate::finding::{Finding, Severity};
use crate::model::{self, ClusterContext, Object, node_os, node_windows_build};
use crate::rules::catalog::{self, Family};
use crate::settings::Settings;
use crate::windows::builds::{WindowsVersion, build_display, build_info};

/// The labels that name a node's pool, per platform (`platforms.md` §1.4, §2.1, §3.3, §4.4).
pub const POOL_LABELS: &[&str] = &[
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "karpenter.sh/nodepool",
    "cloud.google.com/gke-nodepool",
    "machine.openshift.io/cluster-api-machineset",
];

/// A node's pool: the first of [`POOL_LABELS`] it carries.
pub fn node_pool(node: &Node) -> Option<&str> {
    let labels = node.metadata.labels.as_ref()?;
    POOL_LABELS
        .iter()
        .find_map(|l| labels.get(*l))
        .map(String::as_str)
}

/// The pool a node belongs to: [`node_pool`], else the `<pool>` of a `<pool>-<n>` name (the names
/// [`crate::infra::NodePool::nodes`] gives), else the node's name.
pub fn pool_name(node: &Node) -> String {
    if let Some(pool) = node_pool(node) {
        return pool.to_string();
    }
    let name = node.metadata.name.as_deref().unwrap_or("");
    match name.rsplit_once('-') {
        Some((pool, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            pool.to_string()
        }
        _ => name.to_string(),
    }
}

/// A Windows build as `10.0.17763`, from `10.0.17763`, `17763`, `2019` or `ltsc2019`.
pub fn parse_build(text: &str) -> Option<String> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix("ltsc").unwrap_or(&t);
    if let Some(v) = WindowsVersion::parse(t) {
        return Some(WindowsVersion::new(v.build).label());
    }
    let n: u32 = t.parse().ok()?;
    if build_info(n).is_some() {
        return Some(WindowsVersion::new(n).label());
    }
    let year = crate::infra::ltsc_build(t)?;
    Some(year.to_string())
}

/// Changes to a cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// Windows builds (`10.0.17763`) whose nodes go away.
    pub remove_builds: Vec<String>,
    /// Pools (by [`node_pool`], else the node name's `<pool>-<n>` prefix) that go away.
    pub remove_pools: Vec<String>,
    /// Nodes that come (from Node files or infrastructure files).
    pub add: Vec<Node>,
}

impl Plan {
    /// Whether the plan removes `node`.
    pub fn removes(&self, node: &Node) -> bool {
        let build_gone = node_os(node) == Some("windows")
            && node_windows_build(node).is_some_and(|b| self.remove_builds.contains(&b));
        build_gone || self.remove_pools.contains(&pool_name(node))
    }

    /// The planned cluster: `context` without the removed nodes, with the added ones.
    pub fn apply(&self, context: &ClusterContext) -> ClusterContext {
        let mut out = context.clone();
        out.nodes.retain(|n| !self.removes(n));
        out.nodes.extend(self.add.iter().cloned());
        out
    }
}

/// One workload whose errors change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadChange {
    /// `Kind/namespace/name`.
    pub object: String,
    /// Rule ids of its errors on the current cluster (sorted, distinct).
    pub before: Vec<String>,
    /// Rule ids of its errors on the planned cluster.
    pub after: Vec<String>,
    /// For a workload with new errors: the messages of those errors and what would make it fit.
    pub fixes: Vec<String>,
}

impl WorkloadChange {
    /// Errors it gains.
    pub fn new_errors(&self) -> Vec<&String> {
        self.after
            .iter()
            .filter(|r| !self.before.contains(r))
            .collect()
    }
}

/// The outcome of a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// Workloads whose errors change (only those).
    pub changes: Vec<WorkloadChange>,
    /// Windows builds of the cluster before, with their node counts.
    pub builds_before: BTreeMap<String, usize>,
    /// Windows builds after.
    pub builds_after: BTreeMap<String, usize>,
    /// Linux nodes before and after.
    pub linux_nodes: (usize, usize),
}

impl PlanReport {
    /// Whether some workload gains an error.
    pub fn breaks(&self) -> bool {
        self.changes.iter().any(|c| !c.new_errors().is_empty())
    }

    /// Workloads that gain an error.
    pub fn broken(&self) -> impl Iterator<Item = &WorkloadChange> {
        self.changes.iter().filter(|c| !c.new_errors().is_empty())
    }

    /// Workloads whose errors all go away.
    pub fn fixed(&self) -> impl Iterator<Item = &WorkloadChange> {
        self.changes
            .iter()
            .filter(|c| c.after.is_empty() && !c.before.is_empty())
    }
}

/// Windows builds (with node counts) and Linux nodes of a cluster.
fn matrix(context: &ClusterContext) -> (BTreeMap<String, usize>, usize) {
    let mut builds = BTreeMap::new();
    let mut linux = 0;
    for n in &context.nodes {
        match node_os(n) {
            Some("windows") => {
                let b = node_windows_build(n).unwrap_or_else(|| "unknown".into());
                *builds.entry(b).or_insert(0) += 1;
            }
            Some("linux") => linux += 1,
            _ => {}
        }
    }
    (builds, linux)
}

/// Errors of manifest rules, by workload (`Kind/namespace/name`).
pub type ErrorsByWorkload = BTreeMap<String, Vec<Finding>>;

/// Keeps the error findings of catalogue rules that do not depend on live state.
pub fn planned_errors(findings: impl IntoIterator<Item = Finding>) -> ErrorsByWorkload {
    let mut out: ErrorsByWorkload = BTreeMap::new();
    for f in findings {
        let live = catalog::rule(&f.rule).is_some_and(|m| m.family == Family::LiveState);
        if f.severity == Severity::Error && !live && f.object.kind != "Node" {
            out.entry(f.object.display_name()).or_default().push(f);
        }
    }
    out
}

/// Compares the errors of each workload on two clusters. `images` are each workload's images (for the
/// retag suggestion); `after` is the planned cluster.
pub fn compare(
    before: &ErrorsByWorkload,
    after: &ErrorsByWorkload,
    images: &BTreeMap<String, Vec<String>>,
    contexts: (&ClusterContext, &ClusterContext),
) -> PlanReport {
    let ids = |fs: Option<&Vec<Finding>>| -> Vec<String> {
        let set: BTreeSet<String> = fs.into_iter().flatten().map(|f| f.rule.clone()).collect();
        set.into_iter().collect()
    };
    let (builds_before, linux_before) = matrix(contexts.0);
    let (builds_after, linux_after) = matrix(contexts.1);
    let newest_after = builds_after
        .keys()
        .filter_map(|b| WindowsVersion::parse(b))
        .map(|v| v.build)
        .max();
    let workloads: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let mut changes = Vec::new();
    for w in workloads {
        let (b, a) = (ids(before.get(w)), ids(after.get(w)));
        if a == b {
            continue;
        }
        let mut fixes = Vec::new();
        for f in after.get(w).into_iter().flatten() {
            if b.contains(&f.rule) {
                continue;
            }
            fixes.push(format!("{}: {}", f.rule, f.message));
            if let Some(fix) = &f.fix {
                fixes.push(format!("fix: {}", fix.description));
            }
        }
        if !fixes.is_empty()
            && let Some(build) = newest_after
        {
            fixes.extend(retag(
                images.get(w).map(Vec::as_slice).unwrap_or(&[]),
                build,
            ));
        }
        fixes.dedup();
        changes.push(WorkloadChange {
            object: w.clone(),
            before: b,
            after: a,
            fixes,
        });
    }
    PlanReport {
        changes,
        builds_before,
        builds_after,
        linux_nodes: (linux_before, linux_after),
    }
}

/// For images whose tag names a Windows Server release (`…-ltsc2019`, `:1809`), the same image with
/// the planned build's release, and the selector that pins it.
fn retag(images: &[String], build: u32) -> Vec<String> {
    images
        .iter()
        .filter_map(|image| crate::windows::builds::retag_for_build(image, build))
        .map(|image| {
            format!(
                "use {image} (the {} tag of the same image) and pin nodeSelector node.kubernetes.io/windows-build: \"{}\" (or a RuntimeClass that sets it)",
                build_display(build),
                WindowsVersion::new(build).label()
            )
        })
        .collect()
}

/// The images of each workload among `objects` (`Kind/namespace/name` → images).
pub fn workload_images(objects: &[Object]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for o in objects {
        if let Some(Ok(t)) = model::pod_template(o) {
            let images: Vec<String> = t
                .spec
                .containers
                .iter()
                .chain(t.spec.init_containers.iter().flatten())
                .filter_map(|c| c.image.clone())
                .collect();
            out.insert(o.object_ref().display_name(), images);
        }
    }
    out
}

/// Plans manifests: evaluates `objects` on `context` and on the planned cluster.
pub fn plan_objects(
    objects: &[Object],
    context: &ClusterContext,
    plan: &Plan,
    settings: &Settings,
) -> PlanReport {
    let after_ctx = plan.apply(context);
    let errors = |cluster: &ClusterContext| {
        let checker = Checker::builder()
            .settings(settings)
            .cluster(cluster)
            .build();
        let mut findings = Vec::new();
        checker.check_objects(objects, &mut findings);
        planned_errors(findings)
    };
    let before = errors(context);
    let after = errors(&after_ctx);
    compare(
        &before,
        &after,
        &workload_images(objects),
        (context, &after_ctx),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_are_read_in_every_spelling() {
        for t in [
            "10.0.17763",
            "17763",
            "2019",
            "ltsc2019",
            "LTSC2019",
            "10.0.17763.1",
        ] {
            assert_eq!(parse_build(t).as_deref(), Some("10.0.17763"), "{t}");
        }
        assert_eq!(parse_build("2025").as_deref(), Some("10.0.26100"));
        assert_eq!(parse_build("banana"), None);
    }

    #[test]
    fn retag_keeps_the_rest_of_the_tag() {
        let got = retag(
            &["mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019".into()],
            26100,
        );
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(
                "use mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2025 "
            ),
            "{got:?}"
        );
        assert!(retag(&["nginx:1.27".into()], 26100).is_empty());
    }
}
