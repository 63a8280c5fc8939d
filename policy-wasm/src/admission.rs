//! Admission review as pure functions: what an admission controller (the Kubewarden policy in
//! `kubewarden.rs`) answers for one AdmissionRequest, given the settings, the cluster and what image
//! manifests said. No host calls here: the caller fetches the context and the manifests, so every
//! decision can be tested natively.
//!
//! Decisions:
//! * Only `CREATE` and `UPDATE` of the [`EVALUATED_KINDS`] without a subresource are evaluated; `DELETE`,
//!   `CONNECT`, subresources (`status`, `scale`, `ephemeralcontainers`, …) and other kinds are accepted
//!   untouched. An evaluated request whose object is missing, not an object, or of another kind is
//!   rejected with a message saying so ([`malformed`]).
//! * A `Node` is never rejected nor rewritten: its findings are warnings (a kubelet registering with a
//!   wrong label must still be able to join; the audit and `check` report the same findings as errors).
//! * On `UPDATE`, an error the old object already had (same rule, same path) does not reject the request:
//!   it is returned as a warning. Controllers edit metadata of existing objects (adoption, finalizer
//!   removal); rejecting those edits for a problem nobody introduced would wedge the object.
//! * `mutate`: the catalogue's fixes are applied in rounds (as [`winplace_rules::fix::repair_text`] does) and the
//!   repaired object is returned; what no fix repairs still rejects. A Pod is never mutated on `UPDATE`
//!   (its spec is immutable), and an `UPDATE` is only mutated when it brings a new finding with a fix.
//!   Each applied fix is a warning naming the finding and what the patch does (`…; winplace's patch: add
//!   nodeSelector …`): true also under a non-mutating ClusterAdmissionPolicy, where policy-server rejects
//!   the patch.
//! * The cluster context is only asked for when settings `contextAware` is set ([`asks_for_context`]).
//! * Image manifests ([`manifest_lookups`], [`class_from_manifest`]) refine images whose Windows build the
//!   name does not tell; an image whose manifest could not be read keeps its name-based classification
//!   (`windows-image-build-unknown`, a warning), so a failed lookup never rejects.
//!
//! ```
//! use serde_json::json;
//! use winplace_policy_wasm::admission::{AdmissionRequest, Verdict, review};
//! let request: AdmissionRequest = serde_json::from_value(json!({
//!     "uid": "1", "operation": "CREATE", "namespace": "default",
//!     "kind": {"group": "", "version": "v1", "kind": "Pod"},
//!     "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
//!         "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}}
//! })).unwrap();
//! let decision = review(request, &Default::default(), None, &Default::default());
//! let Verdict::Reject(message) = &decision.verdict else { panic!("{decision:?}") };
//! assert!(message.contains("windows-pod-without-os-selector"));
//! ```

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use winplace_rules::finding::{Finding, Fix, Severity};
use winplace_rules::fix::{MAX_ROUNDS, apply_fixes};
use winplace_rules::input::{Document, LineMap};
use winplace_rules::model::cluster_objects::{self, FieldError, RuntimeClassVersion};
use winplace_rules::model::{self, ClusterContext};
use winplace_rules::placement::{PodOs, Resolver};
use winplace_rules::settings::{InvalidSetting, Settings, SettingsError};
use winplace_rules::windows::builds::{WindowsVersion, build_display};
use winplace_rules::windows::{ImageClass, ImageOs, ImageSource, classify_image, os_features};

/// The kinds the policy evaluates, as `(API group, kind)`; every other kind is accepted untouched.
pub const EVALUATED_KINDS: &[(&str, &str)] = &[
    ("", "Pod"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "ReplicationController"),
    ("", "Node"),
    ("node.k8s.io", "RuntimeClass"),
];

/// The cluster resources the policy reads when the host grants them, as `(apiVersion, kind)` (metadata
/// `contextAwareResources` must list exactly these).
pub const CONTEXT_RESOURCES: &[(&str, &str)] =
    &[("v1", "Node"), ("node.k8s.io/v1", "RuntimeClass")];

/// Most distinct images whose manifests one request looks up (each lookup is a registry round trip).
pub const MAX_MANIFEST_LOOKUPS: usize = 8;

/// `group`, `version` and `kind` of an AdmissionRequest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version (`v1`).
    pub version: String,
    /// Kind (`Deployment`).
    pub kind: String,
}

/// The fields of an AdmissionRequest the review reads (the rest is ignored).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Request uid.
    pub uid: String,
    /// The object's group, version and kind.
    pub kind: GroupVersionKind,
    /// Subresource (`status`, `scale`), empty for the object itself.
    #[serde(alias = "sub_resource")]
    pub sub_resource: String,
    /// The request's namespace (empty for cluster-scoped objects); the object may omit it on CREATE.
    pub namespace: String,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// The new object (`null` on DELETE).
    pub object: Value,
    /// The object before the request (UPDATE, DELETE).
    #[serde(alias = "old_object")]
    pub old_object: Value,
}

/// The `validate` payload Kubewarden sends: the request and the policy's settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ValidationPayload {
    /// The AdmissionRequest.
    pub request: AdmissionRequest,
    /// The settings (`null` or absent: the defaults).
    #[serde(default)]
    pub settings: Option<Settings>,
}

/// What to answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accept as is.
    Accept,
    /// Accept with this object instead (the host turns it into a JSON patch).
    Mutate(Value),
    /// Reject with this message.
    Reject(String),
}

/// The answer to one request: the verdict and the admission warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Accept, mutate or reject.
    pub verdict: Verdict,
    /// Admission warnings (`kubectl` prints them): warning-severity findings, errors an UPDATE did not
    /// introduce, and the fixes a mutation applied.
    pub warnings: Vec<String>,
}

impl Decision {
    fn accept() -> Self {
        Decision {
            verdict: Verdict::Accept,
            warnings: Vec::new(),
        }
    }
}

/// What the policy could not read: the `validate` payload, the settings, or the host's lists of the cluster.
/// The messages are what the host is told (`validate`'s call error, `validate_settings`'s message).
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The `validate` payload is not a [`ValidationPayload`].
    #[error("validate payload: {0}")]
    Payload(serde_json::Error),
    /// A setting of the `validate` payload has a value that cannot be used (`supportedBuilds[1]: ...`).
    #[error(transparent)]
    InvalidSetting(#[from] InvalidSetting),
    /// The `validate_settings` payload is not UTF-8.
    #[error("settings: {0}")]
    SettingsEncoding(std::str::Utf8Error),
    /// The settings do not parse, or a setting is wrong: `supportedBuilds[1]: ...` when one is at fault,
    /// `settings: ...` otherwise.
    #[error("{}", settings_message(.0))]
    Settings(SettingsError),
    /// The host's list of `kind` has no `items` array (it answered something else, an error object say).
    #[error("the {kind} list has no items array")]
    NoItems {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
    },
    /// The host's answer for `kind` is not JSON.
    #[error("the {kind} list is not JSON: {error}")]
    NotJson {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
        /// Where and why it does not parse.
        error: serde_json::Error,
    },
    /// An item of the host's list of `kind` does not decode.
    #[error("{kind} list items[{index}]: {error}")]
    Item {
        /// `Node` or `RuntimeClass`.
        kind: &'static str,
        /// Its index in `items`.
        index: usize,
        /// The field that does not decode, and why.
        error: FieldError,
    },
}

/// A settings error as `validate_settings` words it: the setting and what is wrong, without the file
/// position (the settings are no file).
fn settings_message(e: &SettingsError) -> String {
    match e.setting {
        Some(_) => e.message.trim_start_matches("invalid setting ").to_string(),
        None => format!("settings: {}", e.message),
    }
}

/// Reads the `validate` payload; settings are validated too, and the error names the setting.
pub fn parse_payload(bytes: &[u8]) -> Result<(AdmissionRequest, Settings), InputError> {
    let payload: ValidationPayload = serde_json::from_slice(bytes).map_err(InputError::Payload)?;
    let settings = payload.settings.unwrap_or_default();
    settings.validate()?;
    Ok((payload.request, settings))
}

/// Reads and validates settings JSON (the `validate_settings` payload); the error names the setting,
/// e.g. `supportedBuilds[1]: ...` or `unknown field `windowsTaint``.
pub fn parse_settings(bytes: &[u8]) -> Result<Settings, InputError> {
    std::str::from_utf8(bytes).map_err(InputError::SettingsEncoding)?;
    Settings::from_json("settings", bytes).map_err(InputError::Settings)
}

/// Whether the request is evaluated at all: `CREATE` or `UPDATE` of an [`EVALUATED_KINDS`] object, not a
/// subresource. (Whether its object is usable is [`malformed`]'s question: such a request is rejected,
/// not waved through.)
pub fn is_evaluated(request: &AdmissionRequest) -> bool {
    matches!(request.operation.as_str(), "CREATE" | "UPDATE")
        && request.sub_resource.is_empty()
        && EVALUATED_KINDS
            .iter()
            .any(|(g, k)| *g == request.kind.group && *k == request.kind.kind)
}

/// Why an evaluated request's object cannot be checked, or `None` when it can: no object, an object that
/// is not a JSON object (an array, a string), or an object whose `kind` or API group is not the request's.
/// The API server never sends these; a hand-made request (`kwctl run`, a test) can, and accepting it
/// would let through an object nobody checked.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::admission::{AdmissionRequest, malformed};
/// let mut request: AdmissionRequest = serde_json::from_value(json!({
///     "operation": "CREATE", "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
///     "object": {"apiVersion": "v1", "kind": "Pod"}})).unwrap();
/// assert!(malformed(&request).unwrap().ends_with("is for a Deployment (apps/v1), but its object is a Pod (v1)"));
/// request.object = json!(null);
/// assert!(malformed(&request).unwrap().contains("has no object"));
/// ```
pub fn malformed(request: &AdmissionRequest) -> Option<String> {
    let kind = &request.kind;
    // Worded only for a request that is malformed (this runs on every request).
    let wanted = || {
        if kind.group.is_empty() {
            format!("{} ({})", kind.kind, kind.version)
        } else {
            format!("{} ({}/{})", kind.kind, kind.group, kind.version)
        }
    };
    let operation = &request.operation;
    let shape = match &request.object {
        Value::Object(_) => None,
        Value::Null => {
            return Some(format!(
                "the {operation} request for a {} has no object",
                wanted()
            ));
        }
        Value::Array(_) => Some("an array"),
        Value::String(_) => Some("a string"),
        Value::Number(_) => Some("a number"),
        Value::Bool(_) => Some("a boolean"),
    };
    if let Some(shape) = shape {
        return Some(format!(
            "the {operation} request for a {} has {shape} as its object, not a {}",
            wanted(),
            kind.kind
        ));
    }
    let object_kind = request.object.get("kind").and_then(Value::as_str);
    let api_version = request.object.get("apiVersion").and_then(Value::as_str);
    let object_group = api_version.map(|v| v.rsplit_once('/').map_or("", |(group, _)| group));
    let kind_differs = object_kind.is_some_and(|k| k != kind.kind);
    let group_differs = object_group.is_some_and(|g| g != kind.group);
    (kind_differs || group_differs).then(|| {
        format!(
            "the {operation} request is for a {}, but its object is a {} ({})",
            wanted(),
            object_kind.unwrap_or("(no kind)"),
            api_version.unwrap_or("no apiVersion")
        )
    })
}

/// Whether the request's namespace is in the settings' `exemptNamespaces`.
pub fn is_exempt(request: &AdmissionRequest, settings: &Settings) -> bool {
    !settings.exempt_namespaces.is_empty() && {
        let ns = namespace_of(request);
        !ns.is_empty() && settings.exempts(Some(&ns))
    }
}

/// Whether the rules for this request read the cluster (workloads do; Node and RuntimeClass objects are
/// checked on their own).
pub fn reads_context(request: &AdmissionRequest) -> bool {
    is_evaluated(request) && !matches!(request.kind.kind.as_str(), "Node" | "RuntimeClass")
}

/// Whether the caller should ask the host for [`CONTEXT_RESOURCES`]: the rules read the cluster
/// ([`reads_context`]), the object can be checked, and the settings say the policy was granted them
/// (`contextAware: true`, beside `contextAwareResources` in the ClusterAdmissionPolicy). Asking without
/// the grant makes policy-server log an error for every request.
pub fn asks_for_context(request: &AdmissionRequest, settings: &Settings) -> bool {
    settings.context_aware
        && reads_context(request)
        && malformed(request).is_none()
        && !is_exempt(request, settings)
}

/// The namespace the object lives in: the object's, else the request's.
fn namespace_of(request: &AdmissionRequest) -> String {
    object_namespace(&request.object)
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(&request.namespace)
        .to_string()
}

/// `metadata.namespace` of an object, as written (`Value::pointer` would allocate its path's steps).
fn object_namespace(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("namespace")
}

/// The object with the request's namespace filled in when the object omits it (as `kubectl apply -n` sends
/// it), so that findings and `exemptNamespaces` see the namespace the object will live in.
fn with_namespace(mut value: Value, namespace: &str) -> Value {
    if namespace.is_empty() {
        return value;
    }
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && meta
            .get("namespace")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        meta.insert("namespace".into(), Value::String(namespace.to_string()));
    }
    value
}

/// Evaluates one object (JSON) with the context and the manifest classifications.
pub fn evaluate(
    object: &Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> Vec<Finding> {
    evaluate_owned(object.clone(), context, settings, manifests)
}

/// [`evaluate`] of an object the caller gives up (no copy of it is made).
fn evaluate_owned(
    object: Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> Vec<Finding> {
    let document = Document {
        file: String::new(),
        index: 0,
        line: 1,
        value: object,
        lines: LineMap::default(),
    };
    let objects = model::into_objects(document);
    winplace_rules::rules::evaluate_with_manifests(&objects, context, settings, manifests)
}

/// The images of a workload whose Windows build their name does not tell and a manifest could: Windows
/// images of unknown build, and unrecognized images of a Windows pod (HostProcess pods are not matched
/// on builds, so none there). Distinct, in container order, at most [`MAX_MANIFEST_LOOKUPS`].
pub fn manifest_lookups(
    request: &AdmissionRequest,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Vec<String> {
    if !reads_context(request)
        || is_exempt(request, settings)
        || malformed(request).is_some()
        || !names_leave_a_build_open(&request.object, settings)
    {
        return Vec::new();
    }
    let Some(object) = model::Object::from_value("", 0, request.object.clone(), LineMap::default())
    else {
        return Vec::new();
    };
    let Some(Ok(template)) = model::pod_template(&object) else {
        return Vec::new();
    };
    let placement = Resolver::new(context, settings).resolve(&template);
    if placement.host_process {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for image in &placement.images {
        let wanted = match &image.class.os {
            ImageOs::Windows { builds } => builds.is_empty(),
            ImageOs::Unrecognized => placement.os == PodOs::Windows,
            ImageOs::Linux | ImageOs::MultiOs => false,
        };
        if wanted && !out.contains(&image.image) && out.len() < MAX_MANIFEST_LOOKUPS {
            out.push(image.image.clone());
        }
    }
    out
}

/// Whether some image of the workload, classified by its name and the settings' image rules alone (as
/// the resolver classifies it when no manifest is known), could be one [`manifest_lookups`] names: a
/// Windows image of unknown build, or an unrecognized one. When none is, no lookup can be wanted, and the
/// pod template need not be decoded and resolved to know it (most requests: this runs on every one).
fn names_leave_a_build_open(object: &Value, settings: &Settings) -> bool {
    let kind = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    let Some(workload) = model::WorkloadKind::of(kind("apiVersion"), kind("kind")) else {
        return false;
    };
    let Some(spec) = model::get(object, &workload.pod_spec_path()) else {
        return false;
    };
    model::raw_spec::raw_containers(spec)
        .filter_map(|container| container.value.get("image")?.as_str())
        .filter(|image| !image.is_empty())
        .any(
            |image| match classify_image(image, &settings.image_rules).os {
                ImageOs::Windows { builds } => builds.is_empty(),
                ImageOs::Unrecognized => true,
                ImageOs::Linux | ImageOs::MultiOs => false,
            },
        )
}

/// What an image's manifest says about its OS and Windows build.
///
/// `manifest` is what the OCI capability returned: an image index (or Docker manifest list), whose
/// `manifests[].platform` carry `os`, `os.version` and `os.features`; or a single image manifest, which
/// carries no platform, in which case `config` (the image configuration: `os`, `os.version`,
/// `os.features`) decides. An index with Windows entries classifies as Windows with the builds of those
/// entries (the Windows variant is what a Windows node pulls), counting only the entries a Windows node's
/// containerd 2.3+ can pick by their `os.features` (`win32k` ignored, any other feature not offered:
/// [`winplace_rules::windows::os_features`]); Linux entries only, as Linux. `None` when the documents
/// say nothing usable.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::admission::class_from_manifest;
/// use winplace_rules::windows::ImageOs;
/// let index = json!({"manifests": [
///     {"platform": {"os": "linux", "architecture": "amd64"}},
///     {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.2762",
///                   "os.features": ["win32k"]}}]});
/// let class = class_from_manifest("example.com/app:1", &index, None).unwrap();
/// assert_eq!(class.os, ImageOs::Windows { builds: vec![20348] });
/// ```
pub fn class_from_manifest(
    image: &str,
    manifest: &Value,
    config: Option<&Value>,
) -> Option<ImageClass> {
    /// One platform: `os`, `os.version`, `os.features`.
    struct Entry<'v> {
        os: &'v str,
        version: Option<&'v str>,
        features: Vec<&'v str>,
    }
    fn entry(p: &Value) -> Option<Entry<'_>> {
        Some(Entry {
            os: p.get("os").and_then(Value::as_str)?,
            version: p.get("os.version").and_then(Value::as_str),
            features: p
                .get("os.features")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
        })
    }
    let platforms: Vec<Entry<'_>> = match manifest.get("manifests") {
        Some(Value::Array(entries)) => entries
            .iter()
            .filter_map(|e| e.get("platform"))
            .filter_map(entry)
            .collect(),
        _ => config.and_then(entry).into_iter().collect(),
    };
    let windows: Vec<&Entry<'_>> = platforms
        .iter()
        .filter(|e| e.os.eq_ignore_ascii_case("windows"))
        .collect();
    let linux = platforms.iter().any(|e| e.os.eq_ignore_ascii_case("linux"));
    if !windows.is_empty() {
        let pickable: Vec<&&Entry<'_>> = windows
            .iter()
            .filter(|e| os_features::features_match(&e.features))
            .collect();
        let mut builds: Vec<u32> = pickable
            .iter()
            .filter_map(|e| e.version.and_then(WindowsVersion::parse))
            .map(|v| v.build)
            .collect();
        builds.sort_unstable();
        builds.dedup();
        let reason = if pickable.is_empty() {
            let mut features: Vec<&str> = windows
                .iter()
                .flat_map(|e| os_features::unmatched(&e.features))
                .collect();
            features.sort_unstable();
            features.dedup();
            format!(
                "the manifest of {image} is Windows, but every Windows entry asks for os.features ({}) a Windows node's containerd 2.3+ does not match",
                features.join(", ")
            )
        } else if builds.is_empty() {
            format!("the manifest of {image} is Windows but names no os.version")
        } else {
            let names: Vec<String> = builds.iter().map(|&b| build_display(b)).collect();
            format!("the manifest of {image} says Windows {}", names.join(", "))
        };
        return Some(ImageClass {
            os: ImageOs::Windows { builds },
            source: ImageSource::Manifest,
            reason,
        });
    }
    linux.then(|| ImageClass {
        os: ImageOs::Linux,
        source: ImageSource::Manifest,
        reason: format!("the manifest of {image} lists only Linux"),
    })
}

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
/// The Nodes are decoded straight into typed, trimmed objects: no JSON tree of a 5,000-node list is built
/// first (that tree cost more than the rest of a review). An answer that does not decode so is read through
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
    /// A List of typed items; everything else in the answer is skipped unread.
    #[derive(Deserialize)]
    struct Items<T> {
        items: Vec<T>,
    }
    let json = |kind: &'static str, bytes: &[u8]| {
        serde_json::from_slice::<Value>(bytes).map_err(|error| InputError::NotJson { kind, error })
    };
    match serde_json::from_slice::<Items<k8s_openapi::api::core::v1::Node>>(nodes) {
        Ok(list) => Ok(ClusterContext {
            nodes: list
                .items
                .into_iter()
                .map(cluster_objects::into_trimmed_node)
                .collect(),
            runtime_classes: runtime_classes_of(&json("RuntimeClass", runtime_classes)?)?,
        }),
        // The slow path, for its error (or for what only it accepts).
        Err(_) => context_from_lists(
            &json("Node", nodes)?,
            &json("RuntimeClass", runtime_classes)?,
        ),
    }
}

/// The items of a List.
fn items<'a>(list: &'a Value, kind: &'static str) -> Result<&'a [Value], InputError> {
    list.get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or(InputError::NoItems { kind })
}

/// One finding as a line of a message or a warning: `[rule] path: message`.
pub fn finding_line(f: &Finding) -> String {
    format!("[{}] {}: {}", f.rule, f.path, f.message)
}

/// Reviews one request: skips what is not evaluated ([`is_evaluated`], [`is_exempt`]), evaluates the object
/// with `context` (`None`: the settings stand in for the cluster) and `manifests`, then accepts, mutates
/// (settings `mutate`) or rejects. See the module documentation for the decisions.
///
/// The request is taken, not borrowed: its objects are evaluated as they are, without a copy (this runs
/// on every admission request).
pub fn review(
    mut request: AdmissionRequest,
    settings: &Settings,
    context: Option<&ClusterContext>,
    manifests: &BTreeMap<String, ImageClass>,
) -> Decision {
    if !is_evaluated(&request) || is_exempt(&request, settings) {
        return Decision::accept();
    }
    if let Some(problem) = malformed(&request) {
        return Decision {
            verdict: Verdict::Reject(format!("winplace cannot check this request: {problem}")),
            warnings: Vec::new(),
        };
    }
    // A Node is the kubelet registering or updating itself: rejecting it would keep a node out of the
    // cluster over a label. Node findings are warnings, and a Node is never rewritten.
    let is_node = request.kind.kind == "Node";
    let namespace = namespace_of(&request);
    let written_namespace = object_namespace(&request.object).cloned();
    let object = with_namespace(std::mem::take(&mut request.object), &namespace);
    // The object is kept only where it may be repaired below.
    let (findings, kept) = if settings.mutate && !is_node {
        (
            evaluate(&object, context, settings, manifests),
            Some(object),
        )
    } else {
        (evaluate_owned(object, context, settings, manifests), None)
    };
    // Errors the object already had before this UPDATE: reported, not enforced.
    let before: BTreeSet<(String, String)> =
        if request.operation == "UPDATE" && request.old_object.is_object() {
            let old = with_namespace(std::mem::take(&mut request.old_object), &namespace);
            evaluate_owned(old, context, settings, manifests)
                .into_iter()
                .map(|f| (f.rule, f.path))
                .collect()
        } else {
            BTreeSet::new()
        };
    let is_new = |f: &Finding| !before.contains(&(f.rule.clone(), f.path.clone()));

    if is_node {
        return Decision {
            verdict: Verdict::Accept,
            warnings: findings
                .iter()
                .filter(|f| f.severity != Severity::Info)
                .map(finding_line)
                .collect(),
        };
    }
    let may_mutate = !(request.operation == "UPDATE" && request.kind.kind == "Pod")
        && findings.iter().any(|f| f.fix.is_some() && is_new(f));
    if let Some(object) = kept.filter(|_| may_mutate) {
        let (repaired, applied) = repair(&object, context, settings, manifests);
        if !applied.is_empty() {
            let remaining = evaluate(&repaired, context, settings, manifests);
            let mut decision = decide(&remaining, &is_new, true);
            if matches!(decision.verdict, Verdict::Accept) {
                // Worded so it stays true where the ClusterAdmissionPolicy is not `mutating` (policy-server
                // then rejects the patch): it names the problem and what the patch does, not "fixed".
                let mut warnings: Vec<String> = applied
                    .iter()
                    .map(|(f, fix)| {
                        format!("{}; winplace's patch: {}", finding_line(f), fix.description)
                    })
                    .collect();
                warnings.append(&mut decision.warnings);
                let mut out = repaired;
                restore_namespace(&mut out, written_namespace.as_ref());
                return Decision {
                    verdict: Verdict::Mutate(out),
                    warnings,
                };
            }
            return decision;
        }
    }
    decide(&findings, &is_new, false)
}

/// Accept or reject on `findings`: new errors reject; old errors and warnings are warnings.
fn decide(findings: &[Finding], is_new: &dyn Fn(&Finding) -> bool, repaired: bool) -> Decision {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for f in findings {
        match f.severity {
            Severity::Error if is_new(f) => errors.push(finding_line(f)),
            Severity::Error => warnings.push(format!(
                "{} (already present before this update)",
                finding_line(f)
            )),
            Severity::Warning => warnings.push(finding_line(f)),
            Severity::Info => {}
        }
    }
    if errors.is_empty() {
        return Decision {
            verdict: Verdict::Accept,
            warnings,
        };
    }
    let object = findings
        .first()
        .map(|f| f.object.display_name())
        .unwrap_or_default();
    let lead = if repaired {
        format!("winplace rejected {object} (the fixes could not repair it)")
    } else {
        format!("winplace rejected {object}")
    };
    Decision {
        verdict: Verdict::Reject(format!("{lead}: {}", errors.join("; "))),
        warnings,
    }
}

/// Applies the findings' fixes in rounds, as [`winplace_rules::fix::repair_text`] does on text: evaluate, apply every
/// fix, until no finding carries a fix, a round changes nothing, or [`MAX_ROUNDS`]. Returns the repaired
/// object and the `(finding, fix)` pairs that were applied.
pub fn repair(
    object: &Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> (Value, Vec<(Finding, Fix)>) {
    let mut current = object.clone();
    let mut applied = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let found: Vec<Finding> = evaluate(&current, context, settings, manifests)
            .into_iter()
            .filter(|f| f.fix.is_some())
            .collect();
        let fixes: Vec<&Fix> = found.iter().filter_map(|f| f.fix.as_ref()).collect();
        if fixes.is_empty() {
            break;
        }
        let (next, skipped) = apply_fixes(&current, &fixes);
        if next == current {
            break;
        }
        let skipped: Vec<usize> = skipped.into_iter().map(|(i, _)| i).collect();
        for (i, f) in found.iter().enumerate() {
            if !skipped.contains(&i)
                && let Some(fix) = &f.fix
            {
                applied.push((f.clone(), fix.clone()));
            }
        }
        current = next;
    }
    (current, applied)
}

/// Removes the namespace [`with_namespace`] added, so a mutation changes only what the fixes changed:
/// `written` is the request object's own `metadata.namespace`.
fn restore_namespace(value: &mut Value, written: Option<&Value>) {
    let had = written
        .and_then(Value::as_str)
        .is_some_and(|ns| !ns.is_empty());
    if !had && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        match written {
            Some(v) => {
                meta.insert("namespace".into(), v.clone());
            }
            None => {
                meta.remove("namespace");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Value {
        let path = format!("{}/test_data/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn request(name: &str) -> AdmissionRequest {
        serde_json::from_value(fixture(&format!("{name}.json"))["request"].clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn cluster() -> ClusterContext {
        context_from_lists(
            &fixture("context/nodes.json"),
            &fixture("context/runtimeclasses.json"),
        )
        .unwrap()
    }

    fn settings(json: Value) -> Settings {
        serde_json::from_value(json).unwrap()
    }

    fn no_manifests() -> BTreeMap<String, ImageClass> {
        BTreeMap::new()
    }

    /// `A`ccept, `M`utate or `R`eject, and the message.
    fn verdict(d: &Decision) -> (char, String) {
        match &d.verdict {
            Verdict::Accept => ('A', String::new()),
            Verdict::Mutate(_) => ('M', String::new()),
            Verdict::Reject(m) => ('R', m.clone()),
        }
    }

    #[test]
    fn every_kind_is_evaluated() {
        // (fixture, with cluster context, verdict, rule in the message, rule in the warnings).
        // Reference §3.3: the scheduler only honours the kubernetes.io/os selector, so an unpinned Windows
        // template is an error in every workload kind; §5.4 the build label and the kernel build must agree.
        let rows = [
            (
                "pod-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "windows-pod-without-build-selector",
            ),
            (
                "deployment-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "windows-pod-without-build-selector",
            ),
            (
                "replicaset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "statefulset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "daemonset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "job-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "cronjob-windows-unpinned",
                false,
                'R',
                "spec.jobTemplate.spec.template.spec.nodeSelector",
                "",
            ),
            (
                "replicationcontroller-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            ("pod-windows-pinned", false, 'A', "", ""),
            ("deployment-windows-pinned", true, 'A', "", ""),
            ("replicaset-windows-pinned", false, 'A', "", ""),
            ("statefulset-windows-pinned", true, 'A', "", ""),
            ("daemonset-windows-pinned", false, 'A', "", ""),
            ("job-windows-pinned", true, 'A', "", ""),
            ("cronjob-windows-pinned", false, 'A', "", ""),
            ("replicationcontroller-windows-pinned", true, 'A', "", ""),
            ("pod-linux", true, 'A', "", "linux-pod-without-os-selector"),
            ("pod-os-conflict", false, 'R', "os-conflict", ""),
            // A Node is warned, never rejected (a kubelet with a wrong label must still join).
            (
                "node-windows-build-label-mismatch",
                false,
                'A',
                "",
                "windows-node-build-label-mismatch",
            ),
            ("node-windows", false, 'A', "", ""),
            (
                "runtimeclass-docker-handler",
                false,
                'A',
                "",
                "runtimeclass-docker-handler",
            ),
            // Cluster context: the real nodes are Linux and Windows Server 2022 only (kubernetes-windows-rules.md §5.3).
            (
                "pod-windows-unpinned",
                true,
                'R',
                "schedulable-on-wrong-os",
                "",
            ),
            (
                "deployment-windows-build-26100",
                true,
                'R',
                "no-schedulable-node",
                "",
            ),
            ("deployment-windows-build-26100", false, 'A', "", ""),
            ("deployment-windows-runtimeclass", true, 'A', "", ""),
        ];
        let ctx = cluster();
        for (name, with_ctx, want, in_message, in_warnings) in rows {
            let r = request(name);
            let c = with_ctx.then_some(&ctx);
            let d = review(r.clone(), &Settings::default(), c, &no_manifests());
            let (got, message) = verdict(&d);
            assert_eq!(got, want, "{name} (context {with_ctx}): {d:?}");
            assert!(message.contains(in_message), "{name}: {message}");
            let warnings = d.warnings.join("\n");
            assert!(warnings.contains(in_warnings), "{name}: {warnings}");
            if want == 'R' {
                // Every error line names rule, path and message.
                assert!(
                    message.contains("] spec") || message.contains("] metadata"),
                    "{message}"
                );
            }
        }
    }

    #[test]
    fn requests_that_are_not_evaluated_are_accepted_untouched() {
        let mut connect = request("pod-windows-unpinned");
        connect.operation = "CONNECT".into();
        let mut service = request("pod-windows-unpinned");
        service.kind.kind = "Service".into();
        let mut ephemeral = request("pod-windows-unpinned");
        ephemeral.sub_resource = "ephemeralcontainers".into();
        let rows = [
            ("DELETE", request("pod-delete")),
            ("status subresource", request("pod-status-update")),
            ("CONNECT", connect),
            ("other kind", service),
            ("ephemeralcontainers", ephemeral),
        ];
        for (what, r) in rows {
            assert!(!is_evaluated(&r), "{what}");
            assert!(!reads_context(&r), "{what}");
            let d = review(
                r.clone(),
                &settings(json!({"mutate": true})),
                None,
                &no_manifests(),
            );
            assert_eq!(d, Decision::accept(), "{what}");
        }
    }

    #[test]
    fn requests_without_a_usable_object_are_rejected() {
        let pod = request("pod-windows-pinned");
        let with = |f: &dyn Fn(&mut AdmissionRequest)| {
            let mut r = pod.clone();
            f(&mut r);
            r
        };
        let rows = [
            (
                with(&|r| r.object = Value::Null),
                "the CREATE request for a Pod (v1) has no object",
            ),
            (
                with(&|r| r.object = json!([r.object.clone()])),
                "has an array as its object, not a Pod",
            ),
            (with(&|r| r.object = json!(7)), "has a number as its object"),
            (
                with(&|r| {
                    r.kind = GroupVersionKind {
                        group: "apps".into(),
                        version: "v1".into(),
                        kind: "Deployment".into(),
                    }
                }),
                "is for a Deployment (apps/v1), but its object is a Pod (v1)",
            ),
            (
                with(&|r| r.object["apiVersion"] = json!("apps/v1")),
                "is for a Pod (v1), but its object is a Pod (apps/v1)",
            ),
        ];
        for (r, reason) in rows {
            for mutate in [false, true] {
                let d = review(
                    r.clone(),
                    &settings(json!({"mutate": mutate})),
                    None,
                    &no_manifests(),
                );
                let (got, message) = verdict(&d);
                assert_eq!(got, 'R', "{reason}: {d:?}");
                assert!(
                    message.starts_with("winplace cannot check this request: ")
                        && message.contains(reason),
                    "{message}"
                );
            }
            assert!(manifest_lookups(&r, None, &Settings::default()).is_empty());
            assert!(!asks_for_context(
                &r,
                &settings(json!({"contextAware": true}))
            ));
        }
        // An object without kind or apiVersion is taken as the request's kind (the API server always
        // sends both; a hand-made request may not).
        let bare = with(&|r| {
            let object = r.object.as_object_mut().unwrap();
            object.remove("kind");
            object.remove("apiVersion");
        });
        assert_eq!(malformed(&bare), None);
        assert_eq!(
            review(bare.clone(), &Settings::default(), None, &no_manifests()).verdict,
            Verdict::Accept
        );
    }

    #[test]
    fn nodes_are_warned_never_rejected_nor_mutated() {
        let r = request("node-windows-build-label-mismatch");
        for json in [json!({}), json!({"mutate": true})] {
            let d = review(r.clone(), &settings(json), None, &no_manifests());
            assert_eq!(d.verdict, Verdict::Accept, "{d:?}");
            assert!(
                d.warnings
                    .iter()
                    .any(|w| w.starts_with("[windows-node-build-label-mismatch] metadata.labels")),
                "{:?}",
                d.warnings
            );
        }
        // The same finding is an error for the audit and `check`: only admission softens it.
        let findings = evaluate(&r.object, None, &Settings::default(), &no_manifests());
        assert!(
            findings
                .iter()
                .any(|f| f.rule == "windows-node-build-label-mismatch"
                    && f.severity == Severity::Error),
            "{findings:?}"
        );
    }

    #[test]
    fn the_context_is_asked_for_only_when_the_settings_say_it_is_granted() {
        let aware = settings(json!({"contextAware": true}));
        let workload = request("deployment-windows-pinned");
        assert!(!asks_for_context(&workload, &Settings::default()));
        assert!(asks_for_context(&workload, &aware));
        for name in ["node-windows", "runtimeclass-docker-handler", "pod-delete"] {
            assert!(!asks_for_context(&request(name), &aware), "{name}");
        }
        let exempt = settings(json!({"contextAware": true, "exemptNamespaces": ["default"]}));
        assert!(!asks_for_context(&workload, &exempt));
    }

    #[test]
    fn settings_exempt_disable_and_override() {
        // (fixture, settings, verdict, text in message or warnings).
        let rows = [
            (
                "pod-windows-unpinned",
                json!({"exemptNamespaces": ["default"]}),
                'A',
                "",
            ),
            // The namespace comes from the request when the object has none (kubectl apply -n shop).
            (
                "pod-windows-unpinned-no-namespace",
                json!({"exemptNamespaces": ["shop"]}),
                'A',
                "",
            ),
            (
                "pod-windows-unpinned-no-namespace",
                json!({"exemptNamespaces": ["default"]}),
                'R',
                "Pod/shop/win-pod",
            ),
            (
                "pod-windows-unpinned",
                json!({"disabledRules": ["windows-pod-without-os-selector"]}),
                'A',
                "windows-pod-without-build-selector",
            ),
            (
                "pod-windows-unpinned",
                json!({"severity": {"windows-pod-without-os-selector": "warning"}}),
                'A',
                "[windows-pod-without-os-selector]",
            ),
            // Pinned to exactly 2022: accepted; the pin is too narrow for an in-place upgrade (issue 25)
            // unless the settings want exact pins.
            (
                "pod-windows-pinned",
                json!({"severity": {"windows-pod-without-build-selector": "error"}}),
                'A',
                "[windows-build-pin-too-narrow]",
            ),
            (
                "pod-windows-pinned",
                json!({"buildPinning": "exact"}),
                'A',
                "",
            ),
            (
                "pod-linux",
                json!({"severity": {"linux-pod-without-os-selector": "error"}}),
                'R',
                "linux-pod-without-os-selector",
            ),
            (
                "pod-linux",
                json!({"severity": {"linux-pod-without-os-selector": "info"}}),
                'A',
                "",
            ),
        ];
        for (name, json, want, text) in rows {
            let s = settings(json.clone());
            let d = review(request(name), &s, None, &no_manifests());
            let (got, message) = verdict(&d);
            assert_eq!(got, want, "{name} {json}: {d:?}");
            let all = format!("{message}\n{}", d.warnings.join("\n"));
            assert!(all.contains(text), "{name} {json}: {all}");
            if want == 'A' && text.is_empty() {
                assert!(d.warnings.is_empty(), "{name} {json}: {:?}", d.warnings);
            }
        }
    }

    #[test]
    fn updates_enforce_only_what_they_introduce() {
        let d = review(
            request("deployment-update-preexisting"),
            &Settings::default(),
            None,
            &no_manifests(),
        );
        assert_eq!(d.verdict, Verdict::Accept);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.starts_with("[windows-pod-without-os-selector]")
                    && w.ends_with("(already present before this update)")),
            "{:?}",
            d.warnings
        );
        let d = review(
            request("deployment-update-unpins"),
            &Settings::default(),
            None,
            &no_manifests(),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("windows-pod-without-os-selector")),
            "{d:?}"
        );
    }

    #[test]
    fn mutation_repairs_every_kind_and_the_result_validates() {
        let mutate = settings(json!({"mutate": true}));
        let ctx = cluster();
        for kind in [
            "pod",
            "deployment",
            "replicaset",
            "statefulset",
            "daemonset",
            "job",
            "cronjob",
            "replicationcontroller",
        ] {
            for c in [None, Some(&ctx)] {
                let r = request(&format!("{kind}-windows-unpinned"));
                let d = review(r.clone(), &mutate, c, &no_manifests());
                let Verdict::Mutate(object) = &d.verdict else {
                    panic!("{kind}: {d:?}")
                };
                // The problem and what the patch does: true whether or not policy-server applies it.
                assert!(
                    d.warnings.iter().any(|w| w
                        .starts_with("[windows-pod-without-os-selector] spec")
                        && w.contains(
                            "; winplace's patch: add nodeSelector kubernetes.io/os: windows"
                        )),
                    "{kind}: {:?}",
                    d.warnings
                );
                // Round trip: the mutated object passes validation, without mutation.
                let mut again = r.clone();
                again.object = object.clone();
                let d2 = review(again.clone(), &Settings::default(), c, &no_manifests());
                assert_eq!(d2.verdict, Verdict::Accept, "{kind}: {d2:?}");
                let remaining = evaluate(object, c, &Settings::default(), &no_manifests());
                assert!(
                    remaining.iter().all(|f| f.severity != Severity::Error),
                    "{kind}: {remaining:?}"
                );
            }
        }
    }

    #[test]
    fn mutation_limits() {
        let mutate = settings(json!({"mutate": true}));
        // No fix makes the OS signals agree: still rejected (kubernetes-windows-rules.md §1.6).
        let d = review(request("pod-os-conflict"), &mutate, None, &no_manifests());
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("os-conflict")),
            "{d:?}"
        );
        // A Pod's spec is immutable: an UPDATE is never mutated.
        let mut update = request("deployment-update-unpins");
        update.kind = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
        };
        update.object = request("pod-windows-unpinned").object;
        update.old_object = request("pod-windows-pinned").object;
        let d = review(update.clone(), &mutate, None, &no_manifests());
        assert!(matches!(d.verdict, Verdict::Reject(_)), "{d:?}");
        // A Deployment UPDATE that introduces the problem is repaired.
        let d = review(
            request("deployment-update-unpins"),
            &mutate,
            None,
            &no_manifests(),
        );
        assert!(matches!(d.verdict, Verdict::Mutate(_)), "{d:?}");
        // Pre-existing problems are not repaired behind the user's back.
        let d = review(
            request("deployment-update-preexisting"),
            &mutate,
            None,
            &no_manifests(),
        );
        assert_eq!(d.verdict, Verdict::Accept, "{d:?}");
        // The namespace taken from the request is not written into the mutated object.
        let d = review(
            request("pod-windows-unpinned-no-namespace"),
            &mutate,
            None,
            &no_manifests(),
        );
        let Verdict::Mutate(object) = d.verdict else {
            panic!()
        };
        assert!(object.pointer("/metadata/namespace").is_none(), "{object}");
        assert_eq!(
            object.pointer("/spec/nodeSelector/kubernetes.io~1os"),
            Some(&json!("windows"))
        );
    }

    #[test]
    fn runtime_classes_come_from_the_cluster() {
        let r = request("deployment-windows-runtimeclass");
        let mut empty = cluster();
        empty.runtime_classes.clear();
        let d = review(
            r.clone(),
            &Settings::default(),
            Some(&empty),
            &no_manifests(),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("runtimeclass-not-found")),
            "{d:?}"
        );
        // Without context the class is unchecked (info): accepted, no warning.
        let d = review(r.clone(), &Settings::default(), None, &no_manifests());
        assert_eq!(d, Decision::accept());
    }

    #[test]
    fn manifests_classify_images() {
        let index_17763 = fixture("context/manifest-index-windows-17763.json");
        let index_mixed = fixture("context/manifest-index-windows-20348-linux.json");
        let single = fixture("context/manifest-config-windows-20348.json");
        let linux = json!({"manifests": [{"platform": {"os": "linux", "architecture": "amd64"}}, {"platform": {"os": "linux", "architecture": "arm64"}}]});
        let no_version =
            json!({"manifests": [{"platform": {"os": "windows", "architecture": "amd64"}}]});
        let no_platform = json!({"manifests": [{"digest": "sha256:00"}]});
        // kubernetes-windows-rules.md §5.5.2: containerd 2.3+ strips `win32k`; an entry asking for any
        // other feature is not picked on a Windows node.
        let features = json!({"manifests": [
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.17763.1", "os.features": ["win32k"]}},
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1", "os.features": ["win32k", "sse4"]}},
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.26100.1", "os.features": []}}]});
        let only_odd = json!({"manifests": [
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1", "os.features": ["sse4"]}},
            {"platform": {"os": "linux", "architecture": "amd64"}}]});
        let config_win32k =
            json!({"os": "windows", "os.version": "10.0.20348.1", "os.features": ["win32k"]});
        // (manifest, config, expected OS).
        let rows = [
            (
                &index_17763,
                None,
                Some(ImageOs::Windows {
                    builds: vec![17763],
                }),
            ),
            (
                &index_mixed,
                None,
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
            (
                &single["manifest"],
                Some(&single["config"]),
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
            (&single["manifest"], None, None),
            (&linux, None, Some(ImageOs::Linux)),
            (&no_version, None, Some(ImageOs::Windows { builds: vec![] })),
            (&no_platform, None, None),
            (
                &features,
                None,
                Some(ImageOs::Windows {
                    builds: vec![17763, 26100],
                }),
            ),
            (&only_odd, None, Some(ImageOs::Windows { builds: vec![] })),
            (
                &single["manifest"],
                Some(&config_win32k),
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
        ];
        let why = class_from_manifest("example.com/app:1", &only_odd, None).map(|c| c.reason);
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("os.features (sse4)")),
            "{why:?}"
        );
        for (manifest, config, want) in rows {
            let got = class_from_manifest("example.com/app:1", manifest, config);
            assert_eq!(got.as_ref().map(|c| c.os.clone()), want, "{manifest}");
            if let Some(class) = got {
                assert_eq!(class.source, ImageSource::Manifest);
                assert!(
                    class.reason.contains("example.com/app:1"),
                    "{}",
                    class.reason
                );
            }
        }
    }

    #[test]
    fn manifest_lookups_are_distinct_and_only_where_a_build_is_unknown() {
        let hostprocess = {
            let mut r = request("pod-windows-private-image");
            r.object["spec"]["securityContext"] = json!({"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}});
            r.object["spec"]["hostNetwork"] = json!(true);
            r
        };
        let rows: [(&str, AdmissionRequest, &[&str]); 7] = [
            (
                "private",
                request("pod-windows-private-image"),
                &["registry.example.com/shop/win-api:2.3"],
            ),
            (
                "floating",
                request("pod-windows-floating-tag"),
                &["mcr.microsoft.com/windows/servercore:latest"],
            ),
            (
                "repeated",
                request("pod-windows-private-images-repeated"),
                &[
                    "registry.example.com/shop/win-init:1.0",
                    "registry.example.com/shop/win-api:2.3",
                ],
            ),
            ("known build", request("deployment-windows-pinned"), &[]),
            ("linux", request("pod-linux"), &[]),
            ("node", request("node-windows"), &[]),
            ("hostprocess", hostprocess, &[]),
        ];
        for (what, r, want) in rows {
            assert_eq!(
                manifest_lookups(&r, None, &Settings::default()),
                want,
                "{what}"
            );
        }
        let exempt = settings(json!({"exemptNamespaces": ["default"]}));
        assert!(manifest_lookups(&request("pod-windows-private-image"), None, &exempt).is_empty());
        let mut many = request("pod-windows-private-image");
        many.object["spec"]["containers"] = (0..20)
            .map(|i| json!({"name": format!("c{i}"), "image": format!("registry.example.com/app{i}:1")}))
            .collect();
        assert_eq!(
            manifest_lookups(&many, None, &Settings::default()).len(),
            MAX_MANIFEST_LOOKUPS
        );
    }

    #[test]
    fn manifests_decide_the_build() {
        let r = request("pod-windows-private-image");
        let image = "registry.example.com/shop/win-api:2.3";
        let facts = |manifest: &str| {
            let m = fixture(manifest);
            let class = class_from_manifest(image, &m, None).unwrap();
            BTreeMap::from([(image.to_string(), class)])
        };
        // No manifest (the lookup failed): a warning, never a rejection.
        let d = review(r.clone(), &Settings::default(), None, &no_manifests());
        assert_eq!(d.verdict, Verdict::Accept);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.starts_with("[windows-image-build-unknown]"))
        );
        // Built for 2022, pinned to 2022: accepted, and nothing unknown any more (the pin's only warning
        // is that it is exact, off with buildPinning: exact).
        let exact = Settings {
            build_pinning: winplace_rules::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let d = review(
            r.clone(),
            &exact,
            None,
            &facts("context/manifest-index-windows-20348-linux.json"),
        );
        assert_eq!(d, Decision::accept());
        // Built for 2019, pinned to 2022: process isolation needs the same build (kubernetes-windows-rules.md §5.1).
        let d = review(
            r.clone(),
            &Settings::default(),
            None,
            &facts("context/manifest-index-windows-17763.json"),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("windows-build-mismatch")),
            "{d:?}"
        );
    }

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

    #[test]
    fn settings_errors_name_the_setting() {
        let rows = [
            ("", Ok(())),
            ("null", Ok(())),
            ("{\"mutate\": true}", Ok(())),
            ("{\"windowsTaint\": []}", Err("windowsTaint")),
            (
                "{\"supportedBuilds\": [\"ltsc2022\"]}",
                Err("supportedBuilds[0]"),
            ),
            ("{\"mutate\": \"yes\"}", Err("mutate: invalid type")),
        ];
        for (json, want) in rows {
            match (parse_settings(json.as_bytes()), want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{json}: {e}"),
                (got, want) => panic!("{json}: {got:?}, wanted {want:?}"),
            }
        }
        // What the host is told: the setting first, or `settings:` when no one setting is at fault.
        let err = parse_settings(b"{\"supportedBuilds\": [\"ltsc2022\"]}").unwrap_err();
        assert!(err.to_string().starts_with("supportedBuilds[0]: "), "{err}");
        let err = parse_settings(b"[1").unwrap_err();
        assert!(err.to_string().starts_with("settings: "), "{err}");
        let err = parse_settings(b"\xff").unwrap_err();
        assert!(matches!(err, InputError::SettingsEncoding(_)), "{err:?}");
    }

    #[test]
    fn payloads_parse_with_or_without_settings() {
        let request = fixture("pod-windows-pinned.json")["request"].clone();
        let rows = [
            (json!({"request": request, "settings": null}), true),
            (json!({"request": request}), true),
            (
                json!({"request": request, "settings": {"mutate": true}}),
                true,
            ),
            (
                json!({"request": request, "settings": {"exemptNamespaces": [""]}}),
                false,
            ),
            (json!({"settings": {}}), false),
        ];
        let err = parse_payload(b"{").unwrap_err();
        assert!(err.to_string().starts_with("validate payload: "), "{err}");
        for (payload, ok) in rows {
            let bytes = serde_json::to_vec(&payload).unwrap();
            let got = parse_payload(&bytes);
            assert_eq!(got.is_ok(), ok, "{payload}: {got:?}");
            if let Ok((r, _)) = got {
                assert_eq!(r.kind.kind, "Pod");
                assert_eq!(r.uid.len(), 36);
            }
        }
    }
}
