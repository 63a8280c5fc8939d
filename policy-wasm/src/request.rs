//! What a policy receives: the `AdmissionRequest` the API server sends a webhook for an object, and the
//! `validate` payload policy-server makes of it (`{"request": …, "settings": …}`).
//!
//! The playground's Admission view and the waPC host tests build their requests here, so the browser and
//! wasmtime hosts send the module the very same bytes.
//!
//! ```
//! use serde_json::json;
//! use winplace_policy_wasm::request::create_request;
//! let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {}});
//! let request = create_request(&pod, "shop");
//! assert_eq!(request["operation"], "CREATE");
//! assert_eq!(request["resource"]["resource"], "pods");
//! assert_eq!(request["namespace"], "shop");
//! ```

use serde_json::{Value, json};

/// The uid of every request built here (the API server sends a fresh one; the policy only echoes it).
pub const REQUEST_UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

/// The resource (lower-case plural, as in the API paths) of `kind`, for the kinds this policy evaluates
/// and the other core workload kinds; `None` for a kind whose plural is not known here.
pub fn resource_of(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "Pod" => "pods",
        "Deployment" => "deployments",
        "ReplicaSet" => "replicasets",
        "StatefulSet" => "statefulsets",
        "DaemonSet" => "daemonsets",
        "Job" => "jobs",
        "CronJob" => "cronjobs",
        "ReplicationController" => "replicationcontrollers",
        "Node" => "nodes",
        "RuntimeClass" => "runtimeclasses",
        "Namespace" => "namespaces",
        _ => return None,
    })
}

/// Whether objects of `kind` live in a namespace (Node and RuntimeClass do not).
pub fn is_namespaced(kind: &str) -> bool {
    !matches!(kind, "Node" | "RuntimeClass" | "Namespace")
}

/// The `AdmissionRequest` (admission.k8s.io/v1) the API server sends when `object` is created, e.g. by
/// `kubectl apply -n namespace`: the object's own namespace wins; cluster-scoped objects get none.
pub fn create_request(object: &Value, namespace: &str) -> Value {
    request("CREATE", object, namespace)
}

/// The `AdmissionRequest` for `operation` (`CREATE`, `UPDATE`…) of `object`; see [`create_request`].
pub fn request(operation: &str, object: &Value, namespace: &str) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].as_str().unwrap_or("");
    let resource = resource_of(kind)
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}s", kind.to_lowercase()));
    let namespace = if is_namespaced(kind) {
        object["metadata"]["namespace"]
            .as_str()
            .unwrap_or(namespace)
    } else {
        ""
    };
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let options_kind = match operation {
        "UPDATE" => "UpdateOptions",
        "DELETE" => "DeleteOptions",
        _ => "CreateOptions",
    };
    let mut request = json!({
        "uid": REQUEST_UID,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": resource},
        "name": name,
        "operation": operation,
        "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
        "object": object,
        "oldObject": null,
        "dryRun": false,
        "options": {"kind": options_kind, "apiVersion": "meta.k8s.io/v1"}
    });
    // The API server leaves `namespace` out for cluster-scoped objects.
    if !namespace.is_empty() {
        request["namespace"] = Value::String(namespace.to_string());
    }
    request
}

/// The AdmissionReview (admission.k8s.io/v1) around `request`, as the API server posts it.
pub fn review(request: &Value) -> Value {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// The payload policy-server hands the policy's `validate`: `{"request": …, "settings": …}`.
pub fn validate_payload(request: &Value, settings: &Value) -> Value {
    json!({"request": request, "settings": settings})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_objects_take_the_request_namespace_unless_they_name_one() {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}});
        assert_eq!(create_request(&pod, "shop")["namespace"], "shop");
        pod["metadata"]["namespace"] = json!("web");
        assert_eq!(create_request(&pod, "shop")["namespace"], "web");
    }

    #[test]
    fn cluster_scoped_objects_have_no_namespace_and_real_plurals() {
        let rc = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "w"}});
        let request = create_request(&rc, "default");
        assert!(request.get("namespace").is_none());
        assert_eq!(request["resource"]["resource"], "runtimeclasses");
        assert_eq!(request["kind"]["group"], "node.k8s.io");
    }

    #[test]
    fn requests_parse_as_the_policy_reads_them() {
        let deploy =
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
        let payload = validate_payload(&create_request(&deploy, "default"), &json!({}));
        let bytes = serde_json::to_vec(&payload).unwrap();
        let (request, _) = crate::admission::parse_payload(&bytes).unwrap();
        assert_eq!(request.kind.kind, "Deployment");
        assert_eq!(request.operation, "CREATE");
        assert_eq!(request.namespace, "default");
    }
}
