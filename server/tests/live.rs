//! kube-rs against a fake Kubernetes API server over real HTTP on 127.0.0.1 (`common/fake_api.rs`): list
//! and watch for nodes, pods, RuntimeClasses and Events (both APIs) with resourceVersions and bookmarks,
//! `410 Gone` to force a relist, and dropped connections. After each, the audit must converge on the
//! fake's objects; the explained Events become incidents. Faults: a list that never answers, a 403, a
//! node that does not decode, and a flood of pod events.

use crate::common::fake_api;
use crate::common::place;
use crate::common::router;

use fake_api::{FakeApi, Fault, node, pod, runtime_class};
use serde_json::{Value, json};
use std::time::Duration;
use winplace::source::ClusterSource;
use winplace::source::backoff::Steps;
use winplace::source::live::{LiveOptions, LiveSource};
use winplace::state::readiness::NotReady;
use winplace::state::{AppState, Timing};

/// What the published audit holds: node names, pod names, RuntimeClass names.
fn holdings(state: &AppState) -> (Vec<String>, Vec<String>, Vec<String>) {
    let p = state.published();
    let nodes = p
        .context
        .nodes
        .iter()
        .filter_map(|n| n.metadata.name.clone())
        .collect();
    let mut pods: Vec<String> = p
        .report
        .nodes
        .iter()
        .flat_map(|n| n.pods.iter().map(|p| format!("{}/{}", p.namespace, p.name)))
        .collect();
    pods.sort();
    let rcs = p
        .context
        .runtime_classes
        .iter()
        .filter_map(|r| r.object.metadata.name.clone())
        .collect();
    (nodes, pods, rcs)
}

async fn converge(state: &AppState, nodes: &[&str], pods: &[&str], rcs: &[&str], what: &str) {
    let want = (
        nodes.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        pods.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        rcs.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let have = holdings(state);
        if have == want && state.readiness().is_ok() {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("{what}: did not converge: have {have:?}, want {want:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_converge_after_events_410_and_dropped_connections() {
    let api = FakeApi::default();
    api.apply("Node", node("win-0", "windows"));
    api.apply("Node", node("linux-0", "linux"));
    api.apply("Pod", pod("shop", "web-1", "win-0"));
    api.apply("RuntimeClass", runtime_class("windows-2022"));
    let url = api.serve().await;

    let config = kube::Config::new(url.parse().expect("url"));
    let source = LiveSource::from_config(
        config,
        format!("fake API server {url}"),
        LiveOptions::default(),
    )
    .expect("source");
    source
        .probe()
        .await
        .expect_err("the fake has no /version: the probe fails");
    let state = AppState::new(source.info(), Timing::default());
    assert_eq!(state.source().kind, winplace_api::SourceKind::Live);
    let _applier = winplace::state::spawn_applier(
        state.clone(),
        winplace_rules::audit::Audit::default(),
        Box::new(source).events(),
    );

    // 1. The first list.
    converge(
        &state,
        &["linux-0", "win-0"],
        &["shop/web-1"],
        &["windows-2022"],
        "first list",
    )
    .await;
    let first = state.published();
    assert!(
        first
            .context
            .nodes
            .iter()
            .all(|n| n.metadata.managed_fields.is_none()),
        "managedFields trimmed"
    );
    assert!(
        first
            .context
            .nodes
            .iter()
            .all(|n| n.status.as_ref().is_some_and(|s| s.images.is_none()))
    );

    // 2. Watch events: add, modify, delete.
    api.apply("Pod", pod("shop", "web-2", "linux-0"));
    api.apply("Node", node("win-1", "windows"));
    api.apply("RuntimeClass", runtime_class("windows-2025"));
    converge(
        &state,
        &["linux-0", "win-0", "win-1"],
        &["shop/web-1", "shop/web-2"],
        &["windows-2022", "windows-2025"],
        "watch events",
    )
    .await;
    api.delete("Pod", "shop/web-2");
    api.delete("RuntimeClass", "windows-2025");
    api.apply("Pod", pod("shop", "web-1", "win-1")); // moved: MODIFIED
    converge(
        &state,
        &["linux-0", "win-0", "win-1"],
        &["shop/web-1"],
        &["windows-2022"],
        "deletes",
    )
    .await;
    assert_eq!(
        state
            .published()
            .report
            .nodes
            .iter()
            .find(|n| n.name == "win-1")
            .map(|n| n
                .pods
                .iter()
                .map(|p| format!("{}/{}", p.namespace, p.name))
                .collect()),
        Some(vec!["shop/web-1".to_string()])
    );

    // 3. 410 Gone: the pods changed while history was compacted; the resumed watch is refused, the
    //    watcher relists, and what the relist no longer shows is deleted.
    let lists_before = api.requests("Pod", "list");
    api.compact_and_change("Pod", |objects, rv| {
        objects.remove("shop/web-1");
        let mut p = pod("shop", "web-3", "win-0");
        p["metadata"]["resourceVersion"] = json!(rv.to_string());
        objects.insert("shop/web-3".into(), p);
    });
    api.drop_watches("Pod");
    converge(
        &state,
        &["linux-0", "win-0", "win-1"],
        &["shop/web-3"],
        &["windows-2022"],
        "410 relist",
    )
    .await;
    assert!(
        api.requests("Pod", "list") > lists_before,
        "a relist after 410"
    );
    assert!(
        state.metrics().watch_errors() >= 1,
        "the 410 counts as a watch restart"
    );

    // 4. A dropped connection: the watcher resumes from its last resourceVersion and replays what it
    //    missed, without relisting.
    let node_lists = api.requests("Node", "list");
    let node_watches = api.requests("Node", "watch rv=");
    api.drop_watches("Node");
    api.delete("Node", "linux-0");
    api.apply("Node", node("linux-1", "linux"));
    converge(
        &state,
        &["linux-1", "win-0", "win-1"],
        &["shop/web-3"],
        &["windows-2022"],
        "reconnect",
    )
    .await;
    assert_eq!(
        api.requests("Node", "list"),
        node_lists,
        "resumed, not relisted"
    );
    {
        let fake = api.lock();
        let watches: Vec<&str> = fake
            .requests
            .iter()
            .filter(|(k, r)| k == "Node" && r.starts_with("watch rv="))
            .map(|(_, r)| r.as_str())
            .collect();
        assert!(watches.len() > node_watches, "watched again: {watches:?}");
        // From the resourceVersion it had reached (0 would be a fresh start, which replays nothing).
        assert!(
            watches[node_watches..]
                .iter()
                .all(|r| !r.starts_with("watch rv=0 ")),
            "resumed: {watches:?}"
        );
        assert!(
            watches.iter().all(|r| r.ends_with("bookmarks=true")),
            "watches ask for bookmarks: {watches:?}"
        );
    }
    let (_, stale) = state.sync_flags();
    assert!(!stale);
}

/// A `v1` Event about pod `ns/pod`.
fn core_event(ns: &str, name: &str, pod: &str, reason: &str, message: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "Event",
            "metadata": { "name": name, "namespace": ns },
            "involvedObject": { "apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": ns },
            "reason": reason, "type": "Warning", "count": 3,
            "firstTimestamp": "2026-11-25T09:00:00Z", "message": message })
}

/// An `events.k8s.io/v1` Event about pod `ns/pod`.
fn new_event(ns: &str, name: &str, pod: &str, reason: &str, note: &str) -> Value {
    json!({ "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": { "name": name, "namespace": ns },
            "regarding": { "apiVersion": "v1", "kind": "Pod", "name": pod, "namespace": ns },
            "reason": reason, "type": "Warning", "action": "Scheduling",
            "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-x",
            "eventTime": "2026-11-25T10:00:00.000000Z", "note": note })
}

/// The published incidents as (pod, cause, count).
fn incidents(state: &AppState) -> Vec<(String, String, u64)> {
    state
        .published()
        .report
        .incidents
        .iter()
        .map(|i| (i.object.clone(), i.cause.to_string(), i.count))
        .collect()
}

async fn converge_incidents(state: &AppState, want: &[(&str, &str, u64)], what: &str) {
    let want: Vec<(String, String, u64)> = want
        .iter()
        .map(|(o, c, n)| (o.to_string(), c.to_string(), *n))
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let have = incidents(state);
        if have == want {
            return;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("{what}: have {have:?}, want {want:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_both_apis_become_incidents_and_leave_with_their_event_or_pod() {
    let api = FakeApi::default();
    api.apply("Node", node("win-0", "windows"));
    api.apply("Pod", pod("shop", "web-1", "win-0"));
    api.apply("Pod", pod("shop", "web-2", "win-0"));
    // Listed before the first sync: a runtime error (v1) and a scheduler note (events.k8s.io/v1), and
    // an event that explains nothing.
    api.apply("Event", core_event("shop", "web-1.a", "web-1", "Failed",
        "Error: failed to create containerd container: hcs::CreateComputeSystem x: The container operating system does not match the host operating system.: unknown"));
    api.apply("EventsEvent", new_event("shop", "web-2.b", "web-2", "FailedScheduling",
        "0/2 nodes are available: 1 node(s) had untolerated taint {os: windows}, 1 node(s) didn't match Pod's node affinity/selector."));
    api.apply(
        "Event",
        core_event(
            "shop",
            "web-2.c",
            "web-2",
            "Pulled",
            "Container image \"nginx:1.27\" already present on machine",
        ),
    );
    let url = api.serve().await;
    let config = kube::Config::new(url.parse().expect("url"));
    let source = LiveSource::from_config(
        config,
        format!("fake API server {url}"),
        LiveOptions::default(),
    )
    .expect("source");
    let state = AppState::new(source.info(), Timing::default());
    let _applier = winplace::state::spawn_applier(
        state.clone(),
        winplace_rules::audit::Audit::default(),
        Box::new(source).events(),
    );
    converge(
        &state,
        &["win-0"],
        &["shop/web-1", "shop/web-2"],
        &[],
        "first list",
    )
    .await;
    converge_incidents(
        &state,
        &[
            ("Pod/shop/web-1", "build-mismatch", 3),
            ("Pod/shop/web-2", "untolerated-taint", 1),
            ("Pod/shop/web-2", "selector-mismatch", 1),
        ],
        "listed events",
    )
    .await;
    assert!(api.requests("Event", "watch") >= 1 && api.requests("EventsEvent", "watch") >= 1);
    // Watched after the sync: the same event again with a new count, a sandbox event; then an event
    // deleted and a pod deleted take their incidents with them.
    let mut again = core_event(
        "shop",
        "web-1.a",
        "web-1",
        "Failed",
        "Error: failed to create containerd container: hcs::CreateComputeSystem x: The container operating system does not match the host operating system.: unknown",
    );
    again["count"] = json!(9);
    api.apply("Event", again);
    converge_incidents(
        &state,
        &[
            ("Pod/shop/web-1", "build-mismatch", 9),
            ("Pod/shop/web-2", "untolerated-taint", 1),
            ("Pod/shop/web-2", "selector-mismatch", 1),
        ],
        "an event updated",
    )
    .await;
    api.delete("EventsEvent", "shop/web-2.b");
    api.delete("Pod", "shop/web-1");
    converge_incidents(&state, &[], "event and pod deleted").await;
    assert!(state.readiness().is_ok());
}

/// A live source on the fake at `url` with `options`, its audit thread, and the state it publishes
/// into.
fn start(url: &str, options: LiveOptions, timing: Timing) -> AppState {
    let config = kube::Config::new(url.parse().expect("url"));
    let source =
        LiveSource::from_config(config, format!("fake API server {url}"), options).expect("source");
    let state = AppState::new(source.info(), timing);
    let _applier = winplace::state::spawn_applier(
        state.clone(),
        winplace_rules::audit::Audit::default(),
        Box::new(source).events(),
    );
    state
}

/// Polls `what` until it returns `Some`, for at most 30 s (a bound on the test, not a measurement).
async fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `GET path` through the router: status and body.
async fn get(state: &AppState, path: &str) -> (u16, String) {
    let request = axum::http::Request::get(path)
        .header("host", "localhost")
        .body(axum::body::Body::empty())
        .expect("request");
    let (status, _, body) = router::send(state, request).await;
    (status.as_u16(), String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_that_never_answers_is_reported_within_its_time_limit() {
    let api = FakeApi::default();
    api.apply("Node", node("linux-0", "linux"));
    api.set_fault("Pod", Some(Fault::Hang));
    let url = api.serve().await;
    let options = LiveOptions {
        list_timeout: Duration::from_millis(300),
        backoff: Steps {
            first: Duration::from_millis(50),
            max: Duration::from_millis(400),
        },
    };
    let state = start(&url, options, Timing::default());
    // Not ready, and the reason is the list that got no answer.
    let error = eventually("the pod list's time limit", || match state.readiness() {
        Err(NotReady::NotSynced(Some(error))) => Some(error),
        _ => None,
    })
    .await;
    assert_eq!(error, "cannot list pods: no answer within 0.3 s");
    let (status, body) = get(&state, "/readyz").await;
    assert_eq!(
        (status, body.as_str()),
        (
            503,
            "not ready: the first list of the cluster has not completed: cannot list pods: no answer within 0.3 s"
        )
    );
    // It was asked again (the time limit fails the call; the watcher retries it).
    eventually("a second pod list", || {
        (api.requests("Pod", "list") >= 2).then_some(())
    })
    .await;
    // Once the API server answers, the list completes and the error is gone.
    api.set_fault("Pod", None);
    converge(&state, &["linux-0"], &[], &[], "after the hang").await;
    assert_eq!(state.meta(&state.published()).freshness.error, None);
}

/// The API server's answer to a service account without `list` on pods (docs/reference/limits.md §4).
fn forbidden_pods() -> Value {
    json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
        "message":"pods is forbidden: User \"system:serviceaccount:winplace:winplace\" cannot list resource \"pods\" in API group \"\" at the cluster scope",
        "reason":"Forbidden","details":{"kind":"pods"},"code":403})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_list_is_said_in_words_and_retried_with_growing_waits_and_a_bad_node_is_skipped()
 {
    let api = FakeApi::default();
    api.apply("Node", node("linux-0", "linux"));
    // A node whose `spec.taints` is not a list: it does not decode as a Node.
    let mut bad = node("win-bad", "windows");
    bad["spec"]["taints"] = json!("os=windows:NoSchedule");
    api.apply("Node", bad);
    api.apply("Pod", pod("shop", "web-1", "linux-0"));
    api.set_fault("Pod", Some(Fault::Status(403, forbidden_pods())));
    let url = api.serve().await;
    // Waits of 50–100 ms, then 100–200 ms, then 200–400 ms and no longer.
    let steps = Steps {
        first: Duration::from_millis(50),
        max: Duration::from_millis(400),
    };
    let options = LiveOptions {
        list_timeout: Duration::from_secs(10),
        backoff: steps,
    };
    let state = start(&url, options, Timing::default());
    let words = "cannot list pods: 403 Forbidden — the ClusterRole needs list and watch on pods (pods is forbidden: User \"system:serviceaccount:winplace:winplace\" cannot list resource \"pods\" in API group \"\" at the cluster scope)";
    eventually("the 403 in words", || {
        (state.readiness() == Err(NotReady::NotSynced(Some(words.to_string())))).then_some(())
    })
    .await;
    let (status, body) = get(&state, "/readyz").await;
    assert_eq!(status, 503);
    assert_eq!(
        body,
        format!("not ready: the first list of the cluster has not completed: {words}")
    );
    let (status, body) = get(&state, "/api/summary").await;
    assert_eq!(status, 200);
    let summary: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(summary["meta"]["freshness"]["error"], json!(words));
    assert_eq!(summary["meta"]["freshness"]["synced"], json!(false));

    // Backoff: five lists, and the waits between them at least the steps, doubling from 50 ms and no
    // longer after 200 ms (a wait is never shorter than its step; kube-rs's default backoff started over
    // before every list, so its waits stayed at the first step).
    eventually("five pod lists", || {
        (api.requests("Pod", "list") >= 5).then_some(())
    })
    .await;
    let lists: Vec<std::time::Instant> = api
        .lock()
        .lists_at
        .iter()
        .filter(|(kind, _)| kind == "Pod")
        .map(|(_, at)| *at)
        .collect();
    for (n, pair) in lists.windows(2).take(4).enumerate() {
        let step = Duration::from_millis(50 << n).min(Duration::from_millis(200));
        let wait = pair[1] - pair[0];
        assert!(wait >= step, "wait {n}: {wait:?} < {step:?}");
    }
    // The nodes were listed once: the bad node is skipped, not a reason to list again.
    assert_eq!(api.requests("Node", "list"), 1, "nodes listed once");

    // Granted: the pods list, the cluster syncs without the bad node, and the error is gone.
    api.set_fault("Pod", None);
    converge(&state, &["linux-0"], &["shop/web-1"], &[], "after the 403").await;
    let (status, body) = get(&state, "/readyz").await;
    assert_eq!((status, body.as_str()), (200, "ready"));
    assert_eq!(state.meta(&state.published()).freshness.error, None);
    assert_eq!(api.requests("Node", "list"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_pod_events_is_applied_with_a_node_change_behind_it() {
    const PODS: usize = 3_000;
    let api = FakeApi::default();
    api.apply("Node", node("linux-0", "linux"));
    api.apply("Node", node("win-0", "windows"));
    let url = api.serve().await;
    let state = start(&url, LiveOptions::default(), Timing::default());
    converge(&state, &["linux-0", "win-0"], &[], &[], "first list").await;
    // A flood of ADDs, a node added behind it, then the DELETEs of the same pods.
    let names: Vec<String> = (0..PODS).map(|i| format!("stray-{i:05}")).collect();
    api.apply_all(
        "Pod",
        names.iter().map(|n| {
            pod(
                "shop",
                n,
                if n.ends_with('0') { "win-0" } else { "linux-0" },
            )
        }),
    );
    api.apply("Node", node("linux-1", "linux"));
    let all: Vec<String> = names.iter().map(|n| format!("shop/{n}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    converge(
        &state,
        &["linux-0", "linux-1", "win-0"],
        &all,
        &[],
        "the ADDs",
    )
    .await;
    assert_eq!(state.published().report.summary.pods, PODS);
    for n in &names {
        api.delete("Pod", &format!("shop/{n}"));
    }
    converge(
        &state,
        &["linux-0", "linux-1", "win-0"],
        &[],
        &[],
        "the DELETEs",
    )
    .await;
    let p = state.published();
    assert_eq!((p.report.summary.pods, p.report.summary.workloads), (0, 0));
    assert_eq!(state.behind(), 0, "nothing left to apply");
}

/// `winplace_gated_pods` and `winplace_gated_oldest_age_seconds` as `/metrics` says them.
async fn gated_series(state: &AppState) -> (u64, u64) {
    let (status, text) = get(state, "/metrics").await;
    assert_eq!(status, 200);
    let value = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    };
    (
        value("winplace_gated_pods"),
        value("winplace_gated_oldest_age_seconds"),
    )
}

/// Polls the gated pods' series until their count is `pods`, for at most 30 s.
async fn gated_count(state: &AppState, pods: u64, what: &str) -> u64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (count, age) = gated_series(state).await;
        if count == pods && state.readiness().is_ok() {
            return age;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: {count} gated pods, not {pods}, within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The placement kit's gated pod (in `shop`), created `age` seconds ago, with the scheduling gates
/// `gates` instead of winplace's alone.
fn gated(name: &str, age: i64, gates: &[&str]) -> Value {
    let mut pod = place::gated_pod(name, "app:1", json!({}));
    pod["metadata"]["creationTimestamp"] = json!(place::now_minus(age));
    let gates: Vec<Value> = gates.iter().map(|g| json!({"name": g})).collect();
    pod["spec"]["schedulingGates"] = json!(gates);
    pod
}

/// The pods waiting at winplace's gate, seen by the live audit whatever runs beside it (no placement
/// controller here): how many, and how long the oldest has waited, growing with time; both back to 0
/// once the gates are removed (as the controller removes them) or the pods deleted. Another gate alone
/// does not count.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gated_pods_and_the_oldest_ones_age_follow_the_watch() {
    use place::GATE;
    let api = FakeApi::default();
    api.apply("Node", node("linux-0", "linux"));
    api.apply("Pod", pod("shop", "running", "linux-0"));
    api.apply("Pod", gated("waiting-long", 600, &[GATE]));
    api.apply("Pod", gated("waiting", 30, &["example.com/quota", GATE]));
    api.apply("Pod", gated("quota-only", 3600, &["example.com/quota"]));
    let url = api.serve().await;
    let state = start(&url, LiveOptions::default(), Timing::default());

    let age = gated_count(&state, 2, "the first list").await;
    assert!((600..660).contains(&age), "the oldest is 600 s old: {age}");
    // A second later the same pod is older.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (count, later) = gated_series(&state).await;
    assert_eq!(count, 2);
    assert!(later > age, "the age grows: {age}, then {later}");

    // The controller removes the older pod's gate: the other one is the oldest now.
    let mut placed = gated("waiting-long", 600, &[]);
    placed["spec"]["nodeName"] = json!("linux-0");
    api.apply("Pod", placed);
    let age = gated_count(&state, 1, "a gate removed").await;
    assert!(
        (30..90).contains(&age),
        "the oldest left is 30 s old: {age}"
    );
    // The last one deleted while gated: nothing waits.
    api.delete("Pod", "shop/waiting");
    assert_eq!(gated_count(&state, 0, "the last deleted").await, 0);
    // A gated pod created later counts again (a watch event, not a relist).
    api.apply("Pod", gated("new", 5, &[GATE]));
    let age = gated_count(&state, 1, "a new gated pod").await;
    assert!((5..65).contains(&age), "{age}");
}
