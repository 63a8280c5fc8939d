//! The guest's memory on the 5,000-node context-aware review: how large policy.wasm's linear memory
//! grows (its high-water mark, [`GuestMemory`]) while it reviews a Deployment with a cluster at the
//! Kubernetes envelope granted (the synthetic cluster of `winplace demo-snapshot`, 5,000 nodes; and 5,000
//! of which 500 run Windows), each case on a fresh instance (as policy-server rehydrates one per
//! request) and then over repeated calls on a warm one. Kubewarden 1.38's policy-server refuses to let a
//! policy allocate more than 256 MiB per evaluation (docs/reference/kubewarden-hosting.md §6): the
//! example fails when a peak reaches a quarter of that.
//!
//! ```text
//! cargo xtask build
//! cargo run --release -p winplace-policy-host --example guest_memory
//! ```

use serde_json::{Value, json};
use winplace_policy_host::{GuestMemory, PolicyHost, built_policy, capability, test_data};
use winplace_policy_wasm::host_answers::HostAnswers;

/// Kubewarden 1.38's default cap on what one evaluation may allocate.
const KUBEWARDEN_CAP: usize = 256 << 20;

/// Far under the cap: a quarter of it.
const BUDGET: usize = KUBEWARDEN_CAP / 4;

/// Calls on the warm instance after the first.
const WARM_CALLS: usize = 20;

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// The synthetic cluster at 5,000 nodes (all of `synthetic_cluster`'s pools, or 500 Windows among them)
/// with its RuntimeClasses, as host answers.
fn cluster(few_windows: bool) -> HostAnswers {
    let (nodes, _, runtime_classes) = winplace_synthetic::synthetic_cluster(5_000, 0, 1);
    let nodes = if few_windows {
        winplace_synthetic::mixed_nodes(5_000, 500, 1)
    } else {
        nodes
    };
    let runtime_classes: Vec<_> = runtime_classes.into_iter().map(|rc| rc.object).collect();
    let mut answers = HostAnswers::default();
    answers.insert_list(
        "v1",
        "Node",
        json!({"apiVersion": "v1", "kind": "NodeList", "items": nodes}),
    );
    answers.insert_list(
        "node.k8s.io/v1",
        "RuntimeClass",
        json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClassList", "items": runtime_classes}),
    );
    answers
}

fn request(file: &str) -> Value {
    test_data(file).unwrap_or_else(|e| panic!("{e}"))["request"].clone()
}

fn main() {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    let settings = json!({"contextAware": true});
    let cases = [
        (
            "unpinned Deployment, 5,000 nodes",
            "deployment-windows-unpinned.json",
            false,
        ),
        (
            "pinned Deployment, 5,000 nodes / 500 Windows",
            "deployment-windows-pinned.json",
            true,
        ),
        (
            "unpinned Deployment, 5,000 nodes / 500 Windows",
            "deployment-windows-unpinned.json",
            true,
        ),
    ];
    println!(
        "| case | memory at start | peak, one review (fresh instance) | peak after {} more reviews (warm) |",
        WARM_CALLS
    );
    println!("|---|---|---|---|");
    let mut worst = 0;
    for (name, file, few_windows) in cases {
        let answers = cluster(few_windows);
        let (host, meter): (PolicyHost, GuestMemory) =
            PolicyHost::new_metered(&module, Some(capability(answers)))
                .unwrap_or_else(|e| panic!("{e}"));
        let start = meter.peak_bytes();
        let req = request(file);
        let answer = host
            .validate(&req, &settings)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            answer.get("accepted").is_some(),
            "{name}: no answer: {answer}"
        );
        let calls = host.host_calls();
        assert!(
            calls.iter().any(|c| c.ends_with("list_resources_all")),
            "{name}: the policy did not read the cluster: {calls:?}"
        );
        let one = meter.peak_bytes();
        for _ in 0..WARM_CALLS {
            host.validate(&req, &settings)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let warm = meter.peak_bytes();
        println!("| {name} | {} | {} | {} |", mib(start), mib(one), mib(warm));
        worst = worst.max(warm);
    }
    println!(
        "\nworst peak {} = {:.1} % of Kubewarden's {} cap (budget: {})",
        mib(worst),
        worst as f64 * 100.0 / KUBEWARDEN_CAP as f64,
        mib(KUBEWARDEN_CAP),
        mib(BUDGET)
    );
    if worst >= BUDGET {
        eprintln!("the guest's peak memory is not far under Kubewarden's cap");
        std::process::exit(1);
    }
}
