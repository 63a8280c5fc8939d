//! Error signatures: what the cluster says (scheduler events, kubelet and runtime errors, API server
//! rejections) → the cause, what it means, the objects it names, the catalogue rule that would have
//! caught it before deployment, and the fix.
//!
//! Pure and bounded: text is read one line at a time ([`Explainer::line`]), each line at most
//! [`clean::MAX_LINE`] bytes, and matched with a fixed set of substring searches ([`signatures`]), so
//! the work per line is linear in its length and the memory is one message plus the matches kept (at
//! most [`MAX_MATCHES`] distinct ones). A message a console, an editor or `kubectl describe` wrapped over
//! several lines is joined first (at most 16 lines, [`wrapped`]) and explained once, as if on one line:
//! a line is explained when the next shows it does not go on. The `winplace explain` command, the
//! playground and the audit's incidents all go through here.
//!
//! ```
//! use winplace_rules::explain::{explain_text, Cause};
//! let found = explain_text("0/5 nodes are available: 2 node(s) had untolerated taint {os: windows}, 3 node(s) didn't match Pod's node affinity/selector.", None);
//! let causes: Vec<Cause> = found.iter().map(|m| m.cause).collect();
//! assert_eq!(causes, [Cause::UntoleratedTaint, Cause::SelectorMismatch]);
//! assert_eq!(found[0].objects.taint, ["os=windows"]);
//! assert!(explain_text("Last State: Terminated  Reason: OOMKilled", None).is_empty());
//! ```

mod cause;
pub mod clean;
mod context;
mod matching;
mod objects;
pub mod signatures;
mod wrapped;

pub use cause::Cause;
pub use matching::{Match, explain_line};

pub use context::{pin_generic, refine, refine_settings, refine_with};
pub use objects::Objects;
pub use signatures::{SIGNATURES, Signature};

use crate::model::ClusterContext;

/// What explain looks for, said when nothing matched (the CLI and the playground say the same).
///
/// ```
/// assert!(winplace_rules::explain::CAUSES_LOOKED_FOR.contains("does not declare"));
/// ```
pub const CAUSES_LOOKED_FOR: &str = "nothing here is about an OS or Windows-build mismatch, an image without the node's platform, an untolerated taint, a selector no node matches, a field the API server forbids on Windows pods, a feature the node does not declare, or RuntimeClass admission";

/// The most distinct matches an [`Explainer`] keeps; later ones are counted in
/// [`Explainer::dropped`].
pub const MAX_MATCHES: usize = 1_000;

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
    pinning: crate::platform::BuildPinning,
    /// The builds a `range` pin lists (setting `supportedBuilds`).
    supported: Vec<u32>,
    prefilter: Prefilter,
    buf: String,
    number: u64,
    matches: Vec<Match>,
    dropped: u64,
    describe: Describe,
    event: EventObject,
    /// The message being read when it may go on over the next lines ([`wrapped`]).
    wrapped: Option<wrapped::Wrapped>,
}

/// What `kubectl describe pod` said so far.
#[derive(Debug, Default)]
struct Describe {
    name: Option<String>,
    namespace: Option<String>,
    node: Option<String>,
    /// Its containers' images (`    Image:` lines), the first few.
    images: Vec<String>,
    /// What its `PodReadyToStartContainers` condition said when it was False (no pod sandbox runs).
    sandbox_not_ready: Option<String>,
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
            pinning: crate::platform::BuildPinning::default(),
            supported: crate::settings::Settings::default().supported_build_numbers(),
            prefilter: Prefilter::new(),
            buf: String::new(),
            number: 0,
            matches: Vec::new(),
            dropped: 0,
            describe: Describe::default(),
            event: EventObject::default(),
            wrapped: None,
        }
    }

    /// Pins builds in the fixes as setting `buildPinning` says ([`refine_with`]; default `range`).
    pub fn with_build_pinning(mut self, pinning: crate::platform::BuildPinning) -> Self {
        self.pinning = pinning;
        self
    }

    /// Shapes the fixes as `settings` say: `buildPinning` (an `exact` pin is the nodeSelector of one
    /// build, with or without context) and `supportedBuilds` (the builds a `range` pin lists).
    ///
    /// ```
    /// use winplace_rules::Settings;
    /// use winplace_rules::explain::Explainer;
    /// let settings = Settings::from_text("s.yaml", "buildPinning: exact\n").unwrap();
    /// let mut explainer = Explainer::new(None).with_settings(&settings);
    /// explainer.line(b"hcs::CreateComputeSystem web: The container operating system does not match the host operating system.");
    /// let fix = &explainer.finish()[0].fix;
    /// assert!(fix.contains("with the nodeSelector node.kubernetes.io/windows-build"), "{fix}");
    /// assert!(!fix.contains("required node affinity"), "{fix}");
    /// ```
    pub fn with_settings(mut self, settings: &crate::settings::Settings) -> Self {
        self.pinning = settings.build_pinning;
        self.supported = settings.supported_build_numbers();
        self
    }

    /// Reads one line (any bytes; a trailing `\n` or `\r\n` is ignored; at most
    /// [`clean::MAX_LINE`] bytes of it are read).
    pub fn line(&mut self, raw: &[u8]) {
        self.number += 1;
        let mut buf = std::mem::take(&mut self.buf);
        let text = clean::line(raw, &mut buf);
        let width = clean::width(raw);
        // A line that tells what later lines are about starts a record, never goes on a message.
        let joined =
            !starts_record(text) && self.wrapped.as_mut().is_some_and(|w| w.join(text, width));
        if !joined {
            // The message before is complete: explain it with what the lines before this one said.
            let previous = self.wrapped.take();
            if let Some(message) = &previous {
                self.explain_message(message);
            }
            self.wrapped = Some(wrapped::Wrapped::start(previous, text, width, self.number));
        }
        self.remember(text);
        self.buf = buf;
    }

    /// Explains a message (a line, or lines a wrap joined) at its first line.
    fn explain_message(&mut self, message: &wrapped::Wrapped) {
        for (text, line) in message.parts() {
            if self.prefilter.may_match(text) {
                for m in explain_line(text) {
                    self.settle(m, text, line);
                }
            }
        }
    }

    /// Completes `m`, explained from `text` (a line, or a wrapped message's lines joined) whose first
    /// line is `line`, with what the other lines and the context say, and keeps it.
    fn settle(&mut self, mut m: Match, text: &str, line: u64) {
        // A build mismatch whose line names no operation, in a pod without a sandbox: the
        // sandbox's (the condition says no container could have been created).
        if let Some(condition) = &self.describe.sandbox_not_ready
            && matching::sandbox_named(text).is_none()
        {
            matching::blame_sandbox(&mut m, Some(condition));
        }
        self.fill_from_state(&mut m);
        match self.context {
            Some(context) => context::refine_builds(&mut m, context, self.pinning, &self.supported),
            None => pin_generic(&mut m, self.pinning),
        }
        m.line = Some(line);
        self.keep(m);
    }

    /// Explains the message being read now: a line is explained when the next one shows that it
    /// does not go on over it (a wrapped message, [`wrapped`]), or here, or at [`Explainer::finish`].
    pub fn flush(&mut self) {
        if let Some(message) = self.wrapped.take() {
            self.explain_message(&message);
        }
    }

    /// Matches beyond [`MAX_MATCHES`] distinct ones, not kept (of the messages explained so far: call
    /// [`Explainer::flush`] first to count the last).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The lines read.
    pub fn lines(&self) -> u64 {
        self.number
    }

    /// The matches, in the order their first line came.
    pub fn finish(mut self) -> Vec<Match> {
        self.flush();
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
        if let Some(v) = describe_field(text, "Name:") {
            self.describe = Describe {
                name: Some(v.trim().to_string()),
                ..Describe::default()
            };
            self.event = EventObject::default();
        } else if let Some(v) = describe_field(text, "Namespace:") {
            self.describe.namespace = Some(v.trim().to_string());
        } else if let Some(v) = describe_field(text, "Node:") {
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
        // The pod's PodReadyToStartContainers condition (the kubelet's, status/generate.go): False
        // with reason PodSandboxNotReady when no pod sandbox runs, as `-o yaml`/`-o json` show it, or
        // `PodReadyToStartContainers   False` in `kubectl describe`'s Conditions table.
        let line = text.trim();
        if let Some(rest) = line.strip_prefix("PodReadyToStartContainers") {
            match rest.split_whitespace().next() {
                Some("False") => {
                    self.describe.sandbox_not_ready =
                        Some("PodReadyToStartContainers condition is False".to_string());
                }
                Some("True") => self.describe.sandbox_not_ready = None,
                _ => {}
            }
        } else if line.contains("PodSandboxNotReady") {
            self.describe.sandbox_not_ready = Some(
                "PodReadyToStartContainers condition is False (reason PodSandboxNotReady)"
                    .to_string(),
            );
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

/// Whether a line tells what later lines are about (what [`Explainer::remember`] reads): `kubectl
/// describe`'s `Name:`, `Namespace:`, `Node:` and `Image:`, an event's `involvedObject` or `regarding`,
/// the pod's `PodReadyToStartContainers` condition.
fn starts_record(text: &str) -> bool {
    let trimmed = text.trim_start().trim_start_matches(['"', '-', ' ']);
    ["Name:", "Namespace:", "Node:"]
        .iter()
        .any(|p| describe_field(text, p).is_some())
        || [
            "Image:",
            "involvedObject",
            "regarding",
            "PodReadyToStartContainers",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p))
        || text.contains("PodSandboxNotReady")
}

/// The value of `kubectl describe`'s field `name` (`Name:`) when `text` is that field's line: the name
/// at the start, then blanks (`Namespace:shop,` in a log line is not one).
fn describe_field<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.strip_prefix(name)
        .filter(|v| v.is_empty() || v.starts_with([' ', '\t']))
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

/// Explains a whole text (the playground's field, tests): [`Explainer`] over its lines, with the
/// context's concrete fixes when given.
pub fn explain_text(text: &str, context: Option<&ClusterContext>) -> Vec<Match> {
    explain_text_with(text, context, &crate::settings::Settings::default())
}

/// [`explain_text`] with the settings that shape a fix ([`Explainer::with_settings`]): what the
/// playground does with its settings field.
pub fn explain_text_with(
    text: &str,
    context: Option<&ClusterContext>,
    settings: &crate::settings::Settings,
) -> Vec<Match> {
    let mut explainer = Explainer::new(context).with_settings(settings);
    for line in text.split('\n') {
        explainer.line(line.as_bytes());
    }
    explainer.finish()
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
