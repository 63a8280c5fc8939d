//! The rules themselves: one file per rule family, all reading the same effective placement.
//!
//! [`crate::Checker`] is the way in: per document (or object) it runs `evaluate_prepared`, which walks the
//! objects: Nodes and RuntimeClasses get the object rules, workloads get their pod template resolved once
//! ([`crate::placement::resolve`]) and every template family run over it.
//!
//! Rules name themselves by [`RuleId`] when they emit a finding, so a misspelt id does not compile; the
//! finding carries the id's string ([`RuleId::as_str`]). The ids and their metadata live in [`crate::catalog`].

// Template rules: fed by the effective placement.
mod cluster;
mod declared_features;
mod linux_pods;
mod os_identity;
mod runtimeclass_use;
mod windows_pods;
// Template rules: what the API server validates, and what Windows nodes cannot do.
mod api_validation;
mod api_versions;
mod node_affinity;
mod security_context;
mod tolerations;
mod unknown_fields;
// What a registry client handed in.
mod image_facts;
// What a checked file held (`not-checked`).
pub(crate) mod coverage;
// Object rules.
pub(crate) mod nodes;
mod runtimeclass_objects;
// Node pools of infrastructure files, and the node rules on their Nodes.
pub(crate) mod node_pools;
// Live state (the server's audit of running pods).
pub(crate) mod live_state;
// The exportable rules in CEL (`winplace export`).
pub mod cel;
// The tests' kit.
#[cfg(test)]
pub(crate) mod test_kit;

use crate::finding::{Finding, Fix, Severity};
use crate::model::{self, ClusterContext, Object, PodTemplate};
use crate::path::FieldPath;
use crate::placement::{NodeIndex, Placement, PreparedCluster};
use crate::settings::Settings;
use std::borrow::Cow;

use crate::catalog::{self, RuleId};
pub(crate) use image_facts::add_images_to_resolve;
pub use image_facts::{ImageFacts, images_to_resolve};
pub(crate) use image_facts::{check_unresolved, check_unresolved_object};

/// What a template rule sees: the object, its pod template, the resolved placement, the context.
pub(crate) struct TemplateCx<'a> {
    /// The workload.
    pub object: &'a Object,
    /// Its pod template (path prefix, typed spec, raw spec).
    pub template: &'a PodTemplate<'a>,
    /// Effective placement of the template.
    pub placement: &'a Placement,
    /// The cluster, when known (given context plus the Nodes and RuntimeClasses of the input).
    pub context: Option<&'a ClusterContext>,
    /// Settings.
    pub settings: &'a Settings,
    /// The context's nodes, indexed once per evaluation (`None` without nodes).
    pub nodes: Option<&'a NodeIndex>,
}

impl TemplateCx<'_> {
    /// The nodes the pod's required node affinity names, when every term pins it by name (`matchFields`
    /// `metadata.name In [...]`): how the DaemonSet controller pins each pod it creates to its node
    /// (`ReplaceDaemonSetPodNodeNameNodeAffinity`, `rules/src/audit/owner.rs`). `None` when a term does not.
    pub(crate) fn pinned_node_names(&self) -> Option<Vec<String>> {
        let terms = &self
            .template
            .spec
            .affinity
            .as_ref()?
            .node_affinity
            .as_ref()?
            .required_during_scheduling_ignored_during_execution
            .as_ref()?
            .node_selector_terms;
        if terms.is_empty() {
            return None;
        }
        let mut names = Vec::new();
        for term in terms {
            let by_name: Vec<_> = term
                .match_fields
                .iter()
                .flatten()
                .filter(|f| f.key == "metadata.name" && f.operator == "In")
                .collect();
            if by_name.is_empty() {
                return None;
            }
            names.extend(
                by_name
                    .iter()
                    .flat_map(|f| f.values.iter().flatten().cloned()),
            );
        }
        Some(names)
    }

    /// The pod is pinned by name to nodes this evaluation cannot see (no cluster context): a DaemonSet's
    /// pod, placed by its controller on a node it chose by the template's selectors and tolerations. Only
    /// the context says whether that node is Windows or Linux, so the rules that judge where a pod may
    /// land leave it to the template (judged on the DaemonSet) and to the context (`schedulable-on-wrong-os`).
    pub(crate) fn pinned_to_unseen_nodes(&self) -> bool {
        self.nodes.is_none() && self.pinned_node_names().is_some()
    }
}

/// What an object rule (Node, RuntimeClass) sees.
pub(crate) struct ObjectCx<'a> {
    /// The object.
    pub object: &'a Object,
    /// Settings.
    pub settings: &'a Settings,
}

/// Evaluates every rule on every object against a prepared cluster, appending the findings (unsorted):
/// what [`crate::Checker`] runs on each document of a text, and on an object.
///
/// Nodes and RuntimeClasses among the objects must already be in `cluster` ([`merged_context`]): a
/// RuntimeClass applied together with the workload that names it is the one the workload gets.
pub(crate) fn evaluate_prepared(
    objects: &[Object],
    cluster: PreparedCluster<'_>,
    settings: &Settings,
    findings: &mut Vec<Finding>,
) {
    for object in objects {
        if settings.exempts(object.namespace.as_deref()) {
            continue;
        }
        let mut out = Emitter::new(object, settings, findings);
        run_object_rules(object, settings, &mut out);
        match model::pod_template(object) {
            None => {}
            Some(Err(error)) => out.emit(
                RuleId::ManifestInvalid,
                &error.path,
                invalid_message(&error.message),
                None,
            ),
            Some(Ok(template)) => {
                run_template_families(object, &template, cluster, settings, &mut out);
            }
        }
    }
}

/// Runs every template family on one workload's pod template against a prepared cluster, and returns the
/// resolved placement.
///
/// For the audit: the [`crate::placement::Resolver`] and the [`NodeIndex`] are built once per change of the cluster and
/// shared by every distinct pod template; `object` must hold the template at `template.prefix` (the rules
/// read the raw object too). Exempt namespaces are the caller's business.
pub(crate) fn evaluate_template(
    object: &Object,
    template: &PodTemplate<'_>,
    cluster: PreparedCluster<'_>,
    settings: &Settings,
    findings: &mut Vec<Finding>,
) -> Placement {
    let mut out = Emitter::new(object, settings, findings);
    run_template_families(object, template, cluster, settings, &mut out)
}

/// Resolves `template`'s placement and runs every template family on it; returns the placement.
fn run_template_families(
    object: &Object,
    template: &PodTemplate<'_>,
    cluster: PreparedCluster<'_>,
    settings: &Settings,
    out: &mut Emitter<'_>,
) -> Placement {
    let placement = cluster.resolver.resolve(template);
    let cx = TemplateCx {
        object,
        template,
        placement: &placement,
        context: cluster.context,
        settings,
        nodes: cluster.nodes,
    };
    for family in TEMPLATE_FAMILIES {
        family(&cx, out);
    }
    placement
}

/// Runs the object rules (Node, RuntimeClass) on one object: the audit's node rules.
pub(crate) fn evaluate_object(object: &Object, settings: &Settings, findings: &mut Vec<Finding>) {
    run_object_rules(
        object,
        settings,
        &mut Emitter::new(object, settings, findings),
    );
}

/// The object rules: Node and RuntimeClass hygiene (each returns at once on other kinds).
fn run_object_rules(object: &Object, settings: &Settings, out: &mut Emitter<'_>) {
    let cx = ObjectCx { object, settings };
    nodes::check(&cx, out);
    runtimeclass_objects::check(&cx, out);
}

type TemplateFamily = fn(&TemplateCx<'_>, &mut Emitter<'_>);

/// Every template family, in report order.
const TEMPLATE_FAMILIES: &[TemplateFamily] = &[
    os_identity::check,
    windows_pods::check,
    declared_features::check,
    linux_pods::check,
    runtimeclass_use::check,
    cluster::check,
    api_validation::check,
    api_versions::check,
    security_context::check,
    tolerations::check,
    node_affinity::check,
    unknown_fields::check,
];

/// The workloads among `objects` that the rules check (outside `exemptNamespaces`), with their pod
/// templates; objects whose template cannot be read are left out (`manifest-invalid` reports them).
pub(crate) fn checked_templates<'a, 's>(
    objects: impl IntoIterator<Item = &'a Object>,
    settings: &'s Settings,
) -> impl Iterator<Item = (&'a Object, PodTemplate<'a>)> {
    objects
        .into_iter()
        .filter(|o| !settings.exempts(o.namespace.as_deref()))
        .filter_map(|o| Some((o, model::pod_template(o)?.ok()?)))
}

/// The given context plus the Nodes and RuntimeClasses of the input; `None` when there are none.
///
/// Borrowed when the input adds nothing: an admission request's context holds every node of the cluster.
pub(crate) fn merged_context<'a>(
    objects: &[Object],
    given: Option<&'a ClusterContext>,
) -> Option<Cow<'a, ClusterContext>> {
    let (from_input, _errors) = ClusterContext::from_objects(objects);
    let adds_nothing = from_input.nodes.is_empty() && from_input.runtime_classes.is_empty();
    match given {
        None if adds_nothing => None,
        None => Some(Cow::Owned(from_input)),
        Some(given) if adds_nothing => Some(Cow::Borrowed(given)),
        Some(given) => {
            let mut merged = given.clone();
            merged.nodes.extend(from_input.nodes);
            merged.runtime_classes.extend(from_input.runtime_classes);
            Some(Cow::Owned(merged))
        }
    }
}

/// Collects findings for one object, filling in what every finding shares and applying the settings'
/// `disabledRules` and `severity` overrides.
pub(crate) struct Emitter<'a> {
    object: &'a Object,
    settings: &'a Settings,
    findings: &'a mut Vec<Finding>,
}

/// The `manifest-invalid` message for a field the object's type cannot hold: the decoder's words, that the
/// API server rejects it, and, for a boolean or number where a string belongs, how it got there (kubectl
/// reads YAML 1.1: an unquoted `yes`, `on` or `y` is `true`, docs/reference/yaml-kubectl.md).
pub(crate) fn invalid_message(error: &str) -> String {
    let unquoted = error.contains("expected a string")
        && [
            "invalid type: boolean",
            "invalid type: integer",
            "invalid type: floating point",
        ]
        .iter()
        .any(|t| error.contains(t));
    let quoted = error.contains("invalid type: string")
        && [
            "expected a boolean",
            "expected i32",
            "expected i64",
            "expected u32",
            "expected u64",
            "expected f64",
        ]
        .iter()
        .any(|t| error.contains(t));
    if unquoted {
        format!(
            "{error}; the API server rejects this object: kubectl reads an unquoted true, yes, on or y (false, no, off, n) as a boolean and a bare number as a number, so quote the value to make it a string"
        )
    } else if quoted {
        format!(
            "{error}; the API server rejects this object: a quoted value is a string, so write the boolean or number without quotes"
        )
    } else {
        format!("{error}; the API server rejects this object")
    }
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(
        object: &'a Object,
        settings: &'a Settings,
        findings: &'a mut Vec<Finding>,
    ) -> Self {
        Emitter {
            object,
            settings,
            findings,
        }
    }

    /// Records a finding of `rule` at `path` with the rule's default severity.
    pub(crate) fn emit(
        &mut self,
        rule: RuleId,
        path: &FieldPath,
        message: String,
        fix: Option<Fix>,
    ) {
        self.emit_as(rule, catalog::meta(rule).severity, path, message, fix);
    }

    /// Records a finding of `rule` with a severity the rule chose (settings' overrides still win).
    pub(crate) fn emit_as(
        &mut self,
        rule: RuleId,
        severity: Severity,
        path: &FieldPath,
        message: String,
        fix: Option<Fix>,
    ) {
        let rule = rule.as_str();
        if self.settings.disabled_rules.iter().any(|r| r == rule) {
            return;
        }
        let severity = self
            .settings
            .severity
            .get(rule)
            .copied()
            .unwrap_or(severity);
        self.findings.push(Finding {
            rule: rule.to_string(),
            severity,
            object: self.object.object_ref(),
            file: Some(self.object.file.clone()).filter(|f| !f.is_empty()),
            line: self.object.line_of(path),
            path: path.to_string(),
            message: sentence(message),
            fix,
        });
    }
}

/// A finding's message in the catalogue's one voice: a sentence, starting with a capital letter and
/// ending with a full stop, whichever family wrote it. A message starting with a field path or a quoted
/// value (`spec.os`, `` `docker` ``) keeps its first word as written.
///
/// ```ignore
/// assert_eq!(sentence("the API server rejects this pod".into()), "The API server rejects this pod.");
/// ```
fn sentence(message: String) -> String {
    let mut out = message;
    out.truncate(out.trim_end().len());
    let first_word = out.split(' ').next().unwrap_or("");
    if !first_word.is_empty() && first_word.bytes().all(|b| b.is_ascii_lowercase()) {
        out[..1].make_ascii_uppercase();
    }
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

#[cfg(test)]
mod voice_tests {
    use super::sentence;

    #[test]
    fn messages_are_sentences() {
        let rows = [
            (
                "the API server rejects this pod",
                "The API server rejects this pod.",
            ),
            ("This pod needs Linux.", "This pod needs Linux."),
            ("spec.os is set", "spec.os is set."),
            ("`docker` is gone", "`docker` is gone."),
            ("remove it (see §8)", "Remove it (see §8)."),
            ("why not? ", "Why not?"),
        ];
        for (given, want) in rows {
            assert_eq!(sentence(given.into()), want);
        }
    }
}
