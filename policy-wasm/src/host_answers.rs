//! What a waPC host answers `policy.wasm`'s host calls with, as a policy-server that grants the policy
//! its cluster context and reads image manifests does: pure functions over JSON, no I/O.
//!
//! Both hosts of this repository answer through this module, so they cannot disagree: the wasmtime host
//! of `policy-host/` (tests, benchmarks, `replay`) and the dashboard's in-page host, whose JavaScript
//! (`dashboard/js/policy_host.js`) only moves bytes in and out of the guest's memory.
//!
//! * `kubewarden/kubernetes/list_resources_all`: the List of the asked `api_version` and `kind`, the items
//!   its `label_selector` selects ([`LabelSelector`], as the API server selects them for policy-server's
//!   watch), each as policy-server's reflector keeps it under the request's `field_masks` (its data pruned,
//!   its metadata whole but for the managed fields: [`stored_object`], [`HostAnswers::stored_list`];
//!   docs/reference/kubewarden-hosting.md §4);
//! * `kubewarden/oci/v1/oci_manifest` and `kubewarden/oci/v1/oci_manifest_config`: the manifest (image
//!   index or image manifest) and the `{manifest, digest, config}` answer of the asked image;
//! * `kubewarden/tracing/log`: accepted with an empty answer (policy-server prints the line);
//! * anything else, or an entry the host does not hold, is refused ([`Refusal`]), as policy-server
//!   refuses a capability it does not grant.
//!
//! ```
//! use serde_json::json;
//! use winplace_policy_wasm::host_answers::HostAnswers;
//! let mut host = HostAnswers::default();
//! host.insert_list("v1", "Node", json!({"items": [{"metadata": {"name": "n"},
//!     "spec": {"unschedulable": true, "podCIDR": "10.0.0.0/24"}}]}));
//! let ask = br#"{"api_version": "v1", "kind": "Node", "field_masks": ["spec.unschedulable"]}"#;
//! let answer = host.answer("kubewarden", "kubernetes", "list_resources_all", ask).unwrap();
//! let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap();
//! assert_eq!(answer["items"], json!([{"metadata": {"name": "n", "annotations": {}, "managedFields": []},
//!     "spec": {"unschedulable": true}}]));
//! assert!(host.answer("kubewarden", "oci", "v1/oci_manifest", br#""nginx""#).is_err());
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use winplace_rules::model::ClusterContext;

/// Why a host call is refused (the guest gets the message as the host's error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The call's payload is not the JSON the capability takes.
    #[error("the {call} payload is not JSON: {message}")]
    Payload {
        /// `binding/namespace/operation`.
        call: String,
        /// Why it does not parse.
        message: String,
    },
    /// No List of this `apiVersion/kind` is granted.
    #[error("no cluster context is chosen: {key} is not available to the policy")]
    NoList {
        /// `apiVersion/kind` ([`list_key`]).
        key: String,
    },
    /// No manifest (or configuration) of this image is known.
    #[error("the server could not resolve {image} (or does not resolve images)")]
    NoManifest {
        /// The image reference asked for.
        image: String,
    },
    /// The `label_selector` does not parse.
    #[error("the label selector {selector:?} does not parse: {message}")]
    Selector {
        /// The selector as asked.
        selector: String,
        /// What is wrong with it.
        message: String,
    },
    /// No object of that key ([`object_key`]) is granted, or it does not exist.
    #[error("this host grants no object {key}")]
    NoObject {
        /// [`object_key`].
        key: String,
    },
    /// A capability this host does not provide.
    #[error("this host does not provide the host capability {call}")]
    Unsupported {
        /// `binding/namespace/operation`.
        call: String,
    },
}

/// The key of a List in [`HostAnswers::lists`]: `apiVersion/kind` (`v1/Node`,
/// `node.k8s.io/v1/RuntimeClass`).
pub fn list_key(api_version: &str, kind: &str) -> String {
    format!("{api_version}/{kind}")
}

/// What a host answers: Lists for the Kubernetes capability, manifests for the OCI one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostAnswers {
    /// Whole List objects (`{"items": [...]}`) by [`list_key`]; pruned per call to the asked fields.
    pub lists: BTreeMap<String, Value>,
    /// `oci/v1/oci_manifest` answers by image reference: an image index or an image manifest.
    pub manifests: BTreeMap<String, Value>,
    /// `oci/v1/oci_manifest_config` answers by image reference: `{manifest, digest, config}`.
    pub configs: BTreeMap<String, Value>,
    /// `kubernetes/get_resource` answers by [`object_key`]: single objects (the placement
    /// controller's Lease).
    pub objects: BTreeMap<String, Value>,
    /// The host's clock as the native [`HostCalls`](crate::admission::HostCalls) gives it (`None`: no
    /// clock). policy.wasm reads its host's WASI clock instead.
    pub now: Option<k8s_openapi::jiff::Timestamp>,
}

/// The key of an object in [`HostAnswers::objects`]: `apiVersion/kind/namespace/name`.
pub fn object_key(api_version: &str, kind: &str, namespace: &str, name: &str) -> String {
    format!("{api_version}/{kind}/{namespace}/{name}")
}

impl HostAnswers {
    /// Grants `kubernetes/get_resource` of `object` (its `apiVersion`, `kind`, namespace and name).
    pub fn insert_object(&mut self, object: Value) {
        let field = |v: &Value| v.as_str().unwrap_or("").to_string();
        let key = object_key(
            &field(&object["apiVersion"]),
            &field(&object["kind"]),
            &field(&object["metadata"]["namespace"]),
            &field(&object["metadata"]["name"]),
        );
        self.objects.insert(key, object);
    }

    /// Grants the List of `kind` in `api_version`.
    pub fn insert_list(&mut self, api_version: &str, kind: &str, list: Value) {
        self.lists.insert(list_key(api_version, kind), list);
    }

    /// The Lists of `context`'s Nodes and RuntimeClasses, as the API server lists them (`None`: nothing
    /// granted, as without `contextAwareResources`).
    ///
    /// ```
    /// use winplace_policy_wasm::host_answers::{HostAnswers, list_key};
    /// let host = HostAnswers::for_context(Some(&Default::default()));
    /// assert_eq!(host.lists[&list_key("v1", "Node")]["kind"], "NodeList");
    /// assert!(HostAnswers::for_context(None).lists.is_empty());
    /// ```
    pub fn for_context(context: Option<&ClusterContext>) -> HostAnswers {
        let Some(context) = context else {
            return HostAnswers::default();
        };
        let nodes =
            json!({"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": context.nodes});
        let classes: Vec<&_> = context.runtime_classes.iter().map(|e| &e.object).collect();
        let runtime_classes = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClassList",
            "metadata": {}, "items": classes});
        let mut host = HostAnswers::default();
        host.insert_list("v1", "Node", nodes);
        host.insert_list("node.k8s.io/v1", "RuntimeClass", runtime_classes);
        host
    }

    /// Adds the OCI capability's answers for images resolved by winplace's registry client, given as
    /// the server's `GET /api/images/resolve` answers by image (`{digest, platformsFrom, platforms:
    /// [{os, architecture, osVersion, osFeatures}]}`): an image index when the platforms came from one; otherwise an
    /// image manifest (which carries no platform) and its configuration, as a registry serves a
    /// single-platform image.
    pub fn with_resolved_images(mut self, resolved: &BTreeMap<String, Value>) -> HostAnswers {
        for (image, answer) in resolved {
            let digest = answer["digest"].as_str().unwrap_or("");
            let platform = |p: &Value| {
                let mut out = json!({"os": p["os"], "architecture": p["architecture"]});
                if let Some(v) = p["osVersion"].as_str() {
                    out["os.version"] = json!(v);
                }
                if let Some(features) = p["osFeatures"].as_array().filter(|f| !f.is_empty()) {
                    out["os.features"] = json!(features);
                }
                out
            };
            let platforms: Vec<Value> = answer["platforms"].as_array().cloned().unwrap_or_default();
            if answer["platformsFrom"] == "index" {
                let entries: Vec<Value> = platforms
                    .iter()
                    .map(|p| {
                        json!({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": digest, "size": 0, "platform": platform(p)})
                    })
                    .collect();
                let index = json!({"schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": entries});
                self.manifests.insert(image.clone(), index);
            } else if let Some(p) = platforms.first() {
                let manifest = json!({"schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest, "size": 0},
                    "layers": []});
                let config = json!({"manifest": manifest, "digest": digest, "config": platform(p)});
                self.manifests.insert(image.clone(), manifest);
                self.configs.insert(image.clone(), config);
            }
        }
        self
    }

    /// What policy-server answers a `list_resources_all` request (`{api_version, kind, label_selector,
    /// field_selector, field_masks}`) with: the objects its reflector for the request holds (those the
    /// label selector selects, each as [`stored_object`] keeps it under the request's field masks), in a
    /// List whose `apiVersion` is the asked one and whose `kind` is the asked kind + `List`, with empty list
    /// metadata.
    ///
    /// Upstream, the reflector is made on the first request of its [`reflector_id`] and kept, so the
    /// selecting and pruning are done once, not per request; each request clones its objects and
    /// serializes the List (policy-evaluator `callback_handler/kubernetes/client.rs`,
    /// `list_resources_from_reflector`). A host that keeps the result per [`reflector_id`] answers as
    /// policy-server does (`policy-host`'s `capability`).
    ///
    /// ```
    /// use serde_json::json;
    /// use winplace_policy_wasm::host_answers::HostAnswers;
    /// let mut host = HostAnswers::default();
    /// host.insert_list("v1", "Node", json!({"items": [{"metadata": {"name": "n", "uid": "u"},
    ///     "spec": {"podCIDR": "10.0.0.0/24", "unschedulable": true}}]}));
    /// let ask = json!({"api_version": "v1", "kind": "Node", "field_masks": ["spec.unschedulable"]});
    /// assert_eq!(host.stored_list(&ask).unwrap(), json!({"apiVersion": "v1", "kind": "NodeList",
    ///     "metadata": {}, "items": [{"metadata": {"name": "n", "uid": "u", "annotations": {},
    ///     "managedFields": []}, "spec": {"unschedulable": true}}]}));
    /// ```
    pub fn stored_list(&self, request: &Value) -> Result<Value, Refusal> {
        let api_version = request["api_version"].as_str().unwrap_or("");
        let kind = request["kind"].as_str().unwrap_or("");
        let key = list_key(api_version, kind);
        let list = self.lists.get(&key).ok_or(Refusal::NoList { key })?;
        let selector = match request["label_selector"].as_str() {
            Some(selector) => Some(LabelSelector::parse(selector)?),
            None => None,
        };
        let mask = FieldMask::of_request(request);
        let items: Vec<Value> = list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|item| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&item["metadata"]["labels"]))
            })
            .map(|item| stored_object(item, mask.as_ref()))
            .collect();
        Ok(
            json!({"apiVersion": api_version, "kind": format!("{kind}List"), "metadata": {},
            "items": items}),
        )
    }

    /// The answer to one host call (`binding`, `namespace`, `operation`, the guest's payload), or why it
    /// is refused.
    pub fn answer(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, Refusal> {
        let call = || format!("{binding}/{namespace}/{operation}");
        let request = || {
            serde_json::from_slice::<Value>(payload).map_err(|e| Refusal::Payload {
                call: call(),
                message: e.to_string(),
            })
        };
        let found = match (binding, namespace, operation) {
            // The SDK's log lines: policy-server prints them; nothing to answer.
            ("kubewarden", "tracing", "log") => return Ok(Vec::new()),
            ("kubewarden", "kubernetes", "list_resources_all") => {
                let list = self.stored_list(&request()?)?;
                return Ok(list.to_string().into_bytes());
            }
            ("kubewarden", "kubernetes", "get_resource") => {
                let request = request()?;
                let field = |k: &str| request[k].as_str().unwrap_or("").to_string();
                let key = object_key(
                    &field("api_version"),
                    &field("kind"),
                    &field("namespace"),
                    &field("name"),
                );
                self.objects.get(&key).ok_or(Refusal::NoObject { key })?
            }
            ("kubewarden", "oci", "v1/oci_manifest" | "v1/oci_manifest_config") => {
                let request = request()?;
                let image = request.as_str().ok_or_else(|| Refusal::Payload {
                    call: call(),
                    message: "not an image reference (a JSON string)".into(),
                })?;
                let table = if operation == "v1/oci_manifest" {
                    &self.manifests
                } else {
                    &self.configs
                };
                table.get(image).ok_or_else(|| Refusal::NoManifest {
                    image: image.to_string(),
                })?
            }
            _ => return Err(Refusal::Unsupported { call: call() }),
        };
        Ok(found.to_string().into_bytes())
    }
}

/// The policy's host calls answered natively (tests, benchmarks): `&mut &answers`.
impl crate::admission::HostCalls for &HostAnswers {
    fn call(&mut self, namespace: &str, operation: &str, payload: &[u8]) -> Option<Vec<u8>> {
        self.answer("kubewarden", namespace, operation, payload)
            .ok()
    }

    fn now(&mut self) -> Option<k8s_openapi::jiff::Timestamp> {
        self.now
    }
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    /// `key=value`, `key==value`, `key in (a,b)`: the key is present with one of the values.
    In(String, Vec<String>),
    /// `key!=value`, `key notin (a,b)`: the key is absent, or present with none of the values.
    NotIn(String, Vec<String>),
    /// `key`: the key is present.
    Exists(String),
    /// `!key`: the key is absent.
    DoesNotExist(String),
}

/// A label selector in the API server's string form (`kubernetes.io/os!=linux`, `tier in (a,b),env`):
/// comma-separated requirements, all of which an object's labels must meet, as
/// `k8s.io/apimachinery/pkg/labels` parses and matches them (docs/reference/kubewarden-hosting.md §4).
/// The host of this repository filters its Lists with it as the API server filters policy-server's watch.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::host_answers::LabelSelector;
/// let not_linux = LabelSelector::parse("kubernetes.io/os!=linux").unwrap();
/// assert!(not_linux.matches(&json!({"kubernetes.io/os": "windows"})));
/// assert!(not_linux.matches(&json!({})), "a key that is absent is not equal");
/// assert!(!not_linux.matches(&json!({"kubernetes.io/os": "linux"})));
/// assert!(LabelSelector::parse("a in (b").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

impl LabelSelector {
    /// Parses the string form; an empty selector selects everything.
    pub fn parse(selector: &str) -> Result<LabelSelector, Refusal> {
        let fail = |message: &str| Refusal::Selector {
            selector: selector.to_string(),
            message: message.to_string(),
        };
        // Split on the commas outside parentheses.
        let mut parts = Vec::new();
        let (mut depth, mut start) = (0usize, 0usize);
        for (i, c) in selector.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.checked_sub(1).ok_or_else(|| fail("unbalanced ')'"))?,
                ',' if depth == 0 => {
                    parts.push(&selector[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if depth != 0 {
            return Err(fail("unbalanced '('"));
        }
        parts.push(&selector[start..]);
        let mut requirements = Vec::new();
        for part in parts.iter().map(|p| p.trim()) {
            if part.is_empty() {
                if parts.len() == 1 {
                    break;
                }
                return Err(fail("an empty requirement"));
            }
            requirements.push(Self::requirement(part).ok_or_else(|| fail(part))?);
        }
        Ok(LabelSelector(requirements))
    }

    fn requirement(part: &str) -> Option<Requirement> {
        let word = |s: &str| {
            let s = s.trim();
            (!s.is_empty() && !s.contains(char::is_whitespace)).then(|| s.to_string())
        };
        if let Some((key, value)) = part.split_once("!=") {
            return Some(Requirement::NotIn(
                word(key)?,
                vec![value.trim().to_string()],
            ));
        }
        if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
            return Some(Requirement::In(word(key)?, vec![value.trim().to_string()]));
        }
        if let Some(open) = part.find('(') {
            let (head, values) = (part[..open].trim(), part[open + 1..].strip_suffix(')')?);
            let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
            let (key, op) = head.rsplit_once(char::is_whitespace)?;
            return match op {
                "in" => Some(Requirement::In(word(key)?, values)),
                "notin" => Some(Requirement::NotIn(word(key)?, values)),
                _ => None,
            };
        }
        match part.strip_prefix('!') {
            Some(key) => Some(Requirement::DoesNotExist(word(key)?)),
            None => Some(Requirement::Exists(word(part)?)),
        }
    }

    /// Whether `labels` (an object's `metadata.labels`, or null) meet every requirement.
    pub fn matches(&self, labels: &Value) -> bool {
        let get = |key: &str| labels.get(key).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Requirement::In(key, values) => get(key).is_some_and(|v| values.iter().any(|w| w == v)),
            Requirement::NotIn(key, values) => {
                get(key).is_none_or(|v| values.iter().all(|w| w != v))
            }
            Requirement::Exists(key) => get(key).is_some(),
            Requirement::DoesNotExist(key) => get(key).is_none(),
        })
    }

    /// `list` with only the items whose labels match (the others are not copied).
    pub fn select(&self, list: &Value) -> Value {
        map_items(list, |items| {
            items
                .iter()
                .filter(|item| self.matches(&item["metadata"]["labels"]))
                .cloned()
                .collect()
        })
    }
}

/// `list` with its `items` replaced by `f(items)`, the rest copied; the items are not copied first.
fn map_items(list: &Value, f: impl FnOnce(&[Value]) -> Vec<Value>) -> Value {
    match list {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            let mut f = Some(f);
            for (key, value) in map {
                let value = match (key.as_str(), value, f.take_if(|_| key == "items")) {
                    ("items", Value::Array(items), Some(f)) => Value::Array(f(items)),
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Kubewarden's field mask: the tree of the dot paths a request's `field_masks` name, each segment a key
/// (policy-evaluator's `FieldMaskNode`, `callback_handler/kubernetes/field_mask.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldMask {
    children: BTreeMap<String, FieldMask>,
}

impl FieldMask {
    /// The tree of `paths` (`metadata.name`, `spec.taints`, `status`).
    pub fn new<'p>(paths: impl IntoIterator<Item = &'p str>) -> FieldMask {
        let mut root = FieldMask::default();
        for path in paths {
            let mut node = &mut root;
            for part in path.split('.') {
                node = node.children.entry(part.to_string()).or_default();
            }
        }
        root
    }

    /// The mask of a request's `field_masks` (a list of strings), `None` when it has none (absent or
    /// null): policy-evaluator reads it as `Option<BTreeSet<String>>`.
    pub fn of_request(request: &Value) -> Option<FieldMask> {
        let masks = request["field_masks"].as_array()?;
        Some(FieldMask::new(masks.iter().filter_map(Value::as_str)))
    }

    /// Prunes `value` in place as policy-evaluator's `prune_in_place` does: a mask without children keeps
    /// everything below it; an object keeps the keys the mask names, each pruned by its child; an array
    /// applies the same mask to every item; a string, number, boolean or null reached is kept whole.
    pub fn prune(&self, value: &mut Value) {
        if self.children.is_empty() {
            return;
        }
        match value {
            Value::Object(map) => map.retain(|key, value| match self.children.get(key) {
                Some(child) => {
                    child.prune(value);
                    true
                }
                None => false,
            }),
            Value::Array(items) => items.iter_mut().for_each(|item| self.prune(item)),
            _ => {}
        }
    }
}

/// The annotation kubectl's client-side apply writes, which policy-server's reflectors drop.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// An object as policy-server's reflector stores it, and so as `list_resources_all` answers it
/// (policy-evaluator `callback_handler/kubernetes/reflector.rs`, `modify_object`, on a kube
/// `DynamicObject`): `metadata.managedFields` emptied (`[]`) and the last-applied annotation removed
/// (`annotations` then `{}` when there were none), always; with a `mask`, the object's **data** pruned
/// ([`FieldMask::prune`]): every member but `apiVersion`, `kind` and `metadata`, which a `DynamicObject`
/// holds apart. So the mask's `metadata.*` paths prune nothing: the metadata comes whole.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::host_answers::{FieldMask, stored_object};
/// let node = json!({"apiVersion": "v1", "kind": "Node",
///     "metadata": {"name": "n", "uid": "u", "managedFields": [{"manager": "kubelet"}]},
///     "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"},
///     "status": {"images": [{"names": ["pause"]}]}});
/// let mask = FieldMask::new(["metadata.name", "spec.taints.key"]);
/// assert_eq!(stored_object(&node, Some(&mask)), json!({"apiVersion": "v1", "kind": "Node",
///     "metadata": {"name": "n", "uid": "u", "managedFields": [], "annotations": {}},
///     "spec": {"taints": [{"key": "k"}]}}));
/// ```
pub fn stored_object(object: &Value, mask: Option<&FieldMask>) -> Value {
    let Value::Object(members) = object else {
        return object.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in members {
        let kept = match (key.as_str(), mask) {
            ("metadata", _) => continue,
            ("apiVersion" | "kind", _) | (_, None) => value.clone(),
            (_, Some(mask)) if mask.children.is_empty() => value.clone(),
            (_, Some(mask)) => match mask.children.get(key) {
                Some(child) => {
                    let mut value = value.clone();
                    child.prune(&mut value);
                    value
                }
                None => continue,
            },
        };
        out.insert(key.clone(), kept);
    }
    let mut metadata = match members.get("metadata") {
        Some(Value::Object(meta)) => meta.clone(),
        _ => serde_json::Map::new(),
    };
    metadata.insert("managedFields".into(), json!([]));
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.remove(LAST_APPLIED);
    }
    out.insert("metadata".into(), Value::Object(metadata));
    Value::Object(out)
}

/// The id of the reflector policy-server answers a list request from: the same for two requests that
/// ask for the same objects the same way (policy-evaluator `Reflector::compute_id`: apiVersion, kind,
/// namespace, label selector, field selector and field masks). A host may keep
/// [`HostAnswers::stored_list`]'s answer per id, as policy-server keeps the reflector.
pub fn reflector_id(request: &Value) -> String {
    let masks: Option<BTreeSet<&str>> = request["field_masks"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect());
    format!(
        "{}|{}|{}|{}|{}|{masks:?}",
        request["api_version"],
        request["kind"],
        request["namespace"],
        request["label_selector"],
        request["field_selector"]
    )
}

/// `list` with each item as [`stored_object`] keeps it under the mask of `masks` (no masks: only the
/// metadata's managed fields and last-applied annotation go), the rest of the list copied.
///
/// ```
/// let list = serde_json::json!({"items": [{"metadata": {"name": "n"},
///     "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"}}]});
/// let pruned = winplace_policy_wasm::host_answers::prune_items(&list, &["metadata.name", "spec.taints.key"]);
/// assert_eq!(pruned, serde_json::json!({"items": [{"metadata": {"name": "n", "managedFields": [],
///     "annotations": {}}, "spec": {"taints": [{"key": "k"}]}}]}));
/// ```
pub fn prune_items(list: &Value, masks: &[&str]) -> Value {
    let mask = (!masks.is_empty()).then(|| FieldMask::new(masks.iter().copied()));
    map_items(list, |items| {
        items
            .iter()
            .map(|item| stored_object(item, mask.as_ref()))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::model::cluster_objects::{NODE_FIELDS, decode_node};
    use winplace_rules::windows::ImageOs;
    use winplace_rules::windows::class_from_manifest;

    fn text(answer: Result<Vec<u8>, Refusal>) -> Result<String, Refusal> {
        answer.map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn lists_only_with_a_context() {
        let none = HostAnswers::for_context(None);
        let ask = br#"{"api_version":"v1","kind":"Node"}"#;
        assert_eq!(
            none.answer("kubewarden", "kubernetes", "list_resources_all", ask),
            Err(Refusal::NoList {
                key: "v1/Node".into()
            })
        );
        assert_eq!(
            none.answer("kubewarden", "tracing", "log", b"{}"),
            Ok(Vec::new())
        );
        let some = HostAnswers::for_context(Some(&ClusterContext::default()));
        let list: Value = serde_json::from_slice(
            &some
                .answer("kubewarden", "kubernetes", "list_resources_all", ask)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(list["items"], json!([]));
        assert!(
            some.answer("kubewarden", "oci", "v1/oci_manifest", b"\"nginx\"")
                .is_err()
        );
    }

    #[test]
    fn calls_the_host_does_not_provide_are_refused() {
        let host = HostAnswers::for_context(Some(&ClusterContext::default()));
        // (binding, namespace, operation, payload, refusal)
        let rows: [(&str, &str, &str, &[u8], &str); 5] = [
            (
                "kubewarden",
                "net",
                "v1/dns_lookup_host",
                b"\"x\"",
                "does not provide",
            ),
            (
                "other",
                "kubernetes",
                "list_resources_all",
                b"{}",
                "does not provide",
            ),
            (
                "kubewarden",
                "kubernetes",
                "list_resources_all",
                b"{",
                "not JSON",
            ),
            (
                "kubewarden",
                "oci",
                "v1/oci_manifest",
                b"{}",
                "not an image reference",
            ),
            (
                "kubewarden",
                "kubernetes",
                "list_resources_all",
                br#"{"api_version":"v1","kind":"Pod"}"#,
                "v1/Pod is not available",
            ),
        ];
        for (binding, namespace, operation, payload, refusal) in rows {
            let error = host
                .answer(binding, namespace, operation, payload)
                .expect_err(operation);
            assert!(error.to_string().contains(refusal), "{operation}: {error}");
        }
    }

    /// The two hosts of this repository once disagreed here: the wasmtime host pruned the Nodes to the
    /// asked `field_masks` while the dashboard's answered whole items (with `apiVersion` and `kind`). The
    /// answer to the policy's own request holds exactly the masked fields, and reads as the whole node.
    #[test]
    fn lists_are_pruned_to_the_field_masks_asked_for() {
        let node = json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "win-1", "uid": "u", "labels": {"kubernetes.io/os": "windows"}},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"},
            "status": {"images": [{"names": ["pause:3.9"]}], "nodeInfo": {"architecture": "amd64", "bootID": "",
                "containerRuntimeVersion": "containerd://1.7", "kernelVersion": "10.0.20348.2762",
                "kubeProxyVersion": "", "kubeletVersion": "v1.33.4", "machineID": "m", "operatingSystem": "windows",
                "osImage": "Windows Server 2022 Datacenter", "systemUUID": "s"}}});
        let context = ClusterContext {
            nodes: vec![decode_node(&node).unwrap()],
            ..ClusterContext::default()
        };
        let whole_list = json!({"items": [node.clone()]});
        // The same List granted as the dashboard grants its context and as the wasmtime tests grant theirs.
        let mut granted = HostAnswers::default();
        granted.insert_list("v1", "Node", whole_list);
        let ask = json!({"api_version": "v1", "kind": "Node", "label_selector": null,
            "field_selector": null, "field_masks": NODE_FIELDS});
        let ask = ask.to_string();
        for host in [HostAnswers::for_context(Some(&context)), granted] {
            let answer: Value = serde_json::from_str(
                &text(host.answer(
                    "kubewarden",
                    "kubernetes",
                    "list_resources_all",
                    ask.as_bytes(),
                ))
                .unwrap(),
            )
            .unwrap();
            let item = &answer["items"][0];
            let keys: BTreeSet<&str> = item
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            // The metadata whole (masks prune an object's data only), the data to the masks.
            assert_eq!(
                keys,
                BTreeSet::from(["apiVersion", "kind", "metadata", "spec", "status"]),
                "{item}"
            );
            assert!(item["spec"].get("podCIDR").is_none(), "{item}");
            assert_eq!(prune_items(&answer, NODE_FIELDS), answer, "nothing unasked");
            assert!(item["status"].get("images").is_none(), "{item}");
            assert_eq!(decode_node(item).unwrap(), decode_node(&node).unwrap());
        }
        // Asked without masks (a policy built before them): whole items but for their managed fields.
        let whole = HostAnswers::for_context(Some(&context));
        let answer: Value = serde_json::from_slice(
            &whole
                .answer(
                    "kubewarden",
                    "kubernetes",
                    "list_resources_all",
                    br#"{"api_version":"v1","kind":"Node"}"#,
                )
                .unwrap(),
        )
        .unwrap();
        assert_eq!(answer["kind"], "NodeList");
        assert_eq!(
            answer["items"][0]["status"],
            whole.lists["v1/Node"]["items"][0]["status"]
        );
    }

    #[test]
    fn resolved_images_answer_the_oci_capability_as_the_policy_reads_it() {
        let resolved = BTreeMap::from([
            (
                "reg/app:1".to_string(),
                json!({"digest": "sha256:1", "platformsFrom": "index", "platforms": [
                {"os": "linux", "architecture": "amd64"},
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.6414"},
                // os.features are carried: containerd 2.3+ ignores win32k and skips any other.
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.1", "osFeatures": ["sse4"]},
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.26100.1", "osFeatures": ["win32k"]}]}),
            ),
            (
                "reg/one:2".to_string(),
                json!({"digest": "sha256:2", "platformsFrom": "config", "platforms": [
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.1"}]}),
            ),
        ]);
        let host = HostAnswers::default().with_resolved_images(&resolved);
        let ask = |op: &str, image: &str| {
            host.answer("kubewarden", "oci", op, json!(image).to_string().as_bytes())
                .map(|bytes| serde_json::from_slice::<Value>(&bytes).unwrap())
        };
        let index = ask("v1/oci_manifest", "reg/app:1").unwrap();
        let class = class_from_manifest("reg/app:1", &index, None).unwrap();
        assert_eq!(
            class.os,
            ImageOs::Windows {
                builds: vec![17763, 26100]
            }
        );
        // A single manifest has no platform: the policy then asks for its configuration.
        let manifest = ask("v1/oci_manifest", "reg/one:2").unwrap();
        assert!(manifest.get("manifests").is_none());
        let both = ask("v1/oci_manifest_config", "reg/one:2").unwrap();
        let class = class_from_manifest("reg/one:2", &manifest, both.get("config")).unwrap();
        assert_eq!(
            class.os,
            ImageOs::Windows {
                builds: vec![20348]
            }
        );
        assert_eq!(
            ask("v1/oci_manifest", "reg/unknown:3"),
            Err(Refusal::NoManifest {
                image: "reg/unknown:3".into()
            })
        );
    }
}
