//! Workloads and their pod template.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodSpec;
use serde_json::Value;

use super::{ModelError, Object, decode, get};
use crate::path::{FieldPath, Segment};

/// The kinds that create pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorkloadKind {
    /// `v1` Pod.
    Pod,
    /// `apps/v1` (also `apps/v1beta1`, `apps/v1beta2`, `extensions/v1beta1`) Deployment.
    Deployment,
    /// `apps/v1` (also `apps/v1beta2`, `extensions/v1beta1`) ReplicaSet.
    ReplicaSet,
    /// `apps/v1` (also `apps/v1beta1`, `apps/v1beta2`) StatefulSet.
    StatefulSet,
    /// `apps/v1` (also `apps/v1beta2`, `extensions/v1beta1`) DaemonSet.
    DaemonSet,
    /// `batch/v1` Job.
    Job,
    /// `batch/v1` (also `batch/v1beta1`, `batch/v2alpha1`) CronJob.
    CronJob,
    /// `v1` ReplicationController.
    ReplicationController,
}

impl WorkloadKind {
    /// The workload kind of an object, matched on both `kind` and `apiVersion` (a `Deployment` of some
    /// CRD group is not a workload).
    pub fn of(api_version: &str, kind: &str) -> Option<WorkloadKind> {
        let apps_old = [
            "apps/v1",
            "apps/v1beta1",
            "apps/v1beta2",
            "extensions/v1beta1",
        ];
        let w = match kind {
            "Pod" if api_version == "v1" => WorkloadKind::Pod,
            "ReplicationController" if api_version == "v1" => WorkloadKind::ReplicationController,
            "Deployment" if apps_old.contains(&api_version) => WorkloadKind::Deployment,
            "ReplicaSet"
                if ["apps/v1", "apps/v1beta2", "extensions/v1beta1"].contains(&api_version) =>
            {
                WorkloadKind::ReplicaSet
            }
            "DaemonSet"
                if ["apps/v1", "apps/v1beta2", "extensions/v1beta1"].contains(&api_version) =>
            {
                WorkloadKind::DaemonSet
            }
            "StatefulSet" if ["apps/v1", "apps/v1beta1", "apps/v1beta2"].contains(&api_version) => {
                WorkloadKind::StatefulSet
            }
            "Job" if api_version == "batch/v1" => WorkloadKind::Job,
            "CronJob" if ["batch/v1", "batch/v1beta1", "batch/v2alpha1"].contains(&api_version) => {
                WorkloadKind::CronJob
            }
            _ => return None,
        };
        Some(w)
    }

    /// The kind's name (`Deployment`).
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Pod => "Pod",
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::ReplicaSet => "ReplicaSet",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Job => "Job",
            WorkloadKind::CronJob => "CronJob",
            WorkloadKind::ReplicationController => "ReplicationController",
        }
    }

    /// Path of the pod spec in the object: `spec`, `spec.template.spec`, or
    /// `spec.jobTemplate.spec.template.spec` for a CronJob.
    pub fn pod_spec_path(self) -> FieldPath {
        let steps: &[&'static str] = match self {
            WorkloadKind::Pod => &["spec"],
            WorkloadKind::CronJob => &["spec", "jobTemplate", "spec", "template", "spec"],
            _ => &["spec", "template", "spec"],
        };
        FieldPath(steps.iter().map(|s| Segment::Field((*s).into())).collect())
    }

    /// Path of the pod's metadata: `metadata` for a Pod, the template's otherwise.
    pub fn pod_metadata_path(self) -> FieldPath {
        self.pod_spec_path().parent().field("metadata")
    }
}

/// The pod a workload creates: its spec (raw and typed) and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct PodTemplate<'a> {
    /// The workload's kind.
    pub kind: WorkloadKind,
    /// Path of the pod spec in the object (see [`WorkloadKind::pod_spec_path`]).
    pub prefix: FieldPath,
    /// The pod spec as written (for presence checks and unknown fields, which typing drops).
    pub raw: &'a Value,
    /// The pod spec, typed.
    pub spec: PodSpec,
    /// The pod's labels (`metadata.labels` of a Pod, the template's otherwise).
    pub labels: BTreeMap<String, String>,
}

/// The pod spec of a workload object as written (`None` when it is not a workload or has none there).
pub fn pod_spec_value(value: &Value) -> Option<&Value> {
    let kind = WorkloadKind::of(
        value.get("apiVersion")?.as_str()?,
        value.get("kind")?.as_str()?,
    )?;
    get(value, &kind.pod_spec_path())
}

/// Whether an UPDATE from `old` to `object` changes the pod spec (or template's): what admission judges.
/// An UPDATE that leaves it as it was (labels, annotations, finalizers, replicas, status) introduces no
/// finding, whatever the object already had (Pod Security Admission's `isSignificantPodUpdate`,
/// docs/reference/admission-policies.md §2).
///
/// ```
/// use serde_json::json;
/// use winplace_rules::model::pod_spec_changed;
/// let old = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"replicas": 2, "template": {"spec": {"containers": []}}}});
/// let mut new = old.clone();
/// new["spec"]["replicas"] = json!(0);
/// assert!(!pod_spec_changed(&old, &new));
/// new["spec"]["template"]["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
/// assert!(pod_spec_changed(&old, &new));
/// ```
pub fn pod_spec_changed(old: &Value, object: &Value) -> bool {
    pod_spec_value(old) != pod_spec_value(object)
}

/// The pod template of a workload; `None` when `obj` is not a workload.
///
/// `Some(Err(_))` when the pod spec is missing, or does not decode into a `PodSpec` (a wrong type such
/// as `value: 1` where a string is needed, which the API server would reject); the error names the field
/// (see [`decode`]).
pub fn pod_template(obj: &Object) -> Option<Result<PodTemplate<'_>, ModelError>> {
    let kind = WorkloadKind::of(&obj.api_version, &obj.kind)?;
    let prefix = kind.pod_spec_path();
    let Some(raw) = get(&obj.value, &prefix).filter(|v| v.is_object()) else {
        return Some(Err(ModelError {
            path: prefix.clone(),
            message: format!("a {} needs a pod spec at `{prefix}`", kind.as_str()),
        }));
    };
    let spec = match decode::<PodSpec>(raw, &prefix) {
        Ok(spec) => spec,
        Err(e) => return Some(Err(e)),
    };
    let labels_path = kind.pod_metadata_path().field("labels");
    let labels = match get(&obj.value, &labels_path) {
        None | Some(Value::Null) => BTreeMap::new(),
        Some(v) => match decode::<BTreeMap<String, String>>(v, &labels_path) {
            Ok(l) => l,
            Err(e) => return Some(Err(e)),
        },
    };
    Some(Ok(PodTemplate {
        kind,
        prefix,
        raw,
        spec,
        labels,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};
    use crate::model::objects;

    fn object(api_version: &str, kind: &str, body: &str) -> Object {
        let text =
            format!("apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w}}\n{body}");
        let parsed = parse("w.yaml", &text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        objects(&parsed.documents).remove(0)
    }

    const POD: &str = "spec:\n  containers: [{name: c, image: i}]\n";
    const TEMPLATE: &str = "spec:\n  template:\n    metadata: {labels: {app: a}}\n    spec:\n      containers: [{name: c, image: i}]\n";
    const CRON: &str = "spec:\n  jobTemplate:\n    spec:\n      template:\n        metadata: {labels: {app: a}}\n        spec:\n          containers: [{name: c, image: i}]\n";

    #[test]
    fn every_workload_kind_has_its_prefix() {
        let rows = [
            ("v1", "Pod", POD, WorkloadKind::Pod, "spec"),
            (
                "v1",
                "ReplicationController",
                TEMPLATE,
                WorkloadKind::ReplicationController,
                "spec.template.spec",
            ),
            (
                "apps/v1",
                "Deployment",
                TEMPLATE,
                WorkloadKind::Deployment,
                "spec.template.spec",
            ),
            (
                "extensions/v1beta1",
                "Deployment",
                TEMPLATE,
                WorkloadKind::Deployment,
                "spec.template.spec",
            ),
            (
                "apps/v1beta1",
                "Deployment",
                TEMPLATE,
                WorkloadKind::Deployment,
                "spec.template.spec",
            ),
            (
                "apps/v1",
                "ReplicaSet",
                TEMPLATE,
                WorkloadKind::ReplicaSet,
                "spec.template.spec",
            ),
            (
                "apps/v1beta2",
                "DaemonSet",
                TEMPLATE,
                WorkloadKind::DaemonSet,
                "spec.template.spec",
            ),
            (
                "apps/v1",
                "DaemonSet",
                TEMPLATE,
                WorkloadKind::DaemonSet,
                "spec.template.spec",
            ),
            (
                "apps/v1",
                "StatefulSet",
                TEMPLATE,
                WorkloadKind::StatefulSet,
                "spec.template.spec",
            ),
            (
                "batch/v1",
                "Job",
                TEMPLATE,
                WorkloadKind::Job,
                "spec.template.spec",
            ),
            (
                "batch/v1",
                "CronJob",
                CRON,
                WorkloadKind::CronJob,
                "spec.jobTemplate.spec.template.spec",
            ),
            (
                "batch/v1beta1",
                "CronJob",
                CRON,
                WorkloadKind::CronJob,
                "spec.jobTemplate.spec.template.spec",
            ),
        ];
        for (api, kind, body, want_kind, want_prefix) in rows {
            let obj = object(api, kind, body);
            let t = match pod_template(&obj) {
                Some(Ok(t)) => t,
                other => panic!("{api} {kind}: {other:?}"),
            };
            assert_eq!(
                (t.kind, t.prefix.to_string()),
                (want_kind, want_prefix.to_string()),
                "{api} {kind}"
            );
            assert_eq!(t.spec.containers[0].image.as_deref(), Some("i"));
            assert_eq!(t.raw["containers"][0]["name"], "c");
            let want_labels = if kind == "Pod" { 0 } else { 1 };
            assert_eq!(t.labels.len(), want_labels, "{kind}");
        }
    }

    #[test]
    fn non_workloads_and_foreign_groups_are_not_workloads() {
        for (api, kind) in [
            ("v1", "Node"),
            ("example.com/v1", "Deployment"),
            ("apps/v1", "Pod"),
            ("batch/v1", "CronJobList"),
            ("extensions/v1beta1", "StatefulSet"),
        ] {
            assert!(
                pod_template(&object(api, kind, POD)).is_none(),
                "{api} {kind}"
            );
        }
    }

    #[test]
    fn wrong_types_are_errors_with_a_path() {
        let body = "spec:\n  template:\n    spec:\n      containers:\n      - name: c\n        env:\n        - {name: A, value: 1}\n";
        let obj = object("apps/v1", "Deployment", body);
        let err = match pod_template(&obj) {
            Some(Err(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            err.path.to_string(),
            "spec.template.spec.containers[0].env[0].value"
        );
        assert_eq!(obj.line_of(&err.path), Some(10));

        let missing = object("apps/v1", "Deployment", "spec:\n  replicas: 1\n");
        let err = match pod_template(&missing) {
            Some(Err(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(err.path.to_string(), "spec.template.spec");

        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: [1]}}\nspec: {containers: []}\n";
        let parsed = parse("p.yaml", text, &Limits::default());
        let labels = objects(&parsed.documents).remove(0);
        let err = match pod_template(&labels) {
            Some(Err(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_eq!(err.path.to_string(), "metadata.labels[a]");
    }
}
