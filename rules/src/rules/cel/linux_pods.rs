//! The CEL of the Linux-pod family (`rules/src/rules/linux_pods.rs`).

use super::{CelSettings, RuleCel, tolerates};
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
    vec![RuleCel {
        rule: RuleId::LinuxPodToleratesWindowsTaint,
        fires: format!("variables.os == 'linux' && variables.osPin == 'none' && {tolerated}"),
    }]
}
