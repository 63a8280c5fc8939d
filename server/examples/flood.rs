//! A flood of watch events against the real server: `winplace serve --kubeconfig` watching the
//! fake API server of the tests (`tests/common/fake_api.rs`, real HTTP on 127.0.0.1), timed until what
//! the server answers shows the cluster.
//!
//! `cargo build --release -p winplace && cargo run --release -p winplace --example flood -- [PODS]`
//! (default 20,000; `WINPLACE_BIN` names another binary). Pods are misplaced, unowned Windows pods
//! (`winplace demo-snapshot --misplaced-pods`): each a workload of its own with findings, the audit's
//! worst case per pod. Prints, each from the first event sent until `/api/summary` shows it:
//! 1. PODS ADDs, then a node added behind them (the node's own time says whether it waited behind the
//!    pods);
//! 2. PODS DELETEs of the same pods, then a node deleted behind them;
//! 3. a second server started against the PODS pods: the initial list until `/readyz` answers 200, and
//!    that server's peak memory (VmHWM).
//!
//! The most `freshness.behind` seen while polling says whether the backlog was shown. Wall-clock
//! figures for docs/benchmarks.md (with the machine's load), not assertions.

#[path = "../tests/common/fake_api.rs"]
mod fake_api;

use fake_api::{FakeApi, node};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `GET path` on `addr` (HTTP/1.1, one connection per request): status and body.
fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    // The server answers small JSON with Content-Length; a chunked body is decoded crudely.
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body.split("\r\n")
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, c)| c)
            .collect()
    } else {
        body.to_string()
    };
    Some((status, body))
}

/// The server's summary: (pods, nodes, behind).
fn summary(addr: &str) -> Option<(u64, u64, u64)> {
    let (status, body) = get(addr, "/api/summary")?;
    if status != 200 {
        return None;
    }
    let v: Value = serde_json::from_str(&body).ok()?;
    Some((
        v["summary"]["pods"].as_u64()?,
        v["summary"]["nodes"].as_u64()?,
        v["meta"]["freshness"]["behind"].as_u64().unwrap_or(0),
    ))
}

/// A condition on the summary's (pods, nodes), named.
type Mark<'a> = (&'a str, &'a dyn Fn(u64, u64) -> bool);

/// Polls until `done(summary)`; returns the time since `start` of each condition in `marks` (the first
/// time it held) and the most `behind` seen.
fn wait_for(addr: &str, start: Instant, marks: &[Mark<'_>]) -> (Vec<(String, Duration)>, u64) {
    let mut seen: Vec<Option<Duration>> = vec![None; marks.len()];
    let mut most_behind = 0;
    let deadline = start + Duration::from_secs(600);
    while seen.iter().any(Option::is_none) && Instant::now() < deadline {
        if let Some((pods, nodes, behind)) = summary(addr) {
            most_behind = most_behind.max(behind);
            for (i, (_, done)) in marks.iter().enumerate() {
                if seen[i].is_none() && done(pods, nodes) {
                    seen[i] = Some(start.elapsed());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = marks
        .iter()
        .zip(seen)
        .map(|((name, _), at)| (name.to_string(), at.unwrap_or(Duration::MAX)))
        .collect();
    (out, most_behind)
}

fn peak_mib(child: &Child) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

/// Starts `winplace serve` on the fake; returns it and its address once it listens.
fn serve(bin: &str, kubeconfig: &std::path::Path) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(bin)
        .args(["serve", "--kubeconfig"])
        .arg(kubeconfig)
        .args(["--listen", &addr])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {bin}: {e}"));
    (child, addr)
}

fn ready(addr: &str) -> bool {
    get(addr, "/readyz").is_some_and(|(status, _)| status == 200)
}

fn main() {
    let pods: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20_000);
    let bin = std::env::var("WINPLACE_BIN")
        .unwrap_or_else(|_| format!("{}/../target/release/winplace", env!("CARGO_MANIFEST_DIR")));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let api = FakeApi::default();
    api.lock().version = true;
    // 20 nodes as demo-snapshot makes them, and the misplaced pods bound to its Linux nodes.
    let (nodes, _, _) = winplace_synthetic::synthetic_cluster(20, 0, 1);
    for n in &nodes {
        api.apply("Node", serde_json::to_value(n).expect("node"));
    }
    let objects: Vec<Value> = winplace_synthetic::misplaced_unowned_pods(&nodes, pods, 1)
        .iter()
        .map(|p| serde_json::to_value(p).expect("pod"))
        .collect();
    let keys: Vec<String> = objects
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap_or(""),
                p["metadata"]["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    let url = runtime.block_on(api.serve());
    let dir = tempfile::tempdir().expect("temp dir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user: {{}}\n"
        ),
    )
    .expect("kubeconfig");
    println!(
        "flood: {pods} misplaced unowned Windows pods, {} nodes; load average {}",
        nodes.len(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    // 1. ADDs, then a node behind them.
    let (mut first, addr) = serve(&bin, &kubeconfig);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !ready(&addr) {
        assert!(Instant::now() < deadline, "the server did not get ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let node_count = nodes.len() as u64;
    let total = pods as u64;
    let start = Instant::now();
    api.apply_all("Pod", objects.iter().cloned());
    api.apply("Node", node("flood-node-1", "linux"));
    let sent = start.elapsed();
    let (marks, behind) = wait_for(
        &addr,
        start,
        &[
            ("the node added behind them", &|_, n| n == node_count + 1),
            ("every pod", &|p, _| p == total),
        ],
    );
    println!(
        "{pods} ADDs then a node (sent in {:.2} s):",
        sent.as_secs_f64()
    );
    for (name, at) in marks {
        println!("  {name}: {:.2} s", at.as_secs_f64());
    }
    println!("  most events behind seen: {behind}");

    // 2. DELETEs, then a node deleted behind them.
    let start = Instant::now();
    for key in &keys {
        api.delete("Pod", key);
    }
    api.delete("Node", "flood-node-1");
    let sent = start.elapsed();
    let (marks, behind) = wait_for(
        &addr,
        start,
        &[
            ("the node deleted behind them", &|_, n| n == node_count),
            ("no pod", &|p, _| p == 0),
        ],
    );
    println!(
        "{pods} DELETEs then a node (sent in {:.2} s):",
        sent.as_secs_f64()
    );
    for (name, at) in marks {
        println!("  {name}: {:.2} s", at.as_secs_f64());
    }
    println!("  most events behind seen: {behind}");
    println!("  server peak memory: {} MiB", peak_mib(&first));
    let _ = first.kill();
    let _ = first.wait();

    // 3. The initial list of the same pods, by a new server.
    api.apply_all("Pod", objects);
    let start = Instant::now();
    let (mut second, addr) = serve(&bin, &kubeconfig);
    let deadline = start + Duration::from_secs(600);
    while !ready(&addr) {
        assert!(Instant::now() < deadline, "the server did not get ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let listed = start.elapsed();
    // Ask the heavy answer once, as a dashboard would, before reading the peak.
    let _ = get(&addr, "/api/workloads");
    println!(
        "initial list of {pods} pods: /readyz 200 after {:.2} s; server peak memory {} MiB",
        listed.as_secs_f64(),
        peak_mib(&second)
    );
    let _ = second.kill();
    let _ = second.wait();
}
