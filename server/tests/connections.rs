//! Connections through a real socket: slow and idle clients are closed by the header-read timeout,
//! normal keep-alive still works, a loopback server answers loopback host names only (and one `Host`
//! header), connections past the limit are answered 503, and the probe listener answers when the main
//! one cannot.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use winplace::http::conn::{ConnectionLimits, serve_listener};
use winplace::http::hosts::AllowedHosts;
use winplace::state::{AppState, Timing};

/// Short, so that the tests run quickly; what is tested is that the connection is closed at all.
const HEADER_READ_TIMEOUT: Duration = Duration::from_millis(300);
/// Guard against a hang: far longer than the timeout above.
const GUARD: Duration = Duration::from_secs(20);

/// Starts a server on 127.0.0.1:0 that stops when the returned sender is dropped.
async fn start() -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start_with(ConnectionLimits {
        header_read_timeout: HEADER_READ_TIMEOUT,
        ..ConnectionLimits::default()
    })
    .await
}

/// [`start`] with `limits`.
async fn start_with(
    limits: ConnectionLimits,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let app = winplace::http::router::router_for(state, AllowedHosts::for_listen(&addr, &[]));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve_listener(listener, app, limits, async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// Reads until the server closes the connection; what was read.
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(GUARD, stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server did not close the connection");
    String::from_utf8_lossy(&out).to_string()
}

/// Reads one response with a `Content-Length` body (the connection stays open).
async fn read_response(stream: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(GUARD, stream.read(&mut chunk))
            .await
            .expect("an answer")
            .expect("read");
        assert!(n > 0, "closed before the answer was complete");
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if body.len() >= length {
                return text;
            }
        }
    }
}

#[tokio::test]
async fn a_client_that_sends_its_headers_too_slowly_is_closed() {
    let (addr, _stop) = start().await;
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        .await
        .expect("write");
    // The blank line that ends the head never comes.
    let got = read_to_close(&mut stream).await;
    assert!(!got.contains("200 OK"), "{got}");
}

#[tokio::test]
async fn a_client_that_connects_and_sends_nothing_is_closed() {
    let (addr, _stop) = start().await;
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    read_to_close(&mut stream).await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_its_answers() {
    let (addr, _stop) = start().await;
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    // Two requests on one connection: keep-alive works while the client is active.
    for _ in 0..2 {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("write");
        let answer = read_response(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
    // Then it goes quiet.
    let rest = read_to_close(&mut stream).await;
    assert!(
        rest.is_empty() || rest.starts_with("HTTP/1.1 408"),
        "{rest:?}"
    );
}

#[tokio::test]
async fn a_loopback_server_refuses_other_host_names() {
    let (addr, _stop) = start().await;
    for (host, status) in [
        ("localhost:1234", "200"),
        ("127.0.0.1", "200"),
        ("[::1]:8080", "200"),
        ("rebind.attacker.example:8080", "421"),
    ] {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let request =
            format!("GET /api/rules HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        let answer = read_to_close(&mut stream).await;
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{host}: {answer}"
        );
        if status == "421" {
            assert!(answer.contains("\"error\""), "{answer}");
            assert!(answer.contains("--allowed-host"), "{answer}");
        }
    }
}

/// RFC 9112 §3.2: a request with two `Host` headers is answered 400, even when both are allowed names.
#[tokio::test]
async fn two_host_headers_are_answered_400() {
    let (addr, _stop) = start().await;
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            b"GET /api/rules HTTP/1.1\r\nHost: localhost\r\nHost: rebind.attacker.example\r\nConnection: close\r\n\r\n",
        )
        .await
        .expect("write");
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("more than one Host header"), "{answer}");
}

/// Issue 29.6: past `max_connections` connections, a new one is answered 503 (JSON, `Retry-After`, the
/// security headers) and closed; when one closes, the next is served again.
#[tokio::test]
async fn connections_past_the_limit_are_answered_503() {
    // A header timeout far longer than the test, so that the held connections stay.
    let (addr, _stop) = start_with(ConnectionLimits {
        header_read_timeout: GUARD,
        max_connections: 2,
    })
    .await;
    let first = TcpStream::connect(addr).await.expect("connect");
    let mut second = TcpStream::connect(addr).await.expect("connect");
    // The second is served: the limit is not reached with it.
    second
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("write");
    assert!(read_response(&mut second).await.starts_with("HTTP/1.1 200"));
    let mut third = TcpStream::connect(addr).await.expect("connect");
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("write");
    let refused = read_to_close(&mut third).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    let lower = refused.to_ascii_lowercase();
    for needle in [
        "retry-after: 1",
        "content-type: application/json",
        "x-content-type-options: nosniff",
        "cross-origin-resource-policy: same-origin",
        "--max-connections",
    ] {
        assert!(lower.contains(needle), "{needle}: {refused}");
    }
    // One of the two goes away: a new connection is served again (once the server has seen it close).
    drop(first);
    let start = std::time::Instant::now();
    loop {
        let mut next = TcpStream::connect(addr).await.expect("connect");
        next.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .expect("write");
        let answer = read_to_close(&mut next).await;
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(
            start.elapsed() < GUARD,
            "the closed connection's place never came back"
        );
        tokio::task::yield_now().await;
    }
}

/// `GET path` on a fresh connection (std, outside any runtime); the answer, or `None` when none came
/// within `wait`.
fn ask_blocking(addr: std::net::SocketAddr, path: &str, wait: Duration) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(wait)).expect("timeout");
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("write");
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => Some(String::from_utf8_lossy(&answer).to_string()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            None
        }
        Err(e) => panic!("read: {e}"),
    }
}

/// `request` (raw) on a fresh connection; the whole answer.
fn send_blocking(addr: std::net::SocketAddr, request: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(GUARD)).expect("timeout");
    stream.write_all(request.as_bytes()).expect("write");
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).expect("read");
    String::from_utf8_lossy(&answer).to_string()
}

/// Issue 17.1: the probes must come from a path no load can starve. With every worker of the main
/// runtime busy, `/healthz` on the main listener waits; on the probe listener (its own thread and
/// runtime) `/healthz` and `/readyz` answer at once.
#[test]
fn the_probe_listener_answers_while_every_main_worker_is_busy() {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let main = runtime
        .block_on(async { winplace::http::conn::bind("127.0.0.1:0".parse().expect("addr")) })
        .expect("bind");
    let main_addr = main.local_addr().expect("addr");
    let app = winplace::http::router::router_for(
        state.clone(),
        AllowedHosts::for_listen(&main_addr, &[]),
    );
    runtime.spawn(serve_listener(
        main,
        app,
        ConnectionLimits::default(),
        std::future::pending(),
    ));
    let probe_addr = "127.0.0.1:0".parse().expect("addr");
    let probes = winplace::http::probes::ProbeServer::start(
        probe_addr,
        state.clone(),
        AllowedHosts::for_listen(&probe_addr, &[]),
    )
    .expect("probe listener");
    // Both answer while nothing is busy.
    let ok = |answer: Option<String>| answer.is_some_and(|a| a.starts_with("HTTP/1.1 200"));
    assert!(ok(ask_blocking(main_addr, "/healthz", GUARD)));
    assert!(ok(ask_blocking(probes.addr(), "/healthz", GUARD)));

    // Every worker of the main runtime busy (as a saturated server's are), until released.
    let (started, is_started) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    runtime.spawn(async move {
        let _ = started.send(());
        let _ = released.recv_timeout(GUARD);
    });
    is_started
        .recv_timeout(GUARD)
        .expect("the busy task started");
    assert_eq!(
        ask_blocking(main_addr, "/healthz", Duration::from_millis(500)),
        None,
        "the main listener answered although its only worker is busy: the test proves nothing"
    );
    let health = ask_blocking(probes.addr(), "/healthz", GUARD);
    assert!(ok(health.clone()), "{health:?}");
    // Not synced yet: 503 with the reason, answered all the same.
    let ready = ask_blocking(probes.addr(), "/readyz", GUARD).expect("/readyz answered");
    assert!(
        ready.starts_with("HTTP/1.1 503") && ready.contains("first list"),
        "{ready}"
    );
    // Only the probes are there; every answer, a 404 or a 405 included, with the security headers.
    let other = ask_blocking(probes.addr(), "/api/summary", GUARD).expect("answered");
    assert!(other.starts_with("HTTP/1.1 404"), "{other}");
    assert!(
        other.to_ascii_lowercase().contains("x-frame-options: deny"),
        "{other}"
    );
    let post = send_blocking(
        probes.addr(),
        "POST /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert!(post.starts_with("HTTP/1.1 405"), "{post}");
    for (name, value) in &winplace::http::security_headers::SECURITY_HEADERS {
        assert!(
            post.to_ascii_lowercase().contains(&format!(
                "{}: {}",
                name.as_str(),
                value.to_ascii_lowercase()
            )),
            "{name}: {post}"
        );
    }
    let _ = release.send(());
    assert!(ok(ask_blocking(main_addr, "/healthz", GUARD)));
    drop(probes);
    runtime.shutdown_timeout(Duration::from_secs(1));
}

/// `serve --metrics-listen`: `/metrics` alone on its own address, so that a scraper let in to that port
/// reaches neither the dashboard, the API nor the probes.
#[test]
fn the_metrics_listener_answers_metrics_and_nothing_else() {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let addr = "127.0.0.1:0".parse().expect("addr");
    let metrics = winplace::http::probes::ProbeServer::start_metrics(
        addr,
        state,
        AllowedHosts::for_listen(&addr, &[]),
    )
    .expect("metrics listener");
    let answer = ask_blocking(metrics.addr(), "/metrics", GUARD).expect("/metrics answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("winplace_"), "{answer}");
    for path in ["/healthz", "/readyz", "/api/summary", "/"] {
        let other = ask_blocking(metrics.addr(), path, GUARD).expect("answered");
        assert!(other.starts_with("HTTP/1.1 404"), "{path}: {other}");
    }
}
