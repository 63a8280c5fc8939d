//! Which workload a pod belongs to, and which of the workload's templates it was made from.
//!
//! Only Nodes, Pods and RuntimeClasses are watched, so owners are read from the pod alone:
//! * a ReplicaSet named `<deployment>-<pod-template-hash>` (the pod carries the hash as its
//!   `pod-template-hash` label) belongs to the Deployment `<deployment>`; another ReplicaSet is its own row;
//! * DaemonSet, StatefulSet, ReplicationController and Job owners are rows as they are (a Job made by a
//!   CronJob is named `<cronjob>-<scheduled minute>`, but a hand-made Job can be named so too: it stays a
//!   Job);
//! * a pod without a controller, or a static pod (owned by its Node), is its own row.
//!
//! The template is told by the `pod-template-hash` (ReplicaSet) or `controller-revision-hash` (DaemonSet,
//! StatefulSet) label: the controllers create every pod of one revision from one template. Pods of other
//! owners (Jobs, whose template is immutable; ReplicationControllers; custom controllers) share one template
//! per owner.

use k8s_openapi::api::core::v1::{Pod, PodSpec};

use crate::finding::ObjectRef;
use crate::model::WorkloadKind;

/// The label a ReplicaSet puts on its pods (and in its own name).
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// The label DaemonSets and StatefulSets put on their pods.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

/// A pod's workload: the row it is listed under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The workload (or the pod itself).
    pub object: ObjectRef,
    /// The workload kind to evaluate the template as (`None`: a custom controller, evaluated as a Pod).
    pub kind: Option<WorkloadKind>,
}

impl Owner {
    /// `Kind/namespace/name`, the key of the workload row.
    pub fn key(&self) -> String {
        self.object.display_name()
    }
}

fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// The pod's namespace (`default` when empty).
pub fn namespace(pod: &Pod) -> &str {
    pod.metadata
        .namespace
        .as_deref()
        .filter(|n| !n.is_empty())
        .unwrap_or("default")
}

/// A pod's workload, borrowed from the pod (the audit builds an [`Owner`] only for a new row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerParts<'a> {
    /// `apiVersion` of the workload.
    pub api_version: &'a str,
    /// `kind` of the workload.
    pub kind: &'a str,
    /// Namespace.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// The workload kind to evaluate the template as (`None`: a custom controller, evaluated as a Pod).
    pub workload_kind: Option<WorkloadKind>,
}

impl OwnerParts<'_> {
    /// Writes `Kind/namespace/name` into `out` (cleared first).
    pub fn write_key(&self, out: &mut String) {
        out.clear();
        out.push_str(self.kind);
        out.push('/');
        out.push_str(self.namespace);
        out.push('/');
        out.push_str(self.name);
    }

    /// The owned [`Owner`].
    pub fn to_owner(&self) -> Owner {
        Owner {
            object: ObjectRef {
                api_version: self.api_version.to_string(),
                kind: self.kind.to_string(),
                namespace: Some(self.namespace.to_string()),
                name: self.name.to_string(),
            },
            kind: self.workload_kind,
        }
    }
}

/// [`owner`] without allocating.
pub fn owner_parts(pod: &Pod) -> OwnerParts<'_> {
    let namespace = namespace(pod);
    let itself = OwnerParts {
        api_version: "v1",
        kind: "Pod",
        namespace,
        name: pod.metadata.name.as_deref().unwrap_or(""),
        workload_kind: Some(WorkloadKind::Pod),
    };
    let refs = pod.metadata.owner_references.as_deref().unwrap_or(&[]);
    let Some(r) = refs
        .iter()
        .find(|r| r.controller == Some(true))
        .or_else(|| refs.first())
    else {
        return itself;
    };
    let parts = |kind: &'static str, name| OwnerParts {
        api_version: &r.api_version,
        kind,
        namespace,
        name,
        workload_kind: WorkloadKind::of(&r.api_version, kind),
    };
    match r.kind.as_str() {
        // Static pods: the mirror pod is owned by its Node.
        "Node" => itself,
        "ReplicaSet" => {
            let deployment = label(pod, POD_TEMPLATE_HASH)
                .filter(|h| !h.is_empty())
                .and_then(|h| r.name.strip_suffix(h))
                .and_then(|n| n.strip_suffix('-'))
                .filter(|n| !n.is_empty());
            match deployment {
                Some(name) => parts("Deployment", name),
                None => parts("ReplicaSet", &r.name),
            }
        }
        kind => OwnerParts {
            api_version: &r.api_version,
            kind,
            namespace,
            name: &r.name,
            workload_kind: WorkloadKind::of(&r.api_version, kind),
        },
    }
}

/// The workload a pod belongs to (see the module docs).
///
/// ```
/// use winplace_rules::audit::owner::owner;
/// let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-7d4b9c8f5-x2x9z", "namespace": "shop",
///         "labels": {"pod-template-hash": "7d4b9c8f5"},
///         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c8f5",
///             "uid": "1", "controller": true}]}
/// })).unwrap();
/// assert_eq!(owner(&pod).key(), "Deployment/shop/web");
/// ```
pub fn owner(pod: &Pod) -> Owner {
    owner_parts(pod).to_owner()
}

/// Which template of its workload a pod was made from (empty: the workload's only one).
pub fn revision(pod: &Pod, owner: &Owner) -> String {
    revision_of(pod, owner.kind).to_string()
}

/// [`revision`] without allocating, for a workload of `kind`.
pub fn revision_of(pod: &Pod, kind: Option<WorkloadKind>) -> &str {
    let key = match kind {
        Some(WorkloadKind::Deployment | WorkloadKind::ReplicaSet) => POD_TEMPLATE_HASH,
        Some(WorkloadKind::DaemonSet | WorkloadKind::StatefulSet) => CONTROLLER_REVISION_HASH,
        _ => return "",
    };
    label(pod, key).unwrap_or("")
}

/// The templates a reader of a list has met (by workload and revision): which pod is the first of its
/// template, whose whole spec the audit reads ([`crate::model::cluster_objects::decode_json_listed`]).
/// The first pod of a template in a list is the first of it each reader meets, however the list is
/// shared among readers that each read their share in the list's order.
///
/// ```
/// use winplace_rules::audit::owner::TemplatesMet;
/// let pod = |name: &str, hash: &str| -> k8s_openapi::api::core::v1::Pod {
///     serde_json::from_value(serde_json::json!({"metadata": {"name": name, "namespace": "shop",
///         "labels": {"pod-template-hash": hash},
///         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("web-{hash}"),
///             "uid": "u", "controller": true}]}})).unwrap()
/// };
/// let mut met = TemplatesMet::default();
/// assert!(met.first(&pod("web-a-1", "a")));
/// assert!(!met.first(&pod("web-a-2", "a")));
/// assert!(met.first(&pod("web-b-1", "b")));
/// ```
#[derive(Debug, Default)]
pub struct TemplatesMet {
    /// `Kind/namespace/name` and the revision, a line apart (neither holds a line break).
    met: rustc_hash::FxHashSet<Box<str>>,
    /// The key being looked up (kept: one allocation per reader, not per pod).
    key: String,
}

impl TemplatesMet {
    /// Whether `pod` is the first of its template met (remembering that it was).
    pub fn first(&mut self, pod: &Pod) -> bool {
        let parts = owner_parts(pod);
        if parts.workload_kind == Some(WorkloadKind::Pod) && parts.kind == "Pod" {
            // A pod without a controller is its own workload and template: nothing to remember.
            return true;
        }
        parts.write_key(&mut self.key);
        self.key.push('\n');
        self.key.push_str(revision_of(pod, parts.workload_kind));
        if self.met.contains(self.key.as_str()) {
            return false;
        }
        self.met.insert(self.key.as_str().into());
        true
    }
}

/// The pod's spec without what differs from pod to pod of one template: `nodeName` (set by the scheduler),
/// `hostname` and `subdomain` (set per StatefulSet pod), and the `matchFields` on `metadata.name` that the
/// DaemonSet controller adds to pin each pod to its node.
pub fn template_spec(mut spec: PodSpec, owner: &Owner) -> PodSpec {
    spec.node_name = None;
    spec.hostname = None;
    spec.subdomain = None;
    if owner.kind == Some(WorkloadKind::DaemonSet) {
        strip_daemonset_node_pin(&mut spec);
    }
    spec
}

/// Undoes `ReplaceDaemonSetPodNodeNameNodeAffinity`: drops `matchFields` on `metadata.name` from every
/// required term, then the terms (and the affinity) left empty by that.
fn strip_daemonset_node_pin(spec: &mut PodSpec) {
    let Some(affinity) = spec.affinity.as_mut() else {
        return;
    };
    let Some(node_affinity) = affinity.node_affinity.as_mut() else {
        return;
    };
    if let Some(required) = node_affinity
        .required_during_scheduling_ignored_during_execution
        .as_mut()
    {
        let mut changed = false;
        for term in &mut required.node_selector_terms {
            if let Some(fields) = term.match_fields.as_mut() {
                let before = fields.len();
                fields.retain(|r| r.key != "metadata.name");
                changed |= fields.len() != before;
                if fields.is_empty() {
                    term.match_fields = None;
                }
            }
        }
        if changed {
            required.node_selector_terms.retain(|t| {
                t.match_expressions.as_ref().is_some_and(|e| !e.is_empty())
                    || t.match_fields.as_ref().is_some_and(|f| !f.is_empty())
            });
        }
        if required.node_selector_terms.is_empty() {
            node_affinity.required_during_scheduling_ignored_during_execution = None;
        }
    }
    if node_affinity
        .required_during_scheduling_ignored_during_execution
        .is_none()
        && node_affinity
            .preferred_during_scheduling_ignored_during_execution
            .as_ref()
            .is_none_or(Vec::is_empty)
    {
        affinity.node_affinity = None;
    }
    if affinity.node_affinity.is_none()
        && affinity.pod_affinity.is_none()
        && affinity.pod_anti_affinity.is_none()
    {
        spec.affinity = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(meta: serde_json::Value) -> Pod {
        serde_json::from_value(json!({"metadata": meta})).expect("pod")
    }

    fn owned(kind: &str, api: &str, name: &str, labels: serde_json::Value) -> Pod {
        pod(json!({
            "name": "p-1", "namespace": "ns", "labels": labels,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Other", "name": "not-controller", "uid": "0"},
                {"apiVersion": api, "kind": kind, "name": name, "uid": "1", "controller": true}
            ]
        }))
    }

    #[test]
    fn owners_through_owner_references() {
        // (case, pod, key, evaluated as, revision)
        let rows: Vec<(&str, Pod, &str, Option<WorkloadKind>, &str)> = vec![
            (
                "ReplicaSet → Deployment by the pod-template-hash suffix",
                owned(
                    "ReplicaSet",
                    "apps/v1",
                    "web-7d4b9c8f5",
                    json!({"pod-template-hash": "7d4b9c8f5"}),
                ),
                "Deployment/ns/web",
                Some(WorkloadKind::Deployment),
                "7d4b9c8f5",
            ),
            (
                "ReplicaSet whose name does not end in the hash stays a ReplicaSet",
                owned(
                    "ReplicaSet",
                    "apps/v1",
                    "hand-made",
                    json!({"pod-template-hash": "abc"}),
                ),
                "ReplicaSet/ns/hand-made",
                Some(WorkloadKind::ReplicaSet),
                "abc",
            ),
            (
                "ReplicaSet without the label",
                owned("ReplicaSet", "apps/v1", "web-abc", json!({})),
                "ReplicaSet/ns/web-abc",
                Some(WorkloadKind::ReplicaSet),
                "",
            ),
            (
                "DaemonSet",
                owned(
                    "DaemonSet",
                    "apps/v1",
                    "kube-proxy",
                    json!({"controller-revision-hash": "5d9f"}),
                ),
                "DaemonSet/ns/kube-proxy",
                Some(WorkloadKind::DaemonSet),
                "5d9f",
            ),
            (
                "StatefulSet",
                owned(
                    "StatefulSet",
                    "apps/v1",
                    "db",
                    json!({"controller-revision-hash": "db-6c"}),
                ),
                "StatefulSet/ns/db",
                Some(WorkloadKind::StatefulSet),
                "db-6c",
            ),
            (
                "Job of a CronJob stays a Job",
                owned("Job", "batch/v1", "nightly-28911240", json!({})),
                "Job/ns/nightly-28911240",
                Some(WorkloadKind::Job),
                "",
            ),
            (
                "ReplicationController",
                owned("ReplicationController", "v1", "legacy", json!({})),
                "ReplicationController/ns/legacy",
                Some(WorkloadKind::ReplicationController),
                "",
            ),
            (
                "custom controller: its own row, evaluated as a Pod",
                owned("Rollout", "argoproj.io/v1alpha1", "canary", json!({})),
                "Rollout/ns/canary",
                None,
                "",
            ),
            (
                "static pod (owned by its Node) is itself",
                owned("Node", "v1", "node-1", json!({})),
                "Pod/ns/p-1",
                Some(WorkloadKind::Pod),
                "",
            ),
            (
                "bare pod",
                pod(json!({"name": "solo"})),
                "Pod/default/solo",
                Some(WorkloadKind::Pod),
                "",
            ),
        ];
        for (case, p, key, kind, rev) in rows {
            let o = owner(&p);
            assert_eq!(o.key(), key, "{case}");
            assert_eq!(o.kind, kind, "{case}");
            assert_eq!(revision(&p, &o), rev, "{case}");
        }
        // Without a controller reference the first owner counts.
        let p = pod(
            json!({"name": "x", "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "1"}]}),
        );
        assert_eq!(owner(&p).key(), "Job/default/j");
    }

    #[test]
    fn template_spec_drops_per_pod_fields() {
        let spec = |v: serde_json::Value| -> PodSpec { serde_json::from_value(v).expect("spec") };
        let ds = Owner {
            object: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "DaemonSet".into(),
                namespace: Some("ns".into()),
                name: "d".into(),
            },
            kind: Some(WorkloadKind::DaemonSet),
        };
        let pin = |node: &str| json!({"key": "metadata.name", "operator": "In", "values": [node]});
        // The controller's own term (template without affinity) and a pin added to a template's term.
        let a = spec(json!({"nodeName": "n1", "hostname": "h", "containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [pin("n1")]}]}}}}));
        assert_eq!(template_spec(a, &ds), spec(json!({"containers": []})));
        let os = json!({"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]});
        let b = spec(json!({"nodeName": "n2", "containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [os.clone()], "matchFields": [pin("n2")]}]}}}}));
        let c = spec(json!({"nodeName": "n3", "containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [os.clone()], "matchFields": [pin("n3")]}]}}}}));
        let (b, c) = (template_spec(b, &ds), template_spec(c, &ds));
        assert_eq!(b, c, "pods on different nodes share the template");
        assert_eq!(
            b,
            spec(
                json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [os]}]}}}})
            )
        );
        // Other owners keep their matchFields (a user's own pin).
        let deploy = Owner {
            kind: Some(WorkloadKind::Deployment),
            ..ds
        };
        let d = spec(
            json!({"containers": [], "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [pin("n1")]}]}}}}),
        );
        assert_eq!(template_spec(d.clone(), &deploy), d);
    }
}
