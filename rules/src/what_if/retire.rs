//! The retirement calendar applied to a planned cluster: the Windows nodes whose platform has retired
//! their build by the plan's date (or does not offer it at the plan's Kubernetes version) go, and each
//! retirement is named with its date and source (`docs/reference/lifecycle.md`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use serde::{Deserialize, Serialize};

use crate::lifecycle::{self, Date, KubeMinor, Retirement};
use crate::model::{node_os, node_windows_build};
use crate::settings::Settings;

/// A retirement that took nodes out of the planned cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRetirement {
    /// The fact (platform, build, date, what, source).
    #[serde(flatten)]
    pub retirement: Retirement,
    /// How many nodes it took out.
    pub nodes: usize,
    /// Their pools.
    pub pools: Vec<String>,
}

/// Splits `nodes` into those that stay and the retirements that take the others, at `on` and Kubernetes
/// `kubernetes` (either may be absent). A node's calendar is its platform's
/// ([`lifecycle::node_platform`]) and Microsoft's.
pub fn retire(
    nodes: Vec<Node>,
    on: Option<Date>,
    kubernetes: Option<KubeMinor>,
    settings: &Settings,
) -> (Vec<Node>, Vec<PlannedRetirement>) {
    if on.is_none() && kubernetes.is_none() {
        return (nodes, Vec::new());
    }
    let mut kept = Vec::with_capacity(nodes.len());
    // Keyed by (platform, build, fact), in that order.
    let mut gone: BTreeMap<(String, String, String), PlannedRetirement> = BTreeMap::new();
    for node in nodes {
        let retired = (node_os(&node) == Some("windows"))
            .then(|| node_windows_build(&node))
            .flatten()
            .and_then(|build| {
                let platform =
                    lifecycle::node_platform(&node, &settings.lifecycle, settings.platform);
                lifecycle::retirement(&settings.lifecycle, platform, &build, on, kubernetes)
            });
        let Some(r) = retired else {
            kept.push(node);
            continue;
        };
        let key = (r.platform.to_string(), r.build.clone(), r.fact.clone());
        let entry = gone.entry(key).or_insert_with(|| PlannedRetirement {
            retirement: r,
            nodes: 0,
            pools: Vec::new(),
        });
        entry.nodes += 1;
        let pool = super::pool_name(&node);
        if !entry.pools.contains(&pool) {
            entry.pools.push(pool);
        }
    }
    (kept, gone.into_values().collect())
}

/// containerd rows (`lifecycle.md`, "containerd") that hold for Windows nodes of the planned cluster at
/// the plan's date and Kubernetes version, with the nodes and pools they hold for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRuntime {
    /// The row (versions, kind, date or Kubernetes minor, what, source).
    #[serde(flatten)]
    pub issue: lifecycle::containerd::RuntimeIssue,
    /// How many nodes run such a containerd.
    pub nodes: usize,
    /// Their pools.
    pub pools: Vec<String>,
}

/// The containerd rows that hold for the Windows `nodes` (their `containerRuntimeVersion`) at `on` and
/// Kubernetes `kubernetes`: a line past its end of life, containerd 1.x past its last Kubernetes minor
/// (`what-if --k8s 1.37` and a pool still on 1.7), a release known to be broken. Nodes stay in the
/// planned cluster: the runtime does not change where pods are placed.
pub fn runtimes(
    nodes: &[Node],
    on: Option<Date>,
    kubernetes: Option<KubeMinor>,
) -> Vec<PlannedRuntime> {
    use lifecycle::containerd::{ContainerdVersion, issues};
    let mut out: BTreeMap<String, PlannedRuntime> = BTreeMap::new();
    for node in nodes.iter().filter(|n| node_os(n) == Some("windows")) {
        let Some(version) = node
            .status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .and_then(|i| ContainerdVersion::parse(&i.container_runtime_version))
        else {
            continue;
        };
        for issue in issues(version, on, kubernetes) {
            let entry = out
                .entry(issue.fact.clone())
                .or_insert_with(|| PlannedRuntime {
                    issue,
                    nodes: 0,
                    pools: Vec::new(),
                });
            entry.nodes += 1;
            let pool = super::pool_name(node);
            if !entry.pools.contains(&pool) {
                entry.pools.push(pool);
            }
        }
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_kit::node;

    /// A node of an AKS Windows Server 2022 pool on this containerd, as its kubelet (1.36) reports it.
    fn aks_node(name: &str, pool: &str, runtime: &str) -> Node {
        node(name)
            .os("windows")
            .build("10.0.20348")
            .label("agentpool", pool)
            .label("kubernetes.azure.com/agentpool", pool)
            .info("operatingSystem", "windows")
            .kernel("10.0.20348.2762")
            .info("containerRuntimeVersion", runtime)
            .info("kubeletVersion", "v1.36.1")
            .info("architecture", "amd64")
            .typed()
    }

    #[test]
    fn a_pool_still_on_containerd_1_is_named_at_kubernetes_1_37() {
        // An AKS Windows Server 2022 pool on containerd 1.7 and a 2025 pool on 2.3.4.
        let nodes = vec![
            aks_node("aks-win22-0", "win22", "containerd://1.7.27"),
            aks_node("aks-win22-1", "win22", "containerd://1.7.27"),
            aks_node("aks-win25-0", "win25", "containerd://2.3.4"),
        ];
        let k = |v: &str| Some(v.parse().unwrap());
        let at = runtimes(&nodes, None, k("1.37"));
        assert_eq!(at.len(), 1, "{at:?}");
        assert_eq!(
            (at[0].issue.fact.as_str(), at[0].nodes, at[0].pools.clone()),
            ("C7", 2, vec!["win22".to_string()])
        );
        assert_eq!(at[0].issue.kubernetes.as_deref(), Some("1.35"));
        assert!(runtimes(&nodes, None, k("1.35")).is_empty());
        // At 1.38 the kubelet itself stops starting on containerd 1.x (C9).
        assert_eq!(runtimes(&nodes, None, k("1.38"))[0].issue.fact, "C9");
        // Linux nodes are not the planner's business here.
        let mut linux = aks_node("l", "sys", "containerd://1.7.27");
        linux
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert("kubernetes.io/os".into(), "linux".into());
        assert!(runtimes(&[linux], None, k("1.37")).is_empty());
    }
}
