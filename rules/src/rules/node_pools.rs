//! Node pools of infrastructure files ([`crate::infra`] reads them and makes their Nodes; the rules here
//! judge them): `node-pool-build-unknown` for a pool whose OS or Windows build its file does not tell,
//! and the node rules on the Nodes each pool would make.

use serde_json::Value;

use super::{Emitter, RuleId};
use crate::finding::Finding;
use crate::infra::NodePool;
use crate::input::LineMap;
use crate::model::Object;
use crate::path::FieldPath;
use crate::settings::Settings;

/// Findings about `pools`, pool by pool: `node-pool-build-unknown` when the pool needs it, then the node
/// rules on the Nodes the pool would make, once per pool and about the pool ([`super::nodes::check_pool`]),
/// at the pool's line.
pub(crate) fn check(pools: &[NodePool], settings: &Settings, findings: &mut Vec<Finding>) {
    for pool in pools {
        let object = pool_object(pool);
        if let Some(why) = &pool.unknown {
            build_unknown(pool, why, &object, settings, findings);
        }
        super::nodes::check_pool(pool, &object, settings, findings);
    }
}

/// The pool as the object its findings are about, at the pool's line of its file.
fn pool_object(pool: &NodePool) -> Object {
    Object {
        file: pool.file.clone(),
        doc_index: 0,
        item: None,
        api_version: pool.object.api_version.clone(),
        kind: pool.object.kind.clone(),
        namespace: pool.object.namespace.clone(),
        name: pool.object.name.clone(),
        value: Value::Null,
        lines: LineMap::with_root(pool.line.unwrap_or(1)),
    }
}

/// `node-pool-build-unknown`: the pool's OS or Windows build cannot be told (`why`), so its nodes are
/// assumed without a build label, or not at all.
fn build_unknown(
    pool: &NodePool,
    why: &str,
    object: &Object,
    settings: &Settings,
    findings: &mut Vec<Finding>,
) {
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
    Emitter::new(object, settings, findings).emit(
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

    /// Issue 31.2: pools whose build the file does not tell (an AKS `WindowsAnnual` pool, an OpenShift
    /// MachineSet on AWS) get `node-pool-build-unknown` and no `windows-node-missing-build-label` (the
    /// kubelet sets that label); node findings speak of the pool and its file, once per pool.
    #[test]
    fn node_findings_on_pools_speak_of_the_pool_once() {
        let aks = r#"[{"name": "wann", "osType": "Windows", "osSku": "WindowsAnnual", "count": 3, "vmSize": "Standard_D2s_v3"},
 {"name": "w19", "osType": "Windows", "osSku": "Windows2019", "count": 2, "nodeTaints": ["os=windows:NoSchedule"]}]"#;
        let openshift = "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nmetadata: {name: win-aws, namespace: openshift-machine-api}\nspec:\n  replicas: 2\n  template:\n    metadata:\n      labels: {machine.openshift.io/os-id: Windows}\n    spec:\n      providerSpec:\n        value:\n          ami: {id: ami-0123456789abcdef0}\n          instanceType: m5a.large\n";
        let eksctl = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\nnodeGroups:\n- name: linux-ng\n- name: windows-ng\n  amiFamily: WindowsServer2022FullContainer\n  desiredCapacity: 4\n";
        let read = read_context(&[
            ("pools.json", aks),
            ("machineset.yaml", openshift),
            ("eksctl.yaml", eksctl),
        ]);
        assert!(read.errors.is_empty(), "{:?}", read.errors);
        let mut findings = Vec::new();
        check(&read.pools, &Settings::default(), &mut findings);
        let mut got: Vec<(String, String, String, Option<u32>)> = findings
            .iter()
            .map(|f| {
                (
                    f.rule.clone(),
                    f.object.display_name(),
                    f.path.clone(),
                    f.line,
                )
            })
            .collect();
        got.sort();
        let row = |rule: &str, object: &str, path: &str, line: u32| {
            (
                rule.to_string(),
                object.to_string(),
                path.to_string(),
                Some(line),
            )
        };
        assert_eq!(
            got,
            [
                row("node-pool-build-unknown", "AgentPool/wann", "", 1),
                row(
                    "node-pool-build-unknown",
                    "MachineSet/openshift-machine-api/win-aws",
                    "",
                    1
                ),
                row("windows-node-unsupported-version", "AgentPool/w19", "", 2),
                row("windows-node-untainted", "AgentPool/wann", "nodeTaints", 1),
                row(
                    "windows-node-untainted",
                    "NodeGroup/windows-ng",
                    "nodeGroups[1].taints",
                    6
                ),
            ]
        );
        let message = |rule: &str, name: &str| {
            findings
                .iter()
                .find(|f| f.rule == rule && f.object.name == name)
                .map(|f| f.message.clone())
                .unwrap_or_default()
        };
        let eks = message("windows-node-untainted", "windows-ng");
        assert!(
            eks.starts_with("The Windows nodes of node group windows-ng of eksctl.yaml will have no taint, so")
                && eks.contains("add the taint os=windows:NoSchedule under `taints:` in node group windows-ng of eksctl.yaml"),
            "{eks}"
        );
        assert!(!eks.contains("kubectl"), "{eks}");
        let old = message("windows-node-unsupported-version", "w19");
        assert!(
            old.starts_with("The Windows nodes of agent pool w19 of pools.json will run Windows Server 2019 (10.0.17763)"),
            "{old}"
        );
        // The nodes themselves are still made, one per count, for the workloads to be placed on.
        assert_eq!(read.context.nodes.len(), 3 + 2 + 2 + 2 + 4);
    }
}
