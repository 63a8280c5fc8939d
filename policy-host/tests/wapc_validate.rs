//! policy.wasm, hosted in wasmtime through waPC as policy-server hosts it.

use serde_json::json;
use winplace_policy_host::{PolicyHost, admission_request, built_policy};

fn deployment(node_selector: serde_json::Value) -> serde_json::Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "win-webserver", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "win-webserver"}},
            "template": {
                "metadata": {"labels": {"app": "win-webserver"}},
                "spec": {
                    "nodeSelector": node_selector,
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                    "containers": [{"name": "web", "image": "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}]
                }
            }
        }
    })
}

fn host() -> PolicyHost {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    PolicyHost::new(&module, None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn protocol_version_is_v1() {
    let answer = host().call("protocol_version", &json!(null)).unwrap();
    assert_eq!(answer, json!("v1"));
}

#[test]
fn unpinned_windows_deployment_is_rejected_with_the_rule_in_the_message() {
    let host = host();
    let request = admission_request("CREATE", &deployment(json!({})));
    let response = host.validate(&request, &json!({})).unwrap();
    assert_eq!(response["accepted"], json!(false), "{response}");
    let message = response["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("windows-pod-without-os-selector"),
        "{message}"
    );
    assert!(
        message.contains("spec.template.spec.nodeSelector"),
        "{message}"
    );
}

#[test]
fn pinned_windows_deployment_is_accepted() {
    let host = host();
    let selector =
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"});
    let request = admission_request("CREATE", &deployment(selector));
    let response = host.validate(&request, &json!({})).unwrap();
    assert_eq!(response["accepted"], json!(true), "{response}");
    assert!(response["message"].is_null(), "{response}");
}

#[test]
fn settings_are_validated_by_the_guest() {
    let host = host();
    let good = host.call("validate_settings", &json!({})).unwrap();
    assert_eq!(good["valid"], json!(true), "{good}");
    let bad = host
        .call("validate_settings", &json!({"exemptNamespaces": [""]}))
        .unwrap();
    assert_eq!(bad["valid"], json!(false), "{bad}");
    assert!(
        bad["message"]
            .as_str()
            .unwrap_or_default()
            .contains("exemptNamespaces"),
        "{bad}"
    );
}
