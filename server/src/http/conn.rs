//! Accepting connections: HTTP/1.1 through hyper with a header-read timeout that also closes idle
//! keep-alive connections, and a graceful shutdown bounded in time.
//!
//! hyper starts the header-read timer whenever it waits for a request head: on a new connection and
//! again after each response, so a client that sends its headers slowly and a client that sits on an
//! idle keep-alive connection are both closed when it fires. A response in progress (the event stream)
//! is not affected.
//!
//! [`bind`] asks the kernel for a longer queue of connections waiting for `accept` than Tokio's
//! default, so that a burst of clients does not drop other clients' connection attempts (the probes').
//!
//! At most [`ConnectionLimits::max_connections`] connections are served at once (`serve
//! --max-connections`, default [`DEFAULT_MAX_CONNECTIONS`]). A connection past that is answered
//! `503 Service Unavailable` with `Retry-After` and closed; at most [`MAX_REFUSING`] such answers are
//! in progress at once, and a connection past those too is closed without an answer, so that a flood
//! costs a bounded number of tasks and descriptors.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::response::IntoResponse as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket};

/// How long a client may take to send a request head, and how long a keep-alive connection may stay
/// idle between requests.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a shutdown waits for answers in progress before it drops the remaining connections.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Pause after a failed `accept` (out of file descriptors, …) so that the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Connections the kernel keeps waiting for `accept` (it caps this at `net.core.somaxconn`, 4,096 by
/// default since Linux 5.4). Under the load script, 3,000 idle clients closed by the header-read timeout
/// reconnected at once and overflowed Tokio's default of 1,024: the kernel dropped the SYNs that did
/// not fit, the probes' among them, and each such client waited 1 s for its SYN to be sent again.
pub const LISTEN_BACKLOG: u32 = 4096;

/// A listener on `addr` with a queue of [`LISTEN_BACKLOG`] pending connections.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let listener = winplace::http::conn::bind("127.0.0.1:0".parse().unwrap()).unwrap();
/// assert!(listener.local_addr().unwrap().port() > 0);
/// # });
/// ```
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does: a restarted server can listen again at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The default of `serve --max-connections`: the length of the accept queue, above the 3,700 clients of
/// the load script (README "Numbers"). The process's descriptor limit (`ulimit -n`) must allow it.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// Refusals (503) in progress at once; past them a connection is closed without an answer.
pub const MAX_REFUSING: usize = 64;

/// How long a refused connection may take to send its request head before it is closed unanswered.
const REFUSAL_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// Connection limits of [`serve_listener`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// Connections served at once; more are answered 503.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: HEADER_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// A counted place among the connections (or refusals) in progress, given back on drop.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// A place when fewer than `limit` are taken.
    fn take(count: &Arc<AtomicUsize>, limit: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(count.clone()))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The answer to every request of a connection past the limit: a JSON 503 with `Retry-After`, the
/// security headers every answer carries, and `Connection: close`.
fn busy_answer(limit: usize) -> axum::response::Response {
    let mut response = crate::http::error::ApiError::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "{limit} connections are open, the most this server serves at once (--max-connections): \
             try again later"
        ),
    )
    .into_response();
    let headers = response.headers_mut();
    for (name, value) in &crate::http::security_headers::SECURITY_HEADERS {
        headers.insert(name.clone(), axum::http::HeaderValue::from_static(value));
    }
    headers.insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    response
}

/// Serves `app` on `listener` until `shutdown` completes, then lets answers in progress finish for at
/// most [`SHUTDOWN_GRACE`].
pub async fn serve_listener(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot accept a connection");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = Slot::take(&open, limits.max_connections) else {
            refuse(stream, peer, limits.max_connections, &refusing);
            continue;
        };
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout);
        let connection =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("shutdown: connections still open after {SHUTDOWN_GRACE:?} were dropped");
    }
}

/// Answers a connection past the limit with [`busy_answer`] (one request, then closed), or closes it
/// at once when [`MAX_REFUSING`] refusals are already in progress.
fn refuse(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    limit: usize,
    refusing: &Arc<AtomicUsize>,
) {
    let Some(slot) = Slot::take(refusing, MAX_REFUSING) else {
        tracing::debug!(%peer, "connection closed unanswered: the connection limit is reached");
        return;
    };
    tracing::debug!(%peer, limit, "connection refused with 503: the connection limit is reached");
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(REFUSAL_HEADER_TIMEOUT)
        .keep_alive(false);
    let service = hyper::service::service_fn(move |_request| async move {
        Ok::<_, std::convert::Infallible>(busy_answer(limit))
    });
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::spawn(async move {
        let _ = connection.await;
        drop(slot);
    });
}
