//! Node pools of infrastructure files ([`crate::infra`] reads them and makes their Nodes; the rules here
//! judge them): `node-pool-build-unknown` for a pool whose OS or Windows build its file does not tell,
//! and the node rules on the Nodes each pool would make.

use serde_json::Value;

use super::{Emitter, RuleId, evaluate_object};
use crate::finding::Finding;
use crate::infra::NodePool;
use crate::input::LineMap;
use crate::model::Object;
use crate::path::FieldPath;
use crate::settings::Settings;

/// Findings about `pools`: first `node-pool-build-unknown` for each pool that needs it, then the node
/// rules on the pools' Nodes, both in pool order. The pool's Nodes are reported at the pool's line.
pub(crate) fn check(pools: &[NodePool], settings: &Settings, findings: &mut Vec<Finding>) {
    let mut node_objects = Vec::new();
    for pool in pools {
        let lines = LineMap::with_root(pool.line.unwrap_or(1));
        if let Some(why) = &pool.unknown {
            build_unknown(pool, why, &lines, settings, findings);
        }
        for node in pool.nodes() {
            let Ok(value) = serde_json::to_value(&node) else {
                continue;
            };
            if let Some(object) = Object::from_value(&pool.file, 0, value, lines.clone()) {
                node_objects.push(object);
            }
        }
    }
    for object in &node_objects {
        evaluate_object(object, settings, findings);
    }
}

/// `node-pool-build-unknown`: the pool's OS or Windows build cannot be told (`why`), so its nodes are
/// assumed without a build label, or not at all.
fn build_unknown(
    pool: &NodePool,
    why: &str,
    lines: &LineMap,
    settings: &Settings,
    findings: &mut Vec<Finding>,
) {
    let object = Object {
        file: pool.file.clone(),
        doc_index: 0,
        item: None,
        api_version: pool.object.api_version.clone(),
        kind: pool.object.kind.clone(),
        namespace: pool.object.namespace.clone(),
        name: pool.object.name.clone(),
        value: Value::Null,
        lines: lines.clone(),
    };
    let what = if pool.os.is_none() {
        "Its OS and Windows build cannot be told"
    } else {
        "Its Windows build cannot be told"
    };
    let consequence = if pool.os.is_none() {
        "so no nodes are assumed for it"
    } else {
        "so its nodes are assumed without a node.kubernetes.io/windows-build label and no workload is matched to a build on them"
    };
    let message = format!(
        "{} pool `{}`: {what}: {why}; {consequence}. Name the Windows Server release in the file (image family, SKU, osVersion) to check build placement against it.",
        pool.format.label(),
        pool.name
    );
    Emitter::new(&object, settings, findings).emit(
        RuleId::NodePoolBuildUnknown,
        &FieldPath::parse(&pool.path),
        message,
        None,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read_context;

    #[test]
    fn karpenter_across_files_and_unknown_build_is_info() {
        let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: win}\nspec:\n  template:\n    spec:\n      requirements:\n      - {key: kubernetes.io/os, operator: In, values: [windows]}\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: win}\n";
        let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: win}\nspec:\n  amiSelectorTerms:\n  - alias: windows2022@latest\n";
        let unknown = |files: &[(&str, &str)]| {
            let mut findings = Vec::new();
            check(
                &read_context(files).pools,
                &Settings::default(),
                &mut findings,
            );
            findings
                .into_iter()
                .filter(|f| f.rule == "node-pool-build-unknown")
                .collect::<Vec<_>>()
        };
        assert!(unknown(&[("pool.yaml", pool), ("class.yaml", class)]).is_empty());
        let info = unknown(&[("pool.yaml", pool)]);
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].severity, crate::Severity::Info);
        assert_eq!(info[0].object.display_name(), "NodePool/win");
        assert_eq!(info[0].line, Some(1));
    }

    #[test]
    fn the_pools_nodes_get_the_node_rules_at_the_pools_line() {
        // An eksctl Windows node group: EKS taints no Windows node (platforms.md), so its nodes are
        // untainted Windows nodes.
        let eksctl = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: eu-west-1}\nnodeGroups:\n- name: win\n  amiFamily: WindowsServer2022CoreContainer\n  desiredCapacity: 2\n";
        let mut findings = Vec::new();
        check(
            &read_context(&[("c.yaml", eksctl)]).pools,
            &Settings::default(),
            &mut findings,
        );
        let untainted: Vec<_> = findings
            .iter()
            .filter(|f| f.rule == "windows-node-untainted")
            .collect();
        assert_eq!(untainted.len(), 2, "{findings:?}");
        assert!(untainted.iter().all(|f| f.line == Some(5)), "{untainted:?}");
    }
}
