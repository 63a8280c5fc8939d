//! The memory guard of what the server publishes (docs/limits.md, "Memory"): the bytes a published state holds
//! beyond the audit's rows, per workload, and the bytes `audit --format …` holds while it writes the
//! report, counted by the allocator (`winplace_synthetic::counting`, installed for this binary in
//! `integration.rs`; per thread, so the other tests running beside these do not disturb the count). When a
//! change makes either grow past its budget, this fails and says by how much.

use winplace::commands::audit::{AuditFormat, write_report};
use winplace::source::SourceEvent;
use winplace::state::{AppState, Applier, Timing};
use winplace_rules::audit::{Audit, AuditReport};
use winplace_rules::model::cluster_objects::ClusterObject;
use winplace_synthetic::counting::measure;
use winplace_synthetic::synthetic_cluster;

/// What a published state holds beyond the rows it shares with the audit, per workload, its node
/// context apart: the rows' pointers, the images to resolve, and the list of every incident, whose
/// incidents the rows share (`Arc`). Measured 87 B (1,898 B when each publish cloned the 190
/// incidents, 1,711 B of it); the budget leaves 15 %.
const PUBLISHED_PER_WORKLOAD: isize = 100;
/// The playground's node context a published state carries (a copy of the audit's trimmed nodes), per
/// node. Measured 2,499 B.
const PUBLISHED_PER_NODE: isize = 2_750;
/// The most `audit --format FORMAT` holds at once while it writes the report of that cluster (the
/// report is written as it is produced: a row is never copied, no JSON tree is built), per workload.
/// Measured: at most 132 B (JSON; text 126 B).
const WRITING_PER_WORKLOAD: isize = 250;

/// An applier that listed `nodes` nodes and `pods` pods as a stream (what `serve --snapshot` does) and
/// published them into `state`.
fn listed(state: &AppState, nodes: usize, pods: usize) -> Applier {
    let (nodes, pods, rcs) = synthetic_cluster(nodes, pods, 1);
    let events: Vec<SourceEvent> = std::iter::once(SourceEvent::ListBegin)
        .chain(
            nodes
                .into_iter()
                .map(|n| ClusterObject::Node(Box::new(n)))
                .chain(pods.into_iter().map(|p| ClusterObject::Pod(Box::new(p))))
                .chain(
                    rcs.into_iter()
                        .map(|r| ClusterObject::RuntimeClass(Box::new(r))),
                )
                .map(SourceEvent::Listed),
        )
        .chain([SourceEvent::ListDone, SourceEvent::Synced])
        .collect();
    let mut applier = Applier::new(Audit::default());
    assert!(applier.apply_batch(state, events));
    applier
}

#[test]
fn a_published_state_holds_its_budget_per_workload() {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let applier = listed(&state, 200, 6_000);
    let workloads = applier.audit().workload_keys().count() as isize;
    let published = state.published();
    assert_eq!(published.report.workloads.len() as isize, workloads);
    let nodes = published.context.nodes.len() as isize;
    let (incidents, copied_incidents) = measure(|| published.report.incidents.clone());
    eprintln!(
        "{} incidents: {} B; {} images to resolve",
        incidents.len(),
        copied_incidents.held,
        published.images.len()
    );
    drop(incidents);
    // The node context, measured as a copy of it (a clone allocates what the original holds).
    let (context, copied) = measure(|| published.context.clone());
    drop(context);
    drop(published);
    // What the published state frees when an empty one replaces it: its own bytes (the rows it shares
    // stay, held by the audit).
    let ((), replaced) = measure(|| state.publish_report(AuditReport::default()));
    let own = -replaced.held;
    let per_node = copied.held / nodes;
    let per_workload = (own - copied.held) / workloads;
    eprintln!(
        "a published state: {own} B beyond the audit: its node context {per_node} B per node ({nodes} \
         nodes), the rest {per_workload} B per workload ({workloads} workloads)"
    );
    assert!(
        own > 0 && per_node > 0,
        "the counting allocator is installed"
    );
    assert!(
        per_node <= PUBLISHED_PER_NODE,
        "a published state's node context holds {per_node} B per node, over its budget of \
         {PUBLISHED_PER_NODE} B"
    );
    assert!(
        per_workload <= PUBLISHED_PER_WORKLOAD,
        "a published state holds {per_workload} B per workload beyond the audit and its node context, \
         over its budget of {PUBLISHED_PER_WORKLOAD} B"
    );
}

#[test]
fn the_report_is_written_as_it_is_produced_in_every_format() {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let applier = listed(&state, 200, 6_000);
    drop(state);
    let audit = applier.audit();
    let workloads = audit.workload_keys().count() as isize;
    let info = winplace::source::demo::info();
    for format in [
        AuditFormat::Json,
        AuditFormat::Text,
        AuditFormat::Policyreport,
        AuditFormat::Openreports,
    ] {
        let mut written = 0usize;
        let (result, m) = measure(|| {
            write_report(
                audit,
                &info,
                format,
                42,
                Counted {
                    bytes: &mut written,
                },
            )
        });
        result.expect("written");
        let each = m.peak / workloads;
        eprintln!(
            "{format:?}: {written} bytes written, {} B held at the peak ({each} B per workload)",
            m.peak
        );
        assert!(written > 100_000, "{format:?}: {written} bytes");
        assert!(
            each <= WRITING_PER_WORKLOAD,
            "{format:?}: writing the report held {each} B per workload at its peak, over its budget of \
             {WRITING_PER_WORKLOAD} B: is something building the whole report before writing it?"
        );
    }
}

/// A writer that counts what it is given and keeps nothing.
struct Counted<'a> {
    bytes: &'a mut usize,
}

impl std::io::Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        *self.bytes += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
