//! [`RuleId`]: the rules of the catalogue as a type, so that a misspelt rule id is a compile error.
//!
//! Findings carry the id as a string on the wire (`Finding.rule`, JSON, SARIF, settings' `disabledRules`);
//! inside the crate every rule that emits a finding names it by [`RuleId`], and the catalogue's rows
//! ([`super::catalog::RULES`]) are keyed by it. The kebab-case string ([`RuleId::as_str`]) is the stable id.
//!
//! ```
//! use winplace_rules::rules::RuleId;
//! assert_eq!(RuleId::OsConflict.as_str(), "os-conflict");
//! assert_eq!("os-conflict".parse::<RuleId>(), Ok(RuleId::OsConflict));
//! assert!("os-conflcit".parse::<RuleId>().is_err());
//! assert_eq!(serde_json::to_string(&RuleId::UnknownField).ok().as_deref(), Some("\"unknown-field\""));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Declares [`RuleId`] from one list, so that its variants, [`RuleId::ALL`] and [`RuleId::as_str`] cannot
/// disagree.
macro_rules! rule_ids {
    ($($variant:ident = $id:literal,)*) => {
        /// A rule of the catalogue. Variants are in catalogue order (grouped by family, as
        /// [`super::catalog::RULES`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RuleId {
            $(
                #[doc = concat!("`", $id, "`.")]
                $variant,
            )*
        }

        impl RuleId {
            /// Every rule, in catalogue order.
            pub const ALL: [RuleId; [$($id),*].len()] = [$(RuleId::$variant),*];

            /// The stable kebab-case id (`windows-pod-without-os-selector`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(RuleId::$variant => $id,)*
                }
            }
        }
    };
}

rule_ids! {
    // OS identity
    OsNameInvalid = "os-name-invalid",
    OsConflict = "os-conflict",
    MixedOsContainers = "mixed-os-containers",
    // Windows pods
    WindowsPodWithoutOsSelector = "windows-pod-without-os-selector",
    WindowsPodWithoutToleration = "windows-pod-without-toleration",
    TolerationCaseMismatch = "toleration-case-mismatch",
    WindowsPodWithoutBuildSelector = "windows-pod-without-build-selector",
    WindowsBuildMismatch = "windows-build-mismatch",
    WindowsBuildPinTooNarrow = "windows-build-pin-too-narrow",
    WindowsImagesBuildConflict = "windows-images-build-conflict",
    WindowsImageBuildUnknown = "windows-image-build-unknown",
    ImageManifestUnresolved = "image-manifest-unresolved",
    WindowsVersionUnsupported = "windows-version-unsupported",
    DeprecatedOsLabel = "deprecated-os-label",
    // Linux pods
    LinuxPodWithoutOsSelector = "linux-pod-without-os-selector",
    LinuxPodToleratesWindowsTaint = "linux-pod-tolerates-windows-taint",
    // RuntimeClass
    RuntimeClassNotFound = "runtimeclass-not-found",
    RuntimeClassSelectorConflict = "runtimeclass-selector-conflict",
    RuntimeClassOverheadMismatch = "runtimeclass-overhead-mismatch",
    RuntimeClassDeprecatedApi = "runtimeclass-deprecated-api",
    RuntimeClassDockerHandler = "runtimeclass-docker-handler",
    RuntimeClassHyperVHandler = "runtimeclass-hyperv-handler",
    RuntimeClassUnchecked = "runtimeclass-unchecked",
    // API validation the cluster would reject
    WindowsForbiddenField = "windows-forbidden-field",
    WindowsUnsupportedField = "windows-unsupported-field",
    LinuxForbiddenWindowsOptions = "linux-forbidden-windows-options",
    WindowsUnsupportedFeature = "windows-unsupported-feature",
    RunAsUserNameInvalid = "run-as-user-name-invalid",
    GmsaCredentialSpecInvalid = "gmsa-credential-spec-invalid",
    HostProcessInconsistent = "hostprocess-inconsistent",
    StopSignalInvalid = "stop-signal-invalid",
    TolerationInvalid = "toleration-invalid",
    NodeAffinityInvalid = "node-affinity-invalid",
    UnknownField = "unknown-field",
    ManifestInvalid = "manifest-invalid",
    WorkloadApiVersionRemoved = "workload-api-version-removed",
    NotChecked = "not-checked",
    // Cluster
    NoSchedulableNode = "no-schedulable-node",
    SchedulableOnWrongOs = "schedulable-on-wrong-os",
    SchedulableOnIncompatibleBuild = "schedulable-on-incompatible-build",
    WindowsNodeUntainted = "windows-node-untainted",
    WindowsNodeMissingBuildLabel = "windows-node-missing-build-label",
    WindowsNodeBuildLabelMismatch = "windows-node-build-label-mismatch",
    WindowsNodeUnsupportedVersion = "windows-node-unsupported-version",
    NodePoolBuildUnknown = "node-pool-build-unknown",
    // Live state
    PodOnWrongOs = "pod-on-wrong-os",
    PodOnIncompatibleBuild = "pod-on-incompatible-build",
    PodPendingPlacement = "pod-pending-placement",
    PodImageOsError = "pod-image-os-error",
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The error of parsing a [`RuleId`]: the text is not the id of a rule of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a winplace rule id")]
pub struct UnknownRuleId(pub String);

impl FromStr for RuleId {
    type Err = UnknownRuleId;

    /// Accepts exactly the kebab-case id of a rule (case-sensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RuleId::ALL
            .into_iter()
            .find(|id| id.as_str() == s)
            .ok_or_else(|| UnknownRuleId(s.to_string()))
    }
}

impl Serialize for RuleId {
    /// The kebab-case id, as a string.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for RuleId {
    /// From the kebab-case id; any other string is an error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for id in RuleId::ALL {
            assert!(seen.insert(id.as_str()), "duplicate id {id}");
            assert_eq!(id.as_str().parse::<RuleId>(), Ok(id));
            assert_eq!(id.to_string(), id.as_str());
            let json = serde_json::to_string(&id).ok();
            assert_eq!(json, Some(format!("\"{}\"", id.as_str())));
            assert_eq!(
                json.and_then(|j| serde_json::from_str::<RuleId>(&j).ok()),
                Some(id)
            );
        }
    }

    #[test]
    fn all_is_in_declaration_order() {
        // The catalogue reads a rule's row at its index (`catalog::meta`).
        for (i, id) in RuleId::ALL.into_iter().enumerate() {
            assert_eq!(id as usize, i, "{id}");
        }
    }

    #[test]
    fn unknown_ids_are_errors() {
        for bad in [
            "",
            "os_conflict",
            "OS-CONFLICT",
            "os-conflict ",
            "no-such-rule",
        ] {
            assert_eq!(
                bad.parse::<RuleId>(),
                Err(UnknownRuleId(bad.to_string())),
                "{bad:?}"
            );
        }
        assert!(serde_json::from_str::<RuleId>("\"os-conflcit\"").is_err());
        assert_eq!(
            UnknownRuleId("x".into()).to_string(),
            "`x` is not a winplace rule id"
        );
    }
}
