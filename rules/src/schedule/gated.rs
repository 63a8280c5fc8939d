//! Updates to the placement of a scheduling-gated pod (kubernetes-windows-rules.md §3.4, last point; Kubernetes "Pod
//! scheduling readiness": mutable pod scheduling directives).
//!
//! While a pod still has `spec.schedulingGates`, its nodeSelector and node affinity may change, but only
//! to narrow where it can go: nodeSelector entries may be added, never changed or removed; required node
//! affinity may be set when it was absent or had no terms; otherwise only requirements may be added to the
//! existing terms (terms are ORed, requirements ANDed, so adding a term or changing one would widen the
//! set). Preferred terms may change freely: they are not authoritative.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};

use super::affinity::required_node_affinity;

/// Why a gated pod's placement update widens where it can run; `None` when it only narrows.
///
/// ```
/// use std::collections::BTreeMap;
/// use winplace_rules::schedule::gated::widening_update;
/// let old = BTreeMap::from([("kubernetes.io/os".to_string(), "windows".to_string())]);
/// let mut new = old.clone();
/// new.insert("node.kubernetes.io/windows-build".into(), "10.0.20348".into());
/// assert_eq!(widening_update(Some(&old), Some(&new), None, None), None);
/// assert!(widening_update(Some(&new), Some(&old), None, None).is_some());
/// ```
pub fn widening_update(
    old_selector: Option<&BTreeMap<String, String>>,
    new_selector: Option<&BTreeMap<String, String>>,
    old_affinity: Option<&Affinity>,
    new_affinity: Option<&Affinity>,
) -> Option<String> {
    if let Some(old) = old_selector {
        let new = new_selector.cloned().unwrap_or_default();
        for (key, value) in old {
            match new.get(key) {
                Some(v) if v == value => {}
                Some(v) => {
                    return Some(format!(
                        "spec.nodeSelector[{key}] changed from {value:?} to {v:?}: only additions are allowed"
                    ));
                }
                None => {
                    return Some(format!(
                        "spec.nodeSelector[{key}] was removed: only additions are allowed"
                    ));
                }
            }
        }
    }
    narrowing_terms(
        required_node_affinity(old_affinity),
        required_node_affinity(new_affinity),
    )
}

fn narrowing_terms(old: Option<&NodeSelector>, new: Option<&NodeSelector>) -> Option<String> {
    const PATH: &str = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    let Some(old) = old.filter(|o| !o.node_selector_terms.is_empty()) else {
        return None; // absent or empty before: anything may be set
    };
    let new_terms: &[NodeSelectorTerm] = new.map_or(&[], |n| &n.node_selector_terms);
    if new_terms.len() != old.node_selector_terms.len() {
        return Some(format!(
            "{PATH}: the number of terms changed from {} to {}: only requirements may be added to existing terms",
            old.node_selector_terms.len(),
            new_terms.len()
        ));
    }
    for (i, (o, n)) in old.node_selector_terms.iter().zip(new_terms).enumerate() {
        let kept = |old: &Option<Vec<NodeSelectorRequirement>>,
                    new: &Option<Vec<NodeSelectorRequirement>>| {
            let new = new.as_deref().unwrap_or_default();
            old.as_deref()
                .unwrap_or_default()
                .iter()
                .all(|req| new.contains(req))
        };
        if !kept(&o.match_expressions, &n.match_expressions)
            || !kept(&o.match_fields, &n.match_fields)
        {
            return Some(format!(
                "{PATH}[{i}]: an existing requirement was changed or removed: only additions are allowed"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{NodeAffinity, PreferredSchedulingTerm};

    type Selector = BTreeMap<String, String>;
    type Terms = Option<Vec<Vec<NodeSelectorRequirement>>>;

    fn sel(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn affinity(terms: Terms, preferred: usize) -> Affinity {
        Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: terms.map(|terms| {
                    NodeSelector {
                        node_selector_terms: terms
                            .into_iter()
                            .map(|exprs| NodeSelectorTerm {
                                match_expressions: Some(exprs),
                                match_fields: None,
                            })
                            .collect(),
                    }
                }),
                preferred_during_scheduling_ignored_during_execution: Some(
                    (0..preferred)
                        .map(|i| PreferredSchedulingTerm {
                            weight: 1 + i as i32,
                            preference: NodeSelectorTerm::default(),
                        })
                        .collect(),
                ),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn node_selector_may_only_grow() {
        let os = sel(&[("kubernetes.io/os", "windows")]);
        let os_build = sel(&[
            ("kubernetes.io/os", "windows"),
            ("node.kubernetes.io/windows-build", "10.0.20348"),
        ]);
        let linux = sel(&[("kubernetes.io/os", "linux")]);
        // (old, new, allowed) — §3.4: additions only.
        let cases: &[(Option<&Selector>, Option<&Selector>, bool)] = &[
            (None, Some(&os), true),
            (Some(&os), Some(&os_build), true),
            (Some(&os), Some(&os), true),
            (Some(&os_build), Some(&os), false),
            (Some(&os), Some(&linux), false),
            (Some(&os), None, false),
        ];
        for (old, new, allowed) in cases {
            assert_eq!(
                widening_update(*old, *new, None, None).is_none(),
                *allowed,
                "{old:?} → {new:?}"
            );
        }
    }

    #[test]
    fn required_affinity_may_only_narrow() {
        let win = || req("kubernetes.io/os", "In", &["windows"]);
        let build = || req("node.kubernetes.io/windows-build", "In", &["10.0.20348"]);
        let linux = || req("kubernetes.io/os", "In", &["linux"]);
        // (old terms, new terms, allowed) — §3.4.
        let cases: Vec<(Terms, Terms, bool)> = vec![
            (None, Some(vec![vec![win()]]), true),
            (Some(vec![]), Some(vec![vec![win()]]), true),
            (
                Some(vec![vec![win()]]),
                Some(vec![vec![win(), build()]]),
                true,
            ),
            (
                Some(vec![vec![win()]]),
                Some(vec![vec![win()], vec![linux()]]),
                false,
            ),
            (Some(vec![vec![win()]]), Some(vec![vec![linux()]]), false),
            (
                Some(vec![vec![win(), build()]]),
                Some(vec![vec![win()]]),
                false,
            ),
            (Some(vec![vec![win()]]), None, false),
        ];
        for (old, new, allowed) in cases {
            let (o, n) = (affinity(old.clone(), 0), affinity(new.clone(), 0));
            assert_eq!(
                widening_update(None, None, Some(&o), Some(&n)).is_none(),
                allowed,
                "{old:?} → {new:?}"
            );
        }
    }

    #[test]
    fn preferred_terms_may_change_freely() {
        let terms = Some(vec![vec![req("kubernetes.io/os", "In", &["windows"])]]);
        let (o, n) = (affinity(terms.clone(), 3), affinity(terms, 0));
        assert_eq!(widening_update(None, None, Some(&o), Some(&n)), None);
    }
}
