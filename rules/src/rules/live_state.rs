//! Live-state rules (the server's audit of running pods): `pod-on-wrong-os`, `pod-on-incompatible-build`,
//! `pod-pending-placement`, `pod-image-os-error`.
//!
//! They read what the cluster reports about one pod (its node, its `PodScheduled` condition, its container
//! statuses) against the placement resolved once for the pod's template. The audit keeps only the
//! [`PodFacts`] of a pod (not the pod), so that the rules can be re-run when a node changes.
//!
//! Decisions (kubernetes-windows-rules.md §1.6, §5.3; docs/rules/pod-*.md):
//! * The OS a pod needs is the one the resolver gives its template (`spec.os`, selectors, RuntimeClass,
//!   images); a pod whose OS is not one OS (`any`, `conflict`) is never "on the wrong OS".
//! * A Windows pod's images must run on the node's build with process isolation (hcsshim's rule); HostProcess
//!   pods are exempt, as the template rules have it.
//! * A pending pod is reported when the scheduler's `PodScheduled` message names taints or node
//!   affinity/selector (its TaintToleration and NodeAffinity filters); other reasons (resources, ports) are not
//!   placement.
//! * A container error is reported when the runtime's message says the image OS does not fit the host
//!   (`0xc0370101`, `no match for platform in manifest`, ...), or when it says `exec format error` and the
//!   image is of the other OS than the node.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::{Emitter, RuleId};
use crate::finding::Finding;
use crate::input::LineMap;
use crate::model::Object;
use crate::path::{FieldPath, Segment};
use crate::placement::{Placement, PodOs, build_range, host_runs_any, os_word};
use crate::settings::{BuildPinning, Settings};
use crate::windows::Os;
use crate::windows::builds::build_display;

/// Runtime messages that say the image's OS or build does not fit the host, lowercase.
///
/// hcsshim (`0xc0370101`), Docker (`image operating system ... cannot be used on this platform`, `no
/// matching manifest for ...`) and containerd's platform matcher (`no match for platform in manifest`).
const OS_MISMATCH_MESSAGES: &[&str] = &[
    "does not match the operating system of the host",
    "does not match the host operating system",
    "0xc0370101",
    "cannot be used on this platform",
    "no matching manifest for",
    "no match for platform in manifest",
];

/// A message that means the wrong binary format, which is an OS mismatch only when the image is of the other
/// OS than the node (it is also what an arm64 image on an amd64 node says).
const EXEC_FORMAT: &str = "exec format error";

/// Scheduler message fragments of the TaintToleration and NodeAffinity filters, lowercase.
const PLACEMENT_REASONS: &[&str] = &["taint", "node affinity", "node selector"];

/// The container lists of a pod: spec field and status field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ContainerList {
    /// `initContainers` / `initContainerStatuses`.
    Init,
    /// `containers` / `containerStatuses`.
    Regular,
    /// `ephemeralContainers` / `ephemeralContainerStatuses`.
    Ephemeral,
}

impl ContainerList {
    fn spec_field(self) -> &'static str {
        match self {
            ContainerList::Init => "initContainers",
            ContainerList::Regular => "containers",
            ContainerList::Ephemeral => "ephemeralContainers",
        }
    }

    fn status_field(self) -> &'static str {
        match self {
            ContainerList::Init => "initContainerStatuses",
            ContainerList::Regular => "containerStatuses",
            ContainerList::Ephemeral => "ephemeralContainerStatuses",
        }
    }
}

/// A container whose state carries a message about the image's OS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContainerError {
    /// Which list the container is in.
    pub list: ContainerList,
    /// Index in the status list.
    pub status_index: usize,
    /// Index in the spec list (matched by name), if found.
    pub spec_index: Option<usize>,
    /// The container's name.
    pub container: String,
    /// Where the message is, below the status entry (`state.waiting.message`).
    pub field: &'static str,
    /// The state's reason (`CreateContainerError`, `ErrImagePull`, `CrashLoopBackOff`).
    pub reason: String,
    /// The runtime's message.
    pub message: String,
    /// The message says so on its own (not only `exec format error`).
    pub definite: bool,
}

/// What the live-state rules need of one pod (the audit keeps this, not the pod).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PodFacts {
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// `status.phase` (empty when unknown).
    pub phase: String,
    /// The `PodScheduled` condition when the scheduler failed on taints or node affinity/selector:
    /// (index in `status.conditions`, the scheduler's message).
    pub unschedulable: Option<(usize, String)>,
    /// Containers whose state speaks of an OS mismatch.
    pub container_errors: Vec<ContainerError>,
}

fn lowercase_contains_any(text: &str, needles: &[&str]) -> bool {
    let lower = text.to_ascii_lowercase();
    needles.iter().any(|n| lower.contains(n))
}

/// Reads the facts of a pod.
pub(crate) fn pod_facts(pod: &Pod) -> PodFacts {
    let spec = pod.spec.as_ref();
    let status = pod.status.as_ref();
    let unschedulable = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
        .find(|(_, c)| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
        })
        .and_then(|(i, c)| {
            let message = c.message.clone().unwrap_or_default();
            lowercase_contains_any(&message, PLACEMENT_REASONS).then_some((i, message))
        });
    let mut container_errors = Vec::new();
    if let Some(status) = status {
        let spec_names = |list: ContainerList| -> Vec<&str> {
            match (spec, list) {
                (None, _) => Vec::new(),
                (Some(s), ContainerList::Init) => s
                    .init_containers
                    .iter()
                    .flatten()
                    .map(|c| c.name.as_str())
                    .collect(),
                (Some(s), ContainerList::Regular) => {
                    s.containers.iter().map(|c| c.name.as_str()).collect()
                }
                (Some(s), ContainerList::Ephemeral) => s
                    .ephemeral_containers
                    .iter()
                    .flatten()
                    .map(|c| c.name.as_str())
                    .collect(),
            }
        };
        let lists = [
            (ContainerList::Init, &status.init_container_statuses),
            (ContainerList::Regular, &status.container_statuses),
            (
                ContainerList::Ephemeral,
                &status.ephemeral_container_statuses,
            ),
        ];
        for (list, statuses) in lists {
            let names = spec_names(list);
            for (i, cs) in statuses.iter().flatten().enumerate() {
                if let Some(mut error) = container_error(cs) {
                    error.list = list;
                    error.status_index = i;
                    error.spec_index = names.iter().position(|n| *n == cs.name);
                    container_errors.push(error);
                }
            }
        }
    }
    // The audit holds these for as long as the pod lives.
    container_errors.shrink_to_fit();
    PodFacts {
        node: spec
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty()),
        phase: status.and_then(|s| s.phase.clone()).unwrap_or_default(),
        unschedulable,
        container_errors,
    }
}

/// The first message of a container's current state (or, while it waits, of its last termination) that
/// speaks of an OS mismatch.
fn container_error(cs: &ContainerStatus) -> Option<ContainerError> {
    let state = cs.state.as_ref();
    let waiting = state.and_then(|s| s.waiting.as_ref());
    let terminated = state.and_then(|s| s.terminated.as_ref());
    let last = cs.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    let reason_now = waiting
        .and_then(|w| w.reason.clone())
        .or_else(|| terminated.and_then(|t| t.reason.clone()))
        .unwrap_or_default();
    let mut candidates: Vec<(&'static str, &str)> = Vec::new();
    if let Some(m) = waiting.and_then(|w| w.message.as_deref()) {
        candidates.push(("state.waiting.message", m));
    }
    if let Some(m) = terminated.and_then(|t| t.message.as_deref()) {
        candidates.push(("state.terminated.message", m));
    }
    if waiting.is_some()
        && let Some(m) = last.and_then(|t| t.message.as_deref())
    {
        candidates.push(("lastState.terminated.message", m));
    }
    let make = |field: &'static str, message: &str, definite: bool| ContainerError {
        list: ContainerList::Regular,
        status_index: 0,
        spec_index: None,
        container: cs.name.clone(),
        field,
        reason: reason_now.clone(),
        message: message.to_string(),
        definite,
    };
    if let Some((field, m)) = candidates
        .iter()
        .find(|(_, m)| lowercase_contains_any(m, OS_MISMATCH_MESSAGES))
    {
        return Some(make(field, m, true));
    }
    candidates
        .iter()
        .find(|(_, m)| lowercase_contains_any(m, &[EXEC_FORMAT]))
        .map(|(field, m)| make(field, m, false))
}

/// One container image of a template, as the live rules read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LiveImage {
    /// Path of the `image` field in the pod (`spec.containers[0].image`).
    pub path: FieldPath,
    /// The image reference.
    pub image: String,
    /// The OS the image runs on in this pod (`None`: multi-OS or unknown).
    pub os: Option<Os>,
    /// Windows builds of the image, when known.
    pub builds: Vec<u32>,
}

/// What the live rules need of a template's placement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TemplateFacts {
    /// The OS the pod needs.
    pub os: PodOs,
    /// Why (the first OS signal, or how it was presumed).
    pub why: Option<String>,
    /// A Windows HostProcess pod (exempt from build matching).
    pub host_process: bool,
    /// Every container image.
    pub images: Vec<LiveImage>,
}

/// `path` (below `prefix`) as a path in a Pod: `spec.template.spec.containers[0]` → `spec.containers[0]`.
fn pod_path(path: &FieldPath, prefix: &FieldPath) -> FieldPath {
    let rest = path
        .segments()
        .strip_prefix(prefix.segments())
        .unwrap_or(path.segments());
    let mut out = vec![Segment::Field("spec".into())];
    out.extend(rest.iter().cloned());
    FieldPath(out)
}

/// Reads the facts of a resolved template.
pub(crate) fn template_facts(p: &Placement) -> TemplateFacts {
    let why = p
        .signals
        .first()
        .map(|s| s.what.clone())
        .or_else(|| p.presumed.clone());
    TemplateFacts {
        os: p.os,
        why,
        host_process: p.host_process,
        images: p
            .images
            .iter()
            .map(|img| LiveImage {
                path: pod_path(&img.path, &p.prefix),
                image: img.image.clone(),
                os: p.image_os(img),
                builds: img.class.os.builds().to_vec(),
            })
            .collect(),
    }
}

/// The node a pod is bound to, as the live rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LiveNode<'a> {
    /// Name.
    pub name: &'a str,
    /// OS, when linux or windows.
    pub os: Option<Os>,
    /// A Windows node's build.
    pub build: Option<u32>,
}

fn node_words(node: &LiveNode<'_>) -> String {
    match (node.os, node.build) {
        (Some(Os::Windows), Some(b)) => build_display(b),
        (Some(os), _) => capitalized(os).to_string(),
        (None, _) => "unknown OS".to_string(),
    }
}

fn capitalized(os: Os) -> &'static str {
    match os {
        Os::Windows => "Windows",
        Os::Linux => "Linux",
    }
}

fn builds_words(builds: &[u32]) -> String {
    let words: Vec<String> = builds.iter().map(|b| build_display(*b)).collect();
    words.join(" or ")
}

/// Whether the pod needs a fit for [`check`]: it is unbound and the scheduler failed on placement.
pub(crate) fn is_pending(pod: &PodFacts) -> bool {
    pod.node.is_none()
        && pod.unschedulable.is_some()
        && pod.phase != "Succeeded"
        && pod.phase != "Failed"
}

/// Whether any rule could fire (most pods are fine: they are checked without allocating).
fn may_fire(pod: &PodFacts, template: Option<&TemplateFacts>, node: Option<LiveNode<'_>>) -> bool {
    if is_pending(pod) || !pod.container_errors.is_empty() {
        return true;
    }
    let (Some(t), Some(n)) = (template, node) else {
        return false;
    };
    if pod.phase == "Succeeded" {
        return false;
    }
    let wrong = matches!((t.os.os(), n.os), (Some(a), Some(b)) if a != b);
    wrong || incompatible_image(t, n).is_some()
}

/// The first Windows image of known build that the Windows node's build cannot run (not for HostProcess).
fn incompatible_image<'t>(
    t: &'t TemplateFacts,
    node: LiveNode<'_>,
) -> Option<(&'t LiveImage, u32)> {
    if t.os != PodOs::Windows || t.host_process || node.os != Some(Os::Windows) {
        return None;
    }
    let build = node.build?;
    t.images
        .iter()
        .find(|img| {
            img.os == Some(Os::Windows)
                && !img.builds.is_empty()
                && !host_runs_any(build, &img.builds)
        })
        .map(|img| (img, build))
}

/// Runs the live-state rules on pod `namespace/name`.
///
/// `template` is its template's facts (`None` when unknown: only the status rules run); `node` the node it is
/// bound to, when the cluster has it; `fit` winplace's account of the nodes for a pending pod.
pub(crate) fn check(
    (namespace, name): (&str, &str),
    pod: &PodFacts,
    template: Option<&TemplateFacts>,
    node: Option<LiveNode<'_>>,
    fit: Option<&str>,
    settings: &Settings,
) -> Vec<Finding> {
    if !may_fire(pod, template, node) {
        return Vec::new();
    }
    let object = Object {
        file: String::new(),
        doc_index: 0,
        item: None,
        api_version: "v1".to_string(),
        kind: "Pod".to_string(),
        namespace: Some(namespace.to_string()),
        name: name.to_string(),
        value: serde_json::Value::Null,
        lines: LineMap::default(),
    };
    let mut findings = Vec::new();
    let mut out = Emitter::new(&object, settings, &mut findings);
    let finished = pod.phase == "Succeeded";
    if let (Some(t), Some(n), false) = (template, node, finished) {
        wrong_os(t, n, &mut out);
        incompatible_build(t, n, &mut out);
    }
    if is_pending(pod) {
        pending(pod, fit, &mut out);
    }
    image_os_error(pod, template, node, &mut out);
    findings
}

/// `pod-on-wrong-os`.
fn wrong_os(t: &TemplateFacts, node: LiveNode<'_>, out: &mut Emitter<'_>) {
    let (Some(want), Some(have)) = (t.os.os(), node.os) else {
        return;
    };
    if want == have {
        return;
    }
    let why = t
        .why
        .as_deref()
        .map(|w| format!(" ({w})"))
        .unwrap_or_default();
    out.emit(
        RuleId::PodOnWrongOs,
        &FieldPath::parse("spec.nodeName"),
        format!(
            "This {} pod{why} is bound to the {} node {}, where it cannot run. Give its workload the nodeSelector kubernetes.io/os: {}, then delete the pod so that it is re-created on a {} node.",
            os_word(want),
            capitalized(have),
            node.name,
            want.as_str(),
            capitalized(want),
        ),
        None,
    );
}

/// `pod-on-incompatible-build`.
fn incompatible_build(t: &TemplateFacts, node: LiveNode<'_>, out: &mut Emitter<'_>) {
    let Some((bad, build)) = incompatible_image(t, node) else {
        return;
    };
    let pin = pin_words(t, out.settings);
    out.emit(
        RuleId::PodOnIncompatibleBuild,
        &bad.path,
        format!(
            "This pod is on {} ({}), which cannot run its image {} (built for {}) with process isolation; the container fails with `The operating system of the container does not match the operating system of the host. (0xc0370101)`. {pin}, then delete the pod so that it is re-created on a compatible node.",
            node.name,
            build_display(build),
            bad.image,
            builds_words(&bad.builds),
        ),
        None,
    );
}

/// How `pod-on-incompatible-build` says to pin the workload, as its fixes would (settings `buildPinning`):
/// with `range`, the supported builds that run every Windows image of known build, as required node
/// affinity (placement::build_range); with `exact`, or when no supported build runs them, the nodeSelector.
fn pin_words(t: &TemplateFacts, settings: &Settings) -> String {
    let mut builds = settings.supported_build_numbers();
    builds.sort_unstable();
    builds.dedup();
    builds.retain(|&b| {
        t.images
            .iter()
            .filter(|img| img.os == Some(Os::Windows) && !img.builds.is_empty())
            .all(|img| host_runs_any(b, &img.builds))
    });
    match settings.build_pinning {
        BuildPinning::Range if !builds.is_empty() => format!(
            "Pin its workload to the builds that run its images, {}",
            build_range::phrase(&builds)
        ),
        _ => "Pin the build in its workload with the nodeSelector node.kubernetes.io/windows-build"
            .to_string(),
    }
}

/// `pod-pending-placement`.
fn pending(pod: &PodFacts, fit: Option<&str>, out: &mut Emitter<'_>) {
    let Some((index, message)) = &pod.unschedulable else {
        return;
    };
    let winplace = fit.map(|f| format!(" {f}")).unwrap_or_default();
    out.emit(
        RuleId::PodPendingPlacement,
        &FieldPath::parse("status.conditions")
            .index(*index)
            .field("message"),
        format!(
            "This pod is Pending; the scheduler says: \"{message}\".{winplace} Add the missing toleration or correct the selectors of its workload."
        ),
        None,
    );
}

/// `pod-image-os-error`.
fn image_os_error(
    pod: &PodFacts,
    template: Option<&TemplateFacts>,
    node: Option<LiveNode<'_>>,
    out: &mut Emitter<'_>,
) {
    for e in &pod.container_errors {
        let image = e.spec_index.and_then(|i| {
            let path = FieldPath::parse("spec")
                .field(e.list.spec_field())
                .index(i)
                .field("image");
            template?.images.iter().find(|img| img.path == path)
        });
        if !e.definite {
            // `exec format error` alone: only when the image is known to be of the other OS.
            let other_os = matches!(
                (image.and_then(|i| i.os), node.and_then(|n| n.os)),
                (Some(a), Some(b)) if a != b
            );
            if !other_os {
                continue;
            }
        }
        let on = node
            .map(|n| format!(" on {} ({})", n.name, node_words(&n)))
            .unwrap_or_default();
        let what = image.map_or_else(String::new, |i| {
            let kind = match (i.os, i.builds.as_slice()) {
                (Some(Os::Windows), []) => " (a Windows image)".to_string(),
                (Some(Os::Windows), builds) => format!(" (built for {})", builds_words(builds)),
                (Some(Os::Linux), _) => " (a Linux image)".to_string(),
                (None, _) => String::new(),
            };
            format!(" Its image {}{kind} does not fit the node.", i.image)
        });
        let reason = if e.reason.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.reason)
        };
        out.emit(
            RuleId::PodImageOsError,
            &FieldPath::parse("status")
                .field(e.list.status_field())
                .index(e.status_index)
                .join(&FieldPath::parse(e.field)),
            format!(
                "Container {}{on} cannot start{reason}: \"{}\".{what} Fix the placement of its workload (OS and build selectors) or use an image built for the node, then delete the pod.",
                e.container, e.message
            ),
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use serde_json::json;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).expect("pod")
    }

    fn win_template(builds: &[u32]) -> TemplateFacts {
        TemplateFacts {
            os: PodOs::Windows,
            why: Some("the image is Windows".into()),
            host_process: false,
            images: vec![LiveImage {
                path: FieldPath::parse("spec.containers[0].image"),
                image: "mcr.microsoft.com/windows/servercore:ltsc2019".into(),
                os: Some(Os::Windows),
                builds: builds.to_vec(),
            }],
        }
    }

    fn linux_template() -> TemplateFacts {
        TemplateFacts {
            os: PodOs::Linux,
            why: None,
            host_process: false,
            images: vec![LiveImage {
                path: FieldPath::parse("spec.containers[0].image"),
                image: "nginx:1.27".into(),
                os: Some(Os::Linux),
                builds: vec![],
            }],
        }
    }

    const WIN22: LiveNode<'static> = LiveNode {
        name: "win-22",
        os: Some(Os::Windows),
        build: Some(20348),
    };
    const WIN19: LiveNode<'static> = LiveNode {
        name: "win-19",
        os: Some(Os::Windows),
        build: Some(17763),
    };
    const LINUX: LiveNode<'static> = LiveNode {
        name: "lin",
        os: Some(Os::Linux),
        build: None,
    };

    const POD: (&str, &str) = ("ns", "p");

    fn running(node: &str) -> PodFacts {
        PodFacts {
            node: Some(node.into()),
            phase: "Running".into(),
            ..PodFacts::default()
        }
    }

    fn rules(findings: &[Finding]) -> Vec<(&str, String)> {
        findings
            .iter()
            .map(|f| (f.rule.as_str(), f.path.clone()))
            .collect()
    }

    #[test]
    fn wrong_os_and_incompatible_build() {
        let s = Settings::default();
        let hostprocess = TemplateFacts {
            host_process: true,
            ..win_template(&[17763])
        };
        let any = TemplateFacts {
            os: PodOs::Any,
            ..linux_template()
        };
        // (reference, template, node, phase, expected rules)
        let rows: Vec<(&str, TemplateFacts, LiveNode<'_>, &str, Vec<&str>)> = vec![
            (
                "§1.6: Linux pod on a Windows node",
                linux_template(),
                WIN22,
                "Running",
                vec!["pod-on-wrong-os"],
            ),
            (
                "§1.6: Windows pod on a Linux node",
                win_template(&[20348]),
                LINUX,
                "Pending",
                vec!["pod-on-wrong-os"],
            ),
            ("right OS", linux_template(), LINUX, "Running", vec![]),
            ("OS any: never wrong", any, WIN22, "Running", vec![]),
            (
                "finished pods are history",
                linux_template(),
                WIN22,
                "Succeeded",
                vec![],
            ),
            (
                "§5.3: 2019 image on a 2022 host",
                win_template(&[17763]),
                WIN22,
                "Running",
                vec!["pod-on-incompatible-build"],
            ),
            (
                "§5.3: 2022 image on a 2019 host",
                win_template(&[20348]),
                WIN19,
                "Running",
                vec!["pod-on-incompatible-build"],
            ),
            (
                "§5.3: manifest list with a fitting entry",
                win_template(&[17763, 20348]),
                WIN22,
                "Running",
                vec![],
            ),
            (
                "§5.3: unknown build",
                win_template(&[]),
                WIN19,
                "Running",
                vec![],
            ),
            (
                "§2.2: HostProcess is exempt",
                hostprocess,
                WIN22,
                "Running",
                vec![],
            ),
        ];
        for (reference, t, n, phase, want) in rows {
            let p = PodFacts {
                phase: phase.into(),
                ..running(n.name)
            };
            let f = check(POD, &p, Some(&t), Some(n), None, &s);
            let got: Vec<&str> = f.iter().map(|f| f.rule.as_str()).collect();
            assert_eq!(got, want, "{reference}");
            assert!(f.iter().all(|f| f.object.display_name() == "Pod/ns/p"));
        }
        let f = check(
            POD,
            &running("win-22"),
            Some(&win_template(&[17763])),
            Some(WIN22),
            None,
            &s,
        );
        assert_eq!(f[0].path, "spec.containers[0].image");
        assert!(
            f[0].message.contains("Windows Server 2022 (10.0.20348)"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("Windows Server 2019 (10.0.17763)"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn incompatible_build_says_to_pin_as_the_fixes_do() {
        // (reference, image builds, node, buildPinning, how the message says to pin)
        let exact_words = "Pin the build in its workload with the nodeSelector node.kubernetes.io/windows-build, then";
        let rows = [
            (
                "a 2022 image: the supported builds that run it, as a range",
                vec![20348],
                WIN19,
                BuildPinning::Range,
                "Pin its workload to the builds that run its images, required node affinity node.kubernetes.io/windows-build In [10.0.20348, 10.0.26100], then",
            ),
            (
                "buildPinning: exact names the nodeSelector",
                vec![20348],
                WIN19,
                BuildPinning::Exact,
                exact_words,
            ),
            (
                "a 2019 image: no supported build runs it, no range to name",
                vec![17763],
                WIN22,
                BuildPinning::Range,
                exact_words,
            ),
        ];
        for (reference, builds, node, build_pinning, words) in rows {
            let s = Settings {
                build_pinning,
                ..Settings::default()
            };
            let f = check(
                POD,
                &running(node.name),
                Some(&win_template(&builds)),
                Some(node),
                None,
                &s,
            );
            assert_eq!(f.len(), 1, "{reference}: {f:?}");
            assert!(
                f[0].message.contains(words),
                "{reference}: {}",
                f[0].message
            );
        }
    }

    #[test]
    fn pending_from_the_pod_scheduled_condition() {
        let s = Settings::default();
        let condition = |reason: &str, message: &str| {
            pod(json!({
                "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
                "status": {"phase": "Pending", "conditions": [
                    {"type": "Initialized", "status": "True"},
                    {"type": "PodScheduled", "status": "False", "reason": reason, "message": message}
                ]}
            }))
        };
        // (reference, pod, fires)
        let rows = [
            (
                "TaintToleration",
                condition(
                    "Unschedulable",
                    "0/3 nodes are available: 3 node(s) had untolerated taint {os: windows}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
                ),
                true,
            ),
            (
                "NodeAffinity",
                condition(
                    "Unschedulable",
                    "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
                ),
                true,
            ),
            (
                "old taint wording",
                condition(
                    "Unschedulable",
                    "0/2 nodes are available: 2 node(s) had taint {os: windows}, that the pod didn't tolerate.",
                ),
                true,
            ),
            (
                "resources are not placement",
                condition(
                    "Unschedulable",
                    "0/3 nodes are available: 3 Insufficient cpu.",
                ),
                false,
            ),
            (
                "other reason",
                condition("SchedulerError", "node(s) had untolerated taint"),
                false,
            ),
        ];
        for (reference, p, fires) in rows {
            let facts = pod_facts(&p);
            let f = check(
                POD,
                &facts,
                None,
                None,
                Some("winplace: no node can take it."),
                &s,
            );
            assert_eq!(f.len(), usize::from(fires), "{reference}");
            if fires {
                assert_eq!(f[0].rule, "pod-pending-placement");
                assert_eq!(f[0].path, "status.conditions[1].message");
                assert!(
                    f[0].message.contains("node(s)"),
                    "{reference}: quotes the scheduler"
                );
                assert!(f[0].message.contains("winplace: no node"), "{reference}");
            }
        }
        // Bound pods are not pending.
        let mut facts = pod_facts(&rows_pod());
        facts.node = Some("n".into());
        assert!(check(POD, &facts, None, None, None, &s).is_empty());
    }

    fn rows_pod() -> Pod {
        pod(json!({
            "metadata": {"name": "p"},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "1 node(s) didn't match Pod's node affinity/selector"}]}
        }))
    }

    #[test]
    fn image_os_errors_from_container_statuses() {
        let s = Settings::default();
        let with_status = |status: serde_json::Value| {
            pod(json!({
                "metadata": {"name": "p", "namespace": "ns"},
                "spec": {"nodeName": "win-22", "initContainers": [{"name": "init", "image": "busybox"}], "containers": [{"name": "side", "image": "x"}, {"name": "app", "image": "y"}]},
                "status": {"phase": "Pending", "containerStatuses": [
                    {"name": "side", "image": "x", "imageID": "", "ready": true, "restartCount": 0, "state": {"running": {}}},
                    status
                ]}
            }))
        };
        let waiting = |reason: &str, message: &str| {
            json!({"name": "app", "image": "y", "imageID": "", "ready": false, "restartCount": 0,
                   "state": {"waiting": {"reason": reason, "message": message}}})
        };
        let crashloop = |last: &str| {
            json!({"name": "app", "image": "y", "imageID": "", "ready": false, "restartCount": 5,
                   "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container=app"}},
                   "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": last}}})
        };
        let mut win_app = win_template(&[17763]);
        win_app.images[0].path = FieldPath::parse("spec.containers[1].image");
        // (reference, status, template, node, fires, path)
        let rows: Vec<(
            &str,
            serde_json::Value,
            TemplateFacts,
            LiveNode<'_>,
            bool,
            &str,
        )> = vec![
            (
                "hcsshim 0xc0370101",
                waiting(
                    "CreateContainerError",
                    "failed to create containerd container: hcs::CreateComputeSystem app: The operating system of the container does not match the operating system of the host. (0xc0370101)",
                ),
                win_app.clone(),
                WIN22,
                true,
                "status.containerStatuses[1].state.waiting.message",
            ),
            (
                "containerd platform matcher",
                waiting(
                    "ErrImagePull",
                    "failed to pull and unpack image \"docker.io/library/nginx:1.27\": no match for platform in manifest: not found",
                ),
                linux_template(),
                WIN22,
                true,
                "status.containerStatuses[1].state.waiting.message",
            ),
            (
                "docker",
                waiting(
                    "ErrImagePull",
                    "image operating system \"windows\" cannot be used on this platform",
                ),
                win_app.clone(),
                LINUX,
                true,
                "status.containerStatuses[1].state.waiting.message",
            ),
            (
                "docker manifest list",
                waiting(
                    "ErrImagePull",
                    "no matching manifest for linux/amd64 in the manifest list entries",
                ),
                win_app.clone(),
                LINUX,
                true,
                "status.containerStatuses[1].state.waiting.message",
            ),
            (
                "exec format error, Windows image on Linux",
                crashloop("exec /app: exec format error"),
                win_app.clone(),
                LINUX,
                true,
                "status.containerStatuses[1].lastState.terminated.message",
            ),
            (
                "exec format error, same OS (an arch problem)",
                crashloop("exec /app: exec format error"),
                linux_template(),
                LINUX,
                false,
                "",
            ),
            (
                "unrelated pull error",
                waiting("ErrImagePull", "pull access denied"),
                linux_template(),
                WIN22,
                false,
                "",
            ),
            (
                "back-off without evidence",
                waiting("ImagePullBackOff", "Back-off pulling image \"y\""),
                linux_template(),
                WIN22,
                false,
                "",
            ),
        ];
        for (reference, status, mut t, node, fires, path) in rows {
            if t.images[0].path.to_string() == "spec.containers[0].image" {
                t.images[0].path = FieldPath::parse("spec.containers[1].image");
            }
            let facts = pod_facts(&with_status(status));
            let p = PodFacts {
                node: Some(node.name.into()),
                ..facts
            };
            // The template's OS is not consulted for the wrong-OS rule here: use Any so only this rule fires.
            let t = TemplateFacts {
                os: PodOs::Any,
                ..t
            };
            let f = check(POD, &p, Some(&t), Some(node), None, &s);
            let got = rules(&f);
            if fires {
                assert_eq!(
                    got,
                    [("pod-image-os-error", path.to_string())],
                    "{reference}"
                );
                assert_eq!(f[0].severity, Severity::Error);
                assert!(
                    f[0].message.contains("Container app"),
                    "{reference}: {}",
                    f[0].message
                );
            } else {
                assert!(got.is_empty(), "{reference}: {got:?}");
            }
        }
    }

    #[test]
    fn settings_disable_and_override() {
        let mut s = Settings::default();
        s.disabled_rules.push("pod-on-wrong-os".into());
        assert!(
            check(
                POD,
                &running("lin"),
                Some(&win_template(&[20348])),
                Some(LINUX),
                None,
                &s
            )
            .is_empty()
        );
        let mut s = Settings::default();
        s.severity
            .insert("pod-on-wrong-os".into(), Severity::Warning);
        let f = check(
            POD,
            &running("lin"),
            Some(&win_template(&[20348])),
            Some(LINUX),
            None,
            &s,
        );
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn pod_paths_drop_the_template_prefix() {
        let p = pod_path(
            &FieldPath::parse("spec.template.spec.containers[2].image"),
            &FieldPath::parse("spec.template.spec"),
        );
        assert_eq!(p.to_string(), "spec.containers[2].image");
        let p = pod_path(
            &FieldPath::parse("spec.initContainers[0].image"),
            &FieldPath::parse("spec"),
        );
        assert_eq!(p.to_string(), "spec.initContainers[0].image");
    }
}
