//! `winplace serve --place` under faults (docs/placement.md, "When things fail"): the built binary against
//! the fake API server (real HTTP; a failed JSON-patch `test` answers 422; a second client, the test,
//! edits pods while the controller reads the registry; a throttle answers 429) and Debian's
//! `docker-registry` with token auth (images pushed by `skopeo`), as `place.rs` runs it.
//!
//! * pods gated before the controller starts, older than the deadline, are resolved and placed, none
//!   released blind;
//! * a 2019 image in a cluster without 2019 nodes is pinned to 10.0.17763, left Pending, and said in a
//!   Warning Event;
//! * another controller removes its own gate, or adds a toleration, while winplace reads the registry:
//!   both edits survive and the pod is placed;
//! * 1,000 gated pods with 429s on Secrets and pods: all placed, no anonymous pull.

use crate::common::fake_api::FakeApi;
use crate::common::fake_http::FakeServer;
use crate::common::place::{
    GATE, Launch, assert_pinned_to, build_values, cluster, events_for, gated_pod, index_reply,
    logs, metric_in, now_minus, patches_of, pod, private_registry, released_in, ungated, until,
};

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A line of `/metrics`' text, parsed.
fn metric(text: &str, name: &str) -> f64 {
    metric_in(text, name).unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// A registry whose answers for `race-gate` and `race-tol` wait until the test's edit of the pod of the
/// same name is stored (the second client's edit lands while winplace reads the registry).
fn held_registry(api: &FakeApi) -> FakeServer {
    let api = api.clone();
    FakeServer::start(move |request| {
        let repository = request
            .path()
            .strip_prefix("/v2/")
            .and_then(|p| p.split_once("/manifests/"))
            .map_or("", |(r, _)| r);
        let edited = |pod: &Value| match repository {
            "race-gate" => pod["spec"]["schedulingGates"]
                .as_array()
                .is_some_and(|g| g.len() == 1),
            _ => pod["spec"]["tolerations"].is_array(),
        };
        if matches!(repository, "race-gate" | "race-tol") {
            let start = Instant::now();
            while api
                .get("Pod", &format!("shop/{repository}"))
                .is_some_and(|p| !edited(&p))
                && start.elapsed() < Duration::from_secs(20)
            {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        index_reply(&["windows"])
    })
}

/// The second client's JSON patch of a pod, over HTTP, as another controller sends it.
async fn edit(http: &reqwest::Client, url: &str, name: &str, ops: Value) {
    let answer = http
        .patch(format!("{url}/api/v1/namespaces/shop/pods/{name}"))
        .header("content-type", "application/json-patch+json")
        .body(ops.to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(answer.status().as_u16(), 200, "{:?}", answer.text().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_gated_before_the_controller_are_placed_unrunnable_ones_pinned_and_races_retried() {
    let work = tempfile::tempdir().expect("tempdir");
    // Linux and Windows Server 2022 nodes: no 2019 node.
    let api = cluster();
    let (_registry, insecure, anonymous) = private_registry(work.path(), &api, &["2022"]);
    let img2022 = format!("{}/private/win:2022", insecure[0]);
    let img2019 = format!("{}/private/win:2019", insecure[0]);
    // Gated an hour ago, while no controller ran: twelve times the 5 s deadline.
    let old = |name: &str, image: &str| {
        let mut p = gated_pod(name, image, json!({}));
        p["metadata"]["creationTimestamp"] = json!(now_minus(3600));
        p
    };
    for name in ["old-1", "old-2", "old-3", "old-4"] {
        api.apply("Pod", old(name, &img2022));
    }
    api.apply("Pod", old("old-2019", &img2019));
    // The races: another controller's gate comes first; a pod without tolerations.
    let held = held_registry(&api);
    let mut race_gate = gated_pod(
        "race-gate",
        &format!("{}/race-gate:1", held.host()),
        json!({}),
    );
    race_gate["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}, {"name": GATE}]);
    api.apply("Pod", race_gate);
    api.apply(
        "Pod",
        gated_pod(
            "race-tol",
            &format!("{}/race-tol:1", held.host()),
            json!({}),
        ),
    );
    let url = api.serve().await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let mut hosts: Vec<&str> = insecure.iter().map(String::as_str).collect();
    let held_host = held.host();
    hosts.push(&held_host);
    let placer = Launch::new(work.path(), &url, "placer")
        .insecure(&hosts)
        .start();

    // While winplace waits for the held registry: the other controller removes its own gate (index 0,
    // guarded as winplace guards its own), and someone adds a toleration (the list did not exist).
    let asked = |repository: &str| {
        let prefix = format!("/v2/{repository}/manifests/");
        held.received()
            .iter()
            .any(|r| r.path().starts_with(&prefix))
    };
    until(work.path(), "winplace reads the race pods' images", || {
        asked("race-gate") && asked("race-tol")
    })
    .await;
    edit(
        &http,
        &url,
        "race-gate",
        json!([
        {"op": "test", "path": "/spec/schedulingGates/0/name", "value": "example.com/quota"},
        {"op": "remove", "path": "/spec/schedulingGates/0"}]),
    )
    .await;
    let theirs =
        json!({"key": "team", "operator": "Equal", "value": "shop", "effect": "NoSchedule"});
    edit(
        &http,
        &url,
        "race-tol",
        json!([{"op": "add", "path": "/spec/tolerations", "value": [theirs]}]),
    )
    .await;

    let all = [
        "old-1",
        "old-2",
        "old-3",
        "old-4",
        "old-2019",
        "race-gate",
        "race-tol",
    ];
    until(work.path(), "every pod is ungated", || {
        all.iter().all(|n| ungated(&api, n))
    })
    .await;

    // Gated before the controller started: resolved and placed, none released blind.
    for name in ["old-1", "old-2", "old-3", "old-4"] {
        assert_pinned_to(&api, name, "10.0.20348");
        assert_eq!(patches_of(&api, name, 200), 1, "{name}");
    }
    // The 2019 image: pinned to 10.0.17763 (no node has it, so the pod stays Pending: nothing binds
    // it), never only to the OS, and a Warning Event says what to do.
    let p = pod(&api, "old-2019");
    assert_eq!(build_values(&p), json!(["10.0.17763"]), "{p}");
    assert!(p["spec"].get("nodeName").is_none(), "{p}");
    assert_eq!(p["status"]["phase"], "Pending");
    until(work.path(), "the 2019 pod's Warning", || {
        !events_for(&api, "old-2019").is_empty()
    })
    .await;
    let events = events_for(&api, "old-2019");
    assert_eq!(events[0]["type"], "Warning", "{events:?}");
    assert_eq!(events[0]["reason"], "ImagesNotRunnable", "{events:?}");
    let note = events[0]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains(
            "no node runs 10.0.17763 images: add a Windows Server 2019 pool, or rebuild on ltsc2022"
        ),
        "{note}"
    );

    // The races: winplace's first patch failed its guard (422), it read the pod again and placed it
    // without undoing the other edit.
    let p = pod(&api, "race-gate");
    assert_eq!(p["spec"]["schedulingGates"], json!([]), "{p}");
    assert_eq!(
        p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
        "{p}"
    );
    let p = pod(&api, "race-tol");
    assert_eq!(p["spec"]["tolerations"][0], theirs, "{p}");
    assert_eq!(
        p["spec"]["tolerations"][1],
        json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}),
        "{p}"
    );
    assert_eq!(
        p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
        "{p}"
    );
    for name in ["race-gate", "race-tol"] {
        assert_eq!(
            patches_of(&api, name, 422),
            1,
            "{name}: {:?}",
            api.lock().patches
        );
        assert_eq!(
            patches_of(&api, name, 200),
            2,
            "{name}: the edit and winplace's"
        );
        // The Event follows the patch: the pod may be seen ungated before it is posted.
        until(work.path(), &format!("{name}'s Placed Event"), || {
            events_for(&api, name)
                .iter()
                .any(|e| e["reason"] == "Placed")
        })
        .await;
    }

    // Each pod's Event is posted after its counters: once all are there, the counters are final.
    until(work.path(), "every pod's Event", || {
        all.iter().all(|n| !events_for(&api, n).is_empty())
    })
    .await;
    let text = placer.get_ok("/metrics");
    assert_eq!(released_in(&text), 0.0, "{text}");
    assert_eq!(metric(&text, "winplace_place_placed_total"), 7.0, "{text}");
    assert_eq!(
        metric(&text, "winplace_place_unrunnable_total"),
        1.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "winplace_place_conflicts_total"),
        2.0,
        "{text}"
    );
    assert_eq!(anonymous.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// Issue 37 item 5: a burst of 1,000 gated pods (half before the controller starts, half after), ten
/// tags of one private image, while the API server answers every third request on Secrets and on pods
/// 429: every pod placed once, none released, no anonymous pull (the token server counts requests that
/// came without the credentials).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_gated_pods_through_429s_are_all_placed_with_their_pull_secrets() {
    let work = tempfile::tempdir().expect("tempdir");
    let api = cluster();
    let tags: Vec<String> = (0..10).map(|i| format!("v{i}")).collect();
    let tag_refs: Vec<&str> = tags.iter().map(String::as_str).collect();
    let (_registry, insecure, anonymous) = private_registry(work.path(), &api, &tag_refs);
    let burst = |range: std::ops::Range<usize>| -> Vec<Value> {
        range
            .map(|i| {
                let image = format!("{}/private/win:{}", insecure[0], tags[i % tags.len()]);
                // Half name the pull secret themselves; the others have it from the service account.
                let extra = if i % 2 == 0 {
                    json!({"imagePullSecrets": [{"name": "pull"}]})
                } else {
                    json!({})
                };
                gated_pod(&format!("burst-{i}"), &image, extra)
            })
            .collect()
    };
    api.apply_all("Pod", burst(0..500));
    api.throttle("Secret", 3);
    api.throttle("ServiceAccount", 3);
    api.throttle("Pod", 3);
    let url = api.serve().await;
    let placer = Launch::new(work.path(), &url, "burst")
        .insecure(&insecure)
        .deadline("60")
        .start();
    api.apply_all("Pod", burst(500..1000));
    let started = Instant::now();
    let names: Vec<String> = (0..1000).map(|i| format!("burst-{i}")).collect();
    while !names.iter().all(|n| ungated(&api, n)) {
        let left = names.iter().filter(|n| !ungated(&api, n)).count();
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{left} pods still gated; winplace's log:\n{}",
            logs(work.path())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for name in &names {
        let p = pod(&api, name);
        assert_eq!(
            p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
            "{p}"
        );
        assert_eq!(patches_of(&api, name, 200), 1, "{name}");
    }
    // The throttle did refuse requests on both kinds.
    assert!(api.throttled("Pod") > 0 && api.throttled("Secret") > 0);
    let text = placer.get_ok("/metrics");
    assert_eq!(released_in(&text), 0.0, "{text}");
    assert_eq!(
        metric(&text, "winplace_place_placed_total"),
        1000.0,
        "{text}"
    );
    assert_eq!(anonymous.load(std::sync::atomic::Ordering::SeqCst), 0);
}
