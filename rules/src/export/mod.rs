//! `winplace export`: the rules as admission policies the API server runs itself (docs/policy.md,
//! docs/reference/admission-policies.md).
//!
//! [`validating`] turns every exported rule ([`crate::rules::cel`], the CEL beside each family's Rust
//! check) into a `ValidatingAdmissionPolicy` and its `ValidatingAdmissionPolicyBinding`
//! (`admissionregistration.k8s.io/v1`); [`listing`] says, for every rule of the catalogue, whether it
//! is exported and, if not, why ([`crate::catalog::export`]). Pure: documents in, text out; the command
//! (`server/src/commands/export.rs`) writes them.
//!
//! ```
//! use winplace_rules::{Settings, export};
//! let docs = export::validating(&Settings::default(), export::Naming::Cluster);
//! assert!(docs.iter().any(|d| d.name == "winplace-windows-pod-without-os-selector"));
//! let yaml = export::to_yaml_stream(&docs);
//! assert!(yaml.contains("kind: \"ValidatingAdmissionPolicyBinding\""));
//! ```

pub mod yaml;

use serde_json::{Value, json};

use crate::catalog::{self, Export, RuleId};
use crate::finding::Severity;
use crate::placement::gate;
use crate::rules::cel;
use crate::settings::Settings;

/// The API group and version of the exported policies.
pub const API_VERSION: &str = "admissionregistration.k8s.io/v1";

/// How the exported objects are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Objects applied through the API: `winplace-<rule-id>`.
    Cluster,
    /// Files kube-apiserver loads at start from its static manifests directory (KEP-5793): names end
    /// in `.static.k8s.io`, `<rule-id>.winplace.static.k8s.io`.
    Static,
}

impl Naming {
    /// The name of rule `rule`'s policy (and of its binding).
    pub fn name(self, rule: RuleId) -> String {
        match self {
            Naming::Cluster => format!("winplace-{rule}"),
            Naming::Static => format!("{rule}.winplace.static.k8s.io"),
        }
    }
}

/// One exported object.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Its `metadata.name`.
    pub name: String,
    /// The rule it carries.
    pub rule: RuleId,
    /// The object.
    pub value: Value,
}

/// What [`listing`] says of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Exported, with the binding's `validationActions`.
    Exported(&'static str),
    /// Exportable, but the settings' `disabledRules` turn it off.
    Disabled,
    /// Not exported, and why.
    NotExported(&'static str),
}

/// Every rule of the catalogue with what `export` does with it under `settings`.
pub fn listing(settings: &Settings) -> Vec<(RuleId, Status)> {
    RuleId::ALL
        .into_iter()
        .map(|rule| {
            let status = match catalog::export(rule) {
                Export::No(why) => Status::NotExported(why.as_str()),
                Export::Yes if disabled(settings, rule) => Status::Disabled,
                Export::Yes => Status::Exported(action(severity(settings, rule))),
            };
            (rule, status)
        })
        .collect()
}

fn disabled(settings: &Settings, rule: RuleId) -> bool {
    settings.disabled_rules.iter().any(|r| r == rule.as_str())
}

/// The severity `winplace check` reports `rule` with under `settings` (without cluster context).
pub fn severity(settings: &Settings, rule: RuleId) -> Severity {
    let default = match rule {
        RuleId::WindowsPodWithoutBuildSelector if settings.require_build_selector => {
            Severity::Error
        }
        _ => catalog::meta(rule).severity,
    };
    settings
        .severity
        .get(rule.as_str())
        .copied()
        .unwrap_or(default)
}

/// The binding's `validationActions` for a severity: errors are denied, warnings returned to the client
/// as warnings, notes written to the audit log.
pub fn action(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "Deny",
        Severity::Warning => "Warn",
        Severity::Info => "Audit",
    }
}

/// The resources whose pod templates the rules check (`model::WorkloadKind`), as served today; for the
/// validating policies also the ephemeral containers a Pod gains through its `ephemeralcontainers`
/// subresource (`kubectl debug`), judged when they are added. The mutating policies never patch a Pod on
/// UPDATE, so they do not match that subresource.
fn resource_rules(validating: bool) -> Value {
    let ops = json!(["CREATE", "UPDATE"]);
    let mut rules = vec![
        json!({"apiGroups": [""], "apiVersions": ["v1"], "operations": ops, "resources": ["pods", "replicationcontrollers"]}),
        json!({"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ops, "resources": ["deployments", "replicasets", "statefulsets", "daemonsets"]}),
        json!({"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ops, "resources": ["jobs", "cronjobs"]}),
    ];
    if validating {
        rules.push(json!({"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods/ephemeralcontainers"]}));
    }
    Value::Array(rules)
}

/// `{name, expression}` objects, as `matchConditions` and `variables` both hold them.
fn named_expressions(pairs: impl IntoIterator<Item = (String, String)>) -> Vec<Value> {
    pairs
        .into_iter()
        .map(|(name, expression)| json!({"name": name, "expression": expression}))
        .collect()
}

/// The labels every exported policy and binding of `rule` carries.
fn rule_labels(rule: RuleId) -> Value {
    json!({
        "app.kubernetes.io/managed-by": "winplace",
        "winplace.io/rule": rule.as_str(),
    })
}

/// The matchConditions of every policy (`mutating`: a MutatingAdmissionPolicy): the object holds a pod
/// spec where its kind keeps it; its namespace is not exempt (settings `exemptNamespaces`); an UPDATE
/// changed the pod spec (an UPDATE that does not, a label, a finalizer, a scale, is not judged: Pod
/// Security Admission's `isSignificantPodUpdate`). A mutating policy also leaves alone an UPDATE of a Pod
/// (its spec is immutable but for a few fields) and of a Job (its template is immutable). With
/// `placementGate`, a validating policy skips a Pod winplace gated: it carries the gate and the label
/// [`gate::PLACEMENT_LABEL`] (policy.wasm judged it without the rules the controller answers).
pub fn match_conditions(settings: &Settings, mutating: bool) -> Vec<(String, String)> {
    let mut out = vec![("has-pod-spec".to_string(), cel::has_pod_spec())];
    if !settings.exempt_namespaces.is_empty() {
        out.push((
            "not-exempt-namespace".to_string(),
            format!(
                "!(request.namespace in {})",
                cel::image::str_list(settings.exempt_namespaces.iter().map(String::as_str))
            ),
        ));
    }
    out.push((
        "changes-the-pod-spec".to_string(),
        format!(
            "request.operation != 'UPDATE' || {} != {}",
            cel::pod_spec_of("object"),
            cel::pod_spec_of("oldObject")
        ),
    ));
    if mutating {
        out.push((
            "not-an-update-of-a-pod-or-job".to_string(),
            "request.operation != 'UPDATE' || !(object.kind in ['Pod', 'Job'])".to_string(),
        ));
    } else if settings.placement_gate {
        out.push((
            "not-a-gated-pod".to_string(),
            format!(
                "!(object.kind == 'Pod' && has(object.metadata.labels) && {label} in object.metadata.labels && object.metadata.labels[{label}] == {gated} && has(object.spec.schedulingGates) && object.spec.schedulingGates.exists(g, g.name == {gate}))",
                label = cel::image::lit(gate::PLACEMENT_LABEL),
                gated = cel::image::lit(gate::PLACEMENT_LABEL_GATED),
                gate = cel::image::lit(gate::PLACEMENT_GATE),
            ),
        ));
    }
    out
}

/// Every shared variable and its twin over `oldObject` ([`cel::old_variables`]), in one list: the new
/// ones first, in order, then the old ones, in order (a twin reads only twins before it).
pub fn all_variables(settings: &Settings) -> Vec<(String, String)> {
    let all = cel::variables(settings);
    let mut out: Vec<(String, String)> = all
        .iter()
        .map(|v| (v.name.to_string(), v.expression.clone()))
        .collect();
    out.extend(cel::old_variables(&all));
    out
}

/// Whether rule `rule` is deferred on a pod whose placement is left to the controller (settings
/// `placementGate`): [`gate::DEFERRED_RULES`].
fn deferred(settings: &Settings, rule: RuleId) -> bool {
    settings.placement_gate && gate::DEFERRED_RULES.contains(&rule.as_str())
}

/// A rule's firing condition as a policy judges it: on CREATE as written; on UPDATE only when the object
/// before it did not already fire (policy.wasm's rule, `policy-wasm/src/admission/review.rs`); with
/// `placementGate`, a deferred rule not on a workload whose pods will be gated (they are judged when
/// created, and pinned by the controller).
pub fn judged(settings: &Settings, rule: RuleId, fires: &str) -> String {
    let mut out = format!(
        "({fires}) && !(request.operation == 'UPDATE' && ({}))",
        cel::on_old_object(fires)
    );
    if deferred(settings, rule) {
        out = format!("!(object.kind != 'Pod' && variables.gateOpen) && {out}");
    }
    out
}

/// The variables an expression needs: the ones it names and, transitively, the ones they name, in the
/// order of `all` ([`all_variables`]).
pub fn variables_for(all: &[(String, String)], expression: &str) -> Vec<(String, String)> {
    let mut needed: Vec<bool> = all.iter().map(|(n, _)| names(expression, n)).collect();
    for i in (0..all.len()).rev() {
        if !needed[i] {
            continue;
        }
        for j in 0..i {
            if names(&all[i].1, &all[j].0) {
                needed[j] = true;
            }
        }
    }
    all.iter()
        .zip(needed)
        .filter(|(_, n)| *n)
        .map(|(v, _)| v.clone())
        .collect()
}

/// Whether `expression` reads `variables.<name>` (and not a longer name).
fn names(expression: &str, name: &str) -> bool {
    let needle = format!("variables.{name}");
    expression.match_indices(&needle).any(|(at, _)| {
        expression[at + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'))
    })
}

/// The message of a rule's validation: its title and summary, and where its page is.
pub fn message(rule: RuleId) -> String {
    let meta = catalog::meta(rule);
    format!(
        "winplace {}: {}. {} See {}",
        meta.id,
        meta.title,
        meta.summary,
        catalog::doc_url(meta.id)
    )
}

/// A rule's validation: not firing; its message, and the finding's own words from the object where the
/// rule's CEL has them (`messageExpression`: "If messageExpression results in a runtime error, the
/// runtime error is logged, and the validation failure message is produced as if the messageExpression
/// field were unset", the Validation field docs of `admissionregistration.k8s.io/v1`).
fn validation(settings: &Settings, rule: &cel::RuleCel) -> Value {
    let mut out = json!({
        "expression": format!("!({})", judged(settings, rule.rule, &rule.fires)),
        "message": message(rule.rule),
        "reason": "Invalid",
    });
    if let Some(body) = &rule.message {
        out["messageExpression"] = json!(message_expression(rule.rule, body));
    }
    out
}

/// The `messageExpression` of a rule whose message CEL is `body`: `winplace <id>: <body> See <page>`,
/// the same frame as [`message`].
pub fn message_expression(rule: RuleId, body: &str) -> String {
    format!(
        "{} + ({body}) + {}",
        cel::image::lit(&format!("winplace {rule}: ")),
        cel::image::lit(&format!(" See {}", catalog::doc_url(rule.as_str())))
    )
}

/// The ValidatingAdmissionPolicy and its binding for every exported rule that `settings` do not
/// disable, in catalogue order (policy, then binding).
pub fn validating(settings: &Settings, naming: Naming) -> Vec<Document> {
    let all = all_variables(settings);
    let conditions = named_expressions(match_conditions(settings, false));
    let mut out = Vec::new();
    for rule in cel::rules(settings) {
        if disabled(settings, rule.rule) {
            continue;
        }
        let name = naming.name(rule.rule);
        let validation = validation(settings, &rule);
        let reads = format!(
            "{} {}",
            validation["expression"].as_str().unwrap_or_default(),
            rule.message.as_deref().unwrap_or_default()
        );
        let variables = named_expressions(variables_for(&all, &reads));
        let labels = rule_labels(rule.rule);
        let policy = json!({
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {
                "name": name,
                "labels": labels,
                "annotations": {"winplace.io/documentation": catalog::doc_url(rule.rule.as_str())},
            },
            "spec": {
                "failurePolicy": "Ignore",
                "matchConstraints": {"resourceRules": resource_rules(true)},
                "matchConditions": conditions,
                "variables": variables,
                "validations": [validation],
            },
        });
        let binding = json!({
            "apiVersion": API_VERSION,
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name, "labels": labels},
            "spec": {
                "policyName": name,
                "validationActions": [action(severity(settings, rule.rule))],
            },
        });
        out.push(Document {
            name: name.clone(),
            rule: rule.rule,
            value: policy,
        });
        out.push(Document {
            name,
            rule: rule.rule,
            value: binding,
        });
    }
    out
}

/// The MutatingAdmissionPolicy and its binding for every exported fix ([`cel::fixes`]) whose rule
/// `settings` do not disable: JSONPatch mutations, reinvoked when another plugin changed the object
/// (`reinvocationPolicy: IfNeeded`), so that a fix another mutation makes necessary is still applied.
pub fn mutating(settings: &Settings, naming: Naming) -> Vec<Document> {
    let all = all_variables(settings);
    let conditions = named_expressions(match_conditions(settings, true));
    let rules = cel::rules(settings);
    let mut out = Vec::new();
    for fix in cel::fixes(settings) {
        if disabled(settings, fix.rule) {
            continue;
        }
        let name = naming.name(fix.rule);
        let patches = patches(settings, &rules, &fix);
        let variables = named_expressions(variables_for(&all, &patches));
        let labels = rule_labels(fix.rule);
        out.push(Document {
            name: name.clone(),
            rule: fix.rule,
            value: json!({
                "apiVersion": API_VERSION,
                "kind": "MutatingAdmissionPolicy",
                "metadata": {
                    "name": name,
                    "labels": labels,
                    "annotations": {"winplace.io/documentation": catalog::doc_url(fix.rule.as_str())},
                },
                "spec": {
                    "failurePolicy": "Ignore",
                    "reinvocationPolicy": "IfNeeded",
                    "matchConstraints": {"resourceRules": resource_rules(false)},
                    "matchConditions": conditions,
                    "variables": variables,
                    "mutations": [{
                        "patchType": "JSONPatch",
                        "jsonPatch": {"expression": patches},
                    }],
                },
            }),
        });
        out.push(Document {
            name: name.clone(),
            rule: fix.rule,
            value: json!({
                "apiVersion": API_VERSION,
                "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": name, "labels": labels},
                "spec": {"policyName": name},
            }),
        });
    }
    out
}

/// A fix's JSONPatch expression as its policy applies it: nothing on an UPDATE whose object already had the
/// rule's finding (only what the update introduces is repaired, as policy.wasm repairs it); with
/// `placementGate`, nothing for a deferred rule where the pod will be gated (or its template's pods will
/// be): the controller pins it from its images' manifests, never a presumed OS.
fn patches(settings: &Settings, rules: &[cel::RuleCel], fix: &cel::FixCel) -> String {
    let old = rules
        .iter()
        .find(|r| r.rule == fix.rule)
        .map(|r| cel::on_old_object(&r.fires))
        .unwrap_or_else(|| "false".to_string());
    let mut skip = format!("(request.operation == 'UPDATE' && ({old}))");
    if deferred(settings, fix.rule) {
        skip = format!("variables.gateOpen || {skip}");
    }
    format!("{skip} ? [] : ({})", fix.patches)
}

/// The documents as one multi-document YAML stream, each after `---`.
pub fn to_yaml_stream(documents: &[Document]) -> String {
    let mut out =
        String::from("# Generated by `winplace export`: do not edit; regenerate instead.\n");
    for d in documents {
        out.push_str("---\n");
        out.push_str(&yaml::to_yaml(&d.value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalogue's answer, the CEL tables and the generator agree on which rules are exported.
    #[test]
    fn the_catalogue_says_what_is_exported() {
        let settings = Settings::default();
        let from_cel: Vec<RuleId> = cel::rules(&settings).iter().map(|r| r.rule).collect();
        let mut listed: Vec<RuleId> = cel::EXPORTED.to_vec();
        listed.sort();
        assert_eq!(from_cel, listed);
        for rule in RuleId::ALL {
            assert_eq!(
                catalog::export(rule) == Export::Yes,
                listed.contains(&rule),
                "{rule}"
            );
        }
        let docs = validating(&settings, Naming::Cluster);
        assert_eq!(docs.len(), 2 * listed.len());
        for (rule, status) in listing(&settings) {
            match status {
                Status::Exported(action) => {
                    assert!(listed.contains(&rule));
                    assert_eq!(action, super::action(catalog::meta(rule).severity));
                }
                Status::NotExported(why) => assert!(!why.is_empty() && !listed.contains(&rule)),
                Status::Disabled => panic!("{rule} disabled by default"),
            }
        }
    }

    #[test]
    fn settings_choose_the_actions_and_the_policies() {
        let settings = Settings {
            disabled_rules: vec!["os-conflict".into()],
            require_build_selector: true,
            severity: [("deprecated-os-label".to_string(), Severity::Error)].into(),
            exempt_namespaces: vec!["kube-system".into()],
            ..Settings::default()
        };
        let docs = validating(&settings, Naming::Static);
        assert!(!docs.iter().any(|d| d.rule == RuleId::OsConflict));
        let action_of = |rule: RuleId| {
            docs.iter()
                .find(|d| d.rule == rule && d.value["kind"] == "ValidatingAdmissionPolicyBinding")
                .map(|d| d.value["spec"]["validationActions"][0].clone())
        };
        assert_eq!(
            action_of(RuleId::WindowsPodWithoutBuildSelector),
            Some("Deny".into())
        );
        assert_eq!(action_of(RuleId::DeprecatedOsLabel), Some("Deny".into()));
        assert_eq!(
            action_of(RuleId::LinuxPodWithoutOsSelector),
            Some("Warn".into())
        );
        let policy = &docs[0].value;
        assert_eq!(
            policy["metadata"]["name"],
            format!("{}.winplace.static.k8s.io", docs[0].rule)
        );
        assert_eq!(
            policy["spec"]["matchConditions"][1]["expression"],
            "!(request.namespace in ['kube-system'])"
        );
        assert_eq!(
            listing(&settings)
                .into_iter()
                .find(|(r, _)| *r == RuleId::OsConflict)
                .map(|(_, s)| s),
            Some(Status::Disabled)
        );
    }

    #[test]
    fn a_policy_carries_only_the_variables_it_reads_in_order() {
        let pair = |n: &str, e: &str| (n.to_string(), e.to_string());
        let all = vec![
            pair("a", "1"),
            pair("ab", "variables.a + 1"),
            pair("c", "2"),
            pair("d", "variables.ab"),
        ];
        let names: Vec<String> = variables_for(&all, "variables.d > 0")
            .into_iter()
            .map(|v| v.0)
            .collect();
        assert_eq!(names, ["a", "ab", "d"]);
        assert!(variables_for(&all, "variables.abc").is_empty());
    }

    #[test]
    fn exact_pinning_and_runtime_classes_are_exported() {
        let exact = Settings {
            build_pinning: crate::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let patch = |docs: &[Document]| {
            docs.iter()
                .find(|d| d.rule == RuleId::WindowsPodWithoutBuildSelector)
                .and_then(|d| d.value["spec"]["mutations"][0]["jsonPatch"]["expression"].as_str())
                .unwrap_or_default()
                .to_string()
        };
        let docs = mutating(&exact, Naming::Cluster);
        assert_eq!(docs.len(), 8);
        let build = patch(&docs);
        assert!(
            build.contains("/nodeSelector/node.kubernetes.io~1windows-build"),
            "{build}"
        );
        assert!(!build.contains("nodeAffinity"), "{build}");
        assert!(!build.contains("runtimeClassName"), "{build}");
        let classes = Settings {
            runtime_classes: [("10.0.20348".to_string(), "windows-2022".to_string())].into(),
            ..exact
        };
        let build = patch(&mutating(&classes, Naming::Cluster));
        assert!(build.contains("'/runtimeClassName'"), "{build}");
        assert!(build.contains("'windows-2022'"), "{build}");
        let docs = mutating(&Settings::default(), Naming::Cluster);
        assert!(
            docs.iter()
                .all(|d| d.value["spec"].get("paramKind").is_none())
        );
        assert_eq!(docs.len(), 8);
    }
}
