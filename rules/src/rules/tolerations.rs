//! API validation of tolerations (`ValidateTolerations`, kubernetes-windows-rules.md §3.1): `toleration-invalid`.

use k8s_openapi::api::core::v1::Toleration;

use super::{Emitter, RuleId, TemplateCx};
use crate::path::FieldPath;
use crate::schedule::ProblemKind;
use crate::schedule::go_quote;
use crate::schedule::taints::{Gates, validate_toleration};

/// Runs this family's rules on one pod template.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    if let Some(tolerations) = &cx.template.spec.tolerations {
        check_tolerations(tolerations, &cx.template.prefix.field("tolerations"), out);
    }
}

/// `toleration-invalid` for every problem of every toleration in `tolerations` (found at `base`: a pod's
/// `spec.tolerations` or a RuntimeClass's `scheduling.tolerations`), one finding per problem.
///
/// The comparison operators (`Lt`, `Gt`) are treated as their feature gate's default (off): winplace does
/// not know the cluster's gates.
pub(super) fn check_tolerations(
    tolerations: &[Toleration],
    base: &FieldPath,
    out: &mut Emitter<'_>,
) {
    for (i, t) in tolerations.iter().enumerate() {
        for problem in validate_toleration(t, Gates::default()) {
            let path = base.index(i).field(problem.field);
            let value = match problem.field {
                "key" => t.key.as_deref(),
                "operator" => t.operator.as_deref(),
                "value" => t.value.as_deref(),
                _ => t.effect.as_deref(),
            }
            .unwrap_or("");
            let shown = match problem.kind {
                ProblemKind::Invalid | ProblemKind::NotSupported => {
                    format!(
                        "{}: {}: {}",
                        problem.kind.as_str(),
                        go_quote(value),
                        problem.message
                    )
                }
                kind => format!("{}: {}", kind.as_str(), problem.message),
            };
            let todo = advice(&problem.message);
            let message =
                format!("the API server rejects this toleration: `{path}: {shown}`; {todo}");
            out.emit(RuleId::TolerationInvalid, &path, message, None);
        }
    }
}

/// What to do about one problem (docs/rules/toleration-invalid.md, "Fix").
fn advice(message: &str) -> &'static str {
    if message.starts_with("operator must be Exists when `key` is empty") {
        "give the key of the taint to tolerate (for the Windows taint `{key: os, operator: Equal, value: windows, effect: NoSchedule}`), or use operator: Exists without a value to tolerate every taint"
    } else if message.starts_with("value must be empty when `operator` is 'Exists'") {
        "remove the value (Exists matches every value of the key), or use operator: Equal to match only that value"
    } else if message.starts_with("effect must be 'NoExecute'") {
        "remove tolerationSeconds (it only bounds how long a pod stays on a node with a NoExecute taint), or use effect: NoExecute"
    } else {
        "correct the toleration; for the Windows taint write `{key: os, operator: Equal, value: windows, effect: NoSchedule}`"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::test_kit::{pod, rule_paths, run_template};

    #[test]
    fn toleration_problems_table() {
        // (toleration, expected sub-paths) — kubernetes-windows-rules.md §3.1 ValidateTolerations, one finding per problem.
        let cases: &[(&str, &[&str])] = &[
            (
                "{key: os, operator: Equal, value: windows, effect: NoSchedule}",
                &[],
            ),
            ("{key: os, operator: Exists}", &[]),
            ("{operator: Exists}", &[]),
            ("{key: os, value: windows}", &[]),
            (
                "{key: os, operator: Exists, effect: NoExecute, tolerationSeconds: 30}",
                &[],
            ),
            ("{operator: Equal, value: windows}", &["operator"]),
            ("{value: windows}", &["operator"]),
            ("{key: os, operator: Exists, value: windows}", &["operator"]),
            (
                "{key: os, operator: Equal, value: windows, effect: NoSchedule, tolerationSeconds: 30}",
                &["effect"],
            ),
            ("{key: 'bad key', operator: Exists}", &["key"]),
            (
                "{key: os, operator: Equal, value: 'not valid!'}",
                &["operator"],
            ),
            ("{key: os, operator: In, value: windows}", &["operator"]),
            ("{key: os, operator: Gt, value: '5'}", &["operator"]),
            ("{key: os, operator: Exists, effect: Never}", &["effect"]),
            // Several problems in one toleration: one finding each.
            (
                "{operator: Equal, value: w, effect: Never, tolerationSeconds: 1}",
                &["operator", "effect", "effect"],
            ),
        ];
        for (tol, want) in cases {
            let body = format!("  tolerations: [{tol}]\n  containers: [{{name: c}}]\n");
            let got = rule_paths(&run_template(&pod(&body), None, check));
            let want: Vec<(String, String)> = want
                .iter()
                .map(|f| {
                    (
                        "toleration-invalid".to_string(),
                        format!("spec.tolerations[0].{f}"),
                    )
                })
                .collect();
            assert_eq!(got, want, "{tol}");
        }
    }

    #[test]
    fn messages_quote_upstream() {
        let body = "  tolerations: [{key: os, operator: Equal, value: windows}, {operator: Equal, value: windows}]\n  containers: [{name: c}]\n";
        let findings = run_template(&pod(body), None, check);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].path, "spec.tolerations[1].operator");
        assert!(
            findings[0].message.contains(
                "`spec.tolerations[1].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"`"
            ),
            "{}",
            findings[0].message
        );
    }
}
