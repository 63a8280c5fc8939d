//! Time per admission request: policy.wasm and Kubewarden's Rust policy template (the fixture
//! `policy-host/template-policy`) in the same wasmtime waPC host, each on a warm instance (as
//! policy-server runs them), with the same AdmissionRequests; and the same evaluation natively.
//!
//! Three cases are at the Kubernetes envelope: a context-aware review with the 5,000 nodes of the
//! synthetic cluster granted (the host selects by label the nodes the policy asks for and prunes them to
//! the fields it asks for once per request id, as policy-server's reflectors do, then serializes them per
//! call), and the same with 5,000 nodes of which 500 run Windows, for a pinned Deployment (the policy
//! asks only for the nodes not labelled Linux) and an unpinned one (it asks for them all, at once);
//! timed over fewer calls, with the guest's decoding of the host's answers measured natively beside them.
//!
//! Before the criterion groups, prints min/p50/p99 over `WINPLACE_BENCH_N` (default 2,000) timed
//! `validate` calls per case and module (the two modules' calls alternate, so both meet the same
//! machine), the ratio of policy.wasm's p50 to the template's, and native requests/s of `check_value`
//! and `admission::review`.
//!
//! Run (after `cargo xtask build`): `cargo bench -p winplace-policy-host --bench admission`
//! (`-- --warm-up-time 1 --measurement-time 3` for a quicker run). `cargo bench` is the release
//! profile: this is the release host the envelope figures are measured on. The first run also compiles the template fixture.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion};
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use winplace_policy_host::{
    PolicyHost, built_policy, capability, template_policy, test_cluster, test_data,
};
use winplace_policy_wasm::admission::{self, AdmissionRequest};
use winplace_policy_wasm::host_answers::{HostAnswers, list_key, prune_items};
use winplace_rules::model::cluster_objects::CONTEXT_NODE_FIELDS;
use winplace_rules::{Checker, Settings};

fn fixture(name: &str) -> Value {
    test_data(name).unwrap_or_else(|e| panic!("{e}"))
}

/// The cluster a context-aware case is granted: none, the test fixture's few nodes, or a synthetic
/// cluster at the Kubernetes envelope (5,000 nodes; 28 % of them Windows as in `demo-snapshot`, or 500).
#[derive(Clone, Copy, PartialEq)]
enum Context {
    None,
    Fixture,
    Envelope,
    Envelope500Windows,
}

/// Windows nodes of [`Context::Envelope500Windows`].
const ENVELOPE_WINDOWS: usize = 500;

/// Nodes in the envelope cluster: Kubernetes' tested maximum.
const ENVELOPE_NODES: usize = 5_000;

impl Context {
    fn capabilities(self) -> Option<HostAnswers> {
        match self {
            Context::None => None,
            Context::Fixture => Some(test_cluster().unwrap_or_else(|e| panic!("{e}"))),
            Context::Envelope => Some(envelope_cluster(false).clone()),
            Context::Envelope500Windows => Some(envelope_cluster(true).clone()),
        }
    }

    fn is_envelope(self) -> bool {
        matches!(self, Context::Envelope | Context::Envelope500Windows)
    }

    /// The lists the host answers, for the native evaluation.
    fn lists(self) -> Option<(Value, Value)> {
        let caps = self.capabilities()?;
        let list = |api: &str, kind: &str| caps.lists[&list_key(api, kind)].clone();
        Some((list("v1", "Node"), list("node.k8s.io/v1", "RuntimeClass")))
    }
}

/// The synthetic cluster of `winplace demo-snapshot` at [`ENVELOPE_NODES`] nodes, as host answers; with
/// `few_windows`, [`ENVELOPE_WINDOWS`] of them Windows nodes (`winplace_synthetic::mixed_nodes`).
fn envelope_cluster(few_windows: bool) -> &'static HostAnswers {
    static CLUSTERS: [OnceLock<HostAnswers>; 2] = [OnceLock::new(), OnceLock::new()];
    CLUSTERS[usize::from(few_windows)].get_or_init(|| {
        let (nodes, _, runtime_classes) = winplace_synthetic::synthetic_cluster(ENVELOPE_NODES, 0, 1);
        let nodes = if few_windows {
            winplace_synthetic::mixed_nodes(ENVELOPE_NODES, ENVELOPE_WINDOWS, 1)
        } else {
            nodes
        };
        let runtime_classes: Vec<_> = runtime_classes.into_iter().map(|rc| rc.object).collect();
        let mut caps = HostAnswers::default();
        caps.insert_list(
            "v1",
            "Node",
            json!({"apiVersion": "v1", "kind": "NodeList", "items": nodes}),
        );
        caps.insert_list(
            "node.k8s.io/v1",
            "RuntimeClass",
            json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClassList", "items": runtime_classes}),
        );
        caps
    })
}

/// One timed request: a name, the fixture, and the cluster the policy is granted (with one, settings
/// say `contextAware: true`).
struct Case {
    name: &'static str,
    file: &'static str,
    context: Context,
}

const CASES: &[Case] = &[
    Case {
        name: "pod (accept)",
        file: "pod-windows-pinned.json",
        context: Context::None,
    },
    Case {
        name: "deployment (accept)",
        file: "deployment-windows-pinned.json",
        context: Context::None,
    },
    Case {
        name: "deployment (reject)",
        file: "deployment-windows-unpinned.json",
        context: Context::None,
    },
    Case {
        name: "deployment (reject, cluster context)",
        file: "deployment-windows-unpinned.json",
        context: Context::Fixture,
    },
    Case {
        name: "deployment (reject, 5,000 nodes)",
        file: "deployment-windows-unpinned.json",
        context: Context::Envelope,
    },
    Case {
        name: "pinned deployment, 5,000 nodes / 500 Windows",
        file: "deployment-windows-pinned.json",
        context: Context::Envelope500Windows,
    },
    Case {
        name: "unpinned deployment, 5,000 / 500 Windows",
        file: "deployment-windows-unpinned.json",
        context: Context::Envelope500Windows,
    },
];

impl Case {
    fn request(&self) -> Value {
        fixture(self.file)["request"].clone()
    }

    fn settings(&self) -> Value {
        if self.context == Context::None {
            json!({})
        } else {
            json!({"contextAware": true})
        }
    }

    /// Calls to time: every host answer at the envelope is megabytes, so fewer of them.
    fn calls(&self, n: usize) -> usize {
        if self.context.is_envelope() {
            (n / 40).max(20)
        } else {
            n
        }
    }
}

fn host(module: &[u8], context: Context) -> PolicyHost {
    PolicyHost::new(module, context.capabilities().map(capability))
        .unwrap_or_else(|e| panic!("{e}"))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// One timed `validate` call.
fn timed(h: &PolicyHost, request: &Value, settings: &Value) -> Duration {
    h.clear_host_calls();
    let start = Instant::now();
    black_box(h.validate(request, settings).unwrap());
    start.elapsed()
}

/// `n` timed `validate` calls of each module after a warm-up, alternating between them so that both
/// meet the same machine (a slow phase of a shared machine lands on both, not on one), each sorted.
fn paired_timings(
    ours: (&PolicyHost, &Value),
    theirs: &PolicyHost,
    request: &Value,
    n: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (h, settings) = ours;
    let none = json!({});
    for _ in 0..50 {
        timed(h, request, settings);
        timed(theirs, request, &none);
    }
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        a.push(timed(h, request, settings));
        b.push(timed(theirs, request, &none));
    }
    a.sort();
    b.sort();
    (a, b)
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// The template fixture does what the template does: rejects `invalid-pod-name`, accepts the rest.
fn check_template(template: &PolicyHost) {
    let mut request = fixture("pod-windows-pinned.json")["request"].clone();
    let answer = template.validate(&request, &json!({})).unwrap();
    assert_eq!(answer["accepted"], true, "{answer}");
    request["object"]["metadata"]["name"] = json!("invalid-pod-name");
    let answer = template.validate(&request, &json!({})).unwrap();
    assert_eq!(answer["accepted"], false, "{answer}");
}

fn report(policy: &[u8], template: &[u8]) {
    let n: usize = std::env::var("WINPLACE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    check_template(&host(template, Context::None));
    println!("validate on a warm instance, {n} calls each (µs):");
    println!(
        "  {:40} {:>8} {:>8} {:>8}   {:>8} {:>8} {:>8}   {:>6}",
        "", "min", "p50", "p99", "tpl min", "tpl p50", "tpl p99", "× p50"
    );
    let tpl = host(template, Context::None);
    for case in CASES {
        let request = case.request();
        let (ours, theirs) = paired_timings(
            (&host(policy, case.context), &case.settings()),
            &tpl,
            &request,
            case.calls(n),
        );
        let (p50, tpl_p50) = (percentile(&ours, 0.50), percentile(&theirs, 0.50));
        println!(
            "  {:40} {:>8.1} {:>8.1} {:>8.1}   {:>8.1} {:>8.1} {:>8.1}   {:>6.2}",
            case.name,
            micros(ours[0]),
            micros(p50),
            micros(percentile(&ours, 0.99)),
            micros(theirs[0]),
            micros(tpl_p50),
            micros(percentile(&theirs, 0.99)),
            p50.as_secs_f64() / tpl_p50.as_secs_f64()
        );
    }
    println!("native, same objects:");
    let settings = Settings::default();
    for case in CASES {
        let request: AdmissionRequest = serde_json::from_value(case.request()).unwrap();
        let lists = case.context.lists();
        let ctx = lists
            .as_ref()
            .map(|(nodes, rcs)| admission::context_from_lists(nodes, rcs).unwrap());
        let n = case.calls(n);
        let rate = |f: &dyn Fn()| {
            let start = Instant::now();
            for _ in 0..n {
                f();
            }
            n as f64 / start.elapsed().as_secs_f64()
        };
        let check = rate(&|| {
            // Built per call, as the policy builds it per request (the nodes indexed each time).
            let checker = Checker::builder()
                .settings(&settings)
                .cluster(ctx.as_ref())
                .build();
            black_box(checker.check_value(request.object.clone()));
        });
        // As the policy reviews: asking the host (here natively, with its pruning and selecting).
        let asking = Settings {
            context_aware: case.context != Context::None,
            ..Settings::default()
        };
        let host = case.context.capabilities().unwrap_or_default();
        let review = rate(&|| {
            black_box(admission::review_with_host(
                request.clone(),
                &asking,
                &mut &host,
            ));
        });
        println!(
            "  {:40} check_value {check:>9.0} req/s   admission::review_with_host {review:>9.0} req/s",
            case.name
        );
    }
}

/// policy.wasm's `validate` of `case` on a warm instance, as one benchmark of `group`.
fn bench_validate(group: &mut BenchmarkGroup<'_, WallTime>, policy: &[u8], case: &Case) {
    let h = host(policy, case.context);
    let (request, settings) = (case.request(), case.settings());
    group.bench_function(case.name, |b| {
        b.iter(|| {
            h.clear_host_calls();
            black_box(h.validate(&request, &settings).unwrap())
        })
    });
}

fn benches(c: &mut Criterion, policy: &[u8], template: &[u8]) {
    let mut group = c.benchmark_group("policy.wasm validate");
    for case in CASES.iter().filter(|c| !c.context.is_envelope()) {
        bench_validate(&mut group, policy, case);
    }
    group.finish();
    // Tens of milliseconds a call: ten samples are enough.
    let mut group = c.benchmark_group("policy.wasm validate at the envelope");
    group.sample_size(10);
    for case in CASES.iter().filter(|c| c.context.is_envelope()) {
        bench_validate(&mut group, policy, case);
    }
    // The guest's decoding of the host's answers natively: as it was (the whole list through a JSON tree)
    // and as it is (the list pruned to CONTEXT_NODE_FIELDS, decoded straight into typed nodes).
    let (nodes, rcs) = Context::Envelope.lists().unwrap();
    let whole = serde_json::to_vec(&nodes).unwrap();
    let pruned = serde_json::to_vec(&prune_items(&nodes, CONTEXT_NODE_FIELDS)).unwrap();
    let rcs = serde_json::to_vec(&rcs).unwrap();
    group.bench_function("native: whole answer through a JSON tree", |b| {
        b.iter(|| {
            let tree = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).unwrap();
            black_box(admission::context_from_lists(&tree(&whole), &tree(&rcs)).unwrap())
        })
    });
    group.bench_function("native: pruned answer decoded directly", |b| {
        b.iter(|| black_box(admission::context_from_answers(&pruned, &rcs).unwrap()))
    });
    group.finish();
    let mut group = c.benchmark_group("template policy validate");
    let h = host(template, Context::None);
    for case in CASES.iter().filter(|c| c.context == Context::None) {
        let request = case.request();
        group.bench_function(case.name, |b| {
            b.iter(|| {
                h.clear_host_calls();
                black_box(h.validate(&request, &json!({})).unwrap())
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("native check_value");
    let settings = Settings::default();
    for case in CASES.iter().filter(|c| c.context == Context::None) {
        let object = case.request()["object"].clone();
        group.bench_function(case.name, |b| {
            b.iter(|| {
                let checker = Checker::builder().settings(&settings).build();
                black_box(checker.check_value(object.clone()))
            })
        });
    }
    group.finish();
}

fn main() {
    let policy = built_policy().unwrap_or_else(|e| panic!("{e}"));
    let template = template_policy().unwrap_or_else(|e| panic!("{e}"));
    report(&policy, &template);
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c, &policy, &template);
    c.final_summary();
}
