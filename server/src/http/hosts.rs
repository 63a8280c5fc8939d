//! Which `Host` names the server answers: on a loopback address only loopback names, so that a page
//! on another site cannot read the API through DNS rebinding (its requests carry the attacker's
//! host name even when the name resolves to 127.0.0.1).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::http::error::ApiError;

/// Host names that always mean this machine (RFC 6761: `localhost` and names under `.localhost`).
const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1"];

/// The `Host` names a server accepts.
///
/// ```
/// use winplace::http::hosts::AllowedHosts;
/// let hosts = AllowedHosts::for_listen(&"127.0.0.1:8080".parse().unwrap(), &[]);
/// assert!(hosts.allows("localhost:8080"));
/// assert!(hosts.allows("[::1]:8080"));
/// assert!(!hosts.allows("rebind.example:8080"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllowedHosts {
    /// Any host (the server listens on a non-loopback address and no `--allowed-host` was given).
    Any,
    /// Only these names (lowercase, without port), plus names under `.localhost`.
    Only(Arc<[String]>),
}

impl AllowedHosts {
    /// The policy for a server listening on `addr`: loopback names plus `extra` on a loopback address;
    /// on any other address, `extra` plus the loopback names when `extra` is given, else any host.
    pub fn for_listen(addr: &SocketAddr, extra: &[String]) -> Self {
        if !addr.ip().is_loopback() && extra.is_empty() {
            return AllowedHosts::Any;
        }
        let mut names: Vec<String> = LOOPBACK_NAMES.iter().map(|s| s.to_string()).collect();
        names.extend(
            extra
                .iter()
                .map(|h| strip_port(&h.to_ascii_lowercase()).to_string()),
        );
        AllowedHosts::Only(names.into())
    }

    /// Whether a request whose `Host` header (or absolute URI authority) is `host` is answered.
    pub fn allows(&self, host: &str) -> bool {
        match self {
            AllowedHosts::Any => true,
            AllowedHosts::Only(names) => {
                let host = host.to_ascii_lowercase();
                let name = strip_port(&host);
                let name = name.trim_end_matches('.');
                names.iter().any(|n| n == name)
                    || name.ends_with(".localhost")
                    || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
        }
    }
}

/// `host` without its `:port` (and without the brackets of an IPv6 literal).
fn strip_port(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        // A bare IPv6 address has several colons and no port.
        Some((name, port)) if !name.contains(':') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => host,
    }
}

/// What `serve` says at start when it answers any host name: listening on an address other than
/// loopback without `--allowed-host`, a page on any site can read the API through DNS rebinding.
///
/// ```
/// use winplace::http::hosts::exposure_warning;
/// assert!(exposure_warning(&"0.0.0.0:8080".parse().unwrap(), &[]).unwrap().contains("--allowed-host"));
/// assert_eq!(exposure_warning(&"127.0.0.1:8080".parse().unwrap(), &[]), None);
/// assert_eq!(exposure_warning(&"0.0.0.0:8080".parse().unwrap(), &["dash.example".into()]), None);
/// ```
pub fn exposure_warning(addr: &SocketAddr, extra: &[String]) -> Option<String> {
    (AllowedHosts::for_listen(addr, extra) == AllowedHosts::Any).then(|| {
        format!(
            "listening on {addr} without --allowed-host: this server answers requests for any Host name, \
             so a page on another site can read the API through DNS rebinding; name the host names \
             clients use with --allowed-host NAME (repeatable, or WINPLACE_ALLOWED_HOSTS), or listen on \
             127.0.0.1 behind a proxy"
        )
    })
}

/// Answers 400 (Bad Request) to a request with more than one `Host` header (RFC 9112 §3.2), and 421
/// (Misdirected Request) to a request for a host name `allowed` does not accept. A request without any
/// host (HTTP/1.0) is answered: a browser always sends one.
pub async fn check_host(
    State(allowed): State<AllowedHosts>,
    request: Request,
    next: Next,
) -> Response {
    if request
        .headers()
        .get_all(header::HOST)
        .iter()
        .nth(1)
        .is_some()
    {
        tracing::debug!("request with more than one Host header");
        return ApiError::bad_request(
            "the request has more than one Host header (RFC 9112 §3.2 requires one)",
        )
        .into_response();
    }
    let host = request
        .uri()
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            request
                .headers()
                .get(header::HOST)
                .map(|h| String::from_utf8_lossy(h.as_bytes()).to_string())
        });
    match host {
        Some(host) if !allowed.allows(&host) => {
            tracing::debug!(%host, "request for a host name that is not allowed");
            ApiError::new(
                StatusCode::MISDIRECTED_REQUEST,
                format!(
                    "host {host:?} is not served here: this server answers only loopback host names \
                     (start it with --allowed-host NAME to answer another)"
                ),
            )
            .into_response()
        }
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_servers_that_answer_any_host_warn() {
        let rows = [
            ("0.0.0.0:8080", &[][..], true),
            ("[::]:8080", &[][..], true),
            ("10.0.0.5:8080", &[][..], true),
            ("0.0.0.0:8080", &["dash.example".to_string()][..], false),
            ("127.0.0.1:8080", &[][..], false),
            ("[::1]:8080", &[][..], false),
        ];
        for (addr, extra, warns) in rows {
            let warning = exposure_warning(&addr.parse().expect("addr"), extra);
            assert_eq!(warning.is_some(), warns, "{addr} {extra:?}");
            if let Some(text) = warning {
                assert!(
                    text.contains(addr) && text.contains("--allowed-host NAME"),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn loopback_servers_answer_loopback_names_only() {
        let loopback = AllowedHosts::for_listen(&"127.0.0.1:8080".parse().expect("addr"), &[]);
        let extra = AllowedHosts::for_listen(
            &"[::1]:8080".parse().expect("addr"),
            &["Dash.Internal:8080".into()],
        );
        let open = AllowedHosts::for_listen(&"0.0.0.0:8080".parse().expect("addr"), &[]);
        let rows = [
            ("localhost", true, true, true),
            ("LOCALHOST:8080", true, true, true),
            ("localhost.:8080", true, true, true),
            ("app.localhost:8080", true, true, true),
            ("127.0.0.1:8080", true, true, true),
            ("127.1.2.3", true, true, true),
            ("[::1]:8080", true, true, true),
            ("dash.internal", false, true, true),
            ("evil.example:8080", false, false, true),
            ("localhost.evil.example", false, false, true),
            ("10.0.0.5:8080", false, false, true),
        ];
        for (host, on_loopback, with_extra, on_any) in rows {
            assert_eq!(loopback.allows(host), on_loopback, "{host}");
            assert_eq!(extra.allows(host), with_extra, "{host}");
            assert_eq!(open.allows(host), on_any, "{host}");
        }
    }
}
