//! The HTTP application: routes composed from small handlers, with security headers, compression,
//! request timeouts (not on the event stream), a body limit, JSON errors under `/api/` and tracing.

use crate::answers::Precompressed;
pub use crate::security_headers::{
    CONTENT_SECURITY_POLICY, SECURITY_HEADERS, with_security_headers,
};
use crate::state::AppState;
use axum::Router;
use axum::http::{Extensions, HeaderMap, StatusCode, Version};
use std::net::SocketAddr;
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
        .merge(crate::routes::health::router())
        .merge(crate::routes::api::router())
        .merge(crate::routes::images::router())
        .merge(crate::routes::placements::router())
        .merge(crate::routes::assets::router())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    Router::new()
        .merge(crate::routes::events::router())
        .merge(timed)
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        // Around every error producer (router, timeout, body limit), inside compression so that
        // error bodies are read before they are compressed.
        .layer(axum::middleware::from_fn(crate::error::json_errors))
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
/// `Host` check, every answer with [`SECURITY_HEADERS`].
pub fn router_for(state: AppState, allowed: crate::hosts::AllowedHosts) -> Router {
    with_security_headers(routes(state).layer(axum::middleware::from_fn_with_state(
        allowed,
        crate::hosts::check_host,
    )))
}

/// Where [`serve`] listens.
#[derive(Debug, Clone)]
pub struct Listen {
    /// The dashboard, the API and (also) the probes.
    pub addr: SocketAddr,
    /// The probes alone, on their own thread ([`crate::probes`]), when given.
    pub probes: Option<SocketAddr>,
    /// `/metrics` alone, on its own thread ([`crate::probes`]), when given.
    pub metrics: Option<SocketAddr>,
    /// Host names answered besides the defaults ([`crate::hosts::AllowedHosts::for_listen`]).
    pub allowed_hosts: Vec<String>,
    /// Connections served at once ([`crate::conn::DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
}

/// Listens until Ctrl-C or SIGTERM.
pub async fn serve(listen: Listen, state: AppState) -> anyhow::Result<()> {
    let addr = listen.addr;
    let allowed = crate::hosts::AllowedHosts::for_listen(&addr, &listen.allowed_hosts);
    if let Some(warning) = crate::hosts::exposure_warning(&addr, &listen.allowed_hosts) {
        tracing::warn!("{warning}");
    }
    // Before the main listener, so that the kubelet's first probe finds it.
    let _probes = listen
        .probes
        .map(|probes| {
            let allowed = crate::hosts::AllowedHosts::for_listen(&probes, &listen.allowed_hosts);
            crate::probes::ProbeServer::start(probes, state.clone(), allowed)
        })
        .transpose()?;
    let _metrics = listen
        .metrics
        .map(|metrics| {
            let allowed = crate::hosts::AllowedHosts::for_listen(&metrics, &listen.allowed_hosts);
            crate::probes::ProbeServer::start_metrics(metrics, state.clone(), allowed)
        })
        .transpose()?;
    let listener =
        crate::conn::bind(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    tracing::info!("winplace serving on http://{}", listener.local_addr()?);
    let on_shutdown = state.clone();
    crate::conn::serve_listener(
        listener,
        router_for(state, allowed),
        crate::conn::ConnectionLimits {
            max_connections: listen.max_connections,
            ..crate::conn::ConnectionLimits::default()
        },
        async move {
            shutdown_signal().await;
            // Ends the event streams, so that the graceful shutdown does not wait for them.
            on_shutdown.shut_down();
        },
    )
    .await;
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
}
