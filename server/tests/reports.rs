//! `winplace serve --reports` (the built binary) against the fake API server of `tests/common/`, over
//! real HTTP: the reports follow the live audit, one write per change and none over unchanged state, a
//! clean namespace's report deleted, a live-state finding in its namespace's report, two replicas
//! writing through one leader; every write checked by the fake as kube-apiserver checks it against the
//! vendored CRDs (strict field validation, the schema, RBAC). The write window is a flag
//! (`--reports-interval`), so the tests count whole windows in a few seconds.

use crate::common::fake_api::{self, FakeApi, Write};
use crate::common::oci_registry;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The write window of the tests, in seconds.
const INTERVAL: f64 = 0.3;
const LEASE: &str = "default/winplace-reports";

/// One `winplace serve --reports` with identity and token `id`; killed on drop.
struct Replica {
    child: Child,
}

impl Replica {
    fn start(dir: &std::path::Path, api: &str, id: &str, extra: &[&str]) -> Self {
        let kubeconfig = dir.join(format!("kubeconfig-{id}"));
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {api}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: {id}\n"
            ),
        )
        .expect("kubeconfig");
        let listen = format!("127.0.0.1:{}", oci_registry::free_port());
        let child = Command::new(env!("CARGO_BIN_EXE_winplace"))
            .args(["serve", "--reports", "--kubeconfig"])
            .arg(&kubeconfig)
            .args(["--reports-interval", &INTERVAL.to_string()])
            .args(["--place-identity", id, "--place-lease-duration", "2"])
            .args(["--listen", &listen])
            .args(extra)
            .env("HOME", dir)
            .env_remove("KUBECONFIG")
            .env("RUST_LOG", "winplace=info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(format!("{id}.log"))).expect("log"))
            .spawn()
            .expect("winplace serve --reports starts");
        Replica { child }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn logs(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.path().extension().is_some_and(|e| e == "log") {
            out += &format!(
                "--- {}\n{}",
                entry.path().display(),
                std::fs::read_to_string(entry.path()).unwrap_or_default()
            );
        }
    }
    out
}

async fn until(dir: &std::path::Path, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}; logs:\n{}",
            logs(dir)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A Linux node and a Windows Server 2022 node (build 10.0.20348).
fn cluster() -> FakeApi {
    let api = FakeApi::default();
    api.lock().version = true;
    api.apply("Node", fake_api::node("linux-1", "linux"));
    let mut win = fake_api::node("win22-1", "windows");
    win["metadata"]["labels"]["node.kubernetes.io/windows-build"] = json!("10.0.20348");
    api.apply("Node", win);
    api
}

/// A Windows Server 2019 pod (build 10.0.17763) running on the 2022 node: a live-state finding.
fn misplaced(ns: &str, name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "uid": format!("uid-{ns}-{name}")},
        "spec": {"nodeName": "win22-1", "nodeSelector": {"kubernetes.io/os": "windows"},
                 "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                 "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}]},
        "status": {"phase": "Running"}})
}

/// The report writes (APPLY and DELETE of reports) received so far.
fn report_writes(api: &FakeApi) -> Vec<Write> {
    api.lock()
        .writes
        .iter()
        .filter(|w| w.what.starts_with("APPLY") || w.what.starts_with("DELETE"))
        .cloned()
        .collect()
}

fn writes_of(api: &FakeApi, what: &str) -> usize {
    report_writes(api).iter().filter(|w| w.what == what).count()
}

fn rules_in(report: &Value) -> Vec<String> {
    report["results"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["rule"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_follow_the_audit_one_write_per_change_none_over_unchanged_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = cluster();
    // A Linux pod pinned to Linux: nothing to report in its namespace.
    let mut clean = fake_api::pod("web", "front", "linux-1");
    clean["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "linux"});
    api.apply("Pod", clean);
    api.apply("Pod", misplaced("shop", "legacy"));
    let url = api.serve().await;
    let _replica = Replica::start(dir.path(), &url, "a", &[]);

    until(dir.path(), "the shop Report", || {
        api.get("Report", "shop/winplace").is_some()
    })
    .await;
    let report = api.get("Report", "shop/winplace").expect("report");
    // The live-state finding, in the report of its namespace, with its severity and source.
    let result = report["results"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["rule"] == "pod-on-incompatible-build"))
        .unwrap_or_else(|| panic!("no live-state finding in {report:#}"));
    assert_eq!(result["resources"][0]["name"], "legacy", "{result}");
    assert_eq!(result["source"], "winplace");
    assert_eq!(report["source"], "winplace");
    assert_eq!(
        report["metadata"]["managedFields"][0]["manager"],
        "winplace-reports"
    );
    // A namespace without findings has no report.
    assert_eq!(api.get("Report", "web/winplace"), None);
    let first = report_writes(&api);
    assert!(
        first.iter().all(|w| w.status == 200 || w.status == 201),
        "{first:?}\n{}",
        logs(dir.path())
    );

    // Ten windows of unchanged state: not one write.
    let before = report_writes(&api).len();
    tokio::time::sleep(Duration::from_secs_f64(INTERVAL * 10.0)).await;
    assert_eq!(
        report_writes(&api)[before..].to_vec().len(),
        0,
        "{:?}",
        &report_writes(&api)[before..]
    );

    // A change that changes no finding (a label on the pod): the audit publishes, nothing is written.
    let mut relabeled = misplaced("shop", "legacy");
    relabeled["metadata"]["labels"] = json!({"team": "ledger"});
    let revisions = api.requests("Pod", "watch");
    api.apply("Pod", relabeled);
    tokio::time::sleep(Duration::from_secs_f64(INTERVAL * 5.0)).await;
    assert_eq!(api.requests("Pod", "watch"), revisions, "the watch held");
    assert_eq!(
        report_writes(&api).len(),
        before,
        "{:?}",
        &report_writes(&api)[before..]
    );

    // Three pods change at once: one write of the shop report.
    let applies = writes_of(&api, "APPLY Report shop/winplace");
    api.apply_all(
        "Pod",
        ["legacy-2", "legacy-3", "legacy-4"].map(|n| misplaced("shop", n)),
    );
    until(dir.path(), "the new pods in the report", || {
        api.get("Report", "shop/winplace").is_some_and(|r| {
            r["results"]
                .as_array()
                .is_some_and(|rs| rs.iter().any(|x| x["resources"][0]["name"] == "legacy-4"))
        })
    })
    .await;
    tokio::time::sleep(Duration::from_secs_f64(INTERVAL * 4.0)).await;
    assert_eq!(
        writes_of(&api, "APPLY Report shop/winplace"),
        applies + 1,
        "{:?}",
        report_writes(&api)
    );
    assert!(rules_in(&api.get("Report", "shop/winplace").expect("report")).len() >= 4);

    // The namespace becomes clean: its report is deleted, once.
    for name in ["legacy", "legacy-2", "legacy-3", "legacy-4"] {
        api.delete("Pod", &format!("shop/{name}"));
    }
    until(dir.path(), "the shop report deleted", || {
        api.get("Report", "shop/winplace").is_none()
    })
    .await;
    tokio::time::sleep(Duration::from_secs_f64(INTERVAL * 4.0)).await;
    assert_eq!(writes_of(&api, "DELETE Report shop/winplace"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_write_through_one_leader() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = cluster();
    api.apply("Pod", misplaced("shop", "legacy"));
    let url = api.serve().await;
    let _a = Replica::start(dir.path(), &url, "a", &[]);
    let _b = Replica::start(dir.path(), &url, "b", &[]);
    until(dir.path(), "the shop Report", || {
        api.get("Report", "shop/winplace").is_some()
    })
    .await;
    api.apply("Pod", misplaced("shop", "legacy-2"));
    api.apply("Pod", misplaced("tools", "old"));
    until(dir.path(), "the tools Report", || {
        api.get("Report", "tools/winplace").is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_secs_f64(INTERVAL * 4.0)).await;
    let holder = api
        .get("Lease", LEASE)
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
        .expect("the reports Lease has a holder");
    let writes = report_writes(&api);
    assert!(
        writes.iter().all(|w| w.token == holder),
        "writes of another replica than the leader {holder}: {writes:?}"
    );
    // Each change written once, not once per replica.
    assert_eq!(
        writes_of(&api, "APPLY Report tools/winplace"),
        1,
        "{writes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_reports_on_request_and_written_once_the_rbac_allows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = cluster();
    api.apply("Pod", misplaced("shop", "legacy"));
    api.lock().forbid_reports.push("a".into());
    let url = api.serve().await;
    let _replica = Replica::start(dir.path(), &url, "a", &["--reports-format", "policyreport"]);
    until(dir.path(), "a refused list", || {
        logs(dir.path()).contains("the reports RBAC")
    })
    .await;
    assert_eq!(api.all("PolicyReport"), Vec::<Value>::new());
    // Granted: the next try, one window later, writes the report.
    api.lock().forbid_reports.clear();
    until(dir.path(), "the shop PolicyReport", || {
        api.get("PolicyReport", "shop/winplace").is_some()
    })
    .await;
    let report = api.get("PolicyReport", "shop/winplace").expect("report");
    assert_eq!(report["apiVersion"], "wgpolicyk8s.io/v1alpha2");
    assert!(rules_in(&report).contains(&"pod-on-incompatible-build".to_string()));
    assert_eq!(api.all("Report"), Vec::<Value>::new());
}

/// What the fake refuses, as kube-apiserver does: without it, the tests above would pass on reports a
/// real cluster refuses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_refuses_what_the_api_server_refuses() {
    let api = FakeApi::default();
    let url = api.serve().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let good = json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
        "metadata": {"name": "winplace", "namespace": "shop"}, "source": "winplace",
        "summary": {"fail": 1},
        "results": [{"policy": "p", "result": "fail", "severity": "high",
                     "timestamp": {"seconds": 1, "nanos": 0}}]});
    let apply = |path: &str, body: &Value, query: &str, token: &str| {
        client
            .patch(format!("{url}{path}?{query}"))
            .header("content-type", "application/apply-patch+yaml")
            .bearer_auth(token)
            .body(body.to_string())
            .send()
    };
    let one = "/apis/openreports.io/v1alpha1/namespaces/shop/reports/winplace";
    let strict = "fieldManager=m&fieldValidation=Strict";
    let status = |r: reqwest::Result<reqwest::Response>| r.expect("answer").status().as_u16();
    assert_eq!(status(apply(one, &good, strict, "t").await), 201);
    assert_eq!(status(apply(one, &good, strict, "t").await), 200);
    // An unknown field under strict validation: 400; without it, pruned and accepted.
    let mut unknown = good.clone();
    unknown["results"][0]["fixes"] = json!("x");
    let answer = apply(one, &unknown, strict, "t").await.expect("answer");
    assert_eq!(answer.status().as_u16(), 400);
    let text = answer.text().await.unwrap_or_default();
    assert!(
        text.contains(".results[0].fixes: field not declared in schema"),
        "{text}"
    );
    assert_eq!(
        status(apply(one, &unknown, "fieldManager=m", "t").await),
        200
    );
    // A value the schema refuses: 422.
    let mut invalid = good.clone();
    invalid["results"][0]["severity"] = json!("urgent");
    assert_eq!(status(apply(one, &invalid, strict, "t").await), 422);
    // Another apiVersion in the body than the URL's: 400; a version the CRD does not serve: 404.
    let mut other = good.clone();
    other["apiVersion"] = json!("wgpolicyk8s.io/v1alpha2");
    assert_eq!(status(apply(one, &other, strict, "t").await), 400);
    let unserved = "/apis/openreports.io/v1alpha2/namespaces/shop/reports/winplace";
    assert_eq!(status(apply(unserved, &good, strict, "t").await), 404);
    // No field manager: 400. No RBAC: 403.
    assert_eq!(status(apply(one, &good, "", "t").await), 400);
    api.lock().forbid_reports.push("nobody".into());
    assert_eq!(status(apply(one, &good, strict, "nobody").await), 403);
}
