//! The CEL of the Linux-pod family (`rules/src/rules/linux_pods.rs`).

use super::PINNED_BY_NAME;
use super::{CelSettings, FixCel, RuleCel, json_patch, pointer_key, str_map, tolerates};
use crate::catalog::RuleId;

/// The family's exported rules.
pub(super) fn cel(cx: &CelSettings) -> Vec<RuleCel> {
    // `linux_pod_tolerates_windows_taint`: a Linux pod not pinned to an OS, one of whose tolerations
    // tolerates a Windows taint of the settings (`windows_taints` without cluster context).
    let any: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| tolerates("t", taint))
        .collect();
    let tolerated = if any.is_empty() {
        "false".to_string()
    } else {
        format!("variables.tolerations.exists(t, {})", any.join(" || "))
    };
    vec![
        // `linux_pod_without_os_selector` (`fix_plan::linux_needs_os_selector`).
        RuleCel {
            rule: RuleId::LinuxPodWithoutOsSelector,
            fires: LINUX_NEEDS_OS_SELECTOR.into(),
            message: None,
        },
        RuleCel {
            rule: RuleId::LinuxPodToleratesWindowsTaint,
            // A pod pinned to nodes by name (a DaemonSet's) is judged only with cluster context.
            fires: format!("variables.os == 'linux' && variables.osPin == 'none' && !{PINNED_BY_NAME} && {tolerated}"),
            message: (!cx.taints.is_empty()).then(|| {
                // The first toleration that tolerates a Windows taint, and the first it tolerates.
                let each: Vec<String> = cx
                    .taints
                    .iter()
                    .map(|taint| {
                        format!(
                            "({} ? [{}] : [])",
                            tolerates("t", taint),
                            super::image::lit(&crate::schedule::taints::taint_display(taint))
                        )
                    })
                    .collect();
                format!(
                    "'This toleration tolerates the Windows taint ' + variables.tolerations.filter(t, {}).map(t, ({})[0])[0] + ', and nothing else keeps this Linux pod off Windows nodes, so it can be placed on one where it cannot run. Keep the toleration if other taints need it, and add the nodeSelector kubernetes.io/os: linux.'",
                    any.join(" || "),
                    each.join(" + ")
                )
            }),
        },
    ]
}

/// `fix_plan::linux_needs_os_selector`.
const LINUX_NEEDS_OS_SELECTOR: &str =
    "variables.os == 'linux' && variables.osPin == 'none' && !variables.runtimeClassUnchecked";

/// The family's fixes: `linux_selector_fix` (`fix_plan::selector_ops` with kubernetes.io/os: linux), not on
/// a pod that is Linux only by presumption (no signal names its OS) unless setting `presumeLinux` says
/// to (`linux_fix`).
pub(super) fn fixes(_cx: &CelSettings, settings: &crate::settings::Settings) -> Vec<FixCel> {
    let needed = if settings.presume_linux {
        LINUX_NEEDS_OS_SELECTOR.to_string()
    } else {
        format!("{LINUX_NEEDS_OS_SELECTOR} && variables.strongSignals.size() > 0")
    };
    vec![FixCel {
        rule: RuleId::LinuxPodWithoutOsSelector,
        patches: selector_patch(&needed, "linux"),
    }]
}

/// `fix_plan::selector_ops` for kubernetes.io/os: `os` when `needed`: the key added to the nodeSelector,
/// or the nodeSelector added with it.
pub(super) fn selector_patch(needed: &str, os: &str) -> String {
    let label = crate::placement::OS_LABEL;
    format!(
        "{needed} ? [has(variables.spec.nodeSelector) ? {} : {}] : []",
        json_patch(
            "add",
            &format!("variables.prefix + '/nodeSelector/{}'", pointer_key(label)),
            &super::image::lit(os)
        ),
        json_patch(
            "add",
            "variables.prefix + '/nodeSelector'",
            &str_map(&[(label, os)])
        )
    )
}
