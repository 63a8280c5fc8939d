//! Which requests are reviewed and with what: the kinds and operations evaluated, requests whose object
//! cannot be checked, exempt namespaces, whether the cluster is asked for, and the namespace an object
//! lives in.

use serde_json::Value;
use winplace_rules::settings::Settings;

use super::AdmissionRequest;

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

/// Whether the request is evaluated at all: `CREATE` or `UPDATE` of an [`EVALUATED_KINDS`] object, not a
/// subresource but a Pod's `ephemeralcontainers` (the containers `kubectl debug` adds, judged when they
/// are added, as the exported policies judge them). (Whether its object is usable is [`malformed`]'s
/// question: such a request is rejected, not waved through.)
pub fn is_evaluated(request: &AdmissionRequest) -> bool {
    matches!(request.operation.as_str(), "CREATE" | "UPDATE")
        && (request.sub_resource.is_empty()
            || (request.sub_resource == "ephemeralcontainers"
                && request.operation == "UPDATE"
                && request.kind.kind == "Pod"))
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

/// Whether the caller should ask the host for [`CONTEXT_RESOURCES`](super::CONTEXT_RESOURCES): the rules
/// read the cluster ([`reads_context`]), the object can be checked, and the settings say the policy was
/// granted them (`contextAware: true`, beside `contextAwareResources` in the ClusterAdmissionPolicy).
/// Asking without the grant makes policy-server log an error for every request.
pub fn asks_for_context(request: &AdmissionRequest, settings: &Settings) -> bool {
    settings.context_aware
        && reads_context(request)
        && malformed(request).is_none()
        && !is_exempt(request, settings)
}

/// Whether the caller may ask the host for image manifests (`oci/v1/oci_manifest`,
/// `oci/v1/oci_manifest_config`): only when the settings say the policy was granted them
/// (`registryAware: true`). A policy cannot tell what it was granted, and policy-server logs an error for
/// every call it denies, on every request (docs/reference/kubewarden-hosting.md §5).
pub fn asks_for_manifests(settings: &Settings) -> bool {
    settings.registry_aware
}

/// The namespace the object lives in: the object's, else the request's.
pub(super) fn namespace_of(request: &AdmissionRequest) -> String {
    object_namespace(&request.object)
        .and_then(Value::as_str)
        .filter(|ns| !ns.is_empty())
        .unwrap_or(&request.namespace)
        .to_string()
}

/// `metadata.namespace` of an object, as written (`Value::pointer` would allocate its path's steps).
pub(super) fn object_namespace(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("namespace")
}

/// The object with the request's namespace filled in when the object omits it (as `kubectl apply -n` sends
/// it), so that findings and `exemptNamespaces` see the namespace the object will live in.
pub(super) fn with_namespace(mut value: Value, namespace: &str) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{no_manifests, request, settings, verdict};
    use crate::admission::{Decision, GroupVersionKind, Verdict, manifest_lookups, review};
    use serde_json::json;

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
            assert!(
                manifest_lookups(&r, None, &settings(json!({"registryAware": true}))).is_empty()
            );
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
}
