//! The embedded demo cluster: the default source when no cluster is reachable.

use anyhow::Context;
use k8s_openapi::api::core::v1::{Node, Pod};
use winplace_policy::view::{ClusterView, SourceInfo};

const DEMO: &str = include_str!("../../demo/cluster.yaml");

/// Parses the embedded demo cluster.
pub fn load() -> anyhow::Result<ClusterView> {
    let parsed = winplace_policy::input::parse(
        "demo/cluster.yaml",
        DEMO,
        &winplace_policy::input::Limits::default(),
    );
    if let Some(e) = parsed.errors.first() {
        anyhow::bail!("embedded demo cluster: {e:?}");
    }
    let mut nodes = Vec::new();
    let mut pods = Vec::new();
    for object in winplace_policy::model::objects(&parsed.documents) {
        let what = format!(
            "embedded demo cluster: {}",
            object.object_ref().display_name()
        );
        match object.kind.as_str() {
            "Node" => nodes.push(serde_json::from_value::<Node>(object.value).context(what)?),
            "Pod" => pods.push(serde_json::from_value::<Pod>(object.value).context(what)?),
            _ => {}
        }
    }
    let source = SourceInfo {
        kind: "demo".into(),
        description: "Embedded demo cluster: sample data, not a real cluster".into(),
    };
    Ok(ClusterView::new(source, &nodes, &pods))
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_has_windows_nodes_on_three_builds_and_linux_nodes() {
        let view = super::load().expect("demo parses");
        let groups = view.node_groups();
        let builds: Vec<_> = groups.iter().filter_map(|g| g.build.clone()).collect();
        assert_eq!(builds, ["10.0.17763", "10.0.20348", "10.0.26100"]);
        assert!(groups.iter().any(|g| g.os == "linux" && g.nodes.len() >= 2));
        assert!(view.nodes.iter().any(|n| !n.pods.is_empty()));
    }
}
