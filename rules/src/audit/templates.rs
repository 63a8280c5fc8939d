//! The catalogue on pod templates: each template's workload object (a representative pod's spec under its
//! owner), evaluated against the class context unless its selectors read single nodes.

use std::sync::Arc;

use serde_json::Value;

use super::classes::reads_single_nodes;
use super::owner::Owner;
use super::{Audit, Dirty, share_findings, sort_findings};
use crate::finding::Severity;
use crate::input::LineMap;
use crate::model::{Object, WorkloadKind, pod_template};
use crate::placement::container_images;
use crate::placement::{PreparedCluster, Resolver};
use crate::rules::live_state;
use crate::rules::{check_unresolved_object, evaluate_template};

/// The workload object that carries `spec` (a pod spec's JSON tree) as its pod template (a Pod for bare
/// pods and custom owners).
pub(super) fn template_object(owner: &Owner, pod_name: &str, spec_value: Value) -> Option<Object> {
    let ns = owner.object.namespace.clone().unwrap_or_default();
    let (api_version, kind, name, prefix) = match owner.kind {
        Some(k) if k != WorkloadKind::Pod => (
            owner.object.api_version.as_str(),
            owner.object.kind.as_str(),
            owner.object.name.as_str(),
            k.pod_spec_path(),
        ),
        _ => ("v1", "Pod", pod_name, WorkloadKind::Pod.pod_spec_path()),
    };
    let mut value = spec_value;
    for segment in prefix.segments().iter().rev() {
        let mut map = serde_json::Map::new();
        map.insert(segment.as_key(), value);
        value = Value::Object(map);
    }
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from(api_version));
        map.insert("kind".into(), Value::from(kind));
        map.insert(
            "metadata".into(),
            serde_json::json!({"name": name, "namespace": ns}),
        );
    }
    Object::from_value("", 0, value, LineMap::default())
}

impl Audit {
    /// Runs the catalogue on each template of `todo`; the pods of templates whose result changed are
    /// re-audited.
    pub(super) fn evaluate_templates(&mut self, todo: &[(Arc<str>, Arc<str>)], dirty: &mut Dirty) {
        let full = Some(&self.context);
        let classes = Some(&self.classes);
        // Resolving reads the RuntimeClasses and the Windows builds, the same in both contexts.
        let resolver =
            Resolver::new(classes, &self.settings).with_manifests(&self.image_facts.manifests);
        let index = Some(&self.index).filter(|i| !i.is_empty());
        let settings = &self.settings;
        let image_facts = &self.image_facts;
        let per_node = self.index.per_node_keys();
        let mut changed: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        let mut evaluations = 0u64;
        for (wk, rev) in todo {
            let Some(workload) = self.workloads.get_mut(wk) else {
                continue;
            };
            let owner = workload.owner.object.clone();
            let exempt = settings.exempts(owner.namespace.as_deref());
            let Some(template) = workload.templates.get_mut(rev) else {
                continue;
            };
            let Some(object) = template_object(
                &workload.owner,
                &template.object_name,
                template.spec.value(),
            ) else {
                continue;
            };
            // The typed spec from the object's tree, as `check` reads a workload (the text is parsed
            // once).
            let Some(Ok(pod_template)) = pod_template(&object) else {
                continue;
            };
            let runtime_class = template
                .runtime_class
                .as_deref()
                .and_then(|rc| self.context.runtime_class(rc));
            let context = if reads_single_nodes(&pod_template.spec, runtime_class, per_node) {
                full
            } else {
                classes
            };
            let mut findings = Vec::new();
            let placement = if exempt {
                resolver.resolve(&pod_template)
            } else {
                evaluations += 1;
                let placement = evaluate_template(
                    &object,
                    &pod_template,
                    PreparedCluster {
                        context,
                        resolver: &resolver,
                        nodes: index,
                    },
                    settings,
                    &mut findings,
                );
                // The server's look-ups that failed: the same info finding as `check --resolve-images`.
                check_unresolved_object(&object, settings, &image_facts.unresolved, &mut findings);
                placement
            };
            let mut images: Vec<crate::windows::ImageProvenance> = Vec::new();
            for (_, image) in container_images(&pod_template.spec, &Default::default()) {
                if !images.iter().any(|i| i.image == image) {
                    images.push(image_facts.describe(image, settings));
                }
            }
            // Held with the template and its row: a pushed-to Vec keeps room for four.
            images.shrink_to_fit();
            for f in &mut findings {
                f.object = owner.clone();
            }
            sort_findings(&mut findings);
            let facts = live_state::template_facts(&placement);
            let at_risk = findings.iter().any(|f| f.severity >= Severity::Warning);
            let findings_changed = share_findings(&mut template.findings, findings);
            if findings_changed
                || facts != template.facts
                || at_risk != template.at_risk
                || images != template.images
            {
                changed.push((wk.clone(), rev.clone()));
                dirty.workloads.insert(wk.clone());
            }
            template.facts = facts;
            template.at_risk = at_risk;
            template.images = images;
            template.placement = Some(placement.scheduling_part());
        }
        self.evaluations += evaluations;
        if dirty.all {
            return;
        }
        for (wk, rev) in changed {
            if let Some(workload) = self.workloads.get(&wk) {
                for key in &workload.pods {
                    if self.pods.get(key).is_some_and(|r| r.revision == rev) {
                        dirty.pods.insert(key.clone());
                    }
                }
            }
        }
    }
}
