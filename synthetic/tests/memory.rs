//! The memory guard of the audit (docs/limits.md, "Memory"): the bytes it holds for fixed synthetic clusters,
//! counted by the allocator (a count, not a time: the machine's load does not change it), against a
//! stated budget. When a change makes the audit hold more, this fails and says by how much; raise a
//! budget only with the reason, and the envelope's figures in docs/benchmarks.md re-measured.
//!
//! The clusters are small so that the test runs in seconds in a debug build; what the audit holds is
//! per pod, per template and per node, so the envelope (5,000 nodes / 150,000 pods) scales from them:
//! `cargo run --release -p winplace-synthetic --example audit_memory` measures it there.

use winplace_rules::Settings;
use winplace_rules::audit::Audit;
use winplace_synthetic::counting::{self, Counting, Measured};
use winplace_synthetic::{misplaced_unowned_pods, synthetic_cluster};

#[global_allocator]
static COUNTING: Counting = Counting;

/// The demo's shape (mostly replicas of workloads): bytes held per pod, nodes and templates included.
/// Measured 1,329 B; the budgets leave 10 % for growth that is meant.
const HELD_PER_POD: isize = 1_460;
/// The most held at once while the reset ran, per pod (the transients of the catalogue's runs):
/// measured 1,338 B.
const PEAK_PER_POD: isize = 1_480;
/// A misplaced, unowned Windows pod (its own workload, template, six findings and an incident), the
/// audit's worst case per pod: bytes held beyond the demo's. Measured 15,126 B (the registry memory cuts took it from
/// 49 KB).
const HELD_PER_MISPLACED_POD: isize = 16_600;

/// The audit of `nodes` nodes, `pods` demo pods and `misplaced` bare Windows pods on Linux nodes, fed as
/// one reset, measured; the inputs are made before and not counted.
fn audit_of(nodes: usize, pods: usize, misplaced: usize) -> (Audit, Measured) {
    let (node_list, mut pod_list, rcs) = synthetic_cluster(nodes, pods, 1);
    pod_list.extend(misplaced_unowned_pods(&node_list, misplaced, 1));
    counting::measure(|| {
        let mut audit = Audit::new(Settings::default());
        audit.reset(&node_list, &pod_list, &rcs);
        audit
    })
}

fn per(bytes: isize, count: usize) -> isize {
    bytes / count as isize
}

#[test]
fn the_audit_holds_its_budget_per_pod() {
    let pods = 6_000;
    let (audit, m) = audit_of(200, pods, 0);
    assert_eq!(audit.summary().pods, pods, "every pod audited");
    assert!(m.held > 0, "the counting allocator is installed");
    let (held, peak) = (per(m.held, pods), per(m.peak, pods));
    eprintln!(
        "demo shape, 200 nodes / {pods} pods / {} templates: {held} B held per pod, {peak} B at the peak",
        audit.template_count()
    );
    assert!(
        held <= HELD_PER_POD,
        "the audit holds {held} B per pod, over its budget of {HELD_PER_POD} B: what grew? \
         (cargo run --release -p winplace-synthetic --example audit_memory)"
    );
    assert!(
        peak <= PEAK_PER_POD,
        "the audit peaked at {peak} B per pod while it ran, over its budget of {PEAK_PER_POD} B"
    );
}

#[test]
fn a_misplaced_bare_pod_costs_at_most_its_budget() {
    let misplaced = 1_000;
    let (base, without) = audit_of(100, 3_000, 0);
    drop(base);
    let (audit, with) = audit_of(100, 3_000, misplaced);
    assert_eq!(audit.summary().pods, 3_000 + misplaced);
    let each = per(with.held - without.held, misplaced);
    eprintln!("a misplaced bare Windows pod: {each} B held");
    assert!(
        each > 1_000,
        "a misplaced pod holds its findings: {each} B is not a count"
    );
    assert!(
        each <= HELD_PER_MISPLACED_POD,
        "a misplaced bare pod costs {each} B held, over its budget of {HELD_PER_MISPLACED_POD} B \
         (cargo run --release -p winplace-synthetic --example audit_memory -- 20000 says where)"
    );
}

/// A pod read narrowly from a list (`ListedPod`: the pod with only what every pod's rules read, and its
/// spec as text) as the reader hands it to the audit, per demo pod, its spec not decoded whole (what all
/// but the first pod of each template are). Measured 11,344 B (a pod decoded whole: 16,973 B); most of it
/// is k8s-openapi's inline structs (a `Pod` is 2.5 KB and each `Container` 2.3 KB however little they
/// hold). Held only in flight: the reader hands pods on in chunks of 512.
const LISTED_POD: isize = 12_500;

#[test]
fn a_pod_read_narrowly_holds_its_budget() {
    use winplace_rules::model::cluster_objects::{ClusterObject, decode_json, decode_json_listed};
    let (_, pods, _) = synthetic_cluster(50, 2_000, 1);
    let texts: Vec<String> = pods
        .iter()
        .map(|p| {
            let body = serde_json::to_string(p).expect("pod");
            // kubectl writes `apiVersion` and `kind` first.
            format!(r#"{{"apiVersion":"v1","kind":"Pod",{}"#, &body[1..])
        })
        .collect();
    let (listed, narrow) = counting::measure(|| {
        texts
            .iter()
            .map(|t| decode_json_listed(t, &mut |_| false).expect("decodes"))
            .collect::<Vec<_>>()
    });
    assert!(
        listed
            .iter()
            .all(|o| matches!(o, Some(ClusterObject::ListedPod(p)) if p.whole_spec.is_none())),
        "every pod read narrowly"
    );
    let (whole, full) = counting::measure(|| {
        texts
            .iter()
            .map(|t| decode_json(t).expect("decodes"))
            .collect::<Vec<_>>()
    });
    assert_eq!(whole.len(), listed.len());
    let (each, whole_each) = (per(narrow.held, texts.len()), per(full.held, texts.len()));
    eprintln!("a listed pod holds {each} B; decoded whole, {whole_each} B");
    assert!(each > 200, "{each} B is not a count");
    assert!(
        each <= LISTED_POD,
        "a pod read narrowly holds {each} B, over its budget of {LISTED_POD} B: what does it keep \
         that the audit does not read of every pod? (rules/src/model/listed_pod.rs)"
    );
}
