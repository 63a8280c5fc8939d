//! How a failing watch waits before it tries again: exponential steps with jitter (kube-rs's
//! [`ExponentialBackoff`], built on `backon`), capped, and started over only once the watch made
//! progress. With the defaults the waits are 1–2 s, 2–4 s, 4–8 s, … and at most 60 s.
//!
//! kube-rs's `default_backoff` restarts from its first step (0.8 s) on every item that is not an error,
//! and its watcher emits `Init` (not an error) before every list attempt: a list that keeps failing was
//! therefore retried every second or so, forever (docs/reference/watches.md §3). Here only progress (an
//! object listed, changed or deleted, or a list completed) starts the steps over.

use kube::runtime::utils::Backoff;
use kube::runtime::watcher::{self, ExponentialBackoff};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The first wait after an error.
pub const DEFAULT_FIRST_STEP: Duration = Duration::from_secs(1);

/// The longest wait between two attempts.
pub const DEFAULT_MAX_STEP: Duration = Duration::from_secs(60);

/// The steps of one watch's backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steps {
    /// The first wait (doubled after each further error).
    pub first: Duration,
    /// The cap.
    pub max: Duration,
}

impl Default for Steps {
    fn default() -> Self {
        Steps {
            first: DEFAULT_FIRST_STEP,
            max: DEFAULT_MAX_STEP,
        }
    }
}

/// Set when the watch made progress; read (and cleared) by the backoff.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<AtomicBool>);

impl Progress {
    /// Records one watcher item: anything but an error or the `Init` before a list attempt is progress.
    pub fn observe<K>(&self, item: &Result<watcher::Event<K>, watcher::Error>) {
        if matches!(item, Ok(event) if !matches!(event, watcher::Event::Init)) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    fn take(&self) -> bool {
        self.0.swap(false, Ordering::Relaxed)
    }
}

/// The backoff of one watch: `steps`, started over only after [`Progress`].
pub struct WatchBackoff {
    steps: ExponentialBackoff,
    progress: Progress,
}

impl WatchBackoff {
    /// A backoff of `steps` that starts over when `progress` says so.
    pub fn new(steps: Steps, progress: Progress) -> Self {
        // backon's jitter adds up to the step itself: steps doubling up to half the cap keep every
        // wait at or under the cap.
        let builder = backon::ExponentialBuilder::default()
            .with_min_delay(steps.first.min(steps.max / 2))
            .with_max_delay(steps.max / 2)
            .with_factor(2.0)
            .with_jitter()
            .without_max_times();
        WatchBackoff {
            steps: ExponentialBackoff::from(builder),
            progress,
        }
    }
}

impl Iterator for WatchBackoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        self.steps.next()
    }
}

impl Backoff for WatchBackoff {
    /// Called by kube-rs after every item that is not an error: starts over only after progress.
    fn reset(&mut self) {
        if self.progress.take() {
            self.steps.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Node;

    #[test]
    fn steps_grow_to_the_cap_and_start_over_only_after_progress() {
        let progress = Progress::default();
        let steps = Steps {
            first: Duration::from_secs(1),
            max: Duration::from_secs(60),
        };
        let mut backoff = WatchBackoff::new(steps, progress.clone());
        let mut waits = Vec::new();
        for _ in 0..9 {
            // kube-rs calls reset after the `Init` that precedes each list attempt.
            progress.observe::<Node>(&Ok(watcher::Event::Init));
            backoff.reset();
            waits.push(backoff.next().unwrap_or_default());
        }
        // Step n waits between 2^n s and twice that (jitter), the steps stop doubling at 30 s, and no
        // wait is longer than the cap.
        for (n, wait) in waits.iter().enumerate() {
            let step = Duration::from_secs(1 << n).min(Duration::from_secs(30));
            assert!(*wait >= step && *wait <= 2 * step, "step {n}: {waits:?}");
        }
        // An object listed: the next error starts from the first step again.
        progress.observe::<Node>(&Ok(watcher::Event::InitApply(Node::default())));
        backoff.reset();
        assert!(backoff.next().is_some_and(|d| d <= Duration::from_secs(2)));
    }
}
