//! API validation of node affinity (`ValidateNodeSelector`, `ValidatePreferredSchedulingTerms`,
//! kubernetes-windows-rules.md §3.4): `node-affinity-invalid`.

use super::{Emitter, RuleId, TemplateCx};
use crate::path::FieldPath;
use crate::schedule::affinity::{
    AffinityProblem, validate_node_selector, validate_preferred_terms,
};

/// Runs this family's rules on one pod template.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    let Some(na) = cx
        .template
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
    else {
        return;
    };
    let base = cx.template.prefix.field("affinity").field("nodeAffinity");
    if let Some(required) = &na.required_during_scheduling_ignored_during_execution {
        let at = base.field("requiredDuringSchedulingIgnoredDuringExecution");
        for p in validate_node_selector(required) {
            emit(&FieldPath::parse(&format!("{at}.{}", p.path)), &p, out);
        }
    }
    if let Some(preferred) = &na.preferred_during_scheduling_ignored_during_execution {
        let at = base.field("preferredDuringSchedulingIgnoredDuringExecution");
        for p in validate_preferred_terms(preferred) {
            emit(&FieldPath::parse(&format!("{at}{}", p.path)), &p, out);
        }
    }
}

fn emit(path: &FieldPath, p: &AffinityProblem, out: &mut Emitter<'_>) {
    let todo = if p.message.contains("at least one node selector term") {
        "add a term, e.g. `{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows]}]}`, or remove requiredDuringSchedulingIgnoredDuringExecution"
    } else if p.path.ends_with(".weight") {
        "use a weight from 1 to 100"
    } else {
        "correct the expression; to pin Windows nodes write `{key: kubernetes.io/os, operator: In, values: [windows]}`"
    };
    let message = format!(
        "the API server rejects this node affinity: `{path}: {}: {}`; {todo}",
        p.kind.as_str(),
        p.message
    );
    out.emit(RuleId::NodeAffinityInvalid, path, message, None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{pod, rule_paths, run_template};

    const REQ: &str = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    const PREF: &str = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution";

    #[test]
    fn node_affinity_table() {
        // (nodeAffinity body, expected paths) — kubernetes-windows-rules.md §3.4 API validation.
        let cases: Vec<(&str, Vec<String>)> = vec![
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/os, operator: In, values: [windows]}]}]}",
                vec![],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}",
                vec![format!("{REQ}.nodeSelectorTerms")],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{}]}",
                vec![],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/os, operator: Exists, values: [windows]}]}]}",
                vec![format!(
                    "{REQ}.nodeSelectorTerms[0].matchExpressions[0].values"
                )],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: In, values: [x]}, {key: 'bad key', operator: In, values: [x]}]}]}",
                vec![format!(
                    "{REQ}.nodeSelectorTerms[0].matchExpressions[1].key"
                )],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [a, b]}]}]}",
                vec![format!("{REQ}.nodeSelectorTerms[0].matchFields[0].values")],
            ),
            (
                "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Gt, values: [x]}]}]}",
                vec![],
            ),
            (
                "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: a, operator: In, values: [x]}]}}]",
                vec![],
            ),
            (
                "preferredDuringSchedulingIgnoredDuringExecution: [{weight: 0, preference: {}}, {weight: 101, preference: {matchExpressions: [{key: a, operator: In}]}}]",
                vec![
                    format!("{PREF}[0].weight"),
                    format!("{PREF}[1].weight"),
                    format!("{PREF}[1].preference.matchExpressions[0].values"),
                ],
            ),
        ];
        for (na, want) in cases {
            let body =
                format!("  affinity:\n    nodeAffinity: {{{na}}}\n  containers: [{{name: c}}]\n");
            let got = rule_paths(&run_template(&pod(&body), None, check));
            let want: Vec<(String, String)> = want
                .into_iter()
                .map(|p| ("node-affinity-invalid".to_string(), p))
                .collect();
            assert_eq!(got, want, "{na}");
        }
    }

    #[test]
    fn message_quotes_upstream() {
        let body = "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}\n  containers: [{name: c}]\n";
        let f = run_template(&pod(body), None, check);
        assert!(
            f[0].message
                .contains("Required value: must have at least one node selector term"),
            "{}",
            f[0].message
        );
    }
}
