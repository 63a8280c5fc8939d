//! The probe listener (`serve --probe-listen ADDR`): `/healthz` and `/readyz` on their own address,
//! accepted and answered by their own thread and Tokio runtime; and the same kind of listener for
//! `/metrics` alone (`serve --metrics-listen ADDR`), so that a scraper is let in to a port that serves
//! neither the dashboard nor the API.
//!
//! On the main listener a probe shares everything with the load: the kernel's queue of connections
//! waiting for `accept` (under the load script 3,000 reconnecting clients overflowed it and a probe's
//! SYN was dropped: 1 s until it was sent again) and the runtime's workers. Here no client of the
//! dashboard or the API can reach the queue or the thread, so nothing they do delays a probe; the probes
//! read the same state (`/readyz` a short mutex, `/healthz` nothing).

use crate::http::conn::{ConnectionLimits, serve_listener};
use crate::http::hosts::AllowedHosts;
use crate::state::AppState;
use std::net::SocketAddr;

/// The probe listener, running until it is dropped.
#[derive(Debug)]
pub struct ProbeServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProbeServer {
    /// Listens on `addr` (bound before this returns, so that a taken port is an error here) and answers
    /// the probes from `state` on a thread of its own, for the host names `allowed` accepts.
    ///
    /// ```
    /// use std::io::{Read, Write};
    /// use winplace::state::{AppState, Timing};
    /// let state = AppState::new(winplace::source::demo::info(), Timing::default());
    /// let addr = "127.0.0.1:0".parse().unwrap();
    /// let allowed = winplace::http::hosts::AllowedHosts::for_listen(&addr, &[]);
    /// let probes = winplace::http::probes::ProbeServer::start(addr, state, allowed).unwrap();
    /// let mut stream = std::net::TcpStream::connect(probes.addr()).unwrap();
    /// stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    /// let mut answer = String::new();
    /// stream.read_to_string(&mut answer).unwrap();
    /// assert!(answer.starts_with("HTTP/1.1 200") && answer.ends_with("ok"));
    /// ```
    pub fn start(addr: SocketAddr, state: AppState, allowed: AllowedHosts) -> anyhow::Result<Self> {
        Self::start_with(
            addr,
            crate::http::routes::health::probes(),
            Served::Probes,
            state,
            allowed,
        )
    }

    /// `/metrics` alone on `addr`, on a thread of its own, as [`ProbeServer::start`] serves the probes.
    pub fn start_metrics(
        addr: SocketAddr,
        state: AppState,
        allowed: AllowedHosts,
    ) -> anyhow::Result<Self> {
        Self::start_with(
            addr,
            crate::http::routes::health::metrics_only(),
            Served::Metrics,
            state,
            allowed,
        )
    }

    fn start_with(
        addr: SocketAddr,
        routes: axum::Router<AppState>,
        served: Served,
        state: AppState,
        allowed: AllowedHosts,
    ) -> anyhow::Result<Self> {
        let listener = std::net::TcpListener::bind(addr)
            .map_err(|e| anyhow::anyhow!("cannot listen for {} on {addr}: {e}", served.what()))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let app =
            crate::http::security_headers::with_security_headers(routes.with_state(state).layer(
                axum::middleware::from_fn_with_state(allowed, crate::http::hosts::check_host),
            ));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(served.thread().into())
            .spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => {
                            serve_listener(listener, app, ConnectionLimits::default(), async {
                                let _ = stopped.await;
                            })
                            .await
                        }
                        Err(e) => tracing::error!("the {} listener failed: {e}", served.what()),
                    }
                })
            })?;
        tracing::info!("{} on http://{addr}", served.paths());
        Ok(ProbeServer {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when it was 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// What a side listener answers.
#[derive(Debug, Clone, Copy)]
enum Served {
    Probes,
    Metrics,
}

impl Served {
    fn what(self) -> &'static str {
        match self {
            Served::Probes => "probes",
            Served::Metrics => "metrics",
        }
    }

    fn paths(self) -> &'static str {
        match self {
            Served::Probes => "probes (/healthz, /readyz)",
            Served::Metrics => "metrics (/metrics)",
        }
    }

    fn thread(self) -> &'static str {
        match self {
            Served::Probes => "winplace-probes",
            Served::Metrics => "winplace-metrics",
        }
    }
}

impl Drop for ProbeServer {
    /// Stops accepting, lets the probes in progress finish (at most [`crate::http::conn::SHUTDOWN_GRACE`]) and
    /// joins the thread.
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
