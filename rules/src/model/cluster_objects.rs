//! Nodes, Pods and RuntimeClasses decoded from JSON and trimmed to what the audit and the rules read.
//!
//! Every reader of cluster objects goes through here: the server's snapshots (`kubectl get -o json|yaml`)
//! and live watchers, the Kubewarden host's lists, and contexts read from text (CLI, playground). So what
//! is kept of each kind is decided once ([`trim_node`], [`trim_pod`], [`trim_runtime_class`]), and every
//! decode error names the object and the field at fault.
//!
//! ```
//! use winplace_rules::model::cluster_objects::{ClusterObject, decode_json};
//! let raw = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-0",
//!     "labels": {"kubernetes.io/os": "windows"}, "managedFields": [{"manager": "kubelet"}]},
//!     "status": {"images": [{"names": ["mcr.microsoft.com/windows/servercore:ltsc2022"]}]}}"#;
//! let Ok(Some(ClusterObject::Node(node))) = decode_json(raw) else { panic!("a node") };
//! assert!(node.metadata.managed_fields.is_none());
//! assert!(node.status.is_some_and(|s| s.images.is_none()));
//!
//! let bad = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "win-0"},
//!     "spec": {"taints": [{"key": "os", "effect": 7}]}}"#;
//! let error = decode_json(bad).unwrap_err();
//! assert!(error.to_string().starts_with("Node/win-0: spec.taints[0].effect: invalid type"));
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::Resource;
use k8s_openapi::api::core::v1::{Node, NodeSpec, NodeStatus, Pod, PodStatus};
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ModelError, decode};
use crate::finding::ObjectRef;
use crate::path::FieldPath;

/// A RuntimeClass and the `apiVersion` it was written with.
///
/// `node.k8s.io/v1beta1` RuntimeClasses (removed in Kubernetes 1.25) have the same shape as `v1`:
/// `handler`, `overhead` and `scheduling` at the top level (only `v1alpha1` nested them under
/// `spec`), so both decode into the `v1` type; the version is kept so rules can flag the old API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeClassEntry {
    /// `node.k8s.io/v1` or `node.k8s.io/v1beta1`.
    pub api_version: String,
    /// The RuntimeClass, decoded as `v1`.
    pub object: RuntimeClass,
}

/// The annotation on the Nodes [`crate::infra::NodePool::nodes`] makes: the pool they stand for
/// ([`crate::infra::NodePool::describe`], `node group windows-ng of eksctl.yaml`). The node rules speak of that pool
/// rather than of a node that does not exist yet; no platform sets it.
pub const POOL_ANNOTATION: &str = "winplace.io/node-pool";

/// The annotation on the Nodes [`crate::infra::NodePool::nodes`] makes: where the pool's file writes its taints
/// ([`crate::infra::Format::taints_field`]).
pub const POOL_TAINTS_ANNOTATION: &str = "winplace.io/node-pool-taints";

/// A kind of cluster object that is read, with the API version it is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterKind {
    /// `v1` Node.
    Node,
    /// `v1` Pod.
    Pod,
    /// RuntimeClass.
    RuntimeClass(RuntimeClassVersion),
}

/// The RuntimeClass API versions that are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeClassVersion {
    /// `node.k8s.io/v1`.
    V1,
    /// `node.k8s.io/v1beta1`: removed in Kubernetes 1.25, same shape as `v1` (see [`RuntimeClassEntry`]).
    V1beta1,
}

impl RuntimeClassVersion {
    /// `apiVersion` (`node.k8s.io/v1`).
    pub fn api_version(self) -> &'static str {
        match self {
            Self::V1 => "node.k8s.io/v1",
            Self::V1beta1 => "node.k8s.io/v1beta1",
        }
    }
}

impl ClusterKind {
    /// The kind of an object of `kind` and `apiVersion`; `None` for what is not read (other kinds,
    /// other versions).
    pub fn of(kind: &str, api_version: &str) -> Option<Self> {
        match (kind, api_version) {
            ("Node", "v1") => Some(Self::Node),
            ("Pod", "v1") => Some(Self::Pod),
            ("RuntimeClass", "node.k8s.io/v1") => Some(Self::RuntimeClass(RuntimeClassVersion::V1)),
            ("RuntimeClass", "node.k8s.io/v1beta1") => {
                Some(Self::RuntimeClass(RuntimeClassVersion::V1beta1))
            }
            _ => None,
        }
    }

    /// `kind` (`Node`).
    pub fn kind(self) -> &'static str {
        match self {
            Self::Node => "Node",
            Self::Pod => "Pod",
            Self::RuntimeClass(_) => "RuntimeClass",
        }
    }

    /// `apiVersion` (`v1`).
    pub fn api_version(self) -> &'static str {
        match self {
            Self::Node | Self::Pod => "v1",
            Self::RuntimeClass(version) => version.api_version(),
        }
    }
}

/// One decoded object, trimmed (boxed: the kinds differ in size by kilobytes).
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterObject {
    /// A Node (see [`trim_node`]).
    Node(Box<Node>),
    /// A Pod (see [`trim_pod`]).
    Pod(Box<Pod>),
    /// A Pod of a list, decoded narrowly: its spec whole only where the reader asked for it (see
    /// [`super::listed_pod`] and [`decode_json_listed`]).
    ListedPod(Box<super::listed_pod::ListedPod>),
    /// A RuntimeClass of either version (see [`trim_runtime_class`]).
    RuntimeClass(Box<RuntimeClassEntry>),
    /// An Event about a pod whose message an error signature explains (see [`super::events`]).
    Event(Box<super::events::PodEvent>),
}

/// A Node, Pod or RuntimeClass with a field that does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{object}: {}", field_error(error))]
pub struct FieldError {
    /// `Kind/name` (`Pod/namespace/name`), the name being the `generateName` when there is none; the kind
    /// alone for an object without either.
    pub object: String,
    /// The field at fault, from the object's root, and what is wrong with it.
    pub error: ModelError,
}

/// Why an object read from JSON text does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The text is not a JSON object with a string `kind` and `apiVersion` (serde's message).
    #[error("not a Kubernetes object: {0}")]
    NotAnObject(String),
    /// A JSON object without `kind`.
    #[error("an object without kind")]
    NoKind,
    /// A field that does not decode.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// `path: message`, or the message alone when the object itself is at fault.
fn field_error(error: &ModelError) -> String {
    if error.path.segments().is_empty() {
        error.message.clone()
    } else {
        error.to_string()
    }
}

/// Decodes one object from raw JSON text by its own `kind` and `apiVersion`: `Ok(None)` for objects that
/// are not read (other kinds and versions), [`DecodeError::NoKind`] for an object without `kind`.
///
/// Straight from the text into the Kubernetes types (fast: snapshots hold thousands of pods); the text is
/// only read as a [`Value`] again to name the faulty field when that fails.
pub fn decode_json(raw: &str) -> Result<Option<ClusterObject>, DecodeError> {
    // What kubectl writes, `apiVersion` and `kind` first, is decoded in one pass; anything else (and an
    // object whose typed decoding fails) goes the whole way below, which reads the head in a pass of its own.
    if let Some((kind, api_version)) = leading_head(raw)
        && let Some(kind) = ClusterKind::of(kind, api_version)
        && let Some(object) = typed_json(kind, raw)
    {
        return Ok(Some(object));
    }
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(borrow, default)]
        kind: Option<Cow<'a, str>>,
        #[serde(borrow, default, rename = "apiVersion")]
        api_version: Option<Cow<'a, str>>,
    }
    let head: Head =
        serde_json::from_str(raw).map_err(|e| DecodeError::NotAnObject(e.to_string()))?;
    let kind = head.kind.as_deref().unwrap_or("");
    if kind.is_empty() {
        return Err(DecodeError::NoKind);
    }
    if super::events::is_event(kind, head.api_version.as_deref().unwrap_or("")) {
        // Only the events a signature explains are kept; an Event that does not decode is not read.
        return Ok(super::events::decode_event_json(raw)
            .ok()
            .flatten()
            .map(|e| ClusterObject::Event(Box::new(e))));
    }
    let Some(kind) = ClusterKind::of(kind, head.api_version.as_deref().unwrap_or("")) else {
        return Ok(None);
    };
    if let Some(object) = typed_json(kind, raw) {
        return Ok(Some(object));
    }
    let value: Value =
        serde_json::from_str(raw).map_err(|e| DecodeError::NotAnObject(e.to_string()))?;
    Ok(Some(decode_value(kind, &value)?))
}

/// [`decode_json`] for the items of a list read for the audit: a Pod as kubectl writes it (`apiVersion` and
/// `kind` first) is decoded narrowly into a [`ClusterObject::ListedPod`], with its whole spec decoded too
/// when `whole_spec` says so of its narrow pod (the first pod of each template the reader meets: the
/// one the audit reads the template's spec from). Anything else, and a pod that does not decode so, is
/// decoded by [`decode_json`], which names what is wrong.
///
/// ```
/// use winplace_rules::model::cluster_objects::{ClusterObject, decode_json_listed};
/// let raw = r#"{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1"},
///     "spec": {"containers": [{"name": "app", "image": "nginx"}]}}"#;
/// let Ok(Some(ClusterObject::ListedPod(pod))) = decode_json_listed(raw, &mut |_| true) else {
///     panic!("a listed pod")
/// };
/// assert!(pod.whole_spec.is_some());
/// // A spec whose whole decoding fails goes the whole way, which names the field.
/// let bad = raw.replace("\"nginx\"", "7");
/// let error = decode_json_listed(&bad, &mut |_| true).unwrap_err().to_string();
/// assert!(error.contains("spec.containers[0].image"), "{error}");
/// ```
pub fn decode_json_listed(
    raw: &str,
    whole_spec: &mut dyn FnMut(&Pod) -> bool,
) -> Result<Option<ClusterObject>, DecodeError> {
    if leading_head(raw) == Some(("Pod", "v1"))
        && let Some(mut listed) = super::listed_pod::ListedPod::decode(raw)
        && (!whole_spec(&listed.pod) || listed.decode_whole_spec())
    {
        return Ok(Some(ClusterObject::ListedPod(Box::new(listed))));
    }
    decode_json(raw)
}

/// `raw` decoded straight into the Kubernetes type of `kind`, when it decodes.
fn typed_json(kind: ClusterKind, raw: &str) -> Option<ClusterObject> {
    match kind {
        ClusterKind::Node => serde_json::from_str(raw).ok().map(|n| node(&n)),
        ClusterKind::Pod => serde_json::from_str(raw).ok().map(pod),
        ClusterKind::RuntimeClass(RuntimeClassVersion::V1) => serde_json::from_str(raw)
            .ok()
            .map(|rc| runtime_class(RuntimeClassVersion::V1, rc)),
        // k8s-openapi refuses any apiVersion but `v1`: decoded from a value without it.
        ClusterKind::RuntimeClass(RuntimeClassVersion::V1beta1) => None,
    }
}

/// `(kind, apiVersion)` when they are the object's first two members (either order), plain strings
/// without escapes, as kubectl writes them; `None` otherwise (the caller then reads the whole head).
fn leading_head(raw: &str) -> Option<(&str, &str)> {
    let bytes = raw.as_bytes();
    let skip = |mut at: usize| {
        while bytes
            .get(at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            at += 1;
        }
        at
    };
    // A string without escapes at `at`: its text and where it ends.
    let plain = |at: usize| -> Option<(&str, usize)> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let len = bytes
            .get(at + 1..)?
            .iter()
            .position(|&b| b == b'"' || b == b'\\')?;
        let end = at + 1 + len;
        (bytes[end] == b'"').then(|| (&raw[at + 1..end], end + 1))
    };
    let mut at = skip(0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let (mut kind, mut api_version) = (None, None);
    for _ in 0..2 {
        let (key, next) = plain(skip(at + 1))?;
        at = skip(next);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let (value, next) = plain(skip(at + 1))?;
        let slot = match key {
            "kind" => &mut kind,
            "apiVersion" => &mut api_version,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
        at = skip(next);
        if bytes.get(at) != Some(&b',') {
            return None;
        }
    }
    Some((kind?, api_version?))
}

/// Decodes one object of `kind` from `value`. Its own `apiVersion` and `kind`, if any, are not checked
/// (the caller has matched them, or the list it came from says what it holds).
pub fn decode_value(kind: ClusterKind, value: &Value) -> Result<ClusterObject, FieldError> {
    match kind {
        ClusterKind::Node => decode_node(value).map(|n| ClusterObject::Node(Box::new(n))),
        ClusterKind::Pod => decode_pod(value).map(|p| ClusterObject::Pod(Box::new(p))),
        ClusterKind::RuntimeClass(version) => {
            decode_runtime_class(version, value).map(|rc| ClusterObject::RuntimeClass(Box::new(rc)))
        }
    }
}

/// A Node from `value`, trimmed ([`trim_node`]).
pub fn decode_node(value: &Value) -> Result<Node, FieldError> {
    typed::<Node>(value)
        .map(into_trimmed_node)
        .map_err(|error| field_error_of(ClusterKind::Node, value, error))
}

/// A Pod from `value`, trimmed ([`trim_pod`]).
pub fn decode_pod(value: &Value) -> Result<Pod, FieldError> {
    typed::<Pod>(value)
        .map(trim_pod)
        .map_err(|error| field_error_of(ClusterKind::Pod, value, error))
}

/// A RuntimeClass of `version` from `value`, trimmed ([`trim_runtime_class`]).
pub fn decode_runtime_class(
    version: RuntimeClassVersion,
    value: &Value,
) -> Result<RuntimeClassEntry, FieldError> {
    typed::<RuntimeClass>(value)
        .map(|rc| entry(version, rc))
        .map_err(|error| field_error_of(ClusterKind::RuntimeClass(version), value, error))
}

/// `value` as `T`, naming the faulty field on failure.
fn typed<T: Resource + DeserializeOwned>(value: &Value) -> Result<T, ModelError> {
    let body = body::<T>(value);
    // Borrowed from the value (no copy of the whole object); the slow search for the field only on error.
    T::deserialize(body.as_ref()).or_else(|_| decode::<T>(&body, &FieldPath::root()))
}

/// `value` without `apiVersion` and `kind` unless they are the ones `T` was generated for (k8s-openapi
/// refuses any other, and lists may or may not repeat them per item).
fn body<T: Resource>(value: &Value) -> Cow<'_, Value> {
    let fits = |key: &str, want: &str| value.get(key).is_none_or(|v| v.as_str() == Some(want));
    if fits("apiVersion", T::API_VERSION) && fits("kind", T::KIND) {
        return Cow::Borrowed(value);
    }
    let mut owned = value.clone();
    if let Some(map) = owned.as_object_mut() {
        map.remove("apiVersion");
        map.remove("kind");
    }
    Cow::Owned(owned)
}

/// `error` in `value`, an object of `kind`.
fn field_error_of(kind: ClusterKind, value: &Value, error: ModelError) -> FieldError {
    let object = object_ref(kind, value);
    FieldError {
        object: if object.name.is_empty() {
            object.kind
        } else {
            object.display_name()
        },
        error,
    }
}

/// The identity of `value` as an object of `kind`, for errors (as [`super::Object::from_value`] has it).
fn object_ref(kind: ClusterKind, value: &Value) -> ObjectRef {
    let meta = value.get("metadata");
    let text = |key: &str| {
        meta.and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    ObjectRef {
        api_version: kind.api_version().to_string(),
        kind: kind.kind().to_string(),
        namespace: (kind == ClusterKind::Pod)
            .then(|| text("namespace").unwrap_or("default").to_string()),
        name: text("name")
            .or_else(|| text("generateName"))
            .unwrap_or("")
            .to_string(),
    }
}

fn node(n: &Node) -> ClusterObject {
    ClusterObject::Node(Box::new(trim_node(n)))
}

fn pod(p: Pod) -> ClusterObject {
    ClusterObject::Pod(Box::new(trim_pod(p)))
}

fn runtime_class(version: RuntimeClassVersion, rc: RuntimeClass) -> ClusterObject {
    ClusterObject::RuntimeClass(Box::new(entry(version, rc)))
}

fn entry(version: RuntimeClassVersion, rc: RuntimeClass) -> RuntimeClassEntry {
    RuntimeClassEntry {
        api_version: version.api_version().to_string(),
        object: trim_runtime_class(rc),
    }
}

/// The fields of a Node that [`trim_node`] keeps, as Kubewarden's `field_masks` spell them (dot paths):
/// what the context-aware policy asks the host for, so that a host which prunes sends no more than this.
///
/// ```
/// use winplace_rules::model::cluster_objects::NODE_FIELDS;
/// assert!(NODE_FIELDS.contains(&"spec.taints"));
/// ```
pub const NODE_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.labels",
    "spec.taints",
    "spec.unschedulable",
    "status.nodeInfo",
    "status.declaredFeatures",
];

/// The fields of a Node the rules read when it is **cluster context** for a reviewed workload (not a Node
/// reviewed itself): [`NODE_FIELDS`] with only the two `nodeInfo` fields read then, `operatingSystem` (the
/// OS of a node without a `kubernetes.io/os` label, [`super::node_os`]) and `kernelVersion` (a Windows
/// node's build, [`super::node_windows_build`]). The other `nodeInfo` fields (kubelet, containerd, OS
/// image, machine ids) are read only by the node rules, which run on a Node that is itself reviewed, and
/// by the audit's node rows. What the admission policy asks its host for: at 5,000 nodes, a third of
/// the bytes of the answer less (docs/benchmarks.md, "Admission at the envelope, fewer bytes a node").
///
/// ```
/// use winplace_rules::model::cluster_objects::{CONTEXT_NODE_FIELDS, NODE_FIELDS};
/// assert!(CONTEXT_NODE_FIELDS.contains(&"status.nodeInfo.kernelVersion"));
/// assert!(!CONTEXT_NODE_FIELDS.contains(&"status.nodeInfo") && NODE_FIELDS.contains(&"status.nodeInfo"));
/// ```
pub const CONTEXT_NODE_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.labels",
    "spec.taints",
    "spec.unschedulable",
    "status.nodeInfo.operatingSystem",
    "status.nodeInfo.kernelVersion",
    "status.declaredFeatures",
];

/// [`CONTEXT_NODE_FIELDS`] without `nodeInfo`: what the rules read of a context node labelled
/// `kubernetes.io/os: linux` ([`crate::LINUX_NODES`]). Of `nodeInfo` they read `operatingSystem` only
/// when the node has no such label ([`super::node_os`]: the label first) and `kernelVersion` only on a
/// Windows node ([`super::node_os_build`], [`super::ClusterContext::windows_builds`]); `declaredFeatures`
/// stays, a Linux node's features decide where a pod that needs one may go. At 5,000 nodes of which
/// 4,500 Linux, a tenth of the bytes of the answer less.
///
/// ```
/// use winplace_rules::model::cluster_objects::{CONTEXT_NODE_FIELDS, LINUX_NODE_FIELDS};
/// assert!(LINUX_NODE_FIELDS.iter().all(|f| CONTEXT_NODE_FIELDS.contains(f) && !f.contains("nodeInfo")));
/// assert!(LINUX_NODE_FIELDS.contains(&"status.declaredFeatures"));
/// ```
pub const LINUX_NODE_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.labels",
    "spec.taints",
    "spec.unschedulable",
    "status.declaredFeatures",
];

/// The annotations winplace puts on the Nodes it makes from a pool of an infrastructure file
/// ([`POOL_ANNOTATION`]), which the node rules read; `None` for any other node (they are
/// not in [`NODE_FIELDS`]: a cluster's own Nodes never carry them).
fn pool_annotations(
    annotations: Option<&BTreeMap<String, String>>,
) -> Option<BTreeMap<String, String>> {
    let annotations = annotations?;
    let kept: BTreeMap<String, String> = [POOL_ANNOTATION, crate::infra::POOL_TAINTS_ANNOTATION]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), annotations.get(k)?.clone())))
        .collect();
    (!kept.is_empty()).then_some(kept)
}

/// The node as the rules read it: name, labels, taints, `unschedulable`, `nodeInfo` and `declaredFeatures`
/// ([`NODE_FIELDS`]),
/// and on a node made from a pool of an infrastructure file the annotations naming the pool. The rest
/// goes (conditions and heartbeats, images, addresses, capacity, managed fields, ...), so that a
/// heartbeat leaves the node equal and 5,000 nodes stay small.
///
/// Takes a reference: the trimmed node is built anew from the few fields kept.
pub fn trim_node(node: &Node) -> Node {
    Node {
        metadata: ObjectMeta {
            name: node.metadata.name.clone(),
            labels: node.metadata.labels.clone(),
            annotations: pool_annotations(node.metadata.annotations.as_ref()),
            ..ObjectMeta::default()
        },
        spec: node.spec.as_ref().map(|s| NodeSpec {
            taints: s.taints.clone(),
            unschedulable: s.unschedulable,
            ..NodeSpec::default()
        }),
        status: node.status.as_ref().map(|s| NodeStatus {
            node_info: s.node_info.clone(),
            declared_features: s.declared_features.clone(),
            ..NodeStatus::default()
        }),
    }
}

/// [`trim_node`] of a node one owns: the fields kept are moved, not copied.
///
/// ```
/// use winplace_rules::model::cluster_objects::{into_trimmed_node, trim_node};
/// let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "n", "labels": {"kubernetes.io/os": "linux"}, "uid": "u"},
///     "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": true},
///     "status": {"addresses": [{"type": "Hostname", "address": "n"}]}})).unwrap();
/// assert_eq!(into_trimmed_node(node.clone()), trim_node(&node));
/// ```
pub fn into_trimmed_node(node: Node) -> Node {
    Node {
        metadata: ObjectMeta {
            annotations: pool_annotations(node.metadata.annotations.as_ref()),
            name: node.metadata.name,
            labels: node.metadata.labels,
            ..ObjectMeta::default()
        },
        spec: node.spec.map(|s| NodeSpec {
            taints: s.taints,
            unschedulable: s.unschedulable,
            ..NodeSpec::default()
        }),
        status: node.status.map(|s| NodeStatus {
            node_info: s.node_info,
            declared_features: s.declared_features,
            ..NodeStatus::default()
        }),
    }
}

/// The pod as the audit reads it: its name, namespace, labels and owners (to group pods into workloads),
/// its creation time (how long a gated pod has waited, [`crate::audit::GatedPods`]), the spec (for the
/// catalogue), and of the status the phase, the conditions and the container statuses (for the
/// live-state rules). The rest goes (annotations, managed fields, IPs, the status' times), as kube-rs's
/// `pod_reflector` example trims pods on the watch stream, so that 150,000 pods stay small.
///
/// ```
/// use winplace_rules::model::cluster_objects::trim_pod;
/// let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-1", "namespace": "shop", "annotations": {"a": "b"},
///         "labels": {"app": "web"}, "managedFields": [{"manager": "kubelet"}]},
///     "spec": {"containers": [{"name": "c", "image": "nginx"}]},
///     "status": {"phase": "Running", "podIP": "10.0.0.1"}})).unwrap();
/// let trimmed = trim_pod(pod);
/// assert!(trimmed.metadata.annotations.is_none() && trimmed.metadata.managed_fields.is_none());
/// assert!(trimmed.metadata.labels.is_some());
/// let status = trimmed.status.unwrap();
/// assert_eq!((status.phase.as_deref(), status.pod_ip), (Some("Running"), None));
/// ```
pub fn trim_pod(pod: Pod) -> Pod {
    let Pod {
        metadata,
        spec,
        status,
    } = pod;
    Pod {
        metadata: ObjectMeta {
            name: metadata.name,
            generate_name: metadata.generate_name,
            namespace: metadata.namespace,
            labels: metadata.labels,
            owner_references: metadata.owner_references,
            creation_timestamp: metadata.creation_timestamp,
            ..ObjectMeta::default()
        },
        spec,
        status: status.map(|s| PodStatus {
            phase: s.phase,
            // The kubelet's refusal (`PodOSNotSupported`) is the pod's own reason and message.
            reason: s.reason,
            message: s.message,
            conditions: s.conditions,
            container_statuses: s.container_statuses,
            init_container_statuses: s.init_container_statuses,
            ephemeral_container_statuses: s.ephemeral_container_statuses,
            ..PodStatus::default()
        }),
    }
}

/// The RuntimeClass without its managed fields (the rules read its name, handler, overhead and
/// scheduling), and without an empty annotation map: Kubewarden's policy-server answers every listed object
/// with `annotations: {}` when it had none (docs/reference/kubewarden-hosting.md §4), which is the same
/// RuntimeClass.
///
/// ```
/// use winplace_rules::model::cluster_objects::trim_runtime_class;
/// let rc: k8s_openapi::api::node::v1::RuntimeClass = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "w", "annotations": {}, "managedFields": []}, "handler": "runhcs-wcow-process"})).unwrap();
/// let trimmed = trim_runtime_class(rc);
/// assert_eq!((trimmed.metadata.annotations, trimmed.metadata.managed_fields), (None, None));
/// ```
pub fn trim_runtime_class(mut runtime_class: RuntimeClass) -> RuntimeClass {
    runtime_class.metadata.managed_fields = None;
    if runtime_class
        .metadata
        .annotations
        .as_ref()
        .is_some_and(BTreeMap::is_empty)
    {
        runtime_class.metadata.annotations = None;
    }
    runtime_class
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A node with everything a kubelet reports.
    fn full_node() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": "win-0", "uid": "u", "resourceVersion": "7",
                "labels": {"kubernetes.io/os": "windows"},
                "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
                "managedFields": [{"manager": "kubelet", "operation": "Update"}]
            },
            "spec": {"providerID": "azure:///x", "unschedulable": true,
                "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
            "status": {
                "addresses": [{"address": "10.0.0.4", "type": "InternalIP"}],
                "capacity": {"cpu": "4"},
                "conditions": [{"type": "Ready", "status": "True"}],
                "images": [{"names": ["mcr.microsoft.com/windows/servercore:ltsc2022"], "sizeBytes": 1}],
                "declaredFeatures": ["RestartAllContainersOnContainerExits"],
                "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7",
                    "kernelVersion": "10.0.20348.2762", "kubeProxyVersion": "", "kubeletVersion": "v1.33.4",
                    "machineID": "", "operatingSystem": "windows", "osImage": "Windows Server 2022", "systemUUID": ""}
            }
        })
    }

    /// What is left of [`full_node`].
    fn trimmed_node() -> Value {
        json!({
            "metadata": {"name": "win-0", "labels": {"kubernetes.io/os": "windows"}},
            "spec": {"unschedulable": true,
                "taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
            "status": {
                "declaredFeatures": ["RestartAllContainersOnContainerExits"],
                "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7",
                    "kernelVersion": "10.0.20348.2762", "kubeProxyVersion": "", "kubeletVersion": "v1.33.4",
                    "machineID": "", "operatingSystem": "windows", "osImage": "Windows Server 2022", "systemUUID": ""}
            }
        })
    }

    fn pod() -> Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "shop", "labels": {"app": "web"},
                "managedFields": [{"manager": "kube-controller-manager"}],
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u"}]},
            "spec": {"nodeName": "win-0", "containers": [{"name": "app", "image": "nginx"}]},
            "status": {"phase": "Running"}
        })
    }

    fn runtime_class_value(api_version: &str) -> Value {
        json!({
            "apiVersion": api_version, "kind": "RuntimeClass",
            "metadata": {"name": "windows-2022", "managedFields": [{"manager": "kubectl"}]},
            "handler": "runhcs-wcow-process",
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}
        })
    }

    /// `value` without `apiVersion` and `kind`.
    fn bare(value: &Value) -> Value {
        let mut value = value.clone();
        if let Some(map) = value.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
        }
        value
    }

    /// The object as JSON (k8s-openapi writes `apiVersion` and `kind`: left out), to compare with what is
    /// expected to be kept.
    fn kept(object: &ClusterObject) -> Value {
        let json = |v: serde_json::Result<Value>| bare(&v.expect("serializes"));
        match object {
            ClusterObject::Node(n) => json(serde_json::to_value(n)),
            ClusterObject::Pod(p) => json(serde_json::to_value(p)),
            ClusterObject::RuntimeClass(rc) => {
                json!({"apiVersion": rc.api_version, "object": json(serde_json::to_value(&rc.object))})
            }
            ClusterObject::Event(e) => json!({"pod": e.pod}),
            ClusterObject::ListedPod(p) => json(serde_json::to_value(
                (**p).clone().into_pod().expect("whole"),
            )),
        }
    }

    #[test]
    fn decodes_and_trims_each_kind_from_text_and_from_values() {
        let mut pod_kept = bare(&pod());
        pod_kept["metadata"]
            .as_object_mut()
            .expect("metadata")
            .remove("managedFields");
        let rc_kept = |api_version: &str| {
            json!({"apiVersion": api_version, "object": {"metadata": {"name": "windows-2022"},
                "handler": "runhcs-wcow-process",
                "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}}})
        };
        // (object, its kind, what is kept).
        let rows = [
            (full_node(), ClusterKind::Node, trimmed_node()),
            (pod(), ClusterKind::Pod, pod_kept),
            (
                runtime_class_value("node.k8s.io/v1"),
                ClusterKind::RuntimeClass(RuntimeClassVersion::V1),
                rc_kept("node.k8s.io/v1"),
            ),
            (
                runtime_class_value("node.k8s.io/v1beta1"),
                ClusterKind::RuntimeClass(RuntimeClassVersion::V1beta1),
                rc_kept("node.k8s.io/v1beta1"),
            ),
        ];
        for (value, kind, want) in rows {
            let from_text = decode_json(&value.to_string())
                .expect("decodes")
                .expect("is read");
            assert_eq!(kept(&from_text), want, "{kind:?} from text");
            assert_eq!(
                decode_value(kind, &value),
                Ok(from_text.clone()),
                "{kind:?} from a value"
            );
            // Items of the Kubewarden host's lists may come without apiVersion and kind.
            assert_eq!(
                decode_value(kind, &bare(&value)),
                Ok(from_text),
                "{kind:?} bare"
            );
        }
        // An item of another kind in a list of nodes is read as a node all the same.
        let mut mislabeled = full_node();
        mislabeled["kind"] = json!("Pod");
        assert!(matches!(
            decode_value(ClusterKind::Node, &mislabeled),
            Ok(ClusterObject::Node(_))
        ));
    }

    #[test]
    fn kinds_and_versions_that_are_read() {
        let rows = [
            ("Node", "v1", Some(ClusterKind::Node)),
            ("Pod", "v1", Some(ClusterKind::Pod)),
            (
                "RuntimeClass",
                "node.k8s.io/v1",
                Some(ClusterKind::RuntimeClass(RuntimeClassVersion::V1)),
            ),
            (
                "RuntimeClass",
                "node.k8s.io/v1beta1",
                Some(ClusterKind::RuntimeClass(RuntimeClassVersion::V1beta1)),
            ),
            ("RuntimeClass", "node.k8s.io/v1alpha1", None),
            ("Node", "v2", None),
            ("Service", "v1", None),
        ];
        for (kind, api_version, want) in rows {
            assert_eq!(
                ClusterKind::of(kind, api_version),
                want,
                "{kind} {api_version}"
            );
            if let Some(k) = want {
                assert_eq!((k.kind(), k.api_version()), (kind, api_version));
            }
        }
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}});
        assert_eq!(decode_json(&service.to_string()), Ok(None));
    }

    #[test]
    fn trimming_keeps_what_the_rules_read_and_is_idempotent() {
        let node: Node = serde_json::from_value(full_node()).expect("node");
        let once = trim_node(&node);
        assert_eq!(trim_node(&once), once);
        // Owned or borrowed, the same fields stay.
        assert_eq!(into_trimmed_node(node.clone()), once);
        assert_eq!(into_trimmed_node(Node::default()), Node::default());
        // A heartbeat (conditions, images) leaves the trimmed node equal.
        let mut beat = node.clone();
        if let Some(s) = beat.status.as_mut() {
            s.conditions = None;
            s.images = None;
        }
        assert_eq!(trim_node(&beat), once);
        // A node without spec and status keeps none.
        assert_eq!(trim_node(&Node::default()), Node::default());
        // Of the annotations, only those naming the pool a node was made from stay: infra advice names the pool, not the node.
        assert!(once.metadata.annotations.is_none());
        let mut made = node.clone();
        made.metadata.annotations = Some(BTreeMap::from([
            ("a".to_string(), "b".to_string()),
            (
                POOL_ANNOTATION.to_string(),
                "node group w of f.yaml".to_string(),
            ),
        ]));
        let kept = trim_node(&made).metadata.annotations.unwrap_or_default();
        assert_eq!(kept.keys().collect::<Vec<_>>(), [POOL_ANNOTATION]);
        assert_eq!(into_trimmed_node(made.clone()), trim_node(&made));
        let pod: Pod = serde_json::from_value(pod()).expect("pod");
        let trimmed = trim_pod(pod.clone());
        assert!(trimmed.metadata.managed_fields.is_none());
        assert_eq!(trim_pod(trimmed.clone()), trimmed, "idempotent");
        assert_eq!(trimmed.spec, pod.spec);
        assert_eq!(
            (trimmed.metadata.labels, trimmed.metadata.owner_references),
            (pod.metadata.labels, pod.metadata.owner_references)
        );
        let (want, got) = (
            pod.status.unwrap_or_default(),
            trimmed.status.unwrap_or_default(),
        );
        assert_eq!(
            (got.phase, got.conditions, got.container_statuses),
            (want.phase, want.conditions, want.container_statuses)
        );
    }

    #[test]
    fn bad_input_errors_name_the_object_and_the_field() {
        let mut bad_taint = full_node();
        bad_taint["spec"]["taints"][0]["effect"] = json!(7);
        let mut bad_pod = pod();
        bad_pod["spec"]["containers"] = json!(3);
        let mut bad_label = runtime_class_value("node.k8s.io/v1beta1");
        bad_label["scheduling"]["nodeSelector"]["kubernetes.io/os"] = json!(true);
        let mut nameless = pod();
        nameless["metadata"] = json!({"namespace": "shop"});
        nameless["spec"]["nodeName"] = json!([]);
        // (raw JSON, the error's start).
        let rows = [
            (
                bad_taint.to_string(),
                "Node/win-0: spec.taints[0].effect: invalid type: integer `7`",
            ),
            (
                bad_pod.to_string(),
                "Pod/shop/web-1: spec.containers: invalid type: integer `3`",
            ),
            (
                bad_label.to_string(),
                "RuntimeClass/windows-2022: scheduling.nodeSelector[kubernetes.io/os]: invalid type: boolean",
            ),
            (
                nameless.to_string(),
                "Pod: spec.nodeName: invalid type: sequence",
            ),
            (
                r#"{"apiVersion": "v1", "kind": "Node", "metadata": 5}"#.into(),
                "Node: metadata: invalid type: integer `5`",
            ),
            (
                r#"{"apiVersion": "v1", "metadata": {"name": "n"}}"#.into(),
                "an object without kind",
            ),
            (
                r#"{"apiVersion": "v1", "kind": 5}"#.into(),
                "not a Kubernetes object: invalid type: integer `5`",
            ),
            (
                r#"{"apiVersion": "v1", "kind": "Node""#.into(),
                "not a Kubernetes object: EOF",
            ),
        ];
        for (raw, want) in rows {
            let error = decode_json(&raw).expect_err(&raw).to_string();
            assert!(error.starts_with(want), "{raw}: {error}");
        }
        // The same errors from values; a value that is no object at all is at fault itself.
        let error = decode_value(ClusterKind::Node, &bad_taint).expect_err("bad taint");
        assert_eq!(error.object, "Node/win-0");
        assert_eq!(error.error.path.to_string(), "spec.taints[0].effect");
        let error =
            decode_runtime_class(RuntimeClassVersion::V1, &json!("x")).expect_err("a string");
        assert!(
            error
                .to_string()
                .starts_with("RuntimeClass: invalid type: string"),
            "{error}"
        );
    }

    #[test]
    fn the_head_kubectl_writes_first_is_read_in_the_same_pass_as_the_object() {
        assert_eq!(
            leading_head(r#" { "apiVersion" : "v1", "kind": "Pod", "metadata": {}}"#),
            Some(("Pod", "v1"))
        );
        assert_eq!(
            leading_head(r#"{"kind":"Node","apiVersion":"v1","x":1}"#),
            Some(("Node", "v1"))
        );
        // Anything else is left to the whole head's reading.
        for other in [
            r#"{"metadata": {}, "kind": "Pod", "apiVersion": "v1"}"#,
            r#"{"kind": "Pod", "kind": "Pod", "apiVersion": "v1"}"#,
            r#"{"kind": "P\u006fd", "apiVersion": "v1", "x": 1}"#,
            r#"{"kind": "Pod", "apiVersion": "v1"}"#,
            r#"{"kind": 1, "apiVersion": "v1", "x": 1}"#,
            r#"["kind", "Pod"]"#,
            r#"{"kind": "Pod"#,
            "",
        ] {
            assert_eq!(leading_head(other), None, "{other}");
        }
        // The same pod whatever its members' order, escapes or bad fields.
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows"}, "containers": [{"name": "a", "image": "i"}]}});
        let first = format!(
            r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}}}"#,
            pod["metadata"], pod["spec"]
        );
        let last = format!(
            r#"{{"metadata": {}, "spec": {}, "kind": "Pod", "apiVersion": "v1"}}"#,
            pod["metadata"], pod["spec"]
        );
        let want = decode_json(&pod.to_string()).expect("decodes");
        assert!(matches!(want, Some(ClusterObject::Pod(_))));
        assert_eq!(decode_json(&first), Ok(want.clone()));
        assert_eq!(decode_json(&last), Ok(want));
        // A field that does not decode is named either way.
        let bad = first.replace("\"windows\"", "[1]");
        assert!(
            decode_json(&bad)
                .expect_err("a bad field")
                .to_string()
                .contains("nodeSelector"),
            "{bad}"
        );
    }
}
