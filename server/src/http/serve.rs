//! Serving the router: the listener and, when asked, the probe listener, until Ctrl-C or SIGTERM, then a
//! graceful shutdown that ends the event streams first.

use crate::http::router::router_for;
use crate::state::AppState;
use std::net::SocketAddr;

/// Where [`serve`] listens.
#[derive(Debug, Clone)]
pub struct Listen {
    /// The dashboard, the API and (also) the probes.
    pub addr: SocketAddr,
    /// The probes alone, on their own thread ([`crate::http::probes`]), when given.
    pub probes: Option<SocketAddr>,
    /// `/metrics` alone, on its own thread ([`crate::http::probes`]), when given.
    pub metrics: Option<SocketAddr>,
    /// Host names answered besides the defaults ([`crate::http::hosts::AllowedHosts::for_listen`]).
    pub allowed_hosts: Vec<String>,
    /// Connections served at once ([`crate::http::conn::DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
}

/// Listens until Ctrl-C or SIGTERM.
pub async fn serve(listen: Listen, state: AppState) -> anyhow::Result<()> {
    let addr = listen.addr;
    let allowed = crate::http::hosts::AllowedHosts::for_listen(&addr, &listen.allowed_hosts);
    if let Some(warning) = crate::http::hosts::exposure_warning(&addr, &listen.allowed_hosts) {
        tracing::warn!("{warning}");
    }
    // Before the main listener, so that the kubelet's first probe finds it.
    let _probes = listen
        .probes
        .map(|probes| {
            let allowed =
                crate::http::hosts::AllowedHosts::for_listen(&probes, &listen.allowed_hosts);
            crate::http::probes::ProbeServer::start(probes, state.clone(), allowed)
        })
        .transpose()?;
    let _metrics = listen
        .metrics
        .map(|metrics| {
            let allowed =
                crate::http::hosts::AllowedHosts::for_listen(&metrics, &listen.allowed_hosts);
            crate::http::probes::ProbeServer::start_metrics(metrics, state.clone(), allowed)
        })
        .transpose()?;
    let listener = crate::http::conn::bind(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    tracing::info!("winplace serving on http://{}", listener.local_addr()?);
    let on_shutdown = state.clone();
    crate::http::conn::serve_listener(
        listener,
        router_for(state, allowed),
        crate::http::conn::ConnectionLimits {
            max_connections: listen.max_connections,
            ..crate::http::conn::ConnectionLimits::default()
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
