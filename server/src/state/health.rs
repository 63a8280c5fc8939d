//! How current the data is: whether the first list is in, the last update, the watches failing and
//! since when, a list refused, the events not applied yet; and what that makes of the freshness every
//! answer carries, of `/readyz` and of the sync flags in `/metrics`.

use super::AppState;
use super::published::Published;
use super::readiness::NotReady;
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};
use winplace_api::{ChangeEvent, Freshness, Meta};
use winplace_rules::audit::Touched;

/// How current the data is (the part that is not in [`Published`]).
#[derive(Debug, Default)]
pub(super) struct Health {
    synced: bool,
    last_update: Option<SystemTime>,
    /// The watches that failed and have not worked since, by resource.
    failing: BTreeMap<&'static str, Failing>,
    /// The source's last list was not published, and why (cleared by the next published state).
    rejected: Option<String>,
    /// Source events received and not applied yet.
    behind: u64,
}

/// One failing watch.
#[derive(Debug)]
struct Failing {
    /// The first error of this outage.
    since: Instant,
    /// The last error, and when.
    last: Instant,
    message: String,
    /// Errors in this outage (each after a backoff step).
    count: u64,
}

impl AppState {
    /// Source and freshness, for every answer.
    pub fn meta(&self, published: &Published) -> Meta {
        let now = Instant::now();
        let health = self.health();
        let error = self.current_error(&health, now);
        Meta {
            source: self.inner.source.clone(),
            freshness: Freshness {
                synced: health.synced,
                last_update_ms: health.last_update.and_then(|t| {
                    t.duration_since(SystemTime::UNIX_EPOCH)
                        .ok()
                        .map(|d| d.as_millis() as u64)
                }),
                stale: self.stale_reason(&health, now).is_some(),
                revision: published.revision,
                rejected: health.rejected.clone(),
                error,
                behind: health.behind,
            },
        }
    }

    /// `Ok` when `/readyz` should answer 200.
    pub fn readiness(&self) -> Result<(), NotReady> {
        let health = self.health();
        if !health.synced {
            return Err(match &health.rejected {
                Some(why) => NotReady::Rejected(why.clone()),
                None => NotReady::NotSynced(self.current_error(&health, Instant::now())),
            });
        }
        if let Some(reason) = self.stale_reason(&health, Instant::now()) {
            return Err(NotReady::Stale(reason));
        }
        match self.place_report().and_then(|p| p.blocked()) {
            Some(why) => Err(NotReady::Placement(format!(
                "the placement controller cannot place pods: {why}"
            ))),
            None => Ok(()),
        }
    }

    /// Why the source's last list was not published, while the state before it is still shown.
    pub fn rejected(&self) -> Option<String> {
        self.health().rejected.clone()
    }

    fn health(&self) -> std::sync::MutexGuard<'_, Health> {
        self.inner
            .health
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Source events received and not applied yet.
    pub fn behind(&self) -> u64 {
        self.health().behind
    }

    /// What is failing now: the watches that failed and have neither made progress since nor been
    /// quiet for the recovery period.
    fn failing_now<'h>(
        &self,
        health: &'h Health,
        now: Instant,
    ) -> impl Iterator<Item = &'h Failing> + use<'h> {
        let recovery = self.inner.timing.recovery;
        health
            .failing
            .values()
            .filter(move |f| now.saturating_duration_since(f.last) < recovery)
    }

    /// The last error of each watch failing now, in words.
    fn current_error(&self, health: &Health, now: Instant) -> Option<String> {
        let messages: Vec<&str> = self
            .failing_now(health, now)
            .map(|f| f.message.as_str())
            .collect();
        (!messages.is_empty()).then(|| messages.join("; "))
    }

    fn stale_reason(&self, health: &Health, now: Instant) -> Option<String> {
        let since = self.failing_now(health, now).map(|f| f.since).min()?;
        let grace = self.inner.timing.grace;
        let failing_for = now.saturating_duration_since(since);
        (failing_for >= grace).then(|| {
            format!(
                "the watch has been failing for {} s: {}",
                failing_for.as_secs(),
                self.current_error(health, now).unwrap_or_default()
            )
        })
    }

    /// Watch-failure state for `/metrics`: (synced, stale).
    pub fn sync_flags(&self) -> (bool, bool) {
        let health = self.health();
        (
            health.synced,
            self.stale_reason(&health, Instant::now()).is_some(),
        )
    }

    /// A watch failed (the source retries it after a backoff step): logged, once per step, as the
    /// words of [`crate::source::watch_error`]; an error that repeats says how many times.
    pub(super) fn note_error(&self, failure: crate::source::WatchFailure) {
        let now = Instant::now();
        let recovery = self.inner.timing.recovery;
        let mut health = self.health();
        let entry = health.failing.entry(failure.watch);
        let failing = match entry {
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let f = o.get_mut();
                if now.saturating_duration_since(f.last) >= recovery {
                    // Quiet for the recovery period: this is a new outage.
                    f.since = now;
                    f.count = 0;
                }
                f.last = now;
                f.count += 1;
                f.message = failure.message;
                o.into_mut()
            }
            std::collections::btree_map::Entry::Vacant(v) => v.insert(Failing {
                since: now,
                last: now,
                message: failure.message,
                count: 1,
            }),
        };
        match failing.count {
            1 => tracing::warn!("{} (retrying with backoff)", failing.message),
            n => tracing::warn!(
                "{} (failed {n} times in {} s; retrying with backoff)",
                failing.message,
                now.saturating_duration_since(failing.since).as_secs()
            ),
        }
        drop(health);
        self.inner.metrics.watch_error();
    }

    /// A watch that had failed made progress again.
    pub(super) fn note_resumed(&self, watch: &str) {
        let mut health = self.health();
        if let Some(f) = health.failing.remove(watch) {
            tracing::info!("{watch}: the watch works again (after {} errors)", f.count);
        }
    }

    /// How many source events are waiting to be applied.
    pub(super) fn note_behind(&self, behind: usize) {
        self.health().behind = behind as u64;
    }

    /// A list the source read and did not publish: shown until the next published state.
    /// Records why the last list was not published and, when the reason is new, announces it on the
    /// event stream as a change of the current revision that names nothing (clients refetch, and the
    /// dashboard's header shows the reason without a reload).
    pub(super) fn note_rejected(&self, why: String) {
        let new = {
            let mut health = self.health();
            let new = health.rejected.as_ref() != Some(&why);
            health.rejected = Some(why);
            new
        };
        if new {
            let revision = self.published().revision;
            let _ = self.inner.events.send(ChangeEvent {
                revision,
                touched: Touched::default(),
            });
        }
    }

    pub(super) fn note_update(&self, synced: bool) {
        let mut health = self.health();
        health.synced |= synced;
        health.rejected = None;
        health.last_update = Some(SystemTime::now());
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_kit::{failure, state};
    use super::*;

    #[test]
    fn readiness_follows_sync_and_watch_errors() {
        // (grace ms, recovery ms, events after the first sync, ready?, error shown)
        type Row = (
            u64,
            u64,
            &'static [&'static str],
            bool,
            Option<&'static str>,
        );
        let rows: [Row; 7] = [
            (60_000, 45_000, &[], true, None),
            // An error inside the grace period: still ready, and the error is said.
            (
                60_000,
                45_000,
                &["error pods"],
                true,
                Some("cannot list pods: connection refused"),
            ),
            // Past the grace period (0 ms) and not recovered: not ready.
            (
                0,
                45_000,
                &["error pods"],
                false,
                Some("cannot list pods: connection refused"),
            ),
            // The failing watch works again.
            (0, 45_000, &["error pods", "resumed pods"], true, None),
            // Another watch working proves nothing about this one.
            (
                0,
                45_000,
                &["error pods", "change", "resumed nodes"],
                false,
                Some("cannot list pods: connection refused"),
            ),
            // Two watches failing: both are said.
            (
                60_000,
                45_000,
                &["error pods", "error nodes"],
                true,
                Some("cannot list nodes: connection refused; cannot list pods: connection refused"),
            ),
            // No error for the recovery period (0 ms): taken as recovered.
            (0, 0, &["error pods"], true, None),
        ];
        for (grace, recovery, events, ready, error) in rows {
            let s = state(grace, recovery);
            assert_eq!(s.readiness(), Err(NotReady::NotSynced(None)));
            s.note_update(true);
            for e in events {
                match e.split_once(' ') {
                    Some(("error", "pods")) => s.note_error(failure("pods")),
                    Some(("error", _)) => s.note_error(failure("nodes")),
                    Some(("resumed", "pods")) => s.note_resumed("pods"),
                    Some(("resumed", _)) => s.note_resumed("nodes"),
                    _ => s.note_update(false),
                }
            }
            let what = format!("{grace} {recovery} {events:?}");
            assert_eq!(s.readiness().is_ok(), ready, "{what}");
            let freshness = s.meta(&s.published()).freshness;
            assert_eq!(freshness.stale, !ready, "{what}");
            assert_eq!(freshness.error.as_deref(), error, "{what}");
        }
        // Before the first sync, the reason it has not completed is said.
        let s = state(60_000, 45_000);
        s.note_error(failure("pods"));
        assert_eq!(
            s.readiness(),
            Err(NotReady::NotSynced(Some(
                "cannot list pods: connection refused".into()
            )))
        );
    }
}
