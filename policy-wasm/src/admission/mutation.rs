//! Mutation (settings `mutate`): the catalogue's fixes applied to the object in rounds (the rules' one
//! repair loop, [`winplace_rules::fix::repair_value`]), and the repaired object returned when nothing new
//! is left to reject, with a warning per applied fix.

use serde_json::Value;
use winplace_rules::Checker;
use winplace_rules::finding::Finding;
use winplace_rules::fix::repair_value;

use super::decision::{Decision, Verdict, decide, patch_warning};

/// The answer for an object the settings say to repair: `None` when no fix applies (the caller decides on
/// the findings as they are); else the mutated object with a warning per applied fix, or the rejection
/// of what the fixes left. `repairer` finds the fixes to apply (on an UPDATE, without the rules the old
/// object already broke); `checker` is the review's (settings, cluster, image manifests), which judges
/// what is left; `is_new` tells the findings this request introduced; `written_namespace` is the request
/// object's own `metadata.namespace` (the namespace added for evaluation is taken out again).
pub(super) fn mutate(
    repairer: &Checker<'_>,
    checker: &Checker<'_>,
    object: &Value,
    is_new: &dyn Fn(&Finding) -> bool,
    written_namespace: Option<&Value>,
) -> Option<Decision> {
    let repaired = repair_value(repairer, object);
    if repaired.applied.is_empty() {
        return None;
    }
    let remaining = checker.check_value(repaired.value.clone());
    let mut decision = decide(&remaining, is_new, true);
    if !matches!(decision.verdict, Verdict::Accept) {
        return Some(decision);
    }
    // Worded so it stays true where the ClusterAdmissionPolicy is not `mutating` (policy-server then
    // rejects the patch): it names the problem and what the patch does, not "fixed".
    let mut warnings: Vec<String> = repaired
        .applied
        .iter()
        .filter_map(|f| Some(patch_warning(f, f.fix.as_ref()?)))
        .collect();
    warnings.append(&mut decision.warnings);
    let mut out = repaired.value;
    restore_namespace(&mut out, written_namespace);
    Some(Decision {
        verdict: Verdict::Mutate(out),
        warnings,
    })
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
    use crate::admission::{GroupVersionKind, Verdict, review};
    use serde_json::json;
    use winplace_rules::finding::Severity;
    use winplace_rules::settings::Settings;

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
                let remaining = Checker::builder()
                    .cluster(c)
                    .build()
                    .check_value(object.clone());
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
