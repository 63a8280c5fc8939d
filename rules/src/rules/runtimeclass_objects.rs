//! RuntimeClass objects (kubernetes-windows-rules.md §4): `runtimeclass-deprecated-api`, `runtimeclass-docker-handler`,
//! `runtimeclass-hyperv-handler`, plus `toleration-invalid` and `unknown-field` in its `scheduling`.

use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::api::node::v1::RuntimeClass;
use serde_json::Value;

use std::collections::BTreeMap;

use super::{Emitter, ObjectCx, RuleId, tolerations, unknown_fields, windows_pods};
use crate::finding::Fix;
use crate::model::{decode, get};
use crate::path::FieldPath;
use crate::schedule::runtimeclass::{
    API_VERSION_V1, HANDLER_WCOW_HYPERVISOR, HANDLER_WCOW_PROCESS, is_removed_api_version,
};

const V1ALPHA1: &str = "node.k8s.io/v1alpha1";

/// Runs the RuntimeClass rules on one object (nothing unless it is a `node.k8s.io` RuntimeClass).
pub(crate) fn check(cx: &ObjectCx<'_>, out: &mut Emitter<'_>) {
    let api_version = cx.object.api_version.as_str();
    if cx.object.kind != "RuntimeClass" || !api_version.starts_with("node.k8s.io/") {
        return;
    }
    // v1alpha1 nested everything under `spec` and called the handler `runtimeHandler`.
    let alpha = api_version == V1ALPHA1;
    let base = if alpha {
        FieldPath::root().field("spec")
    } else {
        FieldPath::root()
    };
    // The typed form only accepts its own apiVersion; v1beta1 has the same fields.
    let mut as_v1 = cx.object.value.clone();
    if let Some(map) = as_v1.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(API_VERSION_V1));
    }
    if !alpha && let Err(e) = decode::<RuntimeClass>(&as_v1, &FieldPath::root()) {
        let message = super::invalid_message(&e.message);
        out.emit(RuleId::ManifestInvalid, &e.path, message, None);
        return;
    }
    deprecated_api(cx, out);
    let handler_path = if alpha {
        base.field("runtimeHandler")
    } else {
        base.field("handler")
    };
    if let Some(handler) = get(&cx.object.value, &handler_path).and_then(Value::as_str) {
        handler_rules(handler, &handler_path, out);
    }
    let selector_path = base.field("scheduling").field("nodeSelector");
    if let Some(selector) = get(&cx.object.value, &selector_path)
        .and_then(|v| serde_json::from_value::<BTreeMap<String, String>>(v.clone()).ok())
    {
        windows_pods::deprecated_selector_labels(
            &selector,
            &selector_path,
            "RuntimeClass scheduling.nodeSelector",
            out,
        );
    }
    let tolerations_path = base.field("scheduling").field("tolerations");
    if let Some(raw) = get(&cx.object.value, &tolerations_path).filter(|v| !v.is_null()) {
        match decode::<Vec<Toleration>>(raw, &tolerations_path) {
            Ok(list) => tolerations::check_tolerations(&list, &tolerations_path, out),
            Err(e) => {
                let message = super::invalid_message(&e.message);
                out.emit(RuleId::ManifestInvalid, &e.path, message, None);
            }
        }
    }
    unknown_fields::check_runtime_class(cx, out);
}

/// `runtimeclass-deprecated-api`: an `apiVersion` current clusters no longer serve.
fn deprecated_api(cx: &ObjectCx<'_>, out: &mut Emitter<'_>) {
    let api_version = cx.object.api_version.as_str();
    if !is_removed_api_version(api_version) {
        return;
    }
    let path = FieldPath::root().field("apiVersion");
    let (todo, fix) = if api_version == V1ALPHA1 {
        (
            format!(
                "move spec.runtimeHandler to a top-level handler, spec.overhead and spec.scheduling to the top level, and set apiVersion: {API_VERSION_V1}"
            ),
            None,
        )
    } else {
        (
            format!("change apiVersion to {API_VERSION_V1}; the fields are the same"),
            Some(Fix {
                description: format!("set apiVersion to {API_VERSION_V1}"),
                patch: vec![serde_json::json!({
                    "op": "replace",
                    "path": path.to_json_pointer(),
                    "value": API_VERSION_V1,
                })]
                .into(),
            }),
        )
    };
    let message = format!(
        "RuntimeClass {api_version} is no longer served (node.k8s.io/v1beta1 was removed in Kubernetes 1.25; {API_VERSION_V1} exists since 1.20), so current clusters refuse this manifest; {todo}"
    );
    out.emit(RuleId::RuntimeClassDeprecatedApi, &path, message, fix);
}

/// `runtimeclass-docker-handler` and `runtimeclass-hyperv-handler`.
fn handler_rules(handler: &str, path: &FieldPath, out: &mut Emitter<'_>) {
    match handler {
        "docker" => out.emit(
            RuleId::RuntimeClassDockerHandler,
            path,
            format!(
                "the handler `docker` names dockershim, which was removed in Kubernetes 1.24 and never supported runtime handlers; unless your nodes configure a runtime called docker, pods of this class get no sandbox: set handler: {HANDLER_WCOW_PROCESS} (containerd's Windows runtime) or the handler your nodes configure"
            ),
            None,
        ),
        HANDLER_WCOW_HYPERVISOR => out.emit(
            RuleId::RuntimeClassHyperVHandler,
            path,
            format!(
                "the handler {HANDLER_WCOW_HYPERVISOR} runs pods with Hyper-V isolation, which Kubernetes does not support on Windows (and HostProcess pods cannot use); use handler: {HANDLER_WCOW_PROCESS} (process isolation) with images that match the nodes' build"
            ),
            None,
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{apply, object, rule_paths, run_object};
    use crate::settings::Settings;

    fn rc(api: &str, body: &str) -> String {
        format!("apiVersion: {api}\nkind: RuntimeClass\nmetadata: {{name: rc}}\n{body}")
    }

    fn run(text: &str) -> Vec<(String, String)> {
        rule_paths(&run_object(text, &Settings::default(), check))
    }

    /// (apiVersion, body, expected (rule, path)).
    type RcCase<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);

    #[test]
    fn runtime_class_table() {
        // (apiVersion, body, expected (rule, path)) — kubernetes-windows-rules.md §4.
        let cases: &[RcCase] = &[
            ("node.k8s.io/v1", "handler: runhcs-wcow-process\n", &[]),
            (
                "node.k8s.io/v1beta1",
                "handler: runhcs-wcow-process\n",
                &[("runtimeclass-deprecated-api", "apiVersion")],
            ),
            (
                "node.k8s.io/v1beta1",
                "handler: docker\n",
                &[
                    ("runtimeclass-deprecated-api", "apiVersion"),
                    ("runtimeclass-docker-handler", "handler"),
                ],
            ),
            (
                "node.k8s.io/v1",
                "handler: runhcs-wcow-hypervisor\n",
                &[("runtimeclass-hyperv-handler", "handler")],
            ),
            (
                "node.k8s.io/v1alpha1",
                "spec: {runtimeHandler: docker}\n",
                &[
                    ("runtimeclass-deprecated-api", "apiVersion"),
                    ("runtimeclass-docker-handler", "spec.runtimeHandler"),
                ],
            ),
            (
                "node.k8s.io/v1",
                "handler: h\nscheduling:\n  tolerations: [{operator: Equal, value: windows}, {key: os, operator: Exists}]\n",
                &[("toleration-invalid", "scheduling.tolerations[0].operator")],
            ),
            (
                "node.k8s.io/v1",
                "handler: h\nscheduling:\n  tolerations: [{key: os, Effect: NoSchedule}]\n",
                &[("unknown-field", "scheduling.tolerations[0].Effect")],
            ),
            (
                "node.k8s.io/v1",
                "handler: h\nscheduling: {tolerations: [{key: 1}]}\n",
                &[("manifest-invalid", "scheduling.tolerations[0].key")],
            ),
            (
                "node.k8s.io/v1",
                "handler: h\nscheduling:\n  nodeSelector: {beta.kubernetes.io/os: windows}\n",
                &[(
                    "deprecated-os-label",
                    "scheduling.nodeSelector[beta.kubernetes.io/os]",
                )],
            ),
            (
                "node.k8s.io/v1",
                "handler: h\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows}\n",
                &[],
            ),
            // Other groups and kinds.
            ("example.com/v1", "handler: docker\n", &[]),
        ];
        for (api, body, want) in cases {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(r, p)| (r.to_string(), p.to_string()))
                .collect();
            assert_eq!(run(&rc(api, body)), want, "{api} {body}");
        }
    }

    #[test]
    fn v1beta1_fix_applies_and_v1alpha1_has_none() {
        let text = rc("node.k8s.io/v1beta1", "handler: runhcs-wcow-process\n");
        let findings = run_object(&text, &Settings::default(), check);
        let mut value = object(&text).value;
        apply(&mut value, findings[0].fix.as_ref().expect("fix"));
        assert_eq!(value["apiVersion"], "node.k8s.io/v1");
        let fixed = serde_json::to_string(&value).expect("json");
        assert!(run(&fixed).is_empty());
        let alpha = run_object(
            &rc(V1ALPHA1, "spec: {runtimeHandler: h}\n"),
            &Settings::default(),
            check,
        );
        assert!(alpha[0].fix.is_none());
    }
}
