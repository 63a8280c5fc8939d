//! Pins for images no node runs: what the placement controller (`serve --place`, docs/placement.md)
//! pins when a gated pod's images need Windows builds no node of the cluster has, or when no single build
//! runs them all.
//!
//! Pinning only the OS would let the scheduler put such a pod on any Windows node, where its containers
//! fail to start (a host that does not run the image's build: kubernetes-windows-rules.md §5.3). So the
//! pod is pinned to the builds that run its images anyway, as required node affinity (the range pin of
//! [`super::build_range`]) or the exact nodeSelector entry of `buildPinning: exact`; it stays Pending
//! until a node of those builds joins, and the controller says what to add or rebuild in a Warning Event.
//! When no single build runs every image, each image's builds are required at once (ANDed in every
//! term): no node matches, which is the truth, and the message says which image needs which build.
//!
//! ```
//! use winplace_rules::{input, model, placement, Settings};
//! use winplace_rules::placement::unrunnable::check;
//! let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: a, image: mcr.microsoft.com/windows/servercore:ltsc2019}\n";
//! let parsed = input::parse("p.yaml", text, &input::Limits::default());
//! let objects = model::objects(&parsed.documents);
//! let template = model::pod_template(&objects[0]).unwrap().unwrap();
//! let nodes = "apiVersion: v1\nkind: Node\nmetadata:\n  name: w\n  labels: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.20348}\n";
//! let nodes = input::parse("nodes.yaml", nodes, &input::Limits::default());
//! let (context, _) = model::ClusterContext::from_objects(&model::objects(&nodes.documents));
//! let settings = Settings::default();
//! let p = placement::resolve(&template, Some(&context), &settings);
//! let u = check(&p, Some(&context), &settings, None).unwrap();
//! assert_eq!(u.warning.as_deref(), Some("no node runs 10.0.17763 images: add a Windows Server 2019 pool, or rebuild on ltsc2022"));
//! ```

use super::build_range::labels;
use super::fix_plan::{BuildPinPlan, context_builds, own_builds};
use super::{Placement, PodOs, host_candidates, host_runs_any};
use crate::model::ClusterContext;
use crate::settings::{BuildPinning, Settings};
use crate::windows::builds::build_info;

/// What to pin on a pod whose images no node runs, and what to tell its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unrunnable {
    /// The build pin to add when the plan has none (no supported build runs the images): the builds that
    /// run them anyway. `None` when the planned pin stands, or when no single build runs every image.
    pub pin: Option<BuildPinPlan>,
    /// When no single build runs every image: each image's builds, one `In` expression each, ANDed.
    pub apart: Vec<Vec<u32>>,
    /// The Warning Event's note (what to add or rebuild); `None` when a node runs the pin.
    pub warning: Option<String>,
}

/// Whether `p` (a Windows pod pinning no build itself) needs the pins of this module, given the build
/// pin the plan made (`planned`, [`super::fix_plan::plan`]). `None` when the planned pin stands and a node
/// of the context runs it, when no image build is known, or for pods this does not apply to (not
/// Windows, HostProcess, a build pin or RuntimeClass of their own).
pub fn check(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
    planned: Option<&BuildPinPlan>,
) -> Option<Unrunnable> {
    if p.os != PodOs::Windows
        || p.host_process
        || p.build_pin.is_some()
        || p.runtime_class.name().is_some()
    {
        return None;
    }
    let images: Vec<(&str, &[u32])> = p
        .windows_image_builds()
        .map(|(i, builds)| (p.images[i].image.as_str(), builds))
        .collect();
    if images.is_empty() {
        return None;
    }
    let exact = settings.build_pinning == BuildPinning::Exact;
    let cluster = context.map(|c| context_builds(Some(c)));
    let hosts = p.image_hosts.clone().unwrap_or_default();
    if hosts.is_empty() {
        // No single build runs them all: require each image's builds at once.
        let candidates = host_candidates(context, settings);
        let mut apart: Vec<Vec<u32>> = Vec::new();
        let mut needs = Vec::new();
        for (image, builds) in &images {
            let mut runs: Vec<u32> = if exact {
                builds.to_vec()
            } else {
                candidates
                    .iter()
                    .copied()
                    .filter(|&h| host_runs_any(h, builds))
                    .collect()
            };
            runs.sort_unstable();
            runs.dedup();
            needs.push(format!("{image} runs on {}", labels(&runs).join(", ")));
            if !apart.contains(&runs) {
                apart.push(runs);
            }
        }
        let rebuild = cluster
            .as_deref()
            .and_then(|c| rebuild_tag(c, exact))
            .map(|tag| format!(" (on {tag} for this cluster)"))
            .unwrap_or_default();
        let warning = format!(
            "no single Windows build runs all of its images ({}): rebuild them on one Windows base image{rebuild}",
            needs.join("; ")
        );
        return Some(Unrunnable {
            pin: None,
            apart,
            warning: Some(warning),
        });
    }
    let own = own_builds(p);
    let fallback = match planned {
        Some(_) => None,
        None if exact => own
            .iter()
            .copied()
            .filter(|b| hosts.contains(b))
            .max()
            .map(BuildPinPlan::Exact),
        None => Some(BuildPinPlan::Range(hosts.clone())),
    };
    let pinned: Vec<u32> = match planned.or(fallback.as_ref()) {
        Some(BuildPinPlan::Range(builds)) => builds.clone(),
        Some(BuildPinPlan::Exact(build)) => vec![*build],
        None => return None,
    };
    let runs_somewhere = cluster
        .as_ref()
        .is_none_or(|c| pinned.iter().any(|b| c.contains(b)));
    if runs_somewhere {
        return fallback.map(|pin| Unrunnable {
            pin: Some(pin),
            apart: Vec::new(),
            warning: None,
        });
    }
    let mut names: Vec<&str> = pinned
        .iter()
        .filter_map(|&b| build_info(b).map(|i| i.name))
        .collect();
    names.dedup();
    let pool = if names.is_empty() {
        format!("add nodes of build {}", labels(&pinned).join(" or "))
    } else {
        format!("add a {} pool", names.join(" or "))
    };
    let rebuild = cluster
        .as_deref()
        .and_then(|c| rebuild_tag(c, exact))
        .map(|tag| format!(", or rebuild on {tag}"))
        .unwrap_or_default();
    let warning = format!(
        "no node runs {} images: {pool}{rebuild}",
        labels(&own).join(", ")
    );
    Some(Unrunnable {
        pin: fallback,
        apart: Vec::new(),
        warning: Some(warning),
    })
}

/// The base-image tag to rebuild on so that the cluster runs the image: an exact pin needs the node's own
/// build (the newest the cluster has), a range the oldest Windows Server release the cluster has (its
/// images run on the newer hosts too, §5.3). `None` when no build of the cluster has a tag.
fn rebuild_tag(cluster: &[u32], exact: bool) -> Option<&'static str> {
    let mut tagged = cluster.iter().filter_map(|&b| {
        build_info(b).and_then(|i| i.tags.iter().find(|t| t.starts_with("ltsc")).copied())
    });
    if exact {
        tagged.next_back()
    } else {
        tagged.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit;
    use crate::windows::builds::WindowsVersion;
    use serde_json::json;

    fn context(builds: &[u32]) -> ClusterContext {
        let nodes: Vec<_> = builds
            .iter()
            .enumerate()
            .map(|(i, b)| json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("n{i}"),
                "labels": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": WindowsVersion::new(*b).label()}}}))
            .collect();
        test_kit::context(&json!({"apiVersion": "v1", "kind": "List", "items": nodes}).to_string())
    }

    fn pod(tags: &[&str]) -> serde_json::Value {
        let containers: Vec<_> = tags
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"name": format!("c{i}"), "image": format!("mcr.microsoft.com/windows/servercore:{t}")}))
            .collect();
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": containers}})
    }

    fn run(tags: &[&str], cluster: &[u32], settings: &Settings) -> Option<Unrunnable> {
        let ctx = context(cluster);
        let p = test_kit::placement(&pod(tags).to_string(), Some(&ctx), settings);
        let planned = super::super::fix_plan::build_pin_plan(&p, Some(&ctx), settings);
        check(&p, Some(&ctx), settings, planned.as_ref())
    }

    #[test]
    fn a_2019_image_without_2019_nodes_is_pinned_to_2019_and_said() {
        // Default supportedBuilds leave 2019 out: the plan has no pin, this one pins 2019 anyway.
        let u = run(&["ltsc2019"], &[20348], &Settings::default()).expect("unrunnable");
        assert_eq!(u.pin, Some(BuildPinPlan::Range(vec![17763])));
        assert_eq!(
            u.warning.as_deref(),
            Some(
                "no node runs 10.0.17763 images: add a Windows Server 2019 pool, or rebuild on ltsc2022"
            )
        );
        // With 2019 supported, the plan's own pin stands; the warning is the same.
        let supported = Settings {
            supported_builds: vec!["10.0.17763".into(), "10.0.20348".into()],
            ..Settings::default()
        };
        let u = run(&["ltsc2019"], &[20348, 26100], &supported).expect("unrunnable");
        assert_eq!(u.pin, None);
        assert!(
            u.warning
                .is_some_and(|w| w.ends_with("or rebuild on ltsc2022"))
        );
        // A 2019 node runs it: nothing to say (the unsupported build is the rules' finding).
        assert_eq!(
            run(&["ltsc2019"], &[17763], &Settings::default()).and_then(|u| u.warning),
            None
        );
        // A 2022 image in a 2022 cluster: the plan's pin, nothing here.
        assert_eq!(run(&["ltsc2022"], &[20348], &Settings::default()), None);
    }

    #[test]
    fn no_single_build_requires_each_images_builds_at_once() {
        let u = run(&["ltsc2019", "ltsc2022"], &[20348], &Settings::default()).expect("apart");
        assert_eq!(u.pin, None);
        assert_eq!(u.apart.len(), 2, "{u:?}");
        assert_eq!(u.apart[0], vec![17763]);
        assert!(u.apart[1].contains(&20348) && !u.apart[1].contains(&17763));
        let w = u.warning.expect("warning");
        assert!(
            w.starts_with("no single Windows build runs all of its images ("),
            "{w}"
        );
        assert!(w.contains("servercore:ltsc2019 runs on 10.0.17763"), "{w}");
    }

    #[test]
    fn an_exact_pin_names_the_images_own_build() {
        let exact = Settings {
            build_pinning: BuildPinning::Exact,
            ..Settings::default()
        };
        // A 2022 image in a cluster of 2025 nodes: 2025 hosts run it, but OpenShift supports only the
        // image's own build (platforms.md §8): pinned to 2022, and said.
        let u = run(&["ltsc2022"], &[26100], &exact).expect("unrunnable");
        assert_eq!(u.pin, None, "the plan's own pin stands");
        let ctx = context(&[26100]);
        let p = test_kit::placement(&pod(&["ltsc2022"]).to_string(), Some(&ctx), &exact);
        assert_eq!(
            super::super::fix_plan::build_pin_plan(&p, Some(&ctx), &exact),
            Some(BuildPinPlan::Exact(20348))
        );
        assert_eq!(
            u.warning.as_deref(),
            Some(
                "no node runs 10.0.20348 images: add a Windows Server 2022 pool, or rebuild on ltsc2025"
            )
        );
        // 2019 with exact pinning and 2019 unsupported: pinned to 17763 anyway.
        let u = run(&["ltsc2019"], &[20348], &exact).expect("unrunnable");
        assert_eq!(u.pin, Some(BuildPinPlan::Exact(17763)));
    }
}
