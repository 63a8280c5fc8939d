//! How pods use RuntimeClasses: `runtimeclass-not-found`, `runtimeclass-unchecked`,
//! `runtimeclass-selector-conflict`, `runtimeclass-overhead-mismatch` (RuntimeClass admission, kubernetes-windows-rules.md §4).

use serde_json::json;

use super::{Emitter, RuleId, TemplateCx};
use crate::finding::Fix;
use crate::model::WorkloadKind;
use crate::placement::RuntimeClassUse;
use crate::schedule::runtimeclass::{check_overhead, forbidden_message, not_found_message};

/// Runs the RuntimeClass-use rules.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let path = p.prefix.field("runtimeClassName");
    match &p.runtime_class {
        RuntimeClassUse::NotFound { name } => out.emit(
            RuleId::RuntimeClassNotFound,
            &path,
            format!(
                "RuntimeClass admission rejects every pod of this workload ({}): the cluster has no RuntimeClass {name:?}. Create the RuntimeClass or correct the name.",
                not_found_message(name)
            ),
            None,
        ),
        RuntimeClassUse::Unchecked { name } => out.emit(
            RuleId::RuntimeClassUnchecked,
            &path,
            format!(
                "The RuntimeClass {name:?} could not be checked (no cluster context), so its selectors, tolerations and overhead were not taken into account. Check it together with the workload, or give cluster context."
            ),
            None,
        ),
        _ => {}
    }
    selector_conflicts(cx, out);
    overhead_mismatch(cx, out);
}

/// `runtimeclass-selector-conflict`: the pod's nodeSelector and its RuntimeClass disagree on a key.
fn selector_conflicts(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let rc = p.runtime_class.name().unwrap_or("");
    for conflict in &p.runtime_class_conflicts {
        // The API server's words: `pods "<name>" is forbidden: conflict: ...` for a Pod; a workload's pods
        // get generated names.
        let upstream = if cx.template.kind == WorkloadKind::Pod {
            forbidden_message(&cx.object.name, &conflict.message())
        } else {
            conflict.message()
        };
        out.emit(
            RuleId::RuntimeClassSelectorConflict,
            &p.prefix.field("nodeSelector").key(conflict.key.clone()),
            format!(
                "RuntimeClass admission rejects the pod (`{upstream}`): its nodeSelector and the RuntimeClass {rc:?} set {} differently. Remove the key from the pod's nodeSelector (the RuntimeClass supplies it) or use the RuntimeClass that matches the pod.",
                conflict.key
            ),
            None,
        );
    }
}

/// `runtimeclass-overhead-mismatch`: `spec.overhead` is set and admission would reject it.
fn overhead_mismatch(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let p = cx.placement;
    let Some(overhead) = cx.template.spec.overhead.as_ref().filter(|o| !o.is_empty()) else {
        return;
    };
    let rc = match &p.runtime_class {
        RuntimeClassUse::Unchecked { .. } => return,
        RuntimeClassUse::Found { entry, .. } => Some(&entry.object),
        RuntimeClassUse::None | RuntimeClassUse::NotFound { .. } => None,
    };
    let Err(upstream) = check_overhead(Some(overhead), rc) else {
        return;
    };
    let path = p.prefix.field("overhead");
    out.emit(
        RuleId::RuntimeClassOverheadMismatch,
        &path,
        format!(
            "RuntimeClass admission rejects this pod ({upstream}). spec.overhead is set by admission from the RuntimeClass; remove it."
        ),
        Some(Fix {
            description: "remove spec.overhead".to_string(),
            patch: vec![json!({"op": "remove", "path": path.to_json_pointer()})].into(),
        }),
    );
}

#[cfg(test)]
mod tests {
    use crate::finding::Severity;
    use crate::rules::test_kit::{
        apply, context, findings, objects, pod, rule_path, sorted_rule_paths,
    };
    use crate::settings::Settings;

    const RULES: &[&str] = &[
        "runtimeclass-not-found",
        "runtimeclass-unchecked",
        "runtimeclass-selector-conflict",
        "runtimeclass-overhead-mismatch",
    ];
    const RC: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\noverhead: {podFixed: {cpu: 100m, memory: 120Mi}}\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows}\n";
    const APP: &str =
        "  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\n";

    #[test]
    fn triggers_and_non_triggers() {
        let rc = context(RC);
        let nodes_only = context("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n");
        /// A pod spec, the cluster context and the (rule, path) of its findings.
        struct Case<'a> {
            reference: &'a str,
            spec: String,
            ctx: Option<&'a crate::model::ClusterContext>,
            want: Vec<(String, String)>,
        }
        let rows = vec![
            Case {
                reference: "§4 found",
                spec: format!("  runtimeClassName: win\n{APP}"),
                ctx: Some(&rc),
                want: vec![],
            },
            Case {
                reference: "§4 not found",
                spec: format!("  runtimeClassName: other\n{APP}"),
                ctx: Some(&nodes_only),
                want: vec![rule_path("runtimeclass-not-found", "spec.runtimeClassName")],
            },
            Case {
                reference: "no context: unchecked",
                spec: format!("  runtimeClassName: win\n{APP}"),
                ctx: None,
                want: vec![rule_path("runtimeclass-unchecked", "spec.runtimeClassName")],
            },
            Case {
                reference: "§4 selector conflict",
                spec: format!(
                    "  runtimeClassName: win\n  nodeSelector: {{kubernetes.io/os: linux}}\n{APP}"
                ),
                ctx: Some(&rc),
                want: vec![rule_path(
                    "runtimeclass-selector-conflict",
                    "spec.nodeSelector[kubernetes.io/os]",
                )],
            },
            Case {
                reference: "§4 same value is no conflict",
                spec: format!(
                    "  runtimeClassName: win\n  nodeSelector: {{kubernetes.io/os: windows}}\n{APP}"
                ),
                ctx: Some(&rc),
                want: vec![],
            },
            Case {
                reference: "§4 overhead differs",
                spec: format!(
                    "  runtimeClassName: win\n  overhead: {{cpu: 250m, memory: 120Mi}}\n{APP}"
                ),
                ctx: Some(&rc),
                want: vec![rule_path("runtimeclass-overhead-mismatch", "spec.overhead")],
            },
            Case {
                reference: "§4 overhead equal by value",
                spec: format!(
                    "  runtimeClassName: win\n  overhead: {{cpu: \"0.1\", memory: 120Mi}}\n{APP}"
                ),
                ctx: Some(&rc),
                want: vec![],
            },
            Case {
                reference: "§4 overhead without RuntimeClass",
                spec: format!("  overhead: {{cpu: 250m}}\n{APP}"),
                ctx: None,
                want: vec![rule_path("runtimeclass-overhead-mismatch", "spec.overhead")],
            },
            Case {
                reference: "overhead with an unchecked class",
                spec: format!("  runtimeClassName: win\n  overhead: {{cpu: 250m}}\n{APP}"),
                ctx: None,
                want: vec![rule_path("runtimeclass-unchecked", "spec.runtimeClassName")],
            },
        ];
        for Case {
            reference,
            spec,
            ctx,
            want,
        } in rows
        {
            let got = sorted_rule_paths(&findings(&pod(&spec), ctx, &Settings::default(), RULES));
            assert_eq!(got, want, "{reference}");
        }
    }

    #[test]
    fn messages_severities_and_fix() {
        let rc = context(RC);
        let text = pod(&format!(
            "  runtimeClassName: win\n  nodeSelector: {{kubernetes.io/os: linux}}\n  overhead: {{cpu: 1}}\n{APP}"
        ));
        let found = findings(&text, Some(&rc), &Settings::default(), RULES);
        let conflict = found
            .iter()
            .find(|f| f.rule == "runtimeclass-selector-conflict")
            .expect("conflict");
        assert!(conflict.message.contains(r#"(`pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[kubernetes.io/os] = windows; pod.spec.nodeSelector[kubernetes.io/os] = linux"#), "{}", conflict.message);
        let overhead = found
            .iter()
            .find(|f| f.rule == "runtimeclass-overhead-mismatch")
            .expect("overhead");
        let mut value = objects(&text).remove(0).value;
        apply(&mut value, overhead.fix.as_ref().expect("fix"));
        assert!(value["spec"].get("overhead").is_none());
        let unchecked = findings(
            &pod(&format!("  runtimeClassName: win\n{APP}")),
            None,
            &Settings::default(),
            RULES,
        );
        assert_eq!(unchecked[0].severity, Severity::Info);
    }
}
