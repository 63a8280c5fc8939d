//! `winplace serve --place` where it must not strand a pod nor give up early (docs/placement.md, "When
//! things fail"): the built binary against the fake API server of `tests/common/` (real HTTP; RBAC
//! refusals, outages, lost answers), fake and Debian registries, set up by the placement test kit.
//!
//! * a cache that cannot list (403 on Secrets): no Lease, so the policy in the waPC host does not
//!   gate; a Warning names what is missing and `/readyz` says why; once allowed it leads and the policy
//!   gates; refused again, it gives the Lease up within the bound;
//! * the controller panics: the Lease is given up within 2 s;
//! * a registry down for the first 3 s of a 10 s deadline: placed; down for all of it: released no
//!   earlier than the deadline, at most one look-up limit after; a patch whose answer is lost: one
//!   `Placed` Event and one count;
//! * images read, then the PATCH meets 429s and 5xx for 15 s past the deadline: placed with its pins;
//! * a `kubernetes.io/dockercfg` pull secret, Windows nodes all `not-ready`, a private image with the
//!   Windows toleration, `HTTPS_PROXY` with `NO_PROXY` covering the API server: placed as it should be,
//!   with winplace's User-Agent on every request; behind a CONNECT proxy, the API server is reached
//!   through it.

use crate::common::fake_api::FakeApi;
use crate::common::fake_http::FakeServer;
use crate::common::place::{
    Controller, GATED_LABEL, LEASE, Launch, PullSecretType, assert_pinned_to, cluster, events_for,
    gated_pod, holder, index_reply, kubeconfig, logs, placed, pod, private_credentials,
    private_registry, pull_secret, released_in, server_error, ungated, until, until_within,
    windows_node, writes,
};

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use winplace_policy_host::{PolicyHost, admission_request, built_policy, capability};
use winplace_policy_wasm::host_answers::HostAnswers;

/// A pod the policy is asked about: its image leaves its OS and build open.
const PRIVATE: &str = "registry.example.com/shop/api:2.3";

/// Whether policy.wasm (in wasmtime, as policy-server runs it) gates a new pod while the API server
/// holds `lease` (the Lease as a GET of it answers; `None`: there is none).
fn policy_gates(lease: Option<Value>) -> bool {
    let mut answers = HostAnswers::default();
    if let Some(lease) = lease {
        answers.insert_object(lease);
    }
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    let host = PolicyHost::new(&module, Some(capability(answers))).expect("policy host");
    let mut pod = gated_pod("fresh", PRIVATE, json!({}));
    pod["spec"]
        .as_object_mut()
        .unwrap()
        .remove("schedulingGates");
    pod["metadata"].as_object_mut().unwrap().remove("labels");
    let settings = json!({"mutate": true, "placementGate": true,
                          "placementLeaseNamespace": "default", "placementLeaseName": "winplace-placer"});
    let answer = host
        .validate(&admission_request("CREATE", &pod), &settings)
        .expect("validate");
    answer["mutated_object"]["spec"]["schedulingGates"]
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g["name"] == "winplace.io/placement"))
}

/// `/readyz`'s status and body, once the controller answers.
fn readyz(controller: &Controller) -> Option<(u16, String)> {
    controller.get("/readyz")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_that_cannot_list_holds_no_lease_and_the_policy_does_not_gate() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    // The ClusterRole of an older release: `get` on Secrets, no `list` nor `watch`.
    api.forbid("secrets", "list");
    api.forbid("secrets", "watch");
    let url = api.serve().await;
    let controller = Launch::new(dir, &url, "placer").lease("2").start();
    until(dir, "/readyz says why", || {
        readyz(&controller).is_some_and(|(status, body)| {
            status == 503 && body.contains("cannot list secrets: 403 Forbidden")
        })
    })
    .await;
    let (_, body) = readyz(&controller).expect("readyz");
    assert!(
        body.contains("upgrade the placement ClusterRole (the Helm chart's placement.enabled)"),
        "{body}"
    );
    let log = std::fs::read_to_string(dir.join("placer.log")).unwrap_or_default();
    assert!(
        log.lines().any(|l| l.contains("WARN")
            && l.contains("cannot list secrets: 403 Forbidden")
            && l.contains(r#"cannot list resource "secrets""#)),
        "{log}"
    );
    assert!(
        controller
            .metric("winplace_place_list_failures_total{resource=\"secrets\"}")
            .is_some_and(|n| n >= 1.0)
    );
    assert_eq!(controller.metric("winplace_place_can_place"), Some(0.0));
    // A while later (several retry periods of the 2 s Lease): still no Lease, so no gate.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(holder(&api, LEASE), None, "{}", logs(dir));
    assert!(!policy_gates(api.get("Lease", LEASE)));

    // The ClusterRole applied: it lists, leads, is ready, and the policy gates.
    api.allow_all();
    until(dir, "it leads", || {
        holder(&api, LEASE).as_deref() == Some("placer")
    })
    .await;
    until(dir, "/readyz 200", || {
        readyz(&controller).is_some_and(|(status, _)| status == 200)
    })
    .await;
    assert_eq!(controller.metric("winplace_place_can_place"), Some(1.0));
    assert!(policy_gates(api.get("Lease", LEASE)), "a fresh Lease gates");

    // Refused again while it leads (its watch breaks and lists anew): it gives the Lease up within
    // the bound (the 2 s lease duration, judged every 0.5 s), and the policy stops gating.
    api.forbid("secrets", "list");
    api.forbid("secrets", "watch");
    api.drop_watches("Secret");
    let refused = Instant::now();
    until_within(
        dir,
        "the Lease is given up",
        Duration::from_secs(10),
        || holder(&api, LEASE).is_none(),
    )
    .await;
    assert!(
        refused.elapsed() < Duration::from_secs(5),
        "{:?}\n{}",
        refused.elapsed(),
        logs(dir)
    );
    assert!(!policy_gates(api.get("Lease", LEASE)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_that_panics_gives_the_lease_up_within_two_seconds() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    let url = api.serve().await;
    let _controller = Launch::new(dir, &url, "placer")
        .lease("15")
        .env("WINPLACE_TEST_PANIC_ON_POD", "shop/boom")
        .start();
    until(dir, "it leads", || {
        holder(&api, LEASE).as_deref() == Some("placer")
    })
    .await;
    let created = Instant::now();
    api.apply("Pod", gated_pod("boom", PRIVATE, json!({})));
    // Seen given up (polled every 10 ms; the controller starts again only a second later).
    until(dir, "the Lease is given up", || {
        holder(&api, LEASE).is_none()
    })
    .await;
    assert!(
        created.elapsed() < Duration::from_secs(2),
        "{:?}\n{}",
        created.elapsed(),
        logs(dir)
    );
    let lease = api.get("Lease", LEASE).expect("lease");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], 1, "{lease}");
    let log = std::fs::read_to_string(dir.join("placer.log")).unwrap_or_default();
    assert!(log.contains("the placement controller panicked"), "{log}");
    assert!(!ungated(&api, "boom"), "nothing was patched");
}

/// A registry that answers 500 for `down-3` until `until`, always for `down`, and a Windows Server 2022
/// index otherwise.
fn registry_down(until: Instant) -> FakeServer {
    FakeServer::start(move |request| {
        let repository = request
            .path()
            .strip_prefix("/v2/")
            .and_then(|p| p.split_once("/manifests/"))
            .map_or("", |(r, _)| r);
        match repository {
            "down" => server_error(),
            "down-3" if Instant::now() < until => server_error(),
            _ => index_reply(&["windows"]),
        }
    })
}

/// When the last accepted patch of the pod `name` arrived.
fn patched_at(api: &FakeApi, name: &str) -> Option<Instant> {
    let what = format!("PATCH Pod shop/{name}");
    writes(api)
        .iter()
        .filter(|w| w.what == what && w.status == 200)
        .map(|w| w.at)
        .max()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_bounds_the_registry_and_a_lost_answer_is_placed_once() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    let url = api.serve().await;
    // A whole second, so that the controller's deadline (creation + 10 s) is known here exactly.
    let now = k8s_openapi::jiff::Timestamp::now();
    let whole = k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap();
    let created = Instant::now() - Duration::try_from(now.duration_since(whole)).unwrap();
    let registry = registry_down(created + Duration::from_secs(3));
    let host = registry.host();
    let at_whole = |mut pod: Value| {
        pod["metadata"]["creationTimestamp"] =
            json!(whole.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
        pod
    };
    api.apply(
        "Pod",
        at_whole(gated_pod("down-3", &format!("{host}/down-3:1"), json!({}))),
    );
    api.apply(
        "Pod",
        at_whole(gated_pod("down", &format!("{host}/down:1"), json!({}))),
    );
    api.apply(
        "Pod",
        at_whole(gated_pod("lost", &format!("{host}/app:1"), json!({}))),
    );
    // The pin patch of `lost` lands, and its answer is lost on the way.
    api.lock().drop_answers.push("shop/lost".into());
    let controller = Launch::new(dir, &url, "placer")
        .insecure(std::slice::from_ref(&host))
        .deadline("10")
        .args(&["--registry-timeout", "2"])
        .start();
    until_within(dir, "every pod is ungated", Duration::from_secs(30), || {
        ["down-3", "down", "lost"].iter().all(|n| ungated(&api, n))
    })
    .await;

    // Down for the first 3 s: asked again, and placed.
    assert!(placed(&api, "down-3"), "{}", pod(&api, "down-3"));
    // Down for all of it: released after the deadline (its last try at it), not before, and within one
    // look-up limit (2 s) after it.
    let released = patched_at(&api, "down").expect("released");
    let deadline = created + Duration::from_secs(10);
    assert!(
        released >= deadline - Duration::from_millis(50),
        "released {:?} before the deadline\n{}",
        deadline - released,
        logs(dir)
    );
    assert!(
        released <= deadline + Duration::from_secs(2) + Duration::from_millis(1500),
        "released {:?} after the deadline",
        released - deadline
    );
    let p = pod(&api, "down");
    assert!(p["spec"].get("nodeSelector").is_none(), "{p}");
    until(dir, "the release Event", || {
        !events_for(&api, "down").is_empty()
    })
    .await;
    let note = events_for(&api, "down")[0]["note"].to_string();
    assert!(note.contains("500 Internal Server Error"), "{note}");
    assert!(note.contains("--place-deadline 10s"), "{note}");
    // Every registry request said who it was.
    for request in registry.received() {
        let agent = request.header("user-agent").unwrap_or("");
        assert!(agent.starts_with("winplace/"), "{agent:?}");
    }

    // The lost answer: the patch landed once; the retry failed its guard, the pod read again showed the
    // pins: one Placed Event, one count.
    assert!(placed(&api, "lost"), "{}", pod(&api, "lost"));
    let statuses: Vec<u16> = api
        .lock()
        .patches
        .iter()
        .filter(|(k, _, _)| k == "shop/lost")
        .map(|(_, _, s)| *s)
        .collect();
    assert_eq!(statuses.first(), Some(&200), "{statuses:?}");
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    until(dir, "lost's Placed Event", || {
        !events_for(&api, "lost").is_empty()
    })
    .await;
    until(dir, "every Event", || {
        !events_for(&api, "down-3").is_empty()
    })
    .await;
    let events = events_for(&api, "lost");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["reason"], "Placed");
    let text = controller.get_ok("/metrics");
    assert!(
        text.contains("winplace_place_answers_lost_total 1\n"),
        "{text}"
    );
    assert!(text.contains("winplace_place_placed_total 2\n"), "{text}");
    assert_eq!(released_in(&text), 1.0, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_read_are_pinned_whatever_the_patch_meets_past_the_deadline() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    let url = api.serve().await;
    let registry = FakeServer::start(|_| index_reply(&["windows"]));
    let host = registry.host();
    // Throttled and failing from the start until 15 s past the 2 s deadline.
    let until_t = Instant::now() + Duration::from_secs(17);
    api.outage("Pod", "patch", until_t, &[429, 500, 503]);
    api.apply(
        "Pod",
        gated_pod("busy", &format!("{host}/app:1"), json!({})),
    );
    let controller = Launch::new(dir, &url, "placer")
        .insecure(&[host])
        .deadline("2")
        .start();
    until_within(dir, "the pod is placed", Duration::from_secs(40), || {
        ungated(&api, "busy")
    })
    .await;
    assert!(Instant::now() >= until_t, "the outage was meant to last");
    assert!(placed(&api, "busy"), "{}", pod(&api, "busy"));
    assert!(api.outage_answers() > 3, "{}", api.outage_answers());
    until(dir, "the Placed Event", || {
        !events_for(&api, "busy").is_empty()
    })
    .await;
    let events = events_for(&api, "busy");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["reason"], "Placed", "{events:?}");
    let text = controller.get_ok("/metrics");
    assert_eq!(released_in(&text), 0.0, "{text}");
    assert!(text.contains("winplace_place_placed_total 1\n"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_secrets_taints_and_proxies_are_read_as_kubernetes_reads_them() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = FakeApi::default();
    api.lock().version = true;
    // A pool that boots: every Windows node is not ready yet (the node lifecycle controller's taint).
    let mut booting = windows_node("win22-1", "10.0.20348.2762", "10.0.20348");
    booting["spec"]["taints"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
    api.apply("Node", booting);
    api.apply("Node", crate::common::fake_api::node("linux-1", "linux"));
    let (_registry, insecure, anonymous) = private_registry(dir, &api, &["2022"]);
    let image = format!("{}/private/win:2022", insecure[0]);
    // The older pull secret type, named by the pod: the only credentials it has (the service
    // account's `pull` is not named by these pods' account).
    api.apply(
        "Secret",
        pull_secret(
            "old",
            &insecure[0],
            &private_credentials(),
            PullSecretType::DockerCfg,
        ),
    );
    let own = json!({"imagePullSecrets": [{"name": "old"}], "serviceAccountName": "builder"});
    api.apply("Pod", gated_pod("dockercfg", &image, own.clone()));
    // A private Windows image whose pod already tolerates the Windows taint: pinned to Windows by its
    // manifest (its toleration is no OS signal).
    let mut tolerating = own.clone();
    tolerating["tolerations"] =
        json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]);
    api.apply("Pod", gated_pod("tolerating", &image, tolerating));
    // Gated by an older policy: no label.
    let mut unlabelled = gated_pod("unlabelled", &image, own);
    unlabelled["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("labels");
    api.apply("Pod", unlabelled);
    let url = api.serve().await;
    // A proxy that does not exist, and NO_PROXY covering the API server and the registries.
    let _controller = Launch::new(dir, &url, "placer")
        .insecure(&insecure)
        .env("HTTPS_PROXY", "http://proxy.invalid:3128")
        .env("HTTP_PROXY", "http://proxy.invalid:3128")
        .env("NO_PROXY", "127.0.0.1")
        .start();
    let names = ["dockercfg", "tolerating", "unlabelled"];
    until(dir, "every pod is ungated", || {
        names.iter().all(|n| ungated(&api, n))
    })
    .await;
    for name in names {
        let p = assert_pinned_to(&api, name, "10.0.20348");
        // Never a toleration of the condition taint; the Windows taint's, once.
        let tolerations = p["spec"]["tolerations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(
            tolerations
                .iter()
                .all(|t| t["key"] != "node.kubernetes.io/not-ready"),
            "{name}: {p}"
        );
        assert_eq!(
            tolerations.iter().filter(|t| t["key"] == "os").count(),
            1,
            "{name}: {p}"
        );
        // The label goes with the gate (and its absence is no error).
        assert!(
            p["metadata"]["labels"].get(GATED_LABEL).is_none(),
            "{name}: {p}"
        );
    }
    assert_eq!(
        pod(&api, "dockercfg")["metadata"]["labels"]["app"],
        "dockercfg"
    );
    // Read with the dockercfg secret's credentials, never anonymously.
    assert_eq!(anonymous.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Every request to the API server said who it was.
    let agents = api.lock().user_agents.clone();
    assert!(!agents.is_empty());
    assert!(
        agents.iter().all(|a| a.starts_with("winplace/")),
        "{agents:?}"
    );
}

/// A CONNECT proxy on 127.0.0.1 that reaches every host it is asked for at 127.0.0.1 (the port kept);
/// returns its port and the `host:port` targets it was asked for.
async fn connect_proxy() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let Some(target) = head
                    .strip_prefix("CONNECT ")
                    .and_then(|r| r.split_whitespace().next())
                else {
                    let _ = client
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                        .await;
                    return;
                };
                seen.lock().unwrap().push(target.to_string());
                let port = target.rsplit_once(':').map_or("80", |(_, p)| p);
                let Ok(mut upstream) =
                    tokio::net::TcpStream::connect(format!("127.0.0.1:{port}")).await
                else {
                    return;
                };
                let _ = client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await;
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (port, asked)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_the_api_server_is_reached_through_it() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    api.apply(
        "Pod",
        gated_pod("proxied", crate::common::place::NAMED, json!({})),
    );
    let url = api.serve().await;
    let port = url
        .rsplit_once(':')
        .map(|(_, p)| p.to_string())
        .expect("port");
    let (proxy, asked) = connect_proxy().await;
    // A name only the proxy resolves: reached through it or not at all.
    let behind = format!("http://api.winplace.test:{port}");
    kubeconfig(dir, &behind, "placer");
    let _controller = Launch::new(dir, &behind, "placer")
        .env("HTTP_PROXY", &format!("http://127.0.0.1:{proxy}"))
        .start();
    until(dir, "the pod is placed through the proxy", || {
        placed(&api, "proxied")
    })
    .await;
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .all(|t| *t == format!("api.winplace.test:{port}"))
            && !asked.is_empty(),
        "{asked:?}"
    );
}
