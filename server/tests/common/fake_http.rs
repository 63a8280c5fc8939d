//! A small HTTP/1.1 server on 127.0.0.1 for faults no real registry produces (a token service elsewhere, a
//! manifest of 50 MB, an endless body, a digest that does not match): each connection is one request,
//! answered by a closure and closed; every request's head is recorded, so that a test can assert what
//! the server received (an `Authorization` header or none). Shared by the registry tests (included with
//! `#[path]`).

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One request as received: the request line and the header lines, as sent.
#[derive(Debug, Clone)]
pub struct Received {
    /// `GET /v2/app/manifests/1 HTTP/1.1`.
    pub line: String,
    /// `name: value` lines (the name as sent).
    pub headers: Vec<String>,
    /// The first bytes when the request was not HTTP (a TLS handshake to a plain server).
    pub raw: Vec<u8>,
}

impl Received {
    /// The request target (`/v2/app/manifests/1`).
    pub fn path(&self) -> &str {
        self.line.split_whitespace().nth(1).unwrap_or("")
    }

    /// The value of header `name` (letter case aside).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|h| {
            let (n, v) = h.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then_some(v.trim())
        })
    }
}

/// What to answer.
pub enum Reply {
    /// A status, extra header lines and a body (with its `Content-Length`).
    Full {
        status: &'static str,
        headers: Vec<String>,
        body: Vec<u8>,
    },
    /// `200` with a `Content-Length` header that says `announced` bytes; the body sent is `sent`
    /// bytes, then the connection is closed.
    Announced { announced: u64, sent: Vec<u8> },
    /// `200` with a chunked body that never ends (until the client goes away).
    Endless,
}

impl Reply {
    /// `200` with a JSON body and, for a manifest, its media type.
    pub fn json(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Full {
            status: "200 OK",
            headers: vec!["Content-Type: application/json".into()],
            body: body.into(),
        }
    }
}

/// A running fake server: its port, the requests it received and the body bytes it sent.
#[derive(Clone)]
pub struct FakeServer {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    sent: Arc<AtomicU64>,
}

impl FakeServer {
    /// Starts a server on 127.0.0.1 answering with `answer`; it runs until the test process ends.
    pub fn start(answer: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let server = FakeServer {
            port,
            received: Arc::default(),
            sent: Arc::default(),
        };
        let answer = Arc::new(answer);
        let this = server.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let answer = answer.clone();
                let this = this.clone();
                std::thread::spawn(move || {
                    let _ = this.serve(stream, &*answer);
                });
            }
        });
        server
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Body bytes sent so far (over all connections).
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    fn serve(
        &self,
        stream: TcpStream,
        answer: &(dyn Fn(&Received) -> Reply + Send + Sync),
    ) -> std::io::Result<()> {
        stream.set_read_timeout(Some(std::time::Duration::from_secs(20)))?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let first = reader.fill_buf()?.to_vec();
        if !first.starts_with(b"GET ")
            && !first.starts_with(b"HEAD ")
            && !first.starts_with(b"POST ")
        {
            // Not HTTP (a TLS ClientHello): recorded as it came, never answered.
            let mut raw = first;
            let mut rest = [0u8; 4096];
            if let Ok(n) = reader.read(&mut rest) {
                raw.extend_from_slice(&rest[..n]);
            }
            self.received.lock().expect("lock").push(Received {
                line: String::new(),
                headers: Vec::new(),
                raw,
            });
            return Ok(());
        }
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header == "\r\n" {
                break;
            }
            headers.push(header.trim_end().to_string());
        }
        let request = Received {
            line: line.trim_end().to_string(),
            headers,
            raw: Vec::new(),
        };
        self.received.lock().expect("lock").push(request.clone());
        let mut stream = stream;
        match answer(&request) {
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut head = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    body.len()
                );
                for h in headers {
                    head.push_str(&h);
                    head.push_str("\r\n");
                }
                head.push_str("\r\n");
                stream.write_all(head.as_bytes())?;
                stream.write_all(&body)?;
                self.sent.fetch_add(body.len() as u64, Ordering::Relaxed);
            }
            Reply::Announced { announced, sent } => {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {announced}\r\nConnection: close\r\n\r\n"
                )?;
                stream.write_all(&sent)?;
                self.sent.fetch_add(sent.len() as u64, Ordering::Relaxed);
            }
            Reply::Endless => {
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                )?;
                let chunk = vec![b' '; 64 * 1024];
                loop {
                    write!(stream, "{:x}\r\n", chunk.len())?;
                    stream.write_all(&chunk)?;
                    stream.write_all(b"\r\n")?;
                    self.sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            }
        }
        stream.flush()
    }
}
