//! Cluster rules (need the cluster's nodes): `no-schedulable-node`, `schedulable-on-wrong-os`,
//! `schedulable-on-incompatible-build`.
//!
//! The nodes are read through [`NodeIndex`] and [`fit`]: nodeSelector AND required affinity (after the
//! RuntimeClass merge), `NoSchedule`/`NoExecute` taints and cordons, as the scheduler filters them
//! (kubernetes-windows-rules.md §3). Resources, ports, pod affinity and topology spread are not modelled.

use super::{Emitter, RuleId, TemplateCx};
use crate::placement::fix_plan::{self, BuildPinPlan};
use crate::placement::{NodeIndex, OS_LABEL, Placement, PodOs, fit, host_runs_any, os_word};
use crate::settings::BuildPinning;
use crate::windows::builds::build_display;

/// How many node names a message lists.
const NAMES_SHOWN: usize = 5;

/// `3 nodes (a, b, c)`: a count and the first names.
pub(super) fn name_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = names.collect();
    let mut shown: Vec<&str> = all.iter().take(NAMES_SHOWN).copied().collect();
    if all.len() > NAMES_SHOWN {
        shown.push("…");
    }
    format!(
        "{} node{} ({})",
        all.len(),
        if all.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// Runs the cluster rules; nothing without nodes.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let Some(index) = cx.nodes else {
        return;
    };
    let p = cx.placement;
    let fit = fit(p, index);
    if fit.candidates.is_empty() {
        out.emit(
            RuleId::NoSchedulableNode,
            &p.prefix,
            format!(
                "No node can take this pod, so it stays Pending: {}. {}",
                fit.summary(index),
                pending_advice(cx, index)
            ),
            None,
        );
        return;
    }
    let Some(os) = p.os.os() else {
        return;
    };
    let wrong: Vec<&str> = fit
        .candidate_nodes(index)
        .filter(|n| n.os.is_some_and(|o| o != os))
        .map(|n| n.name.as_str())
        .collect();
    if !wrong.is_empty() {
        let other = if p.os == PodOs::Linux {
            "Windows"
        } else {
            "Linux"
        };
        out.emit(
            RuleId::SchedulableOnWrongOs,
            &p.prefix.field("nodeSelector").key(OS_LABEL),
            format!(
                "This {} pod can be scheduled on {other} nodes, where it cannot run: {}. Give it the nodeSelector {OS_LABEL}: {os}{}.",
                os_word(os),
                name_list(wrong.iter().copied()),
                // A taint keeps pods off the Windows nodes: it helps a Linux pod, never a Windows one.
                if p.os == PodOs::Linux {
                    " (and taint the Windows nodes, which keeps every Linux pod without a toleration off them)"
                } else {
                    ""
                }
            ),
            None,
        );
    }
    if p.os != PodOs::Windows || p.host_process {
        return;
    }
    let images: Vec<(usize, &[u32])> = p.windows_image_builds().collect();
    if images.is_empty() {
        return;
    }
    let bad: Vec<(&str, u32)> = fit
        .candidate_nodes(index)
        .filter_map(|n| Some((n.name.as_str(), n.build?)))
        .filter(|(_, b)| images.iter().any(|(_, builds)| !host_runs_any(*b, builds)))
        .collect();
    // A pod that already pins its build onto hosts that cannot run the image: `windows-build-mismatch`
    // reports that pin (one problem, one error); advising to pin a build here would repeat it.
    let pinned = p.build_pin.as_ref().map(|pin| pin.numbers());
    if pinned.is_some_and(|pinned| bad.iter().all(|(_, b)| pinned.contains(b))) {
        return;
    }
    if let Some(&(_, build)) = bad.first() {
        let (image, image_builds) = images
            .iter()
            .find(|(_, builds)| !host_runs_any(build, builds))
            .and_then(|(i, builds)| Some((p.images.get(*i)?.image.as_str(), *builds)))
            .unwrap_or(("", &[]));
        // The builds of the cluster that run every image: pinning one of them helps; when there is none,
        // pinning only trades a failing container for a Pending pod, and the image is what must change.
        let cluster_builds = index.windows_builds();
        let runnable = runnable_builds(p, index);
        let advice = match pin_for(cx, &runnable) {
            Some(pin) => format!("Pin the builds that run it: {}.", pin.phrase()),
            None => format!(
                "No Windows node of the cluster can run this image ({} built for {}), so pinning a build would leave the pod Pending: rebuild it on a base image for a build the cluster has ({}).",
                image,
                builds_list(image_builds),
                builds_list(&cluster_builds)
            ),
        };
        out.emit(
            RuleId::SchedulableOnIncompatibleBuild,
            &fix_plan::pin_path(&p.prefix, cx.settings),
            format!(
                "This Windows pod can be scheduled on {} whose build cannot run its image {image} with process isolation (e.g. {}); there the container fails to start (0xc0370101). {advice}",
                name_list(bad.iter().map(|(n, _)| *n)),
                build_display(build)
            ),
            None,
        );
    }
}

/// What to do about a pod no node takes. A pin to a build the cluster lacks is the cause the scheduler
/// reports, and the one finding about it (`windows-build-mismatch` stays silent then): say which build
/// to pin instead, or that the image must be rebuilt when no build of the cluster runs it.
fn pending_advice(cx: &TemplateCx<'_>, index: &NodeIndex) -> String {
    let p = cx.placement;
    const GENERIC: &str = "Change its selectors or tolerations, or add nodes that match.";
    let cluster_builds = index.windows_builds();
    let Some(pin) = p.build_pin.as_ref().filter(|pin| {
        p.os == PodOs::Windows && !pin.numbers().iter().any(|b| cluster_builds.contains(b))
    }) else {
        return GENERIC.to_string();
    };
    if cluster_builds.is_empty() {
        return GENERIC.to_string();
    }
    let runnable = runnable_builds(p, index);
    let pinned = pin.builds.join(", ");
    match pin_for(cx, &runnable) {
        Some(pin) => format!(
            "No node has the pinned build {pinned}: pin builds the cluster has and the image runs on, {}.",
            pin.phrase()
        ),
        None => format!(
            "No node has the pinned build {pinned}, and no build the cluster has ({}) runs the image: rebuild it on a base image for one of them.",
            builds_list(&cluster_builds)
        ),
    }
}

/// The pin to advise for a pod that some of the cluster's builds (`runnable`, ascending) run: the one a
/// fix would add ([`fix_plan::build_pin_plan`], as `buildPinning` says) when it admits one of them, else
/// those builds themselves. `None` when no build of the cluster runs the images.
fn pin_for(cx: &TemplateCx<'_>, runnable: &[u32]) -> Option<BuildPinPlan> {
    let newest = *runnable.last()?;
    let planned =
        fix_plan::build_pin_plan(cx.placement, cx.context, cx.settings).filter(|pin| match pin {
            BuildPinPlan::Range(builds) => builds.iter().any(|b| runnable.contains(b)),
            BuildPinPlan::Exact(build) => runnable.contains(build),
        });
    Some(planned.unwrap_or_else(|| match cx.settings.build_pinning {
        BuildPinning::Range => BuildPinPlan::Range(runnable.to_vec()),
        BuildPinning::Exact => BuildPinPlan::Exact(newest),
    }))
}

/// The Windows builds of the cluster whose hosts run every image of the pod (all of them for a
/// HostProcess pod, which is exempt from build matching, §2.2), ascending.
pub(super) fn runnable_builds(p: &Placement, index: &NodeIndex) -> Vec<u32> {
    let images: Vec<&[u32]> = p.windows_image_builds().map(|(_, b)| b).collect();
    index
        .windows_builds()
        .into_iter()
        .filter(|&b| p.host_process || images.iter().all(|builds| host_runs_any(b, builds)))
        .collect()
}

/// Whether `schedulable-on-incompatible-build` tells this unpinned pod to rebuild its image: no build of
/// the cluster runs its images, and the scheduler can put it on a Windows node of a known build.
pub(super) fn rebuild_advised(p: &Placement, index: &NodeIndex) -> bool {
    if p.os != PodOs::Windows || p.host_process || p.build_pin.is_some() {
        return false;
    }
    if index.windows_builds().is_empty() || !runnable_builds(p, index).is_empty() {
        return false;
    }
    fit(p, index)
        .candidate_nodes(index)
        .any(|n| n.os == Some(crate::windows::Os::Windows) && n.build.is_some())
}

/// Builds for a message: `Windows Server 2019 (10.0.17763), Windows Server 2022 (10.0.20348)`.
fn builds_list(builds: &[u32]) -> String {
    let names: Vec<String> = builds.iter().map(|&b| build_display(b)).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use crate::model::ClusterContext;
    use crate::rules::test_kit::{context, findings, pod, rule_path, sorted_rule_paths};
    use crate::settings::Settings;
    use crate::test_kit::{NodeBuilder, linux_node, node, node_list, windows_node};

    const RULES: &[&str] = &[
        "no-schedulable-node",
        "schedulable-on-wrong-os",
        "schedulable-on-incompatible-build",
    ];
    const WIN: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";
    const TOLERATE: &str =
        "  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";

    fn cluster(nodes: &[NodeBuilder]) -> ClusterContext {
        context(&node_list(nodes))
    }

    #[test]
    fn triggers_and_non_triggers() {
        let mixed = cluster(&[
            windows_node("w19", "10.0.17763"),
            windows_node("w22", "10.0.20348"),
            linux_node("l1"),
        ]);
        let open = cluster(&[
            node("w-open").os("windows").build("10.0.20348"),
            linux_node("l1"),
        ]);
        let only_2022 = cluster(&[windows_node("w22", "10.0.20348"), linux_node("l1")]);
        let image = |i: &str| format!("  containers: [{{name: c, image: \"{i}\"}}]\n");
        /// A pod spec, the cluster it is checked against and the (rule, path) of its findings.
        struct Case<'a> {
            reference: &'a str,
            ctx: &'a ClusterContext,
            spec: String,
            want: Vec<(String, String)>,
        }
        let rows = vec![
            Case {
                reference: "§3.2 untainted Windows node takes a Linux pod",
                ctx: &open,
                spec: image("ghcr.io/example/api:1"),
                want: vec![rule_path(
                    "schedulable-on-wrong-os",
                    "spec.nodeSelector[kubernetes.io/os]",
                )],
            },
            Case {
                reference: "pinned Linux pod",
                ctx: &open,
                spec: format!(
                    "  nodeSelector: {{kubernetes.io/os: linux}}\n{}",
                    image("ghcr.io/example/api:1")
                ),
                want: vec![],
            },
            Case {
                reference: "tainted Windows nodes keep a Linux pod off",
                ctx: &mixed,
                spec: image("nginx:1.27"),
                want: vec![],
            },
            Case {
                reference: "§3.3 no node of the pinned build",
                ctx: &only_2022,
                spec: format!(
                    "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.26100\"}}\n{TOLERATE}{}",
                    image("mcr.microsoft.com/windows/servercore:ltsc2025")
                ),
                want: vec![rule_path("no-schedulable-node", "spec")],
            },
            Case {
                reference: "§5.3 a 2019 node is feasible for a 2022 image",
                ctx: &mixed,
                spec: format!(
                    "  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{}",
                    image(WIN)
                ),
                want: vec![rule_path(
                    "schedulable-on-incompatible-build",
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                )],
            },
            Case {
                reference: "build pinned",
                ctx: &mixed,
                spec: format!(
                    "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}}\n{TOLERATE}{}",
                    image(WIN)
                ),
                want: vec![],
            },
            Case {
                reference: "§2.2 HostProcess is exempt",
                ctx: &mixed,
                spec: format!(
                    "  hostNetwork: true\n  securityContext: {{windowsOptions: {{hostProcess: true}}}}\n  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{}",
                    image(WIN)
                ),
                want: vec![],
            },
        ];
        for Case {
            reference,
            ctx,
            spec,
            want,
        } in rows
        {
            let got = sorted_rule_paths(&findings(
                &pod(&spec),
                Some(ctx),
                &Settings::default(),
                RULES,
            ));
            assert_eq!(got, want, "{reference}");
        }
        // No nodes, no cluster findings.
        let empty = ClusterContext::default();
        assert!(findings(&pod(&image(WIN)), Some(&empty), &Settings::default(), RULES).is_empty());
    }

    #[test]
    fn messages_name_the_nodes_and_reasons() {
        let ctx = cluster(&[windows_node("w22", "10.0.20348"), linux_node("l1")]);
        let spec = format!(
            "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.26100\"}}\n{TOLERATE}  containers: [{{name: c, image: mcr.microsoft.com/windows/servercore:ltsc2025}}]\n"
        );
        let found = findings(&pod(&spec), Some(&ctx), &Settings::default(), RULES);
        let m = &found[0].message;
        assert!(m.contains("1 node (w22): node(s) didn't match Pod's node affinity/selector (node.kubernetes.io/windows-build is 10.0.20348, not 10.0.26100)"), "{m}");
        assert!(m.contains("1 node (l1): node(s) didn't match Pod's node affinity/selector (kubernetes.io/os is linux, not windows"), "{m}");
    }

    #[test]
    fn the_advice_is_to_pin_only_when_some_node_can_run_the_image() {
        // A 2019 image: the 2019 node runs it, the 2022 node does not. Pin the build that works.
        let mixed = cluster(&[
            windows_node("w19", "10.0.17763"),
            windows_node("w22", "10.0.20348"),
        ]);
        let spec = format!(
            "  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}  containers: [{{name: c, image: mcr.microsoft.com/windows/servercore:ltsc2019}}]\n"
        );
        let found = findings(&pod(&spec), Some(&mixed), &Settings::default(), RULES);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.ends_with(
                "Pin the builds that run it: required node affinity node.kubernetes.io/windows-build In [10.0.17763]."
            ),
            "{}",
            found[0].message
        );
        // buildPinning: exact names one build, in the nodeSelector.
        let exact = Settings {
            build_pinning: crate::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let found = findings(&pod(&spec), Some(&mixed), &exact, RULES);
        assert_eq!(
            found[0].path,
            "spec.nodeSelector[node.kubernetes.io/windows-build]"
        );
        assert!(
            found[0].message.ends_with(
                "Pin the builds that run it: the nodeSelector node.kubernetes.io/windows-build: \"10.0.17763\"."
            ),
            "{}",
            found[0].message
        );
        // A 20H2 (19042) image on a cluster of 2019 nodes only: no build to pin, the image must change.
        let old = cluster(&[windows_node("w19", "10.0.17763")]);
        let spec = format!(
            "  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}  containers: [{{name: c, image: mcr.microsoft.com/windows/servercore:20H2}}]\n"
        );
        let found = findings(&pod(&spec), Some(&old), &Settings::default(), RULES);
        assert_eq!(found.len(), 1, "{found:?}");
        let m = &found[0].message;
        assert!(!m.contains("Pin the build"), "{m}");
        assert!(
            m.contains("No Windows node of the cluster can run this image (mcr.microsoft.com/windows/servercore:20H2 built for ")
                && m.ends_with("rebuild it on a base image for a build the cluster has (Windows Server 2019 (10.0.17763))."),
            "{m}"
        );
    }

    #[test]
    fn a_pin_to_a_build_no_node_has_is_one_error_with_the_build_to_pin() {
        let only_2022 = cluster(&[windows_node("w22", "10.0.20348")]);
        let rules = [
            "no-schedulable-node",
            "windows-build-mismatch",
            "schedulable-on-incompatible-build",
        ];
        let spec = |build: &str, image: &str| {
            format!(
                "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"{build}\"}}\n{TOLERATE}  containers: [{{name: c, image: \"{image}\"}}]\n"
            )
        };
        // A 2022 image pinned to 2019, which no node has: Pending, not a failing container.
        let found = findings(
            &pod(&spec("10.0.17763", WIN)),
            Some(&only_2022),
            &Settings::default(),
            &rules,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "no-schedulable-node");
        assert!(
            found[0].message.ends_with("No node has the pinned build 10.0.17763: pin builds the cluster has and the image runs on, required node affinity node.kubernetes.io/windows-build In [10.0.20348, 10.0.26100]."),
            "{}",
            found[0].message
        );
        // A 2025 image pinned to 2025 on 2022 nodes: no build of the cluster runs it, rebuild.
        let found = findings(
            &pod(&spec(
                "10.0.26100",
                "mcr.microsoft.com/windows/servercore:ltsc2025",
            )),
            Some(&only_2022),
            &Settings::default(),
            &rules,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].message.ends_with("No node has the pinned build 10.0.26100, and no build the cluster has (Windows Server 2022 (10.0.20348)) runs the image: rebuild it on a base image for one of them."),
            "{}",
            found[0].message
        );
        // The cluster has the pinned build: the mismatch is what happens there, and the only error.
        let both = cluster(&[
            windows_node("w19", "10.0.17763"),
            windows_node("w22", "10.0.20348"),
        ]);
        let found = findings(
            &pod(&spec("10.0.17763", WIN)),
            Some(&both),
            &Settings::default(),
            &rules,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "windows-build-mismatch");
        // Without nodes, only the mismatch can be known.
        let found = findings(
            &pod(&spec("10.0.17763", WIN)),
            None,
            &Settings::default(),
            &rules,
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, "windows-build-mismatch");
    }
}
