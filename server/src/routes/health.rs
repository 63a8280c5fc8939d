//! Liveness, readiness and metrics.

use crate::metrics::Exposition;
use crate::state::{AppState, NotReady};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, routing::get};

/// `GET /healthz`, `GET /readyz`, `GET /metrics`.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

/// 200 once the first full list is audited; 503 before, and while the watch has been failing past the
/// grace period.
async fn readyz(State(state): State<AppState>) -> Response {
    match state.readiness() {
        Ok(()) => "ready".into_response(),
        Err(NotReady::NotSynced) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "not ready: the first list of the cluster has not completed",
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
