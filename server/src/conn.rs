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

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
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
/// let listener = winplace::conn::bind("127.0.0.1:0".parse().unwrap()).unwrap();
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

/// Connection limits of [`serve_listener`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: HEADER_READ_TIMEOUT,
        }
    }
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
