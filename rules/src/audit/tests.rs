//! Tests of the audit engine: grouping, deduplication, live-state rules in place, summary, incremental
//! updates against a full recompute.

use super::*;
use crate::placement::{PodOs, PreparedCluster, Resolver};
use crate::rules::evaluate_template;
use crate::test_kit::node;
use serde_json::json;

/// A node as its kubelet reports it (hostname label, `nodeInfo`, Ready); a Windows node with its build (label
/// and kernel) and, when `tainted`, the Windows taint.
fn kubelet_node(name: &str, os: &str, build: Option<&str>, tainted: bool) -> Node {
    let mut n = node(name)
        .os(os)
        .label("kubernetes.io/hostname", name)
        .info("operatingSystem", os)
        .kernel("6.1.0")
        .info("architecture", "amd64")
        .info("containerRuntimeVersion", "containerd://1.7")
        .info("kubeletVersion", "v1.31.0")
        .info("osImage", "x")
        .ready();
    if let Some(b) = build {
        n = n.build(b).kernel(&format!("{b}.100"));
    }
    if tainted {
        n.windows_taint().typed()
    } else {
        n.taints(json!([])).typed()
    }
}

fn cluster_nodes() -> Vec<Node> {
    vec![
        kubelet_node("lin-1", "linux", None, false),
        kubelet_node("lin-2", "linux", None, false),
        kubelet_node("win19-1", "windows", Some("10.0.17763"), true),
        kubelet_node("win22-1", "windows", Some("10.0.20348"), true),
        kubelet_node("win22-2", "windows", Some("10.0.20348"), true),
    ]
}

/// A pod of a Deployment (through its ReplicaSet) with `spec`.
fn deployment_pod(
    deployment: &str,
    hash: &str,
    i: usize,
    node: Option<&str>,
    spec: serde_json::Value,
) -> Pod {
    let mut spec = spec;
    if let Some(n) = node {
        spec["nodeName"] = json!(n);
    }
    serde_json::from_value(json!({
        "metadata": {"name": format!("{deployment}-{hash}-{i:05}"), "namespace": "apps",
            "labels": {"app": deployment, "pod-template-hash": hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{deployment}-{hash}"),
                "uid": "u", "controller": true}]},
        "spec": spec,
        "status": {"phase": if node.is_some() { "Running" } else { "Pending" }}
    }))
    .expect("pod")
}

fn linux_spec() -> serde_json::Value {
    json!({"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "c", "image": "nginx:1.27"}]})
}

/// A Windows Server 2022 workload placed right: OS selector, the range of builds that run its image
/// (an exact pin would be `windows-build-pin-too-narrow`, at risk), toleration.
fn win22_spec() -> serde_json::Value {
    json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "node.kubernetes.io/windows-build", "operator": "In",
                "values": ["10.0.20348", "10.0.26100"]}]}]}}},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]})
}

fn audit_of(nodes: Vec<Node>, pods: Vec<Pod>) -> Audit {
    let mut a = Audit::new(Settings::default());
    a.apply(Change::Reset {
        nodes,
        pods,
        runtime_classes: vec![],
    });
    a
}

#[test]
fn three_hundred_replicas_are_one_row_and_one_evaluation() {
    let pods: Vec<Pod> = (0..300)
        .map(|i| {
            deployment_pod(
                "web",
                "5d8f7c",
                i,
                Some(if i % 2 == 0 { "lin-1" } else { "lin-2" }),
                linux_spec(),
            )
        })
        .collect();
    let a = audit_of(cluster_nodes(), pods);
    assert_eq!(a.workloads().count(), 1);
    let w = a
        .workload("Deployment/apps/web")
        .expect("the Deployment row");
    assert_eq!(w.pods.len(), 300);
    assert_eq!(w.owner.kind, "Deployment");
    assert_eq!(w.os, PodOs::Linux);
    assert_eq!(a.template_count(), 1);
    assert_eq!(a.evaluations(), 1, "the catalogue ran once for 300 pods");
    assert_eq!(a.node("lin-1").map(|n| n.pods.len()), Some(150));
}

#[test]
fn owners_group_pods_and_templates_split_rollouts() {
    let mut pods: Vec<Pod> = (0..4)
        .map(|i| deployment_pod("web", "aaa", i, Some("lin-1"), linux_spec()))
        .collect();
    // Mid-rollout: a second ReplicaSet of the same Deployment.
    pods.extend((0..2).map(|i| deployment_pod("web", "bbb", i, Some("lin-2"), linux_spec())));
    // A DaemonSet: one pod per node, each pinned by matchFields to its node.
    for n in ["win19-1", "win22-1", "win22-2"] {
        pods.push(
            serde_json::from_value(json!({
                "metadata": {"name": format!("proxy-{n}"), "namespace": "kube-system",
                    "labels": {"controller-revision-hash": "r1"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "proxy", "uid": "u", "controller": true}]},
                "spec": {"nodeName": n, "nodeSelector": {"kubernetes.io/os": "windows"},
                    "tolerations": [{"operator": "Exists"}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [n]}]}]}}},
                    "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
                    "hostNetwork": true,
                    "containers": [{"name": "c", "image": "ghcr.io/example/kube-proxy-windows:v1"}]},
                "status": {"phase": "Running"}
            }))
            .expect("pod"),
        );
    }
    // A StatefulSet and a bare pod.
    for i in 0..2 {
        pods.push(
            serde_json::from_value(json!({
                "metadata": {"name": format!("db-{i}"), "namespace": "data", "labels": {"controller-revision-hash": "db-1"},
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u", "controller": true}]},
                "spec": {"nodeName": "lin-1", "hostname": format!("db-{i}"), "subdomain": "db",
                    "nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "c", "image": "postgres:16"}]},
                "status": {"phase": "Running"}
            }))
            .expect("pod"),
        );
    }
    pods.push(
        serde_json::from_value(json!({
            "metadata": {"name": "solo", "namespace": "apps"},
            "spec": {"nodeName": "lin-2", "nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "c", "image": "busybox"}]},
            "status": {"phase": "Running"}
        }))
        .expect("pod"),
    );
    let a = audit_of(cluster_nodes(), pods);
    let rows: Vec<(String, usize)> = a
        .workloads()
        .map(|w| (w.owner.display_name(), w.pods.len()))
        .collect();
    assert_eq!(
        rows,
        [
            ("DaemonSet/kube-system/proxy".to_string(), 3),
            ("Deployment/apps/web".to_string(), 6),
            ("Pod/apps/solo".to_string(), 1),
            ("StatefulSet/data/db".to_string(), 2),
        ]
    );
    // web: two templates; proxy, db, solo: one each (the DaemonSet's per-node pins and the StatefulSet's
    // hostnames are not part of the template).
    assert_eq!(a.template_count(), 5);
    let proxy = a.workload("DaemonSet/kube-system/proxy").expect("row");
    assert_eq!(proxy.state, PlacementState::Fine, "{:#?}", proxy.findings);
    // Catalogue findings are reported under the owner, with the owner's paths.
    let at_risk: Vec<&Finding> = a
        .workloads()
        .flat_map(|w| w.findings.iter().map(|f| &**f))
        .collect();
    assert!(at_risk.iter().all(|f| f.object.kind != "ReplicaSet"));
}

#[test]
fn live_state_rules_mark_pods_misplaced() {
    // A Linux Deployment without an OS selector: one pod landed on a Windows node.
    let unpinned = json!({"tolerations": [{"operator": "Exists"}], "containers": [{"name": "c", "image": "nginx:1.27"}]});
    let mut pods = vec![
        deployment_pod("cart", "h1", 0, Some("lin-1"), unpinned.clone()),
        deployment_pod("cart", "h1", 1, Some("win22-1"), unpinned),
    ];
    // A 2019 image pinned to Windows only: one pod on a 2022 node, failing with 0xc0370101.
    let win19 = json!({"nodeSelector": {"kubernetes.io/os": "windows"},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}]});
    pods.push(deployment_pod(
        "report",
        "h2",
        0,
        Some("win19-1"),
        win19.clone(),
    ));
    let mut bad = deployment_pod("report", "h2", 1, Some("win22-1"), win19);
    bad.status = serde_json::from_value(json!({"phase": "Pending", "containerStatuses": [{"name": "c", "image": "i",
        "imageID": "", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "CreateContainerError",
        "message": "hcs::CreateComputeSystem c: The operating system of the container does not match the operating system of the host. (0xc0370101)"}}}]}))
    .expect("status");
    pods.push(bad);
    // Pinned to 2022 without the toleration: pending.
    let mut pending = deployment_pod(
        "pdf",
        "h3",
        0,
        None,
        json!({"nodeSelector": {"kubernetes.io/os": "windows"}, "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}),
    );
    pending.status = serde_json::from_value(json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable", "message": "0/5 nodes are available: 3 node(s) had untolerated taint {os: windows}, 2 node(s) didn't match Pod's node affinity/selector."}]}))
    .expect("status");
    pods.push(pending);
    pods.push(deployment_pod(
        "iis",
        "h4",
        0,
        Some("win22-2"),
        win22_spec(),
    ));
    let a = audit_of(cluster_nodes(), pods);
    let rules_of = |key: &str| -> Vec<String> {
        let w = a.workload(key).expect(key);
        let mut r: Vec<String> = w
            .findings
            .iter()
            .filter(|f| f.rule.starts_with("pod-"))
            .map(|f| format!("{} {}", f.rule, f.object.name))
            .collect();
        r.dedup();
        r
    };
    assert_eq!(
        rules_of("Deployment/apps/cart"),
        ["pod-on-wrong-os cart-h1-00001"]
    );
    assert_eq!(
        rules_of("Deployment/apps/report"),
        [
            "pod-on-incompatible-build report-h2-00001",
            "pod-image-os-error report-h2-00001"
        ]
    );
    assert_eq!(
        rules_of("Deployment/apps/pdf"),
        ["pod-pending-placement pdf-h3-00000"]
    );
    let pending = a.workload("Deployment/apps/pdf").expect("row");
    let msg = &pending
        .findings
        .iter()
        .find(|f| f.rule == "pod-pending-placement")
        .expect("finding")
        .message;
    assert!(
        msg.contains("had untolerated taint {os: windows}"),
        "quotes the scheduler: {msg}"
    );
    assert!(
        msg.contains("winplace finds no node"),
        "adds the fit: {msg}"
    );
    let states: Vec<(String, PlacementState)> = a
        .workloads()
        .map(|w| (w.owner.name.clone(), w.state))
        .collect();
    assert_eq!(
        states,
        [
            ("cart".to_string(), PlacementState::Misplaced),
            ("iis".to_string(), PlacementState::Fine),
            ("pdf".to_string(), PlacementState::Misplaced),
            ("report".to_string(), PlacementState::Misplaced),
        ]
    );
    let cart = a.workload("Deployment/apps/cart").expect("row");
    let pod_states: Vec<PlacementState> = cart.pods.iter().map(|p| p.state).collect();
    assert_eq!(
        pod_states,
        [PlacementState::AtRisk, PlacementState::Misplaced]
    );
    // The node row lists the live findings of its pods.
    let win22 = a.node("win22-1").expect("node");
    let node_rules: Vec<&str> = win22.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        node_rules,
        [
            "pod-on-wrong-os",
            "pod-on-incompatible-build",
            "pod-image-os-error"
        ]
    );
    assert_eq!(win22.build.as_deref(), Some("10.0.20348"));
    assert_eq!(win22.taints, ["os=windows:NoSchedule"]);
    assert_eq!(
        win22.node_info.get("kubeletVersion").map(String::as_str),
        Some("v1.31.0")
    );
}

#[test]
fn summary_lists_windows_of_unknown_build_after_the_known_builds() {
    let mut nodes = cluster_nodes();
    nodes.push(kubelet_node("win-x", "windows", None, true));
    nodes.push(kubelet_node("odd-1", "plan9", None, false));
    let s = audit_of(nodes, vec![]).summary();
    let groups: Vec<(NodeOs, Option<&str>, &str, usize)> = s
        .node_groups
        .iter()
        .map(|g| (g.os, g.build.as_deref(), g.title.as_str(), g.nodes))
        .collect();
    assert_eq!(
        groups,
        [
            (
                NodeOs::Windows,
                Some("10.0.17763"),
                "Windows Server 2019 (10.0.17763)",
                1
            ),
            (
                NodeOs::Windows,
                Some("10.0.20348"),
                "Windows Server 2022 (10.0.20348)",
                2
            ),
            (NodeOs::Windows, None, "Windows (build unknown)", 1),
            (NodeOs::Linux, None, "Linux", 2),
            (NodeOs::Unknown, None, "Unknown OS", 1),
        ]
    );
}

#[test]
fn summary_counts_groups_and_build_matrix() {
    let win19 = json!({"nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
        "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}]});
    let mut nodes = cluster_nodes();
    nodes.push(kubelet_node(
        "win22-open",
        "windows",
        Some("10.0.20348"),
        false,
    ));
    let pods = vec![
        deployment_pod("web", "a", 0, Some("lin-1"), linux_spec()),
        deployment_pod("iis", "b", 0, Some("win22-1"), win22_spec()),
        deployment_pod("iis", "b", 1, Some("win22-2"), win22_spec()),
        deployment_pod("old", "c", 0, Some("win19-1"), win19.clone()),
        // Misplaced by hand (nodeName): a 2019 image on a 2022 node.
        deployment_pod("old", "c", 1, Some("win22-1"), win19),
    ];
    let a = audit_of(nodes, pods);
    let s = a.summary();
    assert_eq!((s.nodes, s.pods, s.workloads), (6, 5, 3));
    let groups: Vec<(NodeOs, String, usize, Vec<String>, usize)> = s
        .node_groups
        .iter()
        .map(|g| {
            (
                g.os,
                g.title.clone(),
                g.nodes,
                g.common_taints.clone(),
                g.untainted,
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (
                NodeOs::Windows,
                "Windows Server 2019 (10.0.17763)".into(),
                1,
                vec!["os=windows:NoSchedule".to_string()],
                0
            ),
            (
                NodeOs::Windows,
                "Windows Server 2022 (10.0.20348)".into(),
                3,
                vec![],
                1
            ),
            (NodeOs::Linux, "Linux".into(), 2, vec![], 2),
        ]
    );
    assert_eq!(s.workload_states.get(&PlacementState::Misplaced), Some(&1));
    assert_eq!(
        s.workload_states
            .get(&PlacementState::Fine)
            .copied()
            .unwrap_or(0)
            + s.workload_states
                .get(&PlacementState::AtRisk)
                .copied()
                .unwrap_or(0),
        2
    );
    // Keyed by state, written with the API's names.
    let json = serde_json::to_value(&s).unwrap();
    let count = |state| s.workload_states[&state];
    assert_eq!(
        json["workloadStates"],
        json!({"fine": count(PlacementState::Fine), "at-risk": count(PlacementState::AtRisk),
            "misplaced": 1})
    );
    assert_eq!(serde_json::from_value::<Summary>(json).unwrap(), s);
    assert_eq!(
        s.findings_by_rule.get("pod-on-incompatible-build"),
        Some(&1)
    );
    assert_eq!(s.findings_by_rule.get("windows-node-untainted"), Some(&1));
    let total: usize = s.findings_by_rule.values().sum();
    assert_eq!(
        total,
        s.findings.errors + s.findings.warnings + s.findings.infos
    );
    let cells: Vec<(&str, &str, bool, usize)> = s
        .build_matrix
        .iter()
        .map(|c| {
            (
                c.image_build.as_str(),
                c.node_build.as_str(),
                c.compatible,
                c.pods,
            )
        })
        .collect();
    assert_eq!(
        cells,
        [
            ("10.0.17763", "10.0.17763", true, 1),
            ("10.0.17763", "10.0.20348", false, 1),
            ("10.0.20348", "10.0.17763", false, 0),
            ("10.0.20348", "10.0.20348", true, 2),
        ]
    );
    assert!(s.build_matrix.iter().all(|c| !c.disputed));
}

#[test]
fn the_build_matrix_marks_what_the_runtimes_disagree_about() {
    // kubernetes-windows-rules.md §5.5.3: a host past the newest LTSC (Windows 11 25H2, 26200) and a
    // 2022 image: containerd main would run it, released containerd does not; counted incompatible.
    let mut nodes = cluster_nodes();
    nodes.push(kubelet_node("win11", "windows", Some("10.0.26200"), true));
    let on_win11 = json!({"nodeName": "win11", "tolerations": [{"key": "os", "operator": "Exists"}],
        "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]});
    let a = audit_of(
        nodes,
        vec![deployment_pod("dev", "a", 0, Some("win11"), on_win11)],
    );
    let s = a.summary();
    let cell = |image: &str, node: &str| {
        s.build_matrix
            .iter()
            .find(|c| c.image_build == image && c.node_build == node)
            .map(|c| (c.compatible, c.disputed, c.pods))
    };
    assert_eq!(cell("10.0.20348", "10.0.26200"), Some((false, true, 1)));
    assert_eq!(cell("10.0.20348", "10.0.20348"), Some((true, false, 0)));
    assert_eq!(cell("10.0.20348", "10.0.17763"), Some((false, false, 0)));
    let json = serde_json::to_value(&s).unwrap();
    let cells = json["buildMatrix"].as_array().expect("cells");
    assert_eq!(
        cells.iter().filter(|c| c.get("disputed").is_some()).count(),
        1,
        "disputed is written only when true: {json}"
    );
}

#[test]
fn incremental_changes_touch_only_what_they_touch() {
    let pods: Vec<Pod> = (0..10)
        .map(|i| deployment_pod("web", "a", i, Some("lin-1"), linux_spec()))
        .chain([deployment_pod("iis", "b", 0, Some("win22-1"), win22_spec())])
        .collect();
    let mut a = audit_of(cluster_nodes(), pods);
    let evaluations = a.evaluations();
    // A new replica of a known template: no catalogue run.
    let t = a.apply(Change::Pod(Box::new(deployment_pod(
        "web",
        "a",
        10,
        Some("lin-2"),
        linux_spec(),
    ))));
    assert_eq!(t.workloads, ["Deployment/apps/web"]);
    assert_eq!(t.nodes, ["lin-2"]);
    assert_eq!(a.evaluations(), evaluations);
    // A heartbeat: nothing the audit reads.
    let mut beat = kubelet_node("lin-1", "linux", None, false);
    if let Some(s) = beat.status.as_mut() {
        s.conditions = None;
    }
    let t = a.apply(Change::Node(Box::new(beat)));
    assert_eq!(t, Touched::default());
    assert_eq!(a.evaluations(), evaluations);
    // Deleting a pod.
    let t = a.apply(Change::PodDeleted("apps".into(), "iis-b-00000".into()));
    assert_eq!(t.workloads, ["Deployment/apps/iis"]);
    assert_eq!(t.nodes, ["win22-1"]);
    assert!(a.workload("Deployment/apps/iis").is_none());
    // Untainting a Windows node changes where the Linux template could go: its row changes.
    let t = a.apply(Change::Node(Box::new(kubelet_node(
        "win22-2",
        "windows",
        Some("10.0.20348"),
        false,
    ))));
    assert!(t.nodes.contains(&"win22-2".to_string()), "{t:?}");
    assert_eq!(
        a.evaluations(),
        evaluations + 1,
        "every template re-run once"
    );
}

#[test]
fn a_node_label_change_reruns_only_the_templates_whose_fit_it_reaches() {
    let team = json!({"nodeSelector": {"kubernetes.io/os": "linux", "team": "a"},
        "containers": [{"name": "c", "image": "nginx:1.27"}]});
    let pods = vec![
        deployment_pod("web", "a", 0, Some("lin-1"), linux_spec()),
        deployment_pod("team", "b", 0, None, team),
        deployment_pod("iis", "c", 0, Some("win22-1"), win22_spec()),
    ];
    let mut a = audit_of(cluster_nodes(), pods);
    let evaluations = a.evaluations();
    let rules = |a: &Audit| -> Vec<String> {
        let row = a.workload("Deployment/apps/team").expect("row");
        row.findings.iter().map(|f| f.rule.clone()).collect()
    };
    assert_eq!(rules(&a), ["no-schedulable-node"]);
    let labelled = |extra: &[(&str, &str)]| {
        let mut n = kubelet_node("lin-2", "linux", None, false);
        for (k, v) in extra {
            n.metadata
                .labels
                .get_or_insert_default()
                .insert(k.to_string(), v.to_string());
        }
        Box::new(n)
    };
    // A label no template selects on: the node's row only, no template re-run.
    let t = a.apply(Change::Node(labelled(&[("example.com/rack", "r7")])));
    assert_eq!(a.evaluations(), evaluations, "no template reached");
    assert!(t.workloads.is_empty(), "{t:?}");
    // The label the team template selects: that template alone re-runs, and now fits lin-2.
    let t = a.apply(Change::Node(labelled(&[("team", "a")])));
    assert_eq!(a.evaluations(), evaluations + 1, "only the team template");
    assert_eq!(t.workloads, ["Deployment/apps/team"]);
    assert!(rules(&a).is_empty(), "{:?}", rules(&a));
    // A Windows node's taint is read cluster-wide (the tolerations Windows pods need): every template.
    let t = a.apply(Change::Node(Box::new(kubelet_node(
        "win19-1",
        "windows",
        Some("10.0.17763"),
        false,
    ))));
    assert_eq!(
        a.evaluations(),
        evaluations + 1 + 3,
        "every template re-run"
    );
    assert!(t.nodes.contains(&"win19-1".to_string()));
    // The same as auditing the final cluster afresh.
    let mut nodes = cluster_nodes();
    nodes[1] = *labelled(&[("team", "a")]);
    nodes[2] = kubelet_node("win19-1", "windows", Some("10.0.17763"), false);
    let fresh = audit_of(
        nodes,
        vec![
            deployment_pod("web", "a", 0, Some("lin-1"), linux_spec()),
            deployment_pod(
                "team",
                "b",
                0,
                None,
                json!({"nodeSelector": {"kubernetes.io/os": "linux", "team": "a"},
            "containers": [{"name": "c", "image": "nginx:1.27"}]}),
            ),
            deployment_pod("iis", "c", 0, Some("win22-1"), win22_spec()),
        ],
    );
    assert_eq!(a.report(), fresh.report());
}

#[test]
fn runtime_class_changes_reaudit_workloads_that_name_it() {
    let spec = json!({"runtimeClassName": "win22", "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]});
    let pods = vec![
        deployment_pod("iis", "a", 0, Some("win22-1"), spec),
        deployment_pod("web", "b", 0, Some("lin-1"), linux_spec()),
    ];
    let mut a = audit_of(cluster_nodes(), pods);
    let before = a.workload("Deployment/apps/iis").expect("row").clone();
    assert!(
        before
            .findings
            .iter()
            .any(|f| f.rule == "runtimeclass-not-found")
    );
    let rc: RuntimeClassEntry = RuntimeClassEntry {
        api_version: "node.k8s.io/v1".into(),
        object: serde_json::from_value(json!({"metadata": {"name": "win22"}, "handler": "runhcs-wcow-process",
            "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]}}))
        .expect("rc"),
    };
    let evaluations = a.evaluations();
    let t = a.apply(Change::RuntimeClass(Box::new(rc)));
    assert_eq!(t.workloads, ["Deployment/apps/iis"]);
    assert_eq!(
        a.evaluations(),
        evaluations + 1,
        "only the template naming it"
    );
    let after = a.workload("Deployment/apps/iis").expect("row");
    assert!(
        !after
            .findings
            .iter()
            .any(|f| f.rule == "runtimeclass-not-found")
    );
    let t = a.apply(Change::RuntimeClassDeleted("win22".into()));
    assert_eq!(t.workloads, ["Deployment/apps/iis"]);
    assert_eq!(a.workload("Deployment/apps/iis"), Some(&before));
}

#[test]
fn class_context_gives_the_findings_of_every_node() {
    // 200 nodes: the hostname is a per-node label, so the template rules see one node per class.
    let (nodes, mut pods) = many_node_cluster();
    let rcs: Vec<RuntimeClassEntry> = Vec::new();
    // A template that reads a per-node label sees every node.
    let mut pinned = deployment_pod(
        "pinned",
        "p1",
        0,
        None,
        json!({"nodeSelector": {"kubernetes.io/hostname": "win22-003"},
            "containers": [{"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2022"}]}),
    );
    pinned.status = None;
    pods.push(pinned);
    let mut a = Audit::new(Settings::default());
    a.reset(&nodes, &pods, &rcs);
    assert!(a.index.per_node_keys().contains("kubernetes.io/hostname"));
    assert!(
        a.classes.nodes.len() * 4 < a.context.nodes.len(),
        "{} classes",
        a.classes.nodes.len()
    );
    let resolver = Resolver::new(Some(&a.context), &a.settings);
    let mut compared = 0;
    for w in a.workloads.values() {
        for t in w.templates.values() {
            let object =
                super::templates::template_object(&w.owner, &t.object_name, t.spec.value())
                    .expect("the template's object");
            let template = crate::model::pod_template(&object)
                .expect("a workload")
                .expect("its pod template");
            let mut findings = Vec::new();
            evaluate_template(
                &object,
                &template,
                PreparedCluster {
                    context: Some(&a.context),
                    resolver: &resolver,
                    nodes: Some(&a.index),
                },
                &a.settings,
                &mut findings,
            );
            for f in &mut findings {
                f.object = w.owner.object.clone();
            }
            sort_findings(&mut findings);
            let held: Vec<&Finding> = t.findings.iter().map(|f| &**f).collect();
            assert_eq!(findings.iter().collect::<Vec<_>>(), held, "{}", w.key);
            compared += 1;
        }
    }
    assert!(compared > 20);
    let pinned = a.workload("Deployment/apps/pinned").expect("row");
    assert!(
        pinned
            .findings
            .iter()
            .any(|f| f.rule == "windows-pod-without-toleration")
    );
}

/// 200 nodes in five pools (every node with its own hostname label, so per-node classes matter) and
/// 36 Deployments whose templates cover OS selectors, build pins, tolerations and images of every kind.
fn many_node_cluster() -> (Vec<Node>, Vec<Pod>) {
    let mut nodes = Vec::new();
    for i in 0..200 {
        let node = match i % 5 {
            0 | 1 => kubelet_node(&format!("lin-{i:03}"), "linux", None, false),
            2 => kubelet_node(
                &format!("win19-{i:03}"),
                "windows",
                Some("10.0.17763"),
                true,
            ),
            3 => kubelet_node(
                &format!("win22-{i:03}"),
                "windows",
                Some("10.0.20348"),
                true,
            ),
            _ => kubelet_node(
                &format!("win22u-{i:03}"),
                "windows",
                Some("10.0.20348"),
                false,
            ),
        };
        nodes.push(node);
    }
    let selectors = [
        json!({}),
        json!({"kubernetes.io/os": "linux"}),
        json!({"kubernetes.io/os": "windows"}),
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.17763"}),
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"}),
        json!({"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.26100"}),
    ];
    let tolerations = [
        json!([]),
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
        json!([{"operator": "Exists"}]),
    ];
    let images = [
        "nginx:1.27",
        "mcr.microsoft.com/windows/servercore:ltsc2022",
    ];
    let mut pods = Vec::new();
    let mut n = 0;
    for selector in &selectors {
        for toleration in &tolerations {
            for image in images {
                let spec = json!({"nodeSelector": selector, "tolerations": toleration,
                    "containers": [{"name": "c", "image": image}]});
                pods.push(deployment_pod(&format!("d{n}"), "h", 0, None, spec));
                n += 1;
            }
        }
    }
    (nodes, pods)
}

/// Issue 31.2: nodes made from a pool of an infrastructure file (`serve`/`audit --cluster`) keep the
/// annotations naming their pool through the audit's trimming, so their findings speak of the pool:
/// no `kubectl` command on a node that does not exist yet, no missing build label (the kubelet sets it).
#[test]
fn nodes_made_from_a_pool_are_spoken_of_as_the_pool() {
    let aks = r#"[{"name": "wann", "osType": "Windows", "osSku": "WindowsAnnual", "count": 2}]"#;
    let read = crate::infra::read_context(&[("pools.json", aks)]);
    assert!(read.errors.is_empty(), "{:?}", read.errors);
    let a = audit_of(read.context.nodes.clone(), vec![]);
    for name in ["wann-1", "wann-2"] {
        let node = a.node(name).expect("node");
        let rules: Vec<&str> = node.findings.iter().map(|f| f.rule.as_str()).collect();
        assert_eq!(rules, ["windows-node-untainted"], "{name}");
        let message = &node.findings[0].message;
        assert!(
            message.contains("agent pool wann of pools.json")
                && message.contains("under `nodeTaints:`")
                && !message.contains("kubectl"),
            "{message}"
        );
    }
}

/// An explained `v1` Event about pod `apps/<pod>`.
fn sandbox_event(pod: &str, name: &str, count: u64) -> crate::model::events::PodEvent {
    let raw = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "apps"},
        "involvedObject": {"kind": "Pod", "name": pod, "namespace": "apps"},
        "reason": "FailedCreatePodSandBox", "count": count,
        "firstTimestamp": format!("2026-11-25T09:{:02}:00Z", count % 60),
        "message": "Failed to create pod sandbox: rpc error: code = Unknown desc = The container operating system does not match the host operating system. (0xc0370101)"});
    crate::model::events::decode_event_json(&raw.to_string())
        .expect("json")
        .expect("explained")
}

#[test]
fn events_become_bounded_incidents_that_leave_with_their_pod() {
    let pod = deployment_pod("web", "7d9", 0, Some("win19-1"), win22_spec());
    let name = pod.metadata.name.clone().unwrap_or_default();
    let key = format!("apps/{name}");
    // An event before its pod waits for it; then it is the pod's incident.
    let mut audit = Audit::new(Settings::default());
    audit.begin_reset();
    audit.reset_event(&sandbox_event(&name, "e0", 2));
    for n in cluster_nodes() {
        audit.reset_node(&n);
    }
    audit.reset_pod(&pod);
    audit.finish_reset();
    let incidents: Vec<&Incident> = audit.incidents().collect();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    let i = incidents[0];
    assert_eq!(
        (i.cause, i.sandbox, i.count),
        (crate::explain::Cause::BuildMismatch, true, 2)
    );
    assert_eq!(i.workload, "Deployment/apps/web");
    assert_eq!(i.node.as_deref(), Some("win19-1"));
    assert!(
        i.rule.is_none(),
        "the pause image is the node's: no manifest rule"
    );
    // Many more events: the pod keeps the latest few, their counts added up into one incident.
    for e in 1..20u64 {
        let touched = audit.apply(Change::Event(Box::new(sandbox_event(
            &name,
            &format!("e{e}"),
            1,
        ))));
        // The row changes (its count grows) until the pod holds as many events as it keeps.
        if (e as usize) < EVENTS_PER_POD {
            assert_eq!(touched.workloads, ["Deployment/apps/web"], "event {e}");
        }
    }
    assert_eq!(
        audit.pods.get(key.as_str()).map(|r| r.events.len()),
        Some(EVENTS_PER_POD)
    );
    let i = audit.incidents().next().cloned().expect("incident");
    assert_eq!(i.count, EVENTS_PER_POD as u64);
    // An event deleted, then the pod: nothing left.
    audit.apply(Change::EventDeleted {
        key: "apps/e19".into(),
        pod: key.clone(),
    });
    assert_eq!(
        audit.incidents().next().map(|i| i.count),
        Some(EVENTS_PER_POD as u64 - 1)
    );
    audit.apply(Change::PodDeleted("apps".into(), name.clone()));
    assert_eq!(audit.incidents().count(), 0);
    // Events about pods that never come are bounded.
    for p in 0..(MAX_WAITING_PODS + 5) {
        audit.apply(Change::Event(Box::new(sandbox_event(
            &format!("ghost-{p}"),
            "g",
            1,
        ))));
    }
    assert!(audit.waiting_events.len() <= MAX_WAITING_PODS);
}

/// A node whose build leaves Microsoft's extended support at midnight is reported from the next day,
/// without a new audit (the server moves the date, `server/src/clock.rs`): Windows Server 2016's last
/// supported day is 2027-01-12 (lifecycle.md M2).
#[test]
fn a_new_day_re_runs_the_calendar_on_the_nodes() {
    let day = |t: &str| t.parse::<crate::lifecycle::Date>().unwrap();
    let mut settings = Settings::default();
    settings.lifecycle.date = Some(day("2027-01-12"));
    let mut a = Audit::new(settings);
    a.apply(Change::Node(Box::new(kubelet_node(
        "win16-0",
        "windows",
        Some("10.0.14393"),
        true,
    ))));
    a.apply(Change::Node(Box::new(kubelet_node(
        "win22-0",
        "windows",
        Some("10.0.20348"),
        true,
    ))));
    let retired = |a: &Audit, name: &str| {
        a.node(name).is_some_and(|n| {
            n.findings
                .iter()
                .any(|f| f.rule == "windows-node-build-retired")
        })
    };
    assert!(!retired(&a, "win16-0"), "supported through its last day");
    // The same day again: nothing runs.
    assert_eq!(a.set_date(day("2027-01-12")), Touched::default());
    let t = a.set_date(day("2027-01-13"));
    assert_eq!(t.nodes, ["win16-0"], "only the node whose findings changed");
    assert!(t.workloads.is_empty());
    assert!(retired(&a, "win16-0"));
    assert!(!retired(&a, "win22-0"));
    assert_eq!(a.settings().lifecycle.date, Some(day("2027-01-13")));
}

/// The records the audit holds per pod and per template, by their inline size (what they own on the
/// heap is counted by `synthetic/tests/memory.rs`): a field added to a pod's record is paid 150,000 times
/// at the envelope, and every template's record thousands of times. Measured: a pod's record 240 B, a
/// template's 760 B.
#[test]
fn its_records_hold_their_budgets() {
    const POD_RECORD: usize = 256;
    const TEMPLATE: usize = 800;
    let (pod, template) = (
        std::mem::size_of::<super::PodRecord>(),
        std::mem::size_of::<super::Template>(),
    );
    eprintln!("a pod's record {pod} B, a template's {template} B");
    assert!(
        pod <= POD_RECORD,
        "a pod's record is {pod} B, over its budget of {POD_RECORD} B"
    );
    assert!(
        template <= TEMPLATE,
        "a template's record is {template} B, over its budget of {TEMPLATE} B"
    );
}
