//! The embedded demo cluster: the default source when no cluster is reachable, marked as demo data in
//! every API answer.

use super::objects::ClusterObjects;
use super::{ClusterSource, SourceEvent};
use futures::stream::BoxStream;
use winplace_api::{SourceInfo, SourceKind};

/// The demo cluster's text (`server/demo/cluster.yaml`).
pub const DEMO: &str = include_str!("../../demo/cluster.yaml");

/// The embedded demo cluster.
pub struct DemoSource {
    objects: ClusterObjects,
}

impl DemoSource {
    /// Parses the embedded demo cluster.
    pub fn load() -> anyhow::Result<Self> {
        let objects = ClusterObjects::parse("demo/cluster.yaml", DEMO)
            .map_err(|e| anyhow::anyhow!("embedded demo cluster: {e:#}"))?;
        Ok(DemoSource { objects })
    }

    /// Its objects.
    pub fn objects(&self) -> &ClusterObjects {
        &self.objects
    }
}

/// How the demo source describes itself.
pub fn info() -> SourceInfo {
    SourceInfo {
        kind: SourceKind::Demo,
        description: "Embedded demo cluster: sample data, not a real cluster".into(),
    }
}

impl ClusterSource for DemoSource {
    fn info(&self) -> SourceInfo {
        info()
    }

    fn events(self: Box<Self>) -> BoxStream<'static, SourceEvent> {
        super::once(self.objects.into_reset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;
    use winplace_rules::model::{node_os, node_windows_build};

    #[test]
    fn demo_has_the_pools_the_story_needs() {
        let demo = DemoSource::load().expect("demo parses");
        let o = demo.objects();
        let builds: BTreeSet<_> = o.nodes.iter().filter_map(node_windows_build).collect();
        assert_eq!(
            builds.into_iter().collect::<Vec<_>>(),
            ["10.0.17763", "10.0.20348", "10.0.26100"]
        );
        let linux = o
            .nodes
            .iter()
            .filter(|n| node_os(n) == Some("linux"))
            .count();
        assert_eq!(linux, 3);
        assert_eq!(o.nodes.len(), 10, "the Pending message says 0/10 nodes");
        // One Windows pool is tainted os=windows:NoSchedule, one is not.
        let tainted = |name: &str| {
            let node = o
                .nodes
                .iter()
                .find(|n| n.metadata.name.as_deref() == Some(name));
            node.and_then(|n| n.spec.as_ref())
                .and_then(|s| s.taints.as_ref())
                .is_some_and(|t| t.iter().any(|t| t.key == "os" && t.effect == "NoSchedule"))
        };
        assert!(tainted("aks-win22-0"));
        assert!(!tainted("aks-win25-0"));
        assert_eq!(o.runtime_classes.len(), 2);
        assert_eq!(o.skipped, 0);
    }

    #[test]
    fn demo_tells_every_misplacement_story() {
        let demo = DemoSource::load().expect("demo parses");
        let pods = &demo.objects().pods;
        let messages: Vec<String> = pods
            .iter()
            .flat_map(|p| {
                let status = p.status.as_ref();
                let conditions = status
                    .and_then(|s| s.conditions.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.message);
                let waiting = status
                    .and_then(|s| s.container_statuses.clone())
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|c| c.state?.waiting?.message);
                conditions.chain(waiting).collect::<Vec<_>>()
            })
            .collect();
        let has = |needle: &str| messages.iter().any(|m| m.contains(needle));
        assert!(has("3 node(s) had untolerated taint {os: windows}"));
        assert!(has("(0xc0370101)"));
        assert!(has(
            "pulling image \"cr.fluentbit.io/fluent/fluent-bit:3.1.9\""
        ));
        assert!(has("no match for platform in manifest"));
        // Workload pods carry ReplicaSet owners and pod-template-hash labels.
        let owned = pods.iter().filter(|p| {
            p.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| o.kind == "ReplicaSet")
                && p.metadata
                    .labels
                    .as_ref()
                    .is_some_and(|l| l.contains_key("pod-template-hash"))
        });
        assert!(owned.count() >= 10);
        // The RuntimeClass conflict: a pod selecting 2022 through a RuntimeClass that selects 2025.
        assert!(pods.iter().any(|p| {
            p.spec.as_ref().is_some_and(|s| {
                s.runtime_class_name.as_deref() == Some("windows-ltsc")
                    && s.node_selector
                        .as_ref()
                        .and_then(|n| n.get("node.kubernetes.io/windows-build"))
                        == Some(&"10.0.20348".to_string())
            })
        }));
    }
}
