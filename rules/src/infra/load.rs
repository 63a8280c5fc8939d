//! Cluster context from files: Nodes and RuntimeClasses (`kubectl get -o yaml|json`) and node pools of
//! infrastructure files, read the same way by the CLI (`check --cluster`, `audit`, `serve`, `what-if`)
//! and the playground.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{NodePool, read};
use crate::input::{Document, Limits, ParseError, parse};
use crate::model::{self, ClusterContext, Object};
use crate::path::FieldPath;

/// Everything read from the files given as cluster context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextFiles {
    /// Their Nodes and RuntimeClasses, and the Nodes of their pools.
    pub context: ClusterContext,
    /// Their node pools (infrastructure files).
    pub pools: Vec<NodePool>,
    /// Every object of the files, as read (with file and lines): what the rules judge about the files
    /// themselves, with their pools ([`crate::Checker::check_context_files`]: the node rules on their Nodes
    /// and the pools' Nodes, `node-pool-build-unknown`).
    pub objects: Vec<Object>,
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
/// use winplace_rules::infra::read_context;
/// let aks = r#"[{"name": "win", "osType": "Windows", "osSku": "Windows2022", "count": 1, "vmSize": "Standard_D4s_v5"}]"#;
/// let read = read_context(&[("pools.json", aks)]);
/// assert!(read.errors.is_empty());
/// assert_eq!(read.context.windows_builds(), ["10.0.20348"]);
///
/// let wrong = read_context(&[("app.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n")]);
/// assert!(wrong.errors[0].message.contains("Deployment"));
/// ```
pub fn read_context(files: &[(&str, &str)]) -> ContextFiles {
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
    out.objects = objects;
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
        let read = read_context(&[
            (
                "nodes.yaml",
                "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n",
            ),
            (
                "app.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
            ),
            ("empty.json", "[]"),
        ]);
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
}
