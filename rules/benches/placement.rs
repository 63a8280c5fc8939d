//! Placement at the Kubernetes scale envelope: 5,000 nodes (Windows pools on three builds, tainted; Linux
//! pools with zones, instance types and per-node hostnames; a few cordoned nodes) and 2,000 distinct pod
//! templates. Measures `Resolver::resolve` + `fit` for every template against a `NodeIndex` built once,
//! and, separately, building the index.
//!
//! Run: `cargo bench --bench placement -- --warm-up-time 1 --measurement-time 5`

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Node;
use serde_json::{Value, json};
use std::hint::black_box;
use winplace_rules::Settings;
use winplace_rules::input::LineMap;
use winplace_rules::model::{self, ClusterContext, Object};
use winplace_rules::placement::{NodeIndex, Resolver, fit};

const NODES: usize = 5_000;
const TEMPLATES: usize = 2_000;
const WINDOWS_BUILDS: [&str; 3] = ["10.0.17763", "10.0.20348", "10.0.26100"];
const WINDOWS_TAGS: [&str; 3] = ["ltsc2019", "ltsc2022", "ltsc2025"];

/// 1,500 Windows nodes (500 per build, two pools each, one with a GPU taint) and 3,500 Linux nodes in 20
/// pools over 3 zones and 4 instance types; every 97th node is cordoned.
fn cluster() -> ClusterContext {
    let mut nodes = Vec::with_capacity(NODES);
    for i in 0..NODES {
        let name = format!("node-{i:05}");
        let zone = format!("zone-{}", i % 3);
        let mut labels = json!({
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": zone,
            "node.kubernetes.io/instance-type": format!("m{}.xlarge", i % 4),
        });
        let mut taints = Vec::new();
        let (os, kernel) = if i < 1_500 {
            let b = i % 3;
            labels["node.kubernetes.io/windows-build"] = json!(WINDOWS_BUILDS[b]);
            labels["agentpool"] = json!(format!("win{}{}", b, i % 2));
            taints.push(json!({"key": "os", "value": "windows", "effect": "NoSchedule"}));
            if i % 2 == 1 {
                taints.push(json!({"key": "gpu", "value": "true", "effect": "NoSchedule"}));
            }
            ("windows", format!("{}.{}", WINDOWS_BUILDS[b], 1000 + i % 7))
        } else {
            labels["agentpool"] = json!(format!("linux{}", i % 20));
            if i % 20 == 0 {
                taints.push(json!({"key": "dedicated", "value": "infra", "effect": "NoExecute"}));
            }
            ("linux", "6.1.0-27-amd64".to_string())
        };
        labels["kubernetes.io/os"] = json!(os);
        labels["beta.kubernetes.io/os"] = json!(os);
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"taints": taints, "unschedulable": i % 97 == 0},
            "status": {"nodeInfo": {"operatingSystem": os, "kernelVersion": kernel}},
        }))
        .expect("node");
        nodes.push(node);
    }
    let runtime_classes: Vec<Value> = (0..3)
        .map(|b| {
            json!({
                "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": format!("windows-{b}")},
                "handler": "runhcs-wcow-process",
                "scheduling": {
                    "nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": WINDOWS_BUILDS[b]},
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                },
            })
        })
        .collect();
    let objects: Vec<Object> = runtime_classes
        .into_iter()
        .filter_map(|v| Object::from_value("rc", 0, v, LineMap::default()))
        .collect();
    let (mut ctx, _) = ClusterContext::from_objects(&objects);
    ctx.nodes = nodes;
    ctx
}

/// 2,000 distinct Deployments, five shapes: unpinned Linux apps, Linux apps pinned to a pool, Windows apps
/// pinned by selector, Windows apps pinned by a RuntimeClass, and tolerate-everything agents with affinity.
fn templates() -> Vec<Object> {
    (0..TEMPLATES)
        .filter_map(|i| {
            let b = i % 3;
            let spec = match i % 5 {
                0 => json!({"containers": [{"name": "app", "image": format!("registry.example.com/team{i}/app:1.{i}")}]}),
                1 => json!({
                    "nodeSelector": {"kubernetes.io/os": "linux", "agentpool": format!("linux{}", i % 20)},
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoExecute"}],
                    "containers": [{"name": "app", "image": format!("nginx:1.{i}")}, {"name": "sidecar", "image": "busybox:1.36"}],
                }),
                2 => json!({
                    "nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": WINDOWS_BUILDS[b]},
                    "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                    "containers": [{"name": "app", "image": format!("mcr.microsoft.com/windows/servercore:{}", WINDOWS_TAGS[b])}],
                }),
                3 => json!({
                    "runtimeClassName": format!("windows-{b}"),
                    "containers": [{"name": "app", "image": format!("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-{}", WINDOWS_TAGS[b].replace("ltsc2019", "1809"))}],
                }),
                _ => json!({
                    "tolerations": [{"operator": "Exists"}],
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "NotIn", "values": [format!("zone-{}", i % 3)]}]}
                    ]}}},
                    "containers": [{"name": "agent", "image": format!("cr.fluentbit.io/fluent/fluent-bit:3.{i}")}],
                }),
            };
            let value = json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": format!("app-{i}"), "namespace": "bench"},
                "spec": {"template": {"metadata": {"labels": {"app": format!("app-{i}")}}, "spec": spec}},
            });
            Object::from_value("bench", i, value, LineMap::default())
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let ctx = cluster();
    let settings = Settings::default();
    let objects = templates();
    let templates: Vec<_> = objects
        .iter()
        .filter_map(|o| model::pod_template(o).and_then(Result::ok))
        .collect();
    assert_eq!(templates.len(), TEMPLATES);
    let index = NodeIndex::from_context(&ctx);
    eprintln!(
        "{} nodes in {} classes; {} templates",
        index.len(),
        index.class_count(),
        templates.len()
    );
    c.bench_function("node_index_5000_nodes", |b| {
        b.iter(|| NodeIndex::from_context(black_box(&ctx)))
    });
    c.bench_function("resolve_and_fit_2000_templates_x_5000_nodes", |b| {
        b.iter(|| {
            let resolver = Resolver::new(Some(&ctx), &settings);
            let mut candidates = 0usize;
            for t in &templates {
                let placement = resolver.resolve(t);
                candidates += fit(&placement, &index).candidates.count();
            }
            black_box(candidates)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
