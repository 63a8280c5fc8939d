//! The CEL of the API-validation family (`rules/src/rules/api_validation.rs`, and
//! `hostprocess-inconsistent` of `security_context.rs`): what the API server's own validation of pods
//! refuses, so that a policy says it at the workload, before its pods are refused. The forbidden fields are
//! the Rust check's own tables (`POD_FORBIDDEN`, `CONTAINER_FORBIDDEN`), written as CEL here.

use super::super::api_validation::{CONTAINER_FORBIDDEN, POD_FORBIDDEN, Presence};
use super::{CelSettings, RuleCel, has_path};
use crate::catalog::RuleId;

/// The family's exported rules.
pub(super) fn cel(_cx: &CelSettings) -> Vec<RuleCel> {
    let spec = "variables.spec";
    let pod: Vec<String> = POD_FORBIDDEN
        .iter()
        .map(|(steps, presence)| {
            let has = has_path(spec, steps);
            let at = format!("{spec}.{}", steps.join("."));
            match presence {
                Presence::True => format!("({has} && {at} == true)"),
                Presence::NonEmpty => format!("({has} && {at}.size() > 0)"),
                Presence::Set => format!("({has})"),
            }
        })
        .collect();
    let container: Vec<String> = CONTAINER_FORBIDDEN
        .iter()
        .map(|f| has_path("c", &["securityContext", f]))
        .collect();
    let pod_hp = has_path(spec, &["securityContext", "windowsOptions", "hostProcess"]);
    let own_hp = has_path("c", &["securityContext", "windowsOptions", "hostProcess"]);
    let effective = format!(
        "({own_hp} ? c.securityContext.windowsOptions.hostProcess : ({pod_hp} && {spec}.securityContext.windowsOptions.hostProcess))"
    );
    vec![
        // `windows_forbidden_fields`: spec.os.name windows and a Linux-only field.
        RuleCel {
            rule: RuleId::WindowsForbiddenField,
            fires: format!(
                "variables.declaredOs == 'windows' && ({} || variables.containers.exists(c, {}))",
                pod.join(" || "),
                container.join(" || ")
            ),
            message: None,
        },
        // `linux_forbidden_windows_options`: spec.os.name linux and windowsOptions anywhere.
        RuleCel {
            rule: RuleId::LinuxForbiddenWindowsOptions,
            fires: format!(
                "variables.declaredOs == 'linux' && ({} || variables.containers.exists(c, {}))",
                has_path(spec, &["securityContext", "windowsOptions"]),
                has_path("c", &["securityContext", "windowsOptions"])
            ),
            message: None,
        },
        // `host_process` of security_context.rs (`validateWindowsHostProcessPod`).
        RuleCel {
            rule: RuleId::HostProcessInconsistent,
            fires: format!(
                "({pod_hp} && variables.containers.exists(c, {own_hp} && c.securityContext.windowsOptions.hostProcess != {spec}.securityContext.windowsOptions.hostProcess)) || (variables.containers.exists(c, {effective}) && (!variables.containers.all(c, {effective}) || !(has({spec}.hostNetwork) && {spec}.hostNetwork == true)))"
            ),
            message: None,
        },
    ]
}
