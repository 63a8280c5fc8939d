//! What kube-apiserver refuses in an update of a pod's spec (`ValidatePodUpdate`,
//! docs/reference/scheduling-gates.md §2): scheduling gates may only be removed; tolerations may only be
//! added; while the OLD pod is gated, nodeSelector entries may be added and required node affinity set
//! when absent or grown by expressions appended to each existing term; every other field of the spec
//! stays (but container images, `activeDeadlineSeconds`, `terminationGracePeriodSeconds`).
//!
//! The placement controller checks its own patch with it before sending (a patch the API server would
//! refuse is not sent), and the tests' fake API server answers 422 with it.
//!
//! ```
//! use serde_json::json;
//! use winplace_rules::schedule::pod_update::update_refusals;
//! let old = json!({"schedulingGates": [{"name": "a.io/g"}], "containers": []});
//! let pinned = json!({"nodeSelector": {"kubernetes.io/os": "windows"}, "containers": []});
//! assert!(update_refusals(&old, &pinned).is_empty());
//! // Once the gates are gone, the nodeSelector may not change.
//! let refused = update_refusals(&pinned, &json!({"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": []}));
//! assert_eq!(refused[0].field, "spec");
//! ```

use serde_json::{Map, Value};

/// One error kube-apiserver reports for the update (scheduling-gates.md §3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The field path: `spec.tolerations`, `spec.schedulingGates[1].name`.
    pub field: String,
    /// `Forbidden` or `Invalid value`.
    pub kind: RefusalKind,
    /// The detail, as the API server words it (without the value of an `Invalid` error).
    pub detail: String,
}

/// The type of a field error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueInvalid`.
    Invalid,
}

impl RefusalKind {
    /// The cause's `reason` in a `Status`: `FieldValueForbidden`.
    pub fn reason(self) -> &'static str {
        match self {
            RefusalKind::Forbidden => "FieldValueForbidden",
            RefusalKind::Invalid => "FieldValueInvalid",
        }
    }
}

const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
const TERMS_PATH: &str =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";

/// The errors kube-apiserver gives for updating a pod whose spec is `old` to `new` (empty: accepted),
/// in the order `ValidatePodUpdate` finds them.
pub fn update_refusals(old: &Value, new: &Value) -> Vec<Refusal> {
    let mut out = Vec::new();
    let gated = !list(old, "schedulingGates").is_empty();
    // §2.1: gates, deletions only.
    let old_gates: Vec<&str> = gate_names(old);
    for (i, name) in gate_names(new).into_iter().enumerate() {
        if !old_gates.contains(&name) {
            out.push(Refusal {
                field: format!("spec.schedulingGates[{i}].name"),
                kind: RefusalKind::Forbidden,
                detail: format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            });
        }
    }
    // §2.2: tolerations, additions only (tolerationSeconds may change).
    let new_tolerations: Vec<Value> = list(new, "tolerations")
        .iter()
        .map(without_seconds)
        .collect();
    if list(old, "tolerations")
        .iter()
        .map(without_seconds)
        .any(|t| !new_tolerations.contains(&t))
    {
        out.push(Refusal {
            field: "spec.tolerations".into(),
            kind: RefusalKind::Forbidden,
            detail: "existing toleration can not be modified except its tolerationSeconds".into(),
        });
    }
    let mut munged = clean(new);
    let old_spec = clean(old);
    copy_field(&mut munged, &old_spec, "schedulingGates");
    copy_field(&mut munged, &old_spec, "tolerations");
    copy_field(&mut munged, &old_spec, "activeDeadlineSeconds");
    copy_field(&mut munged, &old_spec, "terminationGracePeriodSeconds");
    for containers in ["containers", "initContainers"] {
        copy_images(&mut munged, &old_spec, containers);
    }
    if gated {
        // §2.4: nodeSelector, additions only.
        let old_selector = object(&old_spec, "nodeSelector");
        let new_selector = object(&munged, "nodeSelector");
        if old_selector != new_selector {
            if old_selector
                .iter()
                .any(|(k, v)| new_selector.get(k) != Some(v))
            {
                out.push(Refusal {
                    field: "spec.nodeSelector".into(),
                    kind: RefusalKind::Invalid,
                    detail: "only additions to spec.nodeSelector are allowed (no mutations or deletions)"
                        .into(),
                });
            }
            copy_field(&mut munged, &old_spec, "nodeSelector");
        }
        // §2.5, §2.6: required node affinity grows only; then the whole nodeAffinity is the old one.
        let old_node = old_spec.pointer("/affinity/nodeAffinity").cloned();
        let new_node = munged.pointer("/affinity/nodeAffinity").cloned();
        if old_node != new_node {
            out.extend(affinity_refusals(old_node.as_ref(), new_node.as_ref()));
            restore_node_affinity(&mut munged, &old_spec, old_node);
        }
    }
    if munged != old_spec {
        out.push(Refusal {
            field: "spec".into(),
            kind: RefusalKind::Forbidden,
            detail: "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)".into(),
        });
    }
    out
}

fn affinity_refusals(old: Option<&Value>, new: Option<&Value>) -> Vec<Refusal> {
    let terms = |v: Option<&Value>| -> Option<Vec<Value>> {
        v.and_then(|n| n.get(REQUIRED))
            .filter(|r| !r.is_null())
            .map(|r| {
                r.get("nodeSelectorTerms")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
    };
    let Some(old_terms) = terms(old).filter(|t| !t.is_empty()) else {
        return Vec::new(); // absent before: anything may be set
    };
    let new_terms = terms(new).unwrap_or_default();
    if new_terms.len() != old_terms.len() {
        return vec![Refusal {
            field: TERMS_PATH.into(),
            kind: RefusalKind::Invalid,
            detail: "no additions/deletions to non-empty NodeSelectorTerms list are allowed".into(),
        }];
    }
    let mut out = Vec::new();
    for (i, (o, n)) in old_terms.iter().zip(&new_terms).enumerate() {
        let (oe, of) = (list(o, "matchExpressions"), list(o, "matchFields"));
        let (ne, nf) = (list(n, "matchExpressions"), list(n, "matchFields"));
        let ok = if oe.is_empty() && of.is_empty() {
            ne.is_empty() && nf.is_empty()
        } else {
            ne.starts_with(oe) && nf.starts_with(of)
        };
        if !ok {
            out.push(Refusal {
                field: format!("{TERMS_PATH}[{i}]"),
                kind: RefusalKind::Invalid,
                detail: "only additions are allowed (no mutations or deletions)".into(),
            });
        }
    }
    out
}

/// After the affinity check the API server compares the rest with the old node affinity put back; an
/// `affinity` that held only `nodeAffinity` on a pod that had none counts as unchanged (§2.6).
fn restore_node_affinity(munged: &mut Value, old_spec: &Value, old_node: Option<Value>) {
    let old_affinity = old_spec.get("affinity");
    let Some(spec) = munged.as_object_mut() else {
        return;
    };
    let only_node = spec
        .get("affinity")
        .and_then(Value::as_object)
        .is_some_and(|a| a.keys().all(|k| k == "nodeAffinity"));
    match (old_affinity, old_node) {
        (None, _) if only_node => {
            spec.remove("affinity");
        }
        (_, Some(node)) => {
            if let Some(a) = spec.get_mut("affinity").and_then(Value::as_object_mut) {
                a.insert("nodeAffinity".into(), node);
            } else {
                spec.insert("affinity".into(), serde_json::json!({"nodeAffinity": node}));
            }
        }
        (_, None) => {
            if let Some(a) = spec.get_mut("affinity").and_then(Value::as_object_mut) {
                a.remove("nodeAffinity");
            }
        }
    }
}

fn gate_names(spec: &Value) -> Vec<&str> {
    list(spec, "schedulingGates")
        .iter()
        .filter_map(|g| g.get("name").and_then(Value::as_str))
        .collect()
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn object(v: &Value, key: &str) -> Map<String, Value> {
    v.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn without_seconds(t: &Value) -> Value {
    let mut t = clean(t);
    if let Some(o) = t.as_object_mut() {
        o.remove("tolerationSeconds");
    }
    t
}

/// The value without `null` members (JSON's way of saying "absent").
fn clean(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), clean(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(clean).collect()),
        other => other.clone(),
    }
}

fn copy_field(to: &mut Value, from: &Value, key: &str) {
    let Some(spec) = to.as_object_mut() else {
        return;
    };
    match from.get(key) {
        Some(v) => {
            spec.insert(key.into(), v.clone());
        }
        None => {
            spec.remove(key);
        }
    }
}

fn copy_images(to: &mut Value, from: &Value, key: &str) {
    let old = list(from, key).to_vec();
    if let Some(containers) = to.get_mut(key).and_then(Value::as_array_mut) {
        for (new, old) in containers.iter_mut().zip(&old) {
            if let (Some(n), Some(image)) = (new.as_object_mut(), old.get("image")) {
                n.insert("image".into(), image.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GATE: &str = "winplace.io/placement";

    fn gated(extra: Value) -> Value {
        let mut spec = json!({"schedulingGates": [{"name": GATE}, {"name": "other.io/g"}],
            "containers": [{"name": "a", "image": "r.example/a:1"}]});
        for (k, v) in extra.as_object().unwrap() {
            spec[k] = v.clone();
        }
        spec
    }

    fn term(exprs: &[(&str, &str)]) -> Value {
        json!({"matchExpressions": exprs.iter().map(|(k, v)| json!({"key": k, "operator": "In", "values": [v]})).collect::<Vec<_>>()})
    }

    fn required(terms: Vec<Value>) -> Value {
        json!({"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": terms}}})
    }

    fn fields(refusals: &[Refusal]) -> Vec<&str> {
        refusals.iter().map(|r| r.field.as_str()).collect()
    }

    const TERM0: &str = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";

    /// (why, old spec, new spec, refused fields): each row one rule of scheduling-gates.md §2.
    #[test]
    fn the_rules_of_validate_pod_update() {
        let tol =
            json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"});
        let tol2 = json!({"key": "x", "operator": "Exists", "effect": "NoSchedule"});
        let rows: Vec<(&str, Value, Value, Vec<&str>)> = vec![
            (
                "nothing changes",
                gated(json!({})),
                gated(json!({})),
                vec![],
            ),
            (
                "§2.1 removing one gate",
                gated(json!({})),
                gated(json!({"schedulingGates": [{"name": "other.io/g"}]})),
                vec![],
            ),
            (
                "§2.1 removing every gate",
                gated(json!({})),
                gated(json!({"schedulingGates": []})),
                vec![],
            ),
            (
                "§2.1 adding a gate",
                gated(json!({})),
                gated(json!({"schedulingGates": [{"name": GATE}, {"name": "new.io/g"}]})),
                vec!["spec.schedulingGates[1].name"],
            ),
            (
                "§2.1 renaming is adding",
                gated(json!({})),
                gated(json!({"schedulingGates": [{"name": "x.io/y"}, {"name": "other.io/g"}]})),
                vec!["spec.schedulingGates[0].name"],
            ),
            (
                "§2.2 adding a toleration",
                gated(json!({"tolerations": [tol2]})),
                gated(json!({"tolerations": [tol2, tol]})),
                vec![],
            ),
            (
                "§2.2 reordering tolerations",
                gated(json!({"tolerations": [tol2, tol]})),
                gated(json!({"tolerations": [tol, tol2]})),
                vec![],
            ),
            (
                "§2.2 replacing the list (what a strategic merge patch does)",
                gated(json!({"tolerations": [tol2]})),
                gated(json!({"tolerations": [tol]})),
                vec!["spec.tolerations"],
            ),
            (
                "§2.2 tolerationSeconds may change",
                gated(
                    json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]}),
                ),
                gated(
                    json!({"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 9}]}),
                ),
                vec![],
            ),
            (
                "§2.4 adding nodeSelector entries while gated",
                gated(json!({"nodeSelector": {"a": "1"}})),
                gated(json!({"nodeSelector": {"a": "1", "kubernetes.io/os": "windows"}})),
                vec![],
            ),
            (
                "§2.4 setting nodeSelector while gated",
                gated(json!({})),
                gated(json!({"nodeSelector": {"kubernetes.io/os": "windows"}})),
                vec![],
            ),
            (
                "§2.4 changing an entry",
                gated(json!({"nodeSelector": {"kubernetes.io/os": "linux"}})),
                gated(json!({"nodeSelector": {"kubernetes.io/os": "windows"}})),
                vec!["spec.nodeSelector"],
            ),
            (
                "§2.4 removing an entry",
                gated(json!({"nodeSelector": {"a": "1", "b": "2"}})),
                gated(json!({"nodeSelector": {"a": "1"}})),
                vec!["spec.nodeSelector"],
            ),
            (
                "§2.3 nodeSelector of a pod no longer gated",
                json!({"containers": []}),
                json!({"containers": [], "nodeSelector": {"kubernetes.io/os": "windows"}}),
                vec!["spec"],
            ),
            (
                "§2.5 setting required affinity where there was none",
                gated(json!({})),
                gated(json!({"affinity": required(vec![term(&[("b", "1")])])})),
                vec![],
            ),
            (
                "§2.5 appending to every term",
                gated(
                    json!({"affinity": required(vec![term(&[("a", "1")]), term(&[("c", "1")])])}),
                ),
                gated(
                    json!({"affinity": required(vec![term(&[("a", "1"), ("b", "1")]), term(&[("c", "1"), ("b", "1")])])}),
                ),
                vec![],
            ),
            (
                "§2.5 inserting before an existing expression",
                gated(json!({"affinity": required(vec![term(&[("a", "1")])])})),
                gated(json!({"affinity": required(vec![term(&[("b", "1"), ("a", "1")])])})),
                vec![TERM0],
            ),
            (
                "§2.5 adding a term",
                gated(json!({"affinity": required(vec![term(&[("a", "1")])])})),
                gated(
                    json!({"affinity": required(vec![term(&[("a", "1")]), term(&[("b", "1")])])}),
                ),
                vec![TERMS_PATH],
            ),
            (
                "§2.5 an empty term stays empty",
                gated(json!({"affinity": required(vec![json!({})])})),
                gated(json!({"affinity": required(vec![term(&[("b", "1")])])})),
                vec![TERM0],
            ),
            (
                "§2.6 preferred terms may change while gated",
                gated(json!({})),
                gated(
                    json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term(&[("a", "1")])}]}}}),
                ),
                vec![],
            ),
            (
                "§2.7 podAffinity never changes",
                gated(json!({})),
                gated(
                    json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}}}),
                ),
                vec!["spec"],
            ),
            (
                "§2.7 nor does runtimeClassName",
                gated(json!({})),
                gated(json!({"runtimeClassName": "windows-2022"})),
                vec!["spec"],
            ),
            (
                "§2 but images may",
                gated(json!({})),
                gated(json!({"containers": [{"name": "a", "image": "r.example/a:2"}]})),
                vec![],
            ),
        ];
        for (why, old, new, want) in rows {
            let got = update_refusals(&old, &new);
            assert_eq!(fields(&got), want, "{why}: {got:?}");
        }
    }
}
