//! The CEL of the Windows-pod family (`rules/src/rules/windows_pods.rs`), without cluster context: the
//! taints are the settings' `windowsTaints`, the builds the settings' and the table's.

use super::{CelSettings, RuleCel, has_path, tolerates, tolerates_after_respelling};
use crate::catalog::RuleId;
use crate::placement::{BETA_ARCH_LABEL, BETA_OS_LABEL};

/// The family's exported rules.
pub(super) fn cel(cx: &CelSettings) -> Vec<RuleCel> {
    let windows = "variables.os == 'windows'";
    // A taint no toleration of the pod tolerates (`missing_windows_tolerations`).
    let untolerated: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| {
            format!(
                "!variables.tolerations.exists(u, {})",
                tolerates("u", taint)
            )
        })
        .collect();
    // A toleration that tolerates a taint nothing tolerates once respelt (`toleration_case_mismatch`).
    let almost: Vec<String> = cx
        .taints
        .iter()
        .map(|taint| {
            format!(
                "({} && !variables.tolerations.exists(u, {}))",
                tolerates_after_respelling("t", taint),
                tolerates("u", taint)
            )
        })
        .collect();
    let or_false = |parts: Vec<String>| {
        if parts.is_empty() {
            "false".to_string()
        } else {
            format!("({})", parts.join(" || "))
        }
    };
    let beta = format!("['{BETA_OS_LABEL}', '{BETA_ARCH_LABEL}']");
    let spec = "variables.spec";
    let preferred = has_path(
        spec,
        &[
            "affinity",
            "nodeAffinity",
            "preferredDuringSchedulingIgnoredDuringExecution",
        ],
    );
    vec![
        // `windows_pod_without_os_selector` (`plan::windows_needs_os_selector`).
        RuleCel {
            rule: RuleId::WindowsPodWithoutOsSelector,
            fires: format!(
                "{windows} && variables.osPin == 'none' && !variables.runtimeClassUnchecked"
            ),
        },
        // `windows_pod_without_toleration`.
        RuleCel {
            rule: RuleId::WindowsPodWithoutToleration,
            fires: format!(
                "{windows} && !variables.runtimeClassUnchecked && {}",
                or_false(untolerated)
            ),
        },
        // `toleration_case_mismatch` (the RuntimeClass's tolerations need cluster context).
        RuleCel {
            rule: RuleId::TolerationCaseMismatch,
            fires: format!(
                "{windows} && variables.tolerations.exists(t, {})",
                or_false(almost)
            ),
        },
        // `windows_pod_without_build_selector` (`plan::needs_build_selector`).
        RuleCel {
            rule: RuleId::WindowsPodWithoutBuildSelector,
            fires: format!(
                "{windows} && !variables.hostProcess && !variables.buildPinned && !variables.runtimeClassUnchecked && (variables.imageBuilds.size() == 0 || variables.imageHosts.size() > 0)"
            ),
        },
        // `windows_build_mismatch`, unless `windows_images_build_conflict` fires.
        RuleCel {
            rule: RuleId::WindowsBuildMismatch,
            fires: format!(
                "{windows} && !variables.hostProcess && !(variables.imageBuilds.size() > 0 && variables.imageHosts.size() == 0) && variables.pinnedBuildMismatch"
            ),
        },
        // `deprecated_os_label`: any pod, in the nodeSelector or node affinity.
        RuleCel {
            rule: RuleId::DeprecatedOsLabel,
            fires: format!(
                "(has({spec}.nodeSelector) && {beta}.exists(k, k in {spec}.nodeSelector)) || variables.terms.exists(t, has(t.matchExpressions) && t.matchExpressions.exists(r, r.key in {beta})) || ({preferred} && {spec}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.exists(p, has(p.preference) && has(p.preference.matchExpressions) && p.preference.matchExpressions.exists(r, r.key in {beta})))"
            ),
        },
    ]
}
