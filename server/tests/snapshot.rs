//! The snapshot source with files shaped like real `kubectl get nodes,pods,runtimeclasses -A -o json`
//! (and `-o yaml`) output: `List` envelopes, managedFields, status, v1beta1 RuntimeClasses, other kinds.

use futures::StreamExt;
use winplace::source::ClusterSource;
use winplace::source::objects::ClusterObjects;
use winplace::source::snapshot::SnapshotSource;
use winplace_rules::audit::Change;

/// Abridged from `kubectl get nodes,pods,runtimeclasses -A -o json` on AKS 1.33.
const KUBECTL_JSON: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                "creationTimestamp": "2025-05-12T08:00:00Z",
                "labels": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348", "kubernetes.io/hostname": "akswin22000000"},
                "managedFields": [
                    {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/os": {}}}}, "manager": "kubelet.exe", "operation": "Update", "time": "2025-05-12T08:00:00Z"},
                    {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}, "manager": "kubelet.exe", "operation": "Update", "subresource": "status", "time": "2025-05-14T09:30:00Z"}
                ],
                "name": "akswin22000000",
                "resourceVersion": "2214871",
                "uid": "5b0c3b9e-2f0e-4c55-9d3b-7d1c8a0e4f11"
            },
            "spec": {"providerID": "azure:///subscriptions/x/virtualMachines/0", "taints": [{"effect": "NoSchedule", "key": "os", "value": "windows"}]},
            "status": {
                "addresses": [{"address": "10.224.0.4", "type": "InternalIP"}, {"address": "akswin22000000", "type": "Hostname"}],
                "allocatable": {"cpu": "3860m", "ephemeral-storage": "133578691Ki", "memory": "12895780Ki", "pods": "30"},
                "capacity": {"cpu": "4", "ephemeral-storage": "133578691Ki", "memory": "16776740Ki", "pods": "30"},
                "conditions": [{"lastHeartbeatTime": "2025-05-14T09:30:00Z", "lastTransitionTime": "2025-05-12T08:00:00Z", "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": [{"names": ["mcr.microsoft.com/windows/servercore@sha256:0f2b", "mcr.microsoft.com/windows/servercore:ltsc2022"], "sizeBytes": 2214567890}],
                "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7.20+azure", "kernelVersion": "10.0.20348.2762", "kubeProxyVersion": "v1.33.4", "kubeletVersion": "v1.33.4", "machineID": "akswin22000000", "operatingSystem": "windows", "osImage": "Windows Server 2022 Datacenter", "systemUUID": "5A3C"}
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": "2025-05-14T09:30:00Z",
                "generateName": "storefront-6c8d9f7b5d-",
                "labels": {"app": "storefront", "pod-template-hash": "6c8d9f7b5d"},
                "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}}}, "manager": "kube-controller-manager", "operation": "Update", "time": "2025-05-14T09:30:00Z"}],
                "name": "storefront-6c8d9f7b5d-h7p2w",
                "namespace": "shop",
                "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true, "kind": "ReplicaSet", "name": "storefront-6c8d9f7b5d", "uid": "0c1d"}],
                "resourceVersion": "2214901",
                "uid": "9d8e"
            },
            "spec": {
                "containers": [{"image": "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2022", "imagePullPolicy": "IfNotPresent", "name": "web", "resources": {}, "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
                "dnsPolicy": "ClusterFirst", "enableServiceLinks": true, "nodeName": "akswin22000000",
                "nodeSelector": {"kubernetes.io/os": "windows"},
                "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always", "schedulerName": "default-scheduler",
                "securityContext": {}, "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
                "tolerations": [{"effect": "NoSchedule", "key": "os", "operator": "Equal", "value": "windows"}, {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}]
            },
            "status": {
                "conditions": [{"lastProbeTime": null, "lastTransitionTime": "2025-05-14T09:31:00Z", "status": "True", "type": "Ready"}],
                "containerStatuses": [{"containerID": "containerd://4f1e", "image": "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2022", "imageID": "mcr.microsoft.com/dotnet/framework/aspnet@sha256:77aa", "lastState": {}, "name": "web", "ready": true, "restartCount": 0, "started": true, "state": {"running": {"startedAt": "2025-05-14T09:31:00Z"}}}],
                "hostIP": "10.224.0.4", "hostIPs": [{"ip": "10.224.0.4"}], "phase": "Running", "podIP": "10.244.1.12", "podIPs": [{"ip": "10.244.1.12"}], "qosClass": "BestEffort", "startTime": "2025-05-14T09:30:00Z"
            }
        },
        {
            "apiVersion": "node.k8s.io/v1",
            "handler": "runhcs-wcow-process",
            "kind": "RuntimeClass",
            "metadata": {"creationTimestamp": "2025-05-12T08:00:00Z", "name": "windows-2022", "resourceVersion": "812", "uid": "aa01"},
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}, "tolerations": [{"effect": "NoSchedule", "key": "os", "operator": "Equal", "value": "windows"}]}
        },
        {
            "apiVersion": "node.k8s.io/v1beta1",
            "handler": "runhcs-wcow-process",
            "kind": "RuntimeClass",
            "metadata": {"name": "legacy", "resourceVersion": "13"}
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "kubernetes", "namespace": "default"},
            "spec": {"clusterIP": "10.0.0.1", "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 443}]}
        }
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}
"#;

#[test]
fn kubectl_json_reads_nodes_pods_and_both_runtimeclass_versions() {
    let o = ClusterObjects::parse("cluster.json", KUBECTL_JSON).expect("parses");
    assert_eq!(
        (
            o.nodes.len(),
            o.pods.len(),
            o.runtime_classes.len(),
            o.skipped
        ),
        (1, 1, 2, 1)
    );
    assert!(
        o.nodes[0].metadata.managed_fields.is_none(),
        "managedFields dropped"
    );
    assert!(
        o.nodes[0]
            .status
            .as_ref()
            .is_some_and(|s| s.images.is_none()),
        "images dropped"
    );
    assert!(o.pods[0].metadata.managed_fields.is_none());
    assert_eq!(
        o.pods[0].metadata.owner_references.as_ref().map(Vec::len),
        Some(1)
    );
    let versions: Vec<_> = o
        .runtime_classes
        .iter()
        .map(|r| r.api_version.as_str())
        .collect();
    assert_eq!(versions, ["node.k8s.io/v1", "node.k8s.io/v1beta1"]);
}

#[test]
fn kubectl_yaml_reads_the_same_objects_as_json() {
    let value: serde_json::Value = serde_json::from_str(KUBECTL_JSON).expect("json");
    // JSON is YAML; the YAML reader (line numbers, limits) must agree with the fast JSON reader.
    let as_yaml = format!(
        "# kubectl get -o yaml\n{}",
        serde_json::to_string_pretty(&value).expect("pretty")
    );
    let json = ClusterObjects::parse("c.json", KUBECTL_JSON).expect("json");
    let yaml = ClusterObjects::parse("c.yaml", &as_yaml).expect("yaml");
    assert_eq!(json.nodes, yaml.nodes);
    assert_eq!(json.pods, yaml.pods);
    assert_eq!(json.runtime_classes, yaml.runtime_classes);
    // And the demo cluster (real YAML, multi-document) reads too.
    let demo = ClusterObjects::from_yaml("demo.yaml", winplace::source::demo::DEMO).expect("demo");
    assert_eq!(demo.nodes.len(), 10);
}

#[test]
fn errors_name_the_file_the_line_and_the_item() {
    let rows = [
        (
            "{\"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"spec\": {\"containers\": 3}}]}",
            "bad.json:2: items[0]",
        ),
        (
            "{\"kind\": \"List\", \"items\": [{\"apiVersion\": \"v1\"}]}",
            "an object without kind",
        ),
        (
            "{\"kind\": \"List\", \"items\": [",
            "bad.json: not valid JSON",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: 3\n",
            "bad.json:1: Pod/default/p",
        ),
        ("a: [", "bad.json:"),
    ];
    for (text, want) in rows {
        let e = ClusterObjects::parse("bad.json", text).expect_err("must fail");
        assert!(format!("{e:#}").contains(want), "{text:?}: {e:#}");
    }
}

#[tokio::test]
async fn the_snapshot_source_resets_then_syncs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, KUBECTL_JSON).expect("write");
    let source = SnapshotSource::load(&path).expect("loads");
    let info = source.info();
    assert_eq!(info.kind, winplace_api::SourceKind::Snapshot);
    assert!(info.description.contains("cluster.json"));
    let events: Vec<_> = Box::new(source).events().collect().await;
    assert_eq!(events.len(), 2);
    assert!(matches!(
        &events[0],
        winplace::source::SourceEvent::Change(Change::Reset { nodes, pods, runtime_classes })
            if nodes.len() == 1 && pods.len() == 1 && runtime_classes.len() == 2
    ));
    assert!(matches!(events[1], winplace::source::SourceEvent::Synced));
    let missing = SnapshotSource::load(&dir.path().join("nope.json"))
        .err()
        .map(|e| format!("{e:#}"));
    assert!(missing.is_some_and(|e| e.contains("cannot read") && e.contains("nope.json")));
}

#[tokio::test]
async fn a_watched_snapshot_reloads_when_the_file_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, KUBECTL_JSON).expect("write");
    let source = SnapshotSource::load(&path).expect("loads").watching(true);
    let mut events = Box::new(source).events();
    let mut next = async || {
        tokio::time::timeout(std::time::Duration::from_secs(10), events.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
    };
    assert!(matches!(
        next().await,
        winplace::source::SourceEvent::Change(Change::Reset { .. })
    ));
    assert!(matches!(
        next().await,
        winplace::source::SourceEvent::Synced
    ));
    // Drop the pod: the reload is a reset without it.
    let mut value: serde_json::Value = serde_json::from_str(KUBECTL_JSON).expect("json");
    value["items"].as_array_mut().expect("items").remove(1);
    std::fs::write(&path, value.to_string()).expect("rewrite");
    assert!(matches!(
        next().await,
        winplace::source::SourceEvent::Change(Change::Reset { nodes, pods, .. }) if nodes.len() == 1 && pods.is_empty()
    ));
    // A broken file is a watch error naming it; the last good state stays.
    std::fs::write(&path, "{\"items\": [").expect("break");
    assert!(matches!(
        next().await,
        winplace::source::SourceEvent::WatchError(e) if e.contains("cluster.json")
    ));
}
