//! `GET` over a plain socket, for the tests that run the real binary as a server.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

/// Asks `GET path` of the server at `addr`, waiting at most `guard` for the answer; the status code and
/// the whole answer (status line, headers, body).
pub fn get(addr: &str, path: &str, guard: Duration) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(guard)).expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let code = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"));
    (code, answer)
}

/// The body of a whole answer.
#[allow(dead_code)] // not every test that includes this module reads bodies
pub fn body(answer: &str) -> &str {
    answer.split_once("\r\n\r\n").map_or("", |(_, body)| body)
}
