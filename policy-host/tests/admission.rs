//! policy.wasm as policy-server runs it: every AdmissionReview fixture of `policy-wasm/test_data`, with and
//! without the host capabilities (Kubernetes lists, OCI manifests), mutation round trips and settings.
//!
//! Needs the built module: `cargo xtask build` (static/policy.wasm).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Node;
use serde_json::{Value, json};
use winplace_policy_host::{PolicyHost, built_policy, capability, test_cluster, test_data};
use winplace_policy_wasm::admission::{PATCH_PROPOSED, context_from_lists};
use winplace_policy_wasm::host_answers::{HostAnswers, LabelSelector, prune_items};
use winplace_rules::model::cluster_objects::{
    CONTEXT_NODE_FIELDS, LINUX_NODE_FIELDS, NODE_FIELDS, decode_node,
};
use winplace_rules::model::{node_os_build, node_windows_build};
use winplace_rules::{LINUX_NODES, NOT_LINUX_NODES};

fn fixture(name: &str) -> Value {
    test_data(name).unwrap_or_else(|e| panic!("{e}"))
}

fn request(name: &str) -> Value {
    fixture(&format!("{name}.json"))["request"].clone()
}

/// A host like policy-server: `capabilities` answered, everything else (but logging) refused.
fn host(capabilities: Option<HostAnswers>) -> PolicyHost {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    PolicyHost::new(&module, capabilities.map(capability)).unwrap_or_else(|e| panic!("{e}"))
}

fn cluster() -> HostAnswers {
    test_cluster().unwrap_or_else(|e| panic!("{e}"))
}

const LIST: &str = "kubewarden/kubernetes/list_resources_all";
const MANIFEST: &str = "kubewarden/oci/v1/oci_manifest";
const CONFIG: &str = "kubewarden/oci/v1/oci_manifest_config";

#[test]
fn every_fixture_gets_the_expected_answer() {
    // (fixture, with cluster, accepted, rule in the message, rule in the warnings). Same table as the
    // native admission tests, through wasmtime and waPC.
    let rows = [
        (
            "pod-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "windows-pod-without-build-selector",
        ),
        (
            "deployment-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        (
            "replicaset-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        (
            "statefulset-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        (
            "daemonset-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        (
            "job-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        (
            "cronjob-windows-unpinned",
            false,
            false,
            "spec.jobTemplate.spec.template.spec.nodeSelector",
            "",
        ),
        (
            "replicationcontroller-windows-unpinned",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        // Pinned to exactly 2022, which a supported 2025 host would also run: accepted; that an in-place
        // upgrade of the pool would strand it is information by default, not a warning.
        ("pod-windows-pinned", true, true, "", ""),
        ("deployment-windows-pinned", true, true, "", ""),
        ("replicaset-windows-pinned", true, true, "", ""),
        ("statefulset-windows-pinned", true, true, "", ""),
        ("daemonset-windows-pinned", true, true, "", ""),
        ("job-windows-pinned", true, true, "", ""),
        ("cronjob-windows-pinned", true, true, "", ""),
        ("replicationcontroller-windows-pinned", true, true, "", ""),
        (
            "pod-linux",
            false,
            true,
            "",
            "linux-pod-without-os-selector",
        ),
        ("pod-os-conflict", false, false, "os-conflict", ""),
        // A Node is warned, never rejected: a kubelet with a wrong label must still join.
        (
            "node-windows-build-label-mismatch",
            true,
            true,
            "",
            "windows-node-build-label-mismatch",
        ),
        ("node-windows", false, true, "", ""),
        (
            "runtimeclass-docker-handler",
            false,
            true,
            "",
            "runtimeclass-docker-handler",
        ),
        ("pod-delete", true, true, "", ""),
        ("pod-status-update", true, true, "", ""),
        // Labels changed, the pod template's spec did not: accepted untouched (its finding predates it).
        ("deployment-update-preexisting", false, true, "", ""),
        (
            "deployment-update-unpins",
            false,
            false,
            "windows-pod-without-os-selector",
            "",
        ),
        // Cluster-aware: the real nodes (Linux and Windows Server 2022 only).
        (
            "pod-windows-unpinned",
            true,
            false,
            "schedulable-on-wrong-os",
            "",
        ),
        (
            "deployment-windows-build-26100",
            true,
            false,
            "no-schedulable-node",
            "",
        ),
        ("deployment-windows-build-26100", false, true, "", ""),
        ("deployment-windows-runtimeclass", true, true, "", ""),
    ];
    let with = host(Some(cluster()));
    let without = host(None);
    for (name, with_cluster, accepted, in_message, in_warnings) in rows {
        let (h, settings) = if with_cluster {
            (&with, json!({"contextAware": true}))
        } else {
            (&without, json!({}))
        };
        let response = h.validate(&request(name), &settings).unwrap();
        assert_eq!(response["accepted"], json!(accepted), "{name}: {response}");
        let message = response["message"].as_str().unwrap_or_default();
        assert!(message.contains(in_message), "{name}: {message}");
        let warnings = response["warnings"].to_string();
        assert!(warnings.contains(in_warnings), "{name}: {warnings}");
        assert!(
            response["mutatedObject"].is_null() && response["mutated_object"].is_null(),
            "{name}: {response}"
        );
    }
}

#[test]
fn context_is_read_only_when_the_settings_say_it_is_granted() {
    // policy-server logs an error for every request whose policy lists resources it was not granted: a
    // policy without `contextAware` asks for nothing, even from a host that would answer.
    let h = host(Some(cluster()));
    for name in ["deployment-windows-pinned", "pod-windows-unpinned"] {
        h.clear_host_calls();
        h.validate(&request(name), &json!({})).unwrap();
        h.validate(&request(name), &json!({"contextAware": false}))
            .unwrap();
        assert!(h.capability_calls().is_empty(), "{name}");
    }
    // Without it the settings stand in for the cluster: the 26100 pod is accepted (no Node to say no
    // node runs that build); with it, the real nodes reject it.
    let r = request("deployment-windows-build-26100");
    assert_eq!(h.validate(&r, &json!({})).unwrap()["accepted"], json!(true));
    let answer = h.validate(&r, &json!({"contextAware": true})).unwrap();
    assert_eq!(answer["accepted"], json!(false), "{answer}");
}

#[test]
fn context_is_read_for_workloads_only_and_its_absence_falls_back_to_settings() {
    let h = host(Some(cluster()));
    let aware = json!({"contextAware": true});
    h.validate(&request("deployment-windows-pinned"), &aware)
        .unwrap();
    let calls: Vec<String> = h
        .capability_calls()
        .iter()
        .map(|c| c.call.clone())
        .collect();
    assert_eq!(calls, [LIST, LIST]);
    let asked: Vec<Value> = h
        .capability_calls()
        .iter()
        .map(|c| serde_json::from_slice(&c.payload).unwrap())
        .collect();
    // The RuntimeClasses first (whether the pod's selectors, merged with its RuntimeClass, let it go to
    // a Linux node), whole.
    assert_eq!(asked[0]["api_version"], "node.k8s.io/v1");
    assert_eq!(asked[0]["kind"], "RuntimeClass");
    assert_eq!(asked[0]["field_masks"], Value::Null);
    assert_eq!(asked[1]["api_version"], "v1");
    assert_eq!(asked[1]["kind"], "Node");
    // A pinned Windows workload: only the nodes not labelled Linux (the scheduler cannot put it on one).
    assert_eq!(asked[1]["label_selector"], NOT_LINUX_NODES);
    // Only the node fields the rules read of a context node (a host that prunes sends 5,000 nodes
    // without their images, and of their nodeInfo only the OS and kernel version).
    let masks: BTreeSet<&str> = asked[1]["field_masks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(masks, CONTEXT_NODE_FIELDS.iter().copied().collect());

    // An unpinned one may land on a Linux node by its own selectors: the others, then the Linux nodes
    // straight away (without their nodeInfo).
    h.clear_host_calls();
    h.validate(&request("deployment-windows-unpinned"), &aware)
        .unwrap();
    let asked: Vec<(Value, Value, Value)> = h
        .capability_calls()
        .iter()
        .map(|c| serde_json::from_slice::<Value>(&c.payload).unwrap())
        .map(|asked| {
            let masks = asked["field_masks"].clone();
            (
                asked["kind"].clone(),
                asked["label_selector"].clone(),
                masks,
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            (json!("RuntimeClass"), Value::Null, Value::Null),
            (
                json!("Node"),
                json!(NOT_LINUX_NODES),
                json!(CONTEXT_NODE_FIELDS)
            ),
            (json!("Node"), json!(LINUX_NODES), json!(LINUX_NODE_FIELDS))
        ]
    );

    // Node and RuntimeClass objects, DELETE and subresources: no host call.
    for name in [
        "node-windows",
        "runtimeclass-docker-handler",
        "pod-delete",
        "pod-status-update",
    ] {
        h.clear_host_calls();
        h.validate(&request(name), &aware).unwrap();
        assert!(
            h.capability_calls().is_empty(),
            "{name}: {:?}",
            h.capability_calls()
        );
    }
    // Exempt namespace: no host call either.
    h.clear_host_calls();
    let r = h
        .validate(
            &request("pod-windows-unpinned"),
            &json!({"exemptNamespaces": ["default"], "contextAware": true}),
        )
        .unwrap();
    assert_eq!(r["accepted"], json!(true));
    assert!(h.capability_calls().is_empty());

    // contextAware but the host refuses (kwctl run without --allow-context-aware): the settings stand in.
    let h = host(None);
    let r = h
        .validate(&request("deployment-windows-build-26100"), &aware)
        .unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    assert_eq!(
        h.capability_calls()
            .into_iter()
            .map(|c| c.call)
            .collect::<Vec<_>>(),
        [LIST],
        "the RuntimeClass list failed: Nodes are not asked"
    );

    // Nodes granted but RuntimeClasses not: no context at all (half a cluster would mislead).
    let mut half = HostAnswers::default();
    half.insert_list("v1", "Node", fixture("context/nodes.json"));
    let h = host(Some(half));
    let r = h
        .validate(&request("deployment-windows-build-26100"), &aware)
        .unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    assert_eq!(h.capability_calls().len(), 1);

    // RuntimeClasses granted but Nodes not: no context either.
    let mut half = HostAnswers::default();
    half.insert_list(
        "node.k8s.io/v1",
        "RuntimeClass",
        fixture("context/runtimeclasses.json"),
    );
    let h = host(Some(half));
    let r = h
        .validate(&request("deployment-windows-build-26100"), &aware)
        .unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    assert_eq!(h.capability_calls().len(), 2);
}

#[test]
fn manifests_are_looked_up_once_per_image_per_request() {
    let mut caps = cluster();
    caps.manifests.insert(
        "registry.example.com/shop/win-api:2.3".into(),
        fixture("context/manifest-index-windows-20348-linux.json"),
    );
    // win-init is a single-platform image: manifest, then its config.
    let single = fixture("context/manifest-config-windows-20348.json");
    caps.manifests.insert(
        "registry.example.com/shop/win-init:1.0".into(),
        single["manifest"].clone(),
    );
    caps.configs.insert(
        "registry.example.com/shop/win-init:1.0".into(),
        single.clone(),
    );
    let h = host(Some(caps));
    let granted = json!({"registryAware": true});
    for _ in 0..2 {
        h.clear_host_calls();
        let r = h
            .validate(&request("pod-windows-private-images-repeated"), &granted)
            .unwrap();
        assert_eq!(r["accepted"], json!(true), "{r}");
        // Both builds known from the manifests: no unknown-build warning left.
        assert!(r["warnings"].is_null(), "{r}");
        let oci: Vec<(String, Value)> = h
            .capability_calls()
            .into_iter()
            .filter(|c| c.call.starts_with("kubewarden/oci/"))
            .map(|c| (c.call, serde_json::from_slice(&c.payload).unwrap()))
            .collect();
        assert_eq!(
            oci,
            [
                (
                    MANIFEST.to_string(),
                    json!("registry.example.com/shop/win-init:1.0")
                ),
                (
                    CONFIG.to_string(),
                    json!("registry.example.com/shop/win-init:1.0")
                ),
                (
                    MANIFEST.to_string(),
                    json!("registry.example.com/shop/win-api:2.3")
                ),
            ]
        );
    }
}

#[test]
fn manifests_are_asked_only_when_the_settings_say_the_registry_is_granted() {
    // A policy cannot tell what it was granted, and policy-server logs an ERROR for every denied call, on
    // every request (docs/reference/kubewarden-hosting.md §5): without `registryAware` no OCI call is made,
    // even by a host that would answer, and the image keeps what its name says.
    let image = "registry.example.com/shop/win-api:2.3";
    let mut caps = HostAnswers::default();
    caps.manifests.insert(
        image.into(),
        fixture("context/manifest-index-windows-17763.json"),
    );
    let h = host(Some(caps));
    let r = request("pod-windows-private-image");
    // (settings, OCI calls, accepted): the 2019 image pinned to 2022 is rejected once its manifest is read.
    let rows = [
        (json!({}), 0, true),
        (json!({"registryAware": false}), 0, true),
        (
            json!({"registryAware": false, "contextAware": true}),
            0,
            true,
        ),
        (json!({"registryAware": true}), 1, false),
    ];
    for (settings, calls, accepted) in rows {
        h.clear_host_calls();
        let answer = h.validate(&r, &settings).unwrap();
        let oci: Vec<String> = h
            .capability_calls()
            .into_iter()
            .map(|c| c.call)
            .filter(|c| c.starts_with("kubewarden/oci/"))
            .collect();
        assert_eq!(oci.len(), calls, "{settings}: {oci:?}");
        assert_eq!(answer["accepted"], json!(accepted), "{settings}: {answer}");
        if calls == 0 {
            assert!(
                answer["warnings"]
                    .to_string()
                    .contains("windows-image-build-unknown"),
                "{settings}: {answer}"
            );
        }
    }
}

#[test]
fn manifests_decide_builds_and_failed_lookups_only_warn() {
    let image = "registry.example.com/shop/win-api:2.3";
    let r = request("pod-windows-private-image");
    let granted = json!({"registryAware": true});
    // Built for Windows Server 2019, pinned to 2022: rejected (process isolation needs the same build).
    let mut caps = HostAnswers::default();
    caps.manifests.insert(
        image.into(),
        fixture("context/manifest-index-windows-17763.json"),
    );
    let h = host(Some(caps));
    let response = h.validate(&r, &granted).unwrap();
    assert_eq!(response["accepted"], json!(false), "{response}");
    assert!(
        response["message"]
            .as_str()
            .unwrap_or_default()
            .contains("windows-build-mismatch")
    );
    // The lookup fails (no OCI capability, no registry): accepted with the unknown-build warning.
    let h = host(None);
    let response = h.validate(&r, &granted).unwrap();
    assert_eq!(response["accepted"], json!(true), "{response}");
    assert!(
        response["warnings"]
            .to_string()
            .contains("windows-image-build-unknown"),
        "{response}"
    );
    let calls: Vec<String> = h.capability_calls().into_iter().map(|c| c.call).collect();
    assert_eq!(calls, [MANIFEST], "one manifest try, no list");
}

#[test]
fn mutation_round_trip_for_every_kind() {
    let h = host(Some(cluster()));
    let settings = json!({"mutate": true, "contextAware": true});
    for kind in [
        "pod",
        "deployment",
        "replicaset",
        "statefulset",
        "daemonset",
        "job",
        "cronjob",
        "replicationcontroller",
    ] {
        let mut r = request(&format!("{kind}-windows-unpinned"));
        let response = h.validate(&r, &settings).unwrap();
        assert_eq!(response["accepted"], json!(true), "{kind}: {response}");
        let mutated = response["mutated_object"].clone();
        assert!(mutated.is_object(), "{kind}: {response}");
        // Each applied fix is named with what the patch does, in words that stay true where the
        // ClusterAdmissionPolicy is validate-only and policy-server applies nothing: not applied unless
        // the policy is mutating.
        let warnings = response["warnings"].to_string();
        assert!(
            warnings.contains(&format!("{PATCH_PROPOSED}: ")),
            "{kind}: {response}"
        );
        assert!(
            !warnings.contains("fixed") && !warnings.contains("winplace's patch: "),
            "{kind}: {response}"
        );
        // The mutated object passes validation as it is.
        r["object"] = mutated;
        let again = h.validate(&r, &json!({"contextAware": true})).unwrap();
        assert_eq!(again["accepted"], json!(true), "{kind}: {again}");
    }
    // What no fix repairs is still rejected.
    let response = h.validate(&request("pod-os-conflict"), &settings).unwrap();
    assert_eq!(response["accepted"], json!(false), "{response}");
    assert!(response["mutated_object"].is_null());
}

/// The placement controller's Lease as the API server answers a GET of it, renewed `ago` seconds ago
/// by the real clock (policy.wasm judges it by its host's WASI clock, as under policy-server), with
/// `holder` (`None`: released).
fn lease(namespace: &str, holder: Option<&str>, ago: i64) -> Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let renewed = k8s_openapi::jiff::Timestamp::new(now.as_secs() as i64 - ago, 0).unwrap();
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "winplace-placer", "namespace": namespace, "resourceVersion": "7"},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "leaseTransitions": 0,
                 "acquireTime": renewed.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
                 "renewTime": renewed.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()}})
}

/// A host that answers `get_resource` of `lease` (and nothing else).
fn with_lease(lease: Option<Value>) -> PolicyHost {
    let mut answers = HostAnswers::default();
    if let Some(lease) = lease {
        answers.insert_object(lease);
    }
    host(Some(answers))
}

/// Through wasmtime: with `placementGate` and a placement controller holding its
/// Lease fresh, a Pod CREATE whose image leaves its OS and build open is accepted with the scheduling
/// gate and its label added and no pin (and no registry call); one whose image names its build is repaired as before,
/// without the gate.
#[test]
fn the_placement_gate_is_added_to_unplaced_pod_creates() {
    let h = with_lease(Some(lease("winplace", Some("placer-0"), 1)));
    let settings = json!({"mutate": true, "placementGate": true});
    let mut r = request("pod-windows-private-image");
    let spec = r["object"]["spec"].as_object_mut().unwrap();
    spec.remove("nodeSelector");
    spec.remove("tolerations");
    let response = h.validate(&r, &settings).unwrap();
    assert_eq!(response["accepted"], json!(true), "{response}");
    let mut expected = r["object"].clone();
    expected["spec"]["schedulingGates"] = json!([{"name": "winplace.io/placement"}]);
    expected["metadata"]["labels"]["winplace.io/placement"] = json!("gated");
    assert_eq!(response["mutated_object"], expected, "{response}");
    // One host call: the Lease, by the SDK's GetResourceRequest; no registry call at admission.
    let calls = h.capability_calls();
    assert_eq!(calls.len(), 1, "{:?}", h.host_calls());
    assert_eq!(calls[0].call, "kubewarden/kubernetes/get_resource");
    let asked: Value = serde_json::from_slice(&calls[0].payload).unwrap();
    assert_eq!(
        asked,
        json!({"api_version": "coordination.k8s.io/v1", "kind": "Lease", "namespace": "winplace",
               "name": "winplace-placer", "disable_cache": false})
    );
    // Named by its image, the Windows Server 2022 pod is pinned by the fixes, not gated (the Lease is
    // read for every Pod CREATE the setting covers: one cached host call).
    let response = h
        .validate(&request("pod-windows-unpinned"), &settings)
        .unwrap();
    assert!(
        response["mutated_object"]["spec"]
            .get("schedulingGates")
            .is_none(),
        "{response}"
    );
    assert!(
        h.capability_calls()
            .iter()
            .all(|c| c.call == "kubewarden/kubernetes/get_resource"),
        "{:?}",
        h.host_calls()
    );
    // The setting needs `mutate`.
    let answer = h
        .call("validate_settings", &json!({"placementGate": true}))
        .unwrap();
    assert_eq!(answer["valid"], json!(false), "{answer}");
    assert!(
        answer["message"].to_string().contains("placementGate"),
        "{answer}"
    );
    // The Lease's place is a setting, checked by name.
    let answer = h
        .call(
            "validate_settings",
            &json!({"mutate": true, "placementGate": true, "placementLeaseNamespace": "Ops"}),
        )
        .unwrap();
    assert_eq!(answer["valid"], json!(false), "{answer}");
    assert!(
        answer["message"]
            .to_string()
            .contains("placementLeaseNamespace"),
        "{answer}"
    );
}

/// Through wasmtime: no live controller, no gate. With the Lease expired, released
/// (no holder, as client-go gives it up), missing, in another namespace than the settings name, or not
/// granted at all, the pod is answered exactly as without `placementGate` (its checks and fixes still
/// apply); with the settings naming where the fresh Lease is, it is gated again.
#[test]
fn the_placement_gate_waits_for_a_live_controller() {
    let mut r = request("pod-windows-private-image");
    let spec = r["object"]["spec"].as_object_mut().unwrap();
    spec.remove("nodeSelector");
    spec.remove("tolerations");
    let gate = json!({"mutate": true, "placementGate": true});
    let without = with_lease(None)
        .validate(&r, &json!({"mutate": true}))
        .unwrap();
    assert!(
        without["mutated_object"]["spec"]
            .get("schedulingGates")
            .is_none(),
        "{without}"
    );
    let gated = |response: &Value| {
        response["mutated_object"]["spec"]["schedulingGates"]
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g["name"] == "winplace.io/placement"))
    };
    for (case, h) in [
        (
            "expired",
            with_lease(Some(lease("winplace", Some("placer-0"), 60))),
        ),
        ("released", with_lease(Some(lease("winplace", None, 0)))),
        ("missing", with_lease(None)),
        (
            "elsewhere",
            with_lease(Some(lease("ops", Some("placer-0"), 1))),
        ),
        ("not granted", host(None)),
    ] {
        let response = h.validate(&r, &gate).unwrap();
        assert_eq!(response, without, "{case}");
        assert!(!gated(&response), "{case}: {response}");
        assert_eq!(
            h.host_calls()
                .iter()
                .filter(|c| c.ends_with("get_resource"))
                .count(),
            1,
            "{case}: {:?}",
            h.host_calls()
        );
    }
    // The Lease where the settings say it is.
    let h = with_lease(Some(lease("ops", Some("placer-0"), 1)));
    let mut elsewhere = gate.clone();
    elsewhere["placementLeaseNamespace"] = json!("ops");
    assert!(gated(&h.validate(&r, &elsewhere).unwrap()));
}

/// Issue 25 through wasmtime: mutation pins the range of builds (or, on OpenShift, exactly the image's
/// build), widens an exact pin, warns about resizePolicy, and reads index entries' os.features as
/// containerd 2.3+ does.
#[test]
fn pins_are_ranges_unless_the_platform_wants_the_exact_build() {
    let h = host(None);
    let template =
        |response: &Value| response["mutated_object"]["spec"]["template"]["spec"].clone();
    let range = json!([{"matchExpressions": [{"key": "node.kubernetes.io/windows-build",
        "operator": "In", "values": ["10.0.20348", "10.0.26100"]}]}]);
    // An ltsc2022 Deployment with no build selector, no context: the range as required affinity.
    let unpinned = request("deployment-windows-unpinned");
    let r = h.validate(&unpinned, &json!({"mutate": true})).unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    let spec = template(&r);
    assert_eq!(
        spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"],
        range,
        "{r}"
    );
    assert_eq!(
        spec["nodeSelector"],
        json!({"kubernetes.io/os": "windows"}),
        "{r}"
    );
    // The OpenShift preset pins exactly the image's build, in the nodeSelector.
    let r = h
        .validate(&unpinned, &json!({"mutate": true, "platform": "openshift"}))
        .unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    let spec = template(&r);
    assert_eq!(
        spec["nodeSelector"],
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}),
        "{r}"
    );
    assert!(spec.get("affinity").is_none(), "{r}");
    // An exact pin is warned about where the settings raise the rule; mutation widens it to the range.
    let pinned = request("deployment-windows-pinned");
    let r = h
        .validate(
            &pinned,
            &json!({"severity": {"windows-build-pin-too-narrow": "warning"}}),
        )
        .unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    assert!(
        r["warnings"]
            .to_string()
            .contains("windows-build-pin-too-narrow"),
        "{r}"
    );
    let r = h.validate(&pinned, &json!({"mutate": true})).unwrap();
    let spec = template(&r);
    assert_eq!(
        spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"],
        range,
        "{r}"
    );
    assert_eq!(
        spec["nodeSelector"],
        json!({"kubernetes.io/os": "windows"}),
        "{r}"
    );
    let r = h
        .validate(&pinned, &json!({"buildPinning": "exact"}))
        .unwrap();
    assert!(
        !r["warnings"]
            .to_string()
            .contains("windows-build-pin-too-narrow"),
        "{r}"
    );
    // resizePolicy: the pod is accepted; the warning says the resize will be refused.
    let mut resizable = pinned.clone();
    resizable["object"]["spec"]["template"]["spec"]["containers"][0]["resizePolicy"] =
        json!([{"resourceName": "cpu", "restartPolicy": "NotRequired"}]);
    let r = h.validate(&resizable, &json!({})).unwrap();
    assert_eq!(r["accepted"], json!(true), "{r}");
    assert!(r["warnings"].to_string().contains("resizePolicy"), "{r}");
    // os.features: win32k is ignored, any other feature keeps a Windows node's containerd 2.3+ from
    // picking the entry. Pinned to 2022, the only entry it could pick is 2019's: a mismatch.
    let mut caps = HostAnswers::default();
    caps.manifests.insert(
        "registry.example.com/shop/win-api:2.3".into(),
        json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": [
            {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": format!("sha256:{}", "a".repeat(64)), "size": 1,
             "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.17763.1", "os.features": ["win32k"]}},
            {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": format!("sha256:{}", "b".repeat(64)), "size": 1,
             "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1", "os.features": ["sse4"]}}]}),
    );
    let r = host(Some(caps))
        .validate(
            &request("pod-windows-private-image"),
            &json!({"registryAware": true}),
        )
        .unwrap();
    assert_eq!(r["accepted"], json!(false), "{r}");
    assert!(
        r["message"].to_string().contains("windows-build-mismatch"),
        "{r}"
    );
}

#[test]
fn settings_errors_name_the_setting() {
    let h = host(None);
    let rows = [
        (json!({}), true, ""),
        (
            json!({"mutate": true, "severity": {"windows-image-build-unknown": "error"}}),
            true,
            "",
        ),
        (
            json!({"supportedBuilds": ["10.0.20348", "ltsc2022"]}),
            false,
            "supportedBuilds[1]",
        ),
        (json!({"windowsTaint": []}), false, "windowsTaint"),
        (json!({"mutate": "yes"}), false, "invalid type"),
        (
            json!({"disabledRules": ["no-such-rule"]}),
            false,
            "disabledRules[0]",
        ),
        (json!({"buildPinning": "exact"}), true, ""),
        (
            json!({"buildPinning": "loose"}),
            false,
            "buildPinning: unknown variant `loose`, expected `range` or `exact`",
        ),
    ];
    for (settings, valid, named) in rows {
        let answer = h.call("validate_settings", &settings).unwrap();
        assert_eq!(answer["valid"], json!(valid), "{settings}: {answer}");
        assert!(
            answer["message"]
                .as_str()
                .unwrap_or_default()
                .contains(named),
            "{settings}: {answer}"
        );
    }
}

#[test]
fn requests_without_a_usable_object_are_rejected_with_a_reason() {
    let h = host(None);
    let pod = request("pod-windows-pinned");
    let with_object = |object: Value| {
        let mut r = pod.clone();
        r["object"] = object;
        r
    };
    let mut no_object = pod.clone();
    no_object.as_object_mut().unwrap().remove("object");
    let mut deployment_kind = pod.clone();
    deployment_kind["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let rows = [
        (no_object, "has no object"),
        (with_object(Value::Null), "has no object"),
        (
            with_object(json!([pod["object"]])),
            "has an array as its object",
        ),
        (with_object(json!("Pod")), "has a string as its object"),
        (deployment_kind, "but its object is a Pod (v1)"),
    ];
    for (r, reason) in rows {
        let answer = h.validate(&r, &json!({"mutate": true})).unwrap();
        assert_eq!(answer["accepted"], json!(false), "{reason}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("winplace cannot check this request: ") && message.contains(reason),
            "{message}"
        );
    }
    // Not evaluated at all (DELETE has no object): still accepted.
    let answer = h.validate(&request("pod-delete"), &json!({})).unwrap();
    assert_eq!(answer["accepted"], json!(true), "{answer}");
}

#[test]
fn nodes_pruned_to_the_asked_fields_read_as_whole_ones() {
    // NODE_FIELDS are what the trim keeps: every node, pruned so, must decode to the trimmed whole node
    // (a field the trim keeps but the masks drop would fail here). The policy asks for less,
    // CONTEXT_NODE_FIELDS: every node pruned so must give the rules what they read of a context node
    // (OS, build, labels, taints, cordon, declared features) as the whole node does. The fixture's nodes
    // and a synthetic cluster's (taints, cordons, build labels, nodeInfo of every pool).
    let (synthetic, _, _) = winplace_synthetic::synthetic_cluster(60, 0, 7);
    let lists = [
        fixture("context/nodes.json"),
        json!({"items": serde_json::to_value(synthetic).unwrap()}),
    ];
    let read = |node: &Node| {
        let spec = node.spec.clone().unwrap_or_default();
        let features = node
            .status
            .as_ref()
            .and_then(|s| s.declared_features.clone());
        (
            node_os_build(node),
            node_windows_build(node),
            node.metadata.name.clone(),
            node.metadata.labels.clone(),
            (spec.taints, spec.unschedulable),
            features,
        )
    };
    for list in lists {
        let pruned = prune_items(&list, NODE_FIELDS);
        let asked = prune_items(&list, CONTEXT_NODE_FIELDS);
        assert!(
            asked.to_string().len() < pruned.to_string().len()
                && pruned.to_string().len() < list.to_string().len(),
            "nothing pruned"
        );
        let (whole, pruned, asked) = (
            list["items"].as_array().unwrap(),
            pruned["items"].as_array().unwrap(),
            asked["items"].as_array().unwrap(),
        );
        assert_eq!(whole.len(), pruned.len());
        assert_eq!(whole.len(), asked.len());
        for ((w, p), a) in whole.iter().zip(pruned).zip(asked) {
            let whole = decode_node(w).unwrap();
            assert_eq!(decode_node(p).unwrap(), whole, "{w}");
            assert_eq!(read(&decode_node(a).unwrap()), read(&whole), "{w}");
        }
    }
}

#[test]
fn the_page_host_answers_the_guest_s_list_request_as_wasmtime_does() {
    // The dashboard's host grants the playground's context (HostAnswers::for_context), the wasmtime host
    // the fixture's Lists: both must answer the request policy.wasm really sends (its field_masks) with
    // the asked fields only. They once disagreed: the page answered whole items.
    let h = host(Some(cluster()));
    h.validate(
        &request("deployment-windows-pinned"),
        &json!({"contextAware": true}),
    )
    .unwrap();
    let calls = h.capability_calls();
    let asked: Vec<&[u8]> = calls.iter().map(|c| c.payload.as_slice()).collect();
    assert_eq!(asked.len(), 2, "{calls:?}");
    let context = context_from_lists(
        &fixture("context/nodes.json"),
        &fixture("context/runtimeclasses.json"),
    )
    .unwrap();
    let page = HostAnswers::for_context(Some(&context));
    let wasmtime = cluster();
    // The nodes asked for: those not labelled Linux (the pinned Deployment cannot go to one).
    let selected = LabelSelector::parse(NOT_LINUX_NODES)
        .unwrap()
        .select(&fixture("context/nodes.json"));
    let selected = prune_items(&selected, CONTEXT_NODE_FIELDS);
    let context = context_from_lists(&selected, &fixture("context/runtimeclasses.json")).unwrap();
    assert!(!context.nodes.is_empty());
    let answer = |host: &HostAnswers, payload: &[u8]| -> Value {
        let bytes = host
            .answer("kubewarden", "kubernetes", "list_resources_all", payload)
            .unwrap_or_else(|e| panic!("{e}"));
        serde_json::from_slice(&bytes).unwrap()
    };
    for host in [&page, &wasmtime] {
        let nodes = answer(host, asked[1]);
        assert_eq!(prune_items(&nodes, CONTEXT_NODE_FIELDS), nodes, "{nodes}");
        // As policy-server's reflector keeps them: the data pruned to the masks (the metadata whole).
        for item in nodes["items"].as_array().unwrap() {
            let status: BTreeSet<&str> = item["status"]
                .as_object()
                .into_iter()
                .flat_map(|s| s.keys().map(String::as_str))
                .collect();
            assert!(
                status.is_subset(&BTreeSet::from(["nodeInfo", "declaredFeatures"])),
                "{item}"
            );
            assert_eq!(item["metadata"]["managedFields"], json!([]), "{item}");
        }
        let both = context_from_lists(&nodes, &answer(host, asked[0])).unwrap();
        assert_eq!(both, context);
    }
}

/// The metered host (examples/guest_memory.rs) runs the guest as the plain one does and records a high
/// water mark that only grows: the same answer on the context-aware fixture, a peak at least the size the
/// module starts with, and no smaller after more calls.
#[test]
fn the_guest_memory_meter_reads_a_high_water_mark() {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    let (metered, meter) = PolicyHost::new_metered(&module, Some(capability(cluster())))
        .unwrap_or_else(|e| panic!("{e}"));
    let start = meter.peak_bytes();
    assert!(
        start >= 64 * 1024,
        "a wasm memory is at least one page: {start}"
    );
    let req = request("deployment-windows-unpinned");
    let settings = json!({"contextAware": true});
    let answer = metered
        .validate(&req, &settings)
        .unwrap_or_else(|e| panic!("{e}"));
    let plain = host(Some(cluster()))
        .validate(&req, &settings)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer, plain);
    let one = meter.peak_bytes();
    assert!(one >= start);
    metered
        .validate(&req, &settings)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(meter.peak_bytes() >= one);
    assert!(meter.peak_bytes() < 256 << 20, "{}", meter.peak_bytes());
}
