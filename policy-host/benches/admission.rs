//! Time per admission request: policy.wasm in wasmtime through waPC on a warm instance (as policy-server
//! runs it), and the same evaluation natively.
//!
//! Before the criterion groups, prints p50/p99 over `WINPLACE_BENCH_N` (default 2,000) timed `validate`
//! calls per case, and native requests/s of `check_value` and `admission::review`.
//!
//! Run (after `cargo xtask build`): `cargo bench -p winplace-policy-host --bench admission`
//! (`-- --warm-up-time 1 --measurement-time 3` for a quicker run).

use criterion::{Criterion, black_box};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use winplace_kubewarden::admission::{self, AdmissionRequest};
use winplace_policy_host::{Capabilities, PolicyHost, built_policy, test_data};
use winplace_rules::Settings;

fn fixture(name: &str) -> Value {
    test_data(name).unwrap_or_else(|e| panic!("{e}"))
}

fn cluster() -> Capabilities {
    Capabilities::test_cluster().unwrap_or_else(|e| panic!("{e}"))
}

/// (name, fixture, with the cluster capability).
const CASES: &[(&str, &str, bool)] = &[
    ("pod (accept)", "pod-windows-pinned.json", false),
    (
        "deployment (reject)",
        "deployment-windows-unpinned.json",
        false,
    ),
    (
        "deployment (reject, cluster context)",
        "deployment-windows-unpinned.json",
        true,
    ),
];

fn host(with_cluster: bool) -> PolicyHost {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    PolicyHost::new(&module, with_cluster.then(|| cluster().into_capability()))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report() {
    let n: usize = std::env::var("WINPLACE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    println!("policy.wasm validate, warm instance, {n} calls each:");
    for (name, file, with_cluster) in CASES {
        let h = host(*with_cluster);
        let request = fixture(file)["request"].clone();
        for _ in 0..50 {
            h.validate(&request, &json!({})).unwrap();
        }
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            h.clear_host_calls();
            let start = Instant::now();
            black_box(h.validate(&request, &json!({})).unwrap());
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "  {name:40} p50 {:>8.1} µs   p99 {:>8.1} µs",
            percentile(&times, 0.50).as_secs_f64() * 1e6,
            percentile(&times, 0.99).as_secs_f64() * 1e6
        );
    }
    println!("native, same objects:");
    let settings = Settings::default();
    for (name, file, with_cluster) in CASES {
        let request: AdmissionRequest =
            serde_json::from_value(fixture(file)["request"].clone()).unwrap();
        let ctx = with_cluster.then(|| {
            admission::context_from_lists(
                &fixture("context/nodes.json"),
                &fixture("context/runtimeclasses.json"),
            )
            .unwrap()
        });
        let rate = |f: &dyn Fn()| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            n as f64 / start.elapsed().as_secs_f64()
        };
        let check = rate(&|| {
            black_box(winplace_rules::check_value(
                request.object.clone(),
                ctx.as_ref(),
                &settings,
            ));
        });
        let review = rate(&|| {
            black_box(admission::review(
                &request,
                &settings,
                ctx.as_ref(),
                &BTreeMap::new(),
            ));
        });
        println!(
            "  {name:40} check_value {check:>9.0} req/s   admission::review {review:>9.0} req/s"
        );
    }
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("policy.wasm validate");
    for (name, file, with_cluster) in CASES {
        let h = host(*with_cluster);
        let request = fixture(file)["request"].clone();
        group.bench_function(*name, |b| {
            b.iter(|| {
                h.clear_host_calls();
                black_box(h.validate(&request, &json!({})).unwrap())
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("native check_value");
    let settings = Settings::default();
    for (name, file, _) in CASES.iter().filter(|c| !c.2) {
        let object = fixture(file)["request"]["object"].clone();
        group.bench_function(*name, |b| {
            b.iter(|| black_box(winplace_rules::check_value(object.clone(), None, &settings)))
        });
    }
    group.finish();
}

fn main() {
    report();
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
}
