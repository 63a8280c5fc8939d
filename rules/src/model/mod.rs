//! Kubernetes objects read from parsed documents: their identity, their pod template, and the cluster
//! context (Nodes, RuntimeClasses) they are checked against.
//!
//! ```
//! use winplace_rules::{input, model, FieldPath};
//! let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: nginx}]\n";
//! let parsed = input::parse("d.yaml", text, &input::Limits::default());
//! let objects = model::objects(&parsed.documents);
//! assert_eq!(objects[0].object_ref().display_name(), "Deployment/default/web");
//! let template = model::pod_template(&objects[0]).expect("a workload").expect("valid");
//! assert_eq!(template.prefix.to_string(), "spec.template.spec");
//! assert_eq!(template.spec.containers[0].image.as_deref(), Some("nginx"));
//! assert_eq!(objects[0].line_of(&template.prefix.field("containers")), Some(7));
//! ```

pub mod cluster_objects;
mod context;
pub mod events;
pub mod listed_pod;
pub mod raw_spec;
mod workload;

use std::fmt;

use serde_json::Value;

use crate::finding::ObjectRef;
use crate::input::{Document, LineMap};
use crate::path::{FieldPath, Segment};

pub use cluster_objects::RuntimeClassEntry;
pub use cluster_objects::{POOL_ANNOTATION, POOL_TAINTS_ANNOTATION};
pub use context::{
    ClusterContext, ObjectError, node_os, node_os_build, node_taints, node_windows_build,
};
pub use workload::{PodTemplate, WorkloadKind, pod_spec_changed, pod_spec_value, pod_template};

/// One Kubernetes object of the input (a document, or an item of a `List`).
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// The input's name.
    pub file: String,
    /// Index of the document it came from (see [`Document::index`]); items of a `List` share it.
    pub doc_index: usize,
    /// Index of the object in its document's `items` when the document is a `List` (`None` for a plain
    /// document); lets fixes be written back to the right item. Items of a list nested in a list keep
    /// the index of the outer item.
    pub item: Option<usize>,
    /// `apiVersion` (`apps/v1`).
    pub api_version: String,
    /// `kind` (`Deployment`).
    pub kind: String,
    /// `metadata.namespace`, `Some("default")` when a namespaced object has none, `None` for
    /// cluster-scoped kinds (Node, RuntimeClass, Namespace, ...).
    pub namespace: Option<String>,
    /// `metadata.name`, else `metadata.generateName`, else empty.
    pub name: String,
    /// The whole object.
    pub value: Value,
    /// Lines of its fields, relative to the object's root but numbered as in the file.
    pub lines: LineMap,
}

impl Object {
    /// The object's identity as findings report it.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// Line of `path` in the file, or of its nearest present ancestor.
    pub fn line_of(&self, path: &FieldPath) -> Option<u32> {
        self.lines.line_of(path)
    }

    /// The value at `path`, if present.
    pub fn get(&self, path: &FieldPath) -> Option<&Value> {
        get(&self.value, path)
    }

    /// Builds an object from a JSON value (no lines); `None` without `kind` or `apiVersion`.
    ///
    /// For objects that did not come from text: the server's cluster cache, admission requests.
    pub fn from_value(
        file: &str,
        doc_index: usize,
        value: Value,
        lines: LineMap,
    ) -> Option<Object> {
        let api_version = value.get("apiVersion")?.as_str()?.to_string();
        let kind = value.get("kind")?.as_str()?.to_string();
        if kind.is_empty() {
            return None;
        }
        let meta = value.get("metadata");
        let text = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_str);
        let namespace = if is_cluster_scoped(&kind) {
            None
        } else {
            Some(
                text("namespace")
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or("default")
                    .to_string(),
            )
        };
        let name = text("name")
            .filter(|n| !n.is_empty())
            .or_else(|| text("generateName"))
            .unwrap_or("")
            .to_string();
        Some(Object {
            file: file.to_string(),
            doc_index,
            item: None,
            api_version,
            kind,
            namespace,
            name,
            value,
            lines,
        })
    }
}

/// The value at `path` under `value` (fields, keys and indexes).
pub fn get<'a>(value: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.segments().iter().try_fold(value, |v, s| match s {
        Segment::Field(k) | Segment::Key(k) => v.get(k.as_ref()),
        Segment::Index(i) => v.get(*i),
    })
}

/// Kinds that live outside namespaces (the built-in ones, and the Kubewarden cluster policies).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterAdmissionPolicy",
    "ClusterAdmissionPolicyGroup",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionPolicyBinding",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PodSecurityPolicy",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// Whether objects of `kind` are cluster-scoped (have no namespace).
pub fn is_cluster_scoped(kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&kind)
}

/// Whether a document is a list of objects: `kind: List`, or any `*List` kind with `items`, as
/// `kubectl get -o yaml|json` prints them.
fn is_list(value: &Value) -> bool {
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    kind.ends_with("List") && value.get("items").is_some_and(Value::is_array)
}

/// The objects of `documents`, in order, with every `List` expanded into its items.
///
/// A document or list item without a string `kind` and `apiVersion` is not an object Kubernetes would
/// accept; it is skipped silently (nothing can be checked about it). Lists inside lists are expanded
/// too.
pub fn objects(documents: &[Document]) -> Vec<Object> {
    let mut out = Vec::new();
    for doc in documents {
        push_objects(
            &doc.file,
            doc.index,
            doc.value.clone(),
            doc.lines.clone(),
            &mut out,
        );
    }
    out
}

/// [`objects`] of one document that the caller gives up: its tree becomes the objects' without a copy
/// (the policy and `check` read each document once).
///
/// ```
/// use winplace_rules::input::{Document, LineMap};
/// let value = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
///     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}]});
/// let doc = Document { file: "f.json".into(), index: 0, line: 1, value, lines: LineMap::default() };
/// let objects = winplace_rules::model::into_objects(doc);
/// assert_eq!((objects[0].kind.as_str(), objects[0].item), ("Pod", Some(0)));
/// ```
pub fn into_objects(document: Document) -> Vec<Object> {
    let mut out = Vec::new();
    push_objects(
        &document.file,
        document.index,
        document.value,
        document.lines,
        &mut out,
    );
    out
}

/// The objects of one document's `value`, lists expanded, appended to `out`.
fn push_objects(file: &str, index: usize, value: Value, lines: LineMap, out: &mut Vec<Object>) {
    // (value, lines) still to look at, in order.
    let mut pending = vec![(value, lines, None)];
    while let Some((value, lines, item)) = pending.pop() {
        if is_list(&value) {
            let Value::Object(mut map) = value else {
                continue;
            };
            let Some(Value::Array(items)) = map.remove("items") else {
                continue;
            };
            for (i, value_of_item) in items.into_iter().enumerate().rev() {
                let item_lines = lines.rebase(&["items".to_string(), i.to_string()]);
                pending.push((value_of_item, item_lines, item.or(Some(i))));
            }
            continue;
        }
        if let Some(mut obj) = Object::from_value(file, index, value, lines) {
            obj.item = item;
            out.push(obj);
        }
    }
}

/// A value that does not decode into its Kubernetes type, and the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ModelError {
    /// The field at fault, from the object's root (as precise as could be found; see
    /// [`decode`]).
    pub path: FieldPath,
    /// What is wrong (serde's message, e.g. ``invalid type: integer `1`, expected a string``).
    pub message: String,
}

/// Fields whose keys are map keys, not field names (printed `[key]` in paths).
const MAP_FIELDS: &[&str] = &[
    "annotations",
    "capacity",
    "allocatable",
    "labels",
    "limits",
    "matchLabels",
    "nodeSelector",
    "overhead",
    "podFixed",
    "requests",
    "volumeAttributes",
];

fn step(parent: Option<&Segment>, key: &str) -> Segment {
    let parent_is_map =
        matches!(parent, Some(Segment::Field(f)) if MAP_FIELDS.contains(&f.as_ref()));
    if parent_is_map || key.contains(['.', '/']) {
        Segment::Key(key.to_string().into())
    } else {
        Segment::Field(key.to_string().into())
    }
}

/// Most trial decodes [`decode`] makes to find the faulty field.
const PROBE_BUDGET: usize = 2_000;

/// Decodes `value` (found at `base` in its object) into `T`, naming the faulty field on failure.
///
/// serde does not say where a `serde_json::Value` failed, so on error the value is narrowed down: at
/// each level, the first child that still fails to decode when its siblings are removed is where the
/// error is (Kubernetes types default every missing field, so removing fields never adds errors),
/// unless the level fails even when emptied (a list where a string belongs: the error is there). The
/// path stops at the deepest node found this way within a budget of trial decodes; the message is
/// serde's for that narrowed value.
pub fn decode<T: serde::de::DeserializeOwned>(
    value: &Value,
    base: &FieldPath,
) -> Result<T, ModelError> {
    // Deserialized from the borrowed value: no copy of the tree on the way (this runs for every
    // template of every request the policy sees).
    let first = match <T as serde::Deserialize>::deserialize(value) {
        Ok(v) => return Ok(v),
        Err(e) => e.to_string(),
    };
    let fails = |v: &Value| {
        <T as serde::Deserialize>::deserialize(v)
            .err()
            .map(|e| e.to_string())
    };
    let mut work = value.clone();
    let mut message = first;
    // The path of the faulty node inside `work` (indexes there are always 0) and as reported.
    let mut inner: Vec<Segment> = Vec::new();
    let mut path = base.clone();
    let mut probes = 0usize;
    'descend: while let Some(node) = get(&work, &FieldPath(inner.clone())) {
        let children: Vec<(Segment, Segment, Value)> = match node {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| {
                    let s = Segment::Field(k.clone().into());
                    (s, step(path.segments().last(), k), v.clone())
                })
                .collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Segment::Index(0), Segment::Index(i), v.clone()))
                .collect(),
            _ => break,
        };
        // A container of the wrong type (a list where a string belongs) fails even when emptied: the
        // error is the container itself.
        let mut emptied = work.clone();
        if let Some(slot) = get_mut(&mut emptied, &inner) {
            *slot = match slot {
                Value::Array(_) => Value::Array(Vec::new()),
                _ => Value::Object(serde_json::Map::new()),
            };
        }
        probes += 1;
        if let Some(msg) = fails(&emptied) {
            message = msg;
            break;
        }
        for (in_work, reported, child) in children {
            probes += 1;
            if probes > PROBE_BUDGET {
                break 'descend;
            }
            let mut candidate = work.clone();
            let Some(slot) = get_mut(&mut candidate, &inner) else {
                break 'descend;
            };
            *slot = match (&in_work, &*slot) {
                (Segment::Index(_), _) => Value::Array(vec![child]),
                (Segment::Field(k), _) => {
                    let mut m = serde_json::Map::new();
                    m.insert(k.to_string(), child);
                    Value::Object(m)
                }
                (Segment::Key(_), _) => break 'descend,
            };
            if let Some(msg) = fails(&candidate) {
                work = candidate;
                message = msg;
                inner.push(in_work);
                path.0.push(reported);
                continue 'descend;
            }
        }
        break;
    }
    Err(ModelError { path, message })
}

fn get_mut<'a>(value: &'a mut Value, path: &[Segment]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |v, s| match s {
        Segment::Field(k) | Segment::Key(k) => v.get_mut(k.as_ref()),
        Segment::Index(i) => v.get_mut(*i),
    })
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};

    fn objs(text: &str) -> Vec<Object> {
        let parsed = parse("t.yaml", text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        objects(&parsed.documents)
    }

    #[test]
    fn namespaces_default_unless_cluster_scoped() {
        // corpus/README.md: "a manifest without a namespace is in `default`"; Node and RuntimeClass
        // are cluster-scoped.
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: apps}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, namespace: ignored}\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: rc}\nhandler: h\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {generateName: web-}\n---\nmetadata: {name: no-kind}\n";
        let names: Vec<String> = objs(text)
            .iter()
            .map(|o| o.object_ref().display_name())
            .collect();
        assert_eq!(
            names,
            [
                "Pod/default/a",
                "Pod/apps/b",
                "Node/n1",
                "RuntimeClass/rc",
                "Deployment/default/web-"
            ]
        );
    }

    #[test]
    fn lists_expand_with_item_lines() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n- kind: NoApiVersion\n- apiVersion: v1\n  kind: PodList\n  items:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: p}\n    spec:\n      nodeName: n1\n---\napiVersion: v1\nkind: NodeList\nitems: []\n";
        let objects = objs(text);
        let names: Vec<String> = objects
            .iter()
            .map(|o| o.object_ref().display_name())
            .collect();
        assert_eq!(names, ["Node/n1", "Pod/default/p"]);
        assert_eq!(
            objects[0].line_of(&FieldPath::parse("metadata.name")),
            Some(7)
        );
        assert_eq!(objects[0].line_of(&FieldPath::root()), Some(4));
        assert_eq!(
            objects[1].line_of(&FieldPath::parse("spec.nodeName")),
            Some(16)
        );
        assert_eq!(
            objects[1].line_of(&FieldPath::parse("spec.tolerations")),
            Some(15)
        );
        assert!(objects.iter().all(|o| o.doc_index == 0));
        // The nested PodList is item 2 of the outer List: its Pod keeps the outer index.
        assert_eq!(
            objects.iter().map(|o| o.item).collect::<Vec<_>>(),
            [Some(0), Some(2)]
        );
    }

    #[test]
    fn corpus_lists_expand() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
        let text =
            std::fs::read_to_string(format!("{dir}/node-hygiene/input.yaml")).expect("corpus");
        let objects = objs(&text);
        assert!(!objects.is_empty());
        assert!(objects.iter().all(|o| o.kind != "List"));
        for o in &objects {
            let line = o.line_of(&FieldPath::parse("metadata.name")).expect("line");
            let written = text.lines().nth(line as usize - 1).unwrap_or("");
            assert!(
                written.contains(&o.name),
                "{} at line {line}: {written}",
                o.name
            );
        }
    }

    #[test]
    fn decode_names_the_faulty_field() {
        use k8s_openapi::api::core::v1::PodSpec;
        let value = serde_json::json!({
            "containers": [
                {"name": "ok", "image": "a"},
                {"name": "bad", "env": [{"name": "A", "value": "x"}, {"name": "B", "value": 1}]}
            ],
            "nodeSelector": {"kubernetes.io/os": "windows"}
        });
        let err = decode::<PodSpec>(&value, &FieldPath::parse("spec")).expect_err("bad value");
        assert_eq!(err.path.to_string(), "spec.containers[1].env[1].value");
        assert!(err.message.contains("expected a string"), "{}", err.message);

        let value =
            serde_json::json!({"containers": [], "nodeSelector": {"kubernetes.io/os": true}});
        let err = decode::<PodSpec>(&value, &FieldPath::root()).expect_err("bad value");
        assert_eq!(err.path.to_string(), "nodeSelector[kubernetes.io/os]");
        assert!(
            decode::<PodSpec>(&serde_json::json!({"containers": []}), &FieldPath::root()).is_ok()
        );
    }
}
