//! The audit thread: one thread owns the [`Audit`] and applies the source's changes in batches; after
//! each batch it publishes a new [`Published`] into the [`AppState`] (handlers clone an `Arc`, they never
//! wait for the audit) and announces the revision on the broadcast channel that feeds `GET /api/events`.

use super::AppState;
use super::published::Published;
use crate::source::SourceEvent;
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use winplace_rules::audit::{Audit, Touched};
use winplace_rules::model::cluster_objects::ClusterObject;

/// Shortest time between two published revisions: changes arriving faster are batched.
const MIN_PUBLISH_INTERVAL: Duration = Duration::from_millis(250);

/// Most source events applied in one batch.
const MAX_BATCH: usize = 50_000;

/// Source events queued for the audit thread. Large, so that a flood is applied in a few large batches
/// (each re-audits what it touched once, and publishes once) and so that one batch takes everything
/// queued: a node change waits behind at most one batch of pod events. A trimmed pod is a few KB, so a
/// full queue holds tens of MB; beyond it the watch streams wait (TCP backpressure).
const QUEUE: usize = 16_384;

/// Applies the source's events to `audit` on a thread of its own, publishing into `state`.
///
/// Returns when the source's stream ends (static sources end after their first sync).
pub fn spawn_applier(
    state: AppState,
    audit: Audit,
    events: BoxStream<'static, SourceEvent>,
) -> std::thread::JoinHandle<()> {
    let (tx, mut rx) = mpsc::channel::<SourceEvent>(QUEUE);
    tokio::spawn(async move {
        let mut events = events;
        while let Some(event) = events.next().await {
            if tx.send(event).await.is_err() {
                break;
            }
        }
    });
    std::thread::Builder::new()
        .name("winplace-audit".into())
        .spawn(move || {
            let mut applier = Applier::new(audit);
            let mut last_publish: Option<Instant> = None;
            while let Some(first) = rx.blocking_recv() {
                if let Some(at) = last_publish
                    && let Some(wait) = MIN_PUBLISH_INTERVAL.checked_sub(at.elapsed())
                {
                    std::thread::sleep(wait);
                }
                let mut batch = vec![first];
                while batch.len() < MAX_BATCH {
                    match rx.try_recv() {
                        Ok(event) => batch.push(event),
                        Err(_) => break,
                    }
                }
                // Honest freshness while a backlog lasts: what is being applied and what waits
                // (the state published at the end of the batch is as far behind as what waits then).
                state.note_behind(batch.len() + rx.len());
                if applier.apply_events(&state, batch, &|| rx.len()) {
                    last_publish = Some(Instant::now());
                }
            }
        })
        .unwrap_or_else(|e| panic!("cannot start the audit thread: {e}"))
}

/// The audit, and the list under way that will replace it. Nothing of the cluster is kept beside the
/// audit: the playground's context and the object counts are read from it.
pub struct Applier {
    audit: Audit,
    /// A full list being fed object by object into an audit of its own, swapped in whole when complete
    /// (until then, and for good if it fails, the last complete state stays published).
    listing: Option<Audit>,
    revision: u64,
}

/// What one source event did to the [`Applier`].
#[derive(Debug)]
enum Step {
    /// Nothing to publish (yet).
    Nothing,
    /// The audit changed.
    Changed(Touched),
    /// Everything is listed.
    Synced,
    /// A watch failed (retried by the source).
    WatchError(crate::source::WatchFailure),
    /// A watch that had failed works again.
    WatchResumed(&'static str),
    /// A list was abandoned: not published.
    Rejected(String),
}

impl Applier {
    /// An applier around `audit`.
    pub fn new(audit: Audit) -> Self {
        Applier {
            audit,
            listing: None,
            revision: 0,
        }
    }

    /// The audit of the last complete state.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    fn step(&mut self, event: SourceEvent) -> Step {
        match event {
            SourceEvent::Change(change) => Step::Changed(self.audit.apply(change)),
            SourceEvent::ListBegin => {
                let mut next = Audit::new(self.audit.settings().clone());
                next.begin_reset();
                self.listing = Some(next);
                Step::Nothing
            }
            SourceEvent::Listed(object) => {
                let next = self.listing.get_or_insert_with(|| {
                    let mut next = Audit::new(self.audit.settings().clone());
                    next.begin_reset();
                    next
                });
                match object {
                    ClusterObject::Node(node) => next.reset_node(&node),
                    ClusterObject::Pod(pod) => next.reset_pod(&pod),
                    ClusterObject::ListedPod(pod) => next.reset_listed_pod(&pod),
                    ClusterObject::RuntimeClass(entry) => next.reset_runtime_class(&entry),
                    ClusterObject::Event(event) => next.reset_event(&event),
                }
                Step::Nothing
            }
            SourceEvent::ListDone => {
                let Some(mut next) = self.listing.take() else {
                    return Step::Nothing;
                };
                let started = Instant::now();
                let touched = next.finish_reset();
                tracing::debug!(
                    "a complete list: its audit finished in {:.2} s ({} workloads)",
                    started.elapsed().as_secs_f64(),
                    next.workload_keys().count()
                );
                // Rows that were and are no more are touched too.
                let old = std::mem::replace(&mut self.audit, next);
                let gone = Touched {
                    nodes: old.nodes().map(|n| n.name.clone()).collect(),
                    workloads: old.workload_keys().map(str::to_string).collect(),
                };
                let touched = touched.union(gone);
                Step::Changed(touched)
            }
            SourceEvent::ListFailed(why) => {
                self.listing = None;
                Step::Rejected(why)
            }
            SourceEvent::ImageFacts(facts) => {
                // What a registry said about images: only the workloads running them are re-audited.
                let touched = self.audit.set_image_facts(facts);
                if touched == Touched::default() {
                    Step::Nothing
                } else {
                    Step::Changed(touched)
                }
            }
            SourceEvent::Today(date) => {
                // A list under way reads the calendar at the new date too.
                if let Some(next) = self.listing.as_mut() {
                    next.set_date(date);
                }
                let touched = self.audit.set_date(date);
                if touched == Touched::default() {
                    Step::Nothing
                } else {
                    Step::Changed(touched)
                }
            }
            SourceEvent::Synced => Step::Synced,
            SourceEvent::WatchError(failure) => Step::WatchError(failure),
            SourceEvent::WatchResumed(watch) => Step::WatchResumed(watch),
        }
    }

    /// Applies a batch; publishes when anything changed. Returns whether it published.
    pub fn apply_batch(&mut self, state: &AppState, batch: Vec<SourceEvent>) -> bool {
        self.apply_events(state, batch, &|| 0)
    }

    /// Applies a batch, `waiting()` more events queued behind it; publishes when anything changed.
    /// Consecutive changes are applied together ([`Audit::apply_all`]): what they touch is re-audited
    /// once. Returns whether it published.
    fn apply_events(
        &mut self,
        state: &AppState,
        batch: Vec<SourceEvent>,
        waiting: &dyn Fn() -> usize,
    ) -> bool {
        let started = Instant::now();
        let mut nodes = BTreeSet::new();
        let mut workloads = BTreeSet::new();
        let mut changed = false;
        let mut synced = false;
        // A list rejected after the batch's last change (publishing clears the previous reason).
        let mut rejected = None;
        let mut changes: Vec<winplace_rules::audit::Change> = Vec::new();
        let mut events = batch.into_iter().peekable();
        while let Some(event) = events.next() {
            // (what it did, how many changes it applied)
            let (step, applied) = match event {
                SourceEvent::Change(change) => {
                    changes.push(change);
                    if matches!(events.peek(), Some(SourceEvent::Change(_))) {
                        continue;
                    }
                    let count = changes.len();
                    (
                        Step::Changed(self.audit.apply_all(changes.drain(..))),
                        count,
                    )
                }
                other => (self.step(other), 1),
            };
            match step {
                Step::Nothing => {}
                Step::Changed(touched) => {
                    state.inner.metrics.changes(applied as u64);
                    nodes.extend(touched.nodes);
                    workloads.extend(touched.workloads);
                    changed = true;
                    rejected = None;
                }
                Step::Synced => synced = true,
                Step::WatchError(failure) => state.note_error(failure),
                Step::WatchResumed(watch) => state.note_resumed(watch),
                Step::Rejected(why) => {
                    tracing::error!("{why}");
                    rejected = Some(why);
                }
            }
        }
        state.note_behind(waiting());
        if !changed {
            if synced {
                state.note_update(true);
            }
            if let Some(why) = rejected {
                state.note_rejected(why);
            }
            return false;
        }
        let reporting = Instant::now();
        let report = self.audit.report();
        self.revision += 1;
        let context = self.audit.context().clone();
        let published = Published {
            revision: self.revision,
            objects: BTreeMap::from([
                ("node", report.summary.nodes),
                ("pod", report.summary.pods),
                ("runtimeclass", context.runtime_classes.len()),
            ]),
            report,
            context,
            images: self.audit.images_to_resolve(),
            gated: self.audit.gated_pods(),
        };
        state.inner.metrics.observe_audit(started.elapsed());
        tracing::debug!(
            "published revision {} after {:.3} s, of which the report {:.3} s",
            self.revision,
            started.elapsed().as_secs_f64(),
            reporting.elapsed().as_secs_f64()
        );
        state.publish(
            synced,
            published,
            Touched {
                nodes: nodes.into_iter().collect(),
                workloads: workloads.into_iter().collect(),
            },
        );
        if let Some(why) = rejected {
            state.note_rejected(why);
        }
        true
    }
}

/// Runs `events` until the first sync and returns the audit: what `winplace audit` prints.
///
/// A watch error or a rejected list before the first sync is fatal here (a one-shot command should not
/// retry forever).
pub async fn audit_once(
    audit: Audit,
    mut events: BoxStream<'static, SourceEvent>,
) -> anyhow::Result<Audit> {
    let mut applier = Applier::new(audit);
    while let Some(event) = events.next().await {
        match applier.step(event) {
            Step::Nothing | Step::Changed(_) | Step::WatchResumed(_) => {}
            Step::Synced => return Ok(applier.audit),
            Step::WatchError(failure) => anyhow::bail!("{}", failure.message),
            Step::Rejected(message) => anyhow::bail!("{message}"),
        }
    }
    anyhow::bail!("the source ended before listing the cluster")
}

#[cfg(test)]
mod tests {
    use super::super::readiness::NotReady;
    use super::super::test_kit::{failure, state};
    use super::*;
    use winplace_rules::audit::Change;

    #[test]
    fn applier_tracks_objects_and_publishes_revisions() {
        let s = state(60_000, 45_000);
        let mut rx = s.subscribe();
        let mut applier = Applier::new(Audit::default());
        let demo = crate::source::demo::DemoSource::load().expect("demo");
        let reset = demo.objects().clone().into_reset();
        assert!(applier.apply_batch(&s, vec![SourceEvent::Change(reset), SourceEvent::Synced]));
        let p = s.published();
        assert_eq!(p.revision, 1);
        assert_eq!(p.objects["node"], 10);
        assert_eq!(p.objects["runtimeclass"], 2);
        assert_eq!(p.context.nodes.len(), 10);
        let win22 = p
            .report
            .nodes
            .iter()
            .find(|n| n.name == "aks-win22-0")
            .expect("node");
        assert!(
            win22
                .pods
                .iter()
                .any(|p| p.namespace == "shop" && p.name.starts_with("storefront-"))
        );
        assert_eq!(rx.try_recv().map(|e| e.revision), Ok(1));
        assert!(s.readiness().is_ok());
        // A deletion publishes revision 2; an error alone publishes nothing.
        assert!(applier.apply_batch(
            &s,
            vec![SourceEvent::Change(Change::NodeDeleted(
                "aks-win22-0".into()
            ))]
        ));
        assert!(!applier.apply_batch(&s, vec![SourceEvent::WatchError(failure("pods"))]));
        let p = s.published();
        assert_eq!((p.revision, p.objects["node"]), (2, 9));
        assert_eq!(s.metrics().watch_errors(), 1);
    }

    /// A new day from the clock re-reads the calendar: a Windows Server 2016 node (supported through
    /// 2027-01-12, lifecycle.md M2) is reported retired on 2027-01-13 without a new list or a restart;
    /// the same day again publishes nothing.
    #[test]
    fn a_new_day_publishes_the_nodes_it_retires() {
        let s = state(60_000, 45_000);
        let day = |t: &str| t.parse::<winplace_rules::lifecycle::Date>().unwrap();
        let mut settings = winplace_rules::Settings::default();
        settings.lifecycle.date = Some(day("2027-01-12"));
        let mut applier = Applier::new(Audit::new(settings));
        let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "win16-0", "labels": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": "10.0.14393"}},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
            "status": {"nodeInfo": {"operatingSystem": "windows", "kernelVersion": "10.0.14393.7000",
                "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7.20",
                "kubeProxyVersion": "", "kubeletVersion": "v1.31.0", "machineID": "",
                "osImage": "Windows Server 2016 Datacenter", "systemUUID": ""}}
        }))
        .expect("node");
        assert!(applier.apply_batch(
            &s,
            vec![
                SourceEvent::Change(Change::Node(Box::new(node))),
                SourceEvent::Synced
            ]
        ));
        let retired = |s: &AppState| {
            s.published().report.nodes.iter().any(|n| {
                n.name == "win16-0"
                    && n.findings
                        .iter()
                        .any(|f| f.rule == "windows-node-build-retired")
            })
        };
        assert!(!retired(&s));
        let revision = s.published().revision;
        assert!(!applier.apply_batch(&s, vec![SourceEvent::Today(day("2027-01-12"))]));
        assert!(applier.apply_batch(&s, vec![SourceEvent::Today(day("2027-01-13"))]));
        assert_eq!(s.published().revision, revision + 1);
        assert!(retired(&s));
    }

    /// The demo's objects as a streamed list, cut after `take` objects, ended by `last`.
    fn listed(take: usize, last: SourceEvent) -> Vec<SourceEvent> {
        let demo = crate::source::demo::DemoSource::load().expect("demo");
        let o = demo.objects().clone();
        let objects = o
            .nodes
            .into_iter()
            .map(|n| ClusterObject::Node(Box::new(n)))
            .chain(o.pods.into_iter().map(|p| ClusterObject::Pod(Box::new(p))))
            .chain(
                o.runtime_classes
                    .into_iter()
                    .map(|r| ClusterObject::RuntimeClass(Box::new(r))),
            );
        std::iter::once(SourceEvent::ListBegin)
            .chain(objects.take(take).map(SourceEvent::Listed))
            .chain([last])
            .collect()
    }

    #[test]
    fn a_streamed_list_is_published_when_done_and_a_failed_one_never() {
        let s = state(60_000, 45_000);
        let mut stream = s.subscribe();
        let mut applier = Applier::new(Audit::default());
        // A first list that fails: nothing published, not ready, and the reason is shown.
        assert!(!applier.apply_batch(&s, listed(5, SourceEvent::ListFailed("cut short".into()))));
        assert_eq!(s.published().revision, 0);
        assert_eq!(s.readiness(), Err(NotReady::Rejected("cut short".into())));
        // A complete list, split over batches: published once, at its end.
        let mut events = listed(usize::MAX, SourceEvent::ListDone);
        let rest = events.split_off(20);
        assert!(!applier.apply_batch(&s, events), "nothing before the end");
        assert!(applier.apply_batch(&s, rest.into_iter().chain([SourceEvent::Synced]).collect()));
        let good = s.published();
        assert_eq!((good.revision, good.objects["node"]), (1, 10));
        assert_eq!(good.context.nodes.len(), 10);
        assert_eq!(s.readiness(), Ok(()));
        assert_eq!(s.meta(&good).freshness.rejected, None);
        // A reload cut after 3 nodes: the last good state stays; ready, with the reason in the freshness.
        assert!(!applier.apply_batch(&s, listed(3, SourceEvent::ListFailed("no nodes".into()))));
        let p = s.published();
        assert_eq!((p.revision, p.objects["node"]), (1, 10));
        assert_eq!(s.readiness(), Ok(()));
        assert_eq!(s.meta(&p).freshness.rejected.as_deref(), Some("no nodes"));
        // Each refusal was announced (clients refetch and show it), between the publications.
        let announced: Vec<(u64, bool)> = std::iter::from_fn(|| stream.try_recv().ok())
            .map(|e| (e.revision, e.touched == Touched::default()))
            .collect();
        assert_eq!(
            announced.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
            [0, 1, 1],
            "refused, published, refused"
        );
        assert!(announced[0].1 && announced[2].1, "a refusal names nothing");
        // The same reason again is not announced again.
        assert!(!applier.apply_batch(&s, listed(3, SourceEvent::ListFailed("no nodes".into()))));
        assert!(stream.try_recv().is_err());
        // The applier's audit is the good one, and a good reload clears the reason.
        assert_eq!(applier.audit().summary().nodes, 10);
        assert!(applier.apply_batch(&s, listed(usize::MAX, SourceEvent::ListDone)));
        assert_eq!(s.rejected(), None);
        assert_eq!(s.published().revision, 2);
    }
}
