//! What the placement rules would change in a pod template, decided once so that their fixes agree.
//!
//! Several rules add to the same nodeSelector (the OS selector, the build selector). When the template has
//! no nodeSelector, each fix adds the whole map with every planned entry, so the fixes can be applied in
//! any order and any subset (a JSON-patch `add` of a present member replaces it).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use serde_json::{Value, json};

use super::{BUILD_LABEL, OS_LABEL, OsPin, Placement, PodOs};
use crate::model::ClusterContext;
use crate::settings::Settings;
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
/// build runs gets `windows-images-build-conflict` instead).
pub fn needs_build_selector(p: &Placement) -> bool {
    p.os == PodOs::Windows
        && !p.host_process
        && p.build_pin.is_none()
        && !p.runtime_class.is_unchecked()
        && p.image_hosts.as_ref().is_none_or(|h| !h.is_empty())
}

/// The build a fix pins: among the supported builds whose hosts run every image, one the cluster has
/// (newest), else one the images were built for (newest), else the newest. `None` when no image build is
/// known or no supported build runs them all.
pub fn choose_build(
    p: &Placement,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Option<u32> {
    let hosts = p.image_hosts.as_ref()?;
    let supported = settings.supported_build_numbers();
    let ok: Vec<u32> = hosts
        .iter()
        .copied()
        .filter(|h| supported.contains(h))
        .collect();
    let in_context: Vec<u32> = context
        .map(|c| {
            c.windows_builds()
                .iter()
                .filter_map(|b| WindowsVersion::parse(b).map(|v| v.build))
                .collect()
        })
        .unwrap_or_default();
    let image_builds: Vec<u32> = p
        .windows_image_builds()
        .flat_map(|(_, b)| b.iter().copied())
        .collect();
    ok.iter()
        .copied()
        .filter(|b| in_context.contains(b))
        .max()
        .or_else(|| {
            ok.iter()
                .copied()
                .filter(|b| image_builds.contains(b))
                .max()
        })
        .or_else(|| ok.iter().copied().max())
}

/// The selector changes the placement rules' fixes make for one template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelectorPlan {
    /// nodeSelector entries to add.
    pub entries: BTreeMap<String, String>,
    /// A RuntimeClass to set instead (settings `runtimeClasses` maps the chosen build).
    pub runtime_class: Option<String>,
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
    let build = choose_build(p, context, settings).map(|b| WindowsVersion::new(b).label());
    let mapped = build
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
    if need_build && let Some(build) = build {
        plan.entries.insert(BUILD_LABEL.to_string(), build);
    }
    plan
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

/// The taints that keep pods off Windows nodes: with context, the `NoSchedule`/`NoExecute` taints of its
/// Windows nodes; without (or with no Windows node in it), the settings' `windowsTaints` that filter.
pub fn windows_taints(context: Option<&ClusterContext>, settings: &Settings) -> Vec<Taint> {
    use crate::schedule::taints::filters;
    let mut out: Vec<Taint> = Vec::new();
    let mut any_windows = false;
    for node in context.map(|c| c.nodes.as_slice()).unwrap_or(&[]) {
        if crate::model::node_os(node) != Some("windows") {
            continue;
        }
        any_windows = true;
        for t in crate::model::node_taints(node) {
            if filters(t)
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
        .filter(|t| filters(t))
        .cloned()
        .collect()
}
