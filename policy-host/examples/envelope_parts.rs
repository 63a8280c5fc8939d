//! Where a context-aware review of the unpinned Windows Deployment goes at the envelope (5,000 nodes of
//! which 500 run Windows), natively and part by part: the host's answers, decoding them, indexing the
//! nodes (the checker), and the review itself. The guest runs the same code in wasmtime, slower by a
//! factor; this tells which part to cut. Times are the median of `N` rounds (default 30).
//!
//! ```text
//! cargo run --release -p winplace-policy-host --example envelope_parts
//! ```

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use winplace_policy_host::test_data;
use winplace_policy_wasm::admission::{
    AdmissionRequest, add_nodes_from_answer, context_from_answers, review_checked, review_with_host,
};
use winplace_policy_wasm::host_answers::HostAnswers;
use winplace_rules::model::cluster_objects::{CONTEXT_NODE_FIELDS, LINUX_NODE_FIELDS};
use winplace_rules::{Checker, LINUX_NODES, NOT_LINUX_NODES, Settings};

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let rounds: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let nodes = winplace_synthetic::mixed_nodes(5_000, 500, 1);
    let (_, _, rcs) = winplace_synthetic::synthetic_cluster(5_000, 0, 1);
    let rcs: Vec<_> = rcs.into_iter().map(|rc| rc.object).collect();
    let mut host = HostAnswers::default();
    host.insert_list("v1", "Node", json!({"items": nodes}));
    host.insert_list("node.k8s.io/v1", "RuntimeClass", json!({"items": rcs}));
    let request: AdmissionRequest = serde_json::from_value(
        test_data("deployment-windows-unpinned.json").unwrap()["request"].clone(),
    )
    .unwrap();
    let settings = Settings {
        context_aware: true,
        ..Settings::default()
    };
    // The two Node lists the guest asks for an unpinned workload (policy-wasm/src/admission/host.rs).
    let ask = json!({"api_version": "v1", "kind": "Node", "label_selector": NOT_LINUX_NODES,
        "field_masks": CONTEXT_NODE_FIELDS});
    let linux_ask = json!({"api_version": "v1", "kind": "Node", "label_selector": LINUX_NODES,
        "field_masks": LINUX_NODE_FIELDS});
    let rc_ask = json!({"api_version": "node.k8s.io/v1", "kind": "RuntimeClass"});
    let stored = host.stored_list(&ask).unwrap();
    let linux_stored = host.stored_list(&linux_ask).unwrap();
    let rc_bytes = serde_json::to_vec(&host.stored_list(&rc_ask).unwrap()).unwrap();
    let mut parts: Vec<(&str, Vec<Duration>)> = vec![
        (
            "host: prune + select both lists (once per reflector upstream)",
            vec![],
        ),
        ("host: serialize both pruned lists (per request)", vec![]),
        ("guest: decode the 5,000 nodes", vec![]),
        ("guest: index them (Checker::build)", vec![]),
        ("guest: review against them", vec![]),
        (
            "all: review_with_host (both lists asked, as the guest does)",
            vec![],
        ),
    ];
    let mut bytes_len = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let s: (Value, Value) = (
            host.stored_list(&ask).unwrap(),
            host.stored_list(&linux_ask).unwrap(),
        );
        parts[0].1.push(t.elapsed());
        drop(s);
        let t = Instant::now();
        let bytes = serde_json::to_vec(&stored).unwrap();
        let linux_bytes = serde_json::to_vec(&linux_stored).unwrap();
        parts[1].1.push(t.elapsed());
        bytes_len = bytes.len() + linux_bytes.len();
        let t = Instant::now();
        let mut ctx = context_from_answers(&bytes, &rc_bytes).unwrap();
        add_nodes_from_answer(&mut ctx, &linux_bytes).unwrap();
        parts[2].1.push(t.elapsed());
        let t = Instant::now();
        let checker = Checker::builder().settings(&settings).cluster(&ctx).build();
        parts[3].1.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(review_checked(request.clone(), &checker));
        parts[4].1.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(review_with_host(request.clone(), &settings, &mut &host));
        parts[5].1.push(t.elapsed());
    }
    println!(
        "unpinned Windows Deployment, 5,000 nodes / 500 Windows, native, median of {rounds} (ms):"
    );
    println!("  the two pruned Node lists: {bytes_len} bytes");
    for (name, times) in parts {
        println!("  {:70} {:>8.2}", name, median(times));
    }
}
