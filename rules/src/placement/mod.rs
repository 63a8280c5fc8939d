//! Effective placement: the one resolver every rule reads.
//!
//! [`resolve`] turns a pod template into a [`Placement`]: the OS the pod needs with every signal that
//! contributed (`spec.os.name`, `kubernetes.io/os` selectors and required affinity, the RuntimeClass, the
//! images, `windowsOptions`) and any contradiction; the Windows builds it can run on; and its nodeSelector,
//! required affinity and tolerations after the RuntimeClass merge, exactly as RuntimeClass admission does it
//! ([`crate::schedule::runtimeclass::merge_scheduling`]).
//!
//! [`NodeIndex`] and [`fit`] answer "which nodes could take this pod, and why not the others" for a cluster,
//! built once per cluster and cheap per template (docs/limits.md).
//!
//! Decisions (docs/registries.md; kubernetes-windows-rules.md §6, §1.6, §3.3, §3.4, §4, §5.3), in the
//! order the resolver takes them, one function each:
//! * RuntimeClass merge (`runtime_class_use`, `merge_runtime_class`): a RuntimeClass found in the context is
//!   merged into the pod's nodeSelector and tolerations; one missing from the context is evaluated as if the
//!   pod named none; with no context at all it is [`RuntimeClassUse::Unchecked`] and rules do not report what
//!   the class might provide.
//! * Images (`classify_images`): every container's image is classified, from the host's manifests when it
//!   read them, else by the settings' image rules and the tag tables.
//! * The windowsOptions hint (`windows_options_hints`): `windowsOptions` makes a pod Windows only when no
//!   other signal says anything (a Linux pod with `windowsOptions` is an API-validation problem, not an OS
//!   contradiction).
//! * OS signals (`pod_signals`, `image_signals`): `spec.os.name`, the pod's `kubernetes.io/os` selectors and
//!   required affinity, its RuntimeClass, then its images. An image positively known to be of one OS (a
//!   Windows tag, the well-known Linux list, a settings image rule) is a signal; multi-OS images are neutral.
//! * Mixed-OS minority (`mixed_os`, `strong_signals`): Windows and Linux images in one pod are [`MixedOs`]:
//!   the images of the minority OS are left out of the contradiction check (they are reported as
//!   `mixed-os-containers` instead).
//! * Contradiction and the OS (`contradiction`, `decide_os`): two remaining signals that disagree are a
//!   [`PodOs::Conflict`]; else their OS; else the windowsOptions hint; else an unrecognized image is presumed
//!   Linux in a pod that nothing else places (it takes the OS the other signals give otherwise, so it never
//!   contradicts them).
//! * OS and build pins via the merged selector ([`os_pin`], [`build_pin`]): the scheduler ignores
//!   `spec.os.name`, so a pod is *pinned* to an OS only by its nodeSelector, required node affinity or
//!   RuntimeClass on `kubernetes.io/os` (or the deprecated `beta.kubernetes.io/os`, which the kubelet still
//!   sets). Pinning is decided by evaluating the merged selector and affinity, restricted to the OS labels,
//!   against a node of each OS; builds the same way on `node.kubernetes.io/windows-build`.
//! * Images → builds (`image_hosts`, `runnable_builds`): for a pod that may run on Windows and is not
//!   HostProcess, the candidate hosts that run every Windows image of known build, narrowed to the pinned
//!   builds.
//!
//! ```
//! use winplace_rules::{input, model, placement, Settings};
//! use winplace_rules::placement::PodOs;
//! let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers:\n  - {name: a, image: mcr.microsoft.com/windows/servercore:ltsc2022}\n";
//! let parsed = input::parse("p.yaml", text, &input::Limits::default());
//! let objects = model::objects(&parsed.documents);
//! let template = model::pod_template(&objects[0]).unwrap().unwrap();
//! let p = placement::resolve(&template, None, &Settings::default());
//! assert_eq!(p.os, PodOs::Windows);
//! assert_eq!(p.os_pin, placement::OsPin::Only(winplace_rules::windows::Os::Windows));
//! assert_eq!(p.image_hosts.as_deref(), Some(&[20348, 25398, 26100][..]));
//! ```

pub mod build_range;
mod fit;
pub mod fix_plan;
pub mod gate;
pub mod gated_patch;
mod pins;
mod prepared;
pub mod unrunnable;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, PodSpec, Toleration};

use crate::model::{ClusterContext, PodTemplate, RuntimeClassEntry};
use crate::path::FieldPath;
use crate::schedule::affinity::required_node_affinity;
use crate::schedule::runtimeclass::{SchedulingConflict, merge_scheduling};
use crate::settings::Settings;
use crate::windows::builds::{BUILDS, Channel, WindowsVersion};
use crate::windows::compat::host_runs_image_build;
use crate::windows::{ImageClass, ImageOs, Os, classify_image};

pub use fit::{
    Fit, IndexedNode, NodeIndex, NodeSet, RejectGroup, Rejection, fit, node_change_reaches,
    untolerated_windows_taints,
};
pub use pins::{BuildPin, OsPin, build_pin, may_admit_linux_labelled, os_allowed, os_pin};
pub use prepared::PreparedCluster;

/// The GA OS node label.
pub const OS_LABEL: &str = "kubernetes.io/os";
/// The deprecated OS node label (the kubelet still sets it, so it still selects; kubernetes-windows-rules.md §7).
pub const BETA_OS_LABEL: &str = "beta.kubernetes.io/os";
/// The GA architecture node label.
pub const ARCH_LABEL: &str = "kubernetes.io/arch";
/// The deprecated architecture node label.
pub const BETA_ARCH_LABEL: &str = "beta.kubernetes.io/arch";
/// The Windows build node label, `major.minor.build` (kubernetes-windows-rules.md §5.4).
pub const BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// The OS a pod template needs, all signals considered; over all its templates, the OS a workload
/// needs ([`PodOs::of_templates`]). On the wire (the audit's JSON, the API's filters) in lowercase.
///
/// ```
/// use winplace_rules::placement::PodOs;
/// assert_eq!(PodOs::of_templates([PodOs::Windows, PodOs::Any]), PodOs::Windows);
/// assert_eq!(serde_json::to_value(PodOs::Any).unwrap(), "any");
/// ```
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PodOs {
    /// Linux (declared, pinned, or presumed from a Linux-only or unrecognized image in a pod that declares nothing).
    Linux,
    /// Windows (declared, pinned, by RuntimeClass, by a Windows image, or by windowsOptions).
    Windows,
    /// Nothing says: e.g. only multi-OS images and no selector.
    #[default]
    Any,
    /// Signals disagree; rules that depend on the OS are skipped and `os-conflict` is reported.
    Conflict,
}

impl PodOs {
    /// The one OS, for `Linux` and `Windows`.
    pub fn os(self) -> Option<Os> {
        match self {
            PodOs::Linux => Some(Os::Linux),
            PodOs::Windows => Some(Os::Windows),
            PodOs::Any | PodOs::Conflict => None,
        }
    }

    /// The lowercase name the API writes (`windows`).
    pub fn as_str(self) -> &'static str {
        match self {
            PodOs::Windows => "windows",
            PodOs::Linux => "linux",
            PodOs::Any => "any",
            PodOs::Conflict => "conflict",
        }
    }

    /// The OS of a workload whose templates need `oses`: the one OS they name (templates that need
    /// any OS say nothing), `any` when none names one, `conflict` when they name different ones.
    pub fn of_templates(oses: impl IntoIterator<Item = PodOs>) -> Self {
        oses.into_iter()
            .fold(PodOs::Any, |acc, os| match (acc, os) {
                (acc, PodOs::Any) => acc,
                (PodOs::Any, os) => os,
                (acc, os) if acc == os => acc,
                _ => PodOs::Conflict,
            })
    }
}

impl std::fmt::Display for PodOs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Os> for PodOs {
    fn from(os: Os) -> Self {
        match os {
            Os::Linux => PodOs::Linux,
            Os::Windows => PodOs::Windows,
        }
    }
}

/// One thing that says which OS the pod needs.
#[derive(Debug, Clone, PartialEq)]
pub struct OsSignal {
    /// The OS this signal says.
    pub os: Os,
    /// Where it comes from, in Kubernetes field-path notation (relative to the object).
    pub path: crate::FieldPath,
    /// A short phrase for messages: "spec.os.name is windows", "the image mcr.microsoft.com/windows/servercore:ltsc2019 is Windows".
    pub what: String,
}

/// A container's image and what is known about it.
#[derive(Debug, Clone)]
pub struct ContainerImage {
    /// Path of the `image` field.
    pub path: crate::FieldPath,
    /// The image reference as written.
    pub image: String,
    /// What the image says about OS and builds.
    pub class: ImageClass,
}

/// Two signals that name different operating systems.
#[derive(Debug, Clone, PartialEq)]
pub struct OsConflict {
    /// The first signal found.
    pub first: OsSignal,
    /// The first later signal that names the other OS.
    pub other: OsSignal,
}

/// Windows and Linux images in one pod.
#[derive(Debug, Clone, PartialEq)]
pub struct MixedOs {
    /// The OS with fewer images (on a tie: the one the pod's other signals do not name; else Linux).
    pub minority: Os,
    /// Index in [`Placement::images`] of the first image of the minority OS.
    pub first_minority: usize,
}

/// What happened to the pod's `runtimeClassName`.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum RuntimeClassUse {
    /// The pod names no RuntimeClass.
    #[default]
    None,
    /// Found in the context and merged.
    Found {
        /// The name.
        name: String,
        /// The RuntimeClass.
        entry: Box<RuntimeClassEntry>,
    },
    /// Not in the context: RuntimeClass admission rejects the pod; placement is evaluated as if none.
    NotFound {
        /// The name.
        name: String,
    },
    /// No context at all: the class could not be looked up. Rules do not report what it might provide.
    Unchecked {
        /// The name.
        name: String,
    },
}

impl RuntimeClassUse {
    /// The class name, if the pod names one.
    pub fn name(&self) -> Option<&str> {
        match self {
            RuntimeClassUse::None => None,
            RuntimeClassUse::Found { name, .. }
            | RuntimeClassUse::NotFound { name }
            | RuntimeClassUse::Unchecked { name } => Some(name),
        }
    }

    /// Whether the class is unknown because there was no context to look it up in.
    pub fn is_unchecked(&self) -> bool {
        matches!(self, RuntimeClassUse::Unchecked { .. })
    }
}

/// Everything the rules need to know about where a pod template can run.
///
/// `Default` is a pod that nothing places (OS [`PodOs::Any`], no signals, no constraints): tests build
/// placements with `Placement { os: PodOs::Windows, ..Placement::default() }`.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    /// The OS the pod needs.
    pub os: PodOs,
    /// `spec.os.name` when it is exactly `linux` or `windows`.
    pub declared_os: Option<Os>,
    /// Every OS signal, in the order they were found.
    pub signals: Vec<OsSignal>,
    /// Every container (init, regular, ephemeral) with its image classification.
    pub images: Vec<ContainerImage>,
    /// Whether the pod is a Windows HostProcess pod (exempt from build matching).
    pub host_process: bool,
    /// `spec.os.name` as written, when `spec.os` is present (valid or not).
    pub os_name: Option<String>,
    /// `windowsOptions` that make a pod Windows only when nothing else places it (path, phrase).
    pub hints: Vec<OsSignal>,
    /// How the OS was decided when no signal named it: e.g. `presumed Linux: ...`.
    pub presumed: Option<String>,
    /// The contradiction, when `os` is [`PodOs::Conflict`].
    pub conflict: Option<OsConflict>,
    /// Windows and Linux images together.
    pub mixed: Option<MixedOs>,
    /// Which OS the merged nodeSelector and required affinity admit (what the scheduler enforces).
    pub os_pin: OsPin,
    /// Path of the constraint that pins the OS (nodeSelector entry, affinity expression, runtimeClassName).
    pub os_pin_path: Option<FieldPath>,
    /// The Windows builds the merged nodeSelector and required affinity admit, if they single any out.
    pub build_pin: Option<BuildPin>,
    /// Windows hosts (known server builds, supported builds and the context's builds) that run every
    /// Windows image of known build; `None` when there is no such image (or for HostProcess pods).
    pub image_hosts: Option<Vec<u32>>,
    /// The Windows builds the pod can run on: `image_hosts` narrowed to the pinned builds when that leaves
    /// any; the pinned builds when no image build is known; `None` when unknown or unconstrained.
    pub runnable_builds: Option<Vec<u32>>,
    /// The nodeSelector after the RuntimeClass merge.
    pub node_selector: Option<BTreeMap<String, String>>,
    /// The required node affinity (RuntimeClasses do not add affinity).
    pub required_affinity: Option<NodeSelector>,
    /// The tolerations after the RuntimeClass merge.
    pub tolerations: Vec<Toleration>,
    /// The RuntimeClass the pod names, and whether it was found.
    pub runtime_class: RuntimeClassUse,
    /// nodeSelector keys the pod and its RuntimeClass set differently (admission rejects the pod).
    pub runtime_class_conflicts: Vec<SchedulingConflict>,
    /// `spec.nodeName`: the pod skips the scheduler and goes to this node.
    pub node_name: Option<String>,
    /// Path of the pod spec in the object (`spec.template.spec`).
    pub prefix: FieldPath,
}

impl Placement {
    /// The OS an image runs on in this pod: its own when known, the pod's for an unrecognized image,
    /// `None` for multi-OS images (or when the pod's OS is not one OS).
    pub fn image_os(&self, image: &ContainerImage) -> Option<Os> {
        match &image.class.os {
            ImageOs::Linux => Some(Os::Linux),
            ImageOs::Windows { .. } => Some(Os::Windows),
            ImageOs::MultiOs => None,
            ImageOs::Unrecognized => self.os.os(),
        }
    }

    /// Windows images of known build: `(index in images, builds)`.
    pub fn windows_image_builds(&self) -> impl Iterator<Item = (usize, &[u32])> {
        self.images
            .iter()
            .enumerate()
            .filter_map(|(i, img)| match &img.class.os {
                ImageOs::Windows { builds } if !builds.is_empty() => Some((i, builds.as_slice())),
                _ => None,
            })
    }

    /// Whether the pod is pinned to `os` (only nodes of that OS pass its selectors).
    pub fn pinned_to(&self, os: Os) -> bool {
        self.os_pin == OsPin::Only(os)
    }

    /// The part of the placement that [`fit`] and [`node_change_reaches`] read (what the scheduler's
    /// filters see: `nodeName`, the merged nodeSelector, the required node affinity, the merged
    /// tolerations); everything else default. For callers that hold a placement per template for
    /// later fits (the audit): the signals, images and conflicts are most of its bytes.
    ///
    /// ```
    /// use winplace_rules::placement::{Placement, PodOs};
    /// let mut p = Placement { os: PodOs::Windows, ..Placement::default() };
    /// p.node_selector = Some([("kubernetes.io/os".to_string(), "windows".to_string())].into());
    /// let kept = p.scheduling_part();
    /// assert_eq!(kept.node_selector, p.node_selector);
    /// assert_eq!(kept.os, PodOs::Any, "not a fit's concern");
    /// ```
    pub fn scheduling_part(&self) -> Placement {
        Placement {
            node_name: self.node_name.clone(),
            node_selector: self.node_selector.clone(),
            required_affinity: self.required_affinity.clone(),
            tolerations: self.tolerations.clone(),
            ..Placement::default()
        }
    }
}

/// Whether a host build runs an image published for `builds` (a manifest list runs when any entry does).
pub fn host_runs_any(host: u32, builds: &[u32]) -> bool {
    builds.iter().any(|&b| host_runs_image_build(host, b))
}

/// The host builds worth considering: every Windows Server build of the table, the supported builds and the
/// context's Windows builds, ascending.
pub fn host_candidates(context: Option<&ClusterContext>, settings: &Settings) -> Vec<u32> {
    let mut out: Vec<u32> = BUILDS
        .iter()
        .filter(|b| b.channel != Channel::Client)
        .map(|b| b.build)
        .collect();
    out.extend(settings.supported_build_numbers());
    if let Some(ctx) = context {
        out.extend(
            ctx.windows_builds()
                .iter()
                .filter_map(|b| WindowsVersion::parse(b))
                .map(|v| v.build),
        );
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Every container of a pod spec that has an image: `(path of image, image)`, init first, then regular,
/// then ephemeral containers.
pub fn container_images<'s>(spec: &'s PodSpec, prefix: &FieldPath) -> Vec<(FieldPath, &'s str)> {
    let mut out = Vec::new();
    let mut add = |field: &'static str, images: Vec<Option<&'s str>>| {
        for (i, image) in images.into_iter().enumerate() {
            if let Some(image) = image.filter(|s| !s.is_empty()) {
                out.push((prefix.field(field).index(i).field("image"), image));
            }
        }
    };
    let init = spec.init_containers.as_deref().unwrap_or(&[]);
    add(
        "initContainers",
        init.iter().map(|c| c.image.as_deref()).collect(),
    );
    add(
        "containers",
        spec.containers.iter().map(|c| c.image.as_deref()).collect(),
    );
    let eph = spec.ephemeral_containers.as_deref().unwrap_or(&[]);
    add(
        "ephemeralContainers",
        eph.iter().map(|c| c.image.as_deref()).collect(),
    );
    out
}

/// `windowsOptions` of the pod and its containers: `(path, hostProcess)`.
fn windows_options(spec: &PodSpec, prefix: &FieldPath) -> (Vec<(FieldPath, Option<bool>)>, bool) {
    let pod_wo = spec
        .security_context
        .as_ref()
        .and_then(|s| s.windows_options.as_ref());
    let pod_hp = pod_wo.and_then(|w| w.host_process);
    let mut found = Vec::new();
    if let Some(w) = pod_wo {
        found.push((
            prefix.field("securityContext").field("windowsOptions"),
            w.host_process,
        ));
    }
    let mut host_process = false;
    let mut visit =
        |field: &'static str, scs: Vec<Option<&k8s_openapi::api::core::v1::SecurityContext>>| {
            for (i, sc) in scs.into_iter().enumerate() {
                let wo = sc.and_then(|s| s.windows_options.as_ref());
                if let Some(w) = wo {
                    found.push((
                        prefix
                            .field(field)
                            .index(i)
                            .field("securityContext")
                            .field("windowsOptions"),
                        w.host_process,
                    ));
                }
                // Effective value: the container's, else the pod's (validateWindowsHostProcessPod, §2.2).
                if wo.and_then(|w| w.host_process).or(pod_hp) == Some(true) {
                    host_process = true;
                }
            }
        };
    let init = spec.init_containers.as_deref().unwrap_or(&[]);
    visit(
        "initContainers",
        init.iter().map(|c| c.security_context.as_ref()).collect(),
    );
    visit(
        "containers",
        spec.containers
            .iter()
            .map(|c| c.security_context.as_ref())
            .collect(),
    );
    let eph = spec.ephemeral_containers.as_deref().unwrap_or(&[]);
    visit(
        "ephemeralContainers",
        eph.iter().map(|c| c.security_context.as_ref()).collect(),
    );
    (found, host_process)
}

/// Resolves the placement of one pod template.
///
/// To resolve many templates against the same cluster, build a [`Resolver`] once.
pub fn resolve(
    template: &PodTemplate<'_>,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Placement {
    Resolver::new(context, settings).resolve(template)
}

/// Resolves many templates against one cluster and one set of settings; what depends only on those
/// (the candidate host builds, which read every node) is computed once.
#[derive(Debug, Clone)]
pub struct Resolver<'a> {
    context: Option<&'a ClusterContext>,
    settings: &'a Settings,
    candidates: Vec<u32>,
    /// `candidates` as build labels (`10.0.20348`), the values [`build_pin`] tries.
    candidate_labels: Vec<String>,
    manifests: Option<&'a BTreeMap<String, ImageClass>>,
}

impl<'a> Resolver<'a> {
    /// Prepares a resolver for `context` (Nodes, RuntimeClasses; `None` when unknown) and `settings`.
    pub fn new(context: Option<&'a ClusterContext>, settings: &'a Settings) -> Self {
        let candidates = host_candidates(context, settings);
        let candidate_labels = candidates
            .iter()
            .map(|&b| WindowsVersion::new(b).label())
            .collect();
        Resolver {
            context,
            settings,
            candidates,
            candidate_labels,
            manifests: None,
        }
    }

    /// Classifies the images in `manifests` (image reference as written in the pod → what its manifest says,
    /// source [`ImageSource::Manifest`](crate::windows::ImageSource::Manifest)) from that map
    /// instead of the image rules and tag tables; a host that reads image manifests (the Kubewarden policy)
    /// passes them.
    pub fn with_manifests(mut self, manifests: &'a BTreeMap<String, ImageClass>) -> Self {
        self.manifests = Some(manifests).filter(|m| !m.is_empty());
        self
    }

    /// Resolves the placement of one pod template (see [`resolve`]).
    pub fn resolve(&self, template: &PodTemplate<'_>) -> Placement {
        resolve_with(template, self)
    }
}

/// The decisions of the module doc, in order; each is one function below.
fn resolve_with(template: &PodTemplate<'_>, resolver: &Resolver<'_>) -> Placement {
    let (context, settings, manifests) = (resolver.context, resolver.settings, resolver.manifests);
    let candidates = &resolver.candidates;
    let spec = &template.spec;
    let prefix = &template.prefix;

    let runtime_class = runtime_class_use(spec, context);
    let scheduling = merge_runtime_class(spec, &runtime_class);
    let required_affinity = required_affinity(spec);
    let images = classify_images(spec, prefix, settings, manifests);
    let (hints, host_process) = windows_options_hints(spec, prefix);

    let os_name = spec.os.as_ref().map(|o| o.name.clone());
    let declared_os = os_name.as_deref().and_then(|n| n.parse::<Os>().ok());
    let pod_signals = pod_signals(
        spec,
        prefix,
        declared_os,
        required_affinity.as_ref(),
        &runtime_class,
    );
    let image_signals = image_signals(&images);
    let mixed = mixed_os(
        &images,
        &pod_signals.iter().map(|s| s.os).collect::<Vec<_>>(),
    );
    let strong = strong_signals(&pod_signals, &image_signals, mixed.as_ref());
    let conflict = contradiction(&strong);
    let (os, presumed) = decide_os(&strong, conflict.is_some(), &hints, &images);

    let (os_pin, os_pin_path) = os_pin(
        scheduling.node_selector.as_ref(),
        required_affinity.as_ref(),
        spec.node_selector.as_ref(),
        &runtime_class,
        prefix,
    );
    let build_pin = build_pin(
        scheduling.node_selector.as_ref(),
        required_affinity.as_ref(),
        spec.node_selector.as_ref(),
        &runtime_class,
        prefix,
        &resolver.candidate_labels,
    );

    let mut placement = Placement {
        os,
        declared_os,
        signals: pod_signals.into_iter().chain(image_signals).collect(),
        images,
        host_process,
        os_name,
        hints,
        presumed,
        conflict,
        mixed,
        os_pin,
        os_pin_path,
        build_pin,
        image_hosts: None,
        runnable_builds: None,
        node_selector: scheduling.node_selector,
        required_affinity,
        tolerations: scheduling.tolerations,
        runtime_class,
        runtime_class_conflicts: scheduling.conflicts,
        node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
        prefix: prefix.clone(),
    };
    // Builds matter to pods that may run on Windows, except HostProcess pods (kubernetes-windows-rules.md §2.2).
    if !placement.host_process && placement.os != PodOs::Linux {
        placement.image_hosts = image_hosts(&placement, candidates);
        placement.runnable_builds = runnable_builds(
            placement.image_hosts.as_deref(),
            placement.build_pin.as_ref(),
        );
    }
    placement
}

/// RuntimeClass: looked up in the context; missing from it, or no context at all (kubernetes-windows-rules.md §4).
fn runtime_class_use(spec: &PodSpec, context: Option<&ClusterContext>) -> RuntimeClassUse {
    match spec.runtime_class_name.as_deref().filter(|n| !n.is_empty()) {
        None => RuntimeClassUse::None,
        Some(name) => match context {
            None => RuntimeClassUse::Unchecked { name: name.into() },
            Some(ctx) => match ctx.runtime_class(name) {
                Some(entry) => RuntimeClassUse::Found {
                    name: name.into(),
                    entry: Box::new(entry.clone()),
                },
                None => RuntimeClassUse::NotFound { name: name.into() },
            },
        },
    }
}

/// The pod's scheduling after the RuntimeClass merge.
struct MergedScheduling {
    node_selector: Option<BTreeMap<String, String>>,
    tolerations: Vec<Toleration>,
    conflicts: Vec<SchedulingConflict>,
}

/// RuntimeClass merge: a found class's scheduling is merged into the pod's, as admission does
/// (kubernetes-windows-rules.md §4); otherwise the pod's own scheduling stands.
fn merge_runtime_class(spec: &PodSpec, runtime_class: &RuntimeClassUse) -> MergedScheduling {
    let pod_tolerations = spec.tolerations.clone().unwrap_or_default();
    match runtime_class {
        RuntimeClassUse::Found { entry, .. } => {
            let m = merge_scheduling(spec.node_selector.as_ref(), &pod_tolerations, &entry.object);
            MergedScheduling {
                node_selector: m.node_selector,
                tolerations: m.tolerations,
                conflicts: m.conflicts,
            }
        }
        _ => MergedScheduling {
            node_selector: spec.node_selector.clone(),
            tolerations: pod_tolerations,
            conflicts: Vec::new(),
        },
    }
}

/// The pod's required node affinity (RuntimeClasses do not add affinity).
fn required_affinity(spec: &PodSpec) -> Option<NodeSelector> {
    required_node_affinity(spec.affinity.as_ref()).cloned()
}

/// Images: every container's image, classified from the host's manifests when given, else by the image
/// rules and tag tables ([`classify_image`]).
fn classify_images(
    spec: &PodSpec,
    prefix: &FieldPath,
    settings: &Settings,
    manifests: Option<&BTreeMap<String, ImageClass>>,
) -> Vec<ContainerImage> {
    container_images(spec, prefix)
        .into_iter()
        .map(|(path, image)| ContainerImage {
            path,
            image: image.to_string(),
            class: manifests
                .and_then(|m| m.get(image))
                .cloned()
                .unwrap_or_else(|| classify_image(image, &settings.image_rules)),
        })
        .collect()
}

/// The windowsOptions hint: each `windowsOptions` of the pod and its containers says Windows, but only as a
/// hint ([`decide_os`] reads it last); and whether the pod is HostProcess.
fn windows_options_hints(spec: &PodSpec, prefix: &FieldPath) -> (Vec<OsSignal>, bool) {
    let (found, host_process) = windows_options(spec, prefix);
    let hints = found
        .into_iter()
        .map(|(path, hp)| OsSignal {
            os: Os::Windows,
            what: if hp == Some(true) {
                format!("{path} sets hostProcess (Windows only)")
            } else {
                format!("{path} is set (Windows only)")
            },
            path,
        })
        .collect();
    (hints, host_process)
}

/// OS signals other than images, in order: `spec.os.name`, the pod's own selectors and required affinity on
/// the OS labels, the RuntimeClass's nodeSelector (kubernetes-windows-rules.md §1.6, §3.3, §4).
fn pod_signals(
    spec: &PodSpec,
    prefix: &FieldPath,
    declared_os: Option<Os>,
    required_affinity: Option<&NodeSelector>,
    runtime_class: &RuntimeClassUse,
) -> Vec<OsSignal> {
    let mut signals = Vec::new();
    if let Some(os) = declared_os {
        signals.push(OsSignal {
            os,
            path: prefix.field("os").field("name"),
            what: format!("spec.os.name is {os}"),
        });
    }
    signals.extend(pins::selector_signals(
        spec.node_selector.as_ref(),
        required_affinity,
        prefix,
    ));
    if let RuntimeClassUse::Found { name, entry } = runtime_class {
        signals.extend(pins::runtime_class_signals(name, &entry.object, prefix));
    }
    signals
}

/// Images → OS: an image positively known to be of one OS is a signal; multi-OS and unrecognized images
/// say nothing here.
fn image_signals(images: &[ContainerImage]) -> Vec<OsSignal> {
    images
        .iter()
        .filter_map(|img| {
            let os = img.class.os.os()?;
            Some(OsSignal {
                os,
                path: img.path.clone(),
                what: format!("the image {} is {}", img.image, os_word(os)),
            })
        })
        .collect()
}

/// The signals a contradiction is looked for in: every pod signal, and the image signals except those of
/// the mixed-OS minority (reported as `mixed-os-containers` instead).
fn strong_signals<'s>(
    pod_signals: &'s [OsSignal],
    image_signals: &'s [OsSignal],
    mixed: Option<&MixedOs>,
) -> Vec<&'s OsSignal> {
    let images = image_signals
        .iter()
        .filter(|s| mixed.is_none_or(|m| s.os != m.minority));
    pod_signals.iter().chain(images).collect()
}

/// OS contradiction: the first strong signal and the first later one that names the other OS.
fn contradiction(strong: &[&OsSignal]) -> Option<OsConflict> {
    let first = strong.first()?;
    strong
        .iter()
        .find(|s| s.os != first.os)
        .map(|other| OsConflict {
            first: (*first).clone(),
            other: (*other).clone(),
        })
}

/// The OS the pod needs, and how it was presumed when no signal named it: a contradiction is a conflict;
/// else the strong signals' OS; else Windows by the windowsOptions hint; else Linux when an image is
/// unrecognized (it never contradicts the other signals); else any.
fn decide_os(
    strong: &[&OsSignal],
    conflict: bool,
    hints: &[OsSignal],
    images: &[ContainerImage],
) -> (PodOs, Option<String>) {
    if conflict {
        (PodOs::Conflict, None)
    } else if let Some(first) = strong.first() {
        (first.os.into(), None)
    } else if let Some(hint) = hints.first() {
        (
            PodOs::Windows,
            Some(format!("Windows because {}", hint.what)),
        )
    } else if let Some(img) = images.iter().find(|i| i.class.os == ImageOs::Unrecognized) {
        (
            PodOs::Linux,
            Some(format!(
                "presumed Linux: nothing recognizes the image {} and nothing else says which OS the pod needs",
                img.image
            )),
        )
    } else {
        (PodOs::Any, None)
    }
}

/// Images → builds: the candidate hosts that run every Windows image of known build (hcsshim's rule,
/// kubernetes-windows-rules.md §5.3); `None` when no image build is known.
fn image_hosts(placement: &Placement, candidates: &[u32]) -> Option<Vec<u32>> {
    let image_builds: Vec<&[u32]> = placement.windows_image_builds().map(|(_, b)| b).collect();
    if image_builds.is_empty() {
        return None;
    }
    Some(
        candidates
            .iter()
            .copied()
            .filter(|&h| image_builds.iter().all(|b| host_runs_any(h, b)))
            .collect(),
    )
}

/// The runnable builds: the image hosts narrowed to the pinned builds when that leaves any; the pinned
/// builds when no image build is known; `None` when unknown or unconstrained.
fn runnable_builds(image_hosts: Option<&[u32]>, build_pin: Option<&BuildPin>) -> Option<Vec<u32>> {
    let pinned: Option<Vec<u32>> = build_pin.map(|p| p.numbers());
    match (image_hosts, pinned) {
        (Some(hosts), Some(pinned)) => {
            let both: Vec<u32> = hosts
                .iter()
                .copied()
                .filter(|h| pinned.contains(h))
                .collect();
            Some(if both.is_empty() {
                hosts.to_vec()
            } else {
                both
            })
        }
        (Some(hosts), None) => Some(hosts.to_vec()),
        (None, Some(pinned)) if !pinned.is_empty() => Some(pinned),
        _ => None,
    }
}

/// `Windows` / `Linux` for messages.
pub fn os_word(os: Os) -> &'static str {
    match os {
        Os::Linux => "Linux",
        Os::Windows => "Windows",
    }
}

/// Windows and Linux images together: which OS is the minority and its first image.
fn mixed_os(images: &[ContainerImage], non_image: &[Os]) -> Option<MixedOs> {
    let count = |os: Os| {
        images
            .iter()
            .filter(|i| i.class.os.os() == Some(os))
            .count()
    };
    let (windows, linux) = (count(Os::Windows), count(Os::Linux));
    if windows == 0 || linux == 0 {
        return None;
    }
    let pinned_linux = non_image.contains(&Os::Linux) && !non_image.contains(&Os::Windows);
    // Fewer images is the minority; on a tie, the OS the other signals do not name; else Linux.
    let minority = if windows < linux || (windows == linux && pinned_linux) {
        Os::Windows
    } else {
        Os::Linux
    };
    let first_minority = images
        .iter()
        .position(|i| i.class.os.os() == Some(minority))?;
    Some(MixedOs {
        minority,
        first_minority,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{context, placement, pod};

    const WIN: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";
    const WIN2019: &str = "mcr.microsoft.com/windows/servercore:ltsc2019";
    const PRIVATE: &str = "registry.example.com/team/app:1.0";

    fn spec(lines: &str, images: &[&str]) -> String {
        let containers: String = images
            .iter()
            .enumerate()
            .map(|(i, image)| format!("  - {{name: c{i}, image: \"{image}\"}}\n"))
            .collect();
        pod(&format!("{lines}  containers:\n{containers}"))
    }

    const RC_WINDOWS: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";

    #[test]
    fn each_signal_decides_the_os() {
        // (reference, spec lines, images, os, os_pin, first signal path, presumed)
        let affinity = |op: &str, values: &str| {
            format!(
                "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - {{key: kubernetes.io/os, operator: {op}, values: [{values}]}}\n"
            )
        };
        /// A pod, the OS it needs, its OS pin, the first signal and whether the OS is presumed.
        struct SignalCase<'a> {
            reference: &'a str,
            lines: String,
            images: Vec<&'a str>,
            os: PodOs,
            pin: OsPin,
            first: Option<&'a str>,
            presumed: bool,
        }
        let rows = vec![
            SignalCase { reference: "§1.1 spec.os.name; an unrecognized image takes it", lines: "  os: {name: windows}\n".into(), images: vec![PRIVATE], os: PodOs::Windows, pin: OsPin::Unconstrained, first: Some("spec.os.name"), presumed: false },
            SignalCase { reference: "§3.3 nodeSelector", lines: "  nodeSelector: {kubernetes.io/os: linux}\n".into(), images: vec![PRIVATE], os: PodOs::Linux, pin: OsPin::Only(Os::Linux), first: Some("spec.nodeSelector[kubernetes.io/os]"), presumed: false },
            SignalCase { reference: "§7 beta label still selects", lines: "  nodeSelector: {beta.kubernetes.io/os: windows}\n".into(), images: vec![PRIVATE], os: PodOs::Windows, pin: OsPin::Only(Os::Windows), first: Some("spec.nodeSelector[beta.kubernetes.io/os]"), presumed: false },
            SignalCase { reference: "§3.4 affinity In", lines: affinity("In", "windows"), images: vec![PRIVATE], os: PodOs::Windows, pin: OsPin::Only(Os::Windows), first: Some("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"), presumed: false },
            SignalCase { reference: "§3.4 affinity NotIn linux excludes Linux", lines: affinity("NotIn", "linux"), images: vec![PRIVATE], os: PodOs::Windows, pin: OsPin::Only(Os::Windows), first: Some("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]"), presumed: false },
            SignalCase { reference: "§3.4 affinity In both: no pin", lines: affinity("In", "windows, linux"), images: vec![WIN], os: PodOs::Windows, pin: OsPin::Unconstrained, first: Some("spec.containers[0].image"), presumed: false },
            SignalCase { reference: "§6 Windows tag", lines: String::new(), images: vec![WIN], os: PodOs::Windows, pin: OsPin::Unconstrained, first: Some("spec.containers[0].image"), presumed: false },
            SignalCase { reference: "§6 well-known Linux", lines: String::new(), images: vec!["busybox:1.36"], os: PodOs::Linux, pin: OsPin::Unconstrained, first: Some("spec.containers[0].image"), presumed: false },
            SignalCase { reference: "§6 unrecognized presumed Linux", lines: String::new(), images: vec![PRIVATE], os: PodOs::Linux, pin: OsPin::Unconstrained, first: None, presumed: true },
            SignalCase { reference: "§6 multi-OS pause is neutral", lines: String::new(), images: vec!["registry.k8s.io/pause:3.10"], os: PodOs::Any, pin: OsPin::Unconstrained, first: None, presumed: false },
            SignalCase { reference: "§2.1 windowsOptions is a hint", lines: "  securityContext:\n    windowsOptions: {runAsUserName: ContainerUser}\n".into(), images: vec![PRIVATE], os: PodOs::Windows, pin: OsPin::Unconstrained, first: None, presumed: true },
            SignalCase { reference: "§1.3 windowsOptions never contradicts", lines: "  os: {name: linux}\n  securityContext:\n    windowsOptions: {runAsUserName: ContainerUser}\n".into(), images: vec!["nginx:1.27"], os: PodOs::Linux, pin: OsPin::Unconstrained, first: Some("spec.os.name"), presumed: false },
        ];
        for SignalCase {
            reference,
            lines,
            images,
            os,
            pin,
            first,
            presumed,
        } in rows
        {
            let p = placement(&spec(&lines, &images), None, &Settings::default());
            assert_eq!(p.os, os, "{reference}");
            assert_eq!(p.os_pin, pin, "{reference}");
            assert_eq!(
                p.signals.first().map(|s| s.path.to_string()).as_deref(),
                first,
                "{reference}"
            );
            assert_eq!(p.presumed.is_some(), presumed, "{reference}");
            assert!(p.conflict.is_none(), "{reference}");
        }
    }

    #[test]
    fn runtime_class_is_a_signal_and_is_merged() {
        // §4: a RuntimeClass found in the context adds its selector and tolerations.
        let ctx = context(RC_WINDOWS);
        let p = placement(
            &spec("  runtimeClassName: win\n", &[PRIVATE]),
            Some(&ctx),
            &Settings::default(),
        );
        assert_eq!(p.os, PodOs::Windows);
        assert_eq!(p.os_pin, OsPin::Only(Os::Windows));
        assert_eq!(
            p.os_pin_path.map(|x| x.to_string()).as_deref(),
            Some("spec.runtimeClassName")
        );
        assert_eq!(
            p.build_pin.as_ref().map(|b| b.builds.clone()),
            Some(vec!["10.0.20348".to_string()])
        );
        assert_eq!(p.tolerations.len(), 1);
        assert!(matches!(p.runtime_class, RuntimeClassUse::Found { .. }));
        // Not in the context: evaluated as if none. No context: unchecked.
        let other = context("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
        let p = placement(
            &spec("  runtimeClassName: win\n", &[PRIVATE]),
            Some(&other),
            &Settings::default(),
        );
        assert_eq!(
            p.runtime_class,
            RuntimeClassUse::NotFound { name: "win".into() }
        );
        assert_eq!((p.os, p.os_pin), (PodOs::Linux, OsPin::Unconstrained));
        let p = placement(
            &spec("  runtimeClassName: win\n", &[PRIVATE]),
            None,
            &Settings::default(),
        );
        assert!(p.runtime_class.is_unchecked());
    }

    #[test]
    fn each_contradiction_is_a_conflict() {
        let rc = context(RC_WINDOWS);
        let defaults = Settings::default();
        let rules = Settings {
            image_rules: vec![crate::windows::ImageRule {
                pattern: "registry.example.com/*".into(),
                os: Os::Windows,
                builds: vec![],
            }],
            ..Settings::default()
        };
        /// A pod, its context and settings, the first signal and the other signals.
        struct BuildCase<'a> {
            reference: &'a str,
            lines: &'a str,
            images: Vec<&'a str>,
            ctx: Option<&'a ClusterContext>,
            settings: &'a Settings,
            first: &'a str,
            other: &'a str,
        }
        let rows = vec![
            BuildCase {
                reference: "§1.6 spec.os.name vs selector",
                lines: "  os: {name: windows}\n  nodeSelector: {kubernetes.io/os: linux}\n",
                images: vec!["busybox:1.36"],
                ctx: None,
                settings: &defaults,
                first: "spec.os.name",
                other: "spec.nodeSelector[kubernetes.io/os]",
            },
            BuildCase {
                reference: "§3.4 nodeSelector AND affinity",
                lines: "  nodeSelector: {kubernetes.io/os: windows}\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/os, operator: In, values: [linux]}]\n",
                images: vec![PRIVATE],
                ctx: None,
                settings: &defaults,
                first: "spec.nodeSelector[kubernetes.io/os]",
                other: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]",
            },
            BuildCase {
                reference: "§6 Windows image pinned to Linux",
                lines: "  nodeSelector: {kubernetes.io/os: linux}\n",
                images: vec![WIN],
                ctx: None,
                settings: &defaults,
                first: "spec.nodeSelector[kubernetes.io/os]",
                other: "spec.containers[0].image",
            },
            BuildCase {
                reference: "§1.1 declared Linux, Windows image",
                lines: "  os: {name: linux}\n",
                images: vec![WIN],
                ctx: None,
                settings: &defaults,
                first: "spec.os.name",
                other: "spec.containers[0].image",
            },
            BuildCase {
                reference: "§4 RuntimeClass vs pod selector",
                lines: "  runtimeClassName: win\n  nodeSelector: {kubernetes.io/os: linux}\n",
                images: vec![PRIVATE],
                ctx: Some(&rc),
                settings: &defaults,
                first: "spec.nodeSelector[kubernetes.io/os]",
                other: "spec.runtimeClassName",
            },
            BuildCase {
                reference: "settings image rule vs selector",
                lines: "  nodeSelector: {kubernetes.io/os: linux}\n",
                images: vec![PRIVATE],
                ctx: None,
                settings: &rules,
                first: "spec.nodeSelector[kubernetes.io/os]",
                other: "spec.containers[0].image",
            },
            BuildCase {
                reference: "beta and GA labels disagree",
                lines: "  nodeSelector: {kubernetes.io/os: linux, beta.kubernetes.io/os: windows}\n",
                images: vec![PRIVATE],
                ctx: None,
                settings: &defaults,
                first: "spec.nodeSelector[kubernetes.io/os]",
                other: "spec.nodeSelector[beta.kubernetes.io/os]",
            },
        ];
        for BuildCase {
            reference,
            lines,
            images,
            ctx,
            settings,
            first,
            other,
        } in rows
        {
            let p = placement(&spec(lines, &images), ctx, settings);
            assert_eq!(p.os, PodOs::Conflict, "{reference}");
            let c = p.conflict.expect(reference);
            assert_eq!(
                (
                    c.first.path.to_string().as_str(),
                    c.other.path.to_string().as_str()
                ),
                (first, other),
                "{reference}"
            );
            assert_ne!(c.first.os, c.other.os, "{reference}");
        }
    }

    #[test]
    fn mixed_images_report_the_minority() {
        // §8: no mixing; the minority's image is reported and does not make a conflict.
        let rows = [
            (
                "  nodeSelector: {kubernetes.io/os: windows}\n",
                vec![WIN, "nginx:1.27"],
                PodOs::Windows,
                Os::Linux,
                1,
            ),
            (
                "",
                vec!["nginx:1.27", WIN, "busybox:1.36"],
                PodOs::Linux,
                Os::Windows,
                1,
            ),
            (
                "  nodeSelector: {kubernetes.io/os: linux}\n",
                vec![WIN, "nginx:1.27"],
                PodOs::Linux,
                Os::Windows,
                0,
            ),
            ("", vec![WIN, "nginx:1.27"], PodOs::Windows, Os::Linux, 1),
        ];
        for (lines, images, os, minority, first) in rows {
            let p = placement(&spec(lines, &images), None, &Settings::default());
            assert_eq!(p.os, os, "{images:?}");
            let m = p.mixed.expect("mixed");
            assert_eq!(
                (m.minority, m.first_minority),
                (minority, first),
                "{images:?}"
            );
        }
        let p = placement(
            &spec("", &[WIN, "registry.k8s.io/pause:3.10"]),
            None,
            &Settings::default(),
        );
        assert!(p.mixed.is_none(), "multi-OS images are neutral");
    }

    #[test]
    fn builds_pins_and_hosts() {
        // §5.3: hcsshim compatibility; §5.4: the build label.
        let build_affinity = |op: &str, values: &str| {
            format!(
                "  nodeSelector: {{kubernetes.io/os: windows}}\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerms:\n        - matchExpressions:\n          - {{key: node.kubernetes.io/windows-build, operator: {op}{values}}}\n"
            )
        };
        /// A pod, the hosts its images run on, its build pin and whether it can run.
        struct HostsCase<'a> {
            reference: &'a str,
            lines: String,
            images: Vec<&'a str>,
            hosts: Option<Vec<u32>>,
            pin: Option<Vec<&'a str>>,
            runnable: Option<Vec<u32>>,
        }
        let rows = vec![
            HostsCase {
                reference: "2022 image, no pin",
                lines: String::new(),
                images: vec![WIN],
                hosts: Some(vec![20348, 25398, 26100]),
                pin: None,
                runnable: Some(vec![20348, 25398, 26100]),
            },
            HostsCase {
                reference: "2019 image",
                lines: String::new(),
                images: vec![WIN2019],
                hosts: Some(vec![17763]),
                pin: None,
                runnable: Some(vec![17763]),
            },
            HostsCase {
                reference: "2019 + 2022: no host",
                lines: String::new(),
                images: vec![WIN2019, WIN],
                hosts: Some(vec![]),
                pin: None,
                runnable: Some(vec![]),
            },
            HostsCase {
                reference: "pinned 2025 narrows",
                lines: "  nodeSelector: {node.kubernetes.io/windows-build: \"10.0.26100\"}\n"
                    .into(),
                images: vec![WIN],
                hosts: Some(vec![20348, 25398, 26100]),
                pin: Some(vec!["10.0.26100"]),
                runnable: Some(vec![26100]),
            },
            HostsCase {
                reference: "pin that cannot run the image keeps the image's hosts",
                lines: "  nodeSelector: {node.kubernetes.io/windows-build: \"10.0.20348\"}\n"
                    .into(),
                images: vec![WIN2019],
                hosts: Some(vec![17763]),
                pin: Some(vec!["10.0.20348"]),
                runnable: Some(vec![17763]),
            },
            HostsCase {
                reference: "affinity In",
                lines: build_affinity("In", ", values: [\"10.0.20348\", \"10.0.26100\"]"),
                images: vec![PRIVATE],
                hosts: None,
                pin: Some(vec!["10.0.20348", "10.0.26100"]),
                runnable: Some(vec![20348, 26100]),
            },
            HostsCase {
                reference: "Exists singles nothing out",
                lines: build_affinity("Exists", ""),
                images: vec![WIN],
                hosts: Some(vec![20348, 25398, 26100]),
                pin: None,
                runnable: Some(vec![20348, 25398, 26100]),
            },
            HostsCase {
                reference: "NotIn admits unlabelled nodes",
                lines: build_affinity("NotIn", ", values: [\"10.0.17763\"]"),
                images: vec![WIN],
                hosts: Some(vec![20348, 25398, 26100]),
                pin: None,
                runnable: Some(vec![20348, 25398, 26100]),
            },
        ];
        for HostsCase {
            reference,
            lines,
            images,
            hosts,
            pin,
            runnable,
        } in rows
        {
            let p = placement(&spec(&lines, &images), None, &Settings::default());
            assert_eq!(p.image_hosts, hosts, "{reference}");
            let pin_builds = p
                .build_pin
                .as_ref()
                .map(|b| b.builds.iter().map(String::as_str).collect::<Vec<_>>());
            assert_eq!(pin_builds, pin, "{reference}");
            assert_eq!(p.runnable_builds, runnable, "{reference}");
        }
    }

    #[test]
    fn host_process_is_exempt_from_builds() {
        // §2.2: HostProcess containers need no build match.
        let p = placement(
            &spec(
                "  securityContext:\n    windowsOptions: {hostProcess: true}\n  hostNetwork: true\n",
                &[WIN2019],
            ),
            None,
            &Settings::default(),
        );
        assert!(p.host_process);
        assert_eq!((p.image_hosts, p.runnable_builds), (None, None));
        let p = placement(
            &spec("", &[WIN2019]).replace(
                "name: c0, ",
                "name: c0, securityContext: {windowsOptions: {hostProcess: true}}, ",
            ),
            None,
            &Settings::default(),
        );
        assert!(p.host_process, "container-level hostProcess");
    }

    #[test]
    fn images_of_every_container_kind() {
        let text = pod(
            "  initContainers: [{name: i, image: busybox}]\n  containers: [{name: c, image: nginx}]\n  ephemeralContainers: [{name: e, image: alpine}]\n",
        );
        let p = placement(&text, None, &Settings::default());
        let paths: Vec<String> = p.images.iter().map(|i| i.path.to_string()).collect();
        assert_eq!(
            paths,
            [
                "spec.initContainers[0].image",
                "spec.containers[0].image",
                "spec.ephemeralContainers[0].image"
            ]
        );
    }

    #[test]
    fn invalid_os_name_is_kept_but_not_declared() {
        let p = placement(
            &spec("  os: {name: Windows}\n", &[WIN]),
            None,
            &Settings::default(),
        );
        assert_eq!(p.os_name.as_deref(), Some("Windows"));
        assert_eq!(p.declared_os, None);
        assert_eq!(p.os, PodOs::Windows);
    }
}
