//! Replays guest calls through policy.wasm in wasmtime and prints the guest's answers byte for byte: the
//! other half of the dashboard's parity test (`playwright-tests/tests/admission.spec.ts`), which sends the
//! same calls through the browser's waPC host and compares.
//!
//! Reads JSON on stdin:
//! `{"module": PATH, "lists": {"v1/Node": TEXT, …}, "manifests": {IMAGE: TEXT}, "configs": {IMAGE: TEXT},
//!   "calls": [{"operation": "validate", "payload": TEXT}, …]}`
//! and answers host calls from those texts as the page's host does, through the same module
//! (`winplace_policy_wasm::host_answers`: lists by `apiVersion/kind`, pruned to the request's
//! `field_masks`; `kubewarden/oci/v1/oci_manifest` and `v1/oci_manifest_config` by image); anything else
//! is refused, as a policy-server without the capability does. Prints `[{"ok": true, "answer": TEXT} |
//! {"ok": false, "error": TEXT}, …]`, the calls made in order on one warm instance (as policy-server
//! reuses its instances).
//!
//! ```text
//! cargo run -p winplace-policy-host --example replay < calls.json
//! ```

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};
use winplace_policy_host::{PolicyHost, capability};
use winplace_policy_wasm::host_answers::HostAnswers;

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
    let json = |what: &str, key: &str, text: &str| {
        serde_json::from_str::<Value>(text).map_err(|e| format!("stdin: {what}[{key}]: {e}"))
    };
    let mut answers = HostAnswers::default();
    for (key, text) in &lists {
        answers.lists.insert(key.clone(), json("lists", key, text)?);
    }
    for (image, text) in &manifests {
        answers
            .manifests
            .insert(image.clone(), json("manifests", image, text)?);
    }
    for (image, text) in &configs {
        answers
            .configs
            .insert(image.clone(), json("configs", image, text)?);
    }
    let host = PolicyHost::new(&module, Some(capability(answers)))?;
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
