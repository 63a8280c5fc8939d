//! `winplace serve --place` (issue 30, "Done when"): the built binary against the fake API server (real
//! HTTP: list, watch, get, JSON patches refused with 422 as kube-apiserver refuses them on a gated pod)
//! and Debian's `docker-registry` with token auth, images pushed by `skopeo`. One registry, one fake
//! API server and one test: the cases share the setup. The faults of issue 30 item 4 (a pod deleted while
//! its images resolve, a Linux-only index on a Windows-bound pod, a registry that answers slowly or with
//! 500s, a patch refused with 422) run in the same controller, beside the others, with a small fake
//! registry (`fake_http`) for the answers Debian's registry never gives.

use crate::common::fake_api;
use crate::common::fake_http::{FakeServer, Reply};
use crate::common::oci_registry;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use fake_api::FakeApi;
use oci_registry::{Layout, Registry, TOKEN_PASSWORD, TOKEN_USER, hanging_listener, token_server};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

pub(crate) const GATE: &str = "winplace.io/placement";
pub(crate) const BUILD: &str = "node.kubernetes.io/windows-build";

pub(crate) fn now_minus(seconds: i64) -> String {
    let t =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(seconds);
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn gated_pod(name: &str, image: &str, extra: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"),
                     "creationTimestamp": now_minus(0)},
        "spec": {"schedulingGates": [{"name": GATE}],
                 "containers": [{"name": "app", "image": image}]},
        "status": {"phase": "Pending"}
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        pod["spec"][k] = v.clone();
    }
    pod
}

pub(crate) fn windows_node(name: &str, kernel: &str, build: &str) -> Value {
    let mut node = fake_api::node(name, "windows");
    node["status"]["nodeInfo"]["kernelVersion"] = json!(kernel);
    node["metadata"]["labels"][BUILD] = json!(build);
    node
}

/// Runs `winplace serve --place` against `api`; killed on drop.
pub(crate) struct Placer {
    child: Child,
    /// Where it serves `/metrics` and the API.
    pub(crate) listen: String,
}

impl Placer {
    /// `winplace serve --place` reaching the registries in `insecure` over plain HTTP, with one identity
    /// across a restart, as a restarted container keeps its pod's name: it renews its own Lease at once
    /// instead of waiting for it to expire.
    pub(crate) fn start(dir: &std::path::Path, api: &str, insecure: &[&str]) -> Placer {
        let mut extra: Vec<&str> = insecure
            .iter()
            .flat_map(|r| ["--insecure-registry", *r])
            .collect();
        extra.extend(["--place-identity", "placer"]);
        Placer::start_with(dir, api, &extra, "placer.log")
    }

    /// The body of a `GET` of `path` from this controller's server (`/metrics`, `/api/placements`).
    pub(crate) async fn get(&self, http: &reqwest::Client, path: &str) -> Vec<u8> {
        http.get(format!("http://{}{path}", self.listen))
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .unwrap_or_else(|e| panic!("GET {path}: {e}"))
            .bytes()
            .await
            .expect("body")
            .to_vec()
    }

    /// `winplace serve --place` with `extra` flags (`--place-deadline 5` unless they name one), logging
    /// to `log` in `dir` (appended: the log of a restarted controller follows the first one's).
    pub(crate) fn start_with(
        dir: &std::path::Path,
        api: &str,
        extra: &[&str],
        log: &str,
    ) -> Placer {
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {api}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: fake\n"
            ),
        )
        .expect("write kubeconfig");
        // The cluster supports the Windows builds of its nodes (2019 is not among the defaults).
        let settings = dir.join("settings.yaml");
        std::fs::write(
            &settings,
            "supportedBuilds: [10.0.17763, 10.0.20348, 10.0.26100]\n",
        )
        .expect("write settings");
        let listen = format!("127.0.0.1:{}", oci_registry::free_port());
        let child = Command::new(env!("CARGO_BIN_EXE_winplace"))
            .args(["serve", "--place", "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--settings")
            .arg(&settings)
            .args(extra)
            .args(if extra.contains(&"--place-deadline") {
                &[][..]
            } else {
                &["--place-deadline", "5"][..]
            })
            .args(["--listen", &listen])
            // No Docker config of the machine: the pull secrets are the only credentials.
            .env("DOCKER_CONFIG", dir)
            .env("HOME", dir)
            .env_remove("KUBECONFIG")
            .env("RUST_LOG", "winplace=info")
            .stdout(Stdio::null())
            // Appended: the log of a restarted controller follows the first one's.
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(dir.join(log))
                    .expect("log file"),
            )
            .spawn()
            .expect("winplace serve --place starts");
        Placer { child, listen }
    }
}

impl Drop for Placer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `done` until it holds (the controller works while the test waits); fails after 30 s with
/// the controllers' logs (`*.log` in `dir`).
pub(crate) async fn until(dir: &std::path::Path, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}; winplace's logs:\n{}",
            logs(dir)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The pull secret `shop/pull` for `host` with `creds` (`user:password`), and the default service
/// account of `shop` naming it.
pub(crate) fn apply_pull_secret(api: &FakeApi, host: &str, creds: &str) {
    let auth = base64::engine::general_purpose::STANDARD.encode(creds);
    let config = json!({"auths": {host: {"auth": auth}}}).to_string();
    api.apply(
        "Secret",
        json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "pull", "namespace": "shop"}, "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64::engine::general_purpose::STANDARD.encode(config)}}),
    );
    api.apply("ServiceAccount", json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": "shop"}, "imagePullSecrets": [{"name": "pull"}]}));
}

pub(crate) fn logs(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "log") {
            out.push_str(&format!("== {}\n", path.display()));
            out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

pub(crate) fn pod(api: &FakeApi, name: &str) -> Value {
    api.get("Pod", &format!("shop/{name}")).expect(name)
}

pub(crate) fn gates(api: &FakeApi, name: &str) -> Value {
    pod(api, name)["spec"]
        .get("schedulingGates")
        .cloned()
        .unwrap_or(json!([]))
}

pub(crate) fn ungated(api: &FakeApi, name: &str) -> bool {
    !gates(api, name)
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g["name"] == GATE))
}

pub(crate) fn build_values(pod: &Value) -> Value {
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"][0]["matchExpressions"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["key"] == BUILD))
        .map(|e| e["values"].clone())
        .unwrap_or(Value::Null)
}

pub(crate) fn events_for(api: &FakeApi, name: &str) -> Vec<Value> {
    api.all("EventsEvent")
        .into_iter()
        .filter(|e| e["regarding"]["name"] == name)
        .collect()
}

pub(crate) fn patches_of(api: &FakeApi, name: &str, status: u16) -> usize {
    let key = format!("shop/{name}");
    api.lock()
        .patches
        .iter()
        .filter(|(k, _, s)| *k == key && *s == status)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gated_pods_are_placed_from_their_registry_and_released_by_the_deadline() {
    // A registry that needs credentials, with a 2022 image and a 2019 index.
    let token_port = token_server();
    let registry = Registry::start(Some(format!(
        "auth:\n  token:\n    realm: http://127.0.0.1:{token_port}/token\n    service: {}\n    issuer: {}\n    rootcertbundle: {}\n",
        oci_registry::TOKEN_SERVICE,
        oci_registry::TOKEN_ISSUER,
        oci_registry::data("token-cert.pem").display()
    )));
    let work = tempfile::tempdir().expect("tempdir");
    let mut layout = Layout::new(&work.path().join("layout"));
    let ws2022 = layout.image("windows", Some("10.0.20348.2762"));
    layout.tag("2022", &ws2022);
    let ws2019 = layout.image("windows", Some("10.0.17763.6414"));
    let index = layout.index(vec![ws2019]);
    layout.tag("2019", &index);
    let creds = format!("{TOKEN_USER}:{TOKEN_PASSWORD}");
    registry.push(&layout.dir, "2022", "private/win", Some(&creds));
    registry.push(&layout.dir, "2019", "private/win", Some(&creds));
    let host = registry.host();
    let realm = format!("127.0.0.1:{token_port}");
    let img2022 = format!("{host}/private/win:2022");
    let img2019 = format!("{host}/private/win:2019");
    let hanging = format!("127.0.0.1:{}/private/win:2022", hanging_listener());

    // The cluster: Linux, Windows Server 2022 and 2019 nodes (tainted os=windows:NoSchedule).
    let api = linux_and_2022_nodes();
    api.apply(
        "Node",
        windows_node("win19-1", "10.0.17763.6414", "10.0.17763"),
    );
    // The pull secret, named by one pod and by the namespace's default service account.
    apply_pull_secret(&api, &host, &creds);
    let own_secret = json!({"imagePullSecrets": [{"name": "pull"}]});
    api.apply("Pod", gated_pod("win2022", &img2022, own_secret.clone()));
    api.apply("Pod", gated_pod("win2019", &img2019, json!({})));
    let mut two_gates = gated_pod("two-gates", &img2022, own_secret.clone());
    two_gates["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}, {"name": GATE}]);
    api.apply("Pod", two_gates);
    let mut free = gated_pod("ungated", &img2022, json!({}));
    free["spec"]
        .as_object_mut()
        .unwrap()
        .remove("schedulingGates");
    api.apply("Pod", free);
    // Created 3 s ago: at most two seconds of the 5 s deadline is left for a registry that never answers.
    let mut stuck = gated_pod("unreachable", &hanging, json!({}));
    stuck["metadata"]["creationTimestamp"] = json!(now_minus(3));
    api.apply("Pod", stuck);

    // The fake refuses what kube-apiserver refuses on a gated pod: rewriting the tolerations (what a
    // strategic merge patch does) is a 422, and so is adding a gate.
    let url = api.serve().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    for (ops, field) in [
        (
            json!([{"op": "add", "path": "/spec/tolerations", "value": [{"key": "a", "operator": "Exists"}]}]),
            "",
        ),
        (
            json!([{"op": "add", "path": "/spec/schedulingGates/-", "value": {"name": "x.io/y"}}]),
            "spec.schedulingGates[2].name",
        ),
        (
            json!([{"op": "add", "path": "/spec/runtimeClassName", "value": "w"}]),
            "spec",
        ),
    ] {
        let answer = http
            .patch(format!("{url}/api/v1/namespaces/shop/pods/two-gates"))
            .header("content-type", "application/json-patch+json")
            .body(ops.to_string())
            .send()
            .await
            .expect("patch");
        let status = answer.status().as_u16();
        let body: Value =
            serde_json::from_slice(&answer.bytes().await.expect("body")).expect("status json");
        if field.is_empty() {
            // Adding tolerations is allowed: the fake applies it. Undo by reading what it kept.
            assert_eq!(status, 200, "{body}");
        } else {
            assert_eq!(status, 422, "{body}");
            assert_eq!(body["reason"], "Invalid");
            assert_eq!(body["details"]["causes"][0]["field"], field, "{body}");
        }
    }
    let tol = json!({"key": "a", "operator": "Exists"});
    let answer = http
        .patch(format!("{url}/api/v1/namespaces/shop/pods/two-gates"))
        .header("content-type", "application/json-patch+json")
        .body(json!([{"op": "replace", "path": "/spec/tolerations", "value": [{"key": "b", "operator": "Exists"}]}]).to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(answer.status().as_u16(), 422);
    assert_eq!(pod(&api, "two-gates")["spec"]["tolerations"], json!([tol]));

    let faulty = FaultRegistry::start(&api);
    add_fault_pods(&api, &faulty, &img2022, &own_secret);
    let fault_host = faulty.server.host();
    let insecure = [host.as_str(), realm.as_str(), fault_host.as_str()];
    let placer = Placer::start(work.path(), &url, &insecure);
    // The pod deleted while its image resolves: deleted once the controller asked for the image (whose
    // answer waits for the deletion).
    until(
        work.path(),
        "the controller asks for the deleted pod's image",
        || faulty.requests("gone") > 0,
    )
    .await;
    api.delete("Pod", "shop/fault-gone");
    until(work.path(), "the three private pods are ungated", || {
        ["win2022", "win2019", "two-gates"]
            .iter()
            .all(|n| ungated(&api, n))
    })
    .await;

    // The private 2022 image: OS, the range of builds that run it, the Windows toleration, gate gone.
    let p = pod(&api, "win2022");
    assert_eq!(
        p["spec"]["nodeSelector"]["kubernetes.io/os"],
        "windows",
        "{p}\nwinplace's log: {}",
        std::fs::read_to_string(work.path().join("placer.log")).unwrap_or_default()
    );
    let values = build_values(&p);
    assert!(
        values
            .as_array()
            .is_some_and(|v| v.contains(&json!("10.0.20348")) && !v.contains(&json!("10.0.17763"))),
        "{p}"
    );
    assert_eq!(
        p["spec"]["tolerations"],
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}])
    );
    assert_eq!(gates(&api, "win2022"), json!([]));
    // The 2019 image (its credentials from the service account): only 2019 hosts run it.
    let p = pod(&api, "win2019");
    assert_eq!(build_values(&p), json!(["10.0.17763"]), "{p}");
    // The other controller's gate stays; the toleration added by hand stays first.
    assert_eq!(
        gates(&api, "two-gates"),
        json!([{"name": "example.com/quota"}])
    );
    let p = pod(&api, "two-gates");
    assert_eq!(p["spec"]["tolerations"][0], tol, "{p}");
    assert_eq!(p["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
    until(work.path(), "the Placed events", || {
        events_for(&api, "win2022")
            .iter()
            .any(|e| e["reason"] == "Placed")
    })
    .await;

    // The unreachable registry: the gate is released by the deadline, nothing else changed, and an
    // Event says why.
    until(work.path(), "the unreachable pod is released", || {
        ungated(&api, "unreachable")
    })
    .await;
    let p = pod(&api, "unreachable");
    assert!(
        p["spec"].get("nodeSelector").is_none() && p["spec"].get("affinity").is_none(),
        "{p}"
    );
    until(work.path(), "the release event", || {
        events_for(&api, "unreachable")
            .iter()
            .any(|e| e["type"] == "Warning" && e["reason"] == "ImagesUnresolved")
    })
    .await;
    let note = events_for(&api, "unreachable")[0]["note"].to_string();
    assert!(note.contains(&hanging), "{note}");
    check_faults(work.path(), &api, &faulty).await;

    // What /metrics and /api/placements say of it, the faults included: one successful registry
    // look-up per distinct reference read (2022's is shared by two pods, the Linux-only index by two),
    // this replica leads.
    let text = String::from_utf8(placer.get(&http, "/metrics").await).expect("utf-8");
    for line in [
        // win2022, win2019, two-gates; fault-flaky after two 500s; fault-linux-unpinned on Linux.
        "winplace_place_placed_total 5",
        // unreachable and fault-slow: not read within the deadline.
        "winplace_place_released_total{reason=\"deadline\"} 2",
        // fault-down: 500s until the deadline, released with the last try's kind.
        "winplace_place_released_total{reason=\"unavailable\"} 1",
        "winplace_place_released_total{reason=\"refused\"} 1",
        "winplace_place_released_total{reason=\"nothing-to-pin\"} 1",
        "winplace_place_deleted_total 1",
        "winplace_place_leading 1",
        // 2022 and 2019 from Debian's registry; flaky (third try), linux-only and gone from the fault one.
        "winplace_image_registry_requests_total{outcome=\"ok\"} 5",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    let resolved: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("winplace_place_resolution_seconds_count "))
        .and_then(|n| n.parse().ok())
        .expect("resolution histogram");
    assert!(resolved >= 4, "{text}");
    let placements: Value =
        serde_json::from_slice(&placer.get(&http, "/api/placements").await).expect("json");
    let rows = placements["placements"].as_array().expect("rows");
    // One row per pod placed or released (the deleted pod has none).
    assert_eq!(rows.len(), 10, "{placements}");
    let row = rows
        .iter()
        .find(|r| r["pod"] == "shop/win2022")
        .expect("win2022");
    assert_eq!(row["outcome"], "placed");
    assert_eq!(row["images"], json!([img2022]));
    assert!(
        row["pins"].as_array().is_some_and(|p| p
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.contains("windows")))),
        "{row}"
    );
    let row = rows
        .iter()
        .find(|r| r["pod"] == "shop/unreachable")
        .expect("unreachable");
    assert_eq!(
        (row["outcome"].as_str(), row["reason"].as_str()),
        (Some("released"), Some("deadline"))
    );

    // A restart mid-way: a pod gated while the controller is down is placed after it comes back, and
    // what was placed is not patched again.
    drop(placer);
    api.apply("Pod", gated_pod("after-restart", &img2022, own_secret));
    let _placer = Placer::start(work.path(), &url, &insecure);
    until(
        work.path(),
        "the pod gated during the restart is placed",
        || ungated(&api, "after-restart"),
    )
    .await;
    assert!(pod(&api, "after-restart")["spec"]["nodeSelector"]["kubernetes.io/os"] == "windows");
    // (two-gates also took the test's own toleration patch above.)
    for (name, accepted) in [
        ("win2022", 1),
        ("win2019", 1),
        ("two-gates", 2),
        ("unreachable", 1),
        ("after-restart", 1),
    ] {
        assert_eq!(
            patches_of(&api, name, 200),
            accepted,
            "{name}: {:?}",
            api.lock().patches
        );
    }
    // The pod without the gate was never patched.
    assert_eq!(
        api.lock()
            .patches
            .iter()
            .filter(|(k, _, _)| k == "shop/ungated")
            .count(),
        0
    );
    // Every patch winplace sent was accepted, but the faults' (each refused once, checked above).
    assert!(
        api.lock()
            .patches
            .iter()
            .filter(|(k, _, _)| k != "shop/two-gates" && !k.starts_with("shop/fault-"))
            .all(|(_, _, s)| *s == 200),
        "{:?}",
        api.lock().patches
    );
}

/// A registry for the faults Debian's never gives, anonymous over plain HTTP (`fake_http`): by
/// repository, `flaky` answers 500 twice then a Windows Server 2022 index; `down` answers 500 always;
/// `slow` answers after 8 s (beyond the 5 s deadline); `linux-only` an index of Linux entries only;
/// `gone` answers the 2022 index once the test has deleted the pod that names it.
struct FaultRegistry {
    server: FakeServer,
}

impl FaultRegistry {
    fn start(api: &FakeApi) -> FaultRegistry {
        let api = api.clone();
        let flaky = std::sync::atomic::AtomicUsize::new(0);
        let server = FakeServer::start(move |request| {
            let repository = request
                .path()
                .strip_prefix("/v2/")
                .and_then(|p| p.split_once("/manifests/"))
                .map_or("", |(r, _)| r);
            match repository {
                "flaky" if flaky.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 => {
                    server_error()
                }
                "down" => server_error(),
                "slow" => {
                    std::thread::sleep(Duration::from_secs(8));
                    index_reply(&["windows"])
                }
                "linux-only" => index_reply(&["linux", "linux"]),
                "gone" => {
                    let start = Instant::now();
                    while api.get("Pod", "shop/fault-gone").is_some()
                        && start.elapsed() < Duration::from_secs(20)
                    {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    index_reply(&["windows"])
                }
                "flaky" => index_reply(&["windows"]),
                _ => Reply::Full {
                    status: "404 Not Found",
                    headers: vec!["Content-Type: application/json".into()],
                    body:
                        br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#
                            .to_vec(),
                },
            }
        });
        FaultRegistry { server }
    }

    /// Manifest requests received for `repository`.
    fn requests(&self, repository: &str) -> usize {
        let prefix = format!("/v2/{repository}/manifests/");
        self.server
            .received()
            .iter()
            .filter(|r| r.path().starts_with(&prefix))
            .count()
    }

    fn image(&self, repository: &str) -> String {
        format!("{}/{repository}:1", self.server.host())
    }
}

pub(crate) fn server_error() -> Reply {
    Reply::Full {
        status: "500 Internal Server Error",
        headers: vec!["Content-Type: application/json".into()],
        body: br#"{"errors":[{"code":"UNKNOWN","message":"storage backend down"}]}"#.to_vec(),
    }
}

/// An OCI index with one amd64 entry per `os` (Windows entries are Windows Server 2022).
pub(crate) fn index_reply(oses: &[&str]) -> Reply {
    let manifests: Vec<Value> = oses
        .iter()
        .enumerate()
        .map(|(i, os)| {
            let architecture = if i == 0 { "amd64" } else { "arm64" };
            let mut platform = json!({"os": os, "architecture": architecture});
            if *os == "windows" {
                platform["os.version"] = json!("10.0.20348.2762");
            }
            json!({"mediaType": oci_registry::MANIFEST, "size": 500,
                   "digest": format!("sha256:{:064x}", i + 1), "platform": platform})
        })
        .collect();
    let body = serde_json::to_vec(
        &json!({"schemaVersion": 2, "mediaType": oci_registry::INDEX,
        "manifests": manifests}),
    )
    .expect("json");
    Reply::Full {
        status: "200 OK",
        headers: vec![
            format!("Content-Type: {}", oci_registry::INDEX),
            format!("Docker-Content-Digest: sha256:{:x}", Sha256::digest(&body)),
        ],
        body,
    }
}

/// The fault cases' pods, all gated, created now (what each expects: [`FaultRegistry`], `check_faults`).
fn add_fault_pods(api: &FakeApi, faulty: &FaultRegistry, img2022: &str, own_secret: &Value) {
    let windows = json!({"nodeSelector": {"kubernetes.io/os": "windows"}});
    for (name, image, extra) in [
        ("fault-flaky", faulty.image("flaky"), json!({})),
        ("fault-down", faulty.image("down"), json!({})),
        ("fault-slow", faulty.image("slow"), json!({})),
        ("fault-linux-only", faulty.image("linux-only"), windows),
        (
            "fault-linux-unpinned",
            faulty.image("linux-only"),
            json!({}),
        ),
        ("fault-gone", faulty.image("gone"), json!({})),
        ("fault-refused", img2022.to_string(), own_secret.clone()),
    ] {
        api.apply("Pod", gated_pod(name, &image, extra));
    }
    // The API server refuses the pins of this one (422), as a validating rule the fake does not model.
    api.lock().refuse_pins.push("shop/fault-refused".into());
}

/// Issue 30 item 4: each fault is logged once, counted, its gate released (or the pod placed after a
/// retry), never a crash loop.
async fn check_faults(dir: &std::path::Path, api: &FakeApi, faulty: &FaultRegistry) {
    let log = || std::fs::read_to_string(dir.join("placer.log")).unwrap_or_default();
    let released = [
        "fault-down",
        "fault-slow",
        "fault-linux-only",
        "fault-refused",
    ];
    until(dir, "the faults' pods are released or placed", || {
        released
            .iter()
            .chain(&["fault-flaky", "fault-linux-unpinned"])
            .all(|n| ungated(api, n))
    })
    .await;
    // 500s are retried within the deadline: two refusals, then the pod is placed.
    let p = pod(api, "fault-flaky");
    assert_eq!(
        p["spec"]["nodeSelector"]["kubernetes.io/os"],
        "windows",
        "{p}\n{}",
        log()
    );
    assert_eq!(faulty.requests("flaky"), 3);
    // Released with nothing else changed, and an Event that says why.
    for (name, reason, says) in [
        (
            "fault-down",
            "ImagesUnresolved",
            "500 Internal Server Error",
        ),
        ("fault-slow", "ImagesUnresolved", "--place-deadline"),
        ("fault-linux-only", "NothingToPin", "Linux"),
        ("fault-refused", "PlacementRefused", "refused by the test"),
    ] {
        let p = pod(api, name);
        assert!(
            ["nodeSelector", "affinity", "tolerations"]
                .iter()
                .all(|f| p["spec"].get(f) == gated_pod(name, "", json!({}))["spec"].get(f))
                || name == "fault-linux-only",
            "{p}"
        );
        until(dir, &format!("the Event of {name}"), || {
            !events_for(api, name).is_empty()
        })
        .await;
        let events = events_for(api, name);
        assert_eq!(events.len(), 1, "{name}: {events:?}");
        assert_eq!(events[0]["type"], "Warning", "{name}: {events:?}");
        assert_eq!(events[0]["reason"], reason, "{name}: {events:?}");
        let note = events[0]["note"].as_str().unwrap_or_default();
        assert!(note.contains(says), "{name}: {note}");
        // Logged once.
        assert_eq!(
            log()
                .lines()
                .filter(|l| l.contains(&format!("shop/{name}")))
                .count(),
            1,
            "{name}:\n{}",
            log()
        );
    }
    // The registry that answers 500 was asked again within the deadline, not once and not in a loop.
    let down = faulty.requests("down");
    assert!((2..=20).contains(&down), "{down} requests");
    // The same Linux-only index on a pod that names no OS: placed on Linux, as the rules place it.
    let p = pod(api, "fault-linux-unpinned");
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"kubernetes.io/os": "linux"}),
        "{p}"
    );
    assert!(ungated(api, "fault-linux-unpinned"), "{p}");
    // The Windows-bound pod keeps its own selector, and gets nothing winplace would have pinned.
    let p = pod(api, "fault-linux-only");
    assert_eq!(
        p["spec"]["nodeSelector"],
        json!({"kubernetes.io/os": "windows"})
    );
    assert!(
        p["spec"].get("affinity").is_none() && p["spec"].get("tolerations").is_none(),
        "{p}"
    );
    // The refused pod: one refused patch, then one that only removed the gate.
    assert_eq!(patches_of(api, "fault-refused", 422), 1);
    assert_eq!(patches_of(api, "fault-refused", 200), 1);
    // The deleted pod: its patch found no pod (404), once; logged once; no Event for a pod that is
    // gone.
    until(dir, "the deleted pod's patch", || {
        patches_of(api, "fault-gone", 404) > 0
    })
    .await;
    until(dir, "the deleted pod's log line", || {
        log().lines().any(|l| l.contains("shop/fault-gone"))
    })
    .await;
    assert_eq!(faulty.requests("gone"), 1);
    assert!(events_for(api, "fault-gone").is_empty());
}

/// An API server with a Linux node and a Windows Server 2022 node (tainted os=windows:NoSchedule).
pub(crate) fn linux_and_2022_nodes() -> FakeApi {
    let api = FakeApi::default();
    api.lock().version = true;
    api.apply("Node", fake_api::node("linux-1", "linux"));
    api.apply(
        "Node",
        windows_node("win22-1", "10.0.20348.2762", "10.0.20348"),
    );
    api
}

/// The Lease holder's identity, if any.
fn holder(api: &FakeApi) -> Option<String> {
    api.get("Lease", "default/winplace-placer")
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
}

/// Two replicas against one API server: only the Lease's holder patches; when it dies, the other
/// takes over once the (2 s) Lease has expired, and no pod is patched twice. The images' names say
/// their OS and build, so no registry is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_place_each_pod_once_and_the_other_takes_over() {
    let work = tempfile::tempdir().expect("tempdir");
    let api = linux_and_2022_nodes();
    let image = "mcr.microsoft.com/windows/servercore:ltsc2022";
    for name in ["first-1", "first-2", "first-3"] {
        api.apply("Pod", gated_pod(name, image, json!({})));
    }
    let url = api.serve().await;
    let replica = |id: &str| {
        Placer::start_with(
            work.path(),
            &url,
            &["--place-identity", id, "--place-lease-duration", "2"],
            &format!("placer-{id}.log"),
        )
    };
    // `a` takes the Lease first (it creates it), then `b` starts and finds it held.
    let a = replica("a");
    until(work.path(), "a holds the Lease", || {
        holder(&api).as_deref() == Some("a")
    })
    .await;
    let _b = replica("b");
    until(work.path(), "the first pods are placed", || {
        ["first-1", "first-2", "first-3"]
            .iter()
            .all(|n| ungated(&api, n))
    })
    .await;
    // b reads the Lease (the holder renews without reading it) and finds it held: it writes nothing.
    until(work.path(), "b reads the Lease", || {
        api.requests("Lease", "get") >= 2
    })
    .await;
    assert!(
        api.lock().lease_writes.iter().all(|(_, _, h, _)| h == "a"),
        "{:?}",
        api.lock().lease_writes
    );

    // The holder dies without releasing the Lease: b takes over after it expires.
    drop(a);
    for name in ["later-1", "later-2"] {
        api.apply("Pod", gated_pod(name, image, json!({})));
    }
    until(work.path(), "b places the later pods", || {
        ["later-1", "later-2"].iter().all(|n| ungated(&api, n))
    })
    .await;
    assert_eq!(
        holder(&api).as_deref(),
        Some("b"),
        "{:?}",
        api.lock().lease_writes
    );
    let lease = api.get("Lease", "default/winplace-placer").expect("lease");
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 2, "{lease}");
    // b took it with one successful PUT after a's last write; a's renewals were all its own.
    let writes = api.lock().lease_writes.clone();
    let taken = writes
        .iter()
        .position(|(_, _, h, s)| h == "b" && *s == 200)
        .expect("b took it");
    assert!(
        writes[taken..].iter().all(|(_, _, h, _)| h == "b"),
        "{writes:?}"
    );
    assert!(
        writes[..taken]
            .iter()
            .all(|(_, _, h, s)| h == "a" || *s != 200),
        "{writes:?}"
    );
    // No replica lost a race for a pod: every patch sent was accepted (two replicas placing at once
    // would see the loser's patch refused, 422, by the gate's guard).
    let patches = api.lock().patches.clone();
    assert_eq!(patches.len(), 5, "{patches:?}");
    assert!(patches.iter().all(|(_, _, s)| *s == 200), "{patches:?}");
    // Every pod was patched exactly once, by one replica or the other.
    for name in ["first-1", "first-2", "first-3", "later-1", "later-2"] {
        assert_eq!(
            patches_of(&api, name, 200),
            1,
            "{name}: {:?}",
            api.lock().patches
        );
        let p = pod(&api, name);
        assert_eq!(
            p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
            "{p}"
        );
    }
}
