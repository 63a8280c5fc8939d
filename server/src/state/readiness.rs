//! Readiness: why the server is not ready ([`NotReady`]), and what it was at the last probe
//! ([`ReadinessLog`]), so that `/readyz` logs only its changes, whichever listener the probe came on.

use std::sync::Mutex;

/// Why the server is not ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// The first full list has not completed; what is failing, if anything.
    NotSynced(Option<String>),
    /// The first full list was not published (a snapshot cut short, or not a cluster): why.
    Rejected(String),
    /// The watch has been failing for longer than the grace period.
    Stale(String),
    /// `serve --place` cannot place pods (a cache it cannot list, its controller ended): why.
    Placement(String),
}

/// What readiness was at the last probe, so that only changes are logged (a probe every few seconds
/// must not write a line each time). One per server ([`crate::state::AppState::readiness_log`]),
/// whichever listener the probe came on.
#[derive(Debug, Default)]
pub struct ReadinessLog {
    last: Mutex<Option<Readiness>>,
}

/// Readiness without its reason's details (those change from probe to probe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Ready.
    Ready,
    /// The first list has not completed.
    NotSynced,
    /// The watch has been failing past the grace period.
    Stale,
    /// The first list was refused (not a cluster).
    Rejected,
    /// The placement controller cannot place.
    Placement,
}

impl ReadinessLog {
    /// Records `now`; returns it when it differs from the previous probe's (the first probe counts
    /// as a change).
    ///
    /// ```
    /// use winplace::state::readiness::{NotReady, Readiness, ReadinessLog};
    /// let log = ReadinessLog::default();
    /// assert_eq!(log.observe(&Err(NotReady::NotSynced(None))), Some(Readiness::NotSynced));
    /// // What fails changes: still the same state.
    /// let forbidden = Some("cannot list pods: 403 Forbidden".to_string());
    /// assert_eq!(log.observe(&Err(NotReady::NotSynced(forbidden))), None);
    /// ```
    pub fn observe(&self, now: &Result<(), NotReady>) -> Option<Readiness> {
        let kind = match now {
            Ok(()) => Readiness::Ready,
            Err(NotReady::NotSynced(_)) => Readiness::NotSynced,
            Err(NotReady::Stale(_)) => Readiness::Stale,
            Err(NotReady::Rejected(_)) => Readiness::Rejected,
            Err(NotReady::Placement(_)) => Readiness::Placement,
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        (last.replace(kind) != Some(kind)).then_some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_of_readiness_are_reported() {
        let log = ReadinessLog::default();
        let stale = |why: &str| Err(NotReady::Stale(why.into()));
        let rows: [(Result<(), NotReady>, Option<Readiness>); 7] = [
            (Err(NotReady::NotSynced(None)), Some(Readiness::NotSynced)),
            // What fails changes; still the same state.
            (
                Err(NotReady::NotSynced(Some(
                    "cannot list pods: 403 Forbidden".into(),
                ))),
                None,
            ),
            (Ok(()), Some(Readiness::Ready)),
            (Ok(()), None),
            (stale("watch failing for 61 s"), Some(Readiness::Stale)),
            // The reason's text changes every probe; still the same state.
            (stale("watch failing for 66 s"), None),
            (Ok(()), Some(Readiness::Ready)),
        ];
        for (i, (now, want)) in rows.into_iter().enumerate() {
            assert_eq!(log.observe(&now), want, "probe {i}");
        }
    }
}
