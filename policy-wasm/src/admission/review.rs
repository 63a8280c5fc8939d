//! The answer to one request: evaluate its object (and on `UPDATE` the old one), then accept, reject, or
//! hand over to [`mutation`](super::mutation) when the settings say to repair.

use std::collections::{BTreeMap, BTreeSet};

use winplace_rules::Checker;
use winplace_rules::finding::{Finding, Severity};
use winplace_rules::model::ClusterContext;
use winplace_rules::model::{WorkloadKind, pod_spec_changed};
use winplace_rules::placement::gate::{
    PLACEMENT_GATE, add_gate, deferring, pod_needs_gate, template_needs_gate,
};
use winplace_rules::settings::Settings;
use winplace_rules::windows::ImageClass;

use super::decision::{Decision, Verdict, decide, finding_line};
use super::mutation::mutate;
use super::scope::{namespace_of, object_namespace, with_namespace};
use super::{AdmissionRequest, is_evaluated, is_exempt, malformed};

/// Reviews one request: skips what is not evaluated ([`is_evaluated`], [`is_exempt`]), evaluates the object
/// with `context` (`None`: the settings stand in for the cluster) and `manifests`, then accepts, mutates
/// (settings `mutate`) or rejects. See the module documentation of [`admission`](super) for the decisions.
///
/// The request is taken, not borrowed: its objects are evaluated as they are, without a copy (this runs
/// on every admission request).
pub fn review(
    request: AdmissionRequest,
    settings: &Settings,
    context: Option<&ClusterContext>,
    manifests: &BTreeMap<String, ImageClass>,
) -> Decision {
    let checker = Checker::builder()
        .settings(settings)
        .cluster(context)
        .image_manifests(manifests)
        .build();
    review_checked(request, &checker)
}

/// [`review`] with a checker built beforehand (its settings, cluster and manifests): the cluster's nodes
/// are indexed once per request, when the caller already built one to decide what to ask the host for.
pub fn review_checked(mut request: AdmissionRequest, checker: &Checker<'_>) -> Decision {
    let settings = checker.settings();
    if !is_evaluated(&request) || is_exempt(&request, settings) {
        return Decision::accept();
    }
    if let Some(problem) = malformed(&request) {
        return Decision {
            verdict: Verdict::Reject(format!("winplace cannot check this request: {problem}")),
            warnings: Vec::new(),
        };
    }
    // A Node is the kubelet registering or updating itself: rejecting it would keep a node out of the
    // cluster over a label. Node findings are warnings, and a Node is never rewritten.
    let is_node = request.kind.kind == "Node";
    let is_update = request.operation == "UPDATE";
    // An UPDATE that leaves the pod spec (or template) as it was introduces no finding: accepted
    // untouched, whatever the object already had (a label, a finalizer, a scale of an old ReplicaSet).
    let api_version = match request.kind.group.as_str() {
        "" => request.kind.version.clone(),
        group => format!("{group}/{}", request.kind.version),
    };
    let is_workload = WorkloadKind::of(&api_version, &request.kind.kind).is_some();
    if is_update
        && is_workload
        && request.old_object.is_object()
        && !pod_spec_changed(&request.old_object, &request.object)
    {
        return Decision::accept();
    }
    let namespace = namespace_of(&request);
    // Setting `placementGate`: a Pod CREATE whose images leave its placement open is gated for the
    // controller, which pins it from the images' manifests; its placement findings are the controller's.
    const NO_MANIFESTS: &BTreeMap<String, ImageClass> = &BTreeMap::new();
    let manifests = checker.image_manifests().unwrap_or(NO_MANIFESTS);
    let gated = (request.operation == "CREATE"
        && request.kind.kind == "Pod"
        && pod_needs_gate(
            &request.object,
            &namespace,
            settings,
            checker.cluster(),
            manifests,
        ))
    .then(|| request.object.clone());
    // A workload whose pods will be gated when created is judged as they will be.
    let template_gated = gated.is_none()
        && is_workload
        && template_needs_gate(
            &request.object,
            &namespace,
            settings,
            checker.cluster(),
            manifests,
        );
    // A gated pod is checked without the rules the controller answers (a checker of its own: gated
    // requests only).
    let deferring_settings = (gated.is_some() || template_gated).then(|| deferring(settings));
    let deferring_checker = deferring_settings
        .as_ref()
        .map(|settings| checker.with_settings(settings));
    let checker = deferring_checker.as_ref().unwrap_or(checker);
    let settings = checker.settings();
    let written_namespace = object_namespace(&request.object).cloned();
    let object = with_namespace(std::mem::take(&mut request.object), &namespace);
    // The object is kept only where it may be repaired below.
    let (findings, kept) = if settings.mutate && !is_node {
        (checker.check_value(object.clone()), Some(object))
    } else {
        (checker.check_value(object), None)
    };
    // The rules the object already broke before this UPDATE: reported, not enforced, not repaired (a
    // rule, wherever it fires: the exported policies judge the same way).
    let before: BTreeSet<String> = if is_update && request.old_object.is_object() {
        let old = with_namespace(std::mem::take(&mut request.old_object), &namespace);
        checker
            .check_value(old)
            .into_iter()
            .map(|f| f.rule)
            .collect()
    } else {
        BTreeSet::new()
    };
    let is_new = |f: &Finding| !before.contains(&f.rule);

    if is_node {
        return Decision {
            verdict: Verdict::Accept,
            warnings: findings
                .iter()
                .filter(|f| f.severity != Severity::Info)
                .map(finding_line)
                .collect(),
        };
    }
    // A Pod's spec is immutable but for a few fields, and a Job's template after creation: an UPDATE of
    // either is never mutated; another UPDATE only for the rules it breaks anew.
    let may_mutate = !(is_update && matches!(request.kind.kind.as_str(), "Pod" | "Job"))
        && findings.iter().any(|f| f.fix.is_some() && is_new(f));
    let without_old = (!before.is_empty()).then(|| {
        let mut s = settings.clone();
        s.disabled_rules.extend(before.iter().cloned());
        s
    });
    let repairer = without_old.as_ref().map(|s| checker.with_settings(s));
    let decision = match kept.filter(|_| may_mutate) {
        Some(object) => mutate(
            repairer.as_ref().unwrap_or(checker),
            checker,
            &object,
            &is_new,
            written_namespace.as_ref(),
        ),
        None => None,
    }
    .unwrap_or_else(|| decide(&findings, &is_new, false));
    match gated {
        Some(original) => with_gate(decision, original),
        None => decision,
    }
}

/// The decision with the placement gate added to the Pod it accepts (a rejection stays one).
fn with_gate(mut decision: Decision, original: serde_json::Value) -> Decision {
    let mut object = match decision.verdict {
        Verdict::Reject(_) => return decision,
        Verdict::Accept => original,
        Verdict::Mutate(object) => object,
    };
    add_gate(&mut object);
    decision.warnings.push(format!(
        "[placement-gate] spec.schedulingGates: the images leave the pod's OS or Windows build open; \
         winplace added the scheduling gate {PLACEMENT_GATE} (unless the policy is not mutating): \
         `winplace serve --place` pins the pod from its images' manifests and removes the gate"
    ));
    decision.verdict = Verdict::Mutate(object);
    decision
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{cluster, no_manifests, request, settings, verdict};
    use crate::admission::{Decision, Verdict};
    use serde_json::json;

    #[test]
    fn every_kind_is_evaluated() {
        // (fixture, with cluster context, verdict, rule in the message, rule in the warnings).
        // Reference §3.3: the scheduler only honours the kubernetes.io/os selector, so an unpinned Windows
        // template is an error in every workload kind; §5.4 the build label and the kernel build must agree.
        let rows = [
            (
                "pod-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "windows-pod-without-build-selector",
            ),
            (
                "deployment-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "windows-pod-without-build-selector",
            ),
            (
                "replicaset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "statefulset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "daemonset-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "job-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            (
                "cronjob-windows-unpinned",
                false,
                'R',
                "spec.jobTemplate.spec.template.spec.nodeSelector",
                "",
            ),
            (
                "replicationcontroller-windows-unpinned",
                false,
                'R',
                "windows-pod-without-os-selector",
                "",
            ),
            ("pod-windows-pinned", false, 'A', "", ""),
            ("deployment-windows-pinned", true, 'A', "", ""),
            ("replicaset-windows-pinned", false, 'A', "", ""),
            ("statefulset-windows-pinned", true, 'A', "", ""),
            ("daemonset-windows-pinned", false, 'A', "", ""),
            ("job-windows-pinned", true, 'A', "", ""),
            ("cronjob-windows-pinned", false, 'A', "", ""),
            ("replicationcontroller-windows-pinned", true, 'A', "", ""),
            ("pod-linux", true, 'A', "", "linux-pod-without-os-selector"),
            ("pod-os-conflict", false, 'R', "os-conflict", ""),
            // A Node is warned, never rejected (a kubelet with a wrong label must still join).
            (
                "node-windows-build-label-mismatch",
                false,
                'A',
                "",
                "windows-node-build-label-mismatch",
            ),
            ("node-windows", false, 'A', "", ""),
            (
                "runtimeclass-docker-handler",
                false,
                'A',
                "",
                "runtimeclass-docker-handler",
            ),
            // Cluster context: the real nodes are Linux and Windows Server 2022 only (kubernetes-windows-rules.md §5.3).
            (
                "pod-windows-unpinned",
                true,
                'R',
                "schedulable-on-wrong-os",
                "",
            ),
            (
                "deployment-windows-build-26100",
                true,
                'R',
                "no-schedulable-node",
                "",
            ),
            ("deployment-windows-build-26100", false, 'A', "", ""),
            ("deployment-windows-runtimeclass", true, 'A', "", ""),
        ];
        let ctx = cluster();
        for (name, with_ctx, want, in_message, in_warnings) in rows {
            let r = request(name);
            let c = with_ctx.then_some(&ctx);
            let d = review(r.clone(), &Settings::default(), c, &no_manifests());
            let (got, message) = verdict(&d);
            assert_eq!(got, want, "{name} (context {with_ctx}): {d:?}");
            assert!(message.contains(in_message), "{name}: {message}");
            let warnings = d.warnings.join("\n");
            assert!(warnings.contains(in_warnings), "{name}: {warnings}");
            if want == 'R' {
                // Every error line names rule, path and message.
                assert!(
                    message.contains("] spec") || message.contains("] metadata"),
                    "{message}"
                );
            }
        }
    }

    /// The private-image pod of `test_data/` with its pins taken off: nothing says its OS or build.
    fn unplaced_private_pod() -> AdmissionRequest {
        let mut r = request("pod-windows-private-image");
        let spec = r.object["spec"].as_object_mut().unwrap();
        spec.remove("nodeSelector");
        spec.remove("tolerations");
        r
    }

    #[test]
    fn placement_gate_gates_unplaced_pod_creates_only() {
        let gate = settings(json!({"mutate": true, "placementGate": true}));
        let d = review(unplaced_private_pod(), &gate, None, &no_manifests());
        let Verdict::Mutate(object) = &d.verdict else {
            panic!("{d:?}")
        };
        // Only the gate: no presumed-Linux pin that the registry might contradict.
        let mut expected = unplaced_private_pod().object;
        expected["spec"]["schedulingGates"] = json!([{"name": "winplace.io/placement"}]);
        expected["metadata"]["labels"]["winplace.io/placement"] = json!("gated");
        assert_eq!(object, &expected);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.starts_with("[placement-gate] spec.schedulingGates")),
            "{:?}",
            d.warnings
        );
        // Without the setting, the same pod is repaired as a presumed Linux pod (not gated).
        let d = review(
            unplaced_private_pod(),
            &settings(json!({"mutate": true})),
            None,
            &no_manifests(),
        );
        if let Verdict::Mutate(o) = &d.verdict {
            assert!(o["spec"].get("schedulingGates").is_none(), "{o}");
        }
        // A namespace outside `placementGateNamespaces` is not gated.
        let elsewhere = settings(
            json!({"mutate": true, "placementGate": true, "placementGateNamespaces": ["shop"]}),
        );
        let d = review(unplaced_private_pod(), &elsewhere, None, &no_manifests());
        assert!(
            !matches!(&d.verdict, Verdict::Mutate(o) if o["spec"].get("schedulingGates").is_some()),
            "{d:?}"
        );
        // A pod already pinned by name (Windows Server 2022) is not gated.
        let d = review(
            request("pod-windows-unpinned"),
            &gate,
            None,
            &no_manifests(),
        );
        assert!(
            !matches!(&d.verdict, Verdict::Mutate(o) if o["spec"].get("schedulingGates").is_some()),
            "{d:?}"
        );
        // An UPDATE never adds a gate (kube-apiserver allows only removals, scheduling-gates.md §2.1).
        let mut update = unplaced_private_pod();
        update.operation = "UPDATE".into();
        update.old_object = update.object.clone();
        let d = review(update, &gate, None, &no_manifests());
        assert!(!matches!(&d.verdict, Verdict::Mutate(_)), "{d:?}");
        // A pod the rules reject stays rejected: the gate does not hide an OS contradiction.
        let d = review(request("pod-os-conflict"), &gate, None, &no_manifests());
        assert_eq!(verdict(&d).0, 'R', "{d:?}");
    }

    /// `pod` as admission gates it: the gate appended, the label added, nothing else.
    fn gated(mut pod: serde_json::Value) -> serde_json::Value {
        pod["spec"]["schedulingGates"] = json!([{"name": "winplace.io/placement"}]);
        pod["metadata"]["labels"]["winplace.io/placement"] = json!("gated");
        pod
    }

    #[test]
    fn a_gated_pod_gets_the_gate_and_its_label_and_nothing_a_presumed_os_would_pin() {
        // Every rule that rests on the OS or build the image names presume is the controller's on a pod
        // it gates (DEFERRED_RULES): whatever else the pod says, with or without the cluster's nodes,
        // admission adds the gate and its label and changes nothing the registry may contradict.
        let gate = settings(json!({"mutate": true, "placementGate": true}));
        let windows_toleration =
            json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
        let shaped = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut r = unplaced_private_pod();
            edit(&mut r.object["spec"]);
            r
        };
        let ctx = cluster();
        let cases = [
            ("bare", shaped(&|_| {})),
            // A private Windows image whose pod already tolerates the Windows taint: a presumed-Linux
            // pod that tolerates it would be pinned to Linux.
            (
                "windows toleration",
                shaped(&|spec| spec["tolerations"] = windows_toleration.clone()),
            ),
            (
                "windows build affinity, no OS",
                shaped(&|spec| {
                    spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/windows-build",
                            "operator": "In", "values": ["10.0.20348"]}]}]}}})
                }),
            ),
            // A Windows image whose name leaves the build open, with and without the toleration.
            (
                "servercore:latest",
                shaped(&|spec| {
                    spec["containers"][0]["image"] =
                        json!("mcr.microsoft.com/windows/servercore:latest")
                }),
            ),
            (
                "servercore:latest, tolerating",
                shaped(&|spec| {
                    spec["containers"][0]["image"] =
                        json!("mcr.microsoft.com/windows/servercore:latest");
                    spec["tolerations"] = windows_toleration.clone();
                }),
            ),
        ];
        for (case, request) in cases {
            for context in [None, Some(&ctx)] {
                let d = review(request.clone(), &gate, context, &no_manifests());
                let Verdict::Mutate(object) = &d.verdict else {
                    panic!("{case} (context {}): {d:?}", context.is_some())
                };
                assert_eq!(
                    object,
                    &gated(request.object.clone()),
                    "{case} (context {}): {:?}",
                    context.is_some(),
                    d.warnings
                );
                for rule in winplace_rules::placement::gate::DEFERRED_RULES {
                    assert!(
                        !d.warnings
                            .iter()
                            .any(|w| w.starts_with(&format!("[{rule}]"))),
                        "{case}: {:?}",
                        d.warnings
                    );
                }
            }
        }
    }

    #[test]
    fn nodes_are_warned_never_rejected_nor_mutated() {
        let r = request("node-windows-build-label-mismatch");
        for json in [json!({}), json!({"mutate": true})] {
            let d = review(r.clone(), &settings(json), None, &no_manifests());
            assert_eq!(d.verdict, Verdict::Accept, "{d:?}");
            assert!(
                d.warnings
                    .iter()
                    .any(|w| w.starts_with("[windows-node-build-label-mismatch] metadata.labels")),
                "{:?}",
                d.warnings
            );
        }
        // The same finding is an error for the audit and `check`: only admission softens it.
        let findings = Checker::builder().build().check_value(r.object.clone());
        assert!(
            findings
                .iter()
                .any(|f| f.rule == "windows-node-build-label-mismatch"
                    && f.severity == Severity::Error),
            "{findings:?}"
        );
    }

    #[test]
    fn settings_exempt_disable_and_override() {
        // (fixture, settings, verdict, text in message or warnings).
        let rows = [
            (
                "pod-windows-unpinned",
                json!({"exemptNamespaces": ["default"]}),
                'A',
                "",
            ),
            // The namespace comes from the request when the object has none (kubectl apply -n shop).
            (
                "pod-windows-unpinned-no-namespace",
                json!({"exemptNamespaces": ["shop"]}),
                'A',
                "",
            ),
            (
                "pod-windows-unpinned-no-namespace",
                json!({"exemptNamespaces": ["default"]}),
                'R',
                "Pod/shop/win-pod",
            ),
            (
                "pod-windows-unpinned",
                json!({"disabledRules": ["windows-pod-without-os-selector"]}),
                'A',
                "windows-pod-without-build-selector",
            ),
            (
                "pod-windows-unpinned",
                json!({"severity": {"windows-pod-without-os-selector": "warning"}}),
                'A',
                "[windows-pod-without-os-selector]",
            ),
            // Pinned to exactly 2022: accepted; that the pin is too narrow for an in-place upgrade (issue
            // 25) is information by default, a warning where the settings raise it, nothing where they
            // want exact pins.
            (
                "pod-windows-pinned",
                json!({"severity": {"windows-pod-without-build-selector": "error"}}),
                'A',
                "",
            ),
            (
                "pod-windows-pinned",
                json!({"severity": {"windows-build-pin-too-narrow": "warning"}}),
                'A',
                "[windows-build-pin-too-narrow]",
            ),
            (
                "pod-windows-pinned",
                json!({"buildPinning": "exact"}),
                'A',
                "",
            ),
            (
                "pod-linux",
                json!({"severity": {"linux-pod-without-os-selector": "error"}}),
                'R',
                "linux-pod-without-os-selector",
            ),
            (
                "pod-linux",
                json!({"severity": {"linux-pod-without-os-selector": "info"}}),
                'A',
                "",
            ),
        ];
        for (name, json, want, text) in rows {
            let s = settings(json.clone());
            let d = review(request(name), &s, None, &no_manifests());
            let (got, message) = verdict(&d);
            assert_eq!(got, want, "{name} {json}: {d:?}");
            let all = format!("{message}\n{}", d.warnings.join("\n"));
            assert!(all.contains(text), "{name} {json}: {all}");
            if want == 'A' && text.is_empty() {
                assert!(d.warnings.is_empty(), "{name} {json}: {:?}", d.warnings);
            }
        }
    }

    #[test]
    fn updates_enforce_only_what_they_introduce() {
        // The pod template's spec did not change (labels only): accepted untouched, nothing judged.
        let d = review(
            request("deployment-update-preexisting"),
            &Settings::default(),
            None,
            &no_manifests(),
        );
        assert_eq!(d, Decision::accept());
        // It changed (an image bump), and the finding was there before: a warning, not a rejection.
        let mut bump = request("deployment-update-preexisting");
        bump.object["spec"]["template"]["spec"]["containers"][0]["image"] =
            json!("mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022-amd64");
        let d = review(bump, &Settings::default(), None, &no_manifests());
        assert_eq!(d.verdict, Verdict::Accept);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.starts_with("[windows-pod-without-os-selector]")
                    && w.ends_with("(already present before this update)")),
            "{:?}",
            d.warnings
        );
        let d = review(
            request("deployment-update-unpins"),
            &Settings::default(),
            None,
            &no_manifests(),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("windows-pod-without-os-selector")),
            "{d:?}"
        );
    }

    #[test]
    fn runtime_classes_come_from_the_cluster() {
        let r = request("deployment-windows-runtimeclass");
        let mut empty = cluster();
        empty.runtime_classes.clear();
        let d = review(
            r.clone(),
            &Settings::default(),
            Some(&empty),
            &no_manifests(),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("runtimeclass-not-found")),
            "{d:?}"
        );
        // Without context the class is unchecked (info): accepted, no warning.
        let d = review(r.clone(), &Settings::default(), None, &no_manifests());
        assert_eq!(d, Decision::accept());
    }
}
