//! Liveness, readiness and metrics. The two probes are also served alone, on the probe listener, and
//! the metrics alone on the metrics listener ([`crate::http::probes`]).

use crate::metrics::Exposition;
use crate::state::AppState;
use crate::state::readiness::{NotReady, Readiness};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, routing::get};

/// `GET /healthz`, `GET /readyz`, `GET /metrics`.
pub fn router() -> Router<AppState> {
    probes().route("/metrics", get(metrics))
}

/// `GET /metrics` only: what the metrics listener (`serve --metrics-listen`) answers.
pub fn metrics_only() -> Router<AppState> {
    Router::new().route("/metrics", get(metrics))
}

/// `GET /healthz` and `GET /readyz` only: what the probe listener answers.
///
/// ```
/// use winplace::state::{AppState, Timing};
/// let state = AppState::new(winplace::source::demo::info(), Timing::default());
/// let app: axum::Router = winplace::http::routes::health::probes().with_state(state);
/// ```
pub fn probes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
}

/// 200 once the first full list is audited, saying what is not current: a later list refused, a watch
/// failing (inside the grace period), a backlog of events not applied yet ("catching up: N events
/// behind"); 503 before (with what is failing, or why the first list was refused), while a watch
/// has been failing past the grace period, and while `serve --place` cannot place pods. Changes are logged once (ready at INFO, stale and refused
/// at WARN; the watch errors themselves are logged by the audit thread, once per backoff step).
async fn readyz(State(state): State<AppState>) -> Response {
    let readiness = state.readiness();
    match (state.readiness_log().observe(&readiness), &readiness) {
        (Some(Readiness::Ready), _) => tracing::info!("ready"),
        (Some(Readiness::NotSynced), _) => {
            tracing::info!("not ready: the first list of the cluster has not completed")
        }
        (Some(Readiness::Stale), Err(NotReady::Stale(why)))
        | (Some(Readiness::Rejected), Err(NotReady::Rejected(why)))
        | (Some(Readiness::Placement), Err(NotReady::Placement(why))) => {
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
        Err(NotReady::Stale(why)) | Err(NotReady::Placement(why)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}")).into_response()
        }
    }
}

/// The state's counters and the published audit's gauges, with the image resolver's and the placement
/// controller's series when they run: a registry built for this scrape, encoded by prometheus-client.
async fn metrics(State(state): State<AppState>) -> Response {
    let published = state.published();
    let (synced, stale) = state.sync_flags();
    let mut registry = prometheus_client::registry::Registry::default();
    crate::metrics::register(
        &mut registry,
        &Exposition {
            source: state.source().kind,
            metrics: state.metrics(),
            report: &published.report,
            objects: &published.objects,
            revision: published.revision,
            synced,
            stale,
            gated: published.gated,
            now: k8s_openapi::jiff::Timestamp::now(),
        },
    );
    // One resolver's series: `--resolve-images`' (which `--place` shares), else `--place`'s own.
    let place = state.place_report();
    if let Some(resolver) = state
        .image_resolver()
        .or_else(|| place.map(|p| p.resolver()))
    {
        resolver.register(&mut registry);
    }
    if let Some(place) = place {
        place.register(&mut registry);
    }
    for part in state.exported() {
        part.register(&mut registry);
    }
    (
        [(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)],
        crate::metrics::encode(&registry),
    )
        .into_response()
}
