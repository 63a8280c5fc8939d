//! What one line of a cluster's message shows: the [`Cause`]s it names, each as a [`Match`] with the
//! objects, rule and fix the line alone tells. Needs no cluster context, so the model can reduce Events
//! to their matches as it decodes them ([`crate::model::events`]); [`super::Explainer`] adds what other
//! lines and the cluster say.

use serde::{Deserialize, Serialize};

use super::cause::Cause;
use super::objects::{self, Objects};
use super::signatures::{SIGNATURES, Signature};

/// One explained message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    /// Why the workload fails.
    pub cause: Cause,
    /// The message is about the pod sandbox (the pause image the runtime starts first), not one of the
    /// pod's containers.
    pub sandbox: bool,
    /// What it means, in one sentence.
    pub meaning: String,
    /// What the message (and the context) names.
    pub objects: Objects,
    /// The catalogue rule that would have caught it before deployment.
    pub rule: Option<String>,
    /// What to do (concrete when the context knows the node and the image).
    pub fix: String,
    /// Who prints the message.
    pub source: String,
    /// The signature's id (its section in `docs/reference/error-signatures.md`).
    pub signature: String,
    /// The line as read (cleaned; at most 2,000 characters).
    pub message: String,
    /// Its 1-based line number in the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// How many lines gave the same match.
    pub count: u64,
}

/// The longest message kept in a [`Match`], in characters.
const MAX_MESSAGE: usize = 2_000;

/// Explains one line on its own (no context from other lines): every cause it shows, once each.
pub fn explain_line(text: &str) -> Vec<Match> {
    let mut out: Vec<Match> = Vec::new();
    for s in SIGNATURES {
        if out.iter().any(|m| m.cause == s.cause) {
            continue;
        }
        if !s.any.iter().any(|n| text.contains(n)) || !s.all.iter().all(|n| text.contains(n)) {
            continue;
        }
        out.push(matched(s, text));
    }
    out
}
/// The match of signature `s` on `text`: the objects the text names, and the meaning, rule and fix
/// as far as the text alone tells them.
fn matched(s: &'static Signature, text: &str) -> Match {
    let mut objects = Objects {
        pod: objects::pod(text),
        node: objects::node(text),
        image: objects::image(text),
        ..Objects::default()
    };
    let sandbox = sandbox_named(text) == Some(true);
    let mut meaning = s.meaning.to_string();
    let mut rule = s.rule;
    let mut fix = s.fix.to_string();
    match s.cause {
        Cause::UntoleratedTaint => {
            objects.taint = objects::taints(text);
            objects.nodes = objects::excluded_nodes(text, "taint");
            if !objects.taint.is_empty() && objects.taint.iter().all(|t| is_condition_taint(t)) {
                meaning.push_str(" The taint is one Kubernetes sets for a node's condition (not ready, unreachable, under pressure, not yet initialized), not a placement choice: fix the node, not the pod.");
            }
        }
        Cause::SelectorMismatch => {
            objects.nodes = objects::excluded_nodes(text, "node affinity/selector");
        }
        Cause::NoPlatformInManifest => {
            if let Some((platform, build)) = objects::platform(text) {
                if objects::platform_os(&platform) == "linux" {
                    meaning = format!(
                        "The image's index has no {platform} entry: it is a Windows-only image (or built for another architecture), pulled on a Linux node."
                    );
                    rule = Some(crate::catalog::RuleId::WindowsPodWithoutOsSelector);
                } else {
                    meaning = format!(
                        "The image's index has no entry for {platform}: none of its Windows images runs on a host of this build (or architecture)."
                    );
                }
                objects.build = build;
                objects.platform = Some(platform);
            }
        }
        Cause::BuildMismatch if s.id == "moby-uplevel-image" => {
            if let Some((image, host)) = objects::uplevel_builds(text) {
                meaning =
                    format!("{meaning} The image is built for {image}, the host runs {host}.");
                objects.image_build = Some(image);
                objects.build = Some(host);
            }
        }
        Cause::OsMismatch if s.id == "moby-image-os" && !sandbox => {
            if text.contains("operating system \"linux\"") {
                meaning =
                    "The runtime refused the image: it is a Linux image and the node is Windows."
                        .to_string();
                rule = Some(crate::catalog::RuleId::LinuxPodWithoutOsSelector);
            } else if text.contains("operating system \"windows\"") {
                meaning =
                    "The runtime refused the image: it is a Windows image and the node is Linux."
                        .to_string();
            }
        }
        Cause::UndeclaredFeature if s.id == "apiserver-node-declared-features" => {
            // `pod update requires features %s which are not available on node %q`, `%s` the names
            // joined by ", ".
            let names = text
                .split_once("pod update requires features ")
                .and_then(|(_, rest)| rest.split_once(" which are not available on node"))
                .map(|(names, _)| names)
                .filter(|n| !n.is_empty() && n.len() <= 512);
            if let Some(names) = names {
                meaning = format!("{meaning} The change needs: {names}.");
            }
        }
        Cause::ForbiddenWindowsField => {
            objects.field = objects::forbidden_fields(text);
            if !objects.field.is_empty() {
                fix = format!(
                    "Remove {} from the pod template (presence alone is rejected, even `false`), or correct spec.os.name if the pod is not of that OS.",
                    objects.field.join(", ")
                );
            }
        }
        Cause::Runtimeclass => {
            let (name, key) = objects::runtime_class(text);
            objects.runtime_class = name;
            objects.field = key.into_iter().collect();
        }
        _ => {}
    }
    // The pause image is the node's configuration: whatever the cause, a sandbox line says so, and no
    // manifest rule catches it.
    if sandbox && let Some((m, f)) = sandbox_words(s.cause, &objects) {
        (meaning, fix) = (m, f);
        rule = None;
    }
    Match {
        cause: s.cause,
        sandbox,
        meaning,
        objects,
        rule: rule.map(|r| r.as_str().to_string()),
        fix,
        source: s.source.to_string(),
        signature: s.id.to_string(),
        message: text.trim().chars().take(MAX_MESSAGE).collect(),
        line: None,
        count: 1,
    }
}

/// The kubelet's and the runtime's operations on the pod sandbox (the pause image started before any
/// container): `RunPodSandbox` (the CRI call, containerd's log), `CreatePodSandbox` (the kubelet's older
/// `failed to "CreatePodSandbox"`), the event reason `FailedCreatePodSandBox` and its message `Failed to
/// create pod sandbox` (kubelet `kuberuntime_manager.go`), Docker's `failed to start sandbox container`
/// (docs/reference/error-signatures.md, "kubelet, sandbox").
const SANDBOX_OPERATIONS: &[&str] = &[
    "RunPodSandbox",
    "CreatePodSandbox",
    "CreatePodSandBox",
    "Failed to create pod sandbox",
    "failed to start sandbox container",
];

/// The operations on one of the pod's containers, which name the sandbox only as where the container
/// goes: the kubelet's `CreateContainer in sandbox from runtime service failed` (cri-client
/// `remote_runtime.go`), containerd's `CreateContainer within sandbox "…" for … failed`, its `failed to
/// create containerd container`, `StartContainer`.
const CONTAINER_OPERATIONS: &[&str] = &[
    "CreateContainer",
    "StartContainer",
    "failed to create containerd container",
];

/// Whether a line names the operation it failed in: `Some(true)` the pod sandbox's, `Some(false)` a
/// container's (`CreateContainer in sandbox …` is the container's error, not the pause image's),
/// `None` when it names neither.
pub(crate) fn sandbox_named(text: &str) -> Option<bool> {
    if SANDBOX_OPERATIONS.iter().any(|n| text.contains(n)) {
        Some(true)
    } else if CONTAINER_OPERATIONS.iter().any(|n| text.contains(n)) {
        Some(false)
    } else {
        None
    }
}

/// Where a node's sandbox (pause) image is configured, for the fixes.
const SANDBOX_CONFIG: &str = "containerd's sandbox image (pinned_images.sandbox in containerd 2, sandbox_image in 1.x) or the kubelet's --pod-infra-container-image";

/// What a failure of the pod sandbox means, and its fix, for the causes a sandbox line can carry: the
/// pause image is the node's configuration, so every pod on that node fails the same way, and no
/// manifest rule catches it. `None` for a cause a sandbox line does not carry (scheduler and API
/// server messages never name a sandbox operation).
fn sandbox_words(cause: Cause, objects: &Objects) -> Option<(String, String)> {
    let image = objects.image.as_deref().map_or_else(
        || "pause (sandbox) image".to_string(),
        |i| format!("pause (sandbox) image {i}"),
    );
    let restart =
        "then restart the runtime (and the kubelet); the pods' own images are not at fault";
    let multi_os = "a multi-OS registry.k8s.io/pause tag (3.6 or later lists the supported Windows Server builds)";
    Some(match cause {
        Cause::BuildMismatch => (
            format!(
                "Windows refused to start the pod sandbox: the node's {image} was built for another Windows build than the host's, so every pod on this node fails, whatever its own images."
            ),
            format!(
                "Configure {SANDBOX_CONFIG} as a pause image with an entry for this host's build, such as {multi_os}, {restart}."
            ),
        ),
        Cause::NoPlatformInManifest => {
            let platform = objects
                .platform
                .as_deref()
                .map_or_else(|| "this node's platform".to_string(), |p| p.to_string());
            (
                format!(
                    "The node could not pull its {image}: the image's index has no entry for {platform}, so no pod can start on this node, whatever its own images."
                ),
                format!(
                    "Configure {SANDBOX_CONFIG} as a pause image whose index lists {platform}, such as {multi_os}, {restart}."
                ),
            )
        }
        Cause::OsMismatch => (
            format!(
                "The runtime refused the node's {image}: it is built for the other operating system than the node's, so no pod can start on this node, whatever its own images."
            ),
            format!(
                "Configure {SANDBOX_CONFIG} as a pause image of the node's OS, such as {multi_os}, {restart}."
            ),
        ),
        _ => return None,
    })
}

/// Makes `m`, explained from a line that names no operation, the pod sandbox's: because the wrapped
/// message the line belongs to names a sandbox operation (`None`), or, for a build mismatch, because of
/// what the pod's `PodReadyToStartContainers` condition said (`False`, reason `PodSandboxNotReady`: no
/// sandbox runs, so no container was created).
pub(crate) fn blame_sandbox(m: &mut Match, condition: Option<&str>) {
    if m.sandbox || (condition.is_some() && m.cause != Cause::BuildMismatch) {
        return;
    }
    let Some((meaning, fix)) = sandbox_words(m.cause, &m.objects) else {
        return;
    };
    m.sandbox = true;
    m.meaning = match condition {
        Some(condition) => format!("{meaning} The pod's {condition}."),
        None => meaning,
    };
    m.fix = fix;
    m.rule = None;
}

/// Taints that the node lifecycle controller, the kubelet or the cloud provider set for a node's
/// condition, as a message writes them (`key=value` or `key`).
fn is_condition_taint(taint: &str) -> bool {
    crate::schedule::taints::is_condition_taint(taint.split('=').next().unwrap_or(taint))
}
