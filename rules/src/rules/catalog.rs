//! The rule catalogue: one table of rule metadata (id, family, default severity, title, summary), one row
//! per [`RuleId`] ([`meta`]; [`rule`] looks a row up by its string id).
//!
//! The CLI (`winplace rules`), the dashboard's rules page and `docs/rules/README.md` all come from, or are
//! tested against, [`RULES`], so they cannot drift apart. Rule ids are stable; each has a page at
//! [`doc_url`].
//!
//! ```
//! use winplace_rules::rules::catalog;
//! let meta = catalog::rule("windows-pod-without-os-selector").expect("known rule");
//! assert_eq!(meta.severity, winplace_rules::Severity::Error);
//! assert!(catalog::doc_url(meta.id).ends_with("/docs/rules/windows-pod-without-os-selector.md"));
//! ```

use super::RuleId;
use crate::Severity;

/// Which part of the catalogue a rule belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Which OS the pod says it needs (`spec.os`, selectors, images) and whether that agrees.
    OsIdentity,
    /// Placement of pods that need Windows: OS selector, taint toleration, Windows build.
    WindowsPods,
    /// Linux pods that could land on Windows nodes.
    LinuxPods,
    /// RuntimeClass objects and how pods use them.
    RuntimeClass,
    /// Fields the API server would reject (or silently drop) for placement-relevant parts of a pod.
    ApiValidation,
    /// Rules that need the cluster's nodes: where the scheduler could really put a pod, and node hygiene.
    Cluster,
    /// Findings of the server's audit of running pods.
    LiveState,
}

impl Family {
    /// Every family, in catalogue order.
    pub const ALL: [Family; 7] = [
        Family::OsIdentity,
        Family::WindowsPods,
        Family::LinuxPods,
        Family::RuntimeClass,
        Family::ApiValidation,
        Family::Cluster,
        Family::LiveState,
    ];

    /// The kebab-case name used in JSON output (`windows-pods`).
    pub fn as_str(self) -> &'static str {
        match self {
            Family::OsIdentity => "os-identity",
            Family::WindowsPods => "windows-pods",
            Family::LinuxPods => "linux-pods",
            Family::RuntimeClass => "runtime-class",
            Family::ApiValidation => "api-validation",
            Family::Cluster => "cluster",
            Family::LiveState => "live-state",
        }
    }

    /// The heading used in documentation and the dashboard (`Windows pods`).
    pub fn title(self) -> &'static str {
        match self {
            Family::OsIdentity => "OS identity",
            Family::WindowsPods => "Windows pods",
            Family::LinuxPods => "Linux pods",
            Family::RuntimeClass => "RuntimeClass",
            Family::ApiValidation => "API validation",
            Family::Cluster => "Cluster",
            Family::LiveState => "Live state",
        }
    }
}

/// Metadata of one rule: the one table the CLI (`winplace rules`), the dashboard's rules page and
/// `docs/rules/README.md` come from.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleMeta {
    /// The rule this row describes: the row's key. Not serialized: `id` says it on the wire.
    #[serde(skip)]
    pub rule: RuleId,
    /// Stable kebab-case id (`windows-pod-without-os-selector`), `rule.as_str()`.
    pub id: &'static str,
    /// The part of the catalogue the rule belongs to.
    pub family: Family,
    /// Default severity; settings' `severity` overrides it, and a rule may raise it with cluster context
    /// (documented on the rule's page).
    pub severity: Severity,
    /// Short title (`Windows pod without OS selector`).
    pub title: &'static str,
    /// One or two sentences for an operator: what the rule detects and why it matters.
    pub summary: &'static str,
    /// Whether the rule's findings can carry a fix (`winplace check --fix`, admission `mutate`).
    pub fixable: bool,
    /// Whether the rule fires only with cluster context (nodes, RuntimeClasses) or live state.
    pub needs_context: bool,
}

/// Shorthand for the table below.
#[allow(clippy::too_many_arguments)]
const fn r(
    rule: RuleId,
    family: Family,
    severity: Severity,
    title: &'static str,
    summary: &'static str,
    fixable: bool,
    needs_context: bool,
) -> RuleMeta {
    RuleMeta {
        rule,
        id: rule.as_str(),
        family,
        severity,
        title,
        summary,
        fixable,
        needs_context,
    }
}

use Family::*;
use Severity::{Error as E, Info as I, Warning as W};

/// Every rule, grouped by family in catalogue order (DESIGN.md "Rule catalogue"): one row per [`RuleId`], at
/// the index of its variant.
pub const RULES: &[RuleMeta] = &[
    // OS identity
    r(
        RuleId::OsNameInvalid,
        OsIdentity,
        E,
        "Invalid spec.os.name",
        "spec.os.name is not exactly `linux` or `windows` (values are case-sensitive); the API server rejects the pod.",
        true,
        false,
    ),
    r(
        RuleId::OsConflict,
        OsIdentity,
        E,
        "Contradicting OS signals",
        "The pod's OS signals disagree (spec.os.name, kubernetes.io/os selectors, its RuntimeClass, its images); it is rejected, lands on the wrong OS or never schedules.",
        false,
        false,
    ),
    r(
        RuleId::MixedOsContainers,
        OsIdentity,
        E,
        "Windows and Linux containers in one pod",
        "The pod runs both Windows and Linux images; a pod runs on one node, so some of its containers can never start.",
        false,
        false,
    ),
    // Windows pods
    r(
        RuleId::WindowsPodWithoutOsSelector,
        WindowsPods,
        E,
        "Windows pod without OS selector",
        "A Windows pod has no kubernetes.io/os: windows nodeSelector or required node affinity (spec.os.name alone does not count: the scheduler ignores it), so it can be scheduled onto a Linux node.",
        true,
        false,
    ),
    r(
        RuleId::WindowsPodWithoutToleration,
        WindowsPods,
        E,
        "Windows pod does not tolerate the Windows taint",
        "The pod does not tolerate the taint on the Windows nodes, so the scheduler keeps it off them and it stays Pending.",
        true,
        false,
    ),
    r(
        RuleId::TolerationCaseMismatch,
        WindowsPods,
        E,
        "Toleration differs from the taint only in letter case",
        "A toleration matches a Windows taint except for letter case (`Windows` vs `windows`); taint keys and values are compared case-sensitively, so it tolerates nothing.",
        true,
        false,
    ),
    r(
        RuleId::WindowsPodWithoutBuildSelector,
        WindowsPods,
        W,
        "Windows pod without build selector",
        "The pod does not pin a node.kubernetes.io/windows-build; process-isolated containers only start on hosts whose build can run the image. Error when the cluster has more than one Windows build.",
        true,
        false,
    ),
    r(
        RuleId::WindowsBuildMismatch,
        WindowsPods,
        E,
        "Selected Windows build cannot run the image",
        "The Windows build the pod is pinned to cannot run one of its images with process isolation; the container fails to start there.",
        false,
        false,
    ),
    r(
        RuleId::WindowsBuildPinTooNarrow,
        WindowsPods,
        W,
        "Windows build pin too narrow for an in-place upgrade",
        "The pod is pinned to exactly one Windows build although a newer supported build runs its images; when its pool is upgraded in place, the nodes take the new build label and the pods can never be scheduled again. Pin the range of builds that run the images instead (off with buildPinning: exact).",
        true,
        false,
    ),
    r(
        RuleId::WindowsImagesBuildConflict,
        WindowsPods,
        E,
        "No Windows build runs all images",
        "The pod's Windows images were built for builds that no single host can run together, so at least one container fails on any node.",
        false,
        false,
    ),
    r(
        RuleId::WindowsImageBuildUnknown,
        WindowsPods,
        W,
        "Windows image of unknown build",
        "A Windows image's build cannot be told from its name (floating or private tag), so build compatibility is not checked for it.",
        false,
        false,
    ),
    r(
        RuleId::ImageManifestUnresolved,
        WindowsPods,
        I,
        "Image manifest could not be read",
        "With registry resolution on (`winplace check --resolve-images`, the server), an image whose manifest could not be read (unauthorized, not found, timeout) keeps the classification its name gives.",
        false,
        false,
    ),
    r(
        RuleId::WindowsVersionUnsupported,
        WindowsPods,
        W,
        "Windows build outside the supported list",
        "Every Windows build the pod can run on is outside the supported builds (settings supportedBuilds; default Windows Server 2022 and 2025).",
        false,
        false,
    ),
    r(
        RuleId::DeprecatedOsLabel,
        WindowsPods,
        W,
        "Deprecated beta OS/arch label",
        "A selector uses beta.kubernetes.io/os or beta.kubernetes.io/arch; use the GA labels kubernetes.io/os and kubernetes.io/arch.",
        true,
        false,
    ),
    // Linux pods
    r(
        RuleId::LinuxPodWithoutOsSelector,
        LinuxPods,
        W,
        "Linux pod without OS selector",
        "A Linux pod has no kubernetes.io/os: linux constraint, so only the Windows nodes' taint keeps it off them.",
        true,
        false,
    ),
    r(
        RuleId::LinuxPodToleratesWindowsTaint,
        LinuxPods,
        E,
        "Linux pod tolerates the Windows taint",
        "A Linux pod without an OS selector tolerates the Windows nodes' taint (e.g. `operator: Exists` with no key), so it can be placed on Windows nodes where it cannot run.",
        true,
        false,
    ),
    // RuntimeClass
    r(
        RuleId::RuntimeClassNotFound,
        RuntimeClass,
        E,
        "RuntimeClass not found",
        "The pod names a RuntimeClass the cluster does not have; RuntimeClass admission rejects the pod.",
        false,
        true,
    ),
    r(
        RuleId::RuntimeClassSelectorConflict,
        RuntimeClass,
        E,
        "Pod nodeSelector conflicts with its RuntimeClass",
        "The pod's nodeSelector and its RuntimeClass's scheduling.nodeSelector give the same key different values; RuntimeClass admission rejects the pod.",
        false,
        false,
    ),
    r(
        RuleId::RuntimeClassOverheadMismatch,
        RuntimeClass,
        E,
        "Pod overhead does not match its RuntimeClass",
        "The pod sets spec.overhead but it differs from its RuntimeClass's overhead.podFixed (or the RuntimeClass defines none); RuntimeClass admission rejects the pod.",
        true,
        false,
    ),
    r(
        RuleId::RuntimeClassDeprecatedApi,
        RuntimeClass,
        E,
        "RuntimeClass uses node.k8s.io/v1beta1",
        "The RuntimeClass is written as node.k8s.io/v1beta1, which is no longer served since Kubernetes 1.25; use node.k8s.io/v1.",
        true,
        false,
    ),
    r(
        RuleId::RuntimeClassDockerHandler,
        RuntimeClass,
        W,
        "RuntimeClass uses the docker handler",
        "The RuntimeClass handler is `docker`; dockershim is gone (Kubernetes 1.24) and containerd on Windows names its runtime `runhcs-wcow-process`.",
        false,
        false,
    ),
    r(
        RuleId::RuntimeClassHyperVHandler,
        RuntimeClass,
        W,
        "RuntimeClass uses Hyper-V isolation",
        "The RuntimeClass handler is containerd's Hyper-V runtime `runhcs-wcow-hypervisor`; Kubernetes supports only process isolation for Windows containers.",
        false,
        false,
    ),
    r(
        RuleId::RuntimeClassUnchecked,
        RuntimeClass,
        I,
        "RuntimeClass not checked",
        "The pod names a RuntimeClass that could not be checked because no cluster context was given; its scheduling and overhead were not taken into account.",
        false,
        false,
    ),
    // API validation the cluster would reject
    r(
        RuleId::WindowsForbiddenField,
        ApiValidation,
        E,
        "Field forbidden on a Windows pod",
        "The pod has spec.os.name: windows and sets a field the API server forbids on Windows pods (e.g. runAsUser, privileged, hostPID: true); the pod is rejected.",
        true,
        false,
    ),
    r(
        RuleId::WindowsUnsupportedField,
        ApiValidation,
        W,
        "Linux-only field on an inferred Windows pod",
        "A pod that is Windows by its images or selectors but has no spec.os sets a field that is forbidden on Windows pods; it is accepted but has no effect or fails on the node.",
        true,
        false,
    ),
    r(
        RuleId::LinuxForbiddenWindowsOptions,
        ApiValidation,
        E,
        "windowsOptions on a Linux pod",
        "The pod has spec.os.name: linux and sets securityContext.windowsOptions; the API server rejects the pod.",
        true,
        false,
    ),
    r(
        RuleId::WindowsUnsupportedFeature,
        ApiValidation,
        E,
        "Feature Windows nodes do not support",
        "A Windows pod uses a feature Windows nodes do not provide (hugepages, memory-backed emptyDir, mount propagation, raw block volumes, ClusterFirstWithHostNet, hostNetwork without HostProcess, pod-level resources, in-place resize through resizePolicy).",
        false,
        false,
    ),
    r(
        RuleId::RunAsUserNameInvalid,
        ApiValidation,
        E,
        "Invalid runAsUserName",
        "windowsOptions.runAsUserName breaks the API server's rules (e.g. `user@domain` UPN form, two backslashes, forbidden characters); the pod is rejected.",
        false,
        false,
    ),
    r(
        RuleId::GmsaCredentialSpecInvalid,
        ApiValidation,
        E,
        "Invalid gMSA credential spec",
        "windowsOptions.gmsaCredentialSpecName is not a DNS subdomain, or gmsaCredentialSpec is empty or larger than 64 KiB; the pod is rejected.",
        false,
        false,
    ),
    r(
        RuleId::HostProcessInconsistent,
        ApiValidation,
        E,
        "Inconsistent HostProcess pod",
        "A HostProcess pod breaks the API server's rules: every container must be HostProcess, hostNetwork must be true, and pod and container values must agree; the pod is rejected.",
        true,
        false,
    ),
    r(
        RuleId::StopSignalInvalid,
        ApiValidation,
        E,
        "Invalid lifecycle.stopSignal",
        "A container's lifecycle.stopSignal is set without spec.os.name, or is not allowed for the pod's OS (Windows allows only SIGKILL and SIGTERM); the pod is rejected.",
        false,
        false,
    ),
    r(
        RuleId::TolerationInvalid,
        ApiValidation,
        E,
        "Invalid toleration",
        "A toleration breaks the API server's rules (e.g. empty key without `Exists`, `Exists` with a value, tolerationSeconds without NoExecute); the pod is rejected.",
        false,
        false,
    ),
    r(
        RuleId::NodeAffinityInvalid,
        ApiValidation,
        E,
        "Invalid node affinity",
        "Required or preferred node affinity breaks the API server's rules (e.g. no terms, `In` without values, `Gt` with several values); the pod is rejected.",
        false,
        false,
    ),
    r(
        RuleId::UnknownField,
        ApiValidation,
        W,
        "Unknown field where placement is decided",
        "An unknown key (e.g. `Effect:`) in tolerations, node affinity, securityContext or RuntimeClass scheduling; depending on the client it is rejected or silently dropped, and the toleration then means something else.",
        true,
        false,
    ),
    r(
        RuleId::ManifestInvalid,
        ApiValidation,
        E,
        "Field has the wrong type",
        "A field has the wrong type (e.g. a string where a boolean is expected), so the API server would reject the object.",
        false,
        false,
    ),
    r(
        RuleId::WorkloadApiVersionRemoved,
        ApiValidation,
        E,
        "Workload in an API version no longer served",
        "A Deployment, DaemonSet, ReplicaSet or StatefulSet in extensions/v1beta1, apps/v1beta1 or apps/v1beta2 (removed in Kubernetes 1.16), or a CronJob in batch/v1beta1 (removed in 1.25): the API server refuses the manifest; use apps/v1 (with spec.selector) or batch/v1.",
        true,
        false,
    ),
    r(
        RuleId::NotChecked,
        ApiValidation,
        I,
        "File with nothing to check",
        "A checked file holds no workload, Node, RuntimeClass or node pool (only a ConfigMap, a Service, a CRD…): nothing in it was checked, so its clean result says nothing. Files given as cluster context never get it.",
        false,
        false,
    ),
    // Cluster
    r(
        RuleId::NoSchedulableNode,
        Cluster,
        E,
        "No node can take the pod",
        "No node passes the pod's nodeSelector, required node affinity and taints, so it stays Pending; the finding says why for each group of nodes.",
        false,
        true,
    ),
    r(
        RuleId::SchedulableOnWrongOs,
        Cluster,
        E,
        "Pod can be scheduled on a node of the wrong OS",
        "Some node the scheduler could pick runs a different OS than the pod needs; if the pod lands there, it cannot run.",
        false,
        true,
    ),
    r(
        RuleId::SchedulableOnIncompatibleBuild,
        Cluster,
        E,
        "Pod can be scheduled on an incompatible Windows build",
        "Some Windows node the scheduler could pick has a build that cannot run the pod's images with process isolation.",
        false,
        true,
    ),
    r(
        RuleId::WindowsNodeUntainted,
        Cluster,
        W,
        "Windows node without taint",
        "A Windows node lacks the Windows taint (settings windowsTaints), so Linux pods without an OS selector can be scheduled onto it.",
        false,
        false,
    ),
    r(
        RuleId::WindowsNodeMissingBuildLabel,
        Cluster,
        W,
        "Windows node without build label",
        "A Windows node has no node.kubernetes.io/windows-build label, so pods pinned to a build never land on it.",
        false,
        false,
    ),
    r(
        RuleId::WindowsNodeBuildLabelMismatch,
        Cluster,
        E,
        "Windows node build label differs from its kernel version",
        "The node's node.kubernetes.io/windows-build label disagrees with the build in status.nodeInfo.kernelVersion, so build-pinned pods land on a host that cannot run them.",
        false,
        false,
    ),
    r(
        RuleId::WindowsNodeUnsupportedVersion,
        Cluster,
        W,
        "Windows node runs an unsupported version",
        "The node's Windows build is outside the supported builds (settings supportedBuilds; default Windows Server 2022 and 2025).",
        false,
        false,
    ),
    r(
        RuleId::NodePoolBuildUnknown,
        Cluster,
        I,
        "Node pool whose Windows build cannot be told",
        "An infrastructure file defines a Windows node pool (or a pool of unknown OS) without naming the Windows Server release, so its nodes are assumed without a build label instead of guessed.",
        false,
        false,
    ),
    // Live state
    r(
        RuleId::PodOnWrongOs,
        LiveState,
        E,
        "Pod running on a node of the wrong OS",
        "A pod is bound to a node whose OS differs from the OS the pod needs.",
        false,
        true,
    ),
    r(
        RuleId::PodOnIncompatibleBuild,
        LiveState,
        E,
        "Pod on an incompatible Windows build",
        "A pod is bound to a Windows node whose build cannot run its images with process isolation.",
        false,
        true,
    ),
    r(
        RuleId::PodPendingPlacement,
        LiveState,
        E,
        "Pod pending: no node matches taints or selectors",
        "A pod is Pending because the scheduler found no node whose taints it tolerates and whose labels match its selectors.",
        false,
        true,
    ),
    r(
        RuleId::PodImageOsError,
        LiveState,
        E,
        "Container waiting: image OS does not fit the node",
        "A container is waiting because its image's OS or Windows build does not fit the node it was placed on.",
        false,
        true,
    ),
];

// Every rule has exactly one row, at its variant's index, so that `meta` needs no search and cannot fail;
// checked when the crate compiles.
const _: () = {
    assert!(RULES.len() == RuleId::ALL.len());
    let mut i = 0;
    while i < RULES.len() {
        assert!(RULES[i].rule as usize == i);
        i += 1;
    }
};

/// The metadata of `rule`.
///
/// ```
/// use winplace_rules::rules::{catalog, RuleId};
/// assert_eq!(catalog::meta(RuleId::OsConflict).id, "os-conflict");
/// ```
pub fn meta(rule: RuleId) -> &'static RuleMeta {
    &RULES[rule as usize]
}

/// The metadata of the rule whose id is `id`, or `None` for an unknown id.
pub fn rule(id: &str) -> Option<&'static RuleMeta> {
    id.parse().ok().map(meta)
}

/// The documentation page of rule `id`.
///
/// ```
/// assert_eq!(
///     winplace_rules::rules::catalog::doc_url("os-conflict"),
///     "https://github.com/winplace/winplace/blob/main/docs/rules/os-conflict.md"
/// );
/// ```
pub fn doc_url(id: &str) -> String {
    format!("https://github.com/winplace/winplace/blob/main/docs/rules/{id}.md")
}

/// One rule as JSON: every field of the table plus `helpUri`, as `winplace rules --format json` and the
/// server's `/api/rules` print it.
pub fn rule_json(rule: &RuleMeta) -> serde_json::Value {
    serde_json::json!({
        "id": rule.id,
        "severity": rule.severity,
        "family": rule.family.as_str(),
        "title": rule.title,
        "summary": rule.summary,
        "fixable": rule.fixable,
        "needsContext": rule.needs_context,
        "helpUri": doc_url(rule.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashSet};

    /// `docs/rules/` beside the crate.
    fn docs_dir() -> std::path::PathBuf {
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules/")).to_path_buf()
    }

    fn read_doc(name: &str) -> String {
        let path = docs_dir().join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
    }

    fn is_kebab(id: &str) -> bool {
        !id.is_empty()
            && id.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            })
            && id.as_bytes()[0].is_ascii_lowercase()
    }

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut seen = HashSet::new();
        for m in RULES {
            assert!(seen.insert(m.id), "duplicate rule id {}", m.id);
            assert!(is_kebab(m.id), "rule id {:?} is not kebab-case", m.id);
        }
    }

    #[test]
    fn every_rule_id_has_exactly_one_row() {
        assert_eq!(RULES.len(), RuleId::ALL.len());
        for id in RuleId::ALL {
            let rows = RULES.iter().filter(|m| m.rule == id).count();
            assert_eq!(rows, 1, "{id} has {rows} rows");
            assert_eq!((meta(id).rule, meta(id).id), (id, id.as_str()));
            assert_eq!(rule(id.as_str()).map(|m| m.rule), Some(id));
        }
    }

    #[test]
    fn kebab_check_rejects_bad_ids() {
        for bad in [
            "",
            "Os-conflict",
            "os--conflict",
            "-os",
            "os-",
            "os_conflict",
            "1os",
        ] {
            assert!(!is_kebab(bad), "{bad:?} accepted");
        }
        assert!(is_kebab("os-conflict"));
    }

    #[test]
    fn titles_and_summaries_are_filled_in() {
        for m in RULES {
            assert!(!m.title.trim().is_empty(), "{} has no title", m.id);
            assert!(
                !m.title.contains('|'),
                "{} title breaks the README table",
                m.id
            );
            assert!(m.summary.trim().len() > 20, "{} has no summary", m.id);
        }
    }

    /// DESIGN.md "Rule catalogue": every id of every family, exactly as spelled there, plus the two
    /// additions (`manifest-invalid`, `runtimeclass-unchecked`).
    #[test]
    fn catalogue_matches_design() {
        let expected: &[(Family, &[&str])] = &[
            (
                OsIdentity,
                &["os-name-invalid", "os-conflict", "mixed-os-containers"],
            ),
            (
                WindowsPods,
                &[
                    "windows-pod-without-os-selector",
                    "windows-pod-without-toleration",
                    "toleration-case-mismatch",
                    "windows-pod-without-build-selector",
                    "windows-build-mismatch",
                    // issue 25: an exact pin strands pods when the pool is upgraded in place.
                    "windows-build-pin-too-narrow",
                    "windows-images-build-conflict",
                    "windows-image-build-unknown",
                    "image-manifest-unresolved",
                    "windows-version-unsupported",
                    "deprecated-os-label",
                ],
            ),
            (
                LinuxPods,
                &[
                    "linux-pod-without-os-selector",
                    "linux-pod-tolerates-windows-taint",
                ],
            ),
            (
                RuntimeClass,
                &[
                    "runtimeclass-not-found",
                    "runtimeclass-selector-conflict",
                    "runtimeclass-overhead-mismatch",
                    "runtimeclass-deprecated-api",
                    "runtimeclass-docker-handler",
                    "runtimeclass-hyperv-handler",
                    "runtimeclass-unchecked",
                ],
            ),
            (
                ApiValidation,
                &[
                    "windows-forbidden-field",
                    "windows-unsupported-field",
                    "linux-forbidden-windows-options",
                    "windows-unsupported-feature",
                    "run-as-user-name-invalid",
                    "gmsa-credential-spec-invalid",
                    "hostprocess-inconsistent",
                    "stop-signal-invalid",
                    "toleration-invalid",
                    "node-affinity-invalid",
                    "unknown-field",
                    "manifest-invalid",
                    "workload-api-version-removed",
                    // issue 16: a file with nothing to check says so.
                    "not-checked",
                ],
            ),
            (
                Cluster,
                &[
                    "no-schedulable-node",
                    "schedulable-on-wrong-os",
                    "schedulable-on-incompatible-build",
                    "windows-node-untainted",
                    "windows-node-missing-build-label",
                    "windows-node-build-label-mismatch",
                    "windows-node-unsupported-version",
                    // issue 15: infrastructure files as cluster context.
                    "node-pool-build-unknown",
                ],
            ),
            (
                LiveState,
                &[
                    "pod-on-wrong-os",
                    "pod-on-incompatible-build",
                    "pod-pending-placement",
                    "pod-image-os-error",
                ],
            ),
        ];
        let mut count = 0;
        for (family, ids) in expected {
            for id in *ids {
                let meta = rule(id).unwrap_or_else(|| panic!("missing rule {id}"));
                assert_eq!(meta.family, *family, "{id}");
                count += 1;
            }
        }
        assert_eq!(
            RULES.len(),
            count,
            "RULES has ids that DESIGN.md does not list"
        );
    }

    /// DESIGN.md "Default severities": these are warnings, only notes are info, everything else is error.
    #[test]
    fn default_severities_match_design() {
        let warnings = [
            "windows-pod-without-build-selector",
            "windows-build-pin-too-narrow",
            "windows-image-build-unknown",
            "windows-version-unsupported",
            "deprecated-os-label",
            "linux-pod-without-os-selector",
            "windows-unsupported-field",
            "unknown-field",
            "runtimeclass-docker-handler",
            "runtimeclass-hyperv-handler",
            "windows-node-untainted",
            "windows-node-missing-build-label",
            "windows-node-unsupported-version",
        ];
        // issue 15: a pool whose build cannot be told is reported as such (info), never guessed.
        let infos = [
            "runtimeclass-unchecked",
            "node-pool-build-unknown",
            "image-manifest-unresolved",
            "not-checked",
        ];
        for m in RULES {
            let want = if warnings.contains(&m.id) {
                Severity::Warning
            } else if infos.contains(&m.id) {
                Severity::Info
            } else {
                Severity::Error
            };
            assert_eq!(m.severity, want, "{}", m.id);
        }
    }

    #[test]
    fn context_and_fixability_flags() {
        // Rows: (id, fixable, needs_context), each from DESIGN.md's catalogue notes.
        let rows = [
            ("windows-pod-without-os-selector", true, false),
            ("windows-pod-without-toleration", true, false),
            ("os-conflict", false, false),
            ("runtimeclass-not-found", false, true),
            ("runtimeclass-unchecked", false, false),
            // Node rules also run on Node objects in the input (corpus node-hygiene has no cluster.yaml).
            ("windows-node-untainted", false, false),
            ("no-schedulable-node", false, true),
            ("pod-image-os-error", false, true),
            ("manifest-invalid", false, false),
        ];
        for (id, fixable, needs_context) in rows {
            let m = rule(id).unwrap_or_else(|| panic!("missing rule {id}"));
            assert_eq!(
                (m.fixable, m.needs_context),
                (fixable, needs_context),
                "{id}"
            );
        }
        for m in RULES.iter().filter(|m| m.family == LiveState) {
            assert!(
                m.needs_context && !m.fixable,
                "{}: live-state rules need live state",
                m.id
            );
        }
    }

    #[test]
    fn lookup_and_doc_url() {
        assert_eq!(rule("unknown-field").map(|m| m.family), Some(ApiValidation));
        assert!(rule("no-such-rule").is_none());
        assert!(rule("").is_none());
        assert_eq!(
            doc_url("pod-image-os-error"),
            "https://github.com/winplace/winplace/blob/main/docs/rules/pod-image-os-error.md"
        );
    }

    #[test]
    fn serializes_for_the_dashboard() {
        let meta = rule("windows-pod-without-os-selector").expect("known rule");
        let json = serde_json::to_value(meta).expect("serializable");
        assert_eq!(json["id"], "windows-pod-without-os-selector");
        assert_eq!(json["family"], "windows-pods");
        assert_eq!(json["severity"], "error");
        assert_eq!(json["needsContext"], false);
        assert_eq!(json["fixable"], true);
        for family in Family::ALL {
            assert_eq!(
                serde_json::to_value(family).expect("serializable"),
                family.as_str()
            );
        }
    }

    #[test]
    fn families_are_in_catalogue_order() {
        let order: Vec<usize> = RULES
            .iter()
            .map(|m| {
                Family::ALL
                    .iter()
                    .position(|f| *f == m.family)
                    .unwrap_or(usize::MAX)
            })
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] <= w[1]),
            "RULES must be grouped by family"
        );
    }

    #[test]
    fn every_rule_has_a_docs_page_that_agrees() {
        for m in RULES {
            let page = read_doc(&format!("{}.md", m.id));
            let mut lines = page.lines();
            assert_eq!(
                lines.next(),
                Some(format!("# {}: {}", m.id, m.title).as_str()),
                "{}.md title line",
                m.id
            );
            let severity = format!("Severity: {}", m.severity.as_str());
            assert!(
                page.lines().any(|l| l.starts_with(&severity)),
                "{}.md lacks {severity:?}",
                m.id
            );
            let family = format!("Family: {}", m.family.title());
            assert!(
                page.lines().any(|l| l == family),
                "{}.md lacks {family:?}",
                m.id
            );
            for section in ["## What", "## Why", "## Fix", "## Example", "## References"] {
                assert!(
                    page.lines().any(|l| l == section),
                    "{}.md lacks {section}",
                    m.id
                );
            }
            assert!(page.contains("```yaml"), "{}.md has no YAML example", m.id);
        }
    }

    #[test]
    fn readme_lists_every_rule_with_severity_family_and_title() {
        let readme = read_doc("README.md");
        // Rows look like `| [id](id.md) | severity | family | title |`.
        let mut listed: BTreeMap<String, (String, String, String)> = BTreeMap::new();
        for line in readme.lines().filter(|l| l.starts_with("| [")) {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 4, "bad row {line:?}");
            let link = cells[0];
            let id = link
                .strip_prefix('[')
                .and_then(|s| s.split_once("]("))
                .map(|(id, rest)| {
                    assert_eq!(rest, format!("{id}.md)"), "link target of {id}");
                    id.to_string()
                })
                .unwrap_or_else(|| panic!("bad link cell {link:?}"));
            let row = (
                cells[1].to_string(),
                cells[2].to_string(),
                cells[3].to_string(),
            );
            assert!(
                listed.insert(id.clone(), row).is_none(),
                "{id} listed twice"
            );
        }
        for m in RULES {
            let row = listed
                .remove(m.id)
                .unwrap_or_else(|| panic!("README.md does not list {}", m.id));
            assert_eq!(
                row,
                (
                    m.severity.as_str().into(),
                    m.family.title().into(),
                    m.title.into()
                ),
                "{}",
                m.id
            );
        }
        assert!(
            listed.is_empty(),
            "README.md lists unknown rules: {:?}",
            listed.keys()
        );
    }
}
