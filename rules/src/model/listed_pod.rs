//! A pod of a list (a snapshot's items), decoded into only what the audit reads of every pod: its
//! identity, owners and creation time, `spec.nodeName`, its scheduling gates and its containers' names,
//! and the status fields the live-state rules read ([`trim_pod`]'s metadata and status). The rest of its spec, which the audit reads once per
//! template (the pods of one template share it), stays JSON text, decoded whole only where the reader
//! asks for it: the first pod of each template it reads.
//!
//! Decoding a whole k8s-openapi `Pod` builds every container's ports, resources, mounts and probes as
//! owned values, then drops them; at 150,000 pods that was most of a snapshot's reading. Whatever does
//! not decode narrowly (a field of another type, a duplicate key) is left to the whole decoding
//! ([`super::cluster_objects::decode_json`]), which names the field at fault.
//!
//! ```
//! use winplace_rules::model::listed_pod::ListedPod;
//! let raw = r#"{"apiVersion": "v1", "kind": "Pod",
//!     "metadata": {"name": "web-1", "namespace": "shop", "uid": "u", "labels": {"app": "web"}},
//!     "spec": {"nodeName": "lin-1", "containers": [{"name": "app", "image": "nginx",
//!         "ports": [{"containerPort": 80}]}]},
//!     "status": {"phase": "Running", "podIP": "10.0.0.1"}}"#;
//! let listed = ListedPod::decode(raw).expect("a pod");
//! let spec = listed.pod.spec.as_ref().expect("the narrow spec");
//! assert_eq!(spec.node_name.as_deref(), Some("lin-1"));
//! assert_eq!((spec.containers[0].name.as_str(), spec.containers[0].image.as_deref()), ("app", None));
//! assert!(listed.whole_spec.is_none(), "not asked for");
//! let whole = listed.into_pod().expect("the whole pod");
//! assert_eq!(whole.spec.expect("spec").containers[0].image.as_deref(), Some("nginx"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, EphemeralContainer, Pod, PodCondition, PodSchedulingGate, PodSpec,
    PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A pod of a list as the audit reads it (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedPod {
    /// The pod as [`super::cluster_objects::trim_pod`] keeps it, but of its spec only `nodeName` and the
    /// names of its containers, init containers and ephemeral containers (what the live-state rules read
    /// of every pod; `None` when the pod has no spec).
    pub pod: Pod,
    /// The whole spec as the list's JSON text (empty when the pod has no spec).
    pub spec_text: Box<str>,
    /// The whole spec, when the reader decoded it ([`ListedPod::decode_whole_spec`]).
    pub whole_spec: Option<Box<PodSpec>>,
}

impl ListedPod {
    /// Decodes `raw`, a Pod's JSON text, narrowly. `None` when it does not decode so (the caller
    /// decodes it whole, which says what is wrong).
    pub fn decode(raw: &str) -> Option<Self> {
        let light: LightPod<'_> = serde_json::from_str(raw).ok()?;
        let spec = match light.spec {
            Some(text) => Some((serde_json::from_str::<LightSpec>(text.get()).ok()?, text)),
            None => None,
        };
        let meta = light.metadata.unwrap_or_default();
        let status = light.status.map(|s| PodStatus {
            phase: s.phase,
            reason: s.reason,
            message: s.message,
            conditions: s.conditions,
            container_statuses: s.container_statuses,
            init_container_statuses: s.init_container_statuses,
            ephemeral_container_statuses: s.ephemeral_container_statuses,
            ..PodStatus::default()
        });
        let spec_text = spec
            .as_ref()
            .map_or_else(Box::default, |(_, t)| t.get().into());
        Some(ListedPod {
            pod: Pod {
                metadata: ObjectMeta {
                    name: meta.name,
                    generate_name: meta.generate_name,
                    namespace: meta.namespace,
                    labels: meta.labels,
                    owner_references: meta.owner_references,
                    creation_timestamp: meta.creation_timestamp,
                    ..ObjectMeta::default()
                },
                spec: spec.map(|(s, _)| s.into_spec()),
                status,
            },
            spec_text,
            whole_spec: None,
        })
    }

    /// Decodes the whole spec from its text and keeps it ([`ListedPod::whole_spec`]); `false` when it
    /// does not decode (a pod without a spec has nothing to decode: `true`).
    pub fn decode_whole_spec(&mut self) -> bool {
        if self.pod.spec.is_none() || self.whole_spec.is_some() {
            return true;
        }
        match serde_json::from_str(&self.spec_text) {
            Ok(spec) => {
                self.whole_spec = Some(Box::new(spec));
                true
            }
            Err(_) => false,
        }
    }

    /// The whole spec: the one decoded with the pod, else decoded from its text (`None` when the pod has
    /// none, or its text does not decode).
    pub fn spec(&self) -> Option<PodSpec> {
        match &self.whole_spec {
            Some(spec) => Some((**spec).clone()),
            None if self.pod.spec.is_some() => serde_json::from_str(&self.spec_text).ok(),
            None => None,
        }
    }

    /// The whole pod, as [`super::cluster_objects::decode_json`] decodes and trims it; the error of its
    /// spec's text when that does not decode.
    pub fn into_pod(self) -> Result<Pod, serde_json::Error> {
        let spec = match (self.whole_spec, &self.pod.spec) {
            (Some(spec), _) => Some(*spec),
            (None, Some(_)) => Some(serde_json::from_str(&self.spec_text)?),
            (None, None) => None,
        };
        Ok(Pod { spec, ..self.pod })
    }
}

/// What is read of a Pod; other members are skipped unbuilt.
#[derive(Deserialize)]
struct LightPod<'a> {
    #[serde(default)]
    metadata: Option<LightMeta>,
    #[serde(borrow, default)]
    spec: Option<&'a RawValue>,
    #[serde(default)]
    status: Option<LightStatus>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LightMeta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    generate_name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LightStatus {
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    conditions: Option<Vec<PodCondition>>,
    #[serde(default)]
    container_statuses: Option<Vec<ContainerStatus>>,
    #[serde(default)]
    init_container_statuses: Option<Vec<ContainerStatus>>,
    #[serde(default)]
    ephemeral_container_statuses: Option<Vec<ContainerStatus>>,
}

/// What every pod's live-state rules read of its spec.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LightSpec {
    #[serde(default)]
    node_name: Option<String>,
    #[serde(default)]
    containers: Option<Vec<Named>>,
    #[serde(default)]
    init_containers: Option<Vec<Named>>,
    #[serde(default)]
    ephemeral_containers: Option<Vec<Named>>,
    /// Read of every pod: the gated pods are counted (`audit::gated`).
    #[serde(default)]
    scheduling_gates: Option<Vec<PodSchedulingGate>>,
}

/// A container's name (its other members skipped unbuilt).
#[derive(Deserialize)]
struct Named {
    #[serde(default)]
    name: Option<String>,
}

impl LightSpec {
    fn into_spec(self) -> PodSpec {
        let name = |n: Named| n.name.unwrap_or_default();
        PodSpec {
            node_name: self.node_name,
            scheduling_gates: self.scheduling_gates,
            containers: self
                .containers
                .into_iter()
                .flatten()
                .map(|n| Container {
                    name: name(n),
                    ..Container::default()
                })
                .collect(),
            init_containers: self.init_containers.map(|list| {
                list.into_iter()
                    .map(|n| Container {
                        name: name(n),
                        ..Container::default()
                    })
                    .collect()
            }),
            ephemeral_containers: self.ephemeral_containers.map(|list| {
                list.into_iter()
                    .map(|n| EphemeralContainer {
                        name: name(n),
                        ..EphemeralContainer::default()
                    })
                    .collect()
            }),
            ..PodSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster_objects::{ClusterObject, decode_json};
    use serde_json::json;

    /// A pod with everything kubectl writes of one, and what the audit reads in each part.
    fn full_pod() -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "generateName": "web-", "namespace": "shop", "uid": "u",
                "creationTimestamp": "2026-12-08T10:00:00Z",
                "labels": {"app": "web", "pod-template-hash": "7d9"}, "annotations": {"a": "b"},
                "managedFields": [{"manager": "kube-controller-manager"}],
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9",
                    "uid": "r", "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"nodeName": "win-0", "runtimeClassName": "windows-2022",
                "schedulingGates": [{"name": "winplace.io/placement"}],
                "nodeSelector": {"kubernetes.io/os": "windows"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}]}}},
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"memory": "1Gi"}}}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox"}]},
            "status": {"phase": "Pending", "reason": "PodOSNotSupported", "message": "m", "podIP": "10.0.0.1",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                    "message": "0/3 nodes are available", "lastTransitionTime": "2026-01-02T03:04:05Z"}],
                "initContainerStatuses": [{"name": "init", "image": "busybox", "imageID": "", "ready": false,
                    "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "x"}},
                    "lastState": {"terminated": {"exitCode": 1, "message": "y", "finishedAt": "2026-01-02T03:04:05Z"}}}],
                "containerStatuses": [{"name": "app", "image": "nginx", "imageID": "", "ready": false,
                    "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull", "message": "z"}}}],
                "ephemeralContainerStatuses": [{"name": "debug", "image": "busybox", "imageID": "",
                    "ready": false, "restartCount": 0}]}
        })
    }

    #[test]
    fn a_pod_made_whole_is_the_pod_decoded_whole() {
        let mut no_spec = full_pod();
        no_spec.as_object_mut().expect("object").remove("spec");
        let mut nulls = full_pod();
        nulls["metadata"] = serde_json::Value::Null;
        nulls["status"] = serde_json::Value::Null;
        let mut bare = full_pod();
        bare["status"] = json!({});
        bare["spec"] = json!({"containers": [{"name": "a", "image": "i"}]});
        for pod in [full_pod(), no_spec, nulls, bare] {
            let raw = pod.to_string();
            let Ok(Some(ClusterObject::Pod(want))) = decode_json(&raw) else {
                panic!("decodes whole: {raw}")
            };
            let mut listed = ListedPod::decode(&raw).expect("decodes narrowly");
            // What every pod's rules read is there without the whole spec.
            let narrow = listed.pod.spec.clone();
            assert_eq!(
                narrow.as_ref().map(|s| s.node_name.clone()),
                want.spec.as_ref().map(|s| s.node_name.clone())
            );
            assert_eq!(
                narrow.as_ref().map(|s| s.scheduling_gates.clone()),
                want.spec.as_ref().map(|s| s.scheduling_gates.clone()),
                "the gates, which the gated pods are counted by"
            );
            let names = |s: &PodSpec| -> Vec<String> {
                let init = s.init_containers.iter().flatten().map(|c| c.name.clone());
                let eph = s
                    .ephemeral_containers
                    .iter()
                    .flatten()
                    .map(|c| c.name.clone());
                s.containers
                    .iter()
                    .map(|c| c.name.clone())
                    .chain(init)
                    .chain(eph)
                    .collect()
            };
            assert_eq!(narrow.as_ref().map(names), want.spec.as_ref().map(names));
            assert_eq!(
                (&listed.pod.metadata, &listed.pod.status),
                (&want.metadata, &want.status)
            );
            assert_eq!(listed.spec(), want.spec, "from its text");
            assert_eq!(listed.clone().into_pod().ok().as_ref(), Some(&*want));
            assert!(listed.decode_whole_spec());
            assert_eq!(listed.whole_spec.as_deref(), want.spec.as_ref());
            assert_eq!(listed.into_pod().ok(), Some(*want));
        }
    }

    #[test]
    fn what_does_not_decode_narrowly_is_left_to_the_whole_decoding() {
        let pod = full_pod();
        let mut bad_node = pod.clone();
        bad_node["spec"]["nodeName"] = json!(["win-0"]);
        let mut bad_label = pod.clone();
        bad_label["metadata"]["labels"]["app"] = json!(1);
        let mut bad_status = pod.clone();
        bad_status["status"]["conditions"] = json!("x");
        let duplicate =
            pod.to_string()
                .replacen("\"metadata\":", "\"metadata\": {}, \"metadata\":", 1);
        for raw in [
            bad_node.to_string(),
            bad_label.to_string(),
            bad_status.to_string(),
            duplicate,
        ] {
            assert_eq!(ListedPod::decode(&raw), None, "{raw}");
        }
        // A part of the spec not read narrowly: decoded, but the whole spec is not.
        let mut bad_port = pod.clone();
        bad_port["spec"]["containers"][0]["ports"] = json!(7);
        let mut listed = ListedPod::decode(&bad_port.to_string()).expect("narrowly");
        assert!(!listed.decode_whole_spec());
        assert!(listed.into_pod().is_err());
    }
}
