//! The cluster from the host's answers: the Lists of `v1` Nodes and `node.k8s.io/v1` RuntimeClasses that
//! `list_resources_all` returns, decoded into the rules' [`ClusterContext`].

use serde_json::Value;
use winplace_rules::model::cluster_objects::{self, RuntimeClassVersion};
use winplace_rules::model::{self, ClusterContext};

use super::InputError;

/// The cluster resources the policy reads when the host grants them, as `(apiVersion, kind)` (metadata
/// `contextAwareResources` must list exactly these): Nodes and RuntimeClasses with `contextAware`, the
/// placement controller's Lease with `placementGate`.
pub const CONTEXT_RESOURCES: &[(&str, &str)] = &[
    ("v1", "Node"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("coordination.k8s.io/v1", "Lease"),
];

/// Builds the cluster context from the host's answers to listing `v1` Nodes and `node.k8s.io/v1`
/// RuntimeClasses: List objects (`{"items": [...]}`, items with or without `apiVersion`/`kind`), each item
/// decoded and trimmed by [`cluster_objects`].
///
/// Any item that does not decode fails the whole context (a context with a Node missing would report
/// pods unschedulable that are not): the caller then falls back to the settings.
pub fn context_from_lists(
    nodes: &Value,
    runtime_classes: &Value,
) -> Result<ClusterContext, InputError> {
    let nodes = items(nodes, "Node")?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            cluster_objects::decode_node(item).map_err(|error| InputError::Item {
                kind: "Node",
                index,
                error,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ClusterContext {
        nodes,
        runtime_classes: runtime_classes_of(runtime_classes)?,
    })
}

/// The decoded items of the host's RuntimeClass list.
fn runtime_classes_of(
    runtime_classes: &Value,
) -> Result<Vec<model::RuntimeClassEntry>, InputError> {
    items(runtime_classes, "RuntimeClass")?
        .iter()
        .enumerate()
        .map(|(index, item)| {
            cluster_objects::decode_runtime_class(RuntimeClassVersion::V1, item).map_err(|error| {
                InputError::Item {
                    kind: "RuntimeClass",
                    index,
                    error,
                }
            })
        })
        .collect()
}

/// [`context_from_lists`] from the host's answers as they arrive (JSON bytes), as the guest reads them.
///
/// The Nodes are decoded straight into trimmed objects, only the fields the rules read built
/// (`node_list.rs`): no JSON tree of a 5,000-node list is built first (that tree cost more than the rest of
/// a review), nor the metadata and status fields the rules do not read. An answer that does not decode so is read through
/// [`context_from_lists`], which names the item and the field at fault; the two agree on every answer
/// that decodes.
///
/// ```
/// use winplace_policy_wasm::admission::{context_from_answers, context_from_lists};
/// let nodes = r#"{"items": [{"metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}},
///     "status": {"images": [{"names": ["mcr.microsoft.com/oss/kubernetes/pause:3.9"]}]}}]}"#;
/// let rcs = r#"{"items": []}"#;
/// let ctx = context_from_answers(nodes.as_bytes(), rcs.as_bytes()).unwrap();
/// let nodes: serde_json::Value = serde_json::from_str(nodes).unwrap();
/// assert_eq!(ctx, context_from_lists(&nodes, &serde_json::json!({"items": []})).unwrap());
/// assert!(context_from_answers(b"forbidden", rcs.as_bytes()).unwrap_err().to_string().contains("not JSON"));
/// ```
pub fn context_from_answers(
    nodes: &[u8],
    runtime_classes: &[u8],
) -> Result<ClusterContext, InputError> {
    let json = |kind: &'static str, bytes: &[u8]| {
        serde_json::from_slice::<Value>(bytes).map_err(|error| InputError::NotJson { kind, error })
    };
    match super::node_list::decode_nodes(nodes) {
        Some(nodes) => Ok(ClusterContext {
            nodes,
            runtime_classes: runtime_classes_of(&json("RuntimeClass", runtime_classes)?)?,
        }),
        // The slow path, for its error (or for what only it accepts).
        None => context_from_lists(
            &json("Node", nodes)?,
            &json("RuntimeClass", runtime_classes)?,
        ),
    }
}

/// Adds to `context` the nodes of another answer to listing Nodes (JSON bytes), as
/// [`context_from_answers`] decodes them: pushed onto its nodes as they are read (no second vector of
/// them all to join the two). An answer that does not decode so is read through the slow path, which
/// names the item and the field at fault; on an error `context` is left as it was.
///
/// ```
/// use winplace_policy_wasm::admission::{add_nodes_from_answer, context_from_answers};
/// let first = r#"{"items": [{"metadata": {"name": "win-1", "labels": {"kubernetes.io/os": "windows"}}}]}"#;
/// let second = r#"{"items": [{"metadata": {"name": "lin-1", "labels": {"kubernetes.io/os": "linux"}}}]}"#;
/// let mut ctx = context_from_answers(first.as_bytes(), br#"{"items": []}"#).unwrap();
/// add_nodes_from_answer(&mut ctx, second.as_bytes()).unwrap();
/// let names: Vec<_> = ctx.nodes.iter().filter_map(|n| n.metadata.name.as_deref()).collect();
/// assert_eq!(names, ["win-1", "lin-1"]);
/// assert!(add_nodes_from_answer(&mut ctx, b"forbidden").is_err());
/// assert_eq!(ctx.nodes.len(), 2);
/// ```
pub fn add_nodes_from_answer(context: &mut ClusterContext, nodes: &[u8]) -> Result<(), InputError> {
    if super::node_list::decode_nodes_onto(nodes, &mut context.nodes) {
        return Ok(());
    }
    // The slow path, for its error (or for what only it accepts).
    let list = serde_json::from_slice::<Value>(nodes).map_err(|error| InputError::NotJson {
        kind: "Node",
        error,
    })?;
    let added = context_from_lists(&list, &serde_json::json!({"items": []}))?;
    context.nodes.extend(added.nodes);
    Ok(())
}

/// The items of a List.
fn items<'a>(list: &'a Value, kind: &'static str) -> Result<&'a [Value], InputError> {
    list.get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or(InputError::NoItems { kind })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{cluster, fixture};
    use serde_json::json;

    #[test]
    fn context_lists_decode_or_fail_whole() {
        let ctx = cluster();
        assert_eq!(ctx.nodes.len(), 4);
        assert_eq!(ctx.windows_builds(), ["10.0.20348"]);
        assert_eq!(ctx.runtime_classes.len(), 1);
        let with_kinds = json!({"kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}]});
        let rcs = json!({"items": []});
        assert_eq!(
            context_from_lists(&with_kinds, &rcs)
                .map(|c| c.nodes.len())
                .map_err(|e| e.to_string()),
            Ok(1)
        );
        let bad = json!({"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": 7}}]});
        let err = context_from_lists(&bad, &rcs).unwrap_err();
        assert!(
            matches!(
                err,
                InputError::Item {
                    kind: "Node",
                    index: 1,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("Node list items[1]"), "{err}");
        assert!(
            err.to_string().contains("metadata.name: invalid type"),
            "{err}"
        );
        let err = context_from_lists(&json!({"error": "forbidden"}), &rcs).unwrap_err();
        assert!(err.to_string().contains("no items"), "{err}");
    }

    #[test]
    fn answers_as_bytes_decode_as_the_lists_do() {
        let rcs = fixture("context/runtimeclasses.json");
        let both = |nodes: &Value| {
            let fast =
                context_from_answers(nodes.to_string().as_bytes(), rcs.to_string().as_bytes())
                    .map_err(|e| e.to_string());
            (
                fast,
                context_from_lists(nodes, &rcs).map_err(|e| e.to_string()),
            )
        };
        let whole = fixture("context/nodes.json");
        let mut with_kinds = whole.clone();
        for item in with_kinds["items"].as_array_mut().unwrap() {
            item["apiVersion"] = json!("v1");
            item["kind"] = json!("Node");
            item["status"]["images"] =
                json!([{"names": ["mcr.microsoft.com/oss/kubernetes/pause:3.9"]}]);
        }
        let odd_kind =
            json!({"items": [{"apiVersion": "v1", "kind": "Nodes", "metadata": {"name": "n"}}]});
        let bad = json!({"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": 7}}]});
        for nodes in [
            whole,
            with_kinds,
            odd_kind,
            bad,
            json!({"error": "forbidden"}),
            json!({"items": []}),
        ] {
            let (fast, slow) = both(&nodes);
            assert_eq!(fast, slow, "{nodes}");
        }
        assert_eq!(both(&fixture("context/nodes.json")).0.unwrap(), cluster());
        let err = context_from_answers(b"{\"items\": [", rcs.to_string().as_bytes()).unwrap_err();
        assert!(
            err.to_string().starts_with("the Node list is not JSON"),
            "{err}"
        );
        let err = context_from_answers(b"{\"items\": []}", b"<html>").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the RuntimeClass list is not JSON"),
            "{err}"
        );
    }
}
