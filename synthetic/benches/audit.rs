//! The audit at the Kubernetes scale envelope: 5,000 nodes and 150,000 pods (the synthetic mixed cluster of
//! `winplace-synthetic`), next to the time it takes merely to parse the same cluster from `kubectl get -o json`
//! text.
//!
//! * `audit/full`: `Audit::reset` over every node, pod and RuntimeClass, then `summary()`;
//! * `audit/pod-update`: one pod's status changes (`Change::Pod`), the common event;
//! * `audit/node-label`: a label no pod selects on changes on a node (`Change::Node`): a local change, the
//!   index is updated in place and no template is reached;
//! * `audit/node-windows-taint`: a Windows node's taint comes and goes: every template is re-run;
//! * `parse/kubectl-json`: `serde_json::from_str` of the nodes and pods as `NodeList` and `PodList` JSON
//!   into k8s-openapi types.
//!
//! Run: `cargo bench -p winplace-synthetic --bench audit` (add `-- --quick` for a short run). Peak memory:
//! `/usr/bin/time -v cargo run --release -p winplace-synthetic --example audit_scale`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Node, Pod};
use std::hint::black_box;
use winplace_rules::Settings;
use winplace_rules::audit::{Audit, Change};
use winplace_synthetic::{first_tainted_windows_node, synthetic_cluster};

const NODES: usize = 5_000;
const PODS: usize = 150_000;

fn audit(c: &mut Criterion) {
    let (nodes, pods, runtime_classes) = synthetic_cluster(NODES, PODS, 1);
    let mut group = c.benchmark_group("audit");
    group.sample_size(10);
    group.bench_function("full", |b| {
        b.iter_with_large_drop(|| {
            let mut audit = Audit::new(Settings::default());
            audit.reset(&nodes, &pods, &runtime_classes);
            black_box(audit.summary());
            audit
        })
    });

    let mut audit = Audit::new(Settings::default());
    audit.reset(&nodes, &pods, &runtime_classes);
    // A running pod of a Windows Deployment flips between Running and Pending.
    let pod = pods
        .iter()
        .rev()
        .find(|p| {
            p.spec
                .as_ref()
                .and_then(|s| s.node_name.as_deref())
                .is_some()
        })
        .cloned()
        .unwrap_or_default();
    let mut flip = false;
    group.bench_function("pod-update", |b| {
        b.iter_batched(
            || {
                flip = !flip;
                let mut p = pod.clone();
                if let Some(status) = p.status.as_mut() {
                    status.phase = Some(if flip { "Pending" } else { "Running" }.to_string());
                }
                Box::new(p)
            },
            |p| black_box(audit.apply(Change::Pod(p))),
            BatchSize::SmallInput,
        )
    });
    let node = nodes.first().cloned().unwrap_or_default();
    let mut generation = 0u32;
    group.bench_function("node-label", |b| {
        b.iter_batched(
            || {
                generation += 1;
                let mut n = node.clone();
                if let Some(labels) = n.metadata.labels.as_mut() {
                    labels.insert(
                        "example.com/pool-generation".to_string(),
                        generation.to_string(),
                    );
                }
                Box::new(n)
            },
            |n| black_box(audit.apply(Change::Node(n))),
            BatchSize::SmallInput,
        )
    });
    // A Windows node loses its taint and gets it back: every template re-runs.
    let windows = first_tainted_windows_node(&nodes)
        .cloned()
        .unwrap_or_default();
    let mut untainted = false;
    group.bench_function("node-windows-taint", |b| {
        b.iter_batched(
            || {
                untainted = !untainted;
                let mut n = windows.clone();
                if untainted && let Some(spec) = n.spec.as_mut() {
                    spec.taints = None;
                }
                Box::new(n)
            },
            |n| black_box(audit.apply(Change::Node(n))),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn parse(c: &mut Criterion) {
    let (nodes, pods, _) = synthetic_cluster(NODES, PODS, 1);
    let node_text = serde_json::to_string(&k8s_openapi::List::<Node> {
        items: nodes,
        metadata: Default::default(),
    })
    .unwrap_or_default();
    let pod_text = serde_json::to_string(&k8s_openapi::List::<Pod> {
        items: pods,
        metadata: Default::default(),
    })
    .unwrap_or_default();
    let mut group = c.benchmark_group("parse");
    group.sample_size(10);
    group.bench_function("kubectl-json", |b| {
        b.iter_with_large_drop(|| {
            let n: Result<k8s_openapi::List<Node>, _> = serde_json::from_str(&node_text);
            let p: Result<k8s_openapi::List<Pod>, _> = serde_json::from_str(&pod_text);
            (n.map(|l| l.items.len()).ok(), p.ok())
        })
    });
    group.finish();
}

criterion_group!(benches, audit, parse);
criterion_main!(benches);
