//! The concrete fix, with the cluster as context: the node's OS and build, the image's builds, the
//! tag of the same image that runs on the node, the toleration a taint needs (its effect read from the
//! nodes that carry it).

use super::{Cause, Match};
use crate::catalog::RuleId;
use crate::model::ClusterContext;
use crate::platform::BuildPinning;
use crate::settings::Settings;
use crate::windows::builds::{build_display, retag_for_build};
use crate::windows::{Os, WindowsVersion, classify_image, hosts_for_images};

/// Makes `m` concrete with `context`: names the node's build and the image's, and writes the fix for
/// them (the retagged image and the build to pin, the toleration with the taint's effect, the OS
/// selector). Builds are pinned as the default setting `buildPinning: range` does; [`refine_with`] takes
/// the setting.
pub fn refine(m: &mut Match, context: &ClusterContext) {
    refine_with(m, context, BuildPinning::default());
}

/// [`refine`], pinning builds as setting `buildPinning` says: `range`, every supported build that runs
/// the image as required node affinity `In`; `exact`, the node's one build as the nodeSelector
/// `node.kubernetes.io/windows-build` (what the rules' own fixes do, docs/settings.md).
pub fn refine_with(m: &mut Match, context: &ClusterContext, pinning: BuildPinning) {
    refine_builds(
        m,
        context,
        pinning,
        &Settings::default().supported_build_numbers(),
    );
}

/// [`refine`] with the settings that shape a fix: `buildPinning` (as [`refine_with`]) and
/// `supportedBuilds` (the builds a `range` pin lists, with the node's own).
///
/// ```
/// use winplace_rules::explain::{explain_text, refine_settings};
/// use winplace_rules::{ClusterContext, Settings};
/// let settings = Settings::from_text("s.yaml", "buildPinning: exact\n").unwrap();
/// let mut m = explain_text("no matching manifest for windows/amd64 10.0.17763 in the manifest list entries", None).remove(0);
/// refine_settings(&mut m, &ClusterContext::default(), &settings);
/// assert!(m.fix.contains("nodeSelector node.kubernetes.io/windows-build: 10.0.17763"), "{}", m.fix);
/// ```
pub fn refine_settings(m: &mut Match, context: &ClusterContext, settings: &Settings) {
    refine_builds(
        m,
        context,
        settings.build_pinning,
        &settings.supported_build_numbers(),
    );
}

/// The signature fixes' words for a `range` pin, and the `exact` pin that replaces them when no
/// context names the node's build ([`pin_generic`]).
pub(crate) const RANGE_WORDS: [(&str, &str); 2] = [
    (
        "pin the workload to the builds that can run it with required node affinity node.kubernetes.io/windows-build In [...]",
        "pin the workload to the node's build with the nodeSelector node.kubernetes.io/windows-build: <the node's build> (setting buildPinning: exact)",
    ),
    (
        "with required node affinity node.kubernetes.io/windows-build,",
        "with the nodeSelector node.kubernetes.io/windows-build: <the image's build> (setting buildPinning: exact),",
    ),
];

/// Rewrites a signature's generic fix for setting `buildPinning`: with `exact`, the `range` pin it
/// words (required node affinity `In [...]`) becomes the nodeSelector of one build, as the rules' own
/// fixes pin it. With `range`, nothing changes.
pub fn pin_generic(m: &mut Match, pinning: BuildPinning) {
    if pinning != BuildPinning::Exact || m.sandbox {
        return;
    }
    for (range, exact) in RANGE_WORDS {
        if m.fix.contains(range) {
            let exact = match m.objects.build.as_deref() {
                Some(build) if m.signature != "hcs-invalid-layer" => {
                    exact.replace("<the node's build>", build)
                }
                _ => exact.to_string(),
            };
            m.fix = m.fix.replace(range, &exact);
        }
    }
}

pub(crate) fn refine_builds(
    m: &mut Match,
    context: &ClusterContext,
    pinning: BuildPinning,
    supported: &[u32],
) {
    let node = m.objects.node.as_deref().and_then(|name| {
        context
            .nodes
            .iter()
            .find(|n| n.metadata.name.as_deref() == Some(name))
    });
    let (node_os, node_build) = node.map_or((None, None), crate::model::node_os_build);
    pin_generic(m, pinning);
    match m.cause {
        // The host cannot read the image's layers: a retag to the host's build is no answer (the
        // image's own build is the newer one); name the host and keep the signature's fix.
        Cause::BuildMismatch if !m.sandbox && m.signature == "hcs-invalid-layer" => {
            if let Some(host) = node_build {
                m.objects.build = Some(WindowsVersion::new(host).label());
                let on = match &m.objects.node {
                    Some(n) => format!("Node {n} runs {}", build_display(host)),
                    None => format!("The host runs {}", build_display(host)),
                };
                m.meaning = format!("{} {on}.", m.meaning);
            }
        }
        Cause::BuildMismatch | Cause::NoPlatformInManifest if !m.sandbox => {
            let host = node_build.or_else(|| {
                m.objects
                    .build
                    .as_deref()
                    .and_then(WindowsVersion::parse)
                    .map(|v| v.build)
            });
            let Some(host) = host else { return };
            m.objects.build = Some(WindowsVersion::new(host).label());
            let image_builds: Vec<u32> = m
                .objects
                .image
                .as_deref()
                .map(|i| classify_image(i, &[]).os.builds().to_vec())
                .unwrap_or_default();
            if !image_builds.is_empty() {
                m.objects.image_build = Some(
                    image_builds
                        .iter()
                        .map(|b| WindowsVersion::new(*b).label())
                        .collect::<Vec<_>>()
                        .join(", "),
                );
            }
            let on = match &m.objects.node {
                Some(n) => format!("Node {n} runs {}", build_display(host)),
                None => format!("The host runs {}", build_display(host)),
            };
            let image_words = match (&m.objects.image, image_builds.as_slice()) {
                (Some(i), []) => format!("; image {i}'s build is not told by its name"),
                (Some(i), builds) => format!(
                    "; image {i} is built for {}",
                    builds
                        .iter()
                        .map(|b| build_display(*b))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
                (None, _) => String::new(),
            };
            m.meaning = format!("{} {on}{image_words}.", m.meaning);
            // The range of the supported builds (setting `supportedBuilds`) that run an image of the
            // node's build, the node's own included, as fixes pin it (placement::build_range): it
            // survives an in-place upgrade. Not the cluster's builds: an incident's fix must not change
            // when a node elsewhere comes or goes (the audit updates only the pods a change touches).
            let mut builds: Vec<u32> = supported.iter().copied().chain([host]).collect();
            builds.sort_unstable();
            builds.dedup();
            let pin = match pinning {
                BuildPinning::Range => format!(
                    "pin the workload to the builds that run it, {}",
                    crate::placement::build_range::phrase(&hosts_for_images(&[host], &builds))
                ),
                BuildPinning::Exact => format!(
                    "pin the workload to that build with the nodeSelector {}: {} (setting buildPinning: exact)",
                    crate::placement::BUILD_LABEL,
                    WindowsVersion::new(host).label()
                ),
            };
            m.fix = match m
                .objects
                .image
                .as_deref()
                .and_then(|i| retag_for_build(i, host))
            {
                Some(retagged) => format!(
                    "Use {retagged} (the {} tag of the same image) and {pin}.",
                    build_display(host)
                ),
                None => format!(
                    "Use a tag of the image built for {} and {pin}.",
                    build_display(host)
                ),
            };
        }
        Cause::UntoleratedTaint => {
            let mut tolerations = Vec::new();
            for taint in &m.objects.taint {
                let (key, value) = taint.split_once('=').unwrap_or((taint.as_str(), ""));
                let carriers: Vec<&k8s_openapi::api::core::v1::Taint> = context
                    .nodes
                    .iter()
                    .filter_map(|n| n.spec.as_ref()?.taints.as_ref())
                    .flatten()
                    .filter(|t| t.key == key && t.value.as_deref().unwrap_or("") == value)
                    .collect();
                let Some(first) = carriers.first() else {
                    continue;
                };
                tolerations.push(if value.is_empty() {
                    format!("{{key: {key}, operator: Exists, effect: {}}}", first.effect)
                } else {
                    format!(
                        "{{key: {key}, operator: Equal, value: {value}, effect: {}}}",
                        first.effect
                    )
                });
            }
            if !tolerations.is_empty() {
                m.fix = format!(
                    "Add to the workload's pod template the toleration{} {}, and select the nodes it tolerates with a nodeSelector (kubernetes.io/os, node.kubernetes.io/windows-build).",
                    if tolerations.len() > 1 { "s" } else { "" },
                    tolerations.join(", ")
                );
            }
        }
        Cause::OsMismatch if !m.sandbox => {
            if let Some(os) = node_os {
                let pod_os = match os {
                    Os::Windows => Os::Linux,
                    Os::Linux => Os::Windows,
                };
                if pod_os == Os::Linux {
                    m.rule = Some(RuleId::LinuxPodWithoutOsSelector.as_str().to_string());
                }
                m.fix = format!(
                    "Give the workload the nodeSelector kubernetes.io/os: {} (the node {} is {}), then delete the pod so that it is re-created on a {} node.",
                    pod_os.as_str(),
                    m.objects.node.as_deref().unwrap_or(""),
                    os.as_str(),
                    pod_os.as_str()
                );
            }
        }
        _ => {}
    }
}
