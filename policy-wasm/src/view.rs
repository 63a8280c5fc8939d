//! What the dashboard shows of a cluster: nodes grouped by OS and Windows build, and the pods on them.
//!
//! Shared by the server (which builds it) and the dashboard (which renders it), so the JSON shape is
//! defined once.

use crate::windows::builds::build_display;
use k8s_openapi::api::core::v1::{Node, Pod};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the cluster data comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    /// `demo`, `snapshot` or `live`.
    pub kind: String,
    /// A sentence for the user ("embedded demo cluster — not a real cluster").
    pub description: String,
}

/// One node as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    /// `metadata.name`.
    pub name: String,
    /// `linux`, `windows` or `unknown`.
    pub os: String,
    /// Windows build (`10.0.20348`), from the kernel version or the build label.
    pub build: Option<String>,
    /// Taints as `key=value:Effect`.
    pub taints: Vec<String>,
    /// Node labels.
    pub labels: BTreeMap<String, String>,
    /// Names (`namespace/name`) of the pods bound to the node.
    pub pods: Vec<String>,
}

/// A group of nodes that share OS and build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeGroup {
    /// `linux`, `windows` or `unknown`.
    pub os: String,
    /// The Windows build the group's nodes run.
    pub build: Option<String>,
    /// A title for people: "Windows Server 2022 (10.0.20348)", "Linux".
    pub title: String,
    /// The nodes, by name.
    pub nodes: Vec<NodeView>,
}

/// The answer of `GET /api/cluster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterView {
    /// Where the data comes from.
    pub source: SourceInfo,
    /// Every node.
    pub nodes: Vec<NodeView>,
}

impl ClusterView {
    /// Builds the view from Nodes and Pods.
    pub fn new(source: SourceInfo, nodes: &[Node], pods: &[Pod]) -> Self {
        let mut by_node: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for pod in pods {
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
                let ns = pod.metadata.namespace.as_deref().unwrap_or("default");
                let name = pod.metadata.name.as_deref().unwrap_or("");
                by_node
                    .entry(node)
                    .or_default()
                    .push(format!("{ns}/{name}"));
            }
        }
        let nodes = nodes
            .iter()
            .map(|n| {
                let name = n.metadata.name.clone().unwrap_or_default();
                NodeView {
                    os: crate::model::node_os(n).unwrap_or("unknown").to_string(),
                    build: crate::model::node_windows_build(n),
                    taints: crate::model::node_taints(n)
                        .iter()
                        .map(crate::schedule::taints::taint_display)
                        .collect(),
                    labels: n.metadata.labels.clone().unwrap_or_default(),
                    pods: by_node.remove(name.as_str()).unwrap_or_default(),
                    name,
                }
            })
            .collect();
        ClusterView { source, nodes }
    }

    /// Nodes grouped by OS, then Windows build: Windows groups by ascending build, then Linux, then others.
    pub fn node_groups(&self) -> Vec<NodeGroup> {
        let mut groups: BTreeMap<(u8, Option<String>, String), Vec<NodeView>> = BTreeMap::new();
        for node in &self.nodes {
            let rank = match node.os.as_str() {
                "windows" => 0,
                "linux" => 1,
                _ => 2,
            };
            let build = if node.os == "windows" {
                node.build.clone()
            } else {
                None
            };
            groups
                .entry((rank, build, node.os.clone()))
                .or_default()
                .push(node.clone());
        }
        groups
            .into_iter()
            .map(|((_, build, os), mut nodes)| {
                nodes.sort_by(|a, b| a.name.cmp(&b.name));
                let title = match (os.as_str(), &build) {
                    ("windows", Some(b)) => crate::windows::builds::WindowsVersion::parse(b)
                        .map(|v| build_display(v.build))
                        .unwrap_or_else(|| format!("Windows {b}")),
                    ("windows", None) => "Windows (build unknown)".to_string(),
                    ("linux", _) => "Linux".to_string(),
                    _ => "Unknown OS".to_string(),
                };
                NodeGroup {
                    os,
                    build,
                    title,
                    nodes,
                }
            })
            .collect()
    }
}
