//! What a pod's selectors pin: its OS and its Windows build, decided the way the scheduler decides.
//!
//! The scheduler ignores `spec.os.name` (kubernetes-windows-rules.md §1.6), so "pinned to Windows" means: the nodeSelector
//! (after the RuntimeClass merge, §4) AND the required node affinity (§3.4), looking only at the OS labels,
//! admit a node labelled `windows` and not one labelled `linux`. The kubelet sets both `kubernetes.io/os` and
//! the deprecated `beta.kubernetes.io/os` (§7), so both select. Builds are decided the same way on
//! `node.kubernetes.io/windows-build` (§5.4).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorTerm};
use k8s_openapi::api::node::v1::RuntimeClass;

use super::build_range::required_affinity_path;
use super::{BETA_OS_LABEL, BUILD_LABEL, OS_LABEL, OsSignal, RuntimeClassUse};
use crate::path::FieldPath;
use crate::schedule::affinity::{requirement_matches, term_expressions};
use crate::windows::Os;
use crate::windows::builds::WindowsVersion;

const OS_KEYS: [&str; 2] = [OS_LABEL, BETA_OS_LABEL];

/// Which OS a pod's scheduling constraints admit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OsPin {
    /// Nodes of either OS pass (nothing constrains the OS labels).
    #[default]
    Unconstrained,
    /// Only nodes of this OS pass.
    Only(Os),
    /// No node of either OS passes (e.g. a `windows` nodeSelector with affinity that admits only `linux`,
    /// or a value in the wrong letter case).
    Nothing,
}

/// The Windows builds a pod's constraints single out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildPin {
    /// Build labels (`10.0.20348`) the constraints admit, ascending; empty when none can match.
    pub builds: Vec<String>,
    /// The constraint: the nodeSelector entry, the first affinity expression on the label, or
    /// `runtimeClassName` when the RuntimeClass supplies it.
    pub path: FieldPath,
}

impl BuildPin {
    /// The pinned build numbers (labels that are not `10.0.<build>` versions are left out).
    pub fn numbers(&self) -> Vec<u32> {
        self.builds
            .iter()
            .filter_map(|b| WindowsVersion::parse(b))
            .filter(|v| v.revision.is_none())
            .map(|v| v.build)
            .collect()
    }
}

fn is_empty_term(term: &NodeSelectorTerm) -> bool {
    term.match_expressions.as_ref().is_none_or(Vec::is_empty)
        && term.match_fields.as_ref().is_none_or(Vec::is_empty)
}

/// Whether nodeSelector and required affinity admit a node with `labels`, looking only at `keys`.
///
/// Requirements on other keys are taken as met; a term with a requirement that does not parse matches
/// nothing, and a selector whose terms are all empty matches nothing, as upstream (§3.4).
pub(crate) fn admits(
    node_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    keys: &[&str],
    labels: &BTreeMap<String, String>,
) -> bool {
    let selector_ok = node_selector
        .into_iter()
        .flatten()
        .all(|(k, v)| !keys.contains(&k.as_str()) || labels.get(k) == Some(v));
    if !selector_ok {
        return false;
    }
    let Some(required) = required else {
        return true;
    };
    required
        .node_selector_terms
        .iter()
        .filter(|t| !is_empty_term(t))
        .any(|term| {
            term.match_expressions.iter().flatten().all(|req| {
                match requirement_matches(req, labels) {
                    Err(_) => false,
                    Ok(matched) => matched || !keys.contains(&req.key.as_str()),
                }
            })
        })
}

/// Whether nodeSelector and required affinity could admit a node labelled `kubernetes.io/os: linux`,
/// whatever its other labels (requirements on other keys are taken as met; a term that selects by
/// field, `matchFields`, is taken to admit one). `false` means no such node can take the pod, so a
/// cluster without them holds every node the pod could go to.
///
/// ```
/// use std::collections::BTreeMap;
/// use winplace_rules::placement::may_admit_linux_labelled;
/// let windows = BTreeMap::from([("kubernetes.io/os".to_string(), "windows".to_string())]);
/// assert!(!may_admit_linux_labelled(Some(&windows), None));
/// // The deprecated label alone does not keep a node labelled `kubernetes.io/os: linux` out.
/// let beta = BTreeMap::from([("beta.kubernetes.io/os".to_string(), "windows".to_string())]);
/// assert!(may_admit_linux_labelled(Some(&beta), None));
/// assert!(may_admit_linux_labelled(None, None));
/// ```
pub fn may_admit_linux_labelled(
    node_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
) -> bool {
    let by_field = required.is_some_and(|r| {
        r.node_selector_terms
            .iter()
            .any(|t| t.match_fields.as_ref().is_some_and(|f| !f.is_empty()))
    });
    let linux = BTreeMap::from([(OS_LABEL.to_string(), Os::Linux.as_str().to_string())]);
    by_field || admits(node_selector, required, &[OS_LABEL], &linux)
}

fn os_labels(os: Os) -> BTreeMap<String, String> {
    OS_KEYS
        .iter()
        .map(|k| (k.to_string(), os.as_str().to_string()))
        .collect()
}

/// Whether the constraints admit a node of `os` (looking only at the OS labels).
///
/// ```
/// use std::collections::BTreeMap;
/// use winplace_rules::placement::os_allowed;
/// use winplace_rules::windows::Os;
/// let sel = BTreeMap::from([("beta.kubernetes.io/os".to_string(), "windows".to_string())]);
/// assert!(os_allowed(Some(&sel), None, Os::Windows));
/// assert!(!os_allowed(Some(&sel), None, Os::Linux));
/// ```
pub fn os_allowed(
    node_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    os: Os,
) -> bool {
    admits(node_selector, required, &OS_KEYS, &os_labels(os))
}

fn pin_of(windows: bool, linux: bool) -> OsPin {
    match (windows, linux) {
        (true, true) => OsPin::Unconstrained,
        (true, false) => OsPin::Only(Os::Windows),
        (false, true) => OsPin::Only(Os::Linux),
        (false, false) => OsPin::Nothing,
    }
}

/// Path of the first required-affinity expression on one of `keys`.
fn first_expression_on(
    required: Option<&NodeSelector>,
    keys: &[&str],
    prefix: &FieldPath,
) -> Option<FieldPath> {
    term_expressions(required)
        .find(|e| keys.contains(&e.requirement.key.as_str()))
        .map(|e| e.path(&required_affinity_path(prefix)))
}

fn runtime_class_selector(rc: &RuntimeClassUse) -> Option<&BTreeMap<String, String>> {
    match rc {
        RuntimeClassUse::Found { entry, .. } => entry
            .object
            .scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref()),
        _ => None,
    }
}

/// Where a constraint on `keys` comes from: the pod's nodeSelector entry, else its first affinity
/// expression, else the RuntimeClass.
fn constraint_path(
    keys: &[&'static str],
    pod_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    rc: &RuntimeClassUse,
    prefix: &FieldPath,
) -> Option<FieldPath> {
    if let Some(key) = keys
        .iter()
        .find(|k| pod_selector.is_some_and(|s| s.contains_key(**k)))
    {
        return Some(prefix.field("nodeSelector").key(*key));
    }
    if let Some(path) = first_expression_on(required, keys, prefix) {
        return Some(path);
    }
    runtime_class_selector(rc)
        .filter(|s| keys.iter().any(|k| s.contains_key(*k)))
        .map(|_| prefix.field("runtimeClassName"))
}

/// The OS the merged constraints pin, and the constraint's path.
///
/// `merged_selector` is the nodeSelector after the RuntimeClass merge; `pod_selector` the pod's own (used
/// for the path only).
pub fn os_pin(
    merged_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    pod_selector: Option<&BTreeMap<String, String>>,
    rc: &RuntimeClassUse,
    prefix: &FieldPath,
) -> (OsPin, Option<FieldPath>) {
    let pin = pin_of(
        os_allowed(merged_selector, required, Os::Windows),
        os_allowed(merged_selector, required, Os::Linux),
    );
    let path = match pin {
        OsPin::Unconstrained => None,
        _ => constraint_path(&OS_KEYS, pod_selector, required, rc, prefix),
    };
    (pin, path)
}

/// The builds the merged constraints single out among `candidates` (build labels such as `10.0.20348`,
/// see [`WindowsVersion::label`]) and the build labels the constraints name; `None` when a Windows node
/// without the build label passes, or when every candidate passes (nothing is singled out, e.g.
/// `Exists`).
pub fn build_pin(
    merged_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    pod_selector: Option<&BTreeMap<String, String>>,
    rc: &RuntimeClassUse,
    prefix: &FieldPath,
    candidates: &[String],
) -> Option<BuildPin> {
    let keys = [BUILD_LABEL];
    let selected = merged_selector
        .and_then(|s| s.get(BUILD_LABEL))
        .map(String::as_str);
    let mut labels = None;
    // Whether a Windows node labelled with `build` (`None`: no build label) passes the constraints.
    let mut passes = |build: Option<&str>| match required {
        // Without required affinity only the nodeSelector reads the label (most pods: no label map
        // to build per candidate).
        None => selected.is_none_or(|s| Some(s) == build),
        Some(_) => {
            let labels = labels.get_or_insert_with(|| os_labels(Os::Windows));
            match build {
                Some(b) => labels.insert(BUILD_LABEL.to_string(), b.to_string()),
                None => labels.remove(BUILD_LABEL),
            };
            admits(merged_selector, required, &keys, labels)
        }
    };
    if passes(None) {
        return None;
    }
    let mut values: Vec<&str> = candidates.iter().map(String::as_str).collect();
    values.extend(selected);
    for e in term_expressions(required) {
        if e.requirement.key == BUILD_LABEL {
            values.extend(e.requirement.values.iter().flatten().map(String::as_str));
        }
    }
    values.sort_unstable();
    values.dedup();
    let total = values.len();
    let builds: Vec<String> = values
        .into_iter()
        .filter(|v| passes(Some(v)))
        .map(str::to_string)
        .collect();
    if builds.len() == total {
        return None;
    }
    let path = constraint_path(&keys, pod_selector, required, rc, prefix)
        .unwrap_or_else(|| prefix.field("nodeSelector").key(BUILD_LABEL));
    Some(BuildPin { builds, path })
}

/// Signals from the pod's own nodeSelector (one per OS key with a valid OS value) and required affinity
/// (when it alone admits exactly one OS).
pub(crate) fn selector_signals(
    pod_selector: Option<&BTreeMap<String, String>>,
    required: Option<&NodeSelector>,
    prefix: &FieldPath,
) -> Vec<OsSignal> {
    let mut out = Vec::new();
    for key in OS_KEYS {
        if let Some(os) = pod_selector
            .and_then(|s| s.get(key))
            .and_then(|v| v.parse::<Os>().ok())
        {
            out.push(OsSignal {
                os,
                path: prefix.field("nodeSelector").key(key),
                what: format!("the nodeSelector {key}: {os}"),
            });
        }
    }
    if let Some(path) = first_expression_on(required, &OS_KEYS, prefix)
        && let OsPin::Only(os) = pin_of(
            os_allowed(None, required, Os::Windows),
            os_allowed(None, required, Os::Linux),
        )
    {
        out.push(OsSignal {
            os,
            path,
            what: format!("the required node affinity admits only {os} nodes"),
        });
    }
    out
}

/// Signals from a RuntimeClass's `scheduling.nodeSelector` (reported at `runtimeClassName`).
pub(crate) fn runtime_class_signals(
    name: &str,
    rc: &RuntimeClass,
    prefix: &FieldPath,
) -> Vec<OsSignal> {
    let selector = rc
        .scheduling
        .as_ref()
        .and_then(|s| s.node_selector.as_ref());
    OS_KEYS
        .iter()
        .filter_map(|key| {
            let os = selector?.get(*key)?.parse::<Os>().ok()?;
            Some(OsSignal {
                os,
                path: prefix.field("runtimeClassName"),
                what: format!("the RuntimeClass {name} selects {key}: {os}"),
            })
        })
        .collect()
}
