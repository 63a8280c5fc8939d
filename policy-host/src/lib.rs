//! A waPC host for `policy.wasm`, built the way Kubewarden's policy-server hosts policies: wasmtime through
//! the `wapc` and `wasmtime-provider` crates, answering the guest's host calls.
//!
//! Used by the integration tests and the benchmarks; not shipped.

#![warn(missing_docs)]

use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wapc::WapcHost;
use wasmtime_provider::WasmtimeEngineProviderBuilder;

/// Answers a host-capability call (`binding`, `namespace`, `operation`, payload) for the guest; `None`
/// makes the call fail, as policy-server does for a capability it does not grant.
pub type Capability = dyn Fn(&str, &str, &str, &[u8]) -> Option<Vec<u8>> + Send + Sync;

/// One host call the guest made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCall {
    /// `binding/namespace/operation`, e.g. `kubewarden/oci/v1/oci_manifest`.
    pub call: String,
    /// The request payload (JSON for every Kubewarden capability).
    pub payload: Vec<u8>,
}

/// A loaded policy, ready for `validate` and `validate_settings` calls.
pub struct PolicyHost {
    host: WapcHost,
    calls: Arc<Mutex<Vec<HostCall>>>,
}

/// What a test host answers for Kubewarden's host capabilities, like a policy-server with
/// `contextAwareResources` granted and a registry to read manifests from.
///
/// `kubewarden/kubernetes/list_resources_all` answers `lists[(api_version, kind)]`, its items pruned to the
/// request's `field_masks` ([`prune_items`]);
/// `kubewarden/oci/v1/oci_manifest` answers `manifests[image]`; `kubewarden/oci/v1/oci_manifest_config`
/// answers `configs[image]`. Anything else (or a missing entry) fails the call.
#[derive(Debug, Clone, Default)]
pub struct Capabilities {
    /// List objects by `(apiVersion, kind)`, e.g. `("v1", "Node")`.
    pub lists: std::collections::BTreeMap<(String, String), serde_json::Value>,
    /// OCI manifests (image index or image manifest) by image reference.
    pub manifests: std::collections::BTreeMap<String, serde_json::Value>,
    /// `{manifest, digest, config}` answers by image reference.
    pub configs: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Capabilities {
    /// A host that grants the cluster context of `policy-wasm/test_data/context/`: its Nodes and
    /// RuntimeClasses.
    pub fn test_cluster() -> Result<Self, String> {
        let mut c = Capabilities::default();
        c.lists.insert(
            ("v1".into(), "Node".into()),
            test_data("context/nodes.json")?,
        );
        c.lists.insert(
            ("node.k8s.io/v1".into(), "RuntimeClass".into()),
            test_data("context/runtimeclasses.json")?,
        );
        Ok(c)
    }

    /// The answer to one host call, or `None` to fail it.
    pub fn answer(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Option<Vec<u8>> {
        if binding != "kubewarden" {
            return None;
        }
        let request: serde_json::Value = serde_json::from_slice(payload).ok()?;
        let found = match (namespace, operation) {
            ("kubernetes", "list_resources_all") => {
                let key = (
                    request["api_version"].as_str()?.to_string(),
                    request["kind"].as_str()?.to_string(),
                );
                let list = self.lists.get(&key)?;
                let masks: Vec<&str> = request["field_masks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                return serde_json::to_vec(&prune_items(list, &masks)).ok();
            }
            ("oci", "v1/oci_manifest") => self.manifests.get(request.as_str()?),
            ("oci", "v1/oci_manifest_config") => self.configs.get(request.as_str()?),
            _ => None,
        }?;
        serde_json::to_vec(found).ok()
    }

    /// As a [`Capability`] for [`PolicyHost::new`].
    pub fn into_capability(self) -> Box<Capability> {
        Box::new(move |b, n, o, p| self.answer(b, n, o, p))
    }
}

/// `list` with each item pruned to the fields `masks` name, as a host that honours the SDK's
/// `field_masks` answers: dot paths through objects, arrays traversed, everything else dropped; no masks,
/// the whole list.
///
/// ```
/// let list = serde_json::json!({"items": [{"metadata": {"name": "n", "uid": "u"},
///     "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "podCIDR": "10.0.0.0/24"}}]});
/// let pruned = winplace_policy_host::prune_items(&list, &["metadata.name", "spec.taints.key"]);
/// assert_eq!(pruned, serde_json::json!({"items": [{"metadata": {"name": "n"},
///     "spec": {"taints": [{"key": "k"}]}}]}));
/// ```
pub fn prune_items(list: &Value, masks: &[&str]) -> Value {
    let paths: Vec<Vec<&str>> = masks.iter().map(|m| m.split('.').collect()).collect();
    let paths: Vec<&[&str]> = paths.iter().map(Vec::as_slice).collect();
    let mut out = list.clone();
    if let (false, Some(items)) = (paths.is_empty(), out.get_mut("items")) {
        *items = Value::Array(
            items
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|item| keep(item, &paths))
                .collect(),
        );
    }
    out
}

/// The part of `value` that `paths` reach (each a path below `value`; an empty one keeps it whole).
fn keep(value: &Value, paths: &[&[&str]]) -> Option<Value> {
    if paths.iter().any(|p| p.is_empty()) {
        return Some(value.clone());
    }
    match value {
        Value::Object(map) => Some(Value::Object(
            map.iter()
                .filter_map(|(k, v)| {
                    let below: Vec<&[&str]> = paths
                        .iter()
                        .filter(|p| p[0] == k.as_str())
                        .map(|p| &p[1..])
                        .collect();
                    if below.is_empty() {
                        return None;
                    }
                    Some((k.clone(), keep(v, &below)?))
                })
                .collect(),
        )),
        Value::Array(items) => Some(Value::Array(
            items.iter().filter_map(|i| keep(i, paths)).collect(),
        )),
        _ => None,
    }
}

/// Where `cargo xtask build` puts the optimized policy.
pub fn built_policy_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../static/policy.wasm")
}

/// Reads the built policy, with a message that says how to build it when it is missing.
pub fn built_policy() -> Result<Vec<u8>, String> {
    let path = built_policy_path();
    std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e}; build it first with `cargo xtask build`",
            path.display()
        )
    })
}

/// Compiles the benchmark fixture `policy-host/template-policy` (the logic of Kubewarden's Rust policy
/// template) for wasm32-wasip1 in the release profile, as the template's own Makefile builds it, and
/// reads the module. Runs the cargo that runs this process (`$CARGO`), into the same target directory.
pub fn template_policy() -> Result<Vec<u8>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(&cargo)
        .args([
            "build",
            "-p",
            "winplace-template-policy",
            "--lib",
            "--target",
            "wasm32-wasip1",
            "--release",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{cargo} build -p winplace-template-policy: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{cargo} build -p winplace-template-policy failed ({})",
            output.status
        ));
    }
    // The module's path, from cargo's compiler-artifact message for the fixture.
    let wasm = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| m["target"]["name"] == "winplace_template_policy")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "wasm"))
        .ok_or("cargo named no .wasm for winplace-template-policy")?;
    std::fs::read(&wasm).map_err(|e| format!("{}: {e}", wasm.display()))
}

/// A wasmtime engine configured as `WasmtimeEngineProviderBuilder` configures its own (the defaults), with
/// wasmtime's compilation cache in the target directory: `wasmtime-cache/` in the profile's folder of the
/// running executable (`target/debug/` for the tests in `deps/` and `replay` in `examples/`). Compiling
/// policy.wasm takes cranelift 15–20 s in a test build; every host after the first in a test run loads
/// the cached machine code instead (wasmtime keys it by the module's bytes, its own version and the
/// engine's settings).
fn cached_engine() -> Result<wasmtime::Engine, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this executable's path: {e}"))?;
    let mut folder = exe.parent().unwrap_or(std::path::Path::new("."));
    if folder.ends_with("deps") || folder.ends_with("examples") {
        folder = folder.parent().unwrap_or(folder);
    }
    let dir = folder.join("wasmtime-cache");
    let mut cache = wasmtime::CacheConfig::new();
    cache.with_directory(dir);
    let mut config = wasmtime::Config::default();
    config.cache(Some(
        wasmtime::Cache::new(cache).map_err(|e| format!("wasmtime cache: {e}"))?,
    ));
    wasmtime::Engine::new(&config).map_err(|e| format!("wasmtime: {e}"))
}

impl PolicyHost {
    /// Loads `module` with a host that answers logging and the given capabilities.
    pub fn new(module: &[u8], capability: Option<Box<Capability>>) -> Result<Self, String> {
        let engine = WasmtimeEngineProviderBuilder::new()
            .engine(cached_engine()?)
            .module_bytes(module)
            .build()
            .map_err(|e| format!("wasmtime: {e}"))?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                if let Ok(mut calls) = seen.lock() {
                    calls.push(HostCall {
                        call: format!("{binding}/{namespace}/{operation}"),
                        payload: payload.to_vec(),
                    });
                }
                // The SDK logs through kubewarden/tracing/log; policy-server prints it, we only accept it.
                if (binding, namespace, operation) == ("kubewarden", "tracing", "log") {
                    return Ok(Vec::new());
                }
                match capability
                    .as_ref()
                    .and_then(|c| c(binding, namespace, operation, payload))
                {
                    Some(answer) => Ok(answer),
                    None => Err(
                        format!("unsupported host call {binding}/{namespace}/{operation}").into(),
                    ),
                }
            };
        let host = WapcHost::new(Box::new(engine), Some(Box::new(callback)))
            .map_err(|e| format!("waPC host: {e}"))?;
        Ok(PolicyHost { host, calls })
    }

    /// Calls a guest function with `payload` as it is and returns the guest's answer as it is (the bytes
    /// compared with the browser host's), or the guest's error.
    pub fn call_raw(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        self.host
            .call(operation, payload)
            .map_err(|e| format!("{operation}: {e}"))
    }

    /// Calls a guest function with a JSON payload and parses its JSON answer.
    pub fn call(
        &self,
        operation: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let bytes = serde_json::to_vec(payload).map_err(|e| e.to_string())?;
        let answer = self
            .host
            .call(operation, &bytes)
            .map_err(|e| format!("{operation}: {e}"))?;
        serde_json::from_slice(&answer).map_err(|e| format!("{operation} answered non-JSON: {e}"))
    }

    /// `validate` with `{"request": request, "settings": settings}`: a ValidationResponse.
    pub fn validate(
        &self,
        request: &serde_json::Value,
        settings: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        self.call(
            "validate",
            &serde_json::json!({ "request": request, "settings": settings }),
        )
    }

    /// The host calls the guest made so far (`binding/namespace/operation`).
    pub fn host_calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .map(|c| c.iter().map(|h| h.call.clone()).collect())
            .unwrap_or_default()
    }

    /// The host calls the guest made so far, with their payloads; log calls left out.
    pub fn capability_calls(&self) -> Vec<HostCall> {
        self.calls
            .lock()
            .map(|c| {
                c.iter()
                    .filter(|h| h.call != "kubewarden/tracing/log")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Forgets the calls recorded so far (between requests on one warm instance).
    pub fn clear_host_calls(&self) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.clear();
        }
    }
}

/// An AdmissionRequest for `object`, shaped as the API server sends it (every field policy-server reads);
/// the namespace is the object's, else `default`. Built by [`winplace_policy_wasm::request`], as the
/// dashboard's browser host builds its requests.
pub fn admission_request(operation: &str, object: &serde_json::Value) -> serde_json::Value {
    winplace_policy_wasm::request::request(operation, object, "default")
}

/// The directory of the policy's AdmissionReview fixtures (`policy-wasm/test_data`).
pub fn test_data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy-wasm/test_data")
}

/// A JSON fixture of `policy-wasm/test_data` (e.g. `pod-windows-unpinned.json`, `context/nodes.json`).
pub fn test_data(name: &str) -> Result<serde_json::Value, String> {
    let path = test_data_dir().join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
