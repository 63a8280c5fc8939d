//! `winplace what-if` through the built binary: the 2019 → 2025 question on the demo cluster (live
//! workloads), the same on the demo cluster given as a snapshot, and manifests against infrastructure
//! files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn server_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn winplace(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_winplace"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env_remove("KUBECONFIG")
        .output()
        .expect("the winplace binary runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn change<'a>(report: &'a Value, object: &str) -> Option<&'a Value> {
    report["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["object"] == object)
}

/// Retiring the Windows Server 2019 pool for a 2025 one breaks exactly the workload pinned to 2019, and
/// the fix names the ltsc2025 tag of its image and the range of builds that run it (2025 alone). The unpinned 2019 workload
/// (`legacy/ledger`) was broken before and stays broken, but its advice changes: with no 2019 node left,
/// pinning a build cannot help, so `windows-pod-without-build-selector` gives way to the rebuild advice
/// of `schedulable-on-incompatible-build` (one problem, one error).
fn assert_2019_to_2025(report: &Value) {
    let changes = report["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 2, "{report:#}");
    let ledger = change(report, "Deployment/legacy/ledger").expect("ledger changes");
    assert_eq!(
        ledger["after"],
        serde_json::json!(["schedulable-on-incompatible-build"])
    );
    assert!(
        ledger["before"]
            .as_array()
            .is_some_and(|b| b.iter().any(|r| r == "windows-pod-without-build-selector")),
        "{ledger:#}"
    );
    let invoice = change(report, "Deployment/billing/invoice-api").expect("invoice-api changes");
    assert_eq!(invoice["before"], serde_json::json!([]));
    assert_eq!(invoice["after"], serde_json::json!(["no-schedulable-node"]));
    let fixes: Vec<&str> = invoice["fixes"]
        .as_array()
        .expect("fixes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        fixes
            .iter()
            .any(|f| f.contains("aspnet:4.8-windowsservercore-ltsc2025")
                && f.contains(
                    "pin required node affinity node.kubernetes.io/windows-build In [10.0.26100]"
                )),
        "{fixes:#?}"
    );
    assert_eq!(report["buildsAfter"]["10.0.26100"], 4);
    assert!(report["buildsAfter"].get("10.0.17763").is_none());
    assert_eq!(report["summary"]["broken"], 1);
}

#[test]
fn retiring_2019_for_2025_on_the_demo_cluster() {
    let out = winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--remove-build",
            "2019",
            "--add",
            "tests/infra/aks-win2025-pool.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_2019_to_2025(&json(&out));
    // The same plan by pool name.
    let by_pool = winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--remove-pool",
            "win19",
            "--add",
            "tests/infra/aks-win2025-pool.json",
            "--format",
            "json",
        ],
    );
    assert_2019_to_2025(&json(&by_pool));
}

#[test]
fn the_same_on_a_snapshot_and_in_text() {
    let out = winplace(
        &server_dir(),
        &[
            "what-if",
            "--snapshot",
            "demo/cluster.yaml",
            "--remove-build",
            "10.0.17763",
            "--add",
            "tests/infra/aks-win2025-pool.json",
            "--format",
            "json",
        ],
    );
    assert_2019_to_2025(&json(&out));
    let text = winplace(
        &server_dir(),
        &[
            "what-if",
            "--snapshot",
            "demo/cluster.yaml",
            "--remove-build",
            "ltsc2019",
            "--add",
            "tests/infra/aks-win2025-pool.json",
        ],
    );
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("BREAKS Deployment/billing/invoice-api"),
        "{text}"
    );
    assert!(text.contains("1 workload(s) break"), "{text}");
}

#[test]
fn a_plan_that_breaks_nothing_exits_0() {
    let out = winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--add",
            "tests/infra/aks-win2025-pool.json",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["summary"]["broken"], 0);
    let bad = winplace(
        &server_dir(),
        &["what-if", "--demo", "--remove-build", "banana"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn manifests_against_infrastructure_files() {
    let dir = server_dir().join("tests/infra");
    // The EKS example cluster loses its Windows node group: the pinned 2022 app has nowhere to go.
    let out = winplace(
        &dir,
        &[
            "what-if",
            "manifests.yaml",
            "--cluster",
            "eksctl-windows-2022.yaml",
            "--remove-pool",
            "windows-ng",
            "--format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out);
    let iis = change(&report, "Deployment/default/iis-2022").expect("iis-2022 changes");
    assert!(
        iis["after"]
            .as_array()
            .expect("after")
            .iter()
            .any(|r| r == "no-schedulable-node")
    );
    // The fixture's Linux app is fixed by it: no untainted Windows node is left for it to land on.
    let web = change(&report, "Deployment/default/web").expect("web changes");
    assert_eq!(web["after"], serde_json::json!([]));
}
