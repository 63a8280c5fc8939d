//! The test kit every rule family's tests use (and the placement tests): build objects and contexts from
//! YAML, run one family or the whole check, and read the findings back as `(rule, path)` rows.
//!
//! One kit, so that a family's tests read as tables of YAML and expected rows, and a change in how rules are
//! run (the [`Emitter`], the contexts) is made once.

use super::{Emitter, ObjectCx, TemplateCx};
use crate::finding::{Finding, Fix};
use crate::input::{Limits, parse};
use crate::model::{self, ClusterContext, Object};
use crate::placement::{Placement, PodOs, resolve};
use crate::settings::Settings;
use crate::windows::Os;

/// A case of a family's table: what it checks (a reference), the YAML (a pod spec or a whole manifest, as
/// the test reads it) and the (rule, path) of the findings it gets.
pub(crate) struct Case<'a> {
    pub reference: &'a str,
    pub yaml: String,
    pub want: Vec<(String, String)>,
}

/// The objects of a YAML text, which must parse without errors.
pub(crate) fn objects(text: &str) -> Vec<Object> {
    let parsed = parse("t.yaml", text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    model::objects(&parsed.documents)
}

/// The first object of a YAML text.
pub(crate) fn object(text: &str) -> Object {
    objects(text).remove(0)
}

/// A cluster context from a YAML text of Nodes and RuntimeClasses.
pub(crate) fn context(text: &str) -> ClusterContext {
    let (ctx, errors) = ClusterContext::from_objects(&objects(text));
    assert!(errors.is_empty(), "{errors:?}");
    ctx
}

/// A pod (kind Pod) with the given spec body (YAML, indented by two spaces under `spec:`).
pub(crate) fn pod(spec: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{spec}")
}

/// The placement of the first object of `text`, which must be a valid workload.
pub(crate) fn placement(
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Placement {
    let objects = objects(text);
    let template = match model::pod_template(&objects[0]) {
        Some(Ok(t)) => t,
        other => panic!("not a workload: {other:?}"),
    };
    resolve(&template, context, settings)
}

/// Runs one template family on the first object of `text` with a placement whose OS is `os`
/// (`None`: the OS `spec.os.name` declares, else `Any`). Inferred-Windows behaviour depends on the
/// placement resolver; these tests set the resolved OS directly.
pub(crate) fn run_template(
    text: &str,
    os: Option<PodOs>,
    family: fn(&TemplateCx<'_>, &mut Emitter<'_>),
) -> Vec<Finding> {
    let obj = object(text);
    let template = match model::pod_template(&obj) {
        Some(Ok(t)) => t,
        other => panic!("not a valid workload: {other:?}"),
    };
    let declared_os = match template.spec.os.as_ref().map(|o| o.name.as_str()) {
        Some("windows") => Some(Os::Windows),
        Some("linux") => Some(Os::Linux),
        _ => None,
    };
    let resolved = os.unwrap_or(match declared_os {
        Some(Os::Windows) => PodOs::Windows,
        Some(Os::Linux) => PodOs::Linux,
        None => PodOs::Any,
    });
    let settings = Settings::default();
    // The real resolver, with the OS forced: these tests are about the family, not inference.
    let mut placement = resolve(&template, None, &settings);
    placement.os = resolved;
    placement.declared_os = declared_os;
    let mut findings = Vec::new();
    let mut out = Emitter::new(&obj, &settings, &mut findings);
    let cx = TemplateCx {
        object: &obj,
        template: &template,
        placement: &placement,
        context: None,
        settings: &settings,
        nodes: None,
    };
    family(&cx, &mut out);
    findings
}

/// Runs one object family on the first object of `text`.
pub(crate) fn run_object(
    text: &str,
    settings: &Settings,
    family: fn(&ObjectCx<'_>, &mut Emitter<'_>),
) -> Vec<Finding> {
    let obj = object(text);
    let mut findings = Vec::new();
    let mut out = Emitter::new(&obj, settings, &mut findings);
    let cx = ObjectCx {
        object: &obj,
        settings,
    };
    family(&cx, &mut out);
    findings
}

/// The findings of `rules` (error, warning and info) of the whole check of `text`, in report order.
pub(crate) fn findings(
    text: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
    rules: &[&str],
) -> Vec<Finding> {
    crate::Checker::builder()
        .settings(settings)
        .cluster(context)
        .build()
        .report("t.yaml", text)
        .findings
        .into_iter()
        .filter(|f| rules.contains(&f.rule.as_str()))
        .collect()
}

/// `(rule, path)` of each finding, in the order the family emitted them.
pub(crate) fn rule_paths(findings: &[Finding]) -> Vec<(String, String)> {
    findings
        .iter()
        .map(|f| (f.rule.clone(), f.path.clone()))
        .collect()
}

/// `(rule, path)` of each finding, sorted: for the whole check, whose report order (by line) is not what
/// the tests are about.
pub(crate) fn sorted_rule_paths(findings: &[Finding]) -> Vec<(String, String)> {
    let mut rows = rule_paths(findings);
    rows.sort();
    rows
}

/// One expected `(rule, path)` row.
pub(crate) fn rule_path(rule: &str, path: &str) -> (String, String) {
    (rule.to_string(), path.to_string())
}

/// Applies a fix to `value` (RFC 6902), panicking on a patch that does not apply.
pub(crate) fn apply(value: &mut serde_json::Value, fix: &Fix) {
    let patch: json_patch::Patch = serde_json::from_str(fix.patch.as_json()).expect("a patch");
    json_patch::patch(value, &patch).expect("the patch applies");
}
