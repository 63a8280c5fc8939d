//! One finding: severity, rule (linked to its documentation), field path, message, and the fix as YAML.

use super::copy::CopyButton;
use super::{SeverityBadge, yaml};
use leptos::prelude::*;
use winplace_rules::Finding;
use winplace_rules::catalog;

/// The fix's JSON patch operations as YAML text.
pub fn patch_yaml(finding: &Finding) -> Option<String> {
    let fix = finding.fix.as_ref()?;
    Some(yaml::to_yaml(&serde_json::Value::Array(fix.patch.ops())))
}

/// A finding as a list item.
#[component]
pub fn FindingItem(finding: Finding) -> impl IntoView {
    let title = catalog::rule(&finding.rule).map(|m| m.title).unwrap_or("");
    let doc = catalog::doc_url(&finding.rule);
    let fix = finding.fix.as_ref().map(|fix| {
        let text = patch_yaml(&finding).unwrap_or_default();
        let label = format!("Copy the fix for {} as YAML", finding.rule);
        view! {
            <div class="fix">
                <p class="fix-description">"Fix: "{fix.description.clone()}</p>
                <pre
                    class="yaml"
                    tabindex="0"
                    aria-label=format!("JSON patch for {}, as YAML", finding.rule)
                >
                    {text.clone()}
                </pre>
                <CopyButton text label />
            </div>
        }
    });
    let rule = finding.rule.clone();
    view! {
        <li class="finding" data-rule=rule.clone() data-severity=finding.severity.as_str()>
            <div class="finding-head">
                <SeverityBadge severity=finding.severity />
                <a class="rule-link" href=doc target="_blank" rel="noopener" title=title>
                    <code>{rule.clone()}</code>
                </a>
                <span class="object">{finding.object.display_name()}</span>
                {(!finding.path.is_empty())
                    .then(|| view! { <code class="path">{finding.path.clone()}</code> })}
            </div>
            <p class="message">{finding.message.clone()}</p>
            {fix}
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::{Fix, ObjectRef, Severity};

    #[test]
    fn the_patch_renders_as_a_yaml_list_of_operations() {
        let finding = Finding {
            rule: "windows-pod-without-os-selector".into(),
            severity: Severity::Error,
            object: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some("shop".into()),
                name: "web".into(),
            },
            file: None,
            line: None,
            path: "spec.template.spec.nodeSelector".into(),
            message: "m".into(),
            fix: Some(Fix {
                description: "pin to Windows".into(),
                patch: vec![serde_json::json!({
                    "op": "add",
                    "path": "/spec/template/spec/nodeSelector",
                    "value": {"kubernetes.io/os": "windows"}
                })]
                .into(),
            }),
        };
        assert_eq!(
            patch_yaml(&finding).as_deref(),
            Some(
                "- op: add\n  path: /spec/template/spec/nodeSelector\n  value:\n    kubernetes.io/os: windows\n"
            )
        );
        let without = Finding {
            fix: None,
            ..finding
        };
        assert_eq!(patch_yaml(&without), None);
    }
}
