//! What the placement rules would change in a pod template, decided once so that their fixes agree.
//!
//! Several rules add to the same nodeSelector (the OS selector, and with `buildPinning: exact` the build
//! selector). When the template has no nodeSelector, each fix adds the whole map with every planned
//! entry, so the fixes can be applied in any order and any subset (a JSON-patch `add` of a present member
//! replaces it). With `buildPinning: range` (the default) the build pin is required node affinity
//! instead ([`super::build_range`]), which no other fix touches.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use serde_json::{Value, json};

use super::{BUILD_LABEL, OS_LABEL, OsPin, Placement, PodOs, build_range};
use crate::model::ClusterContext;
use crate::settings::{BuildPinning, Settings};
use crate::windows::Os;
use crate::windows::builds::WindowsVersion;

/// Whether a Windows pod lacks an OS pin the scheduler enforces (and nothing unchecked could provide one).
pub fn windows_needs_os_selector(p: &Placement) -> bool {
    p.os == PodOs::Windows && p.os_pin == OsPin::Unconstrained && !p.runtime_class.is_unchecked()
}

/// Whether a Linux pod lacks an OS pin the scheduler enforces (and nothing unchecked could provide one).
pub fn linux_needs_os_selector(p: &Placement) -> bool {
    p.os == PodOs::Linux && p.os_pin == OsPin::Unconstrained && !p.runtime_class.is_unchecked()
}

/// Whether a Windows pod lacks a build pin (HostProcess pods need none, §2.2; a pod whose images no single
/// build runs gets `windows-images-build-conflict` instead; a pod whose every image is a multi-OS tag
/// needs none either: its index has an entry for every supported build, and the runtime picks the
/// host's, docs/reference/multi-os-images.md).
pub fn needs_build_selector(p: &Placement) -> bool {
    p.os == PodOs::Windows
        && !p.host_process
        && p.build_pin.is_none()
        && !p.runtime_class.is_unchecked()
        && p.image_hosts.as_ref().is_none_or(|h| !h.is_empty())
        && !runs_on_every_build(p)
}

/// Whether every image of the pod is a multi-OS tag (and there is one): whatever the Windows build of
/// the node, the runtime pulls the index's entry for it.
pub fn runs_on_every_build(p: &Placement) -> bool {
    !p.images.is_empty()
        && p.images
            .iter()
            .all(|i| i.class.os == crate::windows::ImageOs::MultiOs)
}

/// The build an exact pin names: one of the images' own builds (a build some image was built for, whose
/// hosts run every image), among the supported builds: the newest the cluster has, else the newest.
/// `None` when no image build is known or none of the images' own builds is supported.
///
/// Only the image's own build: an exact pin is for platforms that support only a container whose base
/// image matches the node's build (OpenShift's WMCO, platforms.md §8), so a newer build the cluster has
/// would pin the pod where the platform does not support it. Where no node has that build, the placement
/// controller pins it anyway and says what to add or rebuild ([`super::unrunnable`]).
pub fn choose_build(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Option<u32> {
    let hosts = p.image_hosts.as_ref()?;
    let supported = settings.supported_build_numbers();
    let own: Vec<u32> = own_builds(p)
        .into_iter()
        .filter(|b| hosts.contains(b) && supported.contains(b))
        .collect();
    let in_context = context_builds(context);
    own.iter()
        .copied()
        .filter(|b| in_context.contains(b))
        .max()
        .or_else(|| own.iter().copied().max())
}

/// The builds the pod's Windows images were built for, ascending, each once.
pub fn own_builds(p: &Placement) -> Vec<u32> {
    let mut out: Vec<u32> = p
        .windows_image_builds()
        .flat_map(|(_, b)| b.iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The Windows builds of the context's nodes (empty without a context).
pub fn context_builds(context: Option<&ClusterContext>) -> Vec<u32> {
    context
        .map(|c| {
            c.windows_builds()
                .iter()
                .filter_map(|b| WindowsVersion::parse(b).map(|v| v.build))
                .collect()
        })
        .unwrap_or_default()
}

/// How a fix pins a pod's Windows build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildPinPlan {
    /// Required node affinity `node.kubernetes.io/windows-build In [builds]` (`buildPinning: range`).
    Range(Vec<u32>),
    /// The nodeSelector entry `node.kubernetes.io/windows-build: <build>` (`buildPinning: exact`).
    Exact(u32),
}

impl BuildPinPlan {
    /// The pin as a message names it: `required node affinity node.kubernetes.io/windows-build In
    /// [10.0.20348, 10.0.26100]`, or `the nodeSelector node.kubernetes.io/windows-build: "10.0.20348"`.
    pub fn phrase(&self) -> String {
        match self {
            BuildPinPlan::Range(builds) => build_range::phrase(builds),
            BuildPinPlan::Exact(build) => format!(
                "the nodeSelector {BUILD_LABEL}: \"{}\"",
                WindowsVersion::new(*build).label()
            ),
        }
    }

    /// Where the pin goes in a pod spec at `prefix` (where a finding about a missing pin points).
    pub fn path(&self, prefix: &crate::FieldPath) -> crate::FieldPath {
        match self {
            BuildPinPlan::Range(_) => build_range::required_affinity_path(prefix),
            BuildPinPlan::Exact(_) => prefix.field("nodeSelector").key(BUILD_LABEL),
        }
    }
}

/// The pin a fix puts on a Windows pod, as `buildPinning` says: the range of builds that run its images
/// ([`build_range::range_builds`]) or the one build [`choose_build`] picks. `None` when no image build is
/// known or no supported build runs the images.
pub fn build_pin_plan(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Option<BuildPinPlan> {
    match settings.build_pinning {
        BuildPinning::Range => {
            build_range::range_builds(p, context, settings).map(BuildPinPlan::Range)
        }
        BuildPinning::Exact => choose_build(p, context, settings).map(BuildPinPlan::Exact),
    }
}

/// Where a pin of `settings`' kind goes in a pod spec at `prefix`, for findings that advise one without
/// knowing the builds.
pub fn pin_path(prefix: &crate::FieldPath, settings: &Settings) -> crate::FieldPath {
    match settings.build_pinning {
        BuildPinning::Range => build_range::required_affinity_path(prefix),
        BuildPinning::Exact => prefix.field("nodeSelector").key(BUILD_LABEL),
    }
}

/// The selector changes the placement rules' fixes make for one template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectorPlan {
    /// nodeSelector entries to add.
    pub entries: BTreeMap<String, String>,
    /// A RuntimeClass to set instead (settings `runtimeClasses` maps the chosen build).
    pub runtime_class: Option<String>,
    /// The build pin to add, when the pod needs one and the images' builds are known.
    pub build: Option<BuildPinPlan>,
}

/// Plans the nodeSelector fixes of a template.
pub fn plan(p: &Placement, context: Option<&ClusterContext>, settings: &Settings) -> SelectorPlan {
    let mut plan = SelectorPlan::default();
    if linux_needs_os_selector(p) {
        plan.entries
            .insert(OS_LABEL.to_string(), Os::Linux.as_str().to_string());
        return plan;
    }
    let need_os = windows_needs_os_selector(p);
    let need_build = needs_build_selector(p);
    if !need_os && !need_build {
        return plan;
    }
    // The settings' runtimeClasses map the build an exact pin would name, whatever the pinning: a
    // RuntimeClass's scheduling is a nodeSelector, so it pins one build (an operator's explicit choice).
    let exact = choose_build(p, context, settings).map(|b| WindowsVersion::new(b).label());
    let mapped = exact
        .as_ref()
        .filter(|_| p.build_pin.is_none() && p.runtime_class.name().is_none())
        .and_then(|b| settings.runtime_classes.get(b));
    if let Some(rc) = mapped {
        plan.runtime_class = Some(rc.clone());
        return plan;
    }
    if need_os {
        plan.entries
            .insert(OS_LABEL.to_string(), Os::Windows.as_str().to_string());
    }
    if need_build {
        plan.build = build_pin_plan(p, context, settings);
        if let Some(BuildPinPlan::Exact(build)) = &plan.build {
            plan.entries
                .insert(BUILD_LABEL.to_string(), WindowsVersion::new(*build).label());
        }
    }
    plan
}

/// The JSON-patch ops of the planned build pin: `runtimeClassName` when the plan sets one, the
/// nodeSelector entry of an exact pin, or the range ANDed into the required node affinity. Empty when
/// the plan pins nothing.
pub fn build_pin_ops(p: &Placement, raw: &Value, plan: &SelectorPlan) -> Vec<Value> {
    match (&plan.runtime_class, &plan.build) {
        (Some(_), _) | (None, Some(BuildPinPlan::Exact(_))) => {
            selector_ops(p, raw, plan, BUILD_LABEL)
        }
        (None, Some(BuildPinPlan::Range(builds))) => {
            build_range::pin_ops(p, raw, builds).unwrap_or_default()
        }
        (None, None) => Vec::new(),
    }
}

/// The JSON-patch ops that put `key` (from the plan) into the template: `runtimeClassName` when the plan
/// sets one, else the nodeSelector entry, or the whole planned map when the template has no nodeSelector.
/// Empty when the plan has nothing for `key`.
pub fn selector_ops(p: &Placement, raw: &Value, plan: &SelectorPlan, key: &str) -> Vec<Value> {
    if let Some(rc) = &plan.runtime_class {
        return vec![json!({
            "op": "add",
            "path": p.prefix.field("runtimeClassName").to_json_pointer(),
            "value": rc,
        })];
    }
    let Some(value) = plan.entries.get(key) else {
        return Vec::new();
    };
    let selector = p.prefix.field("nodeSelector");
    if raw.get("nodeSelector").is_some_and(Value::is_object) {
        vec![
            json!({"op": "add", "path": selector.key(key.to_string()).to_json_pointer(), "value": value}),
        ]
    } else {
        vec![json!({"op": "add", "path": selector.to_json_pointer(), "value": plan.entries})]
    }
}

/// A toleration that tolerates exactly `taint`: `Equal` on its value (`Exists` when it has none).
pub fn toleration_for(taint: &Taint) -> Value {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(v) => {
            json!({"key": taint.key, "operator": "Equal", "value": v, "effect": taint.effect})
        }
        None => json!({"key": taint.key, "operator": "Exists", "effect": taint.effect}),
    }
}

/// JSON-patch ops that append tolerations (or add the list when the template has none).
pub fn add_tolerations_ops(p: &Placement, raw: &Value, tolerations: Vec<Value>) -> Vec<Value> {
    let path = p.prefix.field("tolerations");
    if raw.get("tolerations").is_some_and(Value::is_array) {
        let end = format!("{}/-", path.to_json_pointer());
        tolerations
            .into_iter()
            .map(|t| json!({"op": "add", "path": end, "value": t}))
            .collect()
    } else {
        vec![json!({"op": "add", "path": path.to_json_pointer(), "value": tolerations})]
    }
}

/// The Windows taints a pod does not tolerate (its tolerations after the RuntimeClass merge), and where
/// they come from: the context's Windows nodes (those its selectors admit, else all), else the
/// settings' `windowsTaints` that filter. Never a node-condition taint (`not-ready`, …): a fix does not
/// tolerate what passes with the node's condition.
pub fn missing_windows_tolerations(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> (Vec<Taint>, &'static str) {
    use crate::schedule::taints::{Gates, filters, is_condition_taint, tolerated_by_any};
    if let Some(ctx) = context
        && let Some(missing) = super::untolerated_windows_taints(&ctx.nodes, p)
    {
        return (missing, "the cluster's Windows nodes");
    }
    let missing = settings
        .windows_taints
        .iter()
        .filter(|t| filters(t) && !is_condition_taint(&t.key))
        .filter(|t| !tolerated_by_any(&p.tolerations, t, Gates::default()))
        .cloned()
        .collect();
    (missing, "the Windows nodes (settings windowsTaints)")
}

/// The taints that keep pods off Windows nodes: with context, the `NoSchedule`/`NoExecute` taints of its
/// Windows nodes; without (or with no Windows node in it), the settings' `windowsTaints` that filter.
/// Node-condition taints are not among them: they come and go with the node's condition.
pub fn windows_taints(context: Option<&ClusterContext>, settings: &Settings) -> Vec<Taint> {
    use crate::schedule::taints::{filters, is_condition_taint};
    let mut out: Vec<Taint> = Vec::new();
    let mut any_windows = false;
    for node in context.map(|c| c.nodes.as_slice()).unwrap_or(&[]) {
        if crate::model::node_os(node) != Some("windows") {
            continue;
        }
        any_windows = true;
        for t in crate::model::node_taints(node) {
            if filters(t)
                && !is_condition_taint(&t.key)
                && !out
                    .iter()
                    .any(|o| o.key == t.key && o.value == t.value && o.effect == t.effect)
            {
                out.push(t.clone());
            }
        }
    }
    if any_windows {
        return out;
    }
    settings
        .windows_taints
        .iter()
        .filter(|t| filters(t) && !is_condition_taint(&t.key))
        .cloned()
        .collect()
}
