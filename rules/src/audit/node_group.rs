//! How nodes are grouped by OS and Windows build: one definition for the summary's node groups and the
//! dashboard's node map, so that both list the same groups, in the same order, under the same titles.

use super::report::{NodeOs, NodeReport};
use crate::windows::{WindowsVersion, build_display};

/// The group of a node: its OS and, for Windows, its build.
///
/// The order is the order groups are listed in: Windows by ascending build, Windows of unknown build, Linux,
/// then nodes of unknown OS.
///
/// ```
/// use winplace_rules::audit::{NodeGroupKey, NodeOs};
/// let mut keys = [
///     NodeGroupKey::new(NodeOs::Unknown, None),
///     NodeGroupKey::new(NodeOs::Linux, None),
///     NodeGroupKey::new(NodeOs::Windows, None),
///     NodeGroupKey::new(NodeOs::Windows, Some(20348)),
///     NodeGroupKey::new(NodeOs::Windows, Some(17763)),
/// ];
/// keys.sort();
/// let titles: Vec<String> = keys.iter().map(|k| k.title()).collect();
/// assert_eq!(titles, ["Windows Server 2019 (10.0.17763)", "Windows Server 2022 (10.0.20348)",
///     "Windows (build unknown)", "Linux", "Unknown OS"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeGroupKey {
    /// Windows nodes of this build (`20348`).
    Windows(u32),
    /// Windows nodes whose build is not known.
    WindowsUnknownBuild,
    /// Linux nodes.
    Linux,
    /// Nodes whose OS is not known.
    UnknownOs,
}

impl NodeGroupKey {
    /// The group of a node of `os` and Windows `build` (the build counts for Windows nodes only; build 0
    /// is no build).
    pub fn new(os: NodeOs, build: Option<u32>) -> Self {
        match (os, build) {
            (NodeOs::Windows, Some(build)) if build > 0 => NodeGroupKey::Windows(build),
            (NodeOs::Windows, _) => NodeGroupKey::WindowsUnknownBuild,
            (NodeOs::Linux, _) => NodeGroupKey::Linux,
            (NodeOs::Unknown, _) => NodeGroupKey::UnknownOs,
        }
    }

    /// The group of a node row (its build label read back as a build number).
    pub fn of(node: &NodeReport) -> Self {
        Self::of_build_label(node.os, node.build.as_deref())
    }

    /// The group of a node of `os` whose build is written as the API writes it (`10.0.20348`): what the
    /// API's light node rows, which carry no [`NodeReport`], are grouped by.
    pub fn of_build_label(os: NodeOs, build: Option<&str>) -> Self {
        let build = build.and_then(WindowsVersion::parse).map(|v| v.build);
        Self::new(os, build)
    }

    /// The OS of the group's nodes.
    pub fn os(self) -> NodeOs {
        match self {
            NodeGroupKey::Windows(_) | NodeGroupKey::WindowsUnknownBuild => NodeOs::Windows,
            NodeGroupKey::Linux => NodeOs::Linux,
            NodeGroupKey::UnknownOs => NodeOs::Unknown,
        }
    }

    /// The Windows build of the group's nodes, when known.
    pub fn build(self) -> Option<u32> {
        match self {
            NodeGroupKey::Windows(build) => Some(build),
            _ => None,
        }
    }

    /// The Windows build as the API writes it (`10.0.20348`), when known.
    pub fn build_label(self) -> Option<String> {
        self.build().map(|b| WindowsVersion::new(b).label())
    }

    /// What the summary and the node map call the group: "Windows Server 2022 (10.0.20348)",
    /// "Windows (build unknown)", "Linux", "Unknown OS".
    pub fn title(self) -> String {
        match self {
            NodeGroupKey::Windows(build) => build_display(build),
            NodeGroupKey::WindowsUnknownBuild => "Windows (build unknown)".to_string(),
            NodeGroupKey::Linux => "Linux".to_string(),
            NodeGroupKey::UnknownOs => "Unknown OS".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(os: NodeOs, build: Option<&str>) -> NodeReport {
        NodeReport {
            name: "n".into(),
            os,
            build: build.map(String::from),
            labels: BTreeMap::new(),
            taints: vec![],
            node_info: BTreeMap::new(),
            declared_features: Vec::new(),
            pods: vec![],
            findings: vec![],
        }
    }

    #[test]
    fn rows_and_os_build_pairs_give_the_same_group() {
        let cases = [
            (
                row(NodeOs::Windows, Some("10.0.20348")),
                NodeGroupKey::Windows(20348),
            ),
            (
                row(NodeOs::Windows, None),
                NodeGroupKey::WindowsUnknownBuild,
            ),
            (
                row(NodeOs::Windows, Some("10.0.0")),
                NodeGroupKey::WindowsUnknownBuild,
            ),
            (row(NodeOs::Linux, Some("10.0.20348")), NodeGroupKey::Linux),
            (row(NodeOs::Unknown, None), NodeGroupKey::UnknownOs),
        ];
        for (node, want) in cases {
            assert_eq!(NodeGroupKey::of(&node), want, "{node:?}");
            assert_eq!(want.os(), node.os);
        }
        let key = NodeGroupKey::new(NodeOs::Windows, Some(17763));
        assert_eq!(key.build_label().as_deref(), Some("10.0.17763"));
        assert_eq!(
            NodeGroupKey::of(&row(NodeOs::Windows, key.build_label().as_deref())),
            key
        );
        assert_eq!(NodeGroupKey::WindowsUnknownBuild.build_label(), None);
    }
}
