//! Windows pods: OS selector, toleration, build selector (and pins too narrow to survive an in-place
//! upgrade), build compatibility, deprecated OS labels.
//!
//! Every rule here except `deprecated-os-label` looks only at pods whose OS resolved to Windows (a pod whose
//! signals disagree gets `os-conflict` instead).
//!
//! Where the pod may land (OS selector, tolerations, build selector) is not judged on a pod pinned by name
//! to nodes the evaluation cannot see (`TemplateCx::pinned_to_unseen_nodes`: a DaemonSet's pod): its
//! DaemonSet's template is judged instead, and with cluster context, the nodes it names.

use k8s_openapi::api::core::v1::Taint;
use serde_json::{Value, json};

use super::{Emitter, RuleId, TemplateCx};
use crate::finding::{Fix, Severity};
use crate::placement::fix_plan::{self, SelectorPlan};
use crate::placement::{
    ARCH_LABEL, BETA_ARCH_LABEL, BETA_OS_LABEL, BUILD_LABEL, OS_LABEL, Placement, PodOs,
    RuntimeClassUse, build_range, host_runs_any,
};
use crate::schedule::affinity::term_expressions;
use crate::schedule::taints::{
    CaseDifference, Gates, case_differences, case_mismatch, taint_display, tolerated_by_any,
};
use crate::settings::BuildPinning;
use crate::windows::builds::{WindowsVersion, build_display};
use crate::windows::{Compatibility, ImageOs, compatibility_of_builds};

/// Runs the Windows-pod rules.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    deprecated_os_label(cx, out);
    if cx.placement.os != PodOs::Windows {
        return;
    }
    let plan = fix_plan::plan(cx.placement, cx.context, cx.settings);
    windows_pod_without_os_selector(cx, &plan, out);
    windows_pod_without_toleration(cx, out);
    toleration_case_mismatch(cx, out);
    windows_pod_without_build_selector(cx, &plan, out);
    if cx.placement.host_process {
        return;
    }
    let conflict = windows_images_build_conflict(cx, out);
    if !conflict {
        windows_build_mismatch(cx, out);
        windows_build_pin_too_narrow(cx, out);
        windows_version_unsupported(cx, out);
    }
    windows_image_build_unknown(cx, out);
}

/// Why the pod is a Windows pod, for messages.
fn why_windows(p: &Placement) -> String {
    p.signals
        .first()
        .map(|s| s.what.clone())
        .or_else(|| p.presumed.clone())
        .unwrap_or_else(|| "its images".to_string())
}

fn label_of(build: u32) -> String {
    WindowsVersion::new(build).label()
}

fn describe_builds(builds: &[u32]) -> String {
    builds
        .iter()
        .map(|&b| build_display(b))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `windows-pod-without-os-selector`: nothing the scheduler reads keeps this Windows pod off Linux nodes.
fn windows_pod_without_os_selector(
    cx: &TemplateCx<'_>,
    plan: &SelectorPlan,
    out: &mut Emitter<'_>,
) {
    let p = cx.placement;
    if !fix_plan::windows_needs_os_selector(p) || cx.pinned_to_unseen_nodes() {
        return;
    }
    let ops = fix_plan::selector_ops(p, cx.template.raw, plan, OS_LABEL);
    let (path, fix) = match &plan.runtime_class {
        Some(rc) => (
            p.prefix.field("runtimeClassName"),
            Fix {
                description: format!("set runtimeClassName: {rc}"),
                patch: ops.into(),
            },
        ),
        None => (
            p.prefix.field("nodeSelector").key(OS_LABEL),
            Fix {
                description: "add nodeSelector kubernetes.io/os: windows".to_string(),
                patch: ops.into(),
            },
        ),
    };
    let message = match windows_only_selector(cx) {
        Some(pin) => format!(
            "This pod needs Windows ({}) and its nodeSelector {}: {} keeps it on {}, but not by kubernetes.io/os: windows, the label every node carries: {} Add the nodeSelector kubernetes.io/os: windows (or use a RuntimeClass that sets it).",
            why_windows(p),
            pin.key,
            pin.value,
            pin.what,
            pin.why_not_enough
        ),
        None => format!(
            "This pod needs Windows ({}) but has no kubernetes.io/os: windows nodeSelector or required node affinity, and spec.os.name alone does not count (the scheduler ignores it); it can be placed on a Linux node where it cannot start. Add the nodeSelector kubernetes.io/os: windows (or use a RuntimeClass that sets it).",
            why_windows(p)
        ),
    };
    out.emit(
        RuleId::WindowsPodWithoutOsSelector,
        &path,
        message,
        Some(fix).filter(|f| !f.patch.is_empty()),
    );
}

/// A nodeSelector entry that only Windows nodes carry: the pod does stay off Linux nodes, by a label
/// other than the OS's.
struct WindowsOnlyPin {
    key: String,
    value: String,
    /// What it selects (`the Windows node akswin000000`).
    what: String,
    /// Why that is still not enough, a sentence.
    why_not_enough: &'static str,
}

/// AKS's label of a node's OS SKU (`Windows2022`), which it sets on every node (platforms.md §3.3).
const AKS_OS_SKU: &str = "kubernetes.azure.com/os-sku";

/// The pod's nodeSelector entry that only Windows nodes carry: with the cluster's nodes, one every node
/// carrying it is Windows (a Windows node's hostname among them); without, AKS's Windows OS SKUs.
fn windows_only_selector(cx: &TemplateCx<'_>) -> Option<WindowsOnlyPin> {
    let selector = cx.placement.node_selector.as_ref()?;
    let hostname = "kubernetes.io/hostname";
    for (key, value) in selector {
        if key == OS_LABEL || key == BETA_OS_LABEL {
            continue;
        }
        let why_not_enough = if key == hostname {
            "the pod is right only while that name is a Windows node's, and what reads a pod's OS from its selector (the kubelet's OS admission check, RuntimeClass scheduling, admission policies) does not see it."
        } else if key == AKS_OS_SKU {
            "the label is AKS's own, so the same manifest on another platform has nothing keeping it off Linux nodes, and what reads a pod's OS from its selector (the kubelet's OS admission check, RuntimeClass scheduling, admission policies) does not see it."
        } else {
            "the label is the cluster's own, so a Linux node given it (or the same manifest on another cluster) has nothing keeping the pod off, and what reads a pod's OS from its selector (the kubelet's OS admission check, RuntimeClass scheduling, admission policies) does not see it."
        };
        if let Some(index) = cx.nodes {
            let carriers: Vec<&str> = index
                .nodes()
                .iter()
                .filter(|n| n.labels.get(key) == Some(value))
                .filter(|n| n.os == Some(crate::windows::Os::Windows))
                .map(|n| n.name.as_str())
                .collect();
            let others = index.nodes().iter().any(|n| {
                n.labels.get(key) == Some(value) && n.os != Some(crate::windows::Os::Windows)
            });
            if !carriers.is_empty() && !others {
                let what = if key == hostname {
                    format!("the Windows node {value}")
                } else {
                    format!(
                        "nodes that are all Windows in this cluster ({})",
                        super::cluster::name_list(carriers.into_iter())
                    )
                };
                return Some(WindowsOnlyPin {
                    key: key.clone(),
                    value: value.clone(),
                    what,
                    why_not_enough,
                });
            }
        }
        if key == AKS_OS_SKU && value.starts_with("Windows") {
            return Some(WindowsOnlyPin {
                key: key.clone(),
                value: value.clone(),
                what: format!("AKS's {value} nodes (AKS sets the label on every node)"),
                why_not_enough,
            });
        }
    }
    None
}

/// The Windows taints the pod does not tolerate, and where they come from.
fn missing_tolerations(cx: &TemplateCx<'_>) -> (Vec<Taint>, &'static str) {
    fix_plan::missing_windows_tolerations(cx.placement, cx.context, cx.settings)
}

/// `windows-pod-without-toleration`: the pod's tolerations (RuntimeClass merged) miss a Windows taint.
fn windows_pod_without_toleration(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    if p.runtime_class.is_unchecked() || cx.pinned_to_unseen_nodes() {
        return;
    }
    let (missing, source) = missing_tolerations(cx);
    if missing.is_empty() {
        return;
    }
    // Taints a case-mismatched toleration almost covers are repaired by the toleration-case-mismatch fix.
    let own = cx.template.spec.tolerations.as_deref().unwrap_or(&[]);
    let to_add: Vec<Value> = missing
        .iter()
        .filter(|t| !own.iter().any(|tol| case_mismatch(tol, t)))
        .map(fix_plan::toleration_for)
        .collect();
    let fix = (!to_add.is_empty()).then(|| Fix {
        description: format!(
            "add toleration(s) for {}",
            missing
                .iter()
                .map(taint_display)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        patch: fix_plan::add_tolerations_ops(p, cx.template.raw, to_add).into(),
    });
    let taints: Vec<String> = missing.iter().map(taint_display).collect();
    out.emit(
        RuleId::WindowsPodWithoutToleration,
        &p.prefix.field("tolerations"),
        format!(
            "This Windows pod does not tolerate the taint {} of {source}, so the scheduler keeps it off them and it stays Pending (node(s) had untolerated taint). Add to its tolerations {}.",
            taints.join(", "),
            missing
                .iter()
                .map(crate::schedule::taints::toleration_display)
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        fix,
    );
}

/// `toleration-case-mismatch`: a toleration equals a Windows taint except for letter case; the message
/// names every part that differs (key, operator, value, effect) and the fix respells them all.
fn toleration_case_mismatch(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    if cx.pinned_to_unseen_nodes() {
        return;
    }
    let p = cx.placement;
    let taints = fix_plan::windows_taints(cx.context, cx.settings);
    let own = cx.template.spec.tolerations.as_deref().unwrap_or(&[]);
    // The first Windows taint the toleration almost matches, that nothing tolerates, and how it differs.
    let almost = |tol| {
        taints.iter().find_map(|t| {
            let differences = case_differences(tol, t);
            (!differences.is_empty() && !tolerated_by_any(&p.tolerations, t, Gates::default()))
                .then_some((t, differences))
        })
    };
    for (i, tol) in own.iter().enumerate() {
        let Some((taint, differences)) = almost(tol) else {
            continue;
        };
        let base = p.prefix.field("tolerations").index(i);
        let patch: Vec<Value> = differences
            .iter()
            .map(|d| json!({"op": "replace", "path": base.field(d.field).to_json_pointer(), "value": d.wanted}))
            .collect();
        let (parts, wanted) = describe_case_differences(&differences);
        out.emit(
            RuleId::TolerationCaseMismatch,
            &base.field(differences[0].field),
            format!(
                "This toleration's {parts} from the Windows taint {} only in letter case; taints are matched case-sensitively, so it tolerates nothing there and the pod stays Pending. Write {wanted}.",
                taint_display(taint)
            ),
            Some(Fix {
                description: format!("write {wanted} in the toleration"),
                patch: patch.into(),
            }),
        );
    }
    // The tolerations the RuntimeClass's `scheduling` merges into the pod (RuntimeClass admission): the
    // same mistake, made in the RuntimeClass. Reported on the pod's runtimeClassName (the RuntimeClass
    // may be in another file, or only in the cluster); the fix belongs in the RuntimeClass.
    let RuntimeClassUse::Found { name, entry } = &p.runtime_class else {
        return;
    };
    let from_class = entry
        .object
        .scheduling
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or(&[]);
    for (i, tol) in from_class.iter().enumerate() {
        let Some((taint, differences)) = almost(tol) else {
            continue;
        };
        let (parts, wanted) = describe_case_differences(&differences);
        out.emit(
            RuleId::TolerationCaseMismatch,
            &p.prefix.field("runtimeClassName"),
            format!(
                "In the toleration the RuntimeClass {name} adds to this pod (scheduling.tolerations[{i}]), the {parts} from the Windows taint {} only in letter case; taints are matched case-sensitively, so it tolerates nothing there and the pod stays Pending. Write {wanted} in the RuntimeClass.",
                taint_display(taint)
            ),
            None,
        );
    }
}

/// The differing parts as a message says them, as written and as wanted:
/// ``("key `OS` and value `Windows` differ", "key `os` and value `windows`")``.
fn describe_case_differences(differences: &[CaseDifference]) -> (String, String) {
    let join = |items: Vec<String>| match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let written = join(
        differences
            .iter()
            .map(|d| format!("{} `{}`", d.field, d.written))
            .collect(),
    );
    let wanted = join(
        differences
            .iter()
            .map(|d| format!("{} `{}`", d.field, d.wanted))
            .collect(),
    );
    let verb = if differences.len() == 1 {
        "differs"
    } else {
        "differ"
    };
    (format!("{written} {verb}"), wanted)
}

/// `windows-pod-without-build-selector`: no `node.kubernetes.io/windows-build` constraint.
fn windows_pod_without_build_selector(
    cx: &TemplateCx<'_>,
    plan: &SelectorPlan,
    out: &mut Emitter<'_>,
) {
    let p = cx.placement;
    if !fix_plan::needs_build_selector(p) || cx.pinned_to_unseen_nodes() {
        return;
    }
    // No build of the cluster runs the images: pinning one would leave the pod Pending, and
    // `schedulable-on-incompatible-build` says to rebuild the image instead (one problem, one error).
    if cx
        .nodes
        .is_some_and(|ix| super::cluster::rebuild_advised(p, ix))
    {
        return;
    }
    let several = cx.context.is_some_and(|c| c.windows_builds().len() > 1);
    let severity = if several || cx.settings.require_build_selector {
        Severity::Error
    } else {
        Severity::Warning
    };
    let ops = fix_plan::build_pin_ops(p, cx.template.raw, plan);
    let (path, fix) = match (&plan.runtime_class, &plan.build) {
        (Some(rc), _) => (
            p.prefix.field("runtimeClassName"),
            Some(Fix {
                description: format!("set runtimeClassName: {rc}"),
                patch: ops.into(),
            }),
        ),
        (None, Some(pin)) => (
            pin.path(&p.prefix),
            Some(Fix {
                description: format!("add {}", pin.phrase()),
                patch: ops.into(),
            }),
        ),
        (None, None) => (fix_plan::pin_path(&p.prefix, cx.settings), None),
    };
    let why = if several {
        "the cluster runs several Windows builds, and "
    } else {
        ""
    };
    let advice = match (&plan.build, cx.settings.build_pinning) {
        (Some(pin @ fix_plan::BuildPinPlan::Range(_)), _) => format!(
            "add {}, the builds that run its images (a range keeps the pod schedulable when its pool is upgraded in place to a newer build that still runs them)",
            pin.phrase()
        ),
        (Some(pin), _) => format!("add {}", pin.phrase()),
        (None, BuildPinning::Range) => format!(
            "its images' names do not say which Windows builds they were built for, so add required node affinity {BUILD_LABEL} In [...] with the builds they were built for (their manifest's os.version says, and `winplace check --resolve-images` reads it)"
        ),
        (None, BuildPinning::Exact) => format!(
            "its images' names do not say which Windows build they were built for, so add {BUILD_LABEL} to the nodeSelector with that build (their manifest's os.version says, and `winplace check --resolve-images` reads it)"
        ),
    };
    out.emit_as(
        RuleId::WindowsPodWithoutBuildSelector,
        severity,
        &path,
        format!(
            "This Windows pod does not pin a Windows build; {why}process-isolated containers only start on hosts whose build can run the image (else 0xc0370101). Pin it: {advice}, or use a RuntimeClass that sets it."
        ),
        fix.filter(|f| !f.patch.is_empty()),
    );
}

/// `windows-build-pin-too-narrow`: the pod is pinned to exactly one build, and a newer supported build
/// runs its images too (platforms.md §7.5). Off with `buildPinning: exact`; a pod whose RuntimeClass
/// pins the build (or names one that could not be looked up) is left alone: a RuntimeClass's scheduling
/// is a nodeSelector, it can only pin one build, and which class a pod uses is the operator's choice.
fn windows_build_pin_too_narrow(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    if cx.settings.build_pinning == BuildPinning::Exact {
        return;
    }
    let Some(pin) = &p.build_pin else {
        return;
    };
    // The pod's RuntimeClass pins the build (RuntimeClass admission copies it into every pod's own
    // nodeSelector, so a running pod shows it there too), or may: not the pod's to widen.
    let class_pins = match &p.runtime_class {
        RuntimeClassUse::Found { entry, .. } => entry
            .object
            .scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref())
            .is_some_and(|s| s.contains_key(BUILD_LABEL)),
        RuntimeClassUse::Unchecked { .. } => true,
        RuntimeClassUse::None | RuntimeClassUse::NotFound { .. } => false,
    };
    if class_pins {
        return;
    }
    let [pinned] = pin.numbers()[..] else {
        return;
    };
    if pin.builds.len() != 1 {
        return;
    }
    // The pinned build must run the images (else `windows-build-mismatch` is the problem).
    let images: Vec<&[u32]> = p.windows_image_builds().map(|(_, b)| b).collect();
    if images.is_empty() || !images.iter().all(|b| host_runs_any(pinned, b)) {
        return;
    }
    let Some(range) = build_range::range_builds(p, cx.context, cx.settings) else {
        return;
    };
    let supported = cx.settings.supported_build_numbers();
    let newer: Vec<u32> = range
        .iter()
        .copied()
        .filter(|&b| b > pinned && supported.contains(&b))
        .collect();
    if newer.is_empty() || !range.contains(&pinned) {
        return;
    }
    let fix = build_range::widen_ops(p, cx.template.raw, &range).map(|patch| Fix {
        description: format!("pin {} instead", build_range::phrase(&range)),
        patch: patch.into(),
    });
    out.emit(
        RuleId::WindowsBuildPinTooNarrow,
        &pin.path,
        format!(
            "This pod is pinned to exactly one Windows build, {}, but its images also run on {}, which the settings support: when its pool is upgraded in place to that build, the nodes take the new build label and these pods can never be scheduled again. Pin the builds that run the images instead: {} (or set buildPinning: exact where the platform requires the image's own build, as OpenShift does).",
            build_display(pinned),
            describe_builds(&newer),
            build_range::phrase(&range)
        ),
        fix,
    );
}

/// `windows-images-build-conflict`: no single host build runs all the Windows images. Returns whether it fired.
fn windows_images_build_conflict(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) -> bool {
    let p = cx.placement;
    if p.image_hosts.as_ref().is_none_or(|h| !h.is_empty()) {
        return false;
    }
    let known: Vec<(usize, &[u32])> = p.windows_image_builds().collect();
    let Some(&(first, first_builds)) = known.first() else {
        return false;
    };
    let hosts = crate::placement::host_candidates(cx.context, cx.settings);
    let clash = known
        .iter()
        .skip(1)
        .find(|(_, b)| {
            !hosts
                .iter()
                .any(|&h| host_runs_any(h, first_builds) && host_runs_any(h, b))
        })
        .or(known.last())
        .copied();
    let Some((other, other_builds)) = clash else {
        return false;
    };
    let (Some(a), Some(b)) = (p.images.get(first), p.images.get(other)) else {
        return false;
    };
    out.emit(
        RuleId::WindowsImagesBuildConflict,
        &b.path,
        format!(
            "No single Windows host build can run all of this pod's images: {} is built for {} and {} for {}; at least one container fails on any node (0xc0370101). Use images built for one common build (or a compatible pair such as 2022 and 2025).",
            a.image,
            describe_builds(first_builds),
            b.image,
            describe_builds(other_builds)
        ),
        None,
    );
    true
}

/// `windows-build-mismatch`: a pinned build cannot run one of the images.
fn windows_build_mismatch(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let Some(pin) = &p.build_pin else {
        return;
    };
    for host in pin.numbers() {
        // A build no node of the cluster has: the pod stays Pending rather than failing to start, and
        // `no-schedulable-node` says so with the build to pin (one problem, one error).
        if cx
            .nodes
            .is_some_and(|ix| !ix.windows_builds().contains(&host))
        {
            continue;
        }
        let bad = p
            .windows_image_builds()
            .find(|(_, builds)| !host_runs_any(host, builds));
        if let Some((image, builds)) = bad.and_then(|(i, b)| Some((p.images.get(i)?, b))) {
            // A host past the newest LTSC: containerd's main branch would pick the image, released
            // containerd does not (kubernetes-windows-rules.md §5.5.3); say so rather than hide it.
            let disputed = builds
                .iter()
                .any(|&b| compatibility_of_builds(host, b) == Compatibility::Disputed);
            let note = if disputed {
                " (containerd's main branch, with containerd/platforms v1.0.0-rc.5, would pull it on this host; released containerd 2.1–2.3 and hcsshim do not, and winplace follows them)"
            } else {
                ""
            };
            out.emit(
                RuleId::WindowsBuildMismatch,
                &pin.path,
                format!(
                    "This pod is pinned to Windows build {} ({}), whose hosts cannot run the image {} (built for {}) with process isolation{note}; the container fails to start there (0xc0370101). Use an image tag built for the pinned build, or pin the builds the image runs on.",
                    label_of(host),
                    build_display(host),
                    image.image,
                    describe_builds(builds)
                ),
                None,
            );
            return;
        }
    }
}

/// `windows-version-unsupported`: every build the pod can run on is outside `supportedBuilds`.
fn windows_version_unsupported(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let Some(runnable) = p.runnable_builds.as_ref().filter(|r| !r.is_empty()) else {
        return;
    };
    let supported = cx.settings.supported_build_numbers();
    if runnable.iter().any(|b| supported.contains(b)) {
        return;
    }
    let path = p
        .windows_image_builds()
        .next()
        .and_then(|(i, _)| p.images.get(i).map(|img| img.path.clone()))
        .or_else(|| p.build_pin.as_ref().map(|b| b.path.clone()))
        .unwrap_or_else(|| p.prefix.clone());
    // The base-image tags of the supported builds (`ltsc2022`), not a fixed pair: supportedBuilds varies.
    let tags: Vec<&str> = supported
        .iter()
        .filter_map(|&b| crate::windows::builds::build_info(b)?.tags.first().copied())
        .collect();
    let base = if tags.is_empty() {
        "a supported base image".to_string()
    } else {
        format!("a supported base image ({})", tags.join(" or "))
    };
    out.emit(
        RuleId::WindowsVersionUnsupported,
        &path,
        format!(
            "This pod can only run on {}, outside the supported Windows builds ({}); it cannot move to supported nodes without a new image. Rebuild it on {base}, or add the build to supportedBuilds if you run it deliberately.",
            describe_builds(runnable),
            cx.settings.supported_builds.join(", ")
        ),
        None,
    );
}

/// `windows-image-build-unknown`: a Windows image whose build cannot be told; once per image, at its
/// first container (init containers first), the message naming its other containers.
fn windows_image_build_unknown(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let images = &cx.placement.images;
    for (i, image) in images.iter().enumerate() {
        let unknown = match &image.class.os {
            ImageOs::Windows { builds } => builds.is_empty(),
            ImageOs::Unrecognized => true,
            ImageOs::Linux | ImageOs::MultiOs => false,
        };
        if !unknown || images[..i].iter().any(|e| e.image == image.image) {
            continue;
        }
        let others: Vec<String> = images[i + 1..]
            .iter()
            .filter(|e| e.image == image.image)
            .map(|e| e.path.to_string())
            .collect();
        let also = if others.is_empty() {
            String::new()
        } else {
            format!(" (here and at {})", others.join(", "))
        };
        out.emit(
            RuleId::WindowsImageBuildUnknown,
            &image.path,
            format!(
                "winplace cannot tell which Windows build the image {} was built for ({}), so build compatibility is not checked for it{also}. Let `winplace check --resolve-images` read its build from the image's manifest, add a settings imageRules entry for it (pattern, os: windows, builds), or use a tag that names the build (ltsc2022, ltsc2025, 10.0.<build>.<rev>).",
                image.image, image.class.reason
            ),
            None,
        );
    }
}

/// The GA label for a deprecated one.
fn ga_label(key: &str) -> Option<&'static str> {
    match key {
        BETA_OS_LABEL => Some(OS_LABEL),
        BETA_ARCH_LABEL => Some(ARCH_LABEL),
        _ => None,
    }
}

fn deprecated_label_message(key: &str, ga: &str, place: &str) -> String {
    format!(
        "The {place} uses the deprecated label {key}; it still works because the kubelet still sets it, but it is on its way out. Use {ga} (the GA label since Kubernetes 1.14) with the same value."
    )
}

/// `deprecated-os-label` for one nodeSelector map at `sel_path` (a pod's, or a RuntimeClass's
/// `scheduling.nodeSelector`), with a fix that moves the value to the GA label.
pub(crate) fn deprecated_selector_labels(
    selector: &std::collections::BTreeMap<String, String>,
    sel_path: &crate::FieldPath,
    place: &str,
    out: &mut Emitter<'_>,
) {
    for (key, value) in selector {
        let Some(ga) = ga_label(key) else {
            continue;
        };
        let remove = json!({"op": "remove", "path": sel_path.key(key.clone()).to_json_pointer()});
        let patch = match selector.get(ga) {
            None => vec![
                remove,
                json!({"op": "add", "path": sel_path.key(ga).to_json_pointer(), "value": value}),
            ],
            Some(v) if v == value => vec![remove],
            Some(_) => Vec::new(),
        };
        let fix = (!patch.is_empty()).then(|| Fix {
            description: format!("replace {place} {key} with {ga}"),
            patch: patch.into(),
        });
        out.emit(
            RuleId::DeprecatedOsLabel,
            &sel_path.key(key.clone()),
            deprecated_label_message(key, ga, place),
            fix,
        );
    }
}

/// `deprecated-os-label`: `beta.kubernetes.io/os|arch` in the nodeSelector or node affinity.
fn deprecated_os_label(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let t = cx.template;
    let prefix = &t.prefix;
    if let Some(selector) = &t.spec.node_selector {
        deprecated_selector_labels(selector, &prefix.field("nodeSelector"), "nodeSelector", out);
    }
    let Some(node_affinity) = t
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    else {
        return;
    };
    let affinity = prefix.field("affinity").field("nodeAffinity");
    let mut expressions = Vec::new();
    let required = affinity.field("requiredDuringSchedulingIgnoredDuringExecution");
    for e in term_expressions(
        node_affinity
            .required_during_scheduling_ignored_during_execution
            .as_ref(),
    ) {
        expressions.push((
            e.path(&required),
            e.requirement.key.as_str(),
            "required node affinity",
        ));
    }
    for (i, pref) in node_affinity
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten()
        .enumerate()
    {
        let base = affinity
            .field("preferredDuringSchedulingIgnoredDuringExecution")
            .index(i)
            .field("preference")
            .field("matchExpressions");
        for (j, e) in pref
            .preference
            .match_expressions
            .iter()
            .flatten()
            .enumerate()
        {
            expressions.push((base.index(j), e.key.as_str(), "preferred node affinity"));
        }
    }
    for (path, key, place) in expressions {
        let Some(ga) = ga_label(key) else {
            continue;
        };
        let key_path = path.field("key");
        out.emit(
            RuleId::DeprecatedOsLabel,
            &key_path,
            deprecated_label_message(key, ga, place),
            Some(Fix {
                description: format!("replace {key} with {ga}"),
                patch: vec![
                    json!({"op": "replace", "path": key_path.to_json_pointer(), "value": ga}),
                ]
                .into(),
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::finding::Severity;
    use crate::model::ClusterContext;
    use crate::rules::test_kit::{
        Case, apply, context, findings, objects, pod, rule_path, sorted_rule_paths,
    };
    use crate::settings::{BuildPinning, Settings};

    const RULES: &[&str] = &[
        "windows-pod-without-os-selector",
        "windows-pod-without-toleration",
        "toleration-case-mismatch",
        "windows-pod-without-build-selector",
        "windows-build-mismatch",
        "windows-images-build-conflict",
        "windows-image-build-unknown",
        "windows-version-unsupported",
        "deprecated-os-label",
    ];
    const WIN: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";
    const WIN2019: &str = "mcr.microsoft.com/windows/servercore:ltsc2019";
    const PINNED: &str = "  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n";
    const TOLERATE: &str =
        "  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";

    fn containers(images: &[&str]) -> String {
        let list: Vec<String> = images
            .iter()
            .enumerate()
            .map(|(i, image)| format!("{{name: c{i}, image: \"{image}\"}}"))
            .collect();
        format!("  containers: [{}]\n", list.join(", "))
    }

    /// A DaemonSet's Windows pod, pinned by its controller to one node by `matchFields metadata.name`,
    /// with no OS selector, a toleration spelt in the wrong case and no build pin: where it may land is
    /// the node's to say, so without cluster context none of the placement rules judges it (its
    /// DaemonSet's template is judged instead); with the cluster, a Linux node it names is
    /// `schedulable-on-wrong-os`.
    #[test]
    fn a_pod_pinned_to_a_node_by_name_is_placed_by_the_cluster() {
        let pinned = |node: &str| {
            pod(&format!(
                "  tolerations: [{{key: os, operator: Equal, value: Windows, effect: NoSchedule}}]\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchFields: [{{key: metadata.name, operator: In, values: [{node}]}}]\n{}",
                containers(&[WIN])
            ))
        };
        let placement = &RULES[..4];
        let unseen = findings(&pinned("w0"), None, &Settings::default(), placement);
        assert!(unseen.is_empty(), "{unseen:?}");
        let cluster = context(
            "apiVersion: v1\nkind: Node\nmetadata: {name: l1, labels: {kubernetes.io/os: linux}}\nstatus: {nodeInfo: {operatingSystem: linux}}\n",
        );
        let on_linux = findings(
            &pinned("l1"),
            Some(&cluster),
            &Settings::default(),
            &["schedulable-on-wrong-os"],
        );
        assert_eq!(on_linux.len(), 1, "{on_linux:?}");
        // Not pinned by name: judged as every pod.
        let unpinned = pod(&format!(
            "  tolerations: [{{key: os, operator: Equal, value: Windows, effect: NoSchedule}}]\n{}",
            containers(&[WIN])
        ));
        let rules: Vec<String> = findings(&unpinned, None, &Settings::default(), placement)
            .into_iter()
            .map(|f| f.rule.to_string())
            .collect();
        assert_eq!(rules.len(), 4, "{rules:?}");
    }

    fn win_nodes(builds: &[&str], taint: &str) -> ClusterContext {
        let items: String = builds
            .iter()
            .enumerate()
            .map(|(i, b)| format!("- apiVersion: v1\n  kind: Node\n  metadata: {{name: w{i}, labels: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"{b}\"}}}}\n  spec: {{taints: [{taint}]}}\n"))
            .collect();
        context(&format!("apiVersion: v1\nkind: List\nitems:\n{items}"))
    }

    #[test]
    fn triggers_and_non_triggers() {
        let rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n---\n";
        let affinity_beta = "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: beta.kubernetes.io/os, operator: In, values: [windows]}]\n";
        let rows = vec![
            Case {
                reference: "unpinned Windows image",
                yaml: pod(&containers(&[WIN])),
                want: vec![
                    rule_path(
                        "windows-pod-without-build-selector",
                        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
                    ),
                    rule_path(
                        "windows-pod-without-os-selector",
                        "spec.nodeSelector[kubernetes.io/os]",
                    ),
                    rule_path("windows-pod-without-toleration", "spec.tolerations"),
                ],
            },
            Case {
                reference: "pinned and tolerating",
                yaml: pod(&format!("{PINNED}{TOLERATE}{}", containers(&[WIN]))),
                want: vec![],
            },
            Case {
                reference: "§1.6 spec.os.name alone does not pin",
                yaml: pod(&format!(
                    "  os: {{name: windows}}\n  nodeSelector: {{node.kubernetes.io/windows-build: \"10.0.20348\"}}\n{TOLERATE}{}",
                    containers(&[WIN])
                )),
                want: vec![rule_path(
                    "windows-pod-without-os-selector",
                    "spec.nodeSelector[kubernetes.io/os]",
                )],
            },
            Case {
                reference: "§4 the RuntimeClass pins and tolerates",
                yaml: format!(
                    "{rc}{}",
                    pod(&format!("  runtimeClassName: win\n{}", containers(&[WIN])))
                ),
                want: vec![],
            },
            Case {
                reference: "RuntimeClass unchecked: nothing it might provide",
                yaml: pod(&format!("  runtimeClassName: win\n{}", containers(&[WIN]))),
                want: vec![],
            },
            Case {
                reference: "§3.1 value case",
                yaml: pod(&format!(
                    "{PINNED}  tolerations: [{{key: os, value: Windows}}]\n{}",
                    containers(&[WIN])
                )),
                want: vec![
                    rule_path("toleration-case-mismatch", "spec.tolerations[0].value"),
                    rule_path("windows-pod-without-toleration", "spec.tolerations"),
                ],
            },
            Case {
                reference: "§3.1 key case",
                yaml: pod(&format!(
                    "{PINNED}  tolerations: [{{key: OS, operator: Exists}}]\n{}",
                    containers(&[WIN])
                )),
                want: vec![
                    rule_path("toleration-case-mismatch", "spec.tolerations[0].key"),
                    rule_path("windows-pod-without-toleration", "spec.tolerations"),
                ],
            },
            Case {
                reference: "§3.1 Exists tolerates any value",
                yaml: pod(&format!(
                    "{PINNED}  tolerations: [{{key: os, operator: Exists}}]\n{}",
                    containers(&[WIN])
                )),
                want: vec![],
            },
            Case {
                reference: "§5.3 2019 image on 2022",
                yaml: pod(&format!("{PINNED}{TOLERATE}{}", containers(&[WIN2019]))),
                want: vec![
                    rule_path(
                        "windows-build-mismatch",
                        "spec.nodeSelector[node.kubernetes.io/windows-build]",
                    ),
                    rule_path("windows-version-unsupported", "spec.containers[0].image"),
                ],
            },
            Case {
                reference: "§5.3 2022 image on 2025",
                yaml: pod(&format!(
                    "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.26100\"}}\n{TOLERATE}{}",
                    containers(&[WIN])
                )),
                want: vec![],
            },
            Case {
                reference: "§5.3 2019 + 2022 images",
                yaml: pod(&format!(
                    "{PINNED}{TOLERATE}{}",
                    containers(&[WIN2019, "mcr.microsoft.com/windows/nanoserver:ltsc2022"])
                )),
                want: vec![rule_path(
                    "windows-images-build-conflict",
                    "spec.containers[1].image",
                )],
            },
            Case {
                reference: "§5.3 conflicting images need no build selector",
                yaml: pod(&format!(
                    "  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{}",
                    containers(&[WIN2019, WIN])
                )),
                want: vec![rule_path(
                    "windows-images-build-conflict",
                    "spec.containers[1].image",
                )],
            },
            Case {
                reference: "unknown build of a private image",
                yaml: pod(&format!(
                    "  os: {{name: windows}}\n{PINNED}{TOLERATE}{}",
                    containers(&["registry.example.com/billing/app:4.2"])
                )),
                want: vec![rule_path(
                    "windows-image-build-unknown",
                    "spec.containers[0].image",
                )],
            },
            Case {
                reference: "one image in an init container and two containers: one finding, at the init container",
                yaml: pod(&format!(
                    "  os: {{name: windows}}\n{PINNED}{TOLERATE}  initContainers: [{{name: setup, image: registry.example.com/billing/app:4.2}}]\n{}",
                    containers(&[
                        "registry.example.com/billing/app:4.2",
                        WIN,
                        "registry.example.com/billing/app:4.2",
                        "registry.example.com/billing/other:1"
                    ])
                )),
                want: vec![
                    rule_path("windows-image-build-unknown", "spec.containers[3].image"),
                    rule_path(
                        "windows-image-build-unknown",
                        "spec.initContainers[0].image",
                    ),
                ],
            },
            Case {
                reference: "§2.2 HostProcess needs no build",
                yaml: pod(&format!(
                    "  hostNetwork: true\n  securityContext: {{windowsOptions: {{hostProcess: true}}}}\n  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{}",
                    containers(&[WIN2019])
                )),
                want: vec![],
            },
            Case {
                reference: "§7 beta label in nodeSelector and affinity",
                yaml: pod(&format!(
                    "  nodeSelector: {{beta.kubernetes.io/os: windows, beta.kubernetes.io/arch: amd64, node.kubernetes.io/windows-build: \"10.0.20348\"}}\n{affinity_beta}{TOLERATE}{}",
                    containers(&[WIN])
                )),
                want: vec![
                    rule_path(
                        "deprecated-os-label",
                        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key",
                    ),
                    rule_path(
                        "deprecated-os-label",
                        "spec.nodeSelector[beta.kubernetes.io/arch]",
                    ),
                    rule_path(
                        "deprecated-os-label",
                        "spec.nodeSelector[beta.kubernetes.io/os]",
                    ),
                ],
            },
        ];
        for Case {
            reference,
            yaml: text,
            want,
        } in rows
        {
            let got = sorted_rule_paths(&findings(&text, None, &Settings::default(), RULES));
            assert_eq!(got, want, "{reference}");
        }
    }

    /// A selector only Windows nodes carry pins the pod to them: the message says so, and why the OS
    /// label is still wanted; a selector Linux nodes carry too does not.
    #[test]
    fn a_windows_only_selector_is_named_in_the_os_selector_finding() {
        let nodes = context(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: akswin000000, labels: {kubernetes.io/os: windows, kubernetes.io/hostname: akswin000000, pool: mixed}}}\n- {apiVersion: v1, kind: Node, metadata: {name: aks-linux-0, labels: {kubernetes.io/os: linux, kubernetes.io/hostname: aks-linux-0, pool: mixed}}}\n",
        );
        let message = |selector: &str, ctx: Option<&ClusterContext>| {
            let text = pod(&format!(
                "  nodeSelector: {{{selector}}}\n{TOLERATE}{}",
                containers(&[WIN])
            ));
            let found = findings(
                &text,
                ctx,
                &Settings::default(),
                &["windows-pod-without-os-selector"],
            );
            assert_eq!(found.len(), 1, "{selector}: {found:?}");
            found[0].message.clone()
        };
        let m = message("kubernetes.io/hostname: akswin000000", Some(&nodes));
        assert!(
            m.contains("keeps it on the Windows node akswin000000"),
            "{m}"
        );
        assert!(
            m.contains("right only while that name is a Windows node's"),
            "{m}"
        );
        let m = message("kubernetes.azure.com/os-sku: Windows2022", None);
        assert!(m.contains("AKS's Windows2022 nodes"), "{m}");
        assert!(m.contains("the label is AKS's own"), "{m}");
        // Linux nodes carry it too, or an AKS Linux SKU: the pod can land on Linux.
        for (selector, ctx) in [
            ("pool: mixed", Some(&nodes)),
            ("kubernetes.azure.com/os-sku: Ubuntu", None),
        ] {
            let m = message(selector, ctx);
            assert!(
                m.contains("it can be placed on a Linux node"),
                "{selector}: {m}"
            );
        }
    }

    #[test]
    fn context_and_settings_change_the_verdict() {
        let text = pod(&format!(
            "  nodeSelector: {{kubernetes.io/os: windows}}\n{TOLERATE}{}",
            containers(&[WIN])
        ));
        let severity = |ctx: Option<&ClusterContext>, settings: &Settings| {
            findings(
                &text,
                ctx,
                settings,
                &["windows-pod-without-build-selector"],
            )
            .first()
            .map(|f| f.severity)
        };
        let taint = "{key: os, value: windows, effect: NoSchedule}";
        // Warning by default; error with several builds in the cluster or requireBuildSelector.
        assert_eq!(
            severity(None, &Settings::default()),
            Some(Severity::Warning)
        );
        assert_eq!(
            severity(
                Some(&win_nodes(&["10.0.20348"], taint)),
                &Settings::default()
            ),
            Some(Severity::Warning)
        );
        assert_eq!(
            severity(
                Some(&win_nodes(&["10.0.20348", "10.0.26100"], taint)),
                &Settings::default()
            ),
            Some(Severity::Error)
        );
        let strict = Settings {
            require_build_selector: true,
            ..Settings::default()
        };
        assert_eq!(severity(None, &strict), Some(Severity::Error));

        // The real nodes' taint replaces the settings' one.
        let ctx = win_nodes(
            &["10.0.20348"],
            "{key: windows, value: \"true\", effect: NoExecute}",
        );
        let found = findings(
            &text,
            Some(&ctx),
            &Settings::default(),
            &["windows-pod-without-toleration"],
        );
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("windows=true:NoExecute"),
            "{}",
            found[0].message
        );
        // An untainted Windows node in the context needs no toleration.
        let open = win_nodes(&["10.0.20348"], "");
        let untol = pod(&format!(
            "  nodeSelector: {{kubernetes.io/os: windows}}\n{}",
            containers(&[WIN])
        ));
        assert!(
            findings(
                &untol,
                Some(&open),
                &Settings::default(),
                &["windows-pod-without-toleration"]
            )
            .is_empty()
        );

        // supportedBuilds decides windows-version-unsupported.
        let old = pod(&format!(
            "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.17763\"}}\n{TOLERATE}{}",
            containers(&[WIN2019])
        ));
        assert_eq!(findings(&old, None, &Settings::default(), RULES).len(), 1);
        let with_2019 = Settings {
            supported_builds: vec!["10.0.17763".into()],
            ..Settings::default()
        };
        assert!(findings(&old, None, &with_2019, RULES).is_empty());
    }

    /// Applies every fix of `rules` in order and returns the repaired object as JSON text.
    fn repaired(text: &str, settings: &Settings) -> String {
        let mut value = objects(text).remove(0).value;
        for f in findings(text, None, settings, RULES) {
            if let Some(fix) = &f.fix {
                apply(&mut value, fix);
            }
        }
        value.to_string()
    }

    #[test]
    fn fixes_apply_together_and_repair() {
        let settings = Settings::default();
        let rows = [
            ("no nodeSelector, no tolerations", pod(&containers(&[WIN]))),
            (
                "case-mismatched toleration",
                pod(&format!(
                    "  tolerations: [{{key: os, value: Windows, effect: NoSchedule}}]\n{}",
                    containers(&[WIN])
                )),
            ),
            (
                "beta label",
                pod(&format!(
                    "  nodeSelector: {{beta.kubernetes.io/os: windows}}\n{TOLERATE}{}",
                    containers(&[WIN])
                )),
            ),
            (
                "existing nodeSelector",
                pod(&format!(
                    "  nodeSelector: {{team: a}}\n  tolerations: []\n{}",
                    containers(&[WIN])
                )),
            ),
        ];
        for (reference, text) in rows {
            let fixed = repaired(&text, &settings);
            let left = findings(&fixed, None, &settings, RULES);
            assert!(left.is_empty(), "{reference}: {fixed}\n{left:#?}");
            let value: serde_json::Value = serde_json::from_str(&fixed).expect("json");
            assert_eq!(
                value["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
                "{reference}"
            );
            // A range pin (buildPinning: range): affinity, never a build in the nodeSelector.
            assert!(
                value["spec"]["nodeSelector"]
                    .get("node.kubernetes.io/windows-build")
                    .is_none(),
                "{reference}"
            );
            assert_eq!(
                value["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"],
                serde_json::json!([{"matchExpressions": [{"key": "node.kubernetes.io/windows-build",
                    "operator": "In", "values": ["10.0.20348", "10.0.26100"]}]}]),
                "{reference}"
            );
            // buildPinning: exact puts the image's build in the nodeSelector instead.
            let exact = Settings {
                build_pinning: BuildPinning::Exact,
                ..Settings::default()
            };
            let value: serde_json::Value =
                serde_json::from_str(&repaired(&text, &exact)).expect("json");
            assert_eq!(
                value["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"], "10.0.20348",
                "{reference}"
            );
            assert!(value["spec"].get("affinity").is_none(), "{reference}");
        }
        // settings.runtimeClasses maps the build: the fix sets runtimeClassName instead.
        let mapped = Settings {
            runtime_classes: [("10.0.20348".to_string(), "windows-2022".to_string())].into(),
            ..Settings::default()
        };
        let fixed: serde_json::Value = serde_json::from_str(&repaired(
            &pod(&format!("{TOLERATE}{}", containers(&[WIN]))),
            &mapped,
        ))
        .expect("json");
        assert_eq!(fixed["spec"]["runtimeClassName"], "windows-2022");
        assert!(fixed["spec"].get("nodeSelector").is_none());
    }

    #[test]
    fn an_exact_pin_is_too_narrow_when_a_newer_supported_build_runs_the_image() {
        const NARROW: &[&str] = &["windows-build-pin-too-narrow"];
        let affinity = |values: &str| {
            format!(
                "  nodeSelector: {{kubernetes.io/os: windows}}\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchExpressions: [{{key: node.kubernetes.io/windows-build, operator: In, values: [{values}]}}]}}]}}}}}}\n"
            )
        };
        let pinned = |build: &str| {
            format!(
                "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"{build}\"}}\n"
            )
        };
        let rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n---\n";
        let defaults = Settings::default();
        let exact = Settings {
            build_pinning: BuildPinning::Exact,
            ..Settings::default()
        };
        let only_2022 = Settings {
            supported_builds: vec!["10.0.20348".into()],
            ..Settings::default()
        };
        let hostprocess = "  hostNetwork: true\n  securityContext: {windowsOptions: {hostProcess: true, runAsUserName: \"NT AUTHORITY\\\\SYSTEM\"}}\n";
        /// A workload, the settings and what the finding says (none: no finding).
        struct SettingsCase<'a> {
            reference: &'a str,
            text: String,
            settings: &'a Settings,
            want: Option<&'a str>,
        }
        let rows = vec![
            SettingsCase {
                reference: "a 2022 image pinned to 2022 by the nodeSelector",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN])
                )),
                settings: &defaults,
                want: Some("spec.nodeSelector[node.kubernetes.io/windows-build]"),
            },
            SettingsCase {
                reference: "In with one value",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    affinity("\"10.0.20348\""),
                    containers(&[WIN])
                )),
                settings: &defaults,
                want: Some(
                    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]",
                ),
            },
            SettingsCase {
                reference: "the range is not too narrow",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    affinity("\"10.0.20348\", \"10.0.26100\""),
                    containers(&[WIN])
                )),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "buildPinning: exact wants one build",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN])
                )),
                settings: &exact,
                want: None,
            },
            SettingsCase {
                reference: "no newer build runs a 2025 image",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.26100"),
                    containers(&["mcr.microsoft.com/windows/servercore:ltsc2025"])
                )),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "2025 is not supported",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN])
                )),
                settings: &only_2022,
                want: None,
            },
            SettingsCase {
                reference: "a pin that cannot run the image is windows-build-mismatch's",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN2019])
                )),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "the RuntimeClass's pin is the operator's choice",
                text: format!(
                    "{rc}{}",
                    pod(&format!(
                        "  runtimeClassName: win\n{TOLERATE}{}",
                        containers(&[WIN])
                    ))
                ),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "§4 a running pod carries its RuntimeClass's pin in its own nodeSelector",
                text: format!(
                    "{rc}{}",
                    pod(&format!(
                        "  runtimeClassName: win\n{}{TOLERATE}{}",
                        pinned("10.0.20348"),
                        containers(&[WIN])
                    ))
                ),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "a RuntimeClass that could not be looked up may pin it",
                text: pod(&format!(
                    "  runtimeClassName: win\n{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN])
                )),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "§2.2 HostProcess pods need no build match",
                text: pod(&format!(
                    "{hostprocess}{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&[WIN])
                )),
                settings: &defaults,
                want: None,
            },
            SettingsCase {
                reference: "no image build known",
                text: pod(&format!(
                    "{}{TOLERATE}{}",
                    pinned("10.0.20348"),
                    containers(&["contoso.azurecr.io/app:1"])
                )),
                settings: &defaults,
                want: None,
            },
        ];
        for SettingsCase {
            reference,
            text,
            settings,
            want,
        } in rows
        {
            let got = sorted_rule_paths(&findings(&text, None, settings, NARROW));
            let want: Vec<(String, String)> = want
                .into_iter()
                .map(|p| rule_path("windows-build-pin-too-narrow", p))
                .collect();
            assert_eq!(got, want, "{reference}");
        }
        // The message names both builds and the range; the fix widens the pin to it, and the repaired pod
        // has no finding left of the Windows-pod rules.
        let text = pod(&format!(
            "{}{TOLERATE}{}",
            pinned("10.0.20348"),
            containers(&[WIN])
        ));
        let found = findings(&text, None, &Settings::default(), NARROW);
        let m = &found[0].message;
        assert_eq!(found[0].severity, Severity::Info);
        assert!(
            m.contains("exactly one Windows build, Windows Server 2022 (10.0.20348), but"),
            "{m}"
        );
        assert!(
            m.contains("also run on Windows Server 2025 (10.0.26100)"),
            "{m}"
        );
        assert!(m.contains("required node affinity node.kubernetes.io/windows-build In [10.0.20348, 10.0.26100]"), "{m}");
        let mut value = objects(&text).remove(0).value;
        apply(&mut value, found[0].fix.as_ref().expect("fix"));
        assert_eq!(
            value["spec"]["nodeSelector"],
            serde_json::json!({"kubernetes.io/os": "windows"})
        );
        let fixed = value.to_string();
        let mut all = RULES.to_vec();
        all.extend(NARROW);
        let left = findings(&fixed, None, &Settings::default(), &all);
        assert!(left.is_empty(), "{fixed}\n{left:#?}");
    }

    #[test]
    fn one_unknown_image_in_several_containers_names_them_all() {
        let text = pod(&format!(
            "  os: {{name: windows}}\n{PINNED}{TOLERATE}  initContainers: [{{name: setup, image: registry.example.com/app:4.2}}]\n{}",
            containers(&["registry.example.com/app:4.2"])
        ));
        let found = findings(
            &text,
            None,
            &Settings::default(),
            &["windows-image-build-unknown"],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "spec.initContainers[0].image");
        assert!(
            found[0]
                .message
                .contains("so build compatibility is not checked for it (here and at spec.containers[0].image)."),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn a_case_mismatch_names_every_part_that_differs() {
        // (toleration, path, the message's part, what it says to write)
        let rows = [
            (
                "{key: os, operator: Equal, value: Windows, effect: NoSchedule}",
                "spec.tolerations[0].value",
                "This toleration's value `Windows` differs from the Windows taint os=windows:NoSchedule",
                "Write value `windows`.",
            ),
            (
                "{key: OS, operator: Equal, value: Windows, effect: NoSchedule}",
                "spec.tolerations[0].key",
                "This toleration's key `OS` and value `Windows` differ from",
                "Write key `os` and value `windows`.",
            ),
            (
                "{key: Os, operator: exists, effect: noSchedule}",
                "spec.tolerations[0].key",
                "This toleration's key `Os`, operator `exists` and effect `noSchedule` differ from",
                "Write key `os`, operator `Exists` and effect `NoSchedule`.",
            ),
        ];
        for (toleration, path, part, write) in rows {
            let text = pod(&format!(
                "  nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}}\n  tolerations: [{toleration}]\n{}",
                containers(&[WIN])
            ));
            let found = findings(
                &text,
                None,
                &Settings::default(),
                &["toleration-case-mismatch"],
            );
            assert_eq!(found.len(), 1, "{toleration}: {found:?}");
            assert_eq!(found[0].path, path, "{toleration}");
            assert!(
                found[0].message.starts_with(part) && found[0].message.ends_with(write),
                "{toleration}: {}",
                found[0].message
            );
            // The fix respells every part: the toleration then tolerates the taint.
            let mut value = objects(&text)[0].value.clone();
            apply(&mut value, found[0].fix.as_ref().expect("a fix"));
            let fixed = serde_json::to_string(&value).unwrap_or_default();
            let after = findings(
                &fixed,
                None,
                &Settings::default(),
                &["toleration-case-mismatch", "windows-pod-without-toleration"],
            );
            assert!(after.is_empty(), "{toleration}: {after:?}");
        }
    }
}
