//! Placement under faults: two `winplace serve --place` replicas against the tests' fake API server
//! (`tests/common/fake_api.rs`, real HTTP), set up by the placement test kit (`tests/common/place.rs`).
//! PODS gated pods naming IMAGES distinct images are created at once while replica `a` leads, and `a` is
//! killed (`kill`: SIGKILL, the Lease expires) or stopped (`term`: SIGTERM, the Lease is given up) when
//! half of them are ungated. The images are Windows Server 2022 images in Debian's `docker-registry`
//! (pushed by `skopeo`); with DOWN_SECONDS > 0 they are served by a fake registry that answers 500 for
//! the first DOWN_SECONDS after the pods' creation (with a DEADLINE_SECONDS deadline: a registry down
//! for part of it must cost no pod its placement). Prints the time from the pods' creation until none
//! carries the gate, when `a` was stopped and when `b` took the Lease, and fails unless every pod was
//! patched exactly once and none was released without pins.
//!
//! `bash server/bench/place_failover.sh [PODS] [IMAGES] [kill|term] [LEASE_SECONDS] [DEADLINE_SECONDS] [DOWN_SECONDS]`
//! (= `cargo build --release -p winplace --bin winplace --example place_failover &&
//! target/release/examples/place_failover …`; `WINPLACE_BIN` names another binary). A wall-clock figure
//! for docs/benchmarks.md (with the machine's load), not an assertion.

#[path = "../tests/common/fake_api.rs"]
mod fake_api;
#[path = "../tests/common/fake_http.rs"]
mod fake_http;
#[path = "../tests/common/oci_registry.rs"]
mod oci_registry;
#[path = "../tests/common/place.rs"]
mod place;

use fake_http::FakeServer;
use place::{
    Launch, Log, cluster, gated, gated_pod_in, holder, index_reply, public_images, server_error,
    writes,
};
use serde_json::json;
use std::time::{Duration, Instant};

const LEASE: &str = "bench/winplace-placer";

async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// A registry that answers 500 until `down_until`, then a Windows Server 2022 index for every tag.
fn flaky_registry(down_until: std::sync::Arc<std::sync::Mutex<Option<Instant>>>) -> FakeServer {
    FakeServer::start(move |_| {
        let down = down_until
            .lock()
            .map(|d| d.is_none_or(|until| Instant::now() < until))
            .unwrap_or(true);
        if down {
            server_error()
        } else {
            index_reply(&["windows"])
        }
    })
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let images: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let mode = args.next().unwrap_or_else(|| "kill".into());
    let lease = args.next().unwrap_or_else(|| "15".into());
    let deadline = args.next().unwrap_or_else(|| "120".into());
    let down: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    assert!(mode == "kill" || mode == "term", "mode: kill or term");
    let work = tempfile::tempdir().expect("tempdir");

    // The images: Debian's registry, or (DOWN_SECONDS > 0) the fake one that is down at first.
    let down_until = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (_registry, _flaky, host, references) = if down > 0 {
        let flaky = flaky_registry(down_until.clone());
        let host = flaky.host();
        let references = (0..images)
            .map(|i| format!("{host}/bench/app:v{i}"))
            .collect();
        (None, Some(flaky), host, references)
    } else {
        let (registry, references) = public_images(work.path(), images);
        let host = registry.host();
        (Some(registry), None, host, references)
    };
    let api = cluster();
    let url = api.serve().await;
    let replica = |id: &str| {
        let mut launch = Launch::new(work.path(), &url, id)
            .insecure(std::slice::from_ref(&host))
            .deadline(&deadline)
            .lease(&lease)
            .args(&["--place-lease-namespace", "bench"]);
        launch.rust_log = "winplace=warn".into();
        launch.log = Log::Inherit;
        launch.start()
    };

    // a leads; b has read the Lease held by a.
    let mut a = replica("a");
    wait_for("a leads", Duration::from_secs(60), || {
        holder(&api, LEASE).as_deref() == Some("a")
    })
    .await;
    let b = replica("b");
    let gets = api.requests("Lease", "get");
    wait_for("b reads the Lease", Duration::from_secs(60), || {
        api.requests("Lease", "get") > gets
    })
    .await;

    let created = Instant::now();
    if let Ok(mut until) = down_until.lock() {
        *until = Some(created + Duration::from_secs(down));
    }
    api.apply_all(
        "Pod",
        (0..pods).map(|i| {
            gated_pod_in(
                "bench",
                &format!("p-{i}"),
                &references[i % images],
                json!({}),
            )
        }),
    );
    wait_for("half the pods", Duration::from_secs(300), || {
        gated(&api) <= pods / 2
    })
    .await;
    let stopped = created.elapsed();
    let placed_by_a = pods - gated(&api);
    if mode == "kill" {
        a.kill();
    } else {
        a.terminate();
    }
    wait_for("every pod", Duration::from_secs(300), || gated(&api) == 0).await;
    let took = created.elapsed();
    let _ = a.exited_within(Duration::from_secs(30));
    drop(b);

    let writes = writes(&api);
    let b_leads = writes
        .iter()
        .find(|w| w.token == "b" && w.what.contains(" Lease ") && (200..300).contains(&w.status))
        .map(|w| w.at.duration_since(created))
        .expect("b took the Lease");
    let mut per_pod = std::collections::BTreeMap::<String, usize>::new();
    for w in writes.iter().filter(|w| w.what.starts_with("PATCH Pod ")) {
        assert_eq!(w.status, 200, "{w:?}");
        *per_pod.entry(w.what.clone()).or_default() += 1;
    }
    assert_eq!(per_pod.len(), pods, "every pod patched");
    assert!(per_pod.values().all(|n| *n == 1), "each pod patched once");
    let pinned = api
        .all("Pod")
        .iter()
        .filter(|p| p["spec"]["nodeSelector"]["kubernetes.io/os"] == "windows")
        .count();
    assert_eq!(
        pinned, pods,
        "every pod placed with its pins, none released blind"
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let registry = if down > 0 {
        format!("a registry down for the first {down} s, ")
    } else {
        String::new()
    };
    println!(
        "{pods} gated pods, {images} images, {registry}deadline {deadline} s, lease {lease} s, leader {}ed at {:.2} s ({placed_by_a} placed by it); \
         b took the Lease at {:.2} s; all placed {:.2} s after creation, each patched once; load average {}",
        mode,
        stopped.as_secs_f64(),
        b_leads.as_secs_f64(),
        took.as_secs_f64(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
