//! Error signatures: what the cluster says (scheduler events, kubelet and runtime errors, API server
//! rejections) → the cause, what it means, the objects it names, the catalogue rule that would have
//! caught it before deployment, and the fix.
//!
//! Pure and bounded: text is read one line at a time ([`Explainer::line`]), each line at most
//! [`clean::MAX_LINE`] bytes, and matched with a fixed set of substring searches ([`signatures`]), so
//! the work per line is linear in its length and the memory is one line plus the matches kept (at most
//! [`MAX_MATCHES`] distinct ones). The `winplace explain` command, the playground and the audit's
//! incidents all go through here.
//!
//! ```
//! use winplace_rules::explain::{explain_text, Cause};
//! let found = explain_text("0/5 nodes are available: 2 node(s) had untolerated taint {os: windows}, 3 node(s) didn't match Pod's node affinity/selector.", None);
//! let causes: Vec<Cause> = found.iter().map(|m| m.cause).collect();
//! assert_eq!(causes, [Cause::UntoleratedTaint, Cause::SelectorMismatch]);
//! assert_eq!(found[0].objects.taint, ["os=windows"]);
//! assert!(explain_text("Last State: Terminated  Reason: OOMKilled", None).is_empty());
//! ```

pub mod clean;
mod context;
mod objects;
pub mod signatures;

pub use context::refine;
pub use objects::Objects;
pub use signatures::{SIGNATURES, Signature};

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::model::ClusterContext;

/// Why a workload fails, in winplace's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// The pod and the node (or the image and the node) are of different operating systems.
    OsMismatch,
    /// A Windows image of another build than the host's (process isolation).
    BuildMismatch,
    /// The image's index has no entry for the node's platform.
    NoPlatformInManifest,
    /// The pod does not tolerate a node's taint.
    UntoleratedTaint,
    /// The pod's nodeSelector or node affinity excludes the nodes.
    SelectorMismatch,
    /// The API server rejects a field of a Windows (or Linux) pod.
    ForbiddenWindowsField,
    /// RuntimeClass admission refused the pod.
    Runtimeclass,
}

impl Cause {
    /// Every cause.
    pub const ALL: [Cause; 7] = [
        Cause::OsMismatch,
        Cause::BuildMismatch,
        Cause::NoPlatformInManifest,
        Cause::UntoleratedTaint,
        Cause::SelectorMismatch,
        Cause::ForbiddenWindowsField,
        Cause::Runtimeclass,
    ];

    /// The kebab-case name (`build-mismatch`).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::OsMismatch => "os-mismatch",
            Cause::BuildMismatch => "build-mismatch",
            Cause::NoPlatformInManifest => "no-platform-in-manifest",
            Cause::UntoleratedTaint => "untolerated-taint",
            Cause::SelectorMismatch => "selector-mismatch",
            Cause::ForbiddenWindowsField => "forbidden-windows-field",
            Cause::Runtimeclass => "runtimeclass",
        }
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

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

/// The most distinct matches an [`Explainer`] keeps; later ones are counted in
/// [`Explainer::dropped`].
pub const MAX_MATCHES: usize = 1_000;

/// The longest message kept in a [`Match`], in characters.
const MAX_MESSAGE: usize = 2_000;

/// Reads text line by line and explains what it can: pasted messages, `kubectl describe pod`,
/// `kubectl get events` (table, `-o json`, `-o yaml`), kubelet and containerd logs, `kubectl apply`
/// errors.
///
/// It remembers across lines what a line alone does not say: the pod a `kubectl describe pod` is
/// about (`Name:`, `Namespace:`, `Node:`), and the object an event in JSON or YAML is about
/// (`involvedObject` / `regarding`).
///
/// ```
/// use winplace_rules::explain::Explainer;
/// let mut explainer = Explainer::new(None);
/// for line in "Name:         web-0\nNamespace:    shop\nNode:         win19-1/10.0.0.4\nEvents:\n  Warning  Failed  3s  kubelet  Error: failed to create containerd container: hcs::CreateComputeSystem web: The container operating system does not match the host operating system.".lines() {
///     explainer.line(line.as_bytes());
/// }
/// let found = explainer.finish();
/// assert_eq!(found[0].cause.as_str(), "build-mismatch");
/// assert_eq!(found[0].objects.pod.as_deref(), Some("shop/web-0"));
/// assert_eq!(found[0].objects.node.as_deref(), Some("win19-1"));
/// assert!(!found[0].sandbox);
/// ```
#[derive(Debug)]
pub struct Explainer<'c> {
    context: Option<&'c ClusterContext>,
    prefilter: Prefilter,
    buf: String,
    number: u64,
    matches: Vec<Match>,
    dropped: u64,
    describe: Describe,
    event: EventObject,
}

/// What `kubectl describe pod` said so far.
#[derive(Debug, Default)]
struct Describe {
    name: Option<String>,
    namespace: Option<String>,
    node: Option<String>,
    /// Its containers' images (`    Image:` lines), the first few.
    images: Vec<String>,
}

/// The object of the event being read in `-o json` / `-o yaml` (`involvedObject`, `regarding`).
#[derive(Debug, Default)]
struct EventObject {
    /// Inside the object's block (opened at this indentation): its `name` and `namespace` keys are the
    /// object's, until a line at this indentation or less.
    open: Option<usize>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
}

impl<'c> Explainer<'c> {
    /// An explainer; `context` (the cluster's Nodes and RuntimeClasses) makes the fixes concrete.
    pub fn new(context: Option<&'c ClusterContext>) -> Self {
        Explainer {
            context,
            prefilter: Prefilter::new(),
            buf: String::new(),
            number: 0,
            matches: Vec::new(),
            dropped: 0,
            describe: Describe::default(),
            event: EventObject::default(),
        }
    }

    /// Reads one line (any bytes; a trailing `\n` or `\r\n` is ignored; at most
    /// [`clean::MAX_LINE`] bytes of it are read).
    pub fn line(&mut self, raw: &[u8]) {
        self.number += 1;
        let mut buf = std::mem::take(&mut self.buf);
        let text = clean::line(raw, &mut buf);
        self.remember(text);
        if self.prefilter.may_match(text) {
            let found = explain_line(text);
            for mut m in found {
                self.fill_from_state(&mut m);
                if let Some(context) = self.context {
                    refine(&mut m, context);
                }
                m.line = Some(self.number);
                self.keep(m);
            }
        }
        self.buf = buf;
    }

    /// Matches beyond [`MAX_MATCHES`] distinct ones, not kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The lines read.
    pub fn lines(&self) -> u64 {
        self.number
    }

    /// The matches, in the order their first line came.
    pub fn finish(self) -> Vec<Match> {
        self.matches
    }

    fn keep(&mut self, m: Match) {
        let same = |k: &Match| {
            k.cause == m.cause
                && k.signature == m.signature
                && k.objects == m.objects
                && k.message == m.message
        };
        if let Some(k) = self.matches.iter_mut().rev().take(64).find(|k| same(k)) {
            k.count += 1;
            return;
        }
        if self.matches.len() >= MAX_MATCHES {
            self.dropped += 1;
            return;
        }
        self.matches.push(m);
    }

    /// Remembers what `kubectl describe` and event documents say about the object of later lines.
    fn remember(&mut self, text: &str) {
        // kubectl describe pod: `Name:`, `Namespace:` and `Node:` at the start of a line.
        if let Some(v) = text.strip_prefix("Name:") {
            self.describe = Describe {
                name: Some(v.trim().to_string()),
                ..Describe::default()
            };
            self.event = EventObject::default();
        } else if let Some(v) = text.strip_prefix("Namespace:") {
            self.describe.namespace = Some(v.trim().to_string());
        } else if let Some(v) = text.strip_prefix("Node:") {
            let node = v.trim().split('/').next().unwrap_or("").to_string();
            self.describe.node = (!node.is_empty() && node != "<none>").then_some(node);
        } else if self.describe.name.is_some()
            && let Some(v) = text.trim_start().strip_prefix("Image:")
            && text.starts_with(' ')
        {
            let image = v.trim().to_string();
            if !image.is_empty()
                && !self.describe.images.contains(&image)
                && self.describe.images.len() < 8
            {
                self.describe.images.push(image);
            }
        }
        // Events as JSON or YAML: the object block comes before the message.
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len()
            + (trimmed.len() - trimmed.trim_start_matches(['-', ' ']).len());
        if self.event.open.is_some_and(|at| indent <= at) {
            self.event.open = None;
        }
        let key = trimmed
            .trim_start_matches(['"', '-', ' '])
            .split(['"', ':'])
            .next()
            .unwrap_or("");
        match key {
            "involvedObject" | "regarding" => {
                self.event = EventObject {
                    open: Some(indent),
                    ..EventObject::default()
                };
            }
            "kind" | "name" | "namespace" if self.event.open.is_some() => {
                let value = value_of(trimmed);
                match key {
                    "kind" => self.event.kind = value,
                    "name" => self.event.name = value,
                    _ => self.event.namespace = value,
                }
            }
            _ => {}
        }
    }

    /// Fills the objects a line does not name from what earlier lines said.
    fn fill_from_state(&self, m: &mut Match) {
        if m.objects.pod.is_none() {
            if self.event.kind.as_deref() == Some("Pod")
                && let Some(name) = &self.event.name
            {
                m.objects.pod = Some(qualified(self.event.namespace.as_deref(), name));
            } else if let Some(name) = &self.describe.name {
                m.objects.pod = Some(qualified(self.describe.namespace.as_deref(), name));
            }
        }
        if m.objects.node.is_none() {
            m.objects.node = self.describe.node.clone();
        }
        // A pod of one image: the container the message is about runs it.
        if m.objects.image.is_none() && !m.sandbox && self.describe.images.len() == 1 {
            m.objects.image = self.describe.images.first().cloned();
        }
    }
}

/// `namespace/name`, or `name`.
fn qualified(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() && !name.contains('/') => format!("{ns}/{name}"),
        _ => name.to_string(),
    }
}

/// The value of a `key: value` or `"key": "value",` line.
fn value_of(line: &str) -> Option<String> {
    let (_, v) = line.split_once(':')?;
    let v = v.trim().trim_end_matches(',').trim_matches('"').trim();
    (!v.is_empty() && v.len() <= 253).then(|| v.to_string())
}

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

/// Explains a whole text (the playground's field, tests): [`Explainer`] over its lines, with the
/// context's concrete fixes when given.
pub fn explain_text(text: &str, context: Option<&ClusterContext>) -> Vec<Match> {
    let mut explainer = Explainer::new(context);
    for line in text.split('\n') {
        explainer.line(line.as_bytes());
    }
    explainer.finish()
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
    let sandbox = text.contains("sandbox") || text.contains("Sandbox") || text.contains("SandBox");
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
                    rule = Some(crate::rules::RuleId::WindowsPodWithoutOsSelector);
                } else {
                    meaning = format!(
                        "The image's index has no entry for {platform}: none of its Windows images runs on a host of this build (or architecture)."
                    );
                }
                objects.build = build;
                objects.platform = Some(platform);
            }
        }
        Cause::BuildMismatch if sandbox => {
            meaning = "Windows refused to start the pod sandbox: the node's pause (sandbox) image was built for another Windows build than the host's, so every pod on this node fails, whatever its own images.".to_string();
            rule = None;
            fix = "Configure the node's sandbox image (containerd's sandbox_image, or the kubelet's --pod-infra-container-image) as a pause image with an entry for this host's build, such as a multi-OS registry.k8s.io/pause tag, then restart the runtime; the pods' own images are not at fault.".to_string();
        }
        Cause::OsMismatch if s.id == "moby-image-os" => {
            if text.contains("operating system \"linux\"") {
                meaning =
                    "The runtime refused the image: it is a Linux image and the node is Windows."
                        .to_string();
                rule = Some(crate::rules::RuleId::LinuxPodWithoutOsSelector);
            } else if text.contains("operating system \"windows\"") {
                meaning =
                    "The runtime refused the image: it is a Windows image and the node is Linux."
                        .to_string();
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

/// Taints that the node lifecycle controller, the kubelet or the cloud provider set for a node's
/// condition (kubernetes-windows-rules.md §3.2).
fn is_condition_taint(taint: &str) -> bool {
    let key = taint.split('=').next().unwrap_or(taint);
    matches!(
        key,
        "node.kubernetes.io/not-ready"
            | "node.kubernetes.io/unreachable"
            | "node.kubernetes.io/unschedulable"
            | "node.kubernetes.io/memory-pressure"
            | "node.kubernetes.io/disk-pressure"
            | "node.kubernetes.io/pid-pressure"
            | "node.kubernetes.io/network-unavailable"
            | "node.kubernetes.io/out-of-service"
            | "node.cloudprovider.kubernetes.io/uninitialized"
            | "node.cloudprovider.kubernetes.io/shutdown"
    )
}

/// A quick test that a line may hold a signature's text: one scan of the line over a table of the
/// needles' first two bytes, so that the common line (one that matches nothing) costs one pass.
#[derive(Debug)]
struct Prefilter {
    /// Bit `a * 256 + b` is set when a needle starts with the bytes `a b`.
    pairs: Vec<u64>,
    needles: Vec<&'static [u8]>,
}

impl Prefilter {
    fn new() -> Self {
        let mut pairs = vec![0u64; 65_536 / 64];
        let mut needles: Vec<&'static [u8]> = SIGNATURES
            .iter()
            .flat_map(|s| s.any.iter())
            .map(|n| n.as_bytes())
            .collect();
        needles.sort();
        needles.dedup();
        for n in &needles {
            let bit = pair(n[0], n[1]);
            pairs[bit / 64] |= 1 << (bit % 64);
        }
        Prefilter { pairs, needles }
    }

    fn may_match(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        bytes.windows(2).enumerate().any(|(i, w)| {
            let bit = pair(w[0], w[1]);
            self.pairs[bit / 64] & (1 << (bit % 64)) != 0
                && self.needles.iter().any(|n| bytes[i..].starts_with(n))
        })
    }
}

fn pair(a: u8, b: u8) -> usize {
    usize::from(a) * 256 + usize::from(b)
}

#[cfg(test)]
mod tests;
