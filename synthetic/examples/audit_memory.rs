//! Where the audit's bytes go with misplaced, unowned Windows pods (docs/limits.md): a counting global
//! allocator, the demo's cluster plus N bare Windows pods bound to Linux nodes (what
//! `winplace demo-snapshot --misplaced-pods N` writes), fed to an [`Audit`] as one reset.
//!
//! `cargo run --release -p winplace-synthetic --example audit_memory -- [MISPLACED] [PODS] [NODES]`
//! (defaults 20,000, 3,000, 100: `demo-snapshot`'s). Prints the bytes the audit holds once the pods
//! are dropped, per misplaced pod, and what the findings and the readable rows cost of it (each measured
//! by cloning it: a clone allocates what the original holds; a row's findings are shared with the
//! engine's records, so they are counted once, apart). Bytes asked of the allocator, not pages: the process's
//! RSS is higher by the allocator's slack.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use winplace_rules::audit::{Audit, Change};

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The bytes `make` leaves allocated while its result lives.
fn cost<T>(make: impl FnOnce() -> T) -> isize {
    let before = live();
    let kept = make();
    let after = live();
    drop(kept);
    after - before
}

fn mib(bytes: isize) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(default)
    };
    let (misplaced, pods, nodes) = (arg(1, 20_000), arg(2, 3_000), arg(3, 100));
    let measure = |misplaced: usize| -> (isize, Audit) {
        let (node_list, mut pod_list, rcs) = winplace_synthetic::synthetic_cluster(nodes, pods, 1);
        pod_list.extend(winplace_synthetic::misplaced_unowned_pods(
            &node_list, misplaced, 1,
        ));
        let before = live();
        let mut audit = Audit::default();
        let pods_bytes = cost(|| pod_list.clone()) + cost(|| node_list.clone());
        audit.apply(Change::Reset {
            nodes: node_list,
            pods: pod_list,
            runtime_classes: rcs,
        });
        (live() - before + pods_bytes, audit)
    };
    let (base, base_audit) = measure(0);
    drop(base_audit);
    let (total, audit) = measure(misplaced);
    let per_pod = (total - base) / misplaced.max(1) as isize;
    println!(
        "audit of {nodes} nodes, {pods} demo pods + {misplaced} misplaced: {} held ({} without the misplaced pods), {per_pod} B per misplaced pod",
        mib(total),
        mib(base)
    );
    let workloads: Vec<_> = audit.workloads().collect();
    let node_rows: Vec<_> = audit.nodes().collect();
    // Every finding the audit holds, once: the rows share them (`Arc`) with the templates and the pods'
    // records, so a workload's row and a node's row point at the same live finding.
    let mut seen = std::collections::HashSet::new();
    let findings: Vec<&winplace_rules::Finding> = workloads
        .iter()
        .flat_map(|w| &w.findings)
        .chain(node_rows.iter().flat_map(|n| &n.findings))
        .filter(|f| seen.insert(std::sync::Arc::as_ptr(f)))
        .map(|f| &**f)
        .collect();
    let parts: [(&str, isize); 6] = [
        (
            "findings (each once)",
            cost(|| findings.iter().map(|f| (*f).clone()).collect::<Vec<_>>()),
        ),
        (
            "  of which fixes",
            cost(|| findings.iter().map(|f| f.fix.clone()).collect::<Vec<_>>()),
        ),
        (
            "  of which messages",
            cost(|| {
                findings
                    .iter()
                    .map(|f| f.message.clone())
                    .collect::<Vec<_>>()
            }),
        ),
        (
            "workload rows (but findings)",
            cost(|| workloads.iter().map(|w| (*w).clone()).collect::<Vec<_>>()),
        ),
        (
            "  of which incidents",
            cost(|| {
                workloads
                    .iter()
                    .map(|w| w.incidents.clone())
                    .collect::<Vec<_>>()
            }),
        ),
        (
            "node rows (but findings)",
            cost(|| node_rows.iter().map(|n| (*n).clone()).collect::<Vec<_>>()),
        ),
    ];
    for (name, bytes) in parts {
        println!(
            "  {name:<28} {:>10} ({} B per misplaced pod)",
            mib(bytes),
            bytes / misplaced.max(1) as isize
        );
    }
    let in_rows: usize = workloads.iter().map(|w| w.findings.len()).sum();
    println!(
        "  {} findings held, {} in workload rows ({:.1} per workload); a misplaced pod's workload row:",
        findings.len(),
        in_rows,
        in_rows as f64 / workloads.len().max(1) as f64
    );
    if let Some(w) = workloads
        .iter()
        .find(|w| w.owner.name.starts_with("stray-win"))
    {
        println!("{}", serde_json::to_string_pretty(w).unwrap_or_default());
    }
}
