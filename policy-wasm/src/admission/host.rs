//! What the policy asks its host for, per request, and in what order ([`review_with_host`]): over
//! [`HostCalls`], so that the same asking runs in policy.wasm (waPC host calls) and natively in tests
//! (against [`HostAnswers`](crate::host_answers::HostAnswers)).
//!
//! With `contextAware`, the RuntimeClasses, then the Nodes not labelled `kubernetes.io/os: linux`
//! ([`NOT_LINUX_NODES`], a label selector the host passes to the API server's watch) pruned to
//! [`CONTEXT_NODE_FIELDS`] (of `nodeInfo`, only the OS and the kernel version); the Nodes labelled Linux
//! ([`LINUX_NODES`], the rest of the cluster) pruned to [`LINUX_NODE_FIELDS`] (no `nodeInfo`: the rules
//! read none of a node labelled Linux) only when the rules may read a Linux node for this object
//! ([`Checker::needs_linux_nodes`]: a pod that could go to one, or that no held node takes), and
//! straight after the others, without reviewing against those first, when the pod's own selectors let
//! it go to one ([`Checker::may_go_to_linux_nodes`]). A pinned Windows workload in a cluster of 5,000 nodes of which
//! 500 run Windows thus costs 500 nodes, not 5,000, with the same findings, and an unpinned one 5,000
//! with 4,500 of them smaller (docs/reference/kubewarden-hosting.md §4). The nodes are held in one order
//! whatever the path: those not labelled Linux, then the others (the host's own order within each list;
//! policy-server's reflector store keeps no order of its own).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use winplace_rules::model::ClusterContext;
use winplace_rules::model::cluster_objects::{CONTEXT_NODE_FIELDS, LINUX_NODE_FIELDS};
use winplace_rules::placement::gate::{controller_is_live, has_gate};
use winplace_rules::settings::Settings;
use winplace_rules::windows::{ImageClass, class_from_manifest};
use winplace_rules::{Checker, LINUX_NODES, NOT_LINUX_NODES};

use super::{
    AdmissionRequest, Decision, add_nodes_from_answer, asks_for_context, context_from_answers,
    is_evaluated, is_exempt, manifest_lookups, review, review_checked,
};

/// The host, as the policy calls it: `kubewarden/{namespace}/{operation}` with a JSON payload.
pub trait HostCalls {
    /// The host's answer, or `None` when it refuses (not granted, not found, unreachable).
    fn call(&mut self, namespace: &str, operation: &str, payload: &[u8]) -> Option<Vec<u8>>;

    /// The host's wall clock, or `None` when it gives none: policy.wasm reads WASI's
    /// `clock_time_get`, which policy-server's wasmtime answers with the host's clock
    /// (docs/reference/kubewarden-hosting.md, "The clock"). Only asked with `placementGate`, to judge
    /// whether the controller's Lease is fresh.
    fn now(&mut self) -> Option<Timestamp> {
        None
    }
}

/// Reviews `request` ([`review`]) with what the host grants: the cluster when settings `contextAware`
/// say so ([`asks_for_context`]), asked as narrowly as the object allows (module documentation), and the
/// image manifests when `registryAware` say so.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::admission::{AdmissionRequest, Verdict, review_with_host};
/// use winplace_policy_wasm::host_answers::HostAnswers;
/// let request: AdmissionRequest = serde_json::from_value(json!({
///     "uid": "1", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"},
///     "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
///         "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}}
/// })).unwrap();
/// let decision = review_with_host(request, &Default::default(), &mut &HostAnswers::default());
/// assert!(matches!(decision.verdict, Verdict::Reject(_)));
/// ```
pub fn review_with_host(
    request: AdmissionRequest,
    settings: &Settings,
    host: &mut dyn HostCalls,
) -> Decision {
    if !is_evaluated(&request) || is_exempt(&request, settings) {
        return Decision::accept();
    }
    // `placementGate` gates only while a controller holds its Lease fresh; else the pod is reviewed
    // exactly as without the setting (docs/placement.md, "No controller, no gate").
    let ungated;
    let settings = if asks_for_lease(&request, settings) && !controller_live(host, settings) {
        ungated = Settings {
            placement_gate: false,
            ..settings.clone()
        };
        &ungated
    } else {
        settings
    };
    // The RuntimeClasses first, then the Nodes: both arrive, or neither is used (half a cluster would
    // invent unschedulable pods). A pod that may go to a Linux node by its own selectors (with the
    // RuntimeClass merged) needs every node whatever the others say: the Linux nodes straight after the
    // others. Any other asks for the Linux ones only when no node held takes it.
    let held = asks_for_context(&request, settings)
        .then(|| {
            let rcs = list_all(host, "node.k8s.io/v1", "RuntimeClass", None, &[])?;
            let wide = may_go_to_linux_nodes(&request, settings, &rcs)?;
            let nodes = list_all(
                host,
                "v1",
                "Node",
                Some(NOT_LINUX_NODES),
                CONTEXT_NODE_FIELDS,
            )?;
            let mut held = context_from_answers(&nodes, &rcs).ok()?;
            drop(nodes);
            if wide {
                add_linux_nodes(host, &mut held)?;
            }
            Some((held, wide))
        })
        .flatten();
    let manifests = manifests(&request, held.as_ref().map(|(c, _)| c), settings, host);
    let Some((mut held, wide)) = held else {
        return review(request, settings, None, &manifests);
    };
    if wide {
        return review(request, settings, Some(&held), &manifests);
    }
    let checker = Checker::builder()
        .settings(settings)
        .cluster(&held)
        .image_manifests(&manifests)
        .build();
    if !checker.needs_linux_nodes(&request.object) {
        return review_checked(request, &checker);
    }
    drop(checker);
    // The nodes held are the cluster's but for the Linux ones: those are added, the others not asked
    // for again.
    let whole = add_linux_nodes(host, &mut held).map(|()| held);
    review(request, settings, whole.as_ref(), &manifests)
}

/// Adds the Nodes labelled Linux ([`LINUX_NODES`]), pruned to [`LINUX_NODE_FIELDS`], to the nodes
/// `held` (those not labelled Linux): pushed onto them as they are decoded. `None` when the host refuses
/// or the answer does not decode (then no context is used, as when a list is refused).
///
/// A host that predates label selectors answers every node to both lists: a node labelled Linux among
/// those held says so, and nothing is added; and of the answer only the nodes labelled Linux are added
/// (a cluster without one then adds none). The same nodes twice would count twice.
fn add_linux_nodes(host: &mut dyn HostCalls, held: &mut ClusterContext) -> Option<()> {
    if held.nodes.iter().any(|n| node_os_label(n) == Some("linux")) {
        return Some(());
    }
    let answer = list_all(host, "v1", "Node", Some(LINUX_NODES), LINUX_NODE_FIELDS)?;
    let others = held.nodes.len();
    add_nodes_from_answer(held, &answer).ok()?;
    let mut i = 0;
    held.nodes.retain(|n| {
        i += 1;
        i <= others || node_os_label(n) == Some("linux")
    });
    Some(())
}

/// A node's `kubernetes.io/os` label, which the two selectors read.
fn node_os_label(node: &Node) -> Option<&str> {
    let labels = node.metadata.labels.as_ref()?;
    labels.get("kubernetes.io/os").map(String::as_str)
}

/// Whether the object's pods may go to a Linux node by their own selectors, with the cluster's
/// RuntimeClasses (`rcs`, the host's answer) merged ([`Checker::may_go_to_linux_nodes`]); `None` when the
/// answer does not decode (then no context is used, as when a list is refused).
fn may_go_to_linux_nodes(
    request: &AdmissionRequest,
    settings: &Settings,
    rcs: &[u8],
) -> Option<bool> {
    let classes = context_from_answers(br#"{"items": []}"#, rcs).ok()?;
    let checker = Checker::builder()
        .settings(settings)
        .cluster(&classes)
        .build();
    Some(checker.may_go_to_linux_nodes(&request.object))
}

/// Whether the request is one `placementGate` may gate, so that the controller's Lease is worth
/// reading: a Pod CREATE in a namespace the setting covers, not carrying the gate already.
fn asks_for_lease(request: &AdmissionRequest, settings: &Settings) -> bool {
    request.operation == "CREATE"
        && request.kind.kind == "Pod"
        && request.kind.group.is_empty()
        && settings.gates_namespace(&super::scope::namespace_of(request))
        && !has_gate(&request.object)
}

/// Whether a placement controller holds the Lease of `placementLeaseNamespace`/`placementLeaseName`
/// fresh by the host's clock: the SDK's `GetResourceRequest` (`get_resource`, with the host's cache:
/// an answer at most 5 s old, docs/reference/kubewarden-hosting.md). A refused call (the Lease not
/// granted in `contextAwareResources`, or missing), an unreadable answer or no clock: not live.
fn controller_live(host: &mut dyn HostCalls, settings: &Settings) -> bool {
    let request = json!({"api_version": "coordination.k8s.io/v1", "kind": "Lease",
        "namespace": settings.placement_lease_namespace, "name": settings.placement_lease_name,
        "disable_cache": false});
    let Some(answer) = host.call("kubernetes", "get_resource", request.to_string().as_bytes())
    else {
        return false;
    };
    let Ok(lease) = serde_json::from_slice::<Value>(&answer) else {
        return false;
    };
    host.now()
        .is_some_and(|now| controller_is_live(&lease, now))
}

/// Every object of a kind (that `selector` selects); with `fields`, only those fields of each: the SDK's
/// `ListAllResourcesRequest` (`list_resources_all`).
fn list_all(
    host: &mut dyn HostCalls,
    api_version: &str,
    kind: &str,
    selector: Option<&str>,
    fields: &[&str],
) -> Option<Vec<u8>> {
    let request = json!({"api_version": api_version, "kind": kind, "label_selector": selector,
        "field_selector": null, "field_masks": (!fields.is_empty()).then_some(fields)});
    host.call(
        "kubernetes",
        "list_resources_all",
        request.to_string().as_bytes(),
    )
}

/// What the manifests of the images worth a look-up say ([`manifest_lookups`]), once per image.
fn manifests(
    request: &AdmissionRequest,
    context: Option<&ClusterContext>,
    settings: &Settings,
    host: &mut dyn HostCalls,
) -> BTreeMap<String, ImageClass> {
    manifest_lookups(request, context, settings)
        .into_iter()
        .filter_map(|image| manifest_class(host, &image).map(|class| (image, class)))
        .collect()
}

/// What the image's manifest says, or `None` when the host cannot read it.
fn manifest_class(host: &mut dyn HostCalls, image: &str) -> Option<ImageClass> {
    let payload = serde_json::to_vec(image).ok()?;
    let answer = host.call("oci", "v1/oci_manifest", &payload)?;
    let manifest: Value = serde_json::from_slice(&answer).ok()?;
    if manifest.get("manifests").is_some() {
        return class_from_manifest(image, &manifest, None);
    }
    // A single-platform image: the platform is in its configuration.
    let answer = host.call("oci", "v1/oci_manifest_config", &payload)?;
    let both: Value = serde_json::from_slice(&answer).ok()?;
    class_from_manifest(image, &manifest, both.get("config"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{fixture, settings};
    use crate::host_answers::{HostAnswers, LabelSelector};
    use winplace_rules::input::{Limits, parse};
    use winplace_rules::model::cluster_objects::NODE_FIELDS;

    /// The host answers, with the label selector of every Node list asked.
    struct Recording<'h> {
        host: &'h HostAnswers,
        node_selectors: Vec<Option<String>>,
    }

    impl HostCalls for Recording<'_> {
        fn call(&mut self, namespace: &str, operation: &str, payload: &[u8]) -> Option<Vec<u8>> {
            let asked: Value = serde_json::from_slice(payload).unwrap();
            if asked["kind"] == "Node" {
                let selector = asked["label_selector"].as_str().map(str::to_string);
                self.node_selectors.push(selector);
            }
            self.host
                .answer("kubewarden", namespace, operation, payload)
                .ok()
        }
    }

    /// A host that predates label selectors: it answers every list whole.
    struct NoSelectors<'h>(&'h HostAnswers);

    impl HostCalls for NoSelectors<'_> {
        fn call(&mut self, namespace: &str, operation: &str, payload: &[u8]) -> Option<Vec<u8>> {
            let mut asked: Value = serde_json::from_slice(payload).unwrap();
            asked["label_selector"] = Value::Null;
            let payload = asked.to_string();
            self.0
                .answer("kubewarden", namespace, operation, payload.as_bytes())
                .ok()
        }
    }

    /// A cluster without a node labelled Linux, with a host that ignores selectors: each node counts once.
    #[test]
    fn a_host_without_selectors_counts_no_node_twice() {
        let whole_host = host();
        let not_linux = LabelSelector::parse(NOT_LINUX_NODES).unwrap();
        let mut windows = HostAnswers {
            lists: whole_host.lists.clone(),
            ..HostAnswers::default()
        };
        let nodes =
            not_linux.select(&whole_host.lists[&crate::host_answers::list_key("v1", "Node")]);
        assert_eq!(nodes["items"].as_array().unwrap().len(), 20);
        windows.insert_list("v1", "Node", nodes);
        let ask = json!({"api_version": "v1", "kind": "Node", "field_masks": NODE_FIELDS});
        let rcs = json!({"api_version": "node.k8s.io/v1", "kind": "RuntimeClass"});
        let answer = |ask: &Value| {
            let payload = ask.to_string();
            windows
                .answer(
                    "kubewarden",
                    "kubernetes",
                    "list_resources_all",
                    payload.as_bytes(),
                )
                .unwrap()
        };
        let whole = context_from_answers(&answer(&ask), &answer(&rcs)).unwrap();
        let settings = settings(json!({"contextAware": true}));
        let checker = Checker::builder()
            .settings(&settings)
            .cluster(&whole)
            .build();
        let mut asked_twice = 0;
        for (name, request) in requests() {
            let mut recording = Recording {
                host: &windows,
                node_selectors: Vec::new(),
            };
            review_with_host(request.clone(), &settings, &mut recording);
            asked_twice += usize::from(recording.node_selectors.len() == 2);
            let unselected =
                review_with_host(request.clone(), &settings, &mut NoSelectors(&windows));
            assert_eq!(unselected, review_checked(request, &checker), "{name}");
        }
        assert!(asked_twice > 20, "{asked_twice}");
    }

    /// A synthetic cluster of 160 nodes of which 20 run Windows, one of them without its
    /// `kubernetes.io/os` label (its `nodeInfo` says Windows), with the synthetic RuntimeClasses. A third
    /// of the nodes run an old kubelet and containerd (`nodeInfo` fields the policy does not ask for):
    /// a rule that read them of a context node would find otherwise with the whole nodes.
    fn host() -> HostAnswers {
        let mut nodes = winplace_synthetic::mixed_nodes(160, 20, 7);
        let unlabelled = nodes
            .iter_mut()
            .find(|n| {
                n.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("win22-"))
            })
            .unwrap();
        unlabelled
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .remove("kubernetes.io/os");
        for node in nodes.iter_mut().step_by(3) {
            let info = node
                .status
                .as_mut()
                .and_then(|s| s.node_info.as_mut())
                .unwrap();
            info.kubelet_version = "v1.24.17".into();
            info.container_runtime_version = "containerd://1.6.0".into();
            info.os_image = String::new();
        }
        let (_, _, rcs) = winplace_synthetic::synthetic_cluster(8, 0, 7);
        let rcs: Vec<_> = rcs.into_iter().map(|rc| rc.object).collect();
        let mut host = HostAnswers::default();
        host.insert_list("v1", "Node", json!({"kind": "NodeList", "items": nodes}));
        host.insert_list("node.k8s.io/v1", "RuntimeClass", json!({"items": rcs}));
        host
    }

    /// A CREATE of `object`.
    fn create(object: Value) -> AdmissionRequest {
        let kind = object["kind"].as_str().unwrap_or_default();
        let (group, version) = match object["apiVersion"].as_str().unwrap_or_default() {
            v if v.contains('/') => v.split_once('/').unwrap(),
            v => ("", v),
        };
        serde_json::from_value(
            json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": group, "version": version, "kind": kind}, "object": object}),
        )
        .unwrap()
    }

    /// What admission is asked about: the fixtures' requests, every workload of the corpus and the
    /// synthetic cluster's pods as they are created (without `nodeName` and status), one per pod spec.
    fn requests() -> Vec<(String, AdmissionRequest)> {
        let dir = |d: &str| {
            let path = format!("{}/{d}", env!("CARGO_MANIFEST_DIR"));
            let mut entries: Vec<_> = std::fs::read_dir(&path)
                .unwrap_or_else(|e| panic!("{path}: {e}"))
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            entries
        };
        let mut out = Vec::new();
        for path in dir("test_data") {
            if path.extension().is_some_and(|e| e == "json") {
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                let request = serde_json::from_value(fixture(&name)["request"].clone()).unwrap();
                out.push((name, request));
            }
        }
        for case in dir("../corpus") {
            let input = case.join("input.yaml");
            let Ok(text) = std::fs::read_to_string(&input) else {
                continue;
            };
            for doc in parse(&input.to_string_lossy(), &text, &Limits::default()).documents {
                let items = match doc.value["items"].as_array() {
                    Some(items) if doc.value["kind"] == "List" => items.clone(),
                    _ => vec![doc.value],
                };
                for object in items {
                    out.push((format!("{}", case.display()), create(object)));
                }
            }
        }
        let (_, pods, _) = winplace_synthetic::synthetic_cluster(160, 200, 7);
        let mut specs = std::collections::BTreeSet::new();
        for pod in pods {
            let mut pod = serde_json::to_value(pod).unwrap();
            pod["spec"].as_object_mut().unwrap().remove("nodeName");
            pod.as_object_mut().unwrap().remove("status");
            if !specs.insert(pod["spec"].to_string()) {
                continue;
            }
            let name = pod["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            out.push((name, create(pod)));
        }
        out
    }

    /// Asked narrowly (the nodes not labelled Linux first, all of them only when the rules need them,
    /// each pruned to `CONTEXT_NODE_FIELDS`), every request gets the decision it gets with the whole
    /// Node list trimmed as the audit keeps it (`NODE_FIELDS`: the whole `nodeInfo`), and a checker over
    /// the nodes held finds what one over the whole cluster finds wherever it says it may.
    #[test]
    fn narrow_requests_find_what_the_whole_list_finds() {
        let host = host();
        let whole_ask = json!({"api_version": "v1", "kind": "Node", "field_masks": NODE_FIELDS});
        let answer = |ask: &Value| {
            host.answer(
                "kubewarden",
                "kubernetes",
                "list_resources_all",
                ask.to_string().as_bytes(),
            )
            .unwrap()
        };
        let rcs = answer(&json!({"api_version": "node.k8s.io/v1", "kind": "RuntimeClass"}));
        let whole = context_from_answers(&answer(&whole_ask), &rcs).unwrap();
        let mut narrow_ask = whole_ask.clone();
        narrow_ask["label_selector"] = json!(NOT_LINUX_NODES);
        let held = context_from_answers(&answer(&narrow_ask), &rcs).unwrap();
        // 19 labelled Windows, and the one without the label.
        assert_eq!((whole.nodes.len(), held.nodes.len()), (160, 20));
        // What the policy asks for lacks the kubelet and containerd versions the whole nodes have.
        let kubelets = |ask: &Value| -> BTreeMap<String, usize> {
            let ctx = context_from_answers(&answer(ask), &rcs).unwrap();
            let mut seen = BTreeMap::new();
            for node in &ctx.nodes {
                let info = node.status.as_ref().and_then(|s| s.node_info.as_ref());
                *seen
                    .entry(info.map(|i| i.kubelet_version.clone()).unwrap_or_default())
                    .or_default() += 1;
            }
            seen
        };
        let asked =
            json!({"api_version": "v1", "kind": "Node", "field_masks": CONTEXT_NODE_FIELDS});
        assert_eq!(kubelets(&asked), BTreeMap::from([(String::new(), 160)]));
        assert_eq!(kubelets(&whole_ask).get("v1.24.17"), Some(&54));
        let settings = settings(json!({"contextAware": true}));
        let whole_checker = Checker::builder()
            .settings(&settings)
            .cluster(&whole)
            .build();
        let held_checker = Checker::builder()
            .settings(&settings)
            .cluster(&held)
            .build();
        let (mut narrow, mut all) = (Vec::new(), Vec::new());
        for (name, request) in requests() {
            let mut recording = Recording {
                host: &host,
                node_selectors: Vec::new(),
            };
            let asked = review_with_host(request.clone(), &settings, &mut recording);
            let expected = review_checked(request.clone(), &whole_checker);
            assert_eq!(asked, expected, "{name}");
            // A host that ignores the selectors answers every node to each list: no node counts twice.
            let unselected = review_with_host(request.clone(), &settings, &mut NoSelectors(&host));
            assert_eq!(
                unselected, expected,
                "{name}: a host without label selectors"
            );
            // Every node is asked for once at most: the two selectors split the cluster.
            let (linux, not_linux) = (Some(LINUX_NODES.to_string()), Some(NOT_LINUX_NODES.into()));
            match recording.node_selectors.as_slice() {
                [] => {}
                [only] if *only == not_linux => narrow.push(name.clone()),
                [a, b] if (a, b) == (&not_linux, &linux) => all.push(name.clone()),
                other => panic!("{name}: Node lists asked {other:?}"),
            }
            // The Linux nodes are asked for whenever the pod's own selectors may take it to one.
            if !recording.node_selectors.is_empty()
                && whole_checker.may_go_to_linux_nodes(&request.object)
            {
                assert_eq!(recording.node_selectors.len(), 2, "{name}");
            }
            if !held_checker.needs_linux_nodes(&request.object) {
                assert_eq!(
                    held_checker.check_value(request.object.clone()),
                    whole_checker.check_value(request.object.clone()),
                    "{name}"
                );
            }
        }
        // Both paths were taken: a pinned Windows workload needs only the nodes held; an unpinned one,
        // which the scheduler may put on a Linux node, needs them all.
        assert!(
            narrow.contains(&"deployment-windows-pinned.json".to_string()),
            "{narrow:?}"
        );
        assert!(
            all.contains(&"deployment-windows-unpinned.json".to_string()),
            "{all:?}"
        );
        eprintln!(
            "{} requests asked narrowly, {} for the whole list",
            narrow.len(),
            all.len()
        );
        assert!(narrow.len() > 20 && all.len() > 20, "{narrow:?} {all:?}");
    }
}
