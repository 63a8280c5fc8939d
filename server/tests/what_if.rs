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

fn broken(report: &Value) -> Vec<String> {
    report["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|c| {
            let before = c["before"].as_array().expect("before");
            c["after"]
                .as_array()
                .expect("after")
                .iter()
                .any(|r| !before.contains(r))
        })
        .map(|c| c["object"].as_str().unwrap_or("").to_string())
        .collect()
}

/// AKS's 2022 → 2025 change of a pool in place (platforms.md §7): the pool's three nodes move to 26100
/// and keep their taint, so the app pinned to exactly 10.0.20348 has nowhere to go, while the same app
/// pinned to the builds that run it (required affinity In [10.0.20348, 10.0.26100]) does not change.
/// Every spelling of the build gives the same answer, in the same JSON as any plan.
#[test]
fn upgrading_a_pool_in_place_breaks_an_exact_pin_and_leaves_a_range_alone() {
    let dir = server_dir().join("tests/infra");
    let plan = |build: &str| {
        winplace(
            &dir,
            &[
                "what-if",
                "pins.yaml",
                "--cluster",
                "aks-2019-2022-pools.json",
                "--upgrade-pool",
                &format!("win22={build}"),
                "--format",
                "json",
            ],
        )
    };
    let out = plan("2025");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(broken(&report), ["Deployment/web/exact-2022"], "{report:#}");
    let exact = change(&report, "Deployment/web/exact-2022").expect("exact-2022");
    assert_eq!(exact["after"], serde_json::json!(["no-schedulable-node"]));
    assert!(
        change(&report, "Deployment/web/range-2022").is_none(),
        "{report:#}"
    );
    assert_eq!(report["buildsBefore"]["10.0.20348"], 3);
    assert_eq!(report["buildsAfter"]["10.0.26100"], 3);
    assert_eq!(report["buildsAfter"]["10.0.17763"], 2);
    assert!(report["buildsAfter"].get("10.0.20348").is_none());
    // Same JSON as any plan: no calendar asked, no retirements key.
    assert!(report.get("retirements").is_none());
    for spelling in ["ltsc2025", "26100", "10.0.26100"] {
        assert_eq!(json(&plan(spelling)), report, "{spelling}");
    }
    // Bad values are named.
    for (arg, named) in [
        ("win22=banana", "\"banana\" is not a Windows build"),
        ("win22", "write POOL=BUILD"),
        (
            "win23=2025",
            "no node of the cluster is in pool win23 (pools: system, win19, win22)",
        ),
        (
            "system=2025",
            "pool system has nodes that are not Windows nodes",
        ),
    ] {
        let out = winplace(
            &dir,
            &[
                "what-if",
                "pins.yaml",
                "--cluster",
                "aks-2019-2022-pools.json",
                "--upgrade-pool",
                arg,
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{arg}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(named), "{arg}: {stderr}");
    }
}

/// The retirement calendar on an `az aks nodepool list` file: on 2026-03-02 AKS has retired Windows Server
/// 2019 (lifecycle.md A1, 2026-03-01), so its pool goes and the 2019 app breaks; the retirement is named
/// with its date and source in JSON and text. The day before, nothing goes. With Kubernetes 1.37, 2022
/// goes too (A12).
#[test]
fn a_date_retires_what_aks_retired_by_then() {
    let dir = server_dir().join("tests/infra");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "what-if",
            "pins.yaml",
            "--cluster",
            "aks-2019-2022-pools.json",
        ];
        args.extend_from_slice(extra);
        winplace(&dir, &args)
    };
    let out = run(&["--on", "2026-03-02", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    assert_eq!(
        broken(&report),
        ["Deployment/billing/ledger-2019"],
        "{report:#}"
    );
    let retirements = report["retirements"].as_array().expect("retirements");
    assert_eq!(retirements.len(), 1, "{report:#}");
    let r = &retirements[0];
    assert_eq!(r["platform"], "aks");
    assert_eq!(r["build"], "10.0.17763");
    assert_eq!(r["date"], "2026-03-01");
    assert_eq!(r["nodes"], 2);
    assert!(
        r["what"]
            .as_str()
            .is_some_and(|w| w.contains("Windows Server 2019 retired")),
        "{r}"
    );
    assert!(
        r["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("lifecycle.md A1: MicrosoftDocs/azure-aks-docs")),
        "{r}"
    );
    assert!(report["buildsAfter"].get("10.0.17763").is_none());

    let text = run(&["--on", "2026-03-02"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("what-if: on 2026-03-02"), "{text}");
    assert!(
        text.contains("retired: AKS 10.0.17763 (retired 2026-03-01)"),
        "{text}"
    );
    assert!(
        text.contains("BREAKS Deployment/billing/ledger-2019"),
        "{text}"
    );

    let before = run(&["--on", "2026-02-28", "--format", "json"]);
    assert_eq!(before.status.code(), Some(0));
    assert_eq!(json(&before)["retirements"], serde_json::json!([]));

    let k137 = json(&run(&[
        "--on",
        "2026-03-02",
        "--kubernetes-version",
        "1.37",
        "--format",
        "json",
    ]));
    let facts: Vec<&str> = k137["retirements"]
        .as_array()
        .expect("retirements")
        .iter()
        .filter_map(|r| r["fact"].as_str())
        .collect();
    assert_eq!(facts, ["A1", "A12"]);
    let mut gone = broken(&k137);
    gone.sort();
    assert_eq!(
        gone,
        [
            "Deployment/billing/ledger-2019",
            "Deployment/web/exact-2022",
            "Deployment/web/range-2022"
        ]
    );

    let bad = run(&["--on", "2026-02-30"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("2026-02-30"));
}

/// The same on the cluster's own workloads (the demo): its AKS 2019 pool (labelled as AKS labels its
/// nodes) is retired on 2026-03-02 as `--remove-build 2019` would remove it; upgrading it in place
/// to 2025 instead keeps its two nodes.
#[test]
fn the_calendar_and_an_upgrade_on_the_demo_cluster() {
    let out = winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--on",
            "2026-03-02",
            "--format",
            "json",
        ],
    );
    let report = json(&out);
    assert_eq!(report["retirements"][0]["date"], "2026-03-01", "{report:#}");
    assert_eq!(
        report["retirements"][0]["pools"],
        serde_json::json!(["win19"])
    );
    assert!(report["buildsAfter"].get("10.0.17763").is_none());
    let removed = json(&winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--remove-build",
            "2019",
            "--format",
            "json",
        ],
    ));
    assert_eq!(report["changes"], removed["changes"]);
    let up = json(&winplace(
        &server_dir(),
        &[
            "what-if",
            "--demo",
            "--upgrade-pool",
            "win19=2025",
            "--format",
            "json",
        ],
    ));
    let before_2025 = up["buildsBefore"]["10.0.26100"].as_u64().unwrap_or(0);
    assert_eq!(
        up["buildsAfter"]["10.0.26100"].as_u64(),
        Some(before_2025 + 2),
        "{up:#}"
    );
    assert!(up["buildsAfter"].get("10.0.17763").is_none());
    assert!(
        change(&up, "Deployment/billing/invoice-api").is_some(),
        "{up:#}"
    );
}
