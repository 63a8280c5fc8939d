//! Infrastructure files as cluster context through the built binary: `check --cluster` with each
//! format gives the manifests the findings the equivalent Node objects give (fixtures and their sources
//! in `tests/infra/`), the node rules speak of each pool once (not of nodes that do not exist yet), a
//! pool whose build cannot be told is an info finding, and a file with no cluster context is a usage
//! error naming what it held.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/infra")
}

fn winplace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(args)
        .current_dir(dir())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("the winplace binary runs")
}

fn check(cluster: &str) -> (i32, Value) {
    let out = winplace(&[
        "check",
        "manifests.yaml",
        "--cluster",
        cluster,
        "--format",
        "json",
    ]);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), json)
}

/// The findings as comparable rows: rule, severity, object, path and message, plus the file for
/// findings about the manifests (the cluster's own findings point into different files).
fn rows(report: &Value) -> Vec<String> {
    let mut rows: Vec<String> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let object = &f["object"];
            let file = f["file"].as_str().unwrap_or("");
            format!(
                "{} {} {}/{}/{} {} {}: {}",
                if file == "manifests.yaml" {
                    file
                } else {
                    "<cluster>"
                },
                f["severity"].as_str().unwrap_or(""),
                object["kind"].as_str().unwrap_or(""),
                object["namespace"].as_str().unwrap_or("-"),
                object["name"].as_str().unwrap_or(""),
                f["rule"].as_str().unwrap_or(""),
                f["path"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn each_format_gives_the_findings_of_its_nodes() {
    let pairs = [
        ("eksctl-windows-2022.yaml", "eksctl-windows-2022.nodes.yaml"),
        (
            "karpenter-v1-windows-2022.yaml",
            "karpenter-v1-windows-2022.nodes.yaml",
        ),
        (
            "karpenter-v1beta1-windows2022.yaml",
            "karpenter-v1-windows-2022.nodes.yaml",
        ),
        ("aks-nodepool-list.json", "aks-nodepool-list.nodes.yaml"),
        ("gke-node-pools.json", "gke-node-pools.nodes.yaml"),
        (
            "openshift-machineset-azure-windows.yaml",
            "openshift-machineset-azure-windows.nodes.yaml",
        ),
    ];
    for (infra, nodes) in pairs {
        let (code_infra, from_infra) = check(infra);
        let (code_nodes, from_nodes) = check(nodes);
        assert!(
            from_infra["parse_errors"]
                .as_array()
                .is_some_and(Vec::is_empty),
            "{infra}: {}",
            from_infra["parse_errors"]
        );
        assert_eq!(code_infra, code_nodes, "{infra}");
        // The manifests' findings are the same; the cluster's own are about pools on one side and
        // Nodes on the other (node_findings_speak_of_each_pool_once).
        let manifests = |r: Vec<String>| -> Vec<String> {
            r.into_iter()
                .filter(|r| r.starts_with("manifests.yaml"))
                .collect()
        };
        let (a, b) = (manifests(rows(&from_infra)), manifests(rows(&from_nodes)));
        assert_eq!(a, b, "{infra} against {nodes}");
        // The fixtures are chosen so that the cluster decides something: every one places the 2019 app
        // wrongly or nowhere.
        assert!(
            a.iter()
                .any(|r| r.contains("Deployment/default/legacy-2019")),
            "{infra}: {a:#?}"
        );
    }
}

#[test]
fn eks_windows_nodes_are_untainted_so_linux_pods_need_a_selector() {
    let (_, report) = check("eksctl-windows-2022.yaml");
    let rows = rows(&report);
    // EKS adds no taint to Windows nodes (platforms.md §1.3): the unpinned Linux app could land there.
    assert!(
        rows.iter()
            .any(|r| r.contains("Deployment/default/web linux-pod-without-os-selector")),
        "{rows:#?}"
    );
    // Once, about the node group and the file: not `kubectl taint nodes windows-ng-1`.
    let untainted: Vec<&String> = rows
        .iter()
        .filter(|r| r.contains("windows-node-untainted"))
        .collect();
    assert_eq!(untainted.len(), 1, "{rows:#?}");
    assert!(
        untainted[0].starts_with(
            "<cluster> warning NodeGroup/-/windows-ng windows-node-untainted nodeGroups[0].taints: The Windows nodes of node group windows-ng of eksctl-windows-2022.yaml will have no taint"
        ) && untainted[0].contains("under `taints:` in node group windows-ng of eksctl-windows-2022.yaml")
            && !untainted[0].contains("kubectl"),
        "{untainted:#?}"
    );
}

#[test]
fn node_findings_speak_of_each_pool_once() {
    // Each format's cluster findings: about pools (their object, never a Node), one per pool and rule.
    for infra in [
        "eksctl-windows-2022.yaml",
        "karpenter-v1-windows-2022.yaml",
        "aks-nodepool-list.json",
        "gke-node-pools.json",
        "openshift-machineset-azure-windows.yaml",
    ] {
        let (_, report) = check(infra);
        let cluster: Vec<String> = rows(&report)
            .into_iter()
            .filter(|r| r.starts_with("<cluster>"))
            .collect();
        let mut keys: Vec<String> = cluster
            .iter()
            .map(|r| r.split(':').next().unwrap_or("").to_string())
            .collect();
        assert!(
            cluster.iter().all(|r| !r.contains(" Node/")),
            "{infra}: {cluster:#?}"
        );
        let n = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), n, "{infra}: {cluster:#?}");
    }
}

#[test]
fn a_pool_whose_build_cannot_be_told_is_an_info_finding() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("aws-machineset.yaml");
    std::fs::write(
        &file,
        "apiVersion: machine.openshift.io/v1beta1\nkind: MachineSet\nmetadata: {name: win-aws, namespace: openshift-machine-api}\nspec:\n  replicas: 1\n  template:\n    metadata:\n      labels: {machine.openshift.io/os-id: Windows}\n    spec:\n      providerSpec:\n        value:\n          ami: {id: ami-0123456789abcdef0}\n          instanceType: m5a.large\n",
    )
    .expect("write");
    let (code, report) = check(&file.display().to_string());
    assert_ne!(code, 2, "{report}");
    let info: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == "node-pool-build-unknown")
        .collect();
    assert_eq!(info.len(), 1, "{report}");
    // The kubelet labels every Windows node with its build: unknown is this info finding's, not a
    // missing label on nodes that do not exist yet.
    assert!(
        !report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule"] == "windows-node-missing-build-label"),
        "{report}"
    );
    assert_eq!(info[0]["severity"], "info");
    assert_eq!(info[0]["object"]["name"], "win-aws");
    assert!(
        info[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("ami-0123456789abcdef0"))
    );
}

#[test]
fn a_cluster_file_without_context_is_a_usage_error() {
    let out = winplace(&["check", "manifests.yaml", "--cluster", "manifests.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no Nodes, RuntimeClasses or node pools")
            && text.contains("apps/v1 Deployment"),
        "{text}"
    );
}

#[test]
fn audit_adds_the_pools_of_cluster_files_to_a_snapshot() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A snapshot must be a cluster (docs/reference/snapshots.md): one Linux node of its own.
    let snapshot = tmp.path().join("one-node.json");
    std::fs::write(
        &snapshot,
        r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "snap-node", "labels": {"kubernetes.io/os": "linux"}}}]}"#,
    )
    .expect("write");
    let out = winplace(&[
        "audit",
        "--snapshot",
        &snapshot.display().to_string(),
        "--cluster",
        "gke-node-pools.json",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let names: Vec<&str> = report["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(
        names.contains(&"win-pool") && names.contains(&"default-pool-1"),
        "{names:?}"
    );
}

#[test]
fn platform_presets_set_the_windows_taint_assumed_without_context() {
    let rules_of = |platform: &str| -> Vec<String> {
        let out = winplace(&[
            "check",
            "manifests.yaml",
            "--platform",
            platform,
            "--format",
            "json",
        ]);
        let report: Value = serde_json::from_slice(&out.stdout).expect("json");
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["object"]["name"] == "iis-2022")
            .filter_map(|f| f["rule"].as_str().map(str::to_string))
            .collect()
    };
    // iis-2022 tolerates nothing: generic and GKE assume a Windows taint, EKS and AKS none.
    assert!(rules_of("generic").contains(&"windows-pod-without-toleration".to_string()));
    assert!(rules_of("gke").contains(&"windows-pod-without-toleration".to_string()));
    assert!(!rules_of("eks").contains(&"windows-pod-without-toleration".to_string()));
    assert!(!rules_of("aks").contains(&"windows-pod-without-toleration".to_string()));
    let legacy = winplace(&[
        "check",
        "manifests.yaml",
        "--platform",
        "openshift",
        "--format",
        "json",
    ]);
    let report: Value = serde_json::from_slice(&legacy.stdout).expect("json");
    // WMCO's taint is os=Windows: the 2019 app's `windows` toleration differs in case only.
    assert!(
        report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(
                |f| f["rule"] == "toleration-case-mismatch" && f["object"]["name"] == "legacy-2019"
            ),
        "{report}"
    );
    let bad = winplace(&["check", "manifests.yaml", "--platform", "k3s"]);
    assert_eq!(bad.status.code(), Some(2));
}
