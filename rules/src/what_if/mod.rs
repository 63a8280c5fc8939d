//! What-if: a cluster changed by a plan (Windows builds or node pools removed, pools added), and each
//! workload's errors before and after, with what would make a newly failing workload fit.
//!
//! The same rules run on both clusters; only error findings of the catalogue's manifest rules count (live
//! state, such as where a pod happens to run now, says nothing about a planned cluster).
//!
//! ```
//! use winplace_rules::{Settings, infra, input, model, what_if};
//! let nodes = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: w19, labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763, agentpool: win19}}}\n- {apiVersion: v1, kind: Node, metadata: {name: l1, labels: {kubernetes.io/os: linux, agentpool: sys}}}\n";
//! let app = "apiVersion: v1\nkind: Pod\nmetadata: {name: app}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers: [{name: c, image: 'mcr.microsoft.com/windows/servercore:ltsc2019'}]\n";
//! let ctx = infra::read_context(&[("nodes.yaml", nodes)]).context;
//! let objects = model::objects(&input::parse("app.yaml", app, &input::Limits::default()).documents);
//! let the_plan = what_if::Plan { remove_pools: vec!["win19".into()], ..what_if::Plan::default() };
//! let report = what_if::plan_objects(&objects, &ctx, &the_plan, &Settings::default());
//! assert_eq!(report.changes[0].object, "Pod/default/app");
//! assert!(report.changes[0].after.contains(&"no-schedulable-node".to_string()));
//! assert!(report.breaks());
//! ```

pub mod retire;
pub mod upgrade;

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Node;
use serde::{Deserialize, Serialize};

use crate::catalog::{self, Family};
use crate::check::Checker;
use crate::finding::{Finding, Severity};
use crate::lifecycle::{Date, KubeMinor};
use crate::model::{self, ClusterContext, Object, node_os, node_windows_build};
use crate::placement::fix_plan::BuildPinPlan;
use crate::settings::{BuildPinning, Settings};
use crate::windows::builds::{WindowsVersion, build_display, build_info};
use crate::windows::hosts_for_images;

pub use retire::{PlannedRetirement, PlannedRuntime};
pub use upgrade::PoolUpgrade;

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
    /// Pools whose nodes move to another Windows build in place ([`upgrade`]).
    pub upgrade_pools: Vec<PoolUpgrade>,
    /// Nodes that come (from Node files or infrastructure files).
    pub add: Vec<Node>,
    /// The date the plan is for: the nodes whose platform has retired their build by then go
    /// ([`retire`]).
    pub on: Option<Date>,
    /// The planned cluster's Kubernetes version: the nodes of builds their platform does not offer at
    /// it go.
    pub kubernetes_version: Option<KubeMinor>,
}

/// A plan that cannot be applied to a cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// `upgrade_pools` names a pool no node of the cluster is in.
    #[error(
        "--upgrade-pool {pool}={build}: no node of the cluster is in pool {pool} (pools: {known})"
    )]
    UnknownPool {
        /// The pool.
        pool: String,
        /// The build asked for.
        build: String,
        /// The pools the cluster has, comma-separated.
        known: String,
    },
    /// `upgrade_pools` names a pool with nodes that are not Windows nodes.
    #[error(
        "--upgrade-pool {pool}={build}: pool {pool} has nodes that are not Windows nodes; only a Windows pool changes build in place"
    )]
    NotWindows {
        /// The pool.
        pool: String,
        /// The build asked for.
        build: String,
    },
}

/// The planned cluster and the retirements that shaped it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Planned {
    /// The cluster after the plan.
    pub context: ClusterContext,
    /// What the calendar took out (empty without a date or Kubernetes version).
    pub retirements: Vec<PlannedRetirement>,
    /// containerd rows that hold for the planned Windows nodes (empty without a date or Kubernetes
    /// version).
    pub runtimes: Vec<PlannedRuntime>,
}

impl Plan {
    /// Whether the plan removes `node`.
    pub fn removes(&self, node: &Node) -> bool {
        let build_gone = node_os(node) == Some("windows")
            && node_windows_build(node).is_some_and(|b| self.remove_builds.contains(&b));
        build_gone || self.remove_pools.contains(&pool_name(node))
    }

    /// Whether the plan asks the retirement calendar (a date or a Kubernetes version).
    pub fn reads_calendar(&self) -> bool {
        self.on.is_some() || self.kubernetes_version.is_some()
    }

    /// Checks that every pool to upgrade is a Windows pool of `context`.
    pub fn check(&self, context: &ClusterContext) -> Result<(), PlanError> {
        for up in &self.upgrade_pools {
            let nodes: Vec<&Node> = context
                .nodes
                .iter()
                .filter(|n| pool_name(n) == up.pool)
                .collect();
            if nodes.is_empty() {
                let known: BTreeSet<String> = context.nodes.iter().map(pool_name).collect();
                return Err(PlanError::UnknownPool {
                    pool: up.pool.clone(),
                    build: up.build.clone(),
                    known: known.into_iter().collect::<Vec<_>>().join(", "),
                });
            }
            if nodes.iter().any(|n| node_os(n) != Some("windows")) {
                return Err(PlanError::NotWindows {
                    pool: up.pool.clone(),
                    build: up.build.clone(),
                });
            }
        }
        Ok(())
    }

    /// The planned cluster: `context` without the removed nodes, the upgraded pools moved to their new
    /// build, the added nodes, and then, at the plan's date and Kubernetes version, without the nodes
    /// their platform has retired (`settings` say whose calendar, with its overrides).
    pub fn apply(&self, context: &ClusterContext, settings: &Settings) -> Planned {
        let mut out = context.clone();
        out.nodes.retain(|n| !self.removes(n));
        for node in &mut out.nodes {
            let pool = pool_name(node);
            if let Some(up) = self.upgrade_pools.iter().rev().find(|u| u.pool == pool)
                && node_os(node) == Some("windows")
            {
                *node = upgrade::upgrade_node(node, &up.build);
            }
        }
        out.nodes.extend(self.add.iter().cloned());
        let nodes = std::mem::take(&mut out.nodes);
        let (kept, retirements) = retire::retire(nodes, self.on, self.kubernetes_version, settings);
        let runtimes = if self.reads_calendar() {
            retire::runtimes(&kept, self.on, self.kubernetes_version)
        } else {
            Vec::new()
        };
        out.nodes = kept;
        Planned {
            context: out,
            retirements,
            runtimes,
        }
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
    /// What the retirement calendar took out; present when the plan has a date or a Kubernetes version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retirements: Option<Vec<PlannedRetirement>>,
    /// containerd rows that hold for the planned Windows nodes (lifecycle.md, "containerd"): a line
    /// past its end of life at the plan's date, containerd 1.x past its last Kubernetes minor, a broken
    /// release. The nodes stay; the runtime does not change placement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runtimes: Vec<PlannedRuntime>,
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
/// retag suggestion, whose pin follows `settings`' `buildPinning`); `after` is the planned cluster.
pub fn compare(
    before: &ErrorsByWorkload,
    after: &ErrorsByWorkload,
    images: &BTreeMap<String, Vec<String>>,
    contexts: (&ClusterContext, &ClusterContext),
    settings: &Settings,
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
            let pin = retag_pin(build, &builds_after, settings);
            fixes.extend(retag(
                images.get(w).map(Vec::as_slice).unwrap_or(&[]),
                build,
                &pin,
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
        retirements: None,
        runtimes: Vec::new(),
    }
}

/// The pin that goes with an image retagged for `build`: as `buildPinning` says, the builds of
/// `supportedBuilds` and of the planned cluster (`builds_after`) that run it, or `build` alone.
fn retag_pin(
    build: u32,
    builds_after: &BTreeMap<String, usize>,
    settings: &Settings,
) -> BuildPinPlan {
    if settings.build_pinning == BuildPinning::Exact {
        return BuildPinPlan::Exact(build);
    }
    let mut candidates = settings.supported_build_numbers();
    candidates.extend(
        builds_after
            .keys()
            .filter_map(|b| WindowsVersion::parse(b))
            .map(|v| v.build),
    );
    candidates.sort_unstable();
    let mut range = hosts_for_images(&[build], &candidates);
    range.sort_unstable();
    BuildPinPlan::Range(range)
}

/// For images whose tag names a Windows Server release (`…-ltsc2019`, `:1809`), the same image with
/// the planned build's release, and the pin that goes with it.
fn retag(images: &[String], build: u32, pin: &BuildPinPlan) -> Vec<String> {
    images
        .iter()
        .filter_map(|image| crate::windows::builds::retag_for_build(image, build))
        .map(|image| {
            format!(
                "use {image} (the {} tag of the same image) and pin {} (or a RuntimeClass that sets it)",
                build_display(build),
                pin.phrase()
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
    let planned = plan.apply(context, settings);
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
    let after = errors(&planned.context);
    let mut report = compare(
        &before,
        &after,
        &workload_images(objects),
        (context, &planned.context),
        settings,
    );
    report.retirements = plan.reads_calendar().then_some(planned.retirements);
    report.runtimes = planned.runtimes;
    report
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

    /// `az aks nodepool list -o json` of a cluster with a Linux, a 2019 and a 2022 Windows pool.
    const AKS_POOLS: &str = r#"[
      {"name": "linux", "osType": "Linux", "osSku": "Ubuntu", "count": 2, "vmSize": "Standard_D4s_v5"},
      {"name": "win19", "osType": "Windows", "osSku": "Windows2019", "count": 2, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]},
      {"name": "win22", "osType": "Windows", "osSku": "Windows2022", "count": 3, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]}
    ]"#;

    /// A Deployment of `image` with `placement` (YAML lines under the pod spec).
    fn deployment(name: &str, image: &str, placement: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: apps}}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      tolerations: [{{key: os, value: windows, effect: NoSchedule}}]\n{placement}      containers: [{{name: c, image: '{image}'}}]\n"
        )
    }

    fn workloads(texts: &[String]) -> Vec<Object> {
        let text = texts.join("---\n");
        let parsed = crate::input::parse("w.yaml", &text, &crate::input::Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        model::objects(&parsed.documents)
    }

    fn aks() -> ClusterContext {
        let read = crate::infra::read_context(&[("pools.json", AKS_POOLS)]);
        assert!(read.errors.is_empty(), "{:?}", read.errors);
        read.context
    }

    #[test]
    fn an_in_place_upgrade_breaks_an_exact_pin_and_leaves_a_range_alone() {
        let exact = deployment(
            "exact",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: '10.0.20348'}\n",
        );
        let range = deployment(
            "range",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "      nodeSelector: {kubernetes.io/os: windows}\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - {key: node.kubernetes.io/windows-build, operator: In, values: ['10.0.20348', '10.0.26100']}\n",
        );
        let objects = workloads(&[exact, range]);
        let ctx = aks();
        let the_plan = Plan {
            upgrade_pools: vec![PoolUpgrade {
                pool: "win22".into(),
                build: "10.0.26100".into(),
            }],
            ..Plan::default()
        };
        assert_eq!(the_plan.check(&ctx), Ok(()));
        let report = plan_objects(&objects, &ctx, &the_plan, &Settings::default());
        let broken: Vec<&str> = report.broken().map(|c| c.object.as_str()).collect();
        assert_eq!(broken, ["Deployment/apps/exact"], "{report:#?}");
        assert!(
            report.changes[0]
                .after
                .contains(&"no-schedulable-node".to_string())
        );
        assert!(
            !report
                .changes
                .iter()
                .any(|c| c.object == "Deployment/apps/range")
        );
        // The pool keeps its three nodes, now on 2025; the 2019 pool is not touched.
        assert_eq!(report.builds_before.get("10.0.20348"), Some(&3));
        assert_eq!(report.builds_after.get("10.0.26100"), Some(&3));
        assert_eq!(report.builds_after.get("10.0.17763"), Some(&2));
        assert!(!report.builds_after.contains_key("10.0.20348"));
        assert_eq!(report.retirements, None);
        let planned = the_plan.apply(&ctx, &Settings::default());
        let win22: Vec<&Node> = planned
            .context
            .nodes
            .iter()
            .filter(|n| pool_name(n) == "win22")
            .collect();
        assert_eq!(win22.len(), 3);
        let labels = win22[0].metadata.labels.as_ref().unwrap();
        assert_eq!(labels["kubernetes.azure.com/os-sku"], "Windows2025");
        assert_eq!(
            win22[0]
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .map(Vec::len),
            Some(1)
        );
    }

    #[test]
    fn upgrades_of_unknown_or_linux_pools_are_refused() {
        let ctx = aks();
        let up = |pool: &str| Plan {
            upgrade_pools: vec![PoolUpgrade {
                pool: pool.into(),
                build: "10.0.26100".into(),
            }],
            ..Plan::default()
        };
        let err = up("win23").check(&ctx).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--upgrade-pool win23=10.0.26100: no node of the cluster is in pool win23 (pools: linux, win19, win22)"
        );
        assert!(matches!(
            up("linux").check(&ctx),
            Err(PlanError::NotWindows { .. })
        ));
    }

    #[test]
    fn a_date_retires_what_the_platform_retired_by_then() {
        let w2019 = deployment(
            "ledger",
            "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019",
            "      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: '10.0.17763'}\n",
        );
        let w2022 = deployment(
            "portal",
            "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            "      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: '10.0.20348'}\n",
        );
        let objects = workloads(&[w2019, w2022]);
        let ctx = aks();
        let on = |date: &str| Plan {
            on: Some(date.parse().unwrap()),
            ..Plan::default()
        };
        let settings = Settings::default();
        // The day before AKS's retirement of 2019 (lifecycle.md A1): nothing changes, and the answer says so.
        let report = plan_objects(&objects, &ctx, &on("2026-02-28"), &settings);
        assert!(report.changes.is_empty(), "{report:#?}");
        assert_eq!(report.retirements, Some(Vec::new()));
        let report = plan_objects(&objects, &ctx, &on("2026-03-02"), &settings);
        let broken: Vec<&str> = report.broken().map(|c| c.object.as_str()).collect();
        assert_eq!(broken, ["Deployment/apps/ledger"]);
        let r = &report.retirements.as_ref().unwrap()[0];
        assert_eq!(
            r.retirement.platform,
            crate::lifecycle::LifecyclePlatform::Aks
        );
        assert_eq!(r.retirement.build, "10.0.17763");
        assert_eq!(r.retirement.date.as_deref(), Some("2026-03-01"));
        assert_eq!(
            (r.nodes, r.pools.as_slice()),
            (2, ["win19".to_string()].as_slice())
        );
        assert!(
            r.retirement
                .source
                .contains("windows-server-2019-retirement.md"),
            "{}",
            r.retirement.source
        );
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["retirements"][0]["date"], "2026-03-01");
        assert_eq!(json["retirements"][0]["platform"], "aks");
        // With Kubernetes 1.37, AKS has only Windows Server 2025 (A12: 2022's last minor is 1.36).
        let plan_137 = Plan {
            kubernetes_version: Some("1.37".parse().unwrap()),
            ..on("2026-03-02")
        };
        let report = plan_objects(&objects, &ctx, &plan_137, &settings);
        let facts: Vec<&str> = report
            .retirements
            .iter()
            .flatten()
            .map(|r| r.retirement.fact.as_str())
            .collect();
        assert_eq!(facts, ["A1", "A12"]);
        assert_eq!(report.broken().count(), 2);
        assert!(report.builds_after.is_empty());
        // An in-place upgrade before the date keeps the pool.
        let upgraded = Plan {
            upgrade_pools: vec![PoolUpgrade {
                pool: "win19".into(),
                build: "10.0.26100".into(),
            }],
            ..on("2026-03-02")
        };
        let report = plan_objects(&objects, &ctx, &upgraded, &settings);
        assert_eq!(report.retirements, Some(Vec::new()));
        assert_eq!(report.builds_after.get("10.0.26100"), Some(&2));
    }

    #[test]
    fn retag_keeps_the_rest_of_the_tag() {
        let images =
            ["mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019".into()];
        let after = BTreeMap::from([("10.0.20348".to_string(), 3), ("10.0.26100".to_string(), 2)]);
        let pin = retag_pin(26100, &after, &Settings::default());
        let got = retag(&images, 26100, &pin);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].starts_with(
                "use mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2025 "
            ),
            "{got:?}"
        );
        // A 2025 image runs on 2025 hosts only: the range is that one build, as affinity.
        assert!(
            got[0].contains(
                "pin required node affinity node.kubernetes.io/windows-build In [10.0.26100]"
            ),
            "{got:?}"
        );
        // Retagged for 2022, the range takes 2025 in too; exact pinning names the build alone.
        let pin = retag_pin(20348, &after, &Settings::default());
        assert_eq!(pin, BuildPinPlan::Range(vec![20348, 26100]));
        let exact = Settings {
            build_pinning: BuildPinning::Exact,
            ..Settings::default()
        };
        let got = retag(&images, 20348, &retag_pin(20348, &after, &exact));
        assert!(
            got[0]
                .contains("pin the nodeSelector node.kubernetes.io/windows-build: \"10.0.20348\""),
            "{got:?}"
        );
        assert!(retag(&["nginx:1.27".into()], 26100, &pin).is_empty());
    }
}
