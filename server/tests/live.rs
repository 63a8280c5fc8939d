//! kube-rs against a fake Kubernetes API server over real HTTP on 127.0.0.1: list and watch for nodes,
//! pods, RuntimeClasses and Events (both APIs) with resourceVersions and bookmarks, `410 Gone` to force
//! a relist, and dropped connections. After each, the audit must converge on the fake's objects; the
//! explained Events become incidents.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;
use winplace::source::ClusterSource;
use winplace::source::live::LiveSource;
use winplace::state::{AppState, Timing};

/// The kinds served: (list path, apiVersion, kind as the fake stores it). Both Event APIs list objects
/// of kind `Event`; the fake keeps them apart as `Event` and `EventsEvent`.
const KINDS: [(&str, &str, &str); 5] = [
    ("/api/v1/nodes", "v1", "Node"),
    ("/api/v1/pods", "v1", "Pod"),
    (
        "/apis/node.k8s.io/v1/runtimeclasses",
        "node.k8s.io/v1",
        "RuntimeClass",
    ),
    ("/api/v1/events", "v1", "Event"),
    (
        "/apis/events.k8s.io/v1/events",
        "events.k8s.io/v1",
        "EventsEvent",
    ),
];

type Chunk = Result<Bytes, std::io::Error>;

#[derive(Default)]
struct Kind {
    /// Current objects by `namespace/name`.
    objects: BTreeMap<String, Value>,
    /// Watch events (resourceVersion, type, object) still retained.
    history: Vec<(u64, &'static str, Value)>,
    /// Watches resuming from a resourceVersion below this get `410 Gone`.
    compacted_before: u64,
    /// Open watch streams.
    watchers: Vec<mpsc::UnboundedSender<Chunk>>,
}

#[derive(Default)]
struct Fake {
    rv: u64,
    kinds: HashMap<&'static str, Kind>,
    /// Requests seen: (kind, "list" | "watch rv=N bookmarks=B").
    requests: Vec<(String, String)>,
}

#[derive(Clone, Default)]
struct FakeApi(Arc<Mutex<Fake>>);

fn line(value: &Value) -> Chunk {
    Ok(Bytes::from(format!("{value}\n")))
}

fn key(object: &Value) -> String {
    let ns = object["metadata"]["namespace"].as_str().unwrap_or("");
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}

impl FakeApi {
    fn lock(&self) -> std::sync::MutexGuard<'_, Fake> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds or changes an object; open watches of its kind see it.
    fn apply(&self, kind: &'static str, mut object: Value) {
        let mut fake = self.lock();
        fake.rv += 1;
        let rv = fake.rv;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        let k = fake.kinds.entry(kind).or_default();
        let event_type = if k.objects.contains_key(&key(&object)) {
            "MODIFIED"
        } else {
            "ADDED"
        };
        k.objects.insert(key(&object), object.clone());
        let event = json!({ "type": event_type, "object": object });
        k.watchers.retain(|w| w.send(line(&event)).is_ok());
        k.history.push((rv, event_type, object));
    }

    /// Deletes an object; open watches of its kind see it.
    fn delete(&self, kind: &'static str, key_: &str) {
        let mut fake = self.lock();
        fake.rv += 1;
        let rv = fake.rv;
        let k = fake.kinds.entry(kind).or_default();
        if let Some(mut object) = k.objects.remove(key_) {
            object["metadata"]["resourceVersion"] = json!(rv.to_string());
            let event = json!({ "type": "DELETED", "object": object });
            k.watchers.retain(|w| w.send(line(&event)).is_ok());
            k.history.push((rv, "DELETED", object));
        }
    }

    /// Changes objects without telling anyone, and forgets the history: resuming watches get 410.
    fn compact_and_change(
        &self,
        kind: &'static str,
        change: impl FnOnce(&mut BTreeMap<String, Value>, u64),
    ) {
        let mut fake = self.lock();
        fake.rv += 1;
        let rv = fake.rv;
        let k = fake.kinds.entry(kind).or_default();
        change(&mut k.objects, rv);
        k.history.clear();
        k.compacted_before = rv + 1;
    }

    /// Breaks every open watch of `kind` mid-stream (the client sees a truncated response).
    fn drop_watches(&self, kind: &'static str) {
        let mut fake = self.lock();
        let k = fake.kinds.entry(kind).or_default();
        for w in k.watchers.drain(..) {
            let _ = w.send(Err(std::io::Error::other("connection dropped")));
        }
    }

    fn requests(&self, kind: &str, prefix: &str) -> usize {
        self.lock()
            .requests
            .iter()
            .filter(|(k, r)| k == kind && r.starts_with(prefix))
            .count()
    }

    async fn serve(&self) -> String {
        let mut router = Router::new();
        for (path, api_version, kind) in KINDS {
            router =
                router.route(
                    path,
                    get(
                        move |State(api): State<FakeApi>,
                              Query(q): Query<HashMap<String, String>>| async move {
                            api.handle(api_version, kind, q)
                        },
                    ),
                );
        }
        let router = router.with_state(self.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        format!("http://{addr}")
    }

    fn handle(
        &self,
        api_version: &'static str,
        kind: &'static str,
        q: HashMap<String, String>,
    ) -> Response {
        let mut fake = self.lock();
        let current = fake.rv;
        let watch = q.get("watch").is_some_and(|w| w == "true" || w == "1");
        let bookmarks = q.get("allowWatchBookmarks").is_some_and(|b| b == "true");
        let from: u64 = q
            .get("resourceVersion")
            .and_then(|rv| rv.parse().ok())
            .unwrap_or(0);
        let what = if watch {
            format!("watch rv={from} bookmarks={bookmarks}")
        } else {
            "list".to_string()
        };
        fake.requests.push((kind.to_string(), what));
        let k = fake.kinds.entry(kind).or_default();
        if !watch {
            let list = json!({
                "apiVersion": api_version,
                "kind": format!("{kind}List"),
                "metadata": { "resourceVersion": current.to_string() },
                // Like the real API server: list items carry no apiVersion/kind.
                "items": k.objects.values().map(|o| {
                    let mut o = o.clone();
                    if let Some(m) = o.as_object_mut() { m.remove("apiVersion"); m.remove("kind"); }
                    o
                }).collect::<Vec<_>>(),
            });
            return (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                list.to_string(),
            )
                .into_response();
        }
        let (tx, rx) = mpsc::unbounded_channel::<Chunk>();
        if from < k.compacted_before {
            // What the API server does when the watch's resourceVersion was compacted away.
            let gone = json!({"type": "ERROR", "object": {
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": format!("too old resource version: {from} ({})", k.compacted_before),
                "reason": "Expired", "code": 410}});
            let _ = tx.send(line(&gone));
            drop(tx);
        } else {
            for (rv, event_type, object) in &k.history {
                if *rv > from {
                    let _ = tx.send(line(&json!({ "type": event_type, "object": object })));
                }
            }
            if bookmarks {
                let bookmark = json!({"type": "BOOKMARK", "object": {
                    "kind": kind, "apiVersion": api_version,
                    "metadata": { "resourceVersion": current.to_string() }}});
                let _ = tx.send(line(&bookmark));
            }
            k.watchers.push(tx);
        }
        Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(UnboundedReceiverStream::new(rx)))
            .unwrap_or_else(|_| Response::new(Body::empty()))
    }
}

fn node(name: &str, os: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name, "uid": format!("uid-{name}"),
            "labels": { "kubernetes.io/os": os },
            "managedFields": [{ "manager": "kubelet", "operation": "Update", "apiVersion": "v1",
                                "fieldsType": "FieldsV1", "fieldsV1": { "f:metadata": {} } }]
        },
        "spec": if os == "windows" {
            json!({ "taints": [{ "key": "os", "value": "windows", "effect": "NoSchedule" }] })
        } else { json!({}) },
        "status": { "nodeInfo": { "operatingSystem": os, "architecture": "amd64",
            "kernelVersion": if os == "windows" { "10.0.20348.2762" } else { "5.15.0-1079-azure" },
            "osImage": "x", "containerRuntimeVersion": "containerd://1.7.20", "kubeletVersion": "v1.33.4",
            "kubeProxyVersion": "", "machineID": "", "systemUUID": "", "bootID": "" },
            "images": [{ "names": ["mcr.microsoft.com/windows/servercore:ltsc2022"], "sizeBytes": 1 }] }
    })
}

fn pod(ns: &str, name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": ns, "uid": format!("uid-{name}"),
            "managedFields": [{ "manager": "kube-controller-manager", "operation": "Update",
                                "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {} }] },
        "spec": { "nodeName": node, "containers": [{ "name": "app", "image": "nginx:1.27" }] },
        "status": { "phase": "Running" }
    })
}

fn runtime_class(name: &str) -> Value {
    json!({ "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": { "name": name }, "handler": "runhcs-wcow-process" })
}

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
    let source = LiveSource::from_config(config, format!("fake API server {url}")).expect("source");
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
    assert!(api.requests("Node", "watch rv=") >= 2);
    assert!(
        api.requests("Node", "watch rv=") == api.requests("Node", "watch rv=") && {
            let fake = api.lock();
            fake.requests
                .iter()
                .any(|(k, r)| k == "Node" && r.ends_with("bookmarks=true"))
        },
        "watches ask for bookmarks"
    );
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
    let source = LiveSource::from_config(config, format!("fake API server {url}")).expect("source");
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
