//! The browser's waPC host (`dashboard/js/policy_host.js`) seen from Rust: load a policy module (the
//! server's `/policy.wasm` or a file the user drops in), read its identity, call it, its host calls
//! answered by `winplace_policy_wasm::host_answers` (the answers the wasmtime host gives too).
//!
//! The host itself is JavaScript because it is a thin layer over the WebAssembly API (compile, instantiate,
//! read and write the guest's memory); docs/dependencies.md says why no npm package does it.

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use winplace_policy_wasm::host_answers::HostAnswers;

/// The same, as the JavaScript host calls it.
type JsHostCall<'a> = dyn Fn(String, String, String, String) -> Result<String, JsValue> + 'a;

#[wasm_bindgen(module = "/js/policy_host.js")]
extern "C" {
    #[wasm_bindgen(js_name = loadPolicyUrl, catch)]
    async fn load_policy_url(url: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = loadPolicyBytes, catch)]
    async fn load_policy_bytes(bytes: js_sys::Uint8Array, name: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = policyIdentity)]
    fn policy_identity(policy: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = policyCall, catch)]
    fn policy_call(
        policy: &JsValue,
        operation: &str,
        payload: &str,
        host: &JsHostCall<'_>,
    ) -> Result<String, JsValue>;
}

/// What the user should know about a loaded module: which artifact answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// The URL or file name it came from.
    pub source: String,
    /// Bytes.
    pub size: u64,
    /// Hex SHA-256 of the bytes (empty outside a secure context, where the browser offers no digest).
    pub sha256: String,
    /// Whether it carries the metadata `kwctl annotate` embeds.
    pub annotated: bool,
    /// `io.kubewarden.policy.title`.
    pub title: String,
    /// `io.kubewarden.policy.version`.
    pub version: String,
    /// The metadata's `protocolVersion`.
    pub protocol_version: String,
    /// The metadata's `mutating`.
    pub mutating: bool,
    /// The WASI and waPC functions it imports.
    pub imports: Vec<String>,
    /// The metadata's admission `rules` (what a ClusterAdmissionPolicy made from it selects).
    #[serde(default)]
    pub rules: Vec<serde_json::Value>,
}

/// A compiled policy module (compiled once per page and URL) with its warm instance.
#[derive(Clone)]
pub struct Policy {
    handle: JsValue,
    /// Which module this is.
    pub identity: Identity,
}

fn message(error: JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| format!("{error:?}"))
}

impl Policy {
    fn from_handle(handle: JsValue) -> Result<Policy, String> {
        let identity = js_sys::JSON::stringify(&policy_identity(&handle))
            .map(String::from)
            .map_err(message)?;
        let identity = serde_json::from_str(&identity).map_err(|e| e.to_string())?;
        Ok(Policy { handle, identity })
    }

    /// Fetches and compiles the module at `url` (streaming compilation).
    pub async fn load_url(url: &str) -> Result<Policy, String> {
        Policy::from_handle(load_policy_url(url).await.map_err(message)?)
    }

    /// Compiles a module the user chose.
    pub async fn load_bytes(bytes: &[u8], name: &str) -> Result<Policy, String> {
        let array = js_sys::Uint8Array::from(bytes);
        Policy::from_handle(load_policy_bytes(array, name).await.map_err(message)?)
    }

    /// Calls the guest's `operation` with `payload`; `host` answers its host calls, as the wasmtime host
    /// does (a refused call fails, as with a host without the capability). The guest's answer, or its
    /// error.
    pub fn call(
        &self,
        operation: &str,
        payload: &str,
        host: &HostAnswers,
    ) -> Result<String, String> {
        // A stack closure: valid for this synchronous call only, which is all the guest needs. Payloads
        // and answers are JSON text, so UTF-8 both ways.
        let answer = |binding: String, namespace: String, op: String, body: String| {
            host.answer(&binding, &namespace, &op, body.as_bytes())
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|e| JsValue::from(js_sys::Error::new(&e.to_string())))
        };
        policy_call(&self.handle, operation, payload, &answer).map_err(message)
    }
}
