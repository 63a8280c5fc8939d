//! A waPC host for `policy.wasm`, built the way Kubewarden's policy-server hosts policies: wasmtime through
//! the `wapc` and `wasmtime-provider` crates, answering the guest's host calls.
//!
//! Used by the integration tests and the benchmarks; not shipped.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wapc::WapcHost;
use wasmtime_provider::WasmtimeEngineProviderBuilder;

/// Answers a host-capability call (`binding`, `namespace`, `operation`, payload) for the guest.
pub type Capability = dyn Fn(&str, &str, &str, &[u8]) -> Option<Vec<u8>> + Send + Sync;

/// A loaded policy, ready for `validate` and `validate_settings` calls.
pub struct PolicyHost {
    host: WapcHost,
    calls: Arc<Mutex<Vec<String>>>,
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

impl PolicyHost {
    /// Loads `module` with a host that answers logging and the given capabilities.
    pub fn new(module: &[u8], capability: Option<Box<Capability>>) -> Result<Self, String> {
        let engine = WasmtimeEngineProviderBuilder::new()
            .module_bytes(module)
            .build()
            .map_err(|e| format!("wasmtime: {e}"))?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                if let Ok(mut calls) = seen.lock() {
                    calls.push(format!("{binding}/{namespace}/{operation}"));
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
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

/// An AdmissionRequest for `object`, shaped as the API server sends it (every field policy-server reads).
pub fn admission_request(operation: &str, object: &serde_json::Value) -> serde_json::Value {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].as_str().unwrap_or("");
    let resource = format!("{}s", kind.to_lowercase());
    let namespace = object["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default");
    serde_json::json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": resource},
        "name": object["metadata"]["name"],
        "namespace": namespace,
        "operation": operation,
        "userInfo": {"username": "admin", "groups": ["system:authenticated"]},
        "object": object,
        "oldObject": null,
        "dryRun": false,
        "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    })
}
