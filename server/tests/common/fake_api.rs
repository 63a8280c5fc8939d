//! A fake Kubernetes API server over real HTTP on 127.0.0.1, for kube-rs: list and watch for nodes, pods,
//! RuntimeClasses and Events (both APIs) with resourceVersions, bookmarks and field selectors, `410 Gone`
//! to force a relist, dropped connections, and faults on lists (no answer at all, or an error Status). For
//! the placement controller (`tests/place*.rs`): lists and watches of Secrets and ServiceAccounts (its
//! caches), `GET` of one pod, Secret or ServiceAccount, JSON patches of pods
//! (`application/json-patch+json`), Events created through `events.k8s.io/v1`, and
//! `coordination.k8s.io/v1` Leases (get, create, update); every write recorded with when it arrived and
//! who sent it (the bearer token of its kubeconfig, [`Write`]), and the User-Agent of every request.
//!
//! It refuses what kube-apiserver refuses, in the order its handler chain does (docs/reference/
//! scheduling-gates.md §2, §3; events-and-leases.md §2.5, §4):
//! * **403** where RBAC would: a resource and verb the test forbade ([`FakeApi::forbid`]), with the
//!   authorizer's message;
//! * **429** from priority and fairness: every Nth request of a kind ([`FakeApi::throttle`]), and **429 or
//!   5xx** for a while ([`FakeApi::outage`]);
//! * **404** for a resource it does not serve ([`FakeApi::unserve`]: `404 page not found`, as for a path no
//!   API group installs), and for an object that does not exist;
//! * **422** for a failed JSON-patch op (a `test` that does not match, a `remove` of a missing member), for
//!   an update `ValidatePodUpdate` refuses, on gated and ungated pods alike (scheduling-gates.md §2: the
//!   gated-only relaxations keyed on the stored pod), for a change of an immutable metadata field, and
//!   for any change but a gate's removal on the pods named in `refuse_pins`;
//! * **409** for a stale `resourceVersion`: a patched pod whose `metadata.resourceVersion` is not the
//!   stored one, a Lease update against a newer Lease (and 422 for one without a resourceVersion);
//! * a **lost answer**: a patch of a pod named in `drop_answers` lands, then the connection is closed
//!   before the answer's body (the client cannot tell whether it landed).
//!
//! Lease writes of the tokens in `hang_lease_writes` are never answered (a renewal that hangs). A second
//! client (the test) edits pods with the same JSON patches, over HTTP, while the controller works.
//! For `serve --reports`: the OpenReports and PolicyReport resources (cluster-wide lists, server-side
//! apply, get, delete), each apply checked as kube-apiserver checks it against the vendored CRDs
//! (`tests/data/`): its field manager, apiVersion, kind and name, the fields the schema does not declare
//! (refused under `fieldValidation=Strict`), the schema's values, and 403 for the tokens in
//! `forbid_reports`.
//!
//! Shared by `tests/live.rs`, the placement tests' kit (`tests/common/place.rs`), `tests/reports.rs` and
//! the benchmark examples, included with `#[path]`.

#![allow(dead_code)]

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::Path;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

/// The kinds served: (list path, apiVersion, kind as the fake stores it). Both Event APIs list objects
/// of kind `Event`; the fake keeps them apart as `Event` and `EventsEvent`.
const KINDS: [(&str, &str, &str); 7] = [
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
    // The placement controller's caches of pull secrets (it asks for `type=kubernetes.io/dockerconfigjson`
    // only; the fake holds no other Secrets) and ServiceAccounts.
    ("/api/v1/secrets", "v1", "Secret"),
    ("/api/v1/serviceaccounts", "v1", "ServiceAccount"),
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
    /// Open watch streams, each with its field selector.
    watchers: Vec<(mpsc::UnboundedSender<Chunk>, FieldSelector)>,
}

/// What a list of one kind answers instead of its objects.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Nothing, ever (the connection stays open).
    Hang,
    /// This HTTP status with this body (a `Status` object, as the API server sends).
    Status(u16, Value),
}

#[derive(Default)]
pub struct Fake {
    rv: u64,
    kinds: HashMap<&'static str, Kind>,
    /// Requests seen: (kind, "list" | "watch rv=N bookmarks=B").
    pub requests: Vec<(String, String)>,
    /// When each list arrived, by kind: the waits between attempts.
    pub lists_at: Vec<(String, std::time::Instant)>,
    /// Faults of the lists, by kind.
    faults: HashMap<&'static str, Fault>,
    /// `GET /version` answers (else 404, as without discovery).
    pub version: bool,
    /// Pod patches seen: (`namespace/name`, the patch, the status answered).
    pub patches: Vec<(String, Value, u16)>,
    /// Pods (`namespace/name`) whose patches are refused with 422 unless they only remove scheduling
    /// gates: what a validating webhook or a rule the fake does not model would answer.
    pub refuse_pins: Vec<String>,
    /// Lease writes seen: (`POST` | `PUT`, `namespace/name`, the holder written, the status answered).
    pub lease_writes: Vec<(&'static str, String, String, u16)>,
    /// Throttled kinds: the first and every Nth request (list, watch, get or patch) of the kind is answered 429
    /// TooManyRequests, as kube-apiserver's priority and fairness answers a client over its share.
    pub throttle: HashMap<&'static str, u64>,
    /// Requests counted per throttled kind, and how many were answered 429.
    throttled: HashMap<&'static str, (u64, u64)>,
    /// Every write (pod patch, Lease create or update, Event), in the order they arrived.
    pub writes: Vec<Write>,
    /// Bearer tokens whose Lease writes (create, update) are never answered: the connection stays open,
    /// as with an API server or a network that hangs.
    pub hang_lease_writes: Vec<String>,
    /// (resource, verb) pairs RBAC refuses with 403: `("secrets", "list")`.
    forbidden: Vec<(String, String)>,
    /// Resources not served at all (`404 page not found`): `"serviceaccounts"`.
    unserved: Vec<String>,
    /// Failures answered for a while ([`Outage`]).
    outages: Vec<Outage>,
    /// Pods (`namespace/name`) whose next accepted patch lands but whose answer is lost.
    pub drop_answers: Vec<String>,
    /// The `User-Agent` of every request, in order.
    pub user_agents: Vec<String>,
    /// Bearer tokens the RBAC refuses every report request (403), as without the chart's reports role.
    pub forbid_reports: Vec<String>,
}

/// A kind and verb answered with errors until a time: 429 (priority and fairness) or a 5xx, in turn.
#[derive(Debug, Clone)]
pub struct Outage {
    /// The kind, as the fake stores it (`Pod`).
    pub kind: &'static str,
    /// `list`, `watch`, `get`, `patch`, `create` or `update`.
    pub verb: &'static str,
    /// When the outage ends.
    pub until: std::time::Instant,
    /// The statuses answered, in turn (`[429, 500, 503]`).
    pub statuses: Vec<u16>,
    /// How many requests it answered.
    pub answered: usize,
}

/// Keeps the request's `User-Agent` (empty when it sent none) in [`Fake::user_agents`].
fn record_user_agent(fake: &mut Fake, headers: &axum::http::HeaderMap) {
    let agent = headers
        .get(axum::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    fake.user_agents.push(agent.to_string());
}

/// One write as the fake received it.
#[derive(Debug, Clone)]
pub struct Write {
    /// When it arrived.
    pub at: std::time::Instant,
    /// Who sent it: the bearer token of its client (each replica's kubeconfig names its own).
    pub token: String,
    /// `PATCH Pod shop/web`, `PUT Lease default/winplace-placer`, `POST Lease …`, `POST Event …`.
    pub what: String,
    /// The status answered (0: never answered).
    pub status: u16,
}

/// The bearer token of a request (empty without one).
fn token_of(headers: &axum::http::HeaderMap) -> String {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .to_string()
}

#[derive(Clone, Default)]
pub struct FakeApi(Arc<Mutex<Fake>>);

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
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Fake> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds or changes an object; open watches of its kind see it.
    pub fn apply(&self, kind: &'static str, object: Value) {
        apply_locked(&mut self.lock(), kind, object);
    }

    /// Deletes an object; open watches of its kind see it.
    pub fn delete(&self, kind: &'static str, key_: &str) {
        let mut fake = self.lock();
        fake.rv += 1;
        let rv = fake.rv;
        let k = fake.kinds.entry(kind).or_default();
        if let Some(mut object) = k.objects.remove(key_) {
            object["metadata"]["resourceVersion"] = json!(rv.to_string());
            let event = json!({ "type": "DELETED", "object": object });
            k.watchers
                .retain(|(w, f)| !f.matches(&object) || w.send(line(&event)).is_ok());
            k.history.push((rv, "DELETED", object));
        }
    }

    /// Changes objects without telling anyone, and forgets the history: resuming watches get 410.
    pub fn compact_and_change(
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
    pub fn drop_watches(&self, kind: &'static str) {
        let mut fake = self.lock();
        let k = fake.kinds.entry(kind).or_default();
        for (w, _) in k.watchers.drain(..) {
            let _ = w.send(Err(std::io::Error::other("connection dropped")));
        }
    }

    /// Every `every`th request of `kind` is answered 429 from now on (`0`: none).
    pub fn throttle(&self, kind: &'static str, every: u64) {
        self.lock().throttle.insert(kind, every);
    }

    /// How many requests of `kind` were answered 429.
    pub fn throttled(&self, kind: &'static str) -> u64 {
        self.lock().throttled.get(kind).map_or(0, |t| t.1)
    }

    /// RBAC refuses `verb` on `resource` (`secrets`, `serviceaccounts`, `pods`, `leases`, …) from now
    /// on, with kube-apiserver's 403.
    pub fn forbid(&self, resource: &str, verb: &str) {
        self.lock()
            .forbidden
            .push((resource.to_string(), verb.to_string()));
    }

    /// RBAC allows everything again (the ClusterRole was applied).
    pub fn allow_all(&self) {
        self.lock().forbidden.clear();
    }

    /// The API server does not serve `resource` at all from now on (`404 page not found`).
    pub fn unserve(&self, resource: &str) {
        self.lock().unserved.push(resource.to_string());
    }

    /// `verb` requests of `kind` are answered `statuses` in turn until `until`.
    pub fn outage(
        &self,
        kind: &'static str,
        verb: &'static str,
        until: std::time::Instant,
        statuses: &[u16],
    ) {
        self.lock().outages.push(Outage {
            kind,
            verb,
            until,
            statuses: statuses.to_vec(),
            answered: 0,
        });
    }

    /// How many requests the outages answered.
    pub fn outage_answers(&self) -> usize {
        self.lock().outages.iter().map(|o| o.answered).sum()
    }

    /// What kube-apiserver answers before any handler runs, in its handler chain's order: 403 where
    /// RBAC would refuse, 429 or a 5xx from the throttle and the outages, 404 for a resource it does
    /// not serve. `None`: the request goes on. Records the request's User-Agent.
    fn refusal(
        &self,
        kind: &'static str,
        verb: &'static str,
        namespace: Option<&str>,
        headers: &axum::http::HeaderMap,
    ) -> Option<Response> {
        let mut fake = self.lock();
        record_user_agent(&mut fake, headers);
        refusal_locked(&mut fake, kind, verb, namespace, &token_of(headers))
    }

    /// Records a write and answers `response`.
    fn wrote(&self, headers: &axum::http::HeaderMap, what: String, response: Response) -> Response {
        self.lock().writes.push(Write {
            at: std::time::Instant::now(),
            token: token_of(headers),
            what,
            status: response.status().as_u16(),
        });
        response
    }

    /// Whether Lease writes of this request's token hang (recorded as never answered).
    fn hangs(&self, headers: &axum::http::HeaderMap, what: String) -> bool {
        let token = token_of(headers);
        let mut fake = self.lock();
        if !fake.hang_lease_writes.contains(&token) {
            return false;
        }
        fake.writes.push(Write {
            at: std::time::Instant::now(),
            token,
            what,
            status: 0,
        });
        true
    }

    pub fn requests(&self, kind: &str, prefix: &str) -> usize {
        self.lock()
            .requests
            .iter()
            .filter(|(k, r)| k == kind && r.starts_with(prefix))
            .count()
    }

    pub async fn serve(&self) -> String {
        let mut router = Router::new();
        for (path, api_version, kind) in KINDS {
            router = router.route(
                path,
                get(
                    move |State(api): State<FakeApi>,
                          headers: axum::http::HeaderMap,
                          Query(q): Query<HashMap<String, String>>| async move {
                        match api.handle(api_version, kind, q, &headers) {
                            Some(response) => response,
                            None => std::future::pending().await,
                        }
                    },
                ),
            );
        }
        router = router.route(
            "/version",
            get(|State(api): State<FakeApi>| async move {
                if !api.lock().version {
                    return axum::http::StatusCode::NOT_FOUND.into_response();
                }
                axum::Json(json!({"major": "1", "minor": "33", "gitVersion": "v1.33.4",
                    "gitCommit": "", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                    "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}))
                .into_response()
            }),
        );
        for (path, kind) in [
            ("/api/v1/namespaces/{ns}/secrets/{name}", "Secret"),
            (
                "/api/v1/namespaces/{ns}/serviceaccounts/{name}",
                "ServiceAccount",
            ),
        ] {
            router = router.route(
                path,
                get(
                    move |State(api): State<FakeApi>,
                          headers: axum::http::HeaderMap,
                          Path((ns, name)): Path<(String, String)>| async move {
                        if let Some(refused) = api.refusal(kind, "get", Some(&ns), &headers) {
                            return refused;
                        }
                        found(&api, kind, &ns, &name, &format!("{name} not found"))
                    },
                ),
            );
        }
        router = router.route(
            "/api/v1/namespaces/{ns}/pods/{name}",
            patch(
                |State(api): State<FakeApi>,
                 Path((ns, name)): Path<(String, String)>,
                 headers: axum::http::HeaderMap,
                 body: Bytes| async move {
                    let content_type = headers
                        .get(axum::http::header::CONTENT_TYPE)
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    // The write is recorded by patch_pod before the patched pod is visible.
                    api.patch_pod(&ns, &name, content_type, &body, &headers)
                },
            )
            .get(
                |State(api): State<FakeApi>,
                 headers: axum::http::HeaderMap,
                 Path((ns, name)): Path<(String, String)>| async move {
                    if let Some(refused) = api.refusal("Pod", "get", Some(&ns), &headers) {
                        return refused;
                    }
                    found(
                        &api,
                        "Pod",
                        &ns,
                        &name,
                        &format!("pods \"{name}\" not found"),
                    )
                },
            ),
        );
        router = router.route(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}",
            get(
                |State(api): State<FakeApi>,
                 headers: axum::http::HeaderMap,
                 Path((ns, name)): Path<(String, String)>| async move {
                    let missing = format!("leases.coordination.k8s.io \"{name}\" not found");
                    api.lock().requests.push(("Lease".into(), "get".into()));
                    if let Some(refused) = api.refusal("Lease", "get", Some(&ns), &headers) {
                        return refused;
                    }
                    found(&api, "Lease", &ns, &name, &missing)
                },
            )
            .put(
                |State(api): State<FakeApi>,
                 Path((ns, name)): Path<(String, String)>,
                 headers: axum::http::HeaderMap,
                 axum::Json(lease): axum::Json<Value>| async move {
                    let what = format!("PUT Lease {ns}/{name}");
                    if api.hangs(&headers, what.clone()) {
                        return std::future::pending().await;
                    }
                    if let Some(refused) = api.refusal("Lease", "update", Some(&ns), &headers) {
                        return api.wrote(&headers, what, refused);
                    }
                    let response = api.update_lease(&ns, &name, lease);
                    api.wrote(&headers, what, response)
                },
            ),
        );
        router = router.route(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
            post(
                |State(api): State<FakeApi>,
                 Path(ns): Path<String>,
                 headers: axum::http::HeaderMap,
                 axum::Json(lease): axum::Json<Value>| async move {
                    let what = format!(
                        "POST Lease {ns}/{}",
                        lease["metadata"]["name"].as_str().unwrap_or("")
                    );
                    if api.hangs(&headers, what.clone()) {
                        return std::future::pending().await;
                    }
                    if let Some(refused) = api.refusal("Lease", "create", Some(&ns), &headers) {
                        return api.wrote(&headers, what, refused);
                    }
                    let response = api.create_lease(&ns, lease);
                    api.wrote(&headers, what, response)
                },
            ),
        );
        router = router.route(
            "/apis/events.k8s.io/v1/namespaces/{ns}/events",
            post(
                |State(api): State<FakeApi>,
                 Path(ns): Path<String>,
                 headers: axum::http::HeaderMap,
                 axum::Json(mut event): axum::Json<Value>| async move {
                    if let Some(refused) = api.refusal("EventsEvent", "create", Some(&ns), &headers)
                    {
                        return refused;
                    }
                    event["apiVersion"] = json!("events.k8s.io/v1");
                    event["kind"] = json!("Event");
                    api.apply("EventsEvent", event.clone());
                    let what = format!(
                        "POST Event {}",
                        event["regarding"]["name"].as_str().unwrap_or("")
                    );
                    let response =
                        (axum::http::StatusCode::CREATED, axum::Json(event)).into_response();
                    api.wrote(&headers, what, response)
                },
            ),
        );
        router = router.route(
            "/apis/events.k8s.io/v1/namespaces/{ns}/events/{name}",
            patch(
                |State(api): State<FakeApi>,
                 Path((ns, name)): Path<(String, String)>,
                 body: Bytes| async move {
                    let Some(mut event) = api.get("EventsEvent", &format!("{ns}/{name}")) else {
                        return axum::http::StatusCode::NOT_FOUND.into_response();
                    };
                    if let Ok(Value::Object(merge)) = serde_json::from_slice::<Value>(&body) {
                        for (k, v) in merge {
                            event[k] = v;
                        }
                    }
                    api.apply("EventsEvent", event.clone());
                    axum::Json(event).into_response()
                },
            ),
        );
        router = self.report_routes(router);
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

    /// The current object of `kind` at `namespace/name`.
    pub fn get(&self, kind: &'static str, key_: &str) -> Option<Value> {
        self.lock().kinds.get(kind)?.objects.get(key_).cloned()
    }

    /// Every current object of `kind`.
    pub fn all(&self, kind: &'static str) -> Vec<Value> {
        self.lock()
            .kinds
            .get(kind)
            .map(|k| k.objects.values().cloned().collect())
            .unwrap_or_default()
    }

    /// `PATCH` of a pod: a JSON patch applied to the stored pod, then validated as an update, under one
    /// lock (two patches of one pod are applied one after the other, each to what the other left, as
    /// the API server's optimistic update does).
    fn patch_pod(
        &self,
        ns: &str,
        name: &str,
        content_type: &str,
        body: &[u8],
        headers: &axum::http::HeaderMap,
    ) -> Response {
        let token = token_of(headers);
        let key_ = format!("{ns}/{name}");
        let ops: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        // Recorded before a patched pod is stored, so that whoever sees the pod also sees its write.
        let record = |fake: &mut Fake, status: u16| {
            fake.patches.push((key_.clone(), ops.clone(), status));
            fake.writes.push(Write {
                at: std::time::Instant::now(),
                token: token.clone(),
                what: format!("PATCH Pod {key_}"),
                status,
            });
        };
        if content_type != "application/json-patch+json" {
            record(&mut self.lock(), 415);
            return json_answer(
                415,
                status_body(415, "UnsupportedMediaType", "only JSON patches here", None),
            );
        }
        if let Some(refused) = self.refusal("Pod", "patch", Some(ns), headers) {
            record(&mut self.lock(), refused.status().as_u16());
            return refused;
        }
        let mut fake = self.lock();
        let verdict = judge_pod_patch(&fake, &key_, name, &ops);
        let new = match verdict {
            Ok(new) => new,
            Err((status, body)) => {
                record(&mut fake, status);
                return json_answer(status, body);
            }
        };
        record(&mut fake, 200);
        apply_locked(&mut fake, "Pod", new);
        let stored = fake.kinds["Pod"].objects[&key_].clone();
        if let Some(at) = fake.drop_answers.iter().position(|k| *k == key_) {
            // The write landed; the answer is lost on the way (the connection closes before its body).
            fake.drop_answers.remove(at);
            let lost = futures::stream::once(async {
                Err::<Bytes, std::io::Error>(std::io::Error::other("connection closed"))
            });
            return Response::builder()
                .header("content-type", "application/json")
                .body(Body::from_stream(lost))
                .unwrap_or_else(|_| Response::new(Body::empty()));
        }
        json_answer(200, stored)
    }

    /// `POST` of a Lease: 409 `AlreadyExists` when the name is taken (events-and-leases.md §2.5).
    fn create_lease(&self, ns: &str, lease: Value) -> Response {
        let name = lease["metadata"]["name"].as_str().unwrap_or("").to_string();
        let holder = lease["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let key_ = format!("{ns}/{name}");
        // One lock for the check and the write: two creates at once, one wins.
        let mut fake = self.lock();
        let exists = fake
            .kinds
            .get("Lease")
            .is_some_and(|k| k.objects.contains_key(&key_));
        if exists {
            fake.lease_writes.push(("POST", key_, holder, 409));
            return json_answer(
                409,
                status_body(
                    409,
                    "AlreadyExists",
                    &format!("leases.coordination.k8s.io \"{name}\" already exists"),
                    None,
                ),
            );
        }
        fake.lease_writes.push(("POST", key_.clone(), holder, 201));
        json_answer(201, store_lease(&mut fake, ns, &key_, lease))
    }

    /// `PUT` of a Lease: the body's resourceVersion must be the stored one (409 `Conflict`), and
    /// present (422: Leases allow no unconditional update), as kube-apiserver's `Store.Update`.
    fn update_lease(&self, ns: &str, name: &str, lease: Value) -> Response {
        let key_ = format!("{ns}/{name}");
        let holder = lease["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let sent = lease["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        let mut fake = self.lock();
        let stored = fake
            .kinds
            .get("Lease")
            .and_then(|k| k.objects.get(&key_))
            .map(|o| {
                o["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            });
        let refusal = match (&stored, &sent) {
            (None, _) => Some((
                404,
                status_body(
                    404,
                    "NotFound",
                    &format!("leases.coordination.k8s.io \"{name}\" not found"),
                    None,
                ),
            )),
            (Some(_), None) => Some((
                422,
                status_body(
                    422,
                    "Invalid",
                    &format!(
                        "Lease.coordination.k8s.io \"{name}\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
                    ),
                    None,
                ),
            )),
            (Some(stored), Some(sent)) if stored != sent => Some((
                409,
                status_body(
                    409,
                    "Conflict",
                    &format!(
                        "Operation cannot be fulfilled on leases.coordination.k8s.io \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                    ),
                    None,
                ),
            )),
            _ => None,
        };
        if let Some((status, body)) = refusal {
            fake.lease_writes.push(("PUT", key_, holder, status));
            return json_answer(status, body);
        }
        fake.lease_writes.push(("PUT", key_.clone(), holder, 200));
        json_answer(200, store_lease(&mut fake, ns, &key_, lease))
    }

    /// Lists of `kind` answer `fault` from now on (`None`: their objects again).
    pub fn set_fault(&self, kind: &'static str, fault: Option<Fault>) {
        let mut fake = self.lock();
        match fault {
            Some(f) => fake.faults.insert(kind, f),
            None => fake.faults.remove(kind),
        };
    }

    /// Adds or changes objects in one go (one lock): a flood of watch events.
    pub fn apply_all(&self, kind: &'static str, objects: impl IntoIterator<Item = Value>) {
        for object in objects {
            self.apply(kind, object);
        }
    }

    /// The answer, or `None` for a list that never answers.
    fn handle(
        &self,
        api_version: &'static str,
        kind: &'static str,
        q: HashMap<String, String>,
        headers: &axum::http::HeaderMap,
    ) -> Option<Response> {
        let mut fake = self.lock();
        record_user_agent(&mut fake, headers);
        let selector = FieldSelector::parse(q.get("fieldSelector").map_or("", String::as_str));
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
        let verb = if watch { "watch" } else { "list" };
        if let Some(refused) = refusal_locked(&mut fake, kind, verb, None, &token_of(headers)) {
            return Some(refused);
        }
        if !watch {
            fake.lists_at
                .push((kind.to_string(), std::time::Instant::now()));
        }
        if !watch {
            match fake.faults.get(kind) {
                Some(Fault::Hang) => return None,
                Some(Fault::Status(code, body)) => {
                    let status = axum::http::StatusCode::from_u16(*code)
                        .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                    return Some(
                        (
                            status,
                            [(axum::http::header::CONTENT_TYPE, "application/json")],
                            body.to_string(),
                        )
                            .into_response(),
                    );
                }
                None => {}
            }
        }
        let k = fake.kinds.entry(kind).or_default();
        if !watch {
            let list = json!({
                "apiVersion": api_version,
                "kind": format!("{kind}List"),
                "metadata": { "resourceVersion": current.to_string() },
                // Like the real API server: list items carry no apiVersion/kind.
                "items": k.objects.values().filter(|o| selector.matches(o)).map(|o| {
                    let mut o = o.clone();
                    if let Some(m) = o.as_object_mut() { m.remove("apiVersion"); m.remove("kind"); }
                    o
                }).collect::<Vec<_>>(),
            });
            return Some(
                (
                    [(axum::http::header::CONTENT_TYPE, "application/json")],
                    list.to_string(),
                )
                    .into_response(),
            );
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
                if *rv > from && selector.matches(object) {
                    let _ = tx.send(line(&json!({ "type": event_type, "object": object })));
                }
            }
            if bookmarks {
                let bookmark = json!({"type": "BOOKMARK", "object": {
                    "kind": kind, "apiVersion": api_version,
                    "metadata": { "resourceVersion": current.to_string() }}});
                let _ = tx.send(line(&bookmark));
            }
            k.watchers.push((tx, selector));
        }
        Some(
            Response::builder()
                .header("content-type", "application/json")
                .body(Body::from_stream(UnboundedReceiverStream::new(rx)))
                .unwrap_or_else(|_| Response::new(Body::empty())),
        )
    }
}

/// What kube-apiserver answers a JSON patch of the pod `key` (`name`): the patched pod, or the refusal
/// (status and Status body) in the order its patch handler and `ValidatePodUpdate` find them.
fn judge_pod_patch(fake: &Fake, key: &str, name: &str, ops: &Value) -> Result<Value, (u16, Value)> {
    let refused = |status: u16, reason: &str, message: &str, details: Option<Value>| {
        Err((status, status_body(status, reason, message, details)))
    };
    let Some(old) = fake
        .kinds
        .get("Pod")
        .and_then(|k| k.objects.get(key))
        .cloned()
    else {
        return refused(404, "NotFound", &format!("pods \"{name}\" not found"), None);
    };
    let Ok(patch) = serde_json::from_value::<json_patch::Patch>(ops.clone()) else {
        return refused(400, "BadRequest", "malformed JSON patch", None);
    };
    let mut new = old.clone();
    if json_patch::patch(&mut new, &patch.0).is_err() {
        // What the apiserver's patch handler answers for a failed op (scheduling-gates.md §3).
        return refused(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
            None,
        );
    }
    // A patch that sets a resourceVersion other than the stored one is an update against another
    // version of the object (scheduling-gates.md §3): a conflict.
    if new["metadata"]["resourceVersion"] != old["metadata"]["resourceVersion"] {
        return refused(
            409,
            "Conflict",
            &format!(
                "Operation cannot be fulfilled on pods \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
            None,
        );
    }
    // ValidateObjectMetaUpdate: these never change.
    for field in ["name", "namespace", "uid", "creationTimestamp"] {
        if new["metadata"][field] != old["metadata"][field] {
            let message = format!(
                "Pod \"{name}\" is invalid: metadata.{field}: Invalid value: {}: field is immutable",
                new["metadata"][field]
            );
            let cause = json!({"reason": "FieldValueInvalid", "message": "Invalid value: field is immutable", "field": format!("metadata.{field}")});
            return refused(
                422,
                "Invalid",
                &message,
                Some(json!({"name": name, "kind": "Pod", "causes": [cause]})),
            );
        }
    }
    let only_gates = |pod: &Value| {
        let mut pod = pod.clone();
        if let Some(spec) = pod["spec"].as_object_mut() {
            spec.remove("schedulingGates");
        }
        if let Some(meta) = pod["metadata"].as_object_mut() {
            meta.remove("labels");
        }
        pod
    };
    if fake.refuse_pins.iter().any(|k| k == key) && only_gates(&old) != only_gates(&new) {
        return refused(
            422,
            "Invalid",
            &format!("Pod \"{name}\" is invalid: spec: Forbidden: refused by the test"),
            None,
        );
    }
    let refusals = winplace_rules::schedule::pod_update::update_refusals(
        old.get("spec").unwrap_or(&Value::Null),
        new.get("spec").unwrap_or(&Value::Null),
    );
    if !refusals.is_empty() {
        let errors: Vec<String> = refusals
            .iter()
            .map(|r| format!("{}: {}: {}", r.field, kind_word(r.kind), r.detail))
            .collect();
        let message = if errors.len() == 1 {
            format!("Pod \"{name}\" is invalid: {}", errors[0])
        } else {
            format!("Pod \"{name}\" is invalid: [{}]", errors.join(", "))
        };
        let causes: Vec<Value> = refusals
            .iter()
            .map(|r| json!({"reason": r.kind.reason(), "message": format!("{}: {}", kind_word(r.kind), r.detail), "field": r.field}))
            .collect();
        return refused(
            422,
            "Invalid",
            &message,
            Some(json!({"name": name, "kind": "Pod", "causes": causes})),
        );
    }
    Ok(new)
}

/// The resource and API group RBAC names a kind by.
fn resource_of(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "Node" => ("nodes", ""),
        "Pod" => ("pods", ""),
        "RuntimeClass" => ("runtimeclasses", "node.k8s.io"),
        "Event" => ("events", ""),
        "EventsEvent" => ("events", "events.k8s.io"),
        "Secret" => ("secrets", ""),
        "ServiceAccount" => ("serviceaccounts", ""),
        "Lease" => ("leases", "coordination.k8s.io"),
        _ => ("", ""),
    }
}

/// [`FakeApi::refusal`] under the lock: 403 (RBAC), 429 or 5xx (throttle, outages), 404 (a resource not
/// served).
fn refusal_locked(
    fake: &mut Fake,
    kind: &'static str,
    verb: &'static str,
    namespace: Option<&str>,
    token: &str,
) -> Option<Response> {
    let (resource, group) = resource_of(kind);
    if fake
        .forbidden
        .iter()
        .any(|(r, v)| r == resource && v == verb)
    {
        // The RBAC authorizer's reason (events-and-leases.md §4.1).
        let scope = match namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        // `NewForbidden` names the group-qualified resource: `leases.coordination.k8s.io is forbidden`.
        let qualified = if group.is_empty() {
            resource.to_string()
        } else {
            format!("{resource}.{group}")
        };
        let message = format!(
            "{qualified} is forbidden: User \"{token}\" cannot {verb} resource \"{resource}\" in API group \"{group}\" {scope}"
        );
        return Some(json_answer(
            403,
            status_body(
                403,
                "Forbidden",
                &message,
                Some(json!({"group": group, "kind": resource})),
            ),
        ));
    }
    if let Some(refused) = throttle_locked(fake, kind) {
        return Some(refused);
    }
    let now = std::time::Instant::now();
    if let Some(outage) = fake
        .outages
        .iter_mut()
        .find(|o| o.kind == kind && o.verb == verb && now < o.until)
    {
        let status = outage.statuses[outage.answered % outage.statuses.len().max(1)];
        outage.answered += 1;
        let reason = match status {
            429 => "TooManyRequests",
            503 => "ServiceUnavailable",
            504 => "Timeout",
            _ => "InternalError",
        };
        let mut answer = json_answer(
            status,
            status_body(
                status,
                reason,
                "the fake API server is failing on purpose",
                None,
            ),
        );
        if status == 429 {
            answer
                .headers_mut()
                .insert("retry-after", axum::http::HeaderValue::from_static("1"));
        }
        return Some(answer);
    }
    if fake.unserved.iter().any(|r| r == resource) {
        // No API group installs the path: the mux's NotFound handler, plain text (events-and-leases.md §4.2).
        return Some(
            (
                axum::http::StatusCode::NOT_FOUND,
                [(
                    axum::http::header::CONTENT_TYPE,
                    "text/plain; charset=utf-8",
                )],
                "404 page not found\n",
            )
                .into_response(),
        );
    }
    None
}

/// A `fieldSelector` of a list or watch: `a.b=c` (or `==`) and `a.b!=c` requirements, ANDed; a field the
/// object lacks reads as the empty string, as `spec.nodeName=` selects unscheduled pods.
#[derive(Debug, Clone, Default)]
struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    fn parse(text: &str) -> FieldSelector {
        let mut out = Vec::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            if let Some((field, value)) = part.split_once("!=") {
                out.push((field.to_string(), false, value.to_string()));
            } else if let Some((field, value)) =
                part.split_once("==").or_else(|| part.split_once('='))
            {
                out.push((field.to_string(), true, value.to_string()));
            }
        }
        FieldSelector(out)
    }

    fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let mut at = object;
            for step in field.split('.') {
                at = &at[step];
            }
            let actual = match at {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            (actual == *value) == *equal
        })
    }
}

/// The 429 kube-apiserver answers a client over its share (priority and fairness), when the throttle of
/// `kind` refuses this request.
fn throttle_locked(fake: &mut Fake, kind: &'static str) -> Option<Response> {
    let every = fake.throttle.get(kind).copied().unwrap_or(0);
    if every == 0 {
        return None;
    }
    let count = fake.throttled.entry(kind).or_default();
    count.0 += 1;
    // The first request is refused too: a client must survive a 429 on its very first list.
    if !(count.0 - 1).is_multiple_of(every) {
        return None;
    }
    count.1 += 1;
    let mut answer = json_answer(
        429,
        status_body(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
            Some(json!({"retryAfterSeconds": 1})),
        ),
    );
    answer
        .headers_mut()
        .insert("retry-after", axum::http::HeaderValue::from_static("1"));
    Some(answer)
}

/// [`FakeApi::apply`] under a lock already held (a check and its write in one step).
/// Stores a Lease written by a create or an update as the API server keeps it (its kind and namespace
/// set, a new resourceVersion) and returns the stored object.
fn store_lease(fake: &mut Fake, ns: &str, key: &str, mut lease: Value) -> Value {
    lease["apiVersion"] = json!("coordination.k8s.io/v1");
    lease["kind"] = json!("Lease");
    lease["metadata"]["namespace"] = json!(ns);
    apply_locked(fake, "Lease", lease);
    fake.kinds["Lease"].objects[key].clone()
}

fn apply_locked(fake: &mut Fake, kind: &'static str, mut object: Value) {
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
    k.watchers
        .retain(|(w, f)| !f.matches(&object) || w.send(line(&event)).is_ok());
    k.history.push((rv, event_type, object));
}

/// `body` with `status`, as JSON.
fn json_answer(status: u16, body: Value) -> Response {
    (
        axum::http::StatusCode::from_u16(status)
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR),
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The object `kind` `ns/name` as a GET answers it, or the API server's 404 Status saying `missing`.
fn found(api: &FakeApi, kind: &'static str, ns: &str, name: &str, missing: &str) -> Response {
    match api.get(kind, &format!("{ns}/{name}")) {
        Some(o) => axum::Json(o).into_response(),
        None => (
            axum::http::StatusCode::NOT_FOUND,
            axum::Json(status_body(404, "NotFound", missing, None)),
        )
            .into_response(),
    }
}

/// A `Status` object as the API server sends with an error.
fn status_body(code: u16, reason: &str, message: &str, details: Option<Value>) -> Value {
    let mut status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code});
    if let Some(d) = details {
        status["details"] = d;
    }
    status
}

fn kind_word(kind: winplace_rules::schedule::pod_update::RefusalKind) -> &'static str {
    match kind {
        winplace_rules::schedule::pod_update::RefusalKind::Forbidden => "Forbidden",
        winplace_rules::schedule::pod_update::RefusalKind::Invalid => "Invalid value",
    }
}

pub fn node(name: &str, os: &str) -> Value {
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

pub fn pod(ns: &str, name: &str, node: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": ns, "uid": format!("uid-{name}"),
            "managedFields": [{ "manager": "kube-controller-manager", "operation": "Update",
                                "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {} }] },
        "spec": { "nodeName": node, "containers": [{ "name": "app", "image": "nginx:1.27" }] },
        "status": { "phase": "Running" }
    })
}

pub fn runtime_class(name: &str) -> Value {
    json!({ "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
            "metadata": { "name": name }, "handler": "runhcs-wcow-process" })
}

/// The report resources `serve --reports` writes: (group/version, plural, kind, namespaced, the CRD file
/// under `tests/data/`).
const REPORTS: [(&str, &str, &str, bool, &str); 4] = [
    (
        "openreports.io/v1alpha1",
        "reports",
        "Report",
        true,
        "openreports-crd/openreports.io_install.yaml",
    ),
    (
        "openreports.io/v1alpha1",
        "clusterreports",
        "ClusterReport",
        false,
        "openreports-crd/openreports.io_install.yaml",
    ),
    (
        "wgpolicyk8s.io/v1alpha2",
        "policyreports",
        "PolicyReport",
        true,
        "policy-report-crd/wgpolicyk8s.io_policyreports.yaml",
    ),
    (
        "wgpolicyk8s.io/v1alpha2",
        "clusterpolicyreports",
        "ClusterPolicyReport",
        false,
        "policy-report-crd/wgpolicyk8s.io_clusterpolicyreports.yaml",
    ),
];

/// The `openAPIV3Schema` of `kind` at `version` in a vendored CRD file (one file may hold several CRDs).
pub fn crd_schema(file: &str, kind: &str, version: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed =
        winplace_rules::input::parse(file, &text, &winplace_rules::input::Limits::default());
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    parsed
        .documents
        .iter()
        .map(|d| &d.value)
        .find(|crd| crd["spec"]["names"]["kind"] == kind)
        .and_then(|crd| crd["spec"]["versions"].as_array())
        .and_then(|v| v.iter().find(|v| v["name"] == version))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap_or_else(|| panic!("{file}: no {kind} {version} schema"))
}

/// The fields of `value` its structural `schema` does not declare: what the API server prunes, or
/// refuses under `fieldValidation=Strict` (`.results[0].foo: field not declared in schema`).
pub fn undeclared_fields(schema: &Value, value: &Value, path: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if schema["x-kubernetes-preserve-unknown-fields"] == true {
                return;
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (k, v) in map {
                let field = format!("{path}.{k}");
                if let Some(p) = properties.and_then(|p| p.get(k)) {
                    undeclared_fields(p, v, &field, out);
                } else if let Some(a) = additional.filter(|a| a.is_object()) {
                    undeclared_fields(a, v, &field, out);
                } else if additional != Some(&Value::Bool(true)) {
                    out.push(field);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                undeclared_fields(&schema["items"], item, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// ObjectMeta's fields: what `metadata` may hold in any object.
const OBJECT_META: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

impl FakeApi {
    /// Serves the report resources of [`REPORTS`] on `router`: cluster-wide lists, and server-side apply,
    /// get and delete of one report.
    fn report_routes(&self, mut router: Router<FakeApi>) -> Router<FakeApi> {
        for (group_version, plural, kind, namespaced, crd) in REPORTS {
            let (_, version) = group_version.split_once('/').unwrap_or(("", group_version));
            let schema = Arc::new(crd_schema(crd, kind, version));
            router = router.route(
                &format!("/apis/{group_version}/{plural}"),
                get(
                    move |State(api): State<FakeApi>,
                          headers: axum::http::HeaderMap,
                          Query(q): Query<HashMap<String, String>>| async move {
                        if let Some(refused) =
                            api.forbidden(&headers, "list", plural, group_version, None)
                        {
                            return refused;
                        }
                        match api.handle(group_version, kind, q, &headers) {
                            Some(response) => response,
                            None => std::future::pending().await,
                        }
                    },
                ),
            );
            let one = if namespaced {
                format!("/apis/{group_version}/namespaces/{{ns}}/{plural}/{{name}}")
            } else {
                format!("/apis/{group_version}/{plural}/{{name}}")
            };
            let path_of = move |mut p: HashMap<String, String>| -> (Option<String>, String) {
                (p.remove("ns"), p.remove("name").unwrap_or_default())
            };
            let schema_apply = schema.clone();
            router =
                router.route(
                    &one,
                    patch(
                        move |State(api): State<FakeApi>,
                              Path(p): Path<HashMap<String, String>>,
                              headers: axum::http::HeaderMap,
                              Query(q): Query<HashMap<String, String>>,
                              body: Bytes| async move {
                            let (ns, name) = path_of(p);
                            let what = format!("APPLY {kind} {}", key_of(ns.as_deref(), &name));
                            let response = api.apply_report(
                                ReportResource {
                                    group_version,
                                    plural,
                                    kind,
                                    schema: &schema_apply,
                                },
                                ns.as_deref(),
                                &name,
                                &headers,
                                &q,
                                &body,
                            );
                            api.wrote(&headers, what, response)
                        },
                    )
                    .get(
                        move |State(api): State<FakeApi>,
                              Path(p): Path<HashMap<String, String>>| async move {
                            let (ns, name) = path_of(p);
                            match api.get(kind, &key_of(ns.as_deref(), &name)) {
                                Some(o) => axum::Json(o).into_response(),
                                None => json_answer(
                                    404,
                                    status_body(
                                        404,
                                        "NotFound",
                                        &format!(
                                            "{plural}.{} \"{name}\" not found",
                                            group_of(group_version)
                                        ),
                                        None,
                                    ),
                                ),
                            }
                        },
                    )
                    .delete(
                        move |State(api): State<FakeApi>,
                              Path(p): Path<HashMap<String, String>>,
                              headers: axum::http::HeaderMap| async move {
                            let (ns, name) = path_of(p);
                            let key_ = key_of(ns.as_deref(), &name);
                            let what = format!("DELETE {kind} {key_}");
                            let response = if let Some(refused) = api.forbidden(
                                &headers,
                                "delete",
                                plural,
                                group_version,
                                ns.as_deref(),
                            ) {
                                refused
                            } else if let Some(object) = api.get(kind, &key_) {
                                api.delete(kind, &key_);
                                json_answer(200, object)
                            } else {
                                json_answer(
                                    404,
                                    status_body(
                                        404,
                                        "NotFound",
                                        &format!(
                                            "{plural}.{} \"{name}\" not found",
                                            group_of(group_version)
                                        ),
                                        None,
                                    ),
                                )
                            };
                            api.wrote(&headers, what, response)
                        },
                    ),
                );
        }
        router
    }

    /// The 403 kube-apiserver's RBAC answers a token of `forbid_reports`.
    fn forbidden(
        &self,
        headers: &axum::http::HeaderMap,
        verb: &str,
        plural: &str,
        group_version: &str,
        namespace: Option<&str>,
    ) -> Option<Response> {
        let token = token_of(headers);
        if !self.lock().forbid_reports.contains(&token) {
            return None;
        }
        let group = group_of(group_version);
        let scope = match namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_string(),
        };
        Some(json_answer(
            403,
            status_body(
                403,
                "Forbidden",
                &format!(
                    "{plural}.{group} is forbidden: User \"{token}\" cannot {verb} resource \"{plural}\" in API group \"{group}\" {scope}"
                ),
                None,
            ),
        ))
    }

    /// Server-side apply of a report, refused as kube-apiserver refuses it: no RBAC (403), not an
    /// apply patch (415), no field manager (400), another apiVersion or kind than the URL's, or another
    /// name (400), fields the CRD does not declare under `fieldValidation=Strict` (400), a value its
    /// schema refuses (422).
    fn apply_report(
        &self,
        resource: ReportResource<'_>,
        ns: Option<&str>,
        name: &str,
        headers: &axum::http::HeaderMap,
        q: &HashMap<String, String>,
        body: &[u8],
    ) -> Response {
        let ReportResource {
            group_version,
            plural,
            kind,
            schema,
        } = resource;
        if let Some(refused) = self.forbidden(headers, "patch", plural, group_version, ns) {
            return refused;
        }
        let bad =
            |message: String| json_answer(400, status_body(400, "BadRequest", &message, None));
        let content_type = headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if content_type != "application/apply-patch+yaml" {
            return json_answer(
                415,
                status_body(
                    415,
                    "UnsupportedMediaType",
                    &format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {content_type}"
                    ),
                    None,
                ),
            );
        }
        if q.get("fieldManager").is_none_or(|m| m.is_empty()) {
            return bad("PATCH /apply requires fieldManager".to_string());
        }
        let Ok(object) = serde_json::from_slice::<Value>(body) else {
            return bad("error decoding YAML: the body is not an object".to_string());
        };
        if object["apiVersion"] != group_version || object["kind"] != kind {
            return bad(format!(
                "the API version in the data ({}) does not match the expected API version ({group_version})",
                object["apiVersion"].as_str().unwrap_or("")
            ));
        }
        if object["metadata"]["name"] != name {
            return bad(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                object["metadata"]["name"].as_str().unwrap_or("")
            ));
        }
        let mut undeclared = Vec::new();
        if let Some(map) = object.as_object() {
            for (k, v) in map {
                match k.as_str() {
                    "apiVersion" | "kind" => {}
                    "metadata" => {
                        for field in v.as_object().into_iter().flat_map(|m| m.keys()) {
                            if !OBJECT_META.contains(&field.as_str()) {
                                undeclared.push(format!(".metadata.{field}"));
                            }
                        }
                    }
                    _ => match schema["properties"].get(k) {
                        Some(s) => undeclared_fields(s, v, &format!(".{k}"), &mut undeclared),
                        None => undeclared.push(format!(".{k}")),
                    },
                }
            }
        }
        if !undeclared.is_empty() && q.get("fieldValidation").is_some_and(|v| v == "Strict") {
            let errors: Vec<String> = undeclared
                .iter()
                .map(|f| format!("{f}: field not declared in schema"))
                .collect();
            return bad(errors.join(", "));
        }
        let validator = match jsonschema::validator_for(schema) {
            Ok(v) => v,
            Err(e) => {
                return json_answer(500, status_body(500, "InternalError", &e.to_string(), None));
            }
        };
        let invalid: Vec<String> = validator
            .iter_errors(&object)
            .map(|e| format!("{}: Invalid value: {e}", e.instance_path()))
            .collect();
        if !invalid.is_empty() {
            return json_answer(
                422,
                status_body(
                    422,
                    "Invalid",
                    &format!(
                        "{kind}.{} \"{name}\" is invalid: [{}]",
                        group_of(group_version),
                        invalid.join(", ")
                    ),
                    None,
                ),
            );
        }
        let mut stored = object;
        if let Some(ns) = ns {
            stored["metadata"]["namespace"] = json!(ns);
        }
        stored["metadata"]["managedFields"] = json!([{
            "manager": q.get("fieldManager"), "operation": "Apply", "apiVersion": group_version,
            "fieldsType": "FieldsV1", "fieldsV1": {}}]);
        let key_ = key_of(ns, name);
        let created = self.get(kind, &key_).is_none();
        self.apply(kind, stored);
        json_answer(
            if created { 201 } else { 200 },
            self.get(kind, &key_).unwrap_or(Value::Null),
        )
    }
}

/// One report resource of [`REPORTS`], with its CRD's schema.
#[derive(Clone, Copy)]
struct ReportResource<'a> {
    group_version: &'static str,
    plural: &'static str,
    kind: &'static str,
    schema: &'a Value,
}

/// `group` of `group/version`.
fn group_of(group_version: &str) -> &str {
    group_version.split_once('/').map_or("", |(g, _)| g)
}

/// The fake's key of an object: `namespace/name`, or `name` when cluster-scoped.
fn key_of(ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}
