//! What `serve --place` did, for `/metrics` and `GET /api/placements`: counters of pods placed and
//! released (by reason), the resolution latency histogram, whether this replica holds the Lease, the
//! most recent placements. (Its resolver's look-ups are exported with the resolver's own series,
//! [`ImageResolver::exposition`].)

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use winplace_api::{PlacementOutcome, PlacementRow, PlacementsResponse, RECENT_PLACEMENTS};

use crate::metrics::{Histogram, escape, write_one};
use crate::registry::ImageResolver;

/// Why a gate was released without placing the pod (the `reason` label, [`PlacementRow::reason`]).
pub mod reason {
    /// An image was not read within `--place-deadline` (counted from when the leader first saw the pod).
    pub const DEADLINE: &str = "deadline";
    /// A manifest names no platform winplace can read.
    pub const NO_PLATFORM: &str = "no-platform";
    /// The API server refused the pins on their merits (422), or the pod kept changing until the deadline.
    pub const REFUSED: &str = "refused";
    /// The rules found nothing to pin.
    pub const NOTHING_TO_PIN: &str = "nothing-to-pin";
}

/// Shared by the controller (which records) and the routes (which read).
pub struct PlaceReport {
    placed: AtomicU64,
    released: Mutex<BTreeMap<String, u64>>,
    /// Pods deleted before winplace's patch reached them (the API server answered 404).
    deleted: AtomicU64,
    /// Image look-ups asked for again after a transient failure, within the pod's deadline.
    resolve_retries: AtomicU64,
    /// Patches computed again from a fresh read after a conflict (409, or a failed `test`: 422).
    conflicts: AtomicU64,
    /// API requests (pull secrets, pod reads, patches) asked again after a 429, a 5xx or no answer.
    api_retries: AtomicU64,
    /// Pods pinned to builds no node runs (or no single build runs), left Pending with a Warning.
    unrunnable: AtomicU64,
    resolution: Mutex<Histogram>,
    leading: AtomicBool,
    recent: Mutex<VecDeque<PlacementRow>>,
    resolver: Arc<ImageResolver>,
}

impl PlaceReport {
    /// An empty report over the controller's resolver (whose look-ups it exports).
    pub fn new(resolver: Arc<ImageResolver>) -> Self {
        PlaceReport {
            placed: AtomicU64::new(0),
            released: Mutex::new(BTreeMap::new()),
            deleted: AtomicU64::new(0),
            resolve_retries: AtomicU64::new(0),
            conflicts: AtomicU64::new(0),
            api_retries: AtomicU64::new(0),
            unrunnable: AtomicU64::new(0),
            resolution: Mutex::new(Histogram::default()),
            leading: AtomicBool::new(false),
            recent: Mutex::new(VecDeque::new()),
            resolver,
        }
    }

    /// The controller's resolver.
    pub fn resolver(&self) -> &Arc<ImageResolver> {
        &self.resolver
    }

    /// Whether this replica holds the Lease now.
    pub fn set_leading(&self, leading: bool) {
        self.leading.store(leading, Ordering::Relaxed);
    }

    /// How long reading one pod's images took.
    pub fn observe_resolution(&self, took: Duration) {
        self.resolution
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .observe(took);
    }

    /// A pod pinned and ungated.
    pub fn placed(&self, pod: String, images: Vec<String>, pins: Vec<String>, note: String) {
        self.placed.fetch_add(1, Ordering::Relaxed);
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
    pub fn released(&self, pod: String, images: Vec<String>, reason: &str, note: String) {
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
        self.deleted.fetch_add(1, Ordering::Relaxed);
    }

    /// `n` image look-ups asked for again after a transient failure (a server error, no connection).
    pub fn resolve_retried(&self, n: u64) {
        self.resolve_retries.fetch_add(n, Ordering::Relaxed);
    }

    /// A patch refused because the pod changed since it was read: read again and computed anew.
    pub fn conflicted(&self) {
        self.conflicts.fetch_add(1, Ordering::Relaxed);
    }

    /// An API request asked again after a transient failure (429, 5xx, no answer).
    pub fn api_retried(&self) {
        self.api_retries.fetch_add(1, Ordering::Relaxed);
    }

    /// A pod pinned where its images run although no node runs them (it stays Pending).
    pub fn unrunnable(&self) {
        self.unrunnable.fetch_add(1, Ordering::Relaxed);
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

    /// The series `/metrics` appends (Prometheus text format 0.0.4).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use winplace::place::report::{PlaceReport, reason};
    /// # use winplace::registry::{ImageResolver, RegistryOptions};
    /// let report = PlaceReport::new(Arc::new(ImageResolver::new(RegistryOptions::default())));
    /// report.placed("shop/a".into(), vec![], vec![], "placed".into());
    /// report.released("shop/b".into(), vec![], reason::DEADLINE, "late".into());
    /// let text = report.exposition();
    /// assert!(text.contains("winplace_place_placed_total 1\n"));
    /// assert!(text.contains("winplace_place_released_total{reason=\"deadline\"} 1\n"));
    /// assert!(text.contains("winplace_place_leading 0\n"));
    /// report.deleted();
    /// assert!(report.exposition().contains("winplace_place_deleted_total 1\n"));
    /// ```
    pub fn exposition(&self) -> String {
        let mut out = String::new();
        let _ = self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) -> std::fmt::Result {
        write_one(
            out,
            "winplace_place_placed_total",
            "counter",
            "Gated pods pinned and ungated.",
            self.placed.load(Ordering::Relaxed),
        )?;
        writeln!(
            out,
            "# HELP winplace_place_released_total Gated pods ungated without being placed, by reason (deadline, a registry error's kind, no-platform, refused, nothing-to-pin)."
        )?;
        writeln!(out, "# TYPE winplace_place_released_total counter")?;
        let released = self.released.lock().unwrap_or_else(|p| p.into_inner());
        let mut reasons: BTreeMap<&str, u64> = [
            reason::DEADLINE,
            reason::NO_PLATFORM,
            reason::REFUSED,
            reason::NOTHING_TO_PIN,
        ]
        .into_iter()
        .map(|r| (r, 0))
        .collect();
        for (r, n) in released.iter() {
            reasons.insert(r.as_str(), *n);
        }
        for (r, n) in reasons {
            writeln!(
                out,
                "winplace_place_released_total{{reason=\"{}\"}} {n}",
                escape(r)
            )?;
        }
        drop(released);
        write_one(
            out,
            "winplace_place_deleted_total",
            "counter",
            "Gated pods deleted before winplace's patch reached them (404).",
            self.deleted.load(Ordering::Relaxed),
        )?;
        write_one(
            out,
            "winplace_place_resolve_retries_total",
            "counter",
            "Image look-ups asked for again after a transient registry failure, within the pod's deadline.",
            self.resolve_retries.load(Ordering::Relaxed),
        )?;
        write_one(
            out,
            "winplace_place_conflicts_total",
            "counter",
            "Patches computed again from a fresh read of the pod after a conflict (409, or a failed test op: 422).",
            self.conflicts.load(Ordering::Relaxed),
        )?;
        write_one(
            out,
            "winplace_place_api_retries_total",
            "counter",
            "Kubernetes API requests asked again after a 429, a 5xx or no answer.",
            self.api_retries.load(Ordering::Relaxed),
        )?;
        write_one(
            out,
            "winplace_place_unrunnable_total",
            "counter",
            "Pods pinned to Windows builds no node runs (or no single build runs), left Pending with a Warning Event.",
            self.unrunnable.load(Ordering::Relaxed),
        )?;
        self.resolution
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .write(
                out,
                "winplace_place_resolution_seconds",
                "Time to read one gated pod's images from their registries.",
            )?;
        write_one(
            out,
            "winplace_place_leading",
            "gauge",
            "1 while this replica holds the placement Lease (only the holder places).",
            u8::from(self.leading.load(Ordering::Relaxed)),
        )?;
        Ok(())
    }
}

fn now() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}
