//! Every rule, declared once: its [`RuleId`] and its metadata ([`RuleMeta`], served as
//! [`super::RULES`]) come from one list, so that a misspelt rule id is a compile error and no second
//! table can disagree with the first.
//!
//! Findings carry the id as a string on the wire (`Finding.rule`, JSON, SARIF, settings' `disabledRules`);
//! inside the crate every rule that emits a finding names it by [`RuleId`]. The kebab-case string
//! ([`RuleId::as_str`]) is the stable id.
//!
//! Adding a rule (CONTRIBUTING.md, "Adding a rule"): its declaration here, the family file that emits it,
//! its page `docs/rules/<id>.md` and its corpus case; the tests fail when the page or the case is missing.
//!
//! ```
//! use winplace_rules::catalog::RuleId;
//! assert_eq!(RuleId::OsConflict.as_str(), "os-conflict");
//! assert_eq!("os-conflict".parse::<RuleId>(), Ok(RuleId::OsConflict));
//! assert!("os-conflcit".parse::<RuleId>().is_err());
//! assert_eq!(serde_json::to_string(&RuleId::UnknownField).ok().as_deref(), Some("\"unknown-field\""));
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Family, Needs, RuleMeta};
use crate::finding::Severity;

/// Declares [`RuleId`] and [`RULES`] from one list of rules, each with named fields, so that the variants,
/// [`RuleId::ALL`], [`RuleId::as_str`] and the catalogue cannot disagree.
macro_rules! declare_rules {
    ($(
        $variant:ident {
            id: $id:literal,
            family: $family:ident,
            severity: $severity:ident,
            needs: $needs:ident,
            fixable: $fixable:literal,
            title: $title:literal,
            summary: $summary:literal $(,)?
        }
    )*) => {
        /// A rule of the catalogue. Variants are in catalogue order (grouped by family, as [`RULES`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum RuleId {
            $(
                #[doc = concat!("`", $id, "`: ", $title, ".")]
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

        /// Every rule's metadata, one row per [`RuleId`] at the index of its variant (the catalogue,
        /// [`super::RULES`]).
        pub const RULES: &[RuleMeta] = &[
            $(
                RuleMeta {
                    rule: RuleId::$variant,
                    id: $id,
                    family: Family::$family,
                    severity: Severity::$severity,
                    title: $title,
                    summary: $summary,
                    fixable: $fixable,
                    needs: Needs::$needs,
                    needs_context: Needs::$needs.is_context(),
                },
            )*
        ];
    };
}

// Grouped by family in catalogue order (docs/rules/README.md). `severity` is the default (settings'
// `severity` overrides it; a rule may raise it with cluster context, as its page says); `needs` is what
// the rule judges beyond the manifest (what its corpus case and its page's example give it); `fixable`,
// whether its findings can carry a fix (`winplace check --fix`, admission `mutate`).
declare_rules! {
    // OS identity
    OsNameInvalid {
        id: "os-name-invalid",
        family: OsIdentity,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Invalid spec.os.name",
        summary: "spec.os.name is not exactly `linux` or `windows` (values are case-sensitive); the API server rejects the pod.",
    }
    OsConflict {
        id: "os-conflict",
        family: OsIdentity,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Contradicting OS signals",
        summary: "The pod's OS signals disagree (spec.os.name, kubernetes.io/os selectors, its RuntimeClass, its images); it is rejected, lands on the wrong OS or never schedules.",
    }
    MixedOsContainers {
        id: "mixed-os-containers",
        family: OsIdentity,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Windows and Linux containers in one pod",
        summary: "The pod runs both Windows and Linux images; a pod runs on one node, so some of its containers can never start.",
    }
    // Windows pods
    WindowsPodWithoutOsSelector {
        id: "windows-pod-without-os-selector",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Windows pod without OS selector",
        summary: "A Windows pod has no kubernetes.io/os: windows nodeSelector or required node affinity (spec.os.name alone does not count: the scheduler ignores it), so it can be scheduled onto a Linux node.",
    }
    WindowsPodWithoutToleration {
        id: "windows-pod-without-toleration",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Windows pod does not tolerate the Windows taint",
        summary: "The pod does not tolerate the taint on the Windows nodes, so the scheduler keeps it off them and it stays Pending.",
    }
    TolerationCaseMismatch {
        id: "toleration-case-mismatch",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Toleration differs from the taint only in letter case",
        summary: "A toleration matches a Windows taint except for letter case (`Windows` vs `windows`); taint keys and values are compared case-sensitively, so it tolerates nothing.",
    }
    WindowsPodWithoutBuildSelector {
        id: "windows-pod-without-build-selector",
        family: WindowsPods,
        severity: Warning,
        needs: Manifest,
        fixable: true,
        title: "Windows pod without build selector",
        summary: "The pod does not pin a node.kubernetes.io/windows-build; process-isolated containers only start on hosts whose build can run the image. Error when the cluster has more than one Windows build.",
    }
    WindowsBuildMismatch {
        id: "windows-build-mismatch",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Selected Windows build cannot run the image",
        summary: "The Windows build the pod is pinned to cannot run one of its images with process isolation; the container fails to start there.",
    }
    WindowsBuildPinTooNarrow {
        id: "windows-build-pin-too-narrow",
        family: WindowsPods,
        severity: Info,
        needs: Manifest,
        fixable: true,
        title: "Windows build pin too narrow for an in-place upgrade",
        summary: "The pod is pinned to exactly one Windows build although a newer supported build runs its images; when its pool is upgraded in place, the nodes take the new build label and the pods can never be scheduled again. Pin the range of builds that run the images instead (off with buildPinning: exact). Info by default (an exact pin is valid today); `severity` raises it.",
    }
    WindowsImagesBuildConflict {
        id: "windows-images-build-conflict",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "No Windows build runs all images",
        summary: "The pod's Windows images were built for builds that no single host can run together, so at least one container fails on any node.",
    }
    WindowsImageBuildUnknown {
        id: "windows-image-build-unknown",
        family: WindowsPods,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows image of unknown build",
        summary: "A Windows image's build cannot be told from its name (floating or private tag), so build compatibility is not checked for it.",
    }
    ImageManifestUnresolved {
        id: "image-manifest-unresolved",
        family: WindowsPods,
        severity: Info,
        needs: Registry,
        fixable: false,
        title: "Image manifest could not be read",
        summary: "With registry resolution on (`winplace check --resolve-images`, the server), an image whose manifest could not be read (unauthorized, not found, timeout) keeps the classification its name gives.",
    }
    WindowsPodUndeclaredFeature {
        id: "windows-pod-undeclared-feature",
        family: WindowsPods,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Windows pod needing a feature Windows nodes never declare",
        summary: "The pod is bound to Windows nodes but its spec needs a node declared feature (Kubernetes 1.37, status.declaredFeatures) that Windows nodes never declare, or that no Windows node of the cluster declares: the scheduler's NodeDeclaredFeatures filter rejects every Windows node and the pod stays Pending.",
    }
    WindowsVersionUnsupported {
        id: "windows-version-unsupported",
        family: WindowsPods,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows build outside the supported list",
        summary: "Every Windows build the pod can run on is outside the supported builds (settings supportedBuilds; default Windows Server 2022 and 2025).",
    }
    DeprecatedOsLabel {
        id: "deprecated-os-label",
        family: WindowsPods,
        severity: Warning,
        needs: Manifest,
        fixable: true,
        title: "Deprecated beta OS/arch label",
        summary: "A selector uses beta.kubernetes.io/os or beta.kubernetes.io/arch; use the GA labels kubernetes.io/os and kubernetes.io/arch.",
    }
    // Linux pods
    LinuxPodWithoutOsSelector {
        id: "linux-pod-without-os-selector",
        family: LinuxPods,
        severity: Warning,
        needs: Manifest,
        fixable: true,
        title: "Linux pod without OS selector",
        summary: "A Linux pod has no kubernetes.io/os: linux constraint, so only the Windows nodes' taint keeps it off them.",
    }
    LinuxPodToleratesWindowsTaint {
        id: "linux-pod-tolerates-windows-taint",
        family: LinuxPods,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Linux pod tolerates the Windows taint",
        summary: "A Linux pod without an OS selector tolerates the Windows nodes' taint (e.g. `operator: Exists` with no key), so it can be placed on Windows nodes where it cannot run.",
    }
    // RuntimeClass
    RuntimeClassNotFound {
        id: "runtimeclass-not-found",
        family: RuntimeClass,
        severity: Error,
        needs: Cluster,
        fixable: false,
        title: "RuntimeClass not found",
        summary: "The pod names a RuntimeClass the cluster does not have; RuntimeClass admission rejects the pod.",
    }
    RuntimeClassSelectorConflict {
        id: "runtimeclass-selector-conflict",
        family: RuntimeClass,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Pod nodeSelector conflicts with its RuntimeClass",
        summary: "The pod's nodeSelector and its RuntimeClass's scheduling.nodeSelector give the same key different values; RuntimeClass admission rejects the pod.",
    }
    RuntimeClassOverheadMismatch {
        id: "runtimeclass-overhead-mismatch",
        family: RuntimeClass,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Pod overhead does not match its RuntimeClass",
        summary: "The pod sets spec.overhead but it differs from its RuntimeClass's overhead.podFixed (or the RuntimeClass defines none); RuntimeClass admission rejects the pod.",
    }
    RuntimeClassDeprecatedApi {
        id: "runtimeclass-deprecated-api",
        family: RuntimeClass,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "RuntimeClass uses node.k8s.io/v1beta1",
        summary: "The RuntimeClass is written as node.k8s.io/v1beta1, which is no longer served since Kubernetes 1.25; use node.k8s.io/v1.",
    }
    RuntimeClassDockerHandler {
        id: "runtimeclass-docker-handler",
        family: RuntimeClass,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "RuntimeClass uses the docker handler",
        summary: "The RuntimeClass handler is `docker`; dockershim is gone (Kubernetes 1.24) and containerd on Windows names its runtime `runhcs-wcow-process`.",
    }
    RuntimeClassHyperVHandler {
        id: "runtimeclass-hyperv-handler",
        family: RuntimeClass,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "RuntimeClass uses Hyper-V isolation",
        summary: "The RuntimeClass handler is containerd's Hyper-V runtime `runhcs-wcow-hypervisor`; Kubernetes supports only process isolation for Windows containers.",
    }
    RuntimeClassUnchecked {
        id: "runtimeclass-unchecked",
        family: RuntimeClass,
        severity: Info,
        needs: Manifest,
        fixable: false,
        title: "RuntimeClass not checked",
        summary: "The pod names a RuntimeClass that could not be checked because no cluster context was given; its scheduling and overhead were not taken into account.",
    }
    // API validation the cluster would reject
    WindowsForbiddenField {
        id: "windows-forbidden-field",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Field forbidden on a Windows pod",
        summary: "The pod has spec.os.name: windows and sets a field the API server forbids on Windows pods (e.g. runAsUser, privileged, hostPID: true); the pod is rejected.",
    }
    WindowsUnsupportedField {
        id: "windows-unsupported-field",
        family: ApiValidation,
        severity: Warning,
        needs: Manifest,
        fixable: true,
        title: "Linux-only field on an inferred Windows pod",
        summary: "A pod that is Windows by its images or selectors but has no spec.os sets a field that is forbidden on Windows pods; it is accepted but has no effect or fails on the node.",
    }
    LinuxForbiddenWindowsOptions {
        id: "linux-forbidden-windows-options",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "windowsOptions on a Linux pod",
        summary: "The pod has spec.os.name: linux and sets securityContext.windowsOptions; the API server rejects the pod.",
    }
    WindowsUnsupportedFeature {
        id: "windows-unsupported-feature",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Feature Windows nodes do not support",
        summary: "A Windows pod uses a feature Windows nodes do not provide (hugepages, memory-backed emptyDir, mount propagation, raw block volumes, ClusterFirstWithHostNet, hostNetwork without HostProcess, pod-level resources, in-place resize through resizePolicy).",
    }
    RunAsUserNameInvalid {
        id: "run-as-user-name-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Invalid runAsUserName",
        summary: "windowsOptions.runAsUserName breaks the API server's rules (e.g. `user@domain` UPN form, two backslashes, forbidden characters); the pod is rejected.",
    }
    GmsaCredentialSpecInvalid {
        id: "gmsa-credential-spec-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Invalid gMSA credential spec",
        summary: "windowsOptions.gmsaCredentialSpecName is not a DNS subdomain, or gmsaCredentialSpec is empty or larger than 64 KiB; the pod is rejected.",
    }
    HostProcessInconsistent {
        id: "hostprocess-inconsistent",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Inconsistent HostProcess pod",
        summary: "A HostProcess pod breaks the API server's rules: every container must be HostProcess, hostNetwork must be true, and pod and container values must agree; the pod is rejected.",
    }
    StopSignalInvalid {
        id: "stop-signal-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Invalid lifecycle.stopSignal",
        summary: "A container's lifecycle.stopSignal is set without spec.os.name, or is not allowed for the pod's OS (Windows allows only SIGKILL and SIGTERM); the pod is rejected.",
    }
    TolerationInvalid {
        id: "toleration-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Invalid toleration",
        summary: "A toleration breaks the API server's rules (e.g. empty key without `Exists`, `Exists` with a value, tolerationSeconds without NoExecute); the pod is rejected.",
    }
    NodeAffinityInvalid {
        id: "node-affinity-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Invalid node affinity",
        summary: "Required or preferred node affinity breaks the API server's rules (e.g. no terms, `In` without values, `Gt` with several values); the pod is rejected.",
    }
    UnknownField {
        id: "unknown-field",
        family: ApiValidation,
        severity: Warning,
        needs: Manifest,
        fixable: true,
        title: "Unknown field where placement is decided",
        summary: "An unknown key (e.g. `Effect:`) in tolerations, node affinity, securityContext or RuntimeClass scheduling; depending on the client it is rejected or silently dropped, and the toleration then means something else.",
    }
    ManifestInvalid {
        id: "manifest-invalid",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Field has the wrong type",
        summary: "A field has the wrong type (e.g. a string where a boolean is expected), so the API server would reject the object.",
    }
    WorkloadApiVersionRemoved {
        id: "workload-api-version-removed",
        family: ApiValidation,
        severity: Error,
        needs: Manifest,
        fixable: true,
        title: "Workload in an API version no longer served",
        summary: "A Deployment, DaemonSet, ReplicaSet or StatefulSet in extensions/v1beta1, apps/v1beta1 or apps/v1beta2 (removed in Kubernetes 1.16), or a CronJob in batch/v1beta1 (removed in 1.25): the API server refuses the manifest; use apps/v1 (with spec.selector) or batch/v1.",
    }
    NotChecked {
        id: "not-checked",
        family: ApiValidation,
        severity: Info,
        needs: Manifest,
        fixable: false,
        title: "File with nothing to check",
        summary: "A checked file holds no workload, Node, RuntimeClass or node pool (only a ConfigMap, a Service, a CRD…): nothing in it was checked, so its clean result says nothing. Files given as cluster context never get it.",
    }
    // Cluster
    NoSchedulableNode {
        id: "no-schedulable-node",
        family: Cluster,
        severity: Error,
        needs: Cluster,
        fixable: false,
        title: "No node can take the pod",
        summary: "No node passes the pod's nodeSelector, required node affinity and taints, so it stays Pending; the finding says why for each group of nodes.",
    }
    SchedulableOnWrongOs {
        id: "schedulable-on-wrong-os",
        family: Cluster,
        severity: Error,
        needs: Cluster,
        fixable: false,
        title: "Pod can be scheduled on a node of the wrong OS",
        summary: "Some node the scheduler could pick runs a different OS than the pod needs; if the pod lands there, it cannot run.",
    }
    SchedulableOnIncompatibleBuild {
        id: "schedulable-on-incompatible-build",
        family: Cluster,
        severity: Error,
        needs: Cluster,
        fixable: false,
        title: "Pod can be scheduled on an incompatible Windows build",
        summary: "Some Windows node the scheduler could pick has a build that cannot run the pod's images with process isolation.",
    }
    WindowsNodeUntainted {
        id: "windows-node-untainted",
        family: Cluster,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows node without taint",
        summary: "A Windows node lacks the Windows taint (settings windowsTaints), so Linux pods without an OS selector can be scheduled onto it.",
    }
    WindowsNodeMissingBuildLabel {
        id: "windows-node-missing-build-label",
        family: Cluster,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows node without build label",
        summary: "A Windows node has no node.kubernetes.io/windows-build label, so pods pinned to a build never land on it.",
    }
    WindowsNodeBuildLabelMismatch {
        id: "windows-node-build-label-mismatch",
        family: Cluster,
        severity: Error,
        needs: Manifest,
        fixable: false,
        title: "Windows node build label differs from its kernel version",
        summary: "The node's node.kubernetes.io/windows-build label disagrees with the build in status.nodeInfo.kernelVersion, so build-pinned pods land on a host that cannot run them.",
    }
    WindowsNodeUnsupportedVersion {
        id: "windows-node-unsupported-version",
        family: Cluster,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows node runs an unsupported version",
        summary: "The node's Windows build is outside the supported builds (settings supportedBuilds; default Windows Server 2022 and 2025).",
    }
    WindowsNodeBuildRetired {
        id: "windows-node-build-retired",
        family: Cluster,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows node on a build its platform has retired",
        summary: "The node runs a Windows build its platform (AKS, EKS, GKE, OpenShift, AKS Arc) has retired by the date checked, or that is past Microsoft's extended support: no new node images or patches, no new pools, and later its images are removed. Needs a date (the CLI uses today).",
    }
    WindowsNodeContainerdUnsupported {
        id: "windows-node-containerd-unsupported",
        family: Cluster,
        severity: Warning,
        needs: Manifest,
        fixable: false,
        title: "Windows node on a containerd past its support or with a known bug",
        summary: "The node's status.nodeInfo.containerRuntimeVersion is a containerd line past its end of life by the date checked, a line the Kubernetes version planned for no longer supports (containerd 1.x after 1.35), or a release with a known bug (2.3.0 to 2.3.3: a pause image given by tag and digest or by a short name cannot start pods; said as info, since the node does not show its configuration).",
    }
    NodePoolBuildUnknown {
        id: "node-pool-build-unknown",
        family: Cluster,
        severity: Info,
        needs: Manifest,
        fixable: false,
        title: "Node pool whose Windows build cannot be told",
        summary: "An infrastructure file defines a Windows node pool (or a pool of unknown OS) without naming the Windows Server release, so its nodes are assumed without a build label instead of guessed.",
    }
    // Live state
    PodOnWrongOs {
        id: "pod-on-wrong-os",
        family: LiveState,
        severity: Error,
        needs: LiveState,
        fixable: false,
        title: "Pod running on a node of the wrong OS",
        summary: "A pod is bound to a node whose OS differs from the OS the pod needs.",
    }
    PodOnIncompatibleBuild {
        id: "pod-on-incompatible-build",
        family: LiveState,
        severity: Error,
        needs: LiveState,
        fixable: false,
        title: "Pod on an incompatible Windows build",
        summary: "A pod is bound to a Windows node whose build cannot run its images with process isolation.",
    }
    PodPendingPlacement {
        id: "pod-pending-placement",
        family: LiveState,
        severity: Error,
        needs: LiveState,
        fixable: false,
        title: "Pod pending: no node matches taints or selectors",
        summary: "A pod is Pending because the scheduler found no node whose taints it tolerates and whose labels match its selectors.",
    }
    PodImageOsError {
        id: "pod-image-os-error",
        family: LiveState,
        severity: Error,
        needs: LiveState,
        fixable: false,
        title: "Container waiting: image OS does not fit the node",
        summary: "A container is waiting because its image's OS or Windows build does not fit the node it was placed on.",
    }
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
