//! The snapshot source with files shaped like real `kubectl get nodes,pods,runtimeclasses -A -o json`
//! (and `-o yaml`) output: `List` envelopes, managedFields, status, v1beta1 RuntimeClasses, other kinds.

use futures::StreamExt;
use winplace::source::objects::ClusterObjects;
use winplace::source::snapshot::SnapshotSource;
use winplace::source::{ClusterSource, SourceEvent};
use winplace_rules::model::cluster_objects::ClusterObject;

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
    let demo = ClusterObjects::parse("demo.yaml", winplace::source::demo::DEMO).expect("demo");
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
            "bad.json:1: document 1: Pod/default/p: spec.containers: invalid type",
        ),
        ("a: [", "bad.json:"),
    ];
    for (text, want) in rows {
        let e = ClusterObjects::parse("bad.json", text).expect_err("must fail");
        assert!(format!("{e:#}").contains(want), "{text:?}: {e:#}");
    }
}

/// One list of the source: the objects by kind (nodes, pods, runtime classes) and how it ended.
#[derive(Debug, PartialEq)]
enum Listed {
    Done(usize, usize, usize),
    Failed(String),
}

/// Reads the next list from `events` (`ListBegin`, objects, then `ListDone` or `ListFailed`).
async fn next_list(events: &mut futures::stream::BoxStream<'static, SourceEvent>) -> Listed {
    let mut next = async || {
        tokio::time::timeout(std::time::Duration::from_secs(10), events.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
    };
    assert!(matches!(next().await, SourceEvent::ListBegin));
    let (mut nodes, mut pods, mut rcs) = (0, 0, 0);
    loop {
        match next().await {
            SourceEvent::Listed(ClusterObject::Node(_)) => nodes += 1,
            SourceEvent::Listed(ClusterObject::Pod(_) | ClusterObject::ListedPod(_)) => pods += 1,
            SourceEvent::Listed(ClusterObject::RuntimeClass(_)) => rcs += 1,
            // A file streamed until it went wrong is read again whole: the list starts over.
            SourceEvent::ListBegin => (nodes, pods, rcs) = (0, 0, 0),
            SourceEvent::ListDone => return Listed::Done(nodes, pods, rcs),
            SourceEvent::ListFailed(why) => return Listed::Failed(why),
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn the_snapshot_source_streams_its_objects_then_syncs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, KUBECTL_JSON).expect("write");
    let source = SnapshotSource::load(&path).expect("loads");
    let info = source.info();
    assert_eq!(info.kind, winplace_api::SourceKind::Snapshot);
    assert!(info.description.contains("cluster.json"));
    let mut events = Box::new(source).events();
    assert_eq!(next_list(&mut events).await, Listed::Done(1, 1, 2));
    assert!(matches!(events.next().await, Some(SourceEvent::Synced)));
    assert!(events.next().await.is_none());
    let missing = SnapshotSource::load(&dir.path().join("nope.json"))
        .err()
        .map(|e| format!("{e:#}"));
    assert!(missing.is_some_and(|e| e.contains("cannot read") && e.contains("nope.json")));
}

#[tokio::test]
async fn a_watched_snapshot_reloads_when_the_file_changes_and_keeps_the_last_good_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, KUBECTL_JSON).expect("write");
    let source = SnapshotSource::load(&path).expect("loads").watching(true);
    let mut events = Box::new(source).events();
    assert_eq!(next_list(&mut events).await, Listed::Done(1, 1, 2));
    assert!(matches!(events.next().await, Some(SourceEvent::Synced)));
    // Drop the pod: the reload is a list without it.
    let mut value: serde_json::Value = serde_json::from_str(KUBECTL_JSON).expect("json");
    value["items"].as_array_mut().expect("items").remove(1);
    std::fs::write(&path, value.to_string()).expect("rewrite");
    assert_eq!(next_list(&mut events).await, Listed::Done(1, 0, 2));
    // Truncated (what `kubectl get … > cluster.json` does first): refused, naming the file.
    std::fs::write(&path, "").expect("truncate");
    let Listed::Failed(why) = next_list(&mut events).await else {
        panic!("an empty file is not published")
    };
    assert!(
        why.contains("cluster.json") && why.contains("empty"),
        "{why}"
    );
    // Cut short while being written: refused too.
    std::fs::write(&path, &KUBECTL_JSON[..KUBECTL_JSON.len() / 2]).expect("cut");
    let Listed::Failed(why) = next_list(&mut events).await else {
        panic!("a cut file is not published")
    };
    assert!(
        why.contains("cluster.json") && why.contains("not valid JSON"),
        "{why}"
    );
}

#[test]
fn files_that_are_not_clusters_are_refused_with_the_reason() {
    let value: serde_json::Value = serde_json::from_str(KUBECTL_JSON).expect("json");
    let as_yaml = serde_json::to_string_pretty(&value).expect("pretty");
    // `kubectl get -o yaml` writes the items before `kind: List`.
    let kubectl_yaml = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p1\n    namespace: x\n  spec:\n    containers:\n    - name: c\n      image: nginx\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
    let pods_only: serde_json::Value = serde_json::json!({"apiVersion": "v1", "kind": "List",
        "items": value["items"].as_array().expect("items").iter()
            .filter(|i| i["kind"] == "Pod").cloned().collect::<Vec<_>>()});
    let cut_at = kubectl_yaml.find("kind: List").expect("kind");
    let cut_in_pod = kubectl_yaml.find("  spec:").expect("spec");
    let rows: Vec<(&str, String, &str)> = vec![
        ("empty.json", "\n  \n".into(), "empty.json: the file is empty"),
        ("pods.json", pods_only.to_string(), "pods.json: 1 pods but no nodes"),
        // Cut at a line break between two items: the list's kind (written last) is missing.
        ("cut.yaml", kubectl_yaml[..cut_at].to_string(), "cut.yaml: the list has items but no kind"),
        // Cut inside the pod: a pod without spec.
        ("cut2.yaml", format!("{}kind: List\n", &kubectl_yaml[..cut_in_pod]),
            "cut2.yaml:7: items[1]: Pod/p1 has no spec"),
        // An item without kind is an error in YAML as in JSON.
        ("nokind.yaml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  metadata: {name: n}\n".into(),
            "nokind.yaml:4: items[0]: an object without kind"),
        ("nokind.json", r#"{"kind": "List", "items": [{"apiVersion": "v1", "metadata": {"name": "n"}}]}"#.into(),
            "nokind.json:1: items[0]: an object without kind"),
        // A type error names the field.
        ("types.json", "{\"kind\": \"List\", \"items\": [\n{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\", \"labels\": {\"a\": 1}}}]}".into(),
            "types.json:2: items[0]: Node/n: metadata.labels[a]: invalid type"),
    ];
    for (file, text, want) in rows {
        let got = ClusterObjects::parse(file, &text)
            .and_then(|o| {
                let tally = winplace::source::objects::Tally {
                    nodes: o.nodes.len(),
                    pods: o.pods.len(),
                    runtime_classes: o.runtime_classes.len(),
                    events: o.events.len(),
                    skipped: o.skipped,
                };
                tally.plausible(file)
            })
            .expect_err(file)
            .to_string();
        assert!(got.starts_with(want), "{file}: {got}");
    }
    // The complete files are clusters.
    for (file, text) in [
        ("ok.yaml", kubectl_yaml.to_string()),
        ("ok.json", KUBECTL_JSON.to_string()),
        ("pretty.yaml", as_yaml),
    ] {
        let o = ClusterObjects::parse(file, &text).expect(file);
        assert!(!o.nodes.is_empty(), "{file}");
    }
}

/// A snapshot of the demo's shape with varied pods: replicas of many templates, DaemonSet pods pinned to
/// their nodes, pending and failing pods (status conditions, waiting and terminated containers),
/// misplaced bare Windows pods, and pods with init and ephemeral containers, a RuntimeClass, affinity and
/// tolerations; one pod listed twice with another image (the later one wins).
fn varied_cluster_json() -> String {
    let (nodes, mut pods, rcs) = winplace_synthetic::synthetic_cluster(60, 1_500, 7);
    pods.extend(winplace_synthetic::misplaced_unowned_pods(&nodes, 40, 7));
    let mut items: Vec<serde_json::Value> = Vec::new();
    let mut item = |mut v: serde_json::Value, kind: &str, api_version: &str| {
        // kubectl writes `apiVersion` and `kind` first.
        let mut head = serde_json::Map::new();
        head.insert("apiVersion".into(), api_version.into());
        head.insert("kind".into(), kind.into());
        if let Some(map) = v.as_object_mut() {
            head.append(map);
        }
        items.push(serde_json::Value::Object(head));
    };
    for n in nodes {
        item(serde_json::to_value(n).expect("node"), "Node", "v1");
    }
    for r in rcs {
        item(
            serde_json::to_value(r.object).expect("rc"),
            "RuntimeClass",
            "node.k8s.io/v1",
        );
    }
    let varied = serde_json::json!([
        {"metadata": {"name": "tools-0", "namespace": "ops", "labels": {"pod-template-hash": "t1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "tools-t1",
                "uid": "u1", "controller": true}]},
         "spec": {"runtimeClassName": "windows-2022", "nodeSelector": {"kubernetes.io/os": "windows"},
            "initContainers": [{"name": "init", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2019"}],
            "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}],
            "ephemeralContainers": [{"name": "debug", "image": "busybox"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/windows-build",
                    "operator": "In", "values": ["10.0.17763"]}]}]}}},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]},
         "status": {"phase": "Pending",
            "initContainerStatuses": [{"name": "init", "image": "x", "imageID": "", "ready": false,
                "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff",
                "message": "The container operating system does not match the host operating system."}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                "message": "hcs::CreateComputeSystem: The container operating system does not match the host operating system.",
                "finishedAt": "2026-01-02T03:04:05Z"}}}],
            "ephemeralContainerStatuses": [{"name": "debug", "image": "busybox", "imageID": "",
                "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull",
                "message": "no matching manifest for windows/amd64 in the manifest list entries"}}}]}},
        {"metadata": {"name": "tools-1", "namespace": "ops", "labels": {"pod-template-hash": "t1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "tools-t1",
                "uid": "u1", "controller": true}]},
         "spec": {"runtimeClassName": "windows-2022", "nodeName": "nowhere",
            "initContainers": [{"name": "init", "image": "mcr.microsoft.com/windows/nanoserver:ltsc2019"}],
            "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]},
         "status": {"phase": "Failed", "reason": "PodOSNotSupported",
            "message": "Pod attempted to run on windows but the node is linux"}},
        {"metadata": {"name": "twice", "namespace": "ops"},
         "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}]}},
        {"metadata": {"name": "twice", "namespace": "ops"},
         "spec": {"containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}],
            "nodeSelector": {"kubernetes.io/os": "windows"}}},
        {"metadata": {"name": "nightly-x7k2p", "generateName": "nightly-", "namespace": "batch",
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "nightly", "uid": "j"}]},
         "spec": {"containers": [{"name": "run", "image": "python:3.13-windowsservercore-ltsc2022"}]}}
    ]);
    for pod in pods
        .into_iter()
        .map(|p| serde_json::to_value(p).expect("pod"))
        .chain(varied.as_array().expect("pods").iter().cloned())
    {
        item(pod, "Pod", "v1");
    }
    serde_json::to_string_pretty(&serde_json::json!({
        "apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}))
    .expect("json")
}

#[test]
fn the_audit_of_pods_read_narrowly_is_the_audit_of_the_whole_pods() {
    use winplace::source::json_stream::{Streamed, read};
    use winplace_rules::audit::Audit;
    let text = varied_cluster_json();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cluster.json");
    std::fs::write(&path, &text).expect("write");
    // The way `audit --snapshot` reads a file: streamed, its pods narrowly.
    let mut narrow = Audit::default();
    narrow.begin_reset();
    let (mut listed, mut whole_specs) = (0, 0);
    let streamed = read(&path, &mut |object| match object {
        ClusterObject::Node(n) => narrow.reset_node(&n),
        ClusterObject::Pod(p) => narrow.reset_pod(&p),
        ClusterObject::ListedPod(p) => {
            listed += 1;
            whole_specs += usize::from(p.whole_spec.is_some());
            narrow.reset_listed_pod(&p);
        }
        ClusterObject::RuntimeClass(r) => narrow.reset_runtime_class(&r),
        ClusterObject::Event(e) => narrow.reset_event(&e),
    });
    let Streamed::Read(tally) = streamed else {
        panic!("the file streams")
    };
    narrow.finish_reset();
    // The whole-text reader decodes every pod whole.
    let o = ClusterObjects::parse("cluster.json", &text).expect("parses");
    let mut whole = Audit::default();
    whole.reset(&o.nodes, &o.pods, &o.runtime_classes);
    assert_eq!(tally.pods, o.pods.len());
    assert_eq!(listed, o.pods.len(), "every pod was read narrowly");
    let templates = whole.template_count();
    assert!(
        whole_specs >= templates && whole_specs < listed / 3,
        "the specs decoded whole are about one a template: {whole_specs} for {templates} templates, {listed} pods"
    );
    let (narrow, whole) = (narrow.report(), whole.report());
    // Not an empty agreement: the cluster has misplaced workloads, findings and incidents.
    assert!(whole.summary.findings.errors > 10 && !whole.incidents.is_empty());
    assert!(
        whole
            .workloads
            .iter()
            .any(|w| w.owner.name == "twice"
                && w.images.iter().any(|i| i.image.ends_with("ltsc2022"))),
        "the later listing of a pod wins"
    );
    assert_eq!(
        serde_json::to_value(&narrow).expect("report"),
        serde_json::to_value(&whole).expect("report")
    );
}
