//! Issue 37 item 4, leadership that hands over: two `winplace serve --place` processes (the built
//! binary, each with a kubeconfig of its own token, so that the fake API server of `tests/common/` can
//! tell their writes apart) against one API server that answers Lease races with 409 and can hang one
//! replica's Lease writes.
//! * SIGTERM to the leader: it gives the Lease up, and the other replica leads within 2 s (not a lease
//!   duration later) and places the rest;
//! * `kill -9` of the leader while its images are being read: the other takes over when the Lease
//!   expires, and every pod is placed (none released blind), each patched once;
//! * a renewal that hangs: the replica stops writing at its renew deadline, before the other can lead.

use crate::common::fake_api::FakeApi;
use crate::common::fake_http::{FakeServer, Reply};
use crate::common::oci_registry;
use crate::common::place::{
    Controller, LEASE, Launch, NAMED, cluster, first_lease_write, gated_pod, holder, logs,
    patches_by, placed, pod, ungated, until_within as until, writes,
};

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// One replica: `winplace serve --place` with identity and token `id` and a Lease of `lease_secs`.
fn replica(
    dir: &std::path::Path,
    api: &str,
    id: &str,
    lease_secs: u32,
    extra: &[&str],
) -> Controller {
    Launch::new(dir, api, id)
        .lease(&lease_secs.to_string())
        .deadline("30")
        .args(extra)
        .start()
}

/// Every pod patched exactly once, accepted, and no other patch sent for it.
fn each_patched_once(api: &FakeApi, names: &[String]) {
    for name in names {
        let patches = patches_by(api, name);
        assert_eq!(patches.len(), 1, "{name}: {patches:?}");
        assert_eq!(patches[0].1, 200, "{name}: {patches:?}");
        assert!(placed(api, name), "{name}: {}", pod(api, name));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_hands_the_lease_over_and_the_other_replica_places_the_rest() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    let first: Vec<String> = (0..5).map(|i| format!("first-{i}")).collect();
    for name in &first {
        api.apply("Pod", gated_pod(name, NAMED, json!({})));
    }
    let url = api.serve().await;
    // A 6 s Lease: without the release, b would wait at least 6 s.
    let mut a = replica(dir, &url, "a", 6, &[]);
    until(dir, "a holds the Lease", Duration::from_secs(20), || {
        holder(&api, LEASE).as_deref() == Some("a")
    })
    .await;
    let b = replica(dir, &url, "b", 6, &[]);
    until(
        dir,
        "a places the first pods",
        Duration::from_secs(20),
        || first.iter().all(|n| ungated(&api, n)),
    )
    .await;
    // b has read the Lease held by a.
    let gets = api.requests("Lease", "get");
    until(dir, "b reads the Lease", Duration::from_secs(20), || {
        api.requests("Lease", "get") > gets
    })
    .await;

    let term = Instant::now();
    a.terminate();
    let status = a.exited_within(Duration::from_secs(10));
    assert!(
        status.is_some_and(|s| s.success()),
        "a exits after SIGTERM: {status:?}\n{}",
        logs(dir)
    );
    // a gave the Lease up as client-go does: no holder, a 1 s lease.
    let released = api
        .lock()
        .lease_writes
        .iter()
        .any(|(m, _, h, s)| *m == "PUT" && h.is_empty() && *s == 200);
    assert!(released, "{:?}\n{}", api.lock().lease_writes, logs(dir));
    until(dir, "b leads", Duration::from_secs(10), || {
        holder(&api, LEASE).as_deref() == Some("b")
    })
    .await;
    let took = first_lease_write(&api, "b").expect("b's Lease write") - term;
    assert!(
        took < Duration::from_secs(2),
        "b led {took:?} after a's SIGTERM\n{}",
        logs(dir)
    );
    // The rest: pods created after the hand-over are b's.
    let rest: Vec<String> = (0..5).map(|i| format!("rest-{i}")).collect();
    for name in &rest {
        api.apply("Pod", gated_pod(name, NAMED, json!({})));
    }
    until(dir, "b places the rest", Duration::from_secs(20), || {
        rest.iter().all(|n| ungated(&api, n))
    })
    .await;
    let all: Vec<String> = first.iter().chain(&rest).cloned().collect();
    each_patched_once(&api, &all);
    for name in &rest {
        assert_eq!(patches_by(&api, name)[0].0, b.id, "{name}");
    }
    // Nothing written by a after its release.
    let release_at = writes(&api)
        .iter()
        .filter(|w| w.token == "a" && w.what.starts_with("PUT Lease"))
        .map(|w| w.at)
        .max()
        .expect("a's release");
    assert!(
        writes(&api)
            .iter()
            .all(|w| w.token != "a" || w.at <= release_at),
        "{:?}",
        writes(&api)
    );
    let lease = api.get("Lease", LEASE).expect("lease");
    assert_eq!(lease["spec"]["leaseTransitions"], 1, "{lease}");
    eprintln!("b led {took:?} after a's SIGTERM");
}

/// A registry whose every manifest answers (a Windows Server 2022 index) after `delay`: the leader is
/// mid-flight while it waits.
fn slow_registry(delay: Duration) -> FakeServer {
    FakeServer::start(move |_| {
        std::thread::sleep(delay);
        let body = serde_json::to_vec(&json!({"schemaVersion": 2, "mediaType": oci_registry::INDEX,
            "manifests": [{"mediaType": oci_registry::MANIFEST, "size": 500,
                "digest": format!("sha256:{:064x}", 1),
                "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.2762"}}]}))
        .expect("json");
        Reply::Full {
            status: "200 OK",
            headers: vec![
                format!("Content-Type: {}", oci_registry::INDEX),
                format!("Docker-Content-Digest: sha256:{:x}", Sha256::digest(&body)),
            ],
            body,
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_killed_mid_flight_leaves_no_pod_released_blind() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let registry = slow_registry(Duration::from_millis(1500));
    let host = registry.host();
    let api = cluster();
    let names: Vec<String> = (0..12).map(|i| format!("p-{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        api.apply(
            "Pod",
            gated_pod(name, &format!("{host}/app-{i}:1"), json!({})),
        );
    }
    let url = api.serve().await;
    let insecure = ["--insecure-registry", host.as_str()];
    let mut a = replica(dir, &url, "a", 2, &insecure);
    until(dir, "a holds the Lease", Duration::from_secs(20), || {
        holder(&api, LEASE).as_deref() == Some("a")
    })
    .await;
    let _b = replica(dir, &url, "b", 2, &insecure);
    until(dir, "a reads the images", Duration::from_secs(20), || {
        !registry.received().is_empty()
    })
    .await;
    // kill -9 while a waits on the registry: no release, no last words.
    a.kill();
    until(dir, "b places every pod", Duration::from_secs(30), || {
        names.iter().all(|n| ungated(&api, n))
    })
    .await;
    each_patched_once(&api, &names);
    assert!(
        writes(&api)
            .iter()
            .all(|w| w.token != "a" || w.what.contains(" Lease ")),
        "a wrote nothing but its Lease: {:?}",
        writes(&api)
    );
    // No Warning Event: nothing was released.
    let warnings: Vec<Value> = api
        .all("EventsEvent")
        .into_iter()
        .filter(|e| e["type"] == "Warning")
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(holder(&api, LEASE).as_deref(), Some("b"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_renewal_hangs_stops_acting_before_another_leads() {
    let work = tempfile::tempdir().expect("tempdir");
    let dir = work.path();
    let api = cluster();
    let url = api.serve().await;
    // A 3 s Lease: renew deadline 2 s, renewals every 0.4 s.
    let a = replica(dir, &url, "a", 3, &[]);
    until(dir, "a holds the Lease", Duration::from_secs(20), || {
        holder(&api, LEASE).as_deref() == Some("a")
    })
    .await;
    let _b = replica(dir, &url, "b", 3, &[]);
    api.apply("Pod", gated_pod("before", NAMED, json!({})));
    until(dir, "a places a pod", Duration::from_secs(20), || {
        ungated(&api, "before")
    })
    .await;
    // From now on a's Lease writes hang; a pod is created every 100 ms until b leads.
    api.lock().hang_lease_writes.push(a.id.clone());
    let hung = Instant::now();
    let mut names = vec!["before".to_string()];
    let mut created: Vec<(String, Instant)> = Vec::new();
    let mut i = 0;
    while holder(&api, LEASE).as_deref() != Some("b") {
        assert!(
            hung.elapsed() < Duration::from_secs(20),
            "b never led\n{}",
            logs(dir)
        );
        let name = format!("during-{i}");
        api.apply("Pod", gated_pod(&name, NAMED, json!({})));
        created.push((name.clone(), Instant::now()));
        names.push(name);
        i += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    until(dir, "every pod is placed", Duration::from_secs(20), || {
        names.iter().all(|n| ungated(&api, n))
    })
    .await;
    each_patched_once(&api, &names);
    let all = writes(&api);
    // a's last accepted renewal, and b's take-over.
    let renewed = all
        .iter()
        .filter(|w| w.token == "a" && w.what.contains(" Lease ") && (200..300).contains(&w.status))
        .map(|w| w.at)
        .max()
        .expect("a renewed");
    let took = first_lease_write(&api, "b").expect("b took the Lease");
    let last_a = all
        .iter()
        .filter(|w| w.token == "a" && !w.what.contains(" Lease "))
        .map(|w| w.at)
        .max()
        .expect("a wrote");
    // a stopped writing at its renew deadline (2 s after its last renewal started, which is before the
    // fake received it), before b could take the Lease (3 s after it saw that renewal).
    assert!(
        last_a < renewed + Duration::from_millis(2100),
        "a wrote {:?} after its last renewal\n{}",
        last_a - renewed,
        logs(dir)
    );
    assert!(last_a < took, "{all:?}");
    assert!(took >= renewed + Duration::from_secs(3), "{all:?}");
    // Pods created after a's renew deadline waited for b; a patched none of them.
    let late: Vec<&String> = created
        .iter()
        .filter(|(_, at)| *at > renewed + Duration::from_millis(2100))
        .map(|(n, _)| n)
        .collect();
    assert!(!late.is_empty(), "pods were created in the gap");
    for name in late {
        assert_eq!(patches_by(&api, name)[0].0, "b", "{name}");
    }
    let log = std::fs::read_to_string(dir.join("a.log")).unwrap_or_default();
    assert!(log.contains("stops placing pods"), "{log}");
}
