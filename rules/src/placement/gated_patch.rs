//! The JSON patch (RFC 6902) that places a pod gated by `winplace.io/placement` and removes that gate,
//! changing only what kube-apiserver lets an update change on a gated pod
//! (docs/reference/scheduling-gates.md §2, §4.7, summary §6):
//!
//! * guards first: `test` of `metadata.uid`, of `metadata.resourceVersion` (when the pod read has one)
//!   and of the gate's name at its index, so that the patch fails whole (422) if the pod was replaced or
//!   changed since it was read: the pins are computed from that copy, and the controller reads the pod
//!   again and computes them anew rather than overwrite what someone else added meanwhile;
//! * `remove` of winplace's gate only; other gates stay;
//! * the pins the placement rules' fixes would add ([`super::fix_plan`]): the OS nodeSelector entry (added,
//!   never changed), the build pin (`buildPinning`: a range as required node affinity appended to every
//!   term, [`super::build_range::pin_ops`], or the exact nodeSelector entry), tolerations of the Windows
//!   taints appended at the end of the list (never a rewritten list: a strategic merge patch would
//!   replace it, §4.3). `runtimeClassName` is immutable, so settings `runtimeClasses` are not used here;
//! * for images no node runs (builds no node has, or no single build for all of them): the builds that
//!   run them anyway, and a warning saying what to add or rebuild ([`super::unrunnable`]).
//!
//! The result is checked with [`crate::schedule::pod_update::update_refusals`]: a patch kube-apiserver
//! would refuse is never returned; the pod is released with its gate removed only.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::fix_plan::{self, BuildPinPlan};
use super::gate::{PLACEMENT_GATE, PLACEMENT_LABEL, gate_index, pod_placement};
use super::{BUILD_LABEL, OS_LABEL, OsPin, PodOs, build_range, unrunnable};
use crate::model::ClusterContext;
use crate::schedule::pod_update::update_refusals;
use crate::schedule::taints::taint_display;
use crate::settings::Settings;
use crate::windows::ImageClass;
use crate::windows::builds::WindowsVersion;

/// A patch for a gated pod and what it does.
#[derive(Debug, Clone, PartialEq)]
pub struct GatedPatch {
    /// The JSON patch operations.
    pub ops: Vec<Value>,
    /// What it pins, one phrase each (`nodeSelector kubernetes.io/os: windows`); empty when it only
    /// removes the gate.
    pub pins: Vec<String>,
    /// Why nothing is pinned, when `pins` is empty.
    pub unpinned_because: Option<String>,
    /// What the pod's owner must add or rebuild, when the pins name builds no node of the context has
    /// (or no single build runs every image): the pod is pinned anyway and stays Pending
    /// ([`super::unrunnable`]).
    pub warning: Option<String>,
}

/// The ops that remove only winplace's gate (guarded by `test`s on the uid and the gate's index), and
/// the [`PLACEMENT_LABEL`] when the pod carries it (a pod gated by an older policy does not: nothing to
/// remove, and a `remove` of a missing member would fail the patch); `None` when the pod does not carry
/// the gate.
///
/// ```
/// use serde_json::json;
/// use winplace_rules::placement::gated_patch::release_ops;
/// let pod = json!({"metadata": {"uid": "u1"}, "spec": {"schedulingGates": [{"name": "a.io/b"}, {"name": "winplace.io/placement"}]}});
/// assert_eq!(release_ops(&pod).unwrap()[2], json!({"op": "remove", "path": "/spec/schedulingGates/1"}));
/// assert!(release_ops(&json!({"spec": {}})).is_none());
/// ```
pub fn release_ops(pod: &Value) -> Option<Vec<Value>> {
    let index = gate_index(pod)?;
    let mut ops = Vec::new();
    if let Some(uid) = pod.pointer("/metadata/uid").and_then(Value::as_str) {
        ops.push(json!({"op": "test", "path": "/metadata/uid", "value": uid}));
    }
    ops.push(json!({"op": "test", "path": format!("/spec/schedulingGates/{index}/name"), "value": PLACEMENT_GATE}));
    ops.push(json!({"op": "remove", "path": format!("/spec/schedulingGates/{index}")}));
    if pod
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|labels| labels.contains_key(PLACEMENT_LABEL))
    {
        // RFC 6901: `/` in a member name is written `~1`.
        let path = format!(
            "/metadata/labels/{}",
            PLACEMENT_LABEL.replace('~', "~0").replace('/', "~1")
        );
        ops.push(json!({"op": "remove", "path": path}));
    }
    Some(ops)
}

/// Whether `fresh` is the pod `read` with `ops` applied (their `test`s aside): the answer to a patch
/// was lost, and the pod read again shows it landed. winplace's gate is gone and the spec and labels
/// are exactly what the patch makes of `read`'s; anything else (the pod changed otherwise too) is not
/// claimed.
///
/// ```
/// use serde_json::json;
/// use winplace_rules::placement::gated_patch::{landed, release_ops};
/// let read = json!({"metadata": {"uid": "u"}, "spec": {"schedulingGates": [{"name": "winplace.io/placement"}]}});
/// let ops = release_ops(&read).unwrap();
/// assert!(landed(&read, &ops, &json!({"metadata": {"uid": "u"}, "spec": {"schedulingGates": []}})));
/// assert!(!landed(&read, &ops, &read));
/// ```
pub fn landed(read: &Value, ops: &[Value], fresh: &Value) -> bool {
    if gate_index(fresh).is_some() {
        return false;
    }
    let changes: Vec<Value> = ops
        .iter()
        .filter(|op| op["op"] != "test")
        .cloned()
        .collect();
    let Ok(patch) = serde_json::from_value::<json_patch::Patch>(Value::Array(changes)) else {
        return false;
    };
    let mut expected = read.clone();
    if json_patch::patch(&mut expected, &patch.0).is_err() {
        return false;
    }
    expected.get("spec") == fresh.get("spec")
        && expected.pointer("/metadata/labels") == fresh.pointer("/metadata/labels")
}

/// The patch that pins a gated pod as its placement says (images classified by `manifests` where
/// given) and removes its gate; `None` when the pod does not carry the gate.
pub fn placement_patch(
    pod: &Value,
    settings: &Settings,
    context: Option<&ClusterContext>,
    manifests: &BTreeMap<String, ImageClass>,
) -> Option<GatedPatch> {
    let release = release_ops(pod)?;
    let released = |why: &str| GatedPatch {
        ops: release.clone(),
        pins: Vec::new(),
        unpinned_because: Some(why.to_string()),
        warning: None,
    };
    let settings = Settings {
        runtime_classes: BTreeMap::new(),
        ..settings.clone()
    };
    let Some(p) = pod_placement(pod, &settings, context, manifests) else {
        return Some(released("its spec does not decode"));
    };
    if p.os == PodOs::Conflict || p.os_pin == OsPin::Nothing {
        // Say which signals: a Windows-bound pod whose image is built for Linux only is the common case.
        let why = match &p.conflict {
            Some(c) => format!(
                "its OS signals contradict each other: {} ({}), but {} ({})",
                c.first.what, c.first.path, c.other.what, c.other.path
            ),
            None => "its OS signals contradict each other".to_string(),
        };
        return Some(released(&why));
    }
    let raw = pod.get("spec").unwrap_or(&Value::Null);
    let mut selectors = fix_plan::plan(&p, context, &settings);
    // Images no node runs: pinned where they run anyway, and said (never only the OS: the scheduler
    // would put the pod on a node where it cannot start).
    let unrunnable = unrunnable::check(&p, context, &settings, selectors.build.as_ref());
    if let Some(pin) = unrunnable.as_ref().and_then(|u| u.pin.clone())
        && selectors.build.is_none()
    {
        if let BuildPinPlan::Exact(build) = &pin {
            selectors
                .entries
                .insert(BUILD_LABEL.to_string(), WindowsVersion::new(*build).label());
        }
        selectors.build = Some(pin);
    }
    let mut ops = release.clone();
    // The pins are computed from this copy of the pod: a patch that adds a whole field (a nodeSelector,
    // the tolerations, the affinity) must not land on a pod someone changed since, so it is guarded by
    // the resourceVersion too (scheduling-gates.md §4.5); a failed guard is a 422 the controller answers
    // by reading the pod again.
    if let Some(rv) = pod
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
    {
        let at = usize::from(ops[0]["path"] == "/metadata/uid");
        ops.insert(
            at,
            json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}),
        );
    }
    let mut pins = Vec::new();
    for (key, value) in &selectors.entries {
        if key == OS_LABEL {
            pins.push(format!("nodeSelector {key}: {value}"));
        }
    }
    ops.extend(fix_plan::selector_ops(&p, raw, &selectors, OS_LABEL));
    if let Some(build) = &selectors.build {
        pins.push(build.phrase());
        let build_ops = fix_plan::build_pin_ops(&p, raw, &selectors);
        if matches!(build, BuildPinPlan::Range(_)) && build_ops.is_empty() {
            pins.pop();
        }
        for op in build_ops {
            if !ops.contains(&op) {
                ops.push(op);
            }
        }
    }
    if let Some(u) = unrunnable.as_ref().filter(|u| !u.apart.is_empty())
        && let Some(apart_ops) = build_range::pin_all_ops(&p, raw, &u.apart)
    {
        let each: Vec<String> = u
            .apart
            .iter()
            .map(|b| format!("In [{}]", build_range::labels(b).join(", ")))
            .collect();
        pins.push(format!(
            "required node affinity {BUILD_LABEL} {}",
            each.join(" and ")
        ));
        ops.extend(apart_ops);
    }
    if p.os == PodOs::Windows {
        let (missing, _) = fix_plan::missing_windows_tolerations(&p, context, &settings);
        if !missing.is_empty() {
            pins.extend(
                missing
                    .iter()
                    .map(|t| format!("toleration {}", taint_display(t))),
            );
            ops.extend(fix_plan::add_tolerations_ops(
                &p,
                raw,
                missing.iter().map(fix_plan::toleration_for).collect(),
            ));
        }
    }
    if pins.is_empty() {
        return Some(released("its placement needs no pin"));
    }
    // Never send what the API server refuses: check the result against ValidatePodUpdate's rules.
    let mut patched = pod.clone();
    let applied = serde_json::from_value::<json_patch::Patch>(Value::Array(ops.clone()))
        .ok()
        .and_then(|patch| json_patch::patch(&mut patched, &patch.0).ok());
    let refused = applied.is_none()
        || !update_refusals(
            pod.get("spec").unwrap_or(&Value::Null),
            patched.get("spec").unwrap_or(&Value::Null),
        )
        .is_empty();
    if refused {
        return Some(released(
            "the pins it needs are not a change Kubernetes allows on this pod (an existing selector or affinity term stands in the way)",
        ));
    }
    Some(GatedPatch {
        ops,
        pins,
        unpinned_because: None,
        warning: unrunnable.and_then(|u| u.warning),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::{ImageOs, ImageSource};
    use k8s_openapi::api::core::v1::Node;

    const IMAGE: &str = "registry.example.com/shop/api:2.3";

    fn class(os: ImageOs) -> ImageClass {
        ImageClass {
            os,
            source: ImageSource::Manifest,
            reason: "its manifest".into(),
        }
    }

    fn windows(builds: &[u32]) -> BTreeMap<String, ImageClass> {
        BTreeMap::from([(
            IMAGE.to_string(),
            class(ImageOs::Windows {
                builds: builds.to_vec(),
            }),
        )])
    }

    fn gated(extra: Value) -> Value {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "shop", "uid": "uid-p"},
            "spec": {"schedulingGates": [{"name": "other.io/first"}, {"name": PLACEMENT_GATE}],
                     "containers": [{"name": "a", "image": IMAGE}]}});
        for (k, v) in extra.as_object().unwrap() {
            pod["spec"][k] = v.clone();
        }
        pod
    }

    fn apply(pod: &Value, ops: &[Value]) -> Value {
        let mut out = pod.clone();
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec())).unwrap();
        json_patch::patch(&mut out, &patch.0).unwrap();
        out
    }

    /// Every patch: accepted by ValidatePodUpdate's rules, other gates kept, winplace's gone.
    fn check(pod: &Value, patch: &GatedPatch) -> Value {
        let out = apply(pod, &patch.ops);
        assert_eq!(
            update_refusals(&pod["spec"], &out["spec"]),
            vec![],
            "{patch:?}"
        );
        assert_eq!(
            out["spec"]["schedulingGates"],
            json!([{"name": "other.io/first"}])
        );
        out
    }

    #[test]
    fn a_2022_image_gets_os_range_and_toleration() {
        let pod = gated(json!({}));
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[20348])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "windows"})
        );
        assert_eq!(
            out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
            json!({"nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.20348", "10.0.26100"]}]}]})
        );
        assert_eq!(
            out["spec"]["tolerations"],
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}])
        );
        assert_eq!(patch.pins.len(), 3, "{:?}", patch.pins);
        // Guards come first: a replaced pod or moved gate fails the whole patch.
        assert_eq!(
            patch.ops[0],
            json!({"op": "test", "path": "/metadata/uid", "value": "uid-p"})
        );
        assert_eq!(
            patch.ops[1],
            json!({"op": "test", "path": "/spec/schedulingGates/1/name", "value": PLACEMENT_GATE})
        );
    }

    #[test]
    fn a_2019_image_is_pinned_to_the_2019_build() {
        let pod = gated(json!({}));
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[17763])).unwrap();
        let out = check(&pod, &patch);
        let values = &out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"];
        // 2019 is not among the default supportedBuilds: with it supported, only 2019 runs the image.
        let supported = Settings {
            supported_builds: vec!["10.0.17763".into(), "10.0.20348".into()],
            ..Settings::default()
        };
        let patch2 = placement_patch(&pod, &supported, None, &windows(&[17763])).unwrap();
        let out2 = check(&pod, &patch2);
        assert_eq!(
            out2["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"],
            json!(["10.0.17763"])
        );
        // Without a supported build that runs it, it is still pinned to the build that runs it (never
        // to the OS alone, where a 2022 node would take it and fail to start it); no context, no
        // warning (nothing says which nodes there are).
        assert_eq!(values, &json!(["10.0.17763"]), "{out}");
        assert_eq!(
            out["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "windows"})
        );
        assert_eq!(patch.warning, None);
    }

    fn cluster(builds: &[&str]) -> ClusterContext {
        let nodes: Vec<Node> = builds
            .iter()
            .enumerate()
            .map(|(i, b)| {
                serde_json::from_value(json!({"metadata": {"name": format!("n{i}"), "labels":
                    {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": b}},
                    "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}}))
                .expect("node")
            })
            .collect();
        ClusterContext {
            nodes,
            runtime_classes: Vec::new(),
        }
    }

    #[test]
    fn images_no_node_runs_are_pinned_where_they_run_and_said() {
        let pod = gated(json!({}));
        let ctx = cluster(&["10.0.20348"]);
        let patch =
            placement_patch(&pod, &Settings::default(), Some(&ctx), &windows(&[17763])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
            json!({"nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.17763"]}]}]})
        );
        assert_eq!(
            patch.warning.as_deref(),
            Some(
                "no node runs 10.0.17763 images: add a Windows Server 2019 pool, or rebuild on ltsc2022"
            )
        );
        // Two images no single build runs: each one's builds, ANDed, so that no node takes the pod.
        let mut two = gated(json!({}));
        two["spec"]["containers"] =
            json!([{"name": "a", "image": IMAGE}, {"name": "b", "image": "r.example/b:1"}]);
        let mut manifests = windows(&[17763]);
        manifests.insert(
            "r.example/b:1".into(),
            class(ImageOs::Windows {
                builds: vec![20348],
            }),
        );
        let patch = placement_patch(&two, &Settings::default(), Some(&ctx), &manifests).unwrap();
        let out = check(&two, &patch);
        let exprs = &out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchExpressions"];
        assert_eq!(exprs.as_array().map(Vec::len), Some(2), "{out}");
        assert_eq!(exprs[0]["values"], json!(["10.0.17763"]));
        assert!(
            patch
                .warning
                .as_deref()
                .is_some_and(|w| w.starts_with("no single Windows build runs all of its images")),
            "{patch:?}"
        );
        // A node runs it: no warning.
        let patch = placement_patch(
            &pod,
            &Settings::default(),
            Some(&cluster(&["10.0.17763"])),
            &windows(&[17763]),
        )
        .unwrap();
        assert_eq!(patch.warning, None);
    }

    #[test]
    fn the_gated_label_goes_with_the_gate_and_its_absence_is_no_error() {
        let mut labelled = gated(json!({}));
        labelled["metadata"]["labels"] = json!({"app": "shop", PLACEMENT_LABEL: "gated"});
        let patch =
            placement_patch(&labelled, &Settings::default(), None, &windows(&[20348])).unwrap();
        let out = check(&labelled, &patch);
        assert_eq!(out["metadata"]["labels"], json!({"app": "shop"}));
        let released = apply(&labelled, &release_ops(&labelled).unwrap());
        assert_eq!(released["metadata"]["labels"], json!({"app": "shop"}));
        // Gated by an older policy: no label, nothing to remove, the patch still applies.
        let unlabelled = gated(json!({}));
        let patch =
            placement_patch(&unlabelled, &Settings::default(), None, &windows(&[20348])).unwrap();
        assert!(
            patch.ops.iter().all(|op| op["path"]
                .as_str()
                .is_some_and(|p| !p.starts_with("/metadata/labels"))),
            "{patch:?}"
        );
        check(&unlabelled, &patch);
    }

    #[test]
    fn a_patch_is_known_landed_only_by_exactly_what_it_makes() {
        let mut pod = gated(json!({}));
        pod["metadata"]["resourceVersion"] = json!("7");
        pod["metadata"]["labels"] = json!({PLACEMENT_LABEL: "gated"});
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[20348])).unwrap();
        // What the API server stores: the patch applied, a new resourceVersion.
        let mut stored = apply(&pod, &patch.ops);
        stored["metadata"]["resourceVersion"] = json!("8");
        assert!(landed(&pod, &patch.ops, &stored));
        // Someone else's change too (a toleration more), the gate still there, or another pod: not ours
        // to claim.
        let mut more = stored.clone();
        more["spec"]["tolerations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"key": "x", "operator": "Exists"}));
        assert!(!landed(&pod, &patch.ops, &more));
        assert!(!landed(&pod, &patch.ops, &pod));
        let released = apply(&pod, &release_ops(&pod).unwrap());
        assert!(!landed(&pod, &patch.ops, &released), "released, not placed");
        assert!(landed(&pod, &release_ops(&pod).unwrap(), &released));
    }

    #[test]
    fn condition_taints_are_never_tolerated_by_a_placement() {
        // A pool that boots (or scales from zero): every Windows node is not ready yet.
        let mut ctx = cluster(&["10.0.20348", "10.0.20348"]);
        for node in &mut ctx.nodes {
            let taints = node.spec.as_mut().and_then(|s| s.taints.as_mut()).unwrap();
            for key in [
                "node.kubernetes.io/not-ready",
                "node.cloudprovider.kubernetes.io/uninitialized",
            ] {
                taints.push(
                    serde_json::from_value(json!({"key": key, "effect": "NoSchedule"})).unwrap(),
                );
            }
        }
        let pod = gated(json!({}));
        let patch =
            placement_patch(&pod, &Settings::default(), Some(&ctx), &windows(&[20348])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["tolerations"],
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
            "{patch:?}"
        );
        // GKE's Windows taint lives under node.kubernetes.io/ and is no condition taint: tolerated.
        let mut gke = cluster(&["10.0.20348"]);
        gke.nodes[0].spec.as_mut().unwrap().taints = Some(vec![
            serde_json::from_value(
                json!({"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"}),
            )
            .unwrap(),
            serde_json::from_value(
                json!({"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}),
            )
            .unwrap(),
        ]);
        let patch =
            placement_patch(&pod, &Settings::default(), Some(&gke), &windows(&[20348])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["tolerations"],
            json!([{"key": "node.kubernetes.io/os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn a_pod_read_at_a_resource_version_is_patched_only_at_it() {
        let mut pod = gated(json!({}));
        pod["metadata"]["resourceVersion"] = json!("41");
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[20348])).unwrap();
        assert_eq!(
            patch.ops[1],
            json!({"op": "test", "path": "/metadata/resourceVersion", "value": "41"})
        );
        check(&pod, &patch);
        // Someone else changed the pod since (appended a toleration): the whole patch fails.
        let mut changed = pod.clone();
        changed["metadata"]["resourceVersion"] = json!("42");
        let patch_ops: json_patch::Patch =
            serde_json::from_value(Value::Array(patch.ops.clone())).unwrap();
        assert!(json_patch::patch(&mut changed, &patch_ops.0).is_err());
        // The release alone removes only the gate and needs no resourceVersion.
        assert_eq!(release_ops(&pod).unwrap().len(), 3);
    }

    #[test]
    fn existing_fields_grow_and_are_never_rewritten() {
        let tol = json!({"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"});
        let pod = gated(json!({
            "nodeSelector": {"team": "shop"},
            "tolerations": [tol],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}}
        }));
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[20348])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["nodeSelector"],
            json!({"team": "shop", "kubernetes.io/os": "windows"})
        );
        assert_eq!(out["spec"]["tolerations"][0], tol);
        assert_eq!(out["spec"]["tolerations"].as_array().unwrap().len(), 2);
        let terms = &out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        for t in 0..2 {
            assert_eq!(terms[t]["matchExpressions"].as_array().unwrap().len(), 2);
            assert_eq!(
                terms[t]["matchExpressions"][1]["key"],
                "node.kubernetes.io/windows-build"
            );
        }
    }

    #[test]
    fn a_linux_image_is_pinned_to_linux_without_toleration() {
        let pod = gated(json!({}));
        let manifests = BTreeMap::from([(IMAGE.to_string(), class(ImageOs::Linux))]);
        let patch = placement_patch(&pod, &Settings::default(), None, &manifests).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "linux"})
        );
        assert!(out["spec"].get("tolerations").is_none());
    }

    #[test]
    fn exact_pinning_adds_the_build_selector_once() {
        let pod = gated(json!({}));
        let exact = Settings {
            build_pinning: crate::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let patch = placement_patch(&pod, &exact, None, &windows(&[20348])).unwrap();
        let out = check(&pod, &patch);
        assert_eq!(
            out["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"})
        );
    }

    #[test]
    fn what_cannot_be_pinned_is_only_released() {
        // An empty term must stay empty (§2.5), and no other term matches anything: the build range
        // cannot be added; OS and toleration still can.
        let pod = gated(
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}}}),
        );
        let patch = placement_patch(&pod, &Settings::default(), None, &windows(&[20348])).unwrap();
        check(&pod, &patch);
        assert!(
            !patch.pins.iter().any(|p| p.contains("windows-build")),
            "{:?}",
            patch.pins
        );
        // The OS is already pinned the other way: the pod is released as it is.
        let linux = gated(
            json!({"nodeSelector": {"kubernetes.io/os": "linux"}, "os": {"name": "windows"}}),
        );
        let patch =
            placement_patch(&linux, &Settings::default(), None, &windows(&[20348])).unwrap();
        assert_eq!(patch.ops.len(), 3, "{patch:?}");
        assert!(patch.unpinned_because.is_some());
        check(&linux, &patch);
        // Unknown build, nothing read: the OS from the name, no build.
        let unread = gated(json!({}));
        let patch = placement_patch(&unread, &Settings::default(), None, &BTreeMap::new()).unwrap();
        check(&unread, &patch);
        // Without the gate: nothing to do.
        let mut free = gated(json!({}));
        free["spec"]["schedulingGates"] = json!([{"name": "other.io/first"}]);
        assert_eq!(
            placement_patch(&free, &Settings::default(), None, &BTreeMap::new()),
            None
        );
    }
}
