//! Range pins: the Windows builds that run a pod's images, required as one node-affinity expression.
//!
//! A pin to the one build an image tag names (`nodeSelector node.kubernetes.io/windows-build: 10.0.20348`)
//! strands the pod when its pool is upgraded in place to a newer build that would still run the image
//! (platforms.md §7.5): the nodes keep their names and pool but take the new build label. A range pin
//! admits every build of `supportedBuilds` and of the cluster whose hosts run the images
//! (kubernetes-windows-rules.md §5.3), as required node affinity
//! `node.kubernetes.io/windows-build In [...]`, so the pod follows its pool to the new build.
//!
//! The scheduler ORs the terms of required node affinity and ANDs the expressions inside a term
//! (kubernetes-windows-rules.md §3.4), so the expression is added to **every** term: added to one term
//! only, the others would still admit any build. A term with no expression and no field selector
//! matches nothing and is left alone (an expression would make it match).
//!
//! ```
//! use winplace_rules::{input, model, placement, Settings};
//! use winplace_rules::placement::build_range::range_builds;
//! let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, image: mcr.microsoft.com/windows/servercore:ltsc2022}\n";
//! let parsed = input::parse("p.yaml", text, &input::Limits::default());
//! let objects = model::objects(&parsed.documents);
//! let template = model::pod_template(&objects[0]).unwrap().unwrap();
//! let p = placement::resolve(&template, None, &Settings::default());
//! // Windows Server 2022 and 2025 hosts both run an ltsc2022 image.
//! assert_eq!(range_builds(&p, None, &Settings::default()), Some(vec![20348, 26100]));
//! ```

use serde_json::{Value, json};

use super::{BUILD_LABEL, Placement};
use crate::model::ClusterContext;
use crate::path::FieldPath;
use crate::settings::Settings;
use crate::windows::builds::WindowsVersion;

/// The builds a range pin admits: every build of `supportedBuilds` and of the context's Windows nodes
/// whose hosts run every Windows image of the pod, ascending.
///
/// `None` when no image build is known (nothing says which builds run it), or when no supported build is
/// among them (the pod needs a new image, not a pin: `windows-version-unsupported`).
pub fn range_builds(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Option<Vec<u32>> {
    let hosts = p.image_hosts.as_ref()?;
    let supported = settings.supported_build_numbers();
    let mut builds = supported.clone();
    if let Some(ctx) = context {
        builds.extend(
            ctx.windows_builds()
                .iter()
                .filter_map(|b| WindowsVersion::parse(b))
                .map(|v| v.build),
        );
    }
    builds.sort_unstable();
    builds.dedup();
    builds.retain(|b| hosts.contains(b));
    builds
        .iter()
        .any(|b| supported.contains(b))
        .then_some(builds)
}

/// The build labels of `builds` (`10.0.20348`).
pub fn labels(builds: &[u32]) -> Vec<String> {
    builds
        .iter()
        .map(|&b| WindowsVersion::new(b).label())
        .collect()
}

/// The required node-affinity expression `node.kubernetes.io/windows-build In [labels]`.
pub fn expression(builds: &[u32]) -> Value {
    json!({"key": BUILD_LABEL, "operator": "In", "values": labels(builds)})
}

/// How messages name a range pin: `required node affinity node.kubernetes.io/windows-build In
/// [10.0.20348, 10.0.26100]`.
pub fn phrase(builds: &[u32]) -> String {
    format!(
        "required node affinity {BUILD_LABEL} In [{}]",
        labels(builds).join(", ")
    )
}

/// Path of a pod spec's required node affinity.
pub fn required_affinity_path(prefix: &FieldPath) -> FieldPath {
    prefix
        .field("affinity")
        .field("nodeAffinity")
        .field("requiredDuringSchedulingIgnoredDuringExecution")
}

fn is_empty_term(term: &Value) -> bool {
    let empty = |key: &str| {
        term.get(key)
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    };
    empty("matchExpressions") && empty("matchFields")
}

/// What to do with an existing `In` expression on the build label.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// Leave it: the new expression is ANDed beside it (narrowing only).
    And,
    /// Replace its values with the range: the expression is the exact pin being widened.
    Widen,
}

/// The ops that add `exprs` to the pod's required node affinity: ANDed into every term that matches
/// something; the whole `affinity`, `nodeAffinity` or required selector created where the spec has
/// none. With [`Existing::Widen`], `In` expressions on the build label take the first expression's values instead, and
/// any other operator on the label gives `None` (widening it is not a rewrite winplace can prove right).
/// `None` also when no term matches anything (the pod fits no node whatever its build).
fn required_ops(
    p: &Placement,
    raw: &Value,
    exprs: &[Value],
    existing: Existing,
) -> Option<Vec<Value>> {
    let expr = exprs.first()?;
    let prefix = &p.prefix;
    let affinity = raw.get("affinity").filter(|a| a.is_object());
    let node_affinity = affinity
        .and_then(|a| a.get("nodeAffinity"))
        .filter(|a| a.is_object());
    let required = node_affinity
        .and_then(|a| a.get("requiredDuringSchedulingIgnoredDuringExecution"))
        .filter(|r| r.is_object());
    let terms_value = required.and_then(|r| r.get("nodeSelectorTerms"));
    let selector = json!({"nodeSelectorTerms": [{"matchExpressions": exprs}]});
    let Some(terms_value) = terms_value.filter(|t| !t.is_null()) else {
        let op = match (affinity, node_affinity, required) {
            (None, ..) => json!({"op": "add", "path": prefix.field("affinity").to_json_pointer(),
                "value": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}}),
            (Some(_), None, _) => json!({"op": "add",
                "path": prefix.field("affinity").field("nodeAffinity").to_json_pointer(),
                "value": {"requiredDuringSchedulingIgnoredDuringExecution": selector}}),
            (Some(_), Some(_), _) => json!({"op": "add",
                "path": required_affinity_path(prefix).to_json_pointer(), "value": selector}),
        };
        return Some(vec![op]);
    };
    let terms = terms_value.as_array()?;
    let terms_path = required_affinity_path(prefix).field("nodeSelectorTerms");
    let mut ops = Vec::new();
    let mut any = false;
    for (i, term) in terms.iter().enumerate() {
        if is_empty_term(term) {
            continue;
        }
        any = true;
        let exprs_path = terms_path.index(i).field("matchExpressions");
        let exprs_now = term.get("matchExpressions").and_then(Value::as_array);
        let mut widened = false;
        if existing == Existing::Widen {
            for (j, e) in exprs_now.into_iter().flatten().enumerate() {
                if e.get("key").and_then(Value::as_str) != Some(BUILD_LABEL) {
                    continue;
                }
                if e.get("operator").and_then(Value::as_str) != Some("In") {
                    return None;
                }
                ops.push(json!({"op": "replace",
                    "path": exprs_path.index(j).field("values").to_json_pointer(),
                    "value": expr["values"]}));
                widened = true;
            }
        }
        if widened {
            continue;
        }
        match exprs_now {
            Some(_) => ops.extend(exprs.iter().map(|e| {
                json!({"op": "add", "path": format!("{}/-", exprs_path.to_json_pointer()), "value": e})
            })),
            None => ops.push(
                json!({"op": "add", "path": exprs_path.to_json_pointer(), "value": exprs}),
            ),
        }
    }
    any.then_some(ops)
}

/// The ops that pin `builds` on a pod that pins none: `node.kubernetes.io/windows-build In [builds]`
/// ANDed into the required node affinity (see the module documentation). `None` when the affinity
/// matches no node at all.
pub fn pin_ops(p: &Placement, raw: &Value, builds: &[u32]) -> Option<Vec<Value>> {
    required_ops(p, raw, &[expression(builds)], Existing::And)
}

/// The ops that AND one expression per list of `groups` (`node.kubernetes.io/windows-build In
/// [builds]` each) into the required node affinity, as [`pin_ops`] does with one: what pins a pod whose
/// images no single build runs ([`super::unrunnable`]). `None` when `groups` is empty or the affinity
/// matches no node at all.
pub fn pin_all_ops(p: &Placement, raw: &Value, groups: &[Vec<u32>]) -> Option<Vec<Value>> {
    let exprs: Vec<Value> = groups.iter().map(|b| expression(b)).collect();
    required_ops(p, raw, &exprs, Existing::And)
}

/// The ops that turn a pod's exact build pin into the range `builds`: the pod's nodeSelector entry on
/// the build label is removed (the whole nodeSelector when it was the only entry) and the range is
/// required instead, replacing the values of `In` expressions on the label. `None` when the pin is made
/// some other way (`NotIn`, `Gt`, …) or the affinity matches no node.
pub fn widen_ops(p: &Placement, raw: &Value, builds: &[u32]) -> Option<Vec<Value>> {
    let mut ops = Vec::new();
    if let Some(selector) = raw.get("nodeSelector").and_then(Value::as_object)
        && selector.contains_key(BUILD_LABEL)
    {
        let path = if selector.len() == 1 {
            p.prefix.field("nodeSelector")
        } else {
            p.prefix.field("nodeSelector").key(BUILD_LABEL)
        };
        ops.push(json!({"op": "remove", "path": path.to_json_pointer()}));
    }
    ops.extend(required_ops(
        p,
        raw,
        &[expression(builds)],
        Existing::Widen,
    )?);
    Some(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Fix;
    use crate::fix::apply_fixes;
    use crate::placement::{build_pin, os_allowed};
    use crate::rules::test_kit;
    use crate::windows::Os;
    use k8s_openapi::api::core::v1::NodeSelector;

    fn placement(spec: &Value) -> Placement {
        let pod =
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec});
        test_kit::placement(&pod.to_string(), None, &Settings::default())
    }

    fn windows(image: &str) -> Value {
        json!([{"name": "a", "image": format!("mcr.microsoft.com/windows/servercore:{image}")}])
    }

    fn apply(spec: &Value, ops: Vec<Value>) -> Value {
        let pod = json!({"spec": spec});
        let fix = Fix {
            description: String::new(),
            patch: ops.into(),
        };
        let (out, skipped) = apply_fixes(&pod, &[&fix]);
        assert!(skipped.is_empty(), "{skipped:?}");
        out["spec"].clone()
    }

    /// The builds among `candidates` the patched spec admits, by the scheduler's rules (§3.4).
    fn admitted(spec: &Value) -> Vec<String> {
        let selector = spec
            .get("nodeSelector")
            .map(|s| serde_json::from_value(s.clone()).expect("selector"));
        let required: Option<NodeSelector> = spec
            .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
            .map(|r| serde_json::from_value(r.clone()).expect("required"));
        assert!(os_allowed(
            selector.as_ref(),
            required.as_ref(),
            Os::Windows
        ));
        let candidates = labels(&[17763, 20348, 25398, 26100]);
        match build_pin(
            selector.as_ref(),
            required.as_ref(),
            selector.as_ref(),
            &crate::placement::RuntimeClassUse::None,
            &FieldPath::root(),
            &candidates,
        ) {
            Some(pin) => pin.builds,
            None => candidates,
        }
    }

    #[test]
    fn the_range_is_what_runs_the_images_among_supported_and_cluster_builds() {
        let settings = Settings::default();
        let ctx = |builds: &[&str]| {
            let nodes: Vec<Value> = builds
                .iter()
                .enumerate()
                .map(|(i, b)| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}"),
                    "labels": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": b}}}))
                .collect();
            test_kit::context(
                &json!({"apiVersion": "v1", "kind": "List", "items": nodes}).to_string(),
            )
        };
        // (image tag, cluster builds, range)
        type Row = (&'static str, &'static [&'static str], Option<Vec<u32>>);
        let rows: [Row; 6] = [
            ("ltsc2022", &[], Some(vec![20348, 26100])),
            ("ltsc2025", &[], Some(vec![26100])),
            // A 2019 image runs only on 2019 hosts, which are not supported: a new image, not a pin.
            ("ltsc2019", &["10.0.17763"], None),
            // The cluster's Annual Channel hosts (25398) run 2022 images too.
            ("ltsc2022", &["10.0.25398"], Some(vec![20348, 25398, 26100])),
            // A cluster build that does not run the image stays out.
            ("ltsc2022", &["10.0.17763"], Some(vec![20348, 26100])),
            ("ltsc2025", &["10.0.20348"], Some(vec![26100])),
        ];
        for (tag, cluster, want) in rows {
            let p = placement(&json!({"containers": windows(tag)}));
            let c = ctx(cluster);
            let context = (!cluster.is_empty()).then_some(&c);
            assert_eq!(
                range_builds(&p, context, &settings),
                want,
                "{tag} {cluster:?}"
            );
        }
        // No image build known: no range.
        let p = placement(&json!({"nodeSelector": {"kubernetes.io/os": "windows"},
            "containers": [{"name": "a", "image": "contoso.azurecr.io/app:1"}]}));
        assert_eq!(range_builds(&p, None, &settings), None);
    }

    #[test]
    fn the_range_is_anded_into_every_term_and_admits_exactly_its_builds() {
        let os = json!({"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]});
        let zone = json!({"key": "zone", "operator": "In", "values": ["a"]});
        let name = json!({"key": "metadata.name", "operator": "In", "values": ["n1"]});
        // (spec, what the required affinity looks like after)
        let rows = [
            // No affinity at all.
            (
                json!({}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [expression(&[20348, 26100])]}]}),
            ),
            // Affinity with only pod anti-affinity.
            (
                json!({"affinity": {"podAntiAffinity": {}}}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [expression(&[20348, 26100])]}]}),
            ),
            // nodeAffinity with only preferences.
            (
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [expression(&[20348, 26100])]}]}),
            ),
            // Two terms (ORed): the range goes into both; a term of matchFields only gets the list.
            (
                json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [os]}, {"matchFields": [name]}]}}}}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [os, expression(&[20348, 26100])]},
                {"matchFields": [name], "matchExpressions": [expression(&[20348, 26100])]}]}),
            ),
            // An empty term matches nothing (§3.4) and stays empty.
            (
                json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [zone]}, {}]}}}}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [zone, expression(&[20348, 26100])]}, {}]}),
            ),
        ];
        for (spec, want) in rows {
            let mut spec = spec;
            spec["containers"] = windows("ltsc2022");
            spec["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
            let p = placement(&spec);
            let ops = pin_ops(&p, &spec, &[20348, 26100]).expect("ops");
            let after = apply(&spec, ops);
            assert_eq!(
                after["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
                want,
                "{spec}"
            );
            assert_eq!(
                after["nodeSelector"],
                json!({"kubernetes.io/os": "windows"})
            );
            assert_eq!(admitted(&after), ["10.0.20348", "10.0.26100"], "{spec}");
        }
        // Only empty terms: nothing fits whatever the build, and no pin changes that.
        let spec = json!({"containers": windows("ltsc2022"), "nodeSelector": {"kubernetes.io/os": "windows"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}});
        assert_eq!(pin_ops(&placement(&spec), &spec, &[20348]), None);
    }

    #[test]
    fn an_exact_pin_is_widened_where_it_is_written() {
        let one = json!({"key": BUILD_LABEL, "operator": "In", "values": ["10.0.20348"]});
        let os = json!({"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]});
        // (spec, nodeSelector after, required affinity after)
        let rows = [
            (
                json!({"nodeSelector": {"kubernetes.io/os": "windows", BUILD_LABEL: "10.0.20348"}}),
                json!({"kubernetes.io/os": "windows"}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [expression(&[20348, 26100])]}]}),
            ),
            (
                json!({"nodeSelector": {BUILD_LABEL: "10.0.20348"},
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [os]}]}}}}),
                Value::Null,
                json!({"nodeSelectorTerms": [{"matchExpressions": [os, expression(&[20348, 26100])]}]}),
            ),
            (
                json!({"nodeSelector": {"kubernetes.io/os": "windows"},
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [one]}, {"matchExpressions": [os, one]}]}}}}),
                json!({"kubernetes.io/os": "windows"}),
                json!({"nodeSelectorTerms": [{"matchExpressions": [expression(&[20348, 26100])]},
                {"matchExpressions": [os, expression(&[20348, 26100])]}]}),
            ),
        ];
        for (spec, selector, required) in rows {
            let mut spec = spec;
            spec["containers"] = windows("ltsc2022");
            let p = placement(&spec);
            assert_eq!(
                p.build_pin.as_ref().map(|b| b.builds.clone()),
                Some(vec!["10.0.20348".to_string()])
            );
            let after = apply(&spec, widen_ops(&p, &spec, &[20348, 26100]).expect("ops"));
            assert_eq!(
                after.get("nodeSelector").cloned().unwrap_or(Value::Null),
                selector,
                "{spec}"
            );
            assert_eq!(
                after["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
                required,
                "{spec}"
            );
            assert_eq!(admitted(&after), ["10.0.20348", "10.0.26100"], "{spec}");
        }
        // A pin written with another operator is not rewritten.
        let spec = json!({"containers": windows("ltsc2022"), "nodeSelector": {"kubernetes.io/os": "windows"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": BUILD_LABEL, "operator": "NotIn",
                    "values": ["10.0.17763", "10.0.25398", "10.0.26100"]}]}]}}}});
        assert_eq!(widen_ops(&placement(&spec), &spec, &[20348, 26100]), None);
    }
}
