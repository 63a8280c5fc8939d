//! Replays guest calls through policy.wasm in wasmtime and prints the guest's answers byte for byte: the
//! other half of the dashboard's parity test (`playwright-tests/tests/admission.spec.ts`), which sends the
//! same calls through the browser's waPC host and compares.
//!
//! Reads JSON on stdin:
//! `{"module": PATH, "lists": {"v1/Node": TEXT, …}, "manifests": {IMAGE: TEXT}, "configs": {IMAGE: TEXT},
//!   "calls": [{"operation": "validate", "payload": TEXT}, …]}`
//! and answers host calls with those texts exactly as given (lists by `apiVersion/kind` for
//! `kubewarden/kubernetes/list_resources_all`, `kubewarden/oci/v1/oci_manifest`,
//! `kubewarden/oci/v1/oci_manifest_config`); anything else is refused, as a policy-server without the
//! capability does. Prints `[{"ok": true, "answer": TEXT} | {"ok": false, "error": TEXT}, …]`, the calls
//! made in order on one warm instance (as policy-server reuses its instances).
//!
//! ```text
//! cargo run -p winplace-policy-host --example replay < calls.json
//! ```

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};
use winplace_policy_host::PolicyHost;

#[derive(Deserialize)]
struct Replay {
    module: String,
    #[serde(default)]
    lists: BTreeMap<String, String>,
    #[serde(default)]
    manifests: BTreeMap<String, String>,
    #[serde(default)]
    configs: BTreeMap<String, String>,
    calls: Vec<Call>,
}

#[derive(Deserialize)]
struct Call {
    operation: String,
    payload: String,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("replay: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("stdin: {e}"))?;
    let replay: Replay = serde_json::from_str(&input).map_err(|e| format!("stdin: {e}"))?;
    let module = std::fs::read(&replay.module).map_err(|e| format!("{}: {e}", replay.module))?;
    let Replay {
        lists,
        manifests,
        configs,
        calls,
        ..
    } = replay;
    let answer = move |binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
        if binding != "kubewarden" {
            return None;
        }
        let request: Value = serde_json::from_slice(payload).ok()?;
        let text = match (namespace, operation) {
            ("kubernetes", "list_resources_all") => lists.get(&format!(
                "{}/{}",
                request["api_version"].as_str()?,
                request["kind"].as_str()?
            )),
            ("oci", "v1/oci_manifest") => manifests.get(request.as_str()?),
            ("oci", "v1/oci_manifest_config") => configs.get(request.as_str()?),
            _ => None,
        }?;
        Some(text.as_bytes().to_vec())
    };
    let host = PolicyHost::new(&module, Some(Box::new(answer)))?;
    let answers: Vec<Value> = calls
        .iter()
        .map(
            |call| match host.call_raw(&call.operation, call.payload.as_bytes()) {
                Ok(bytes) => json!({"ok": true, "answer": String::from_utf8_lossy(&bytes)}),
                Err(error) => json!({"ok": false, "error": error}),
            },
        )
        .collect();
    println!("{}", Value::Array(answers));
    Ok(())
}
