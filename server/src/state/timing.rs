//! How long a broken watch is trusted: the grace before the data is called stale (and `/readyz` fails),
//! and the quiet after which a failing watch is taken as recovered.

use std::time::Duration;

/// How long a broken watch is tolerated before the data is called stale and `/readyz` fails.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(60);

/// Without a new error for this long, a broken watch is taken as recovered: a failing watch reports
/// again at least every 2 minutes (its wait, at most 60 s, then a list that may take its full time
/// limit, 60 s by default), so an outage keeps reporting errors, while a resumed watch on a quiet
/// cluster reports nothing at all (a watch that makes progress is cleared at once:
/// [`crate::source::SourceEvent::WatchResumed`]).
pub const DEFAULT_RECOVERY: Duration = Duration::from_secs(150);

/// Freshness settings (shortened in tests).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// See [`DEFAULT_GRACE`].
    pub grace: Duration,
    /// See [`DEFAULT_RECOVERY`].
    pub recovery: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            grace: DEFAULT_GRACE,
            recovery: DEFAULT_RECOVERY,
        }
    }
}
