//! The HTTP application: routes composed from small handlers, with security headers, compression,
//! request timeouts (not on the event stream), a body limit and tracing.

use crate::state::AppState;
use axum::Router;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use std::net::SocketAddr;
use std::time::Duration;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// What the dashboard may load: its own scripts and wasm (`'wasm-unsafe-eval'` lets it compile
/// WebAssembly, nothing else), inline styles (Leptos sets `style` attributes), no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
base-uri 'none'; form-action 'self'";

/// Longest time a request (other than the event stream) may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest request body accepted (the API only has GET endpoints).
pub const BODY_LIMIT: usize = 64 * 1024;

/// The whole router.
pub fn router(state: AppState) -> Router {
    let timed = Router::new()
        .merge(crate::routes::health::router())
        .merge(crate::routes::api::router())
        .merge(crate::routes::images::router())
        .merge(crate::routes::assets::router())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    let header = |name: HeaderName, value: &'static str| {
        SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value))
    };
    Router::new()
        .merge(crate::routes::events::router())
        .merge(timed)
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(CompressionLayer::new())
        .layer(header(
            header::CONTENT_SECURITY_POLICY,
            CONTENT_SECURITY_POLICY,
        ))
        .layer(header(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header(header::X_FRAME_OPTIONS, "DENY"))
        .layer(header(header::REFERRER_POLICY, "no-referrer"))
        .layer(header(
            HeaderName::from_static("cross-origin-opener-policy"),
            "same-origin",
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Listens on `addr` until Ctrl-C or SIGTERM.
pub async fn serve(addr: SocketAddr, state: AppState) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    tracing::info!("winplace serving on http://{}", listener.local_addr()?);
    let on_shutdown = state.clone();
    axum::serve(listener, router(state))
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            on_shutdown.shut_down();
        })
        .await?;
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
