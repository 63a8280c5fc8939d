//! Liveness, readiness and metrics. The two probes are also served alone, on the probe listener
//! ([`crate::probes`]).

use crate::metrics::Exposition;
use crate::state::{AppState, NotReady};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, routing::get};
use std::sync::Mutex;

/// `GET /healthz`, `GET /readyz`, `GET /metrics`.
pub fn router() -> Router<AppState> {
    probes().route("/metrics", get(metrics))
}

/// `GET /healthz` and `GET /readyz` only: what the probe listener answers.
///
/// ```
/// use winplace::state::{AppState, Timing};
/// let state = AppState::new(winplace::source::demo::info(), Timing::default());
/// let app: axum::Router = winplace::routes::health::probes().with_state(state);
/// ```
pub fn probes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
}

/// What readiness was at the last probe, so that only changes are logged (a probe every few seconds
/// must not write a line each time). One per server ([`AppState::readiness_log`]), whichever listener
/// the probe came on.
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
}

impl ReadinessLog {
    /// Records `now`; returns it when it differs from the previous probe's (the first probe counts
    /// as a change).
    pub fn observe(&self, now: &Result<(), NotReady>) -> Option<Readiness> {
        let kind = match now {
            Ok(()) => Readiness::Ready,
            Err(NotReady::NotSynced(_)) => Readiness::NotSynced,
            Err(NotReady::Stale(_)) => Readiness::Stale,
            Err(NotReady::Rejected(_)) => Readiness::Rejected,
        };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        (last.replace(kind) != Some(kind)).then_some(kind)
    }
}

/// 200 once the first full list is audited, saying what is not current: a later list refused, a watch
/// failing (inside the grace period), a backlog of events not applied yet ("catching up: N events
/// behind"); 503 before (with what is failing, or why the first list was refused), and while a watch
/// has been failing past the grace period. Changes are logged once (ready at INFO, stale and refused
/// at WARN; the watch errors themselves are logged by the audit thread, once per backoff step).
async fn readyz(State(state): State<AppState>) -> Response {
    let readiness = state.readiness();
    match (state.readiness_log().observe(&readiness), &readiness) {
        (Some(Readiness::Ready), _) => tracing::info!("ready"),
        (Some(Readiness::NotSynced), _) => {
            tracing::info!("not ready: the first list of the cluster has not completed")
        }
        (Some(Readiness::Stale), Err(NotReady::Stale(why)))
        | (Some(Readiness::Rejected), Err(NotReady::Rejected(why))) => {
            tracing::warn!("not ready: {why}")
        }
        _ => {}
    }
    match readiness {
        Ok(()) => {
            // Ready, but say what is not current.
            let freshness = state.meta(&state.published()).freshness;
            let mut notes = Vec::new();
            if let Some(why) = freshness.rejected {
                notes.push(format!("showing the last complete state; {why}"));
            }
            if let Some(error) = freshness.error {
                notes.push(error);
            }
            if freshness.behind > 0 {
                notes.push(format!("catching up: {} events behind", freshness.behind));
            }
            if notes.is_empty() {
                "ready".into_response()
            } else {
                format!("ready ({})", notes.join("; ")).into_response()
            }
        }
        Err(NotReady::Rejected(why)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}")).into_response()
        }
        Err(NotReady::NotSynced(error)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            match error {
                Some(error) => {
                    format!("not ready: the first list of the cluster has not completed: {error}")
                }
                None => "not ready: the first list of the cluster has not completed".to_string(),
            },
        )
            .into_response(),
        Err(NotReady::Stale(why)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}")).into_response()
        }
    }
}

/// The state's counters and the published audit's gauges, rendered.
async fn metrics(State(state): State<AppState>) -> Response {
    let published = state.published();
    let (synced, stale) = state.sync_flags();
    let counters = state.metrics().counters();
    let mut text = crate::metrics::render(&Exposition {
        source: state.source().kind,
        counters: &counters,
        report: &published.report,
        objects: &published.objects,
        revision: published.revision,
        synced,
        stale,
    });
    if let Some(resolver) = state.image_resolver() {
        text.push_str(&resolver.stats().exposition());
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
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
