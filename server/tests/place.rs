//! `winplace serve --place` (docs/placement.md): the built binary against the fake API server (real
//! HTTP: list, watch, get, JSON patches refused with 422 as kube-apiserver refuses them on a gated pod)
//! and Debian's `docker-registry` with token auth, images pushed by `skopeo`. One registry, one fake
//! API server and one test: the cases share the setup. The faults (a pod deleted while
//! its images resolve, a Linux-only index on a Windows-bound pod, a registry that answers slowly or with
//! 500s, a patch refused with 422) run in the same controller, beside the others, with a small fake
//! registry (`fake_http`) for the answers Debian's registry never gives.

use crate::common::fake_api::FakeApi;
use crate::common::fake_http::{FakeServer, Reply};
use crate::common::oci_registry::{
    self, Layout, Registry, TOKEN_PASSWORD, TOKEN_USER, hanging_listener, token_server,
};
use crate::common::place::{
    GATE, LEASE, Launch, apply_pull_secret, build_values, cluster, events_for, gated_pod, gates,
    holder, index_reply, now_minus, patches_of, pod, server_error, ungated, until, windows_node,
};

use std::time::{Duration, Instant};

use serde_json::{Value, json};

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
    let api = cluster();
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
    // A 3 s look-up limit: `slow` (8 s) and the hanging registry are never answered in time, and a look-up
    // started before the 5 s deadline runs to its limit, not to the deadline.
    let placer = Launch::new(work.path(), &url, "placer")
        .insecure(&insecure)
        .args(&["--registry-timeout", "3"])
        .start();
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
    let text = placer.get_ok("/metrics");
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
        "winplace_place_can_place 1",
        // Its --place-deadline, which the alert on pods gated too long compares their age with.
        "winplace_place_deadline_seconds 5",
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
    let placements: Value = serde_json::from_str(&placer.get_ok("/api/placements")).expect("json");
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
    let _placer = Launch::new(work.path(), &url, "placer")
        .insecure(&insecure)
        .start();
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
/// `slow` answers after 8 s (beyond the 5 s deadline and the test's 3 s look-up limit); `linux-only` an index of Linux entries only;
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

/// Each fault is logged once, counted, its gate released (or the pod placed after a
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

/// Two replicas against one API server: only the Lease's holder patches; when it dies, the other
/// takes over once the (2 s) Lease has expired, and no pod is patched twice. The images' names say
/// their OS and build, so no registry is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_place_each_pod_once_and_the_other_takes_over() {
    let work = tempfile::tempdir().expect("tempdir");
    let api = cluster();
    let image = "mcr.microsoft.com/windows/servercore:ltsc2022";
    for name in ["first-1", "first-2", "first-3"] {
        api.apply("Pod", gated_pod(name, image, json!({})));
    }
    let url = api.serve().await;
    let replica = |id: &str| Launch::new(work.path(), &url, id).lease("2").start();
    // `a` takes the Lease first (it creates it), then `b` starts and finds it held.
    let a = replica("a");
    until(work.path(), "a holds the Lease", || {
        holder(&api, LEASE).as_deref() == Some("a")
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
        holder(&api, LEASE).as_deref(),
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
