//! What `serve --place` did, for `/metrics`, `/readyz` and `GET /api/placements`: counters of pods
//! placed and released (by [`ReleaseReason`]), the resolution latency histogram, whether this replica
//! holds the Lease and whether it can place at all (and why not), its deadline, the most recent
//! placements. (Its resolver's look-ups are exported with the resolver's own series,
//! [`ImageResolver::register`].)

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::registry::Registry;
use winplace_api::{PlacementOutcome, PlacementRow, PlacementsResponse, RECENT_PLACEMENTS};

use crate::metrics::{self, Counter, Histogram, Series};
use crate::registry::ImageResolver;

/// Why a gate was released without placing the pod: the `reason` label ([`PlacementRow::reason`]) and
/// the Event's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseReason {
    /// An image's registry did not answer by the pod's deadline (its last try included).
    Deadline,
    /// An image's registry answered an error that will not pass (its kind: `unauthorized`,
    /// `not-found`, …, [`crate::registry::ResolveError::kind`]), or kept failing until the deadline.
    Registry(&'static str),
    /// A manifest names no platform winplace can read.
    NoPlatform,
    /// The rules found nothing to pin (the images contradict the pod, the pins are not a change
    /// Kubernetes allows on it).
    NothingToPin,
    /// The API server refused the pins on their merits (422 on a pod that did not change).
    Refused,
}

impl ReleaseReason {
    /// The labels of the reasons that have no registry error kind, in `/metrics`' order.
    pub const FIXED_LABELS: [&str; 4] = ["deadline", "no-platform", "refused", "nothing-to-pin"];

    /// The `reason` label on `/metrics` and `/api/placements`.
    pub fn label(self) -> &'static str {
        match self {
            ReleaseReason::Deadline => "deadline",
            ReleaseReason::Registry(kind) => kind,
            ReleaseReason::NoPlatform => "no-platform",
            ReleaseReason::NothingToPin => "nothing-to-pin",
            ReleaseReason::Refused => "refused",
        }
    }

    /// The reason of the Warning Event on the pod.
    pub fn event(self) -> &'static str {
        match self {
            ReleaseReason::Deadline | ReleaseReason::Registry(_) | ReleaseReason::NoPlatform => {
                "ImagesUnresolved"
            }
            ReleaseReason::NothingToPin => "NothingToPin",
            ReleaseReason::Refused => "PlacementRefused",
        }
    }
}

/// Shared by the controller (which records) and the routes (which read).
pub struct PlaceReport {
    placed: Counter,
    released: Mutex<BTreeMap<String, u64>>,
    /// Pods deleted before winplace's patch reached them (the API server answered 404).
    deleted: Counter,
    /// Image look-ups asked for again after a transient failure, within the pod's deadline.
    resolve_retries: Counter,
    /// Patches computed again from a fresh read after a conflict (409, or a failed `test`: 422).
    conflicts: Counter,
    /// API requests (pull secrets, pod reads, patches) asked again after a 429, a 5xx or no answer.
    api_retries: Counter,
    /// Pods pinned to builds no node runs (or no single build runs), left Pending with a Warning.
    unrunnable: Counter,
    /// Patches whose answer was lost, found landed when the pod was read again.
    answers_lost: Counter,
    /// Failed lists and watches of the controller's caches, by resource.
    list_failures: Mutex<BTreeMap<String, u64>>,
    /// Why this replica cannot place now (`None`: it can).
    blocked: Mutex<Option<String>>,
    resolution: Histogram,
    leading: AtomicBool,
    /// `--place-deadline`, exported so that an alert compares the gated pods' age with it.
    deadline: Duration,
    recent: Mutex<VecDeque<PlacementRow>>,
    resolver: Arc<ImageResolver>,
}

impl PlaceReport {
    /// An empty report over the controller's resolver (whose look-ups it exports).
    pub fn new(resolver: Arc<ImageResolver>) -> Self {
        PlaceReport {
            placed: Counter::default(),
            released: Mutex::new(BTreeMap::new()),
            deleted: Counter::default(),
            resolve_retries: Counter::default(),
            conflicts: Counter::default(),
            api_retries: Counter::default(),
            unrunnable: Counter::default(),
            answers_lost: Counter::default(),
            list_failures: Mutex::new(BTreeMap::new()),
            blocked: Mutex::new(Some("the placement controller is starting".into())),
            resolution: metrics::histogram(),
            leading: AtomicBool::new(false),
            deadline: super::DEFAULT_DEADLINE,
            recent: Mutex::new(VecDeque::new()),
            resolver,
        }
    }

    /// The report of a controller whose pods' deadline is `deadline` (`--place-deadline`; the default's
    /// otherwise).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The controller's resolver.
    pub fn resolver(&self) -> &Arc<ImageResolver> {
        &self.resolver
    }

    /// Whether this replica holds the Lease now.
    pub fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::Relaxed);
    }

    /// Why this replica cannot place now (`None`: it can): what `/readyz` says.
    pub fn set_blocked(&self, why: Option<String>) {
        *self.blocked.lock().unwrap_or_else(|p| p.into_inner()) = why;
    }

    /// Why this replica cannot place now, if it cannot.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use winplace::place::report::PlaceReport;
    /// # use winplace::registry::{ImageResolver, RegistryOptions};
    /// let report = PlaceReport::new(Arc::new(ImageResolver::new(RegistryOptions::default())));
    /// assert!(report.blocked().is_some(), "not before its caches are listed");
    /// report.set_blocked(None);
    /// assert_eq!(report.blocked(), None);
    /// ```
    pub fn blocked(&self) -> Option<String> {
        self.blocked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A list or watch of `resource` (a cache of the controller) failed.
    pub fn list_failed(&self, resource: &str) {
        *self
            .list_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(resource.to_string())
            .or_default() += 1;
    }

    /// A patch whose answer was lost was found landed.
    pub fn answer_lost(&self) {
        self.answers_lost.inc();
    }

    /// How long reading one pod's images took.
    pub fn observe_resolution(&self, took: Duration) {
        self.resolution.observe(took.as_secs_f64());
    }

    /// A pod pinned and ungated.
    pub fn placed(&self, pod: String, images: Vec<String>, pins: Vec<String>, note: String) {
        self.placed.inc();
        self.remember(PlacementRow {
            pod,
            at: now(),
            images,
            outcome: PlacementOutcome::Placed,
            pins,
            reason: None,
            note: Some(note),
        });
    }

    /// A pod released (ungated, nothing else changed) for `reason`.
    pub fn released(&self, pod: String, images: Vec<String>, reason: ReleaseReason, note: String) {
        let reason = reason.label();
        *self
            .released
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(reason.to_string())
            .or_default() += 1;
        self.remember(PlacementRow {
            pod,
            at: now(),
            images,
            outcome: PlacementOutcome::Released,
            pins: Vec::new(),
            reason: Some(reason.to_string()),
            note: Some(note),
        });
    }

    /// A pod deleted before winplace's patch reached it: nothing to place, nothing to release.
    pub fn deleted(&self) {
        self.deleted.inc();
    }

    /// `n` image look-ups asked for again after a transient failure (a server error, no connection).
    pub fn resolve_retried(&self, n: u64) {
        self.resolve_retries.inc_by(n);
    }

    /// A patch refused because the pod changed since it was read: read again and computed anew.
    pub fn conflicted(&self) {
        self.conflicts.inc();
    }

    /// An API request asked again after a transient failure (429, 5xx, no answer).
    pub fn api_retried(&self) {
        self.api_retries.inc();
    }

    /// A pod pinned where its images run although no node runs them (it stays Pending).
    pub fn unrunnable(&self) {
        self.unrunnable.inc();
    }

    fn remember(&self, row: PlacementRow) {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.push_front(row);
        recent.truncate(RECENT_PLACEMENTS);
    }

    /// `GET /api/placements`.
    pub fn response(&self) -> PlacementsResponse {
        PlacementsResponse {
            enabled: true,
            leading: self.leading.load(Ordering::Relaxed),
            placements: self
                .recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned()
                .collect(),
        }
    }

    /// Adds the controller's series to a scrape's registry (`/metrics`).
    pub fn register(&self, registry: &mut Registry) {
        metrics::add(
            registry,
            "winplace_place_placed_total",
            "Gated pods pinned and ungated.",
            self.placed.clone(),
        );
        let mut reasons: BTreeMap<String, u64> = ReleaseReason::FIXED_LABELS
            .into_iter()
            .map(|r| (r.to_string(), 0))
            .collect();
        reasons.extend(
            self.released
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|(r, n)| (r.clone(), *n)),
        );
        metrics::add(
            registry,
            "winplace_place_released_total",
            "Gated pods ungated without being placed, by reason (deadline, a registry error's kind, no-platform, refused, nothing-to-pin).",
            Series::counter_by("reason", reasons),
        );
        metrics::add(
            registry,
            "winplace_place_deleted_total",
            "Gated pods deleted before winplace's patch reached them (404).",
            self.deleted.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_resolve_retries_total",
            "Image look-ups asked for again after a transient registry failure, within the pod's deadline.",
            self.resolve_retries.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_conflicts_total",
            "Patches computed again from a fresh read of the pod after a conflict (409, or a failed test op: 422).",
            self.conflicts.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_api_retries_total",
            "Kubernetes API requests asked again after a 429, a 5xx or no answer.",
            self.api_retries.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_unrunnable_total",
            "Pods pinned to Windows builds no node runs (or no single build runs), left Pending with a Warning Event.",
            self.unrunnable.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_answers_lost_total",
            "Patches whose answer was lost on the way, found landed when the pod was read again.",
            self.answers_lost.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_list_failures_total",
            "Failed lists and watches of the controller's caches (nodes, serviceaccounts, pull secrets, unscheduled pods), by resource.",
            Series::counter_by(
                "resource",
                self.list_failures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clone(),
            ),
        );
        metrics::add(
            registry,
            "winplace_place_can_place",
            "1 while this replica can place pods (its caches are listed and the controller runs); only then does it ask for the Lease.",
            Series::gauge_value(u64::from(self.blocked().is_none())),
        );
        metrics::add(
            registry,
            "winplace_place_resolution_seconds",
            "Time to read one gated pod's images from their registries.",
            self.resolution.clone(),
        );
        metrics::add(
            registry,
            "winplace_place_deadline_seconds",
            "The controller's --place-deadline: a gated pod waits for its images' registries this long at most.",
            Series::gauge_value(self.deadline.as_secs()),
        );
        metrics::add(
            registry,
            "winplace_place_leading",
            "1 while this replica holds the placement Lease (only the holder places).",
            Series::gauge_value(u64::from(self.leading.load(Ordering::Relaxed))),
        );
    }

    /// The controller's series alone in the Prometheus text format.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use winplace::place::report::{PlaceReport, ReleaseReason};
    /// # use winplace::registry::{ImageResolver, RegistryOptions};
    /// let report = PlaceReport::new(Arc::new(ImageResolver::new(RegistryOptions::default())))
    ///     .with_deadline(std::time::Duration::from_secs(45));
    /// report.placed("shop/a".into(), vec![], vec![], "placed".into());
    /// report.released("shop/b".into(), vec![], ReleaseReason::Deadline, "late".into());
    /// let text = report.exposition();
    /// assert!(text.contains("winplace_place_placed_total 1\n"));
    /// assert!(text.contains("winplace_place_released_total{reason=\"deadline\"} 1\n"));
    /// assert!(text.contains("winplace_place_leading 0\n"));
    /// assert!(text.contains("winplace_place_can_place 0\n"));
    /// assert!(text.contains("winplace_place_deadline_seconds 45\n"));
    /// report.deleted();
    /// assert!(report.exposition().contains("winplace_place_deleted_total 1\n"));
    /// ```
    pub fn exposition(&self) -> String {
        metrics::encode_with(|r| self.register(r))
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
