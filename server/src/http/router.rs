//! The router: routes composed from small handlers, with security headers, compression, request
//! timeouts (not on the event stream), a body limit, JSON errors under `/api/` and tracing.

use crate::http::security_headers::with_security_headers;
use crate::state::AppState;
use crate::state::answers::Precompressed;
use axum::Router;
use axum::http::{Extensions, HeaderMap, StatusCode, Version};
use std::time::Duration;
use tower_http::classify::ServerErrorsFailureClass;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, Predicate};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Longest time a request (other than the event stream) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest request body accepted (the API only has GET endpoints).
pub const BODY_LIMIT: usize = 64 * 1024;

/// The whole router.
pub fn router(state: AppState) -> Router {
    with_security_headers(routes(state))
}

/// The routes and their layers, without the security headers (added outermost by [`router`] and
/// [`router_for`], so that the `Host` check's answers carry them too).
fn routes(state: AppState) -> Router {
    let timed = Router::new()
        .merge(crate::http::routes::health::router())
        .merge(crate::http::routes::api::router())
        .merge(crate::http::routes::images::router())
        .merge(crate::http::routes::placements::router())
        .merge(crate::http::routes::assets::router())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    Router::new()
        .merge(crate::http::routes::events::router())
        .merge(timed)
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        // Around every error producer (router, timeout, body limit), inside compression so that
        // error bodies are read before they are compressed.
        .layer(axum::middleware::from_fn(crate::http::error::json_errors))
        // The heavy API answers come compressed from their cache (`answers::Precompressed`).
        .layer(
            CompressionLayer::new().compress_when(DefaultPredicate::new().and(
                |_: StatusCode, _: Version, _: &HeaderMap, extensions: &Extensions| {
                    extensions.get::<Precompressed>().is_none()
                },
            )),
        )
        .layer(TraceLayer::new_for_http().on_failure(log_failure))
        .with_state(state)
}

/// Logs a failed answer: 503 (not ready, or shedding load) at DEBUG, because a probe or a client
/// meets it many times a second and the state change itself is logged once where it happens; other
/// server errors at ERROR.
fn log_failure(class: ServerErrorsFailureClass, latency: Duration, _span: &tracing::Span) {
    match class {
        ServerErrorsFailureClass::StatusCode(StatusCode::SERVICE_UNAVAILABLE) => {
            tracing::debug!(?latency, "answered 503 Service Unavailable")
        }
        other => tracing::error!(?latency, "answer failed: {other}"),
    }
}

/// The router a server listening with `allowed` host names answers with: the routes behind the
/// `Host` check, every answer with [`crate::http::security_headers::SECURITY_HEADERS`].
pub fn router_for(state: AppState, allowed: crate::http::hosts::AllowedHosts) -> Router {
    with_security_headers(routes(state).layer(axum::middleware::from_fn_with_state(
        allowed,
        crate::http::hosts::check_host,
    )))
}
