//! Linux pods that could land on Windows nodes: `linux-pod-without-os-selector`,
//! `linux-pod-tolerates-windows-taint`.

use super::cluster::name_list;
use super::{Emitter, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::placement::fit;
use crate::placement::fix_plan::{self, SelectorPlan};
use crate::placement::{OS_LABEL, OsPin, Placement, PodOs};
use crate::schedule::taints::{Gates, taint_display, tolerated_by_any, tolerates};
use crate::windows::Os;

/// Runs the Linux-pod rules.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    if p.os != PodOs::Linux || p.os_pin != OsPin::Unconstrained {
        return;
    }
    linux_pod_without_os_selector(cx, out);
    linux_pod_tolerates_windows_taint(cx, out);
}

fn why_linux(p: &Placement) -> String {
    p.signals
        .first()
        .map(|s| s.what.clone())
        .or_else(|| p.presumed.clone())
        .unwrap_or_else(|| "its images".to_string())
}

/// The fix that adds `kubernetes.io/os: linux` (the plan's, so it agrees with the other fixes).
fn linux_selector_fix(cx: &TemplateCx<'_>) -> Fix {
    let p = cx.placement;
    let mut plan = fix_plan::plan(p, cx.context, cx.settings);
    if !plan.entries.contains_key(OS_LABEL) {
        plan = SelectorPlan::default();
        plan.entries
            .insert(OS_LABEL.to_string(), "linux".to_string());
    }
    Fix {
        description: "add nodeSelector kubernetes.io/os: linux".to_string(),
        patch: fix_plan::selector_ops(p, cx.template.raw, &plan, OS_LABEL).into(),
    }
}

/// Whether the pod is Linux only by presumption (nothing names its OS, an image is unrecognized) and the
/// settings do not say to take the presumption for the fix (`presumeLinux`).
fn presumed_only(cx: &TemplateCx<'_>) -> bool {
    cx.placement.presumed.is_some() && !cx.settings.presume_linux
}

/// The Linux OS fix, unless the pod is Linux only by presumption: then no fix (applying it would pin a
/// pod whose unrecognized image may be Windows to Linux).
fn linux_fix(cx: &TemplateCx<'_>) -> Option<Fix> {
    (!presumed_only(cx)).then(|| linux_selector_fix(cx))
}

/// What to do, for a pod that needs Linux, or a question for one presumed to.
fn linux_advice(cx: &TemplateCx<'_>, keep: &str) -> String {
    if presumed_only(cx) {
        format!(
            "Which OS does it need? If its image is a Linux one, {keep}add the nodeSelector kubernetes.io/os: linux (`winplace check --fix --presume-linux` adds it); if it is a Windows one, add kubernetes.io/os: windows and a toleration of the Windows nodes' taint, or name the image in the settings' imageRules."
        )
    } else {
        format!("{keep}add the nodeSelector kubernetes.io/os: linux.")
    }
}

/// `linux-pod-without-os-selector`: only the Windows taint keeps this Linux pod off Windows nodes.
fn linux_pod_without_os_selector(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    if !fix_plan::linux_needs_os_selector(p) {
        return;
    }
    let advice = linux_advice(cx, "");
    let pod = if presumed_only(cx) {
        format!(
            "Nothing names the OS this pod needs ({}), and it has no kubernetes.io/os nodeSelector or required node affinity",
            why_linux(p)
        )
    } else {
        format!(
            "This pod needs Linux ({}) but has no kubernetes.io/os: linux nodeSelector or required node affinity",
            why_linux(p)
        )
    };
    out.emit(
        RuleId::LinuxPodWithoutOsSelector,
        &p.prefix.field("nodeSelector").key(OS_LABEL),
        format!(
            "{pod}, {} (spec.os.name does not keep it off them: the scheduler ignores it). {}{}",
            what_keeps_it_off_windows(cx),
            advice[..1].to_uppercase(),
            &advice[1..]
        ),
        linux_fix(cx),
    );
}

/// What keeps this unpinned Linux pod off Windows nodes, as true as the context allows: without nodes,
/// the Windows nodes' taint (the settings' assumption); with them, what the nodes really say.
fn what_keeps_it_off_windows(cx: &TemplateCx<'_>) -> String {
    let Some(index) = cx.nodes else {
        return "so only the Windows nodes' taint keeps it off them".to_string();
    };
    if !index.has_os(Os::Windows) {
        return "so nothing would keep it off Windows nodes; the cluster has none today"
            .to_string();
    }
    let fit = fit(cx.placement, index);
    let open: Vec<&str> = fit
        .candidate_nodes(index)
        .filter(|n| n.os == Some(Os::Windows))
        .map(|n| n.name.as_str())
        .collect();
    if open.is_empty() {
        "so only the Windows nodes' taints keep it off them".to_string()
    } else {
        format!(
            "and nothing keeps it off the cluster's Windows nodes: it can be scheduled on {}",
            name_list(open.into_iter())
        )
    }
}

/// `linux-pod-tolerates-windows-taint`: a toleration lets this unpinned Linux pod onto Windows nodes. A
/// pod pinned to nodes by name (a DaemonSet's pod, placed by its controller on a node it chose) is not
/// judged without cluster context, which alone says whether such a node is Windows (with it, the
/// placement reads the named nodes, and a Windows one is `schedulable-on-wrong-os`).
fn linux_pod_tolerates_windows_taint(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    if cx.pinned_to_unseen_nodes() {
        return;
    }
    let taints = fix_plan::windows_taints(cx.context, cx.settings);
    let gates = Gates::default();
    let own = cx.template.spec.tolerations.as_deref().unwrap_or(&[]);
    let found = own.iter().enumerate().find_map(|(i, tol)| {
        taints
            .iter()
            .find(|t| tolerates(tol, t, gates))
            .map(|t| (p.prefix.field("tolerations").index(i), t, "This toleration"))
    });
    // A toleration the RuntimeClass adds counts too.
    let found = found.or_else(|| {
        taints
            .iter()
            .find(|t| tolerated_by_any(&p.tolerations, t, gates))
            .map(|t| {
                (
                    p.prefix.field("runtimeClassName"),
                    t,
                    "A toleration of this pod's RuntimeClass",
                )
            })
    });
    let Some((path, taint, who)) = found else {
        return;
    };
    out.emit(
        RuleId::LinuxPodToleratesWindowsTaint,
        &path,
        format!(
            "{who} tolerates the Windows taint {}, and nothing else keeps this Linux pod ({}) off Windows nodes, so it can be placed on one where it cannot run. {}",
            taint_display(taint),
            why_linux(p),
            if presumed_only(cx) {
                linux_advice(cx, "keep the toleration if other taints need it, and ")
            } else {
                "Keep the toleration if other taints need it, and add the nodeSelector kubernetes.io/os: linux.".to_string()
            }
        ),
        linux_fix(cx),
    );
}

#[cfg(test)]
mod tests {
    use crate::rules::test_kit::{
        Case, apply, context, findings, objects, pod, rule_path, sorted_rule_paths,
    };
    use crate::settings::Settings;
    use crate::test_kit::node;
    use serde_json::json;

    const RULES: &[&str] = &[
        "linux-pod-without-os-selector",
        "linux-pod-tolerates-windows-taint",
    ];
    const APP: &str = "  containers: [{name: c, image: ghcr.io/example/shop-api:2.3.1}]\n";

    #[test]
    fn with_context_the_message_says_what_really_keeps_the_pod_off_windows() {
        // Nodes that say their OS (label and nodeInfo), as a kubelet does.
        let os_node = |name: &str, os: &str| node(name).os(os).info("operatingSystem", os);
        let tainted = os_node("w1", "windows").windows_taint().yaml();
        let untainted = os_node("w2", "windows").taints(json!([])).yaml();
        let linux = os_node("l1", "linux").taints(json!([])).yaml();
        // (nodes, what the message says).
        let rows = [
            (None, "so only the Windows nodes' taint keeps it off them"),
            (
                Some(format!("{tainted}---\n{linux}")),
                "so only the Windows nodes' taints keep it off them",
            ),
            (
                Some(format!("{tainted}---\n{untainted}---\n{linux}")),
                "and nothing keeps it off the cluster's Windows nodes: it can be scheduled on 1 node (w2)",
            ),
            (
                Some(linux.clone()),
                "so nothing would keep it off Windows nodes; the cluster has none today",
            ),
        ];
        for (nodes, says) in rows {
            let ctx = nodes.as_deref().map(context);
            let found = findings(&pod(APP), ctx.as_ref(), &Settings::default(), &[RULES[0]]);
            assert_eq!(found.len(), 1, "{nodes:?}: {found:?}");
            assert!(found[0].message.contains(says), "{}", found[0].message);
        }
    }

    /// A DaemonSet's pod, pinned by its controller to one node by `matchFields metadata.name`, with a
    /// tolerate-all toleration (a log or CNI agent): whether that node is Windows is the cluster's to
    /// say, so it is judged only with cluster context (a Windows node: `schedulable-on-wrong-os`).
    #[test]
    fn a_pod_pinned_to_a_node_by_name_is_judged_only_with_the_cluster() {
        let os_node = |name: &str, os: &str| node(name).os(os).info("operatingSystem", os).yaml();
        let daemon_pod = |n: &str| {
            pod(&format!(
                "  tolerations: [{{operator: Exists}}]\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchFields: [{{key: metadata.name, operator: In, values: [{n}]}}]\n{APP}"
            ))
        };
        let cluster = context(&format!(
            "{}---\n{}",
            os_node("l1", "linux"),
            os_node("w1", "windows")
        ));
        // (pod, context, fires)
        for (text, ctx, fires) in [
            (daemon_pod("l1"), None, false),
            (daemon_pod("l1"), Some(&cluster), false),
            (daemon_pod("w1"), Some(&cluster), true),
            (
                pod(&format!("  tolerations: [{{operator: Exists}}]\n{APP}")),
                None,
                true,
            ),
        ] {
            let found = findings(
                &text,
                ctx,
                &Settings::default(),
                &[RULES[1], "schedulable-on-wrong-os"],
            );
            assert_eq!(!found.is_empty(), fires, "{text} {:?}", ctx.is_some());
        }
    }

    #[test]
    fn triggers_and_non_triggers() {
        let without = rule_path(
            "linux-pod-without-os-selector",
            "spec.nodeSelector[kubernetes.io/os]",
        );
        let rows = vec![
            Case {
                reference: "unrecognized image presumed Linux",
                yaml: APP.to_string(),
                want: vec![without.clone()],
            },
            Case {
                reference: "well-known Linux image",
                yaml: "  containers: [{name: c, image: nginx:1.27}]\n".into(),
                want: vec![without.clone()],
            },
            Case {
                reference: "§3.3 pinned to Linux",
                yaml: format!("  nodeSelector: {{kubernetes.io/os: linux}}\n{APP}"),
                want: vec![],
            },
            Case {
                reference: "§3.4 affinity excludes Windows",
                yaml: format!(
                    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{{key: kubernetes.io/os, operator: NotIn, values: [windows]}}]\n{APP}"
                ),
                want: vec![],
            },
            Case {
                reference: "§6 multi-OS only: not a Linux pod",
                yaml: "  containers: [{name: c, image: registry.k8s.io/pause:3.10}]\n".into(),
                want: vec![],
            },
            Case {
                reference: "§3.1 tolerate everything",
                yaml: format!(
                    "  tolerations: [{{key: gpu, operator: Exists}}, {{operator: Exists}}]\n{APP}"
                ),
                want: vec![
                    rule_path("linux-pod-tolerates-windows-taint", "spec.tolerations[1]"),
                    without.clone(),
                ],
            },
            Case {
                reference: "§3.1 key os, Exists",
                yaml: format!(
                    "  tolerations: [{{key: os, operator: Exists, effect: NoSchedule}}]\n{APP}"
                ),
                want: vec![
                    rule_path("linux-pod-tolerates-windows-taint", "spec.tolerations[0]"),
                    without.clone(),
                ],
            },
            Case {
                reference: "§3.1 other taint only",
                yaml: format!("  tolerations: [{{key: gpu, operator: Exists}}]\n{APP}"),
                want: vec![without.clone()],
            },
            Case {
                reference: "§1.6 spec.os.name linux does not pin",
                yaml: format!("  os: {{name: linux}}\n{APP}"),
                want: vec![without.clone()],
            },
            Case {
                reference: "RuntimeClass unchecked might pin",
                yaml: format!("  runtimeClassName: linux-rc\n{APP}"),
                want: vec![],
            },
        ];
        for Case {
            reference,
            yaml: spec,
            want,
        } in rows
        {
            let got = sorted_rule_paths(&findings(&pod(&spec), None, &Settings::default(), RULES));
            assert_eq!(got, want, "{reference}");
        }
    }

    #[test]
    fn context_taints_and_fix() {
        // Untainted Windows nodes: nothing to tolerate (schedulable-on-wrong-os reports the risk).
        let ctx = context(
            "apiVersion: v1\nkind: Node\nmetadata: {name: w, labels: {kubernetes.io/os: windows}}\n",
        );
        let text = pod(&format!("  tolerations: [{{operator: Exists}}]\n{APP}"));
        let got = sorted_rule_paths(&findings(&text, Some(&ctx), &Settings::default(), RULES));
        assert_eq!(
            got,
            [rule_path(
                "linux-pod-without-os-selector",
                "spec.nodeSelector[kubernetes.io/os]"
            )]
        );
        // The image is unrecognized: the pod is Linux only by presumption, so the findings ask and carry
        // no fix, unless setting presumeLinux (`--presume-linux`) says to take the presumption.
        for f in findings(&text, None, &Settings::default(), RULES) {
            assert!(f.fix.is_none(), "{f:?}");
            assert!(
                f.message.contains("Which OS does it need?"),
                "{}",
                f.message
            );
            assert!(
                f.message.contains("kubernetes.io/os: windows"),
                "{}",
                f.message
            );
        }
        let presume = Settings {
            presume_linux: true,
            ..Settings::default()
        };
        // Both fixes add the same selector; applied together they repair the pod.
        let mut value = objects(&text).remove(0).value;
        for f in findings(&text, None, &presume, RULES) {
            assert!(!f.message.contains("Which OS"), "{}", f.message);
            apply(&mut value, f.fix.as_ref().expect("fix"));
        }
        assert_eq!(
            value["spec"]["nodeSelector"],
            serde_json::json!({"kubernetes.io/os": "linux"})
        );
        assert!(findings(&value.to_string(), None, &Settings::default(), RULES).is_empty());
        // A pod whose image is known Linux gets its fix without the setting.
        let known = pod("  containers: [{name: c, image: nginx:1.27}]\n");
        let fixes: Vec<bool> = findings(&known, None, &Settings::default(), RULES)
            .iter()
            .map(|f| f.fix.is_some())
            .collect();
        assert_eq!(fixes, [true]);
    }
}
