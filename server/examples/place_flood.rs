//! Issue 30's number: 1,000 gated pods naming 20 distinct images, placed by `winplace serve --place`
//! against Debian's `docker-registry` on 127.0.0.1 (the 20 images pushed by `skopeo`) and the fake API
//! server of the tests (`tests/common/fake_api.rs`, real HTTP: list, watch, JSON patches).
//!
//! `cargo build --release -p winplace && cargo run --release -p winplace --example place_flood -- [PODS] [IMAGES]`
//! (or `bash server/bench/place.sh`; `WINPLACE_BIN` names another binary). Prints the time from the
//! controller's start until every pod is ungated, and fails unless every pod was placed with one
//! registry look-up per distinct reference (read from the controller's `/metrics`). A wall-clock figure
//! for docs/benchmarks.md (with the machine's load), not an assertion.

#[path = "../tests/common/fake_api.rs"]
mod fake_api;
#[path = "../tests/common/oci_registry.rs"]
mod oci_registry;

use fake_api::{FakeApi, node};
use oci_registry::{Layout, Registry};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const GATE: &str = "winplace.io/placement";

/// The value of the series `name` (exact, labels included) on `addr`'s `/metrics`.
fn metric(addr: &str, name: &str) -> Option<f64> {
    let mut stream = TcpStream::connect(addr).ok()?;
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = String::new();
    stream.read_to_string(&mut raw).ok()?;
    raw.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|v| v.trim().parse().ok())
    })
}

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

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let pods: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let images: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var("WINPLACE_BIN").unwrap_or_else(|_| {
        let target = std::env::var("CARGO_TARGET_DIR")
            .unwrap_or_else(|_| root.join("target").display().to_string());
        format!("{target}/release/winplace")
    });
    let work = tempfile::tempdir().expect("tempdir");

    // The registry: IMAGES Windows Server 2022 images, each its own tag (a distinct reference).
    let registry = Registry::start(None);
    let mut layout = Layout::new(&work.path().join("layout"));
    let pushed = Instant::now();
    for i in 0..images {
        let image = layout.image("windows", Some(&format!("10.0.20348.{}", 1000 + i)));
        layout.tag(&format!("v{i}"), &image);
    }
    for i in 0..images {
        registry.push(&layout.dir, &format!("v{i}"), "bench/app", None);
    }
    eprintln!(
        "pushed {images} images in {:.1} s",
        pushed.elapsed().as_secs_f64()
    );

    // The cluster: a Linux and a Windows Server 2022 node; PODS gated pods, image i % IMAGES.
    let api = FakeApi::default();
    api.lock().version = true;
    api.apply("Node", node("linux-1", "linux"));
    let mut win = node("win22-1", "windows");
    win["metadata"]["labels"]["node.kubernetes.io/windows-build"] = json!("10.0.20348");
    api.apply("Node", win);
    let created = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    api.apply_all(
        "Pod",
        (0..pods).map(|i| -> Value {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("p-{i}"), "namespace": "bench", "uid": format!("uid-{i}"),
                             "creationTimestamp": created},
                "spec": {"schedulingGates": [{"name": GATE}],
                         "containers": [{"name": "app", "image": format!("{}/bench/app:v{}", registry.host(), i % images)}]},
                "status": {"phase": "Pending"}})
        }),
    );
    let url = api.serve().await;
    let kubeconfig = work.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: fake\n"
        ),
    )
    .expect("kubeconfig");
    let listen = format!("127.0.0.1:{}", oci_registry::free_port());

    let started = Instant::now();
    let mut child = Command::new(&bin)
        .args(["serve", "--place", "--kubeconfig"])
        .arg(&kubeconfig)
        .args([
            "--insecure-registry",
            &registry.host(),
            "--place-deadline",
            "120",
            "--place-lease-namespace",
            "bench",
            "--listen",
            &listen,
        ])
        .env("DOCKER_CONFIG", work.path())
        .env("RUST_LOG", "winplace=warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{bin}: {e} (cargo build --release -p winplace first)"));
    while gated(&api) > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{} pods still gated after 300 s",
            gated(&api)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    let placed = metric(&listen, "winplace_place_placed_total").unwrap_or(-1.0);
    let looked_up = metric(
        &listen,
        "winplace_image_registry_requests_total{outcome=\"ok\"}",
    )
    .unwrap_or(-1.0);
    let _ = child.kill();
    let _ = child.wait();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{pods} gated pods, {images} distinct images: all ungated {:.2} s after the controller started; placed {placed}, registry look-ups {looked_up}; load average {}",
        took.as_secs_f64(),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    assert_eq!(placed as usize, pods, "every pod placed");
    assert_eq!(
        looked_up as usize, images,
        "one registry look-up per distinct reference"
    );
}
