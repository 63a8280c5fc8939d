//! Mutation (settings `mutate`): the catalogue's fixes applied to the object in rounds, and the repaired
//! object returned when nothing new is left to reject, with a warning per applied fix.

use std::collections::BTreeMap;

use serde_json::Value;
use winplace_rules::finding::{Finding, Fix};
use winplace_rules::fix::{MAX_ROUNDS, apply_fixes};
use winplace_rules::model::ClusterContext;
use winplace_rules::settings::Settings;
use winplace_rules::windows::ImageClass;

use super::decision::{Decision, Verdict, decide, patch_warning};
use super::evaluation::evaluate;

/// The answer for an object the settings say to repair: `None` when no fix applies (the caller decides on
/// the findings as they are); else the mutated object with a warning per applied fix, or the rejection
/// of what the fixes left. `is_new` tells the findings this request introduced; `written_namespace` is
/// the request object's own `metadata.namespace` (the namespace added for evaluation is taken out again).
pub(super) fn mutate(
    object: &Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
    is_new: &dyn Fn(&Finding) -> bool,
    written_namespace: Option<&Value>,
) -> Option<Decision> {
    let (repaired, applied) = repair(object, context, settings, manifests);
    if applied.is_empty() {
        return None;
    }
    let remaining = evaluate(&repaired, context, settings, manifests);
    let mut decision = decide(&remaining, is_new, true);
    if !matches!(decision.verdict, Verdict::Accept) {
        return Some(decision);
    }
    // Worded so it stays true where the ClusterAdmissionPolicy is not `mutating` (policy-server then
    // rejects the patch): it names the problem and what the patch does, not "fixed".
    let mut warnings: Vec<String> = applied
        .iter()
        .map(|(f, fix)| patch_warning(f, fix))
        .collect();
    warnings.append(&mut decision.warnings);
    let mut out = repaired;
    restore_namespace(&mut out, written_namespace);
    Some(Decision {
        verdict: Verdict::Mutate(out),
        warnings,
    })
}

/// Applies the findings' fixes in rounds, as [`winplace_rules::fix::repair_text`] does on text: evaluate, apply every
/// fix, until no finding carries a fix, a round changes nothing, or [`MAX_ROUNDS`]. Returns the repaired
/// object and the `(finding, fix)` pairs that were applied.
pub fn repair(
    object: &Value,
    context: Option<&ClusterContext>,
    settings: &Settings,
    manifests: &BTreeMap<String, ImageClass>,
) -> (Value, Vec<(Finding, Fix)>) {
    let mut current = object.clone();
    let mut applied = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let found: Vec<Finding> = evaluate(&current, context, settings, manifests)
            .into_iter()
            .filter(|f| f.fix.is_some())
            .collect();
        let fixes: Vec<&Fix> = found.iter().filter_map(|f| f.fix.as_ref()).collect();
        if fixes.is_empty() {
            break;
        }
        let (next, skipped) = apply_fixes(&current, &fixes);
        if next == current {
            break;
        }
        let skipped: Vec<usize> = skipped.into_iter().map(|(i, _)| i).collect();
        for (i, f) in found.iter().enumerate() {
            if !skipped.contains(&i)
                && let Some(fix) = &f.fix
            {
                applied.push((f.clone(), fix.clone()));
            }
        }
        current = next;
    }
    (current, applied)
}

/// Removes the namespace the review filled in for evaluation, so a mutation changes only what the fixes
/// changed: `written` is the request object's own `metadata.namespace`.
fn restore_namespace(value: &mut Value, written: Option<&Value>) {
    let had = written
        .and_then(Value::as_str)
        .is_some_and(|ns| !ns.is_empty());
    if !had && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        match written {
            Some(v) => {
                meta.insert("namespace".into(), v.clone());
            }
            None => {
                meta.remove("namespace");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{cluster, no_manifests, request, settings};
    use crate::admission::{GroupVersionKind, Verdict, evaluate, review};
    use serde_json::json;
    use winplace_rules::finding::Severity;

    #[test]
    fn mutation_repairs_every_kind_and_the_result_validates() {
        let mutate = settings(json!({"mutate": true}));
        let ctx = cluster();
        for kind in [
            "pod",
            "deployment",
            "replicaset",
            "statefulset",
            "daemonset",
            "job",
            "cronjob",
            "replicationcontroller",
        ] {
            for c in [None, Some(&ctx)] {
                let r = request(&format!("{kind}-windows-unpinned"));
                let d = review(r.clone(), &mutate, c, &no_manifests());
                let Verdict::Mutate(object) = &d.verdict else {
                    panic!("{kind}: {d:?}")
                };
                // The problem and what the patch does: true whether or not policy-server applies it.
                assert!(
                    d.warnings.iter().any(|w| w
                        .starts_with("[windows-pod-without-os-selector] spec")
                        && w.contains(
                            "; winplace proposed a patch, not applied unless the policy is mutating: add nodeSelector kubernetes.io/os: windows"
                        )),
                    "{kind}: {:?}",
                    d.warnings
                );
                // Round trip: the mutated object passes validation, without mutation.
                let mut again = r.clone();
                again.object = object.clone();
                let d2 = review(again.clone(), &Settings::default(), c, &no_manifests());
                assert_eq!(d2.verdict, Verdict::Accept, "{kind}: {d2:?}");
                let remaining = evaluate(object, c, &Settings::default(), &no_manifests());
                assert!(
                    remaining.iter().all(|f| f.severity != Severity::Error),
                    "{kind}: {remaining:?}"
                );
            }
        }
    }

    #[test]
    fn mutation_limits() {
        let mutate = settings(json!({"mutate": true}));
        // No fix makes the OS signals agree: still rejected (kubernetes-windows-rules.md §1.6).
        let d = review(request("pod-os-conflict"), &mutate, None, &no_manifests());
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("os-conflict")),
            "{d:?}"
        );
        // A Pod's spec is immutable: an UPDATE is never mutated.
        let mut update = request("deployment-update-unpins");
        update.kind = GroupVersionKind {
            group: String::new(),
            version: "v1".into(),
            kind: "Pod".into(),
        };
        update.object = request("pod-windows-unpinned").object;
        update.old_object = request("pod-windows-pinned").object;
        let d = review(update.clone(), &mutate, None, &no_manifests());
        assert!(matches!(d.verdict, Verdict::Reject(_)), "{d:?}");
        // A Deployment UPDATE that introduces the problem is repaired.
        let d = review(
            request("deployment-update-unpins"),
            &mutate,
            None,
            &no_manifests(),
        );
        assert!(matches!(d.verdict, Verdict::Mutate(_)), "{d:?}");
        // Pre-existing problems are not repaired behind the user's back.
        let d = review(
            request("deployment-update-preexisting"),
            &mutate,
            None,
            &no_manifests(),
        );
        assert_eq!(d.verdict, Verdict::Accept, "{d:?}");
        // The namespace taken from the request is not written into the mutated object.
        let d = review(
            request("pod-windows-unpinned-no-namespace"),
            &mutate,
            None,
            &no_manifests(),
        );
        let Verdict::Mutate(object) = d.verdict else {
            panic!()
        };
        assert!(object.pointer("/metadata/namespace").is_none(), "{object}");
        assert_eq!(
            object.pointer("/spec/nodeSelector/kubernetes.io~1os"),
            Some(&json!("windows"))
        );
    }
}
