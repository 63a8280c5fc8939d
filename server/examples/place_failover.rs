//! Issue 37's number: placement under faults. Two `winplace serve --place` replicas against the tests'
//! fake API server (`tests/common/fake_api.rs`, real HTTP) and Debian's `docker-registry` on 127.0.0.1
//! (IMAGES Windows Server 2022 images pushed by `skopeo`); PODS gated pods are created at once while
//! replica `a` leads, and `a` is killed (`kill`: SIGKILL, the Lease expires) or stopped (`term`:
//! SIGTERM, the Lease is given up) when half of them are ungated. Prints the time from the pods'
//! creation until none carries the gate, when `a` was stopped and when `b` took the Lease, and fails
//! unless every pod was patched exactly once and none was released without pins.
//!
//! `bash server/bench/place_failover.sh [PODS] [IMAGES] [kill|term] [LEASE_SECONDS]`
//! (= `cargo build --release -p winplace --bin winplace --example place_failover &&
//! target/release/examples/place_failover …`; `WINPLACE_BIN` names another binary). A wall-clock figure
//! for docs/benchmarks.md (with the machine's load), not an assertion.

#[path = "../tests/common/fake_api.rs"]
mod fake_api;
#[path = "../tests/common/oci_registry.rs"]
mod oci_registry;

use fake_api::{FakeApi, node};
use oci_registry::{Layout, Registry};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const GATE: &str = "winplace.io/placement";

fn gated(api: &FakeApi) -> usize {
    api.all("Pod")
        .iter()
        .filter(|p| {
            p["spec"]["schedulingGates"]
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g["name"] == GATE))
        })
        .count()
}

fn holder(api: &FakeApi) -> Option<String> {
    api.get("Lease", "bench/winplace-placer")
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
}

/// One replica with identity and kubeconfig token `id`.
fn replica(
    bin: &str,
    dir: &std::path::Path,
    url: &str,
    id: &str,
    lease: &str,
    registry: &str,
) -> Child {
    let kubeconfig = dir.join(format!("kubeconfig-{id}"));
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: {id}\n"
        ),
    )
    .expect("kubeconfig");
    let listen = format!("127.0.0.1:{}", oci_registry::free_port());
    Command::new(bin)
        .args(["serve", "--place", "--kubeconfig"])
        .arg(&kubeconfig)
        .args([
            "--insecure-registry",
            registry,
            "--place-deadline",
            "120",
            "--place-lease-namespace",
            "bench",
            "--place-lease-duration",
            lease,
            "--place-identity",
            id,
            "--listen",
            &listen,
        ])
        .env("DOCKER_CONFIG", dir)
        .env("RUST_LOG", "winplace=warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e} (cargo build --release -p winplace first)"))
}

async fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let images: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let mode = args.next().unwrap_or_else(|| "kill".into());
    let lease = args.next().unwrap_or_else(|| "15".into());
    assert!(mode == "kill" || mode == "term", "mode: kill or term");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var("WINPLACE_BIN").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR")
            .unwrap_or_else(|_| root.join("target").display().to_string());
        format!("{target}/release/winplace")
    });
    let work = tempfile::tempdir().expect("tempdir");

    let registry = Registry::start(None);
    let mut layout = Layout::new(&work.path().join("layout"));
    for i in 0..images {
        let image = layout.image("windows", Some(&format!("10.0.20348.{}", 1000 + i)));
        layout.tag(&format!("v{i}"), &image);
    }
    for i in 0..images {
        registry.push(&layout.dir, &format!("v{i}"), "bench/app", None);
    }

    let api = FakeApi::default();
    api.lock().version = true;
    api.apply("Node", node("linux-1", "linux"));
    let mut win = node("win22-1", "windows");
    win["metadata"]["labels"]["node.kubernetes.io/windows-build"] = json!("10.0.20348");
    api.apply("Node", win);
    let url = api.serve().await;
    let host = registry.host();

    // a leads; b has read the Lease held by a.
    let mut a = replica(&bin, work.path(), &url, "a", &lease, &host);
    wait_for("a leads", Duration::from_secs(60), || {
        holder(&api).as_deref() == Some("a")
    })
    .await;
    let mut b = replica(&bin, work.path(), &url, "b", &lease, &host);
    let gets = api.requests("Lease", "get");
    wait_for("b reads the Lease", Duration::from_secs(60), || {
        api.requests("Lease", "get") > gets
    })
    .await;

    let created_at = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let created = Instant::now();
    api.apply_all(
        "Pod",
        (0..pods).map(|i| -> Value {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("p-{i}"), "namespace": "bench", "uid": format!("uid-{i}"),
                             "creationTimestamp": created_at},
                "spec": {"schedulingGates": [{"name": GATE}],
                         "containers": [{"name": "app", "image": format!("{host}/bench/app:v{}", i % images)}]},
                "status": {"phase": "Pending"}})
        }),
    );
    wait_for("half the pods", Duration::from_secs(300), || {
        gated(&api) <= pods / 2
    })
    .await;
    let stopped = created.elapsed();
    let placed_by_a = pods - gated(&api);
    if mode == "kill" {
        let _ = a.kill();
    } else {
        let _ = Command::new("kill")
            .args(["-TERM", &a.id().to_string()])
            .status();
    }
    wait_for("every pod", Duration::from_secs(300), || gated(&api) == 0).await;
    let took = created.elapsed();
    let _ = a.wait();
    let _ = b.kill();
    let _ = b.wait();

    let writes = api.lock().writes.clone();
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
    println!(
        "{pods} gated pods, {images} images, lease {lease} s, leader {}ed at {:.2} s ({placed_by_a} placed by it); \
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
