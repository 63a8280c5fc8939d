//! The CEL of the OS-identity family (`rules/src/rules/os_identity.rs`): the contradiction and the
//! mixed-OS containers of the placement, read from the shared [`super::variables`].

use super::{CelSettings, RuleCel};
use crate::catalog::RuleId;

/// The family's exported rules.
pub(super) fn cel(_cx: &CelSettings) -> Vec<RuleCel> {
    vec![
        // `os_conflict`: two strong signals disagree (`PodOs::Conflict`).
        RuleCel {
            rule: RuleId::OsConflict,
            fires: "variables.os == 'conflict'".into(),
            message: None,
        },
        // `mixed_os_containers`: Windows and Linux images in one pod (`Placement::mixed`).
        RuleCel {
            rule: RuleId::MixedOsContainers,
            fires: "variables.minority != ''".into(),
            message: None,
        },
    ]
}
