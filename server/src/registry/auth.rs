//! Answering a registry's `401`: its challenge (`WWW-Authenticate: Bearer realm=…,service=…,scope=…` or
//! `Basic realm=…`), and where the Docker config's credentials may go.
//!
//! The rule (docs/reference/limits.md §3 for what containerd and Docker do, which is laxer):
//! credentials go to the registry itself, and to its token service (the challenge's `realm`) only over
//! HTTPS — or over plain HTTP when the realm's `HOST:PORT` is itself named with `--insecure-registry`.
//! Otherwise the token is asked for anonymously, and a debug line says so. A realm on another HTTPS host
//! (Docker Hub's `auth.docker.io`) keeps working.

use reqwest::Url;

use super::error::ResolveError;
use super::limits::quoted;

/// What a registry's `WWW-Authenticate` header asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// A token from a token service.
    Bearer(Bearer),
    /// Basic credentials sent to the registry itself.
    Basic,
}

/// A `Bearer` challenge: where to ask for a token, and what to pass on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    /// The token service's URL, as the registry wrote it.
    pub realm: String,
    /// The `service` parameter, if any.
    pub service: Option<String>,
    /// The `scope` parameter, if any.
    pub scope: Option<String>,
}

impl Challenge {
    /// Reads the first `Bearer` or `Basic` challenge of a `WWW-Authenticate` value (RFC 9110 §11.6.1:
    /// `scheme param="value", …`; values quoted or bare).
    ///
    /// ```
    /// use winplace::registry::auth::{Bearer, Challenge};
    /// let c = Challenge::parse(r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io""#);
    /// assert_eq!(c, Some(Challenge::Bearer(Bearer {
    ///     realm: "https://auth.docker.io/token".into(),
    ///     service: Some("registry.docker.io".into()),
    ///     scope: None,
    /// })));
    /// assert_eq!(Challenge::parse(r#"Basic realm="Registry""#), Some(Challenge::Basic));
    /// ```
    pub fn parse(header: &str) -> Option<Challenge> {
        let header = header.trim();
        let (scheme, rest) = header.split_once(' ').unwrap_or((header, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Some(Challenge::Basic);
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        let params = parameters(rest);
        let get = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        Some(Challenge::Bearer(Bearer {
            realm: get("realm")?,
            service: get("service"),
            scope: get("scope"),
        }))
    }
}

/// `key="quoted \"value\"", key=bare` → pairs (a quoted value may hold commas).
fn parameters(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = std::iter::from_fn(|| chars.next_if(|c| *c != '=' && *c != ','))
            .collect::<String>()
            .trim()
            .to_string();
        if key.is_empty() || chars.next() != Some('=') {
            return out;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            value = std::iter::from_fn(|| chars.next_if(|c| *c != ','))
                .collect::<String>()
                .trim()
                .to_string();
        }
        out.push((key, value));
    }
}

/// Whether `registry` (`HOST[:PORT]` as in image references) or a realm's host is named in `insecure`
/// (`--insecure-registry`), letter case aside.
pub(crate) fn is_named(insecure: &[String], host_port: &str) -> bool {
    insecure.iter().any(|i| i.eq_ignore_ascii_case(host_port))
}

/// Whether the registry's credentials may be sent to the token service at `realm`: over HTTPS yes;
/// over plain HTTP only when the realm's `HOST:PORT` (or `HOST` for port 80) is named in `insecure`;
/// any other scheme is refused outright.
///
/// ```
/// use winplace::registry::auth::credentials_may_go_to;
/// let realm = |u: &str| reqwest::Url::parse(u).unwrap();
/// let insecure = vec!["127.0.0.1:5000".to_string()];
/// assert_eq!(credentials_may_go_to(&realm("https://auth.docker.io/token"), &insecure), Ok(true));
/// assert_eq!(credentials_may_go_to(&realm("http://127.0.0.1:5000/token"), &insecure), Ok(true));
/// assert_eq!(credentials_may_go_to(&realm("http://127.0.0.1:6000/token"), &insecure), Ok(false));
/// assert!(credentials_may_go_to(&realm("ftp://127.0.0.1/token"), &insecure).is_err());
/// ```
pub fn credentials_may_go_to(realm: &Url, insecure: &[String]) -> Result<bool, ResolveError> {
    match realm.scheme() {
        "https" => Ok(true),
        "http" => {
            let host = realm.host_str().unwrap_or_default();
            Ok(match realm.port() {
                Some(port) => is_named(insecure, &format!("{host}:{port}")),
                None => is_named(insecure, host) || is_named(insecure, &format!("{host}:80")),
            })
        }
        other => Err(ResolveError::Unauthorized(format!(
            "the registry names a token service with the scheme `{}`, which winplace does not use",
            quoted(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_as_registries_write_them() {
        let rows = [
            (
                r#"Bearer realm="http://127.0.0.1:5001/token",service="reg",scope="repository:a/b:pull""#,
                Some(Challenge::Bearer(Bearer {
                    realm: "http://127.0.0.1:5001/token".into(),
                    service: Some("reg".into()),
                    scope: Some("repository:a/b:pull".into()),
                })),
            ),
            // Letter case of scheme and keys, spaces, a comma and an escaped quote inside a value.
            (
                r#"bearer  Realm="https://r.example/t", scope="repository:a:pull,push" , service=bare"#,
                Some(Challenge::Bearer(Bearer {
                    realm: "https://r.example/t".into(),
                    service: Some("bare".into()),
                    scope: Some("repository:a:pull,push".into()),
                })),
            ),
            (
                r#"Bearer realm="a\"b""#,
                Some(Challenge::Bearer(Bearer {
                    realm: "a\"b".into(),
                    service: None,
                    scope: None,
                })),
            ),
            (r#"BASIC realm="x""#, Some(Challenge::Basic)),
            ("Bearer service=\"no realm\"", None),
            ("Negotiate abc", None),
            ("", None),
        ];
        for (header, want) in rows {
            assert_eq!(Challenge::parse(header), want, "{header}");
        }
    }

    /// The rule of the module docs, row by row: which realms may receive the registry's credentials.
    #[test]
    fn credentials_go_over_https_or_to_hosts_named_insecure() {
        let insecure = vec!["127.0.0.1:5000".to_string(), "Reg.Local".to_string()];
        let rows = [
            ("https://auth.docker.io/token", Some(true)),
            ("https://127.0.0.1:6000/token", Some(true)),
            ("http://127.0.0.1:5000/token", Some(true)),
            ("http://127.0.0.1:6000/token", Some(false)),
            ("http://127.0.0.1/token", Some(false)),
            ("http://reg.local/token", Some(true)),
            ("http://reg.local:80/token", Some(true)),
            ("http://reg.local:8080/token", Some(false)),
            ("http://auth.docker.io/token", Some(false)),
            ("ftp://127.0.0.1:5000/token", None),
            ("file:///etc/passwd", None),
        ];
        for (realm, want) in rows {
            let url = Url::parse(realm).expect(realm);
            assert_eq!(credentials_may_go_to(&url, &insecure).ok(), want, "{realm}");
        }
    }
}
