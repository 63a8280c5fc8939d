//! State shared by the handlers ([`AppState`]): the latest audit as an immutable, published snapshot,
//! its answers serialized once, freshness and readiness, the change broadcast, the event streams and the
//! metrics; and the audit thread that feeds it.
//!
//! * [`applier`]: the audit thread, which applies the source's changes in batches and publishes;
//! * [`published`]: one published state, what every handler reads; [`answers`]: the heavy JSON answers
//!   built from it once;
//! * [`health`]: how current the data is (freshness, `/readyz`); [`timing`]: how long a broken watch is
//!   trusted; [`readiness`]: why the server is not ready, its changes logged once;
//! * [`event_streams`]: the live event streams open, and their limit.

pub mod answers;
pub mod applier;
pub mod event_streams;
pub mod health;
pub mod published;
pub mod readiness;
pub mod timing;

pub use applier::{Applier, audit_once, spawn_applier};
pub use timing::{DEFAULT_GRACE, DEFAULT_RECOVERY, Timing};

use crate::metrics::Metrics;
use crate::state::answers::Answers;
use crate::state::published::Published;
use crate::state::readiness::ReadinessLog;
use health::Health;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{broadcast, watch};
use winplace_api::ChangeEvent;
use winplace_api::SourceInfo;
use winplace_rules::audit::{AuditReport, Touched};

struct Shared {
    source: SourceInfo,
    published: RwLock<Arc<Published>>,
    health: Mutex<Health>,
    events: broadcast::Sender<ChangeEvent>,
    shutdown: watch::Sender<bool>,
    metrics: Metrics,
    timing: Timing,
    answers: Answers,
    /// The registry client, when the server resolves images (`serve --resolve-images`).
    image_resolver: std::sync::OnceLock<Arc<crate::registry::ImageResolver>>,
    /// What the placement controller did, when the server places pods (`serve --place`).
    place_report: std::sync::OnceLock<Arc<crate::place::report::PlaceReport>>,
    /// The series other parts of the server add to every scrape (`serve --reports`' writer).
    exported: Mutex<Vec<Arc<dyn crate::metrics::Exported>>>,
    /// Readiness at the last probe, on whichever listener it came (so that a change is logged once).
    readiness_log: ReadinessLog,
    /// The event streams open, and their limit.
    event_streams: crate::state::event_streams::EventStreams,
}

/// What every handler can read; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

impl AppState {
    /// Empty state for `source` (nothing synced yet).
    pub fn new(source: SourceInfo, timing: Timing) -> Self {
        let (events, _) = broadcast::channel(256);
        let (shutdown, _) = watch::channel(false);
        AppState {
            inner: Arc::new(Shared {
                source,
                published: RwLock::new(Arc::new(Published::default())),
                health: Mutex::new(Health::default()),
                events,
                shutdown,
                metrics: Metrics::default(),
                timing,
                answers: Answers::default(),
                image_resolver: std::sync::OnceLock::new(),
                place_report: std::sync::OnceLock::new(),
                exported: Mutex::new(Vec::new()),
                readiness_log: Default::default(),
                event_streams: Default::default(),
            }),
        }
    }

    /// The event streams open, and their limit (`serve --max-event-streams`).
    pub fn event_streams(&self) -> &crate::state::event_streams::EventStreams {
        &self.inner.event_streams
    }

    /// What readiness was at the last probe (`/readyz` logs only its changes).
    pub fn readiness_log(&self) -> &ReadinessLog {
        &self.inner.readiness_log
    }

    /// Turns image resolution on with `resolver` (once; later calls are ignored).
    pub fn set_image_resolver(&self, resolver: Arc<crate::registry::ImageResolver>) {
        let _ = self.inner.image_resolver.set(resolver);
    }

    /// The registry client, when image resolution is on.
    pub fn image_resolver(&self) -> Option<&Arc<crate::registry::ImageResolver>> {
        self.inner.image_resolver.get()
    }

    /// Sets the placement controller's report (once, at start-up).
    pub fn set_place_report(&self, report: Arc<crate::place::report::PlaceReport>) {
        let _ = self.inner.place_report.set(report);
    }

    /// The placement controller's report, when the server places pods.
    pub fn place_report(&self) -> Option<&Arc<crate::place::report::PlaceReport>> {
        self.inner.place_report.get()
    }

    /// Adds `part`'s series to every scrape of `/metrics` from now on.
    pub fn export(&self, part: Arc<dyn crate::metrics::Exported>) {
        let mut exported = self
            .inner
            .exported
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        exported.push(part);
    }

    /// The parts whose series `/metrics` adds.
    pub fn exported(&self) -> Vec<Arc<dyn crate::metrics::Exported>> {
        let exported = self
            .inner
            .exported
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        exported.clone()
    }

    /// The latest published audit.
    pub fn published(&self) -> Arc<Published> {
        match self.inner.published.read() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Where the data comes from.
    pub fn source(&self) -> &SourceInfo {
        &self.inner.source
    }

    /// A receiver of change events.
    pub fn subscribe(&self) -> broadcast::Receiver<ChangeEvent> {
        self.inner.events.subscribe()
    }

    /// The heavy answers, serialized once per published state (see [`Answers`]).
    pub fn answers(&self) -> &Answers {
        &self.inner.answers
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Resolves when the server shuts down (ends the live streams so that shutdown does not wait
    /// for them).
    pub fn shutdown_signal(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        let mut rx = self.inner.shutdown.subscribe();
        async move {
            let _ = rx.wait_for(|down| *down).await;
        }
    }

    /// Tells the live streams that the server is shutting down.
    pub fn shut_down(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Stores the new state, then records the update (synced only once what the sync covers is
    /// published: `/readyz` must not pass on an empty report), then announces it.
    fn publish(&self, synced: bool, published: Published, touched: Touched) {
        let revision = published.revision;
        let published = Arc::new(published);
        match self.inner.published.write() {
            Ok(mut p) => *p = published,
            Err(poisoned) => *poisoned.into_inner() = published,
        }
        self.note_update(synced);
        // Nobody listening is fine.
        let _ = self.inner.events.send(ChangeEvent { revision, touched });
    }
}

impl AppState {
    /// Publishes a ready-made report as the next revision and marks the state synced (router tests,
    /// embedders that compute the audit elsewhere).
    pub fn publish_report(&self, report: AuditReport) {
        let revision = self.published().revision + 1;
        self.publish(
            true,
            Published {
                revision,
                report,
                ..Published::default()
            },
            Touched::default(),
        );
    }
}

/// What the state's tests build: a state with its timing in milliseconds, a watch's failure.
#[cfg(test)]
mod test_kit {
    use super::{AppState, Timing};
    use std::time::Duration;

    pub(super) fn state(grace: u64, recovery: u64) -> AppState {
        AppState::new(
            crate::source::demo::info(),
            Timing {
                grace: Duration::from_millis(grace),
                recovery: Duration::from_millis(recovery),
            },
        )
    }

    pub(super) fn failure(watch: &'static str) -> crate::source::WatchFailure {
        crate::source::WatchFailure {
            watch,
            message: format!("cannot list {watch}: connection refused"),
        }
    }
}
