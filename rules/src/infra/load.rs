//! Cluster context from files: Nodes and RuntimeClasses (`kubectl get -o yaml|json`) and node pools of
//! infrastructure files, read the same way by the CLI (`check --cluster`, `audit`, `serve`, `what-if`)
//! and the playground.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{InfraRead, NodePool, read};
use crate::finding::Finding;
use crate::input::{Document, Limits, ParseError, parse};
use crate::model::{self, ClusterContext, Object};
use crate::path::FieldPath;
use crate::rules::{Emitter, RuleId};
use crate::settings::Settings;

/// Everything read from the files given as cluster context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextFiles {
    /// Their Nodes and RuntimeClasses, and the Nodes of their pools.
    pub context: ClusterContext,
    /// Their node pools (infrastructure files).
    pub pools: Vec<NodePool>,
    /// Findings about the files themselves: node rules on their Nodes and on the pools' Nodes, and
    /// `node-pool-build-unknown` for pools whose OS or Windows build cannot be told.
    pub findings: Vec<Finding>,
    /// What could not be read: parse errors, objects that do not decode, pool fields, and a file that
    /// holds no cluster context at all (each is a usage error for the CLI).
    pub errors: Vec<ParseError>,
}

/// Reads `files` (name, text) as cluster context.
///
/// A top-level JSON array (`az aks nodepool list -o json`, `gcloud … --format=json`) is read as one
/// document per element. A file that yields no Node, RuntimeClass or node pool is an error naming the
/// kinds it did hold: it was almost certainly given by mistake, and ignoring it would silently check
/// against no cluster at all.
///
/// ```
/// use winplace_rules::{Settings, infra::read_context};
/// let aks = r#"[{"name": "win", "osType": "Windows", "osSku": "Windows2022", "count": 1, "vmSize": "Standard_D4s_v5"}]"#;
/// let read = read_context(&[("pools.json", aks)], &Settings::default());
/// assert!(read.errors.is_empty());
/// assert_eq!(read.context.windows_builds(), ["10.0.20348"]);
///
/// let wrong = read_context(&[("app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n")], &Settings::default());
/// assert!(wrong.errors[0].message.contains("Deployment"));
/// ```
pub fn read_context(files: &[(&str, &str)], settings: &Settings) -> ContextFiles {
    let mut out = ContextFiles::default();
    let mut per_file = Vec::new();
    let mut all_documents = Vec::new();
    for (name, text) in files {
        let (documents, errors) = documents(name, text);
        let had_errors = !errors.is_empty();
        out.errors.extend(errors);
        per_file.push((name.to_string(), documents.len(), had_errors));
        all_documents.extend(documents);
    }
    let objects = model::objects(&all_documents);
    let (context, bad) = ClusterContext::from_objects(&objects);
    for e in bad {
        out.errors.push(ParseError {
            file: e.file.clone(),
            line: e.line.unwrap_or(1),
            column: 1,
            message: format!(
                "{} cannot be used as cluster context: {}: {}",
                e.object.display_name(),
                e.error.path,
                e.error.message
            ),
        });
    }
    out.context = context;
    let infra = read(&all_documents);
    out.findings = crate::rules::evaluate(&objects, None, settings);
    out.findings.extend(pool_findings(&infra, settings));
    for e in &infra.errors {
        out.errors.push(ParseError {
            file: e.file.clone(),
            line: e.line,
            column: 1,
            message: format!(
                "{} cannot be used as a node pool: {}: {}",
                e.object, e.path, e.message
            ),
        });
    }
    for pool in &infra.pools {
        out.context.nodes.extend(pool.nodes());
    }
    // A file that gave nothing: name what it held.
    for (name, _, had_errors) in &per_file {
        let in_file = |file: &str| file == name;
        let context_objects = objects.iter().any(|o| {
            in_file(&o.file)
                && (matches!(
                    model::cluster_objects::ClusterKind::of(&o.kind, &o.api_version),
                    Some(
                        model::cluster_objects::ClusterKind::Node
                            | model::cluster_objects::ClusterKind::RuntimeClass(_)
                    )
                ) || o.kind == "EC2NodeClass")
        });
        let pools = infra.pools.iter().any(|p| in_file(&p.file))
            || infra.errors.iter().any(|e| in_file(&e.file));
        if context_objects || pools || *had_errors {
            continue;
        }
        let kinds: BTreeSet<String> = all_documents
            .iter()
            .filter(|d| in_file(&d.file))
            .map(|d| describe(&d.value))
            .collect();
        let held = if kinds.is_empty() {
            "nothing".to_string()
        } else {
            kinds.into_iter().collect::<Vec<_>>().join(", ")
        };
        out.errors.push(ParseError {
            file: name.clone(),
            line: 1,
            column: 1,
            message: format!(
                "no Nodes, RuntimeClasses or node pools here (the file holds {held}); cluster context is \
                 `kubectl get nodes,runtimeclasses -o yaml` or an infrastructure file: eksctl ClusterConfig, \
                 Karpenter NodePool + EC2NodeClass, `az aks nodepool list -o json`, \
                 `gcloud container node-pools list --format=json`, OpenShift MachineSet"
            ),
        });
    }
    out.pools = infra.pools;
    out
}

/// `apiVersion/kind` of a document, or what it looks like without one.
fn describe(value: &Value) -> String {
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    let api = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    match (api, kind) {
        ("", "") => "a document without apiVersion and kind".to_string(),
        ("", k) => k.to_string(),
        (a, k) => format!("{a} {k}"),
    }
}

/// The documents of one file; a top-level JSON array is read as one document per element (kept at
/// their lines).
pub(crate) fn documents(file: &str, text: &str) -> (Vec<Document>, Vec<ParseError>) {
    if !text.trim_start().starts_with('[') {
        let parsed = parse(file, text, &Limits::default());
        return (parsed.documents, parsed.errors);
    }
    // Wrapped on the first line, so every line number stays the file's.
    let wrapped = format!("{{\"items\": {text}\n}}");
    let parsed = parse(file, &wrapped, &Limits::default());
    let mut out = Vec::new();
    for doc in parsed.documents {
        let Some(Value::Array(items)) = doc.value.get("items") else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if !item.is_object() {
                continue;
            }
            let prefix = ["items".to_string(), i.to_string()];
            let lines = doc.lines.rebase(&prefix);
            out.push(Document {
                file: file.to_string(),
                index: i,
                line: lines.line_of(&FieldPath::root()).unwrap_or(doc.line),
                value: item.clone(),
                lines,
            });
        }
    }
    (out, parsed.errors)
}

/// Findings about pools: the node rules on the Nodes each pool makes, once per pool and about the pool
/// (`crate::rules::nodes::check_pool`), and `node-pool-build-unknown` for a pool whose OS or Windows
/// build cannot be told.
pub(crate) fn pool_findings(infra: &InfraRead, settings: &Settings) -> Vec<Finding> {
    let mut findings = Vec::new();
    for pool in &infra.pools {
        let line = pool.line.unwrap_or(1);
        let lines = crate::input::LineMap::with_root(line);
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
        if let Some(why) = &pool.unknown {
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
            Emitter::new(&object, settings, &mut findings).emit(
                RuleId::NodePoolBuildUnknown,
                &FieldPath::parse(&pool.path),
                message,
                None,
            );
        }
        crate::rules::nodes::check_pool(pool, &object, settings, &mut findings);
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_elements_keep_their_lines() {
        let text = "[\n  {\"name\": \"a\",\n   \"osType\": \"Linux\", \"count\": 1},\n  {\"name\": \"b\", \"osType\": \"Windows\", \"count\": 1}\n]\n";
        let (docs, errors) = documents("p.json", text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].line, 2);
        assert_eq!(docs[0].lines.line_of(&FieldPath::parse("osType")), Some(3));
        assert_eq!(docs[1].line, 4);
    }

    #[test]
    fn a_file_without_context_names_its_kinds() {
        let read = read_context(
            &[
                (
                    "nodes.yaml",
                    "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
                ),
                (
                    "app.yaml",
                    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
                ),
                ("empty.json", "[]"),
            ],
            &Settings::default(),
        );
        assert_eq!(read.errors.len(), 2, "{:?}", read.errors);
        assert_eq!(read.errors[0].file, "app.yaml");
        assert!(
            read.errors[0]
                .message
                .contains("apps/v1 Deployment, v1 ConfigMap")
        );
        assert_eq!(read.errors[1].file, "empty.json");
        assert!(read.errors[1].message.contains("holds nothing"));
        assert_eq!(read.context.nodes.len(), 1);
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
        let read = read_context(
            &[
                ("pools.json", aks),
                ("machineset.yaml", openshift),
                ("eksctl.yaml", eksctl),
            ],
            &Settings::default(),
        );
        assert!(read.errors.is_empty(), "{:?}", read.errors);
        let mut got: Vec<(String, String, String, Option<u32>)> = read
            .findings
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
            read.findings
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

    #[test]
    fn karpenter_across_files_and_unknown_build_is_info() {
        let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: win}\nspec:\n  template:\n    spec:\n      requirements:\n      - {key: kubernetes.io/os, operator: In, values: [windows]}\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: win}\n";
        let class = "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {name: win}\nspec:\n  amiSelectorTerms:\n  - alias: windows2022@latest\n";
        let read = read_context(
            &[("pool.yaml", pool), ("class.yaml", class)],
            &Settings::default(),
        );
        assert!(read.errors.is_empty(), "{:?}", read.errors);
        assert_eq!(read.context.windows_builds(), ["10.0.20348"]);
        assert!(
            read.findings
                .iter()
                .all(|f| f.rule != "node-pool-build-unknown")
        );
        let alone = read_context(&[("pool.yaml", pool)], &Settings::default());
        let info: Vec<_> = alone
            .findings
            .iter()
            .filter(|f| f.rule == "node-pool-build-unknown")
            .collect();
        assert_eq!(info.len(), 1);
        assert_eq!(info[0].severity, crate::Severity::Info);
        assert_eq!(info[0].object.display_name(), "NodePool/win");
        assert_eq!(info[0].line, Some(1));
    }
}
