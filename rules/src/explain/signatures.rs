//! The error signatures: one table ([`SIGNATURES`]) that the matcher reads and that
//! `docs/reference/error-signatures.md` documents row by row (a test compares the two), as the rule
//! catalogue is for the rules.
//!
//! Every row names the code that prints the message (or the public issue that shows it) in
//! `docs/reference/error-signatures.md`, under the row's id. The needles are the message's fixed text,
//! exactly as that code prints it (letter case included), so that matching is a handful of substring
//! searches per line: linear in the line's length, no backtracking.

use super::cause::Cause;
use crate::catalog::RuleId;

/// One error signature: what a message looks like, and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Stable id, the heading of its section in `docs/reference/error-signatures.md`
    /// (`scheduler-untolerated-taint`).
    pub id: &'static str,
    /// Why the workload fails.
    pub cause: Cause,
    /// Who prints the message (`kube-scheduler, TaintToleration filter`).
    pub source: &'static str,
    /// The line matches when it holds any of these (exact text, letter case included).
    pub any: &'static [&'static str],
    /// … and all of these.
    pub all: &'static [&'static str],
    /// What it means, in one sentence.
    pub meaning: &'static str,
    /// The catalogue rule that would have caught it before deployment (`None`: no manifest rule can,
    /// such as a node's pause image).
    pub rule: Option<RuleId>,
    /// What to do, before the context (nodes, images) makes it concrete.
    pub fix: &'static str,
}

use Cause::*;

/// Every signature, most specific first: a line is matched against each, and one line can match
/// several causes (a scheduler message naming taints and selectors), but only the first signature of
/// each cause.
pub const SIGNATURES: &[Signature] = &[
    Signature {
        id: "scheduler-untolerated-taint",
        cause: UntoleratedTaint,
        source: "kube-scheduler, TaintToleration filter (FailedScheduling)",
        any: &["had untolerated taint"],
        all: &[],
        meaning: "The scheduler kept the pod off nodes whose NoSchedule or NoExecute taint it does not tolerate.",
        rule: Some(RuleId::WindowsPodWithoutToleration),
        fix: "Add a toleration of the taint to the workload's pod template (key, value and effect exactly as the taint has them; values are case-sensitive), and select the nodes it tolerates with a nodeSelector.",
    },
    Signature {
        id: "scheduler-taint-not-tolerated",
        cause: UntoleratedTaint,
        source: "kube-scheduler, TaintToleration filter, older releases (FailedScheduling); the kubelet's admission of NoExecute taints",
        any: &["that the pod didn't tolerate"],
        all: &[],
        meaning: "The scheduler (or the kubelet, for NoExecute taints) kept the pod off nodes whose taint it does not tolerate.",
        rule: Some(RuleId::WindowsPodWithoutToleration),
        fix: "Add a toleration of the taint to the workload's pod template (key, value and effect exactly as the taint has them; values are case-sensitive), and select the nodes it tolerates with a nodeSelector.",
    },
    Signature {
        id: "scheduler-node-affinity",
        cause: SelectorMismatch,
        source: "kube-scheduler, NodeAffinity filter (FailedScheduling)",
        any: &["didn't match Pod's node affinity/selector"],
        all: &[],
        meaning: "The pod's nodeSelector or required node affinity excludes these nodes (an OS or Windows-build label the nodes do not carry, or carry with another value).",
        rule: Some(RuleId::NoSchedulableNode),
        fix: "Compare the pod's nodeSelector and required node affinity with the nodes' labels (kubernetes.io/os, node.kubernetes.io/windows-build): select labels the nodes that can run the pod really carry.",
    },
    Signature {
        id: "kubelet-pod-os-not-supported",
        cause: OsMismatch,
        source: "kubelet admission, rejectPodAdmissionBasedOnOSField (reason PodOSNotSupported)",
        any: &["PodOSNotSupported", "the OS field doesn't match node OS"],
        all: &[],
        meaning: "The kubelet refused the pod: its spec.os.name is not the node's OS (the scheduler ignores spec.os.name, so it was placed there).",
        rule: Some(RuleId::WindowsPodWithoutOsSelector),
        fix: "Give the workload the nodeSelector kubernetes.io/os of its OS (spec.os.name alone does not steer the scheduler), then delete the failed pod so that it is re-created on a node of that OS.",
    },
    Signature {
        id: "kubelet-pod-os-label-mismatch",
        cause: OsMismatch,
        source: "kubelet admission, rejectPodAdmissionBasedOnOSSelector (reason PodOSSelectorNodeLabelDoesNotMatch)",
        any: &[
            "PodOSSelectorNodeLabelDoesNotMatch",
            "label doesn't match node label",
        ],
        all: &[],
        meaning: "The kubelet refused the pod: the pod's own kubernetes.io/os label names another OS than the node's.",
        rule: Some(RuleId::WindowsPodWithoutOsSelector),
        fix: "Give the workload the nodeSelector kubernetes.io/os of its OS and the same pod label, then delete the failed pod so that it is re-created on a node of that OS.",
    },
    Signature {
        id: "moby-image-os",
        cause: OsMismatch,
        source: "Docker (moby): an image of the other OS than the daemon's",
        any: &["cannot be used on this platform"],
        all: &["image operating system"],
        meaning: "The runtime refused the image: it is built for the other operating system than the node's.",
        rule: Some(RuleId::WindowsPodWithoutOsSelector),
        fix: "Keep the workload on nodes of its image's OS with the nodeSelector kubernetes.io/os, or use an image built for the node's OS.",
    },
    Signature {
        id: "hcs-image-mismatch",
        cause: BuildMismatch,
        source: "Windows HCS through hcsshim: HCS_E_IMAGE_MISMATCH (0xc0370101), in CreatePodSandbox or CreateContainer errors",
        any: &[
            "0xc0370101",
            "0xC0370101",
            "does not match the host operating system",
            "does not match the operating system of the host",
        ],
        all: &[],
        meaning: "Windows refused to start a process-isolated container whose image was built for another Windows build than the host's.",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Use a tag of the image built for the node's Windows build (a …-ltsc2022 tag on Windows Server 2022 nodes), and pin the workload to the builds that can run it with required node affinity node.kubernetes.io/windows-build In [...].",
    },
    Signature {
        id: "hcs-invalid-layer",
        cause: BuildMismatch,
        source: "Windows HCS through hcsshim: ERROR_VMCOMPUTE_INVALID_LAYER / HCS_E_INVALID_LAYER (0xc0370112), in PrepareLayer errors",
        any: &[
            "0xc0370112",
            "0xC0370112",
            "contains a layer with an unrecognized format",
        ],
        all: &[],
        meaning: "Windows could not read the image's layers: the host's build does not understand the format the image's build wrote them in, as Windows Server 2025 (ltsc2025, 10.0.26100) images on Windows 11 25H2 (10.0.26200) hosts, under process and Hyper-V isolation alike (microsoft/hcsshim#2566).",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Run the image on nodes of its own Windows build (an ltsc2025 image on Windows Server 2025 nodes) with required node affinity node.kubernetes.io/windows-build, or use a tag of an older build that the host reads (ltsc2022 works on 10.0.26200 hosts, microsoft/hcsshim#2566).",
    },
    Signature {
        id: "moby-uplevel-image",
        cause: BuildMismatch,
        source: "Docker (moby) image pull on Windows, checkImageCompatibility (moby/moby#36327)",
        any: &["-based image is incompatible with a"],
        all: &[],
        meaning: "Docker refused to pull the image: it was built for a newer Windows build than the host's, which process isolation cannot run.",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Use a tag of the image built for the node's Windows build (a …-ltsc2022 tag on Windows Server 2022 nodes), and pin the workload to the builds that can run it with required node affinity node.kubernetes.io/windows-build In [...].",
    },
    Signature {
        id: "moby-utility-vm-image",
        cause: BuildMismatch,
        source: "Docker (moby) before 18.03 on Windows: registering an image's layers (moby/moby#35668)",
        any: &["ProcessUtilityVMImage"],
        all: &["The system cannot find the path specified"],
        meaning: "Docker could not register the image's layers: the image was built for a newer Windows build than the host's (Docker releases before moby/moby#36327 fail this way, at the image's UtilityVM folder, instead of refusing the pull).",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Use a tag of the image built for the node's Windows build (a …-ltsc2022 tag on Windows Server 2022 nodes), and pin the workload to the builds that can run it with required node affinity node.kubernetes.io/windows-build In [...].",
    },
    Signature {
        id: "containerd-no-platform",
        cause: NoPlatformInManifest,
        source: "containerd's platform matcher, in the kubelet's image pull (ErrImagePull)",
        any: &["no match for platform in manifest"],
        all: &[],
        meaning: "The image's index has no entry for the node's platform: another OS, architecture or, on Windows, no entry a host of this build can run.",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Use a tag whose index lists the node's platform (for Windows, an entry of a build the node runs), or keep the workload off these nodes with the nodeSelectors kubernetes.io/os and node.kubernetes.io/windows-build.",
    },
    Signature {
        id: "moby-no-matching-manifest",
        cause: NoPlatformInManifest,
        source: "Docker (moby) image pull: no manifest of the index matches the daemon's platform",
        any: &["no matching manifest for"],
        all: &["in the manifest list entries"],
        meaning: "The image's index has no entry for the platform named in the message (OS, architecture and, on Windows, the host's build).",
        rule: Some(RuleId::WindowsBuildMismatch),
        fix: "Use a tag whose index lists that platform (for Windows, an entry of a build the node runs), or keep the workload off these nodes with the nodeSelectors kubernetes.io/os and node.kubernetes.io/windows-build.",
    },
    Signature {
        id: "apiserver-windows-forbidden",
        cause: ForbiddenWindowsField,
        source: "kube-apiserver pod validation, validateWindows (and validatePodResources for spec.resources)",
        any: &[
            "cannot be set for a windows pod",
            "may not be set for a windows pod",
        ],
        all: &[],
        meaning: "The API server rejected the object: the field is forbidden in a pod with spec.os.name: windows, whatever its value.",
        rule: Some(RuleId::WindowsForbiddenField),
        fix: "Remove the field from the Windows pod template (presence alone is rejected, even `false`), or correct spec.os.name if the pod is not Windows.",
    },
    Signature {
        id: "apiserver-linux-windows-options",
        cause: ForbiddenWindowsField,
        source: "kube-apiserver pod validation, validateLinux",
        any: &["windows options cannot be set for a linux pod"],
        all: &[],
        meaning: "The API server rejected the object: securityContext.windowsOptions is forbidden in a pod with spec.os.name: linux.",
        rule: Some(RuleId::LinuxForbiddenWindowsOptions),
        fix: "Remove windowsOptions from the Linux pod template, or correct spec.os.name if the pod is Windows.",
    },
    Signature {
        id: "runtimeclass-not-found",
        cause: Runtimeclass,
        source: "kube-apiserver RuntimeClass admission plugin (prepareObjects)",
        any: &["pod rejected: RuntimeClass"],
        all: &["not found"],
        meaning: "The API server refused to create the pod: the RuntimeClass its spec.runtimeClassName names does not exist.",
        rule: Some(RuleId::RuntimeClassNotFound),
        fix: "Create the RuntimeClass (for Windows, handler runhcs-wcow-process with the Windows nodeSelector and toleration in its scheduling), or correct spec.runtimeClassName.",
    },
    Signature {
        id: "runtimeclass-selector-conflict",
        cause: Runtimeclass,
        source: "kube-apiserver RuntimeClass admission plugin (setScheduling)",
        any: &["conflict: runtimeClass.scheduling.nodeSelector["],
        all: &[],
        meaning: "The API server refused to create the pod: its nodeSelector gives a key another value than its RuntimeClass's scheduling.nodeSelector.",
        rule: Some(RuleId::RuntimeClassSelectorConflict),
        fix: "Remove the key from the pod's nodeSelector (the RuntimeClass adds it) or give it the RuntimeClass's value, or use the RuntimeClass of the build the pod needs.",
    },
    Signature {
        id: "runtimeclass-overhead",
        cause: Runtimeclass,
        source: "kube-apiserver RuntimeClass admission plugin (setOverhead)",
        any: &["Pod's Overhead doesn't match RuntimeClass's defined Overhead"],
        all: &[],
        meaning: "The API server refused to create the pod: its spec.overhead differs from the overhead its RuntimeClass defines.",
        rule: Some(RuleId::RuntimeClassOverheadMismatch),
        fix: "Remove spec.overhead from the pod template: the RuntimeClass admission plugin sets it.",
    },
    Signature {
        id: "scheduler-node-declared-features",
        cause: UndeclaredFeature,
        source: "kube-scheduler, NodeDeclaredFeatures filter (FailedScheduling)",
        any: &["node declared features check failed"],
        all: &[],
        meaning: "The scheduler kept the pod off nodes whose status.declaredFeatures lacks a feature the pod's spec needs (the names after `unsatisfied requirements:`); Windows nodes never declare UserNamespacesHostNetworkSupport.",
        rule: Some(RuleId::WindowsPodUndeclaredFeature),
        fix: "Remove from the pod template the field that needs the named feature (hostUsers: false for UserNamespacesHostNetworkSupport, a RestartAllContainers restart rule, bindMountOptions), or run the pod on nodes that declare it (kubectl get nodes -o custom-columns=NAME:.metadata.name,FEATURES:.status.declaredFeatures).",
    },
    Signature {
        id: "apiserver-node-declared-features",
        cause: UndeclaredFeature,
        source: "kube-apiserver, NodeDeclaredFeatureValidator admission plugin (an update or resize of a pod bound to a node)",
        any: &["which are not available on node"],
        all: &["pod update requires features"],
        meaning: "The API server refused a change to a running pod (an in-place resize, say): the change needs a feature that the node the pod is bound to does not list in its status.declaredFeatures, so the node's kubelet could not carry it out.",
        rule: None,
        fix: "Do not make this change to the running pod: put it in the workload's pod template so that new pods get it, on nodes whose kubelet declares the feature (kubectl get node NODE -o jsonpath='{.status.declaredFeatures}'; a newer kubelet, or its feature gate), or leave the pod as it is.",
    },
];

/// The signature of id `id`.
pub fn signature(id: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|s| s.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_every_cause_has_a_signature() {
        let mut ids: Vec<&str> = SIGNATURES.iter().map(|s| s.id).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), SIGNATURES.len());
        for cause in Cause::ALL {
            assert!(
                SIGNATURES.iter().any(|s| s.cause == cause),
                "{cause} has no signature"
            );
        }
        assert!(SIGNATURES.iter().all(|s| !s.any.is_empty()));
    }

    #[test]
    fn the_node_declared_features_filter_message_is_read() {
        // kube-scheduler's NodeDeclaredFeatures Filter (pkg/scheduler/framework/plugins/nodedeclaredfeatures):
        // fmt.Sprintf("node declared features check failed - unsatisfied requirements: %s", ...), as a
        // FailedScheduling event prints it.
        let event = "Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 node declared features check failed - unsatisfied requirements: UserNamespacesHostNetworkSupport. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
        let found = crate::explain::explain_line(event);
        let m = found
            .iter()
            .find(|m| m.signature == "scheduler-node-declared-features")
            .unwrap_or_else(|| panic!("{found:?}"));
        assert_eq!(m.cause, Cause::UndeclaredFeature);
        assert_eq!(m.rule.as_deref(), Some("windows-pod-undeclared-feature"));
        // The earlier (1.35 alpha) wording, `node declared features check failed: A`, matches too.
        assert!(
            crate::explain::explain_line("1 node declared features check failed: FeatureA")
                .iter()
                .any(|m| m.cause == Cause::UndeclaredFeature)
        );
        assert!(
            crate::explain::explain_line("0/3 nodes are available: 3 Insufficient cpu.")
                .iter()
                .all(|m| m.cause != Cause::UndeclaredFeature)
        );
    }

    #[test]
    fn the_node_declared_feature_validators_rejection_is_read() {
        // plugin/pkg/admission/nodedeclaredfeatures/admission.go, validatePodUpdate:
        // admission.NewForbidden(a, fmt.Errorf("pod update requires features %s which are not available on node %q", strings.Join(result.UnsatisfiedRequirements, ", "), node.Name)),
        // which apierrors.NewForbidden words `pods "<name>" is forbidden: <err>`.
        let refused = r#"Error from server (Forbidden): pods "web-0" is forbidden: pod update requires features InPlacePodLevelResourcesVerticalScaling, InPlacePodVerticalScalingInitContainers which are not available on node "akswin22000001""#;
        let found = crate::explain::explain_line(refused);
        assert_eq!(found.len(), 1, "{found:?}");
        let m = &found[0];
        assert_eq!(m.signature, "apiserver-node-declared-features");
        assert_eq!(m.cause, Cause::UndeclaredFeature);
        assert_eq!(m.rule, None);
        assert_eq!(m.objects.pod.as_deref(), Some("web-0"));
        assert_eq!(m.objects.node.as_deref(), Some("akswin22000001"));
        assert!(
            m.meaning.ends_with(
                "The change needs: InPlacePodLevelResourcesVerticalScaling, InPlacePodVerticalScalingInitContainers."
            ),
            "{}",
            m.meaning
        );
        // The plugin's other refusals (a node it cannot find) are not this cause.
        assert!(
            crate::explain::explain_line(r#"pods "web-0" is forbidden: node "win-1" not found"#)
                .is_empty()
        );
    }

    #[test]
    fn the_reference_page_documents_every_signature_with_its_cause() {
        let doc = include_str!("../../../docs/reference/error-signatures.md");
        for s in SIGNATURES {
            let heading = format!("### `{}`", s.id);
            let at = doc
                .find(&heading)
                .unwrap_or_else(|| panic!("error-signatures.md has no section {heading}"));
            let section = &doc[at + heading.len()..];
            let section = &section[..section.find("\n### ").unwrap_or(section.len())];
            assert!(
                section.contains(&format!("cause `{}`", s.cause)),
                "{}: the section does not say cause `{}`",
                s.id,
                s.cause
            );
            for needle in s.any.iter().chain(s.all) {
                assert!(
                    section.contains(needle),
                    "{}: the section does not quote `{needle}`",
                    s.id
                );
            }
        }
    }
}
