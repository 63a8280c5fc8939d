//! Requests to one registry's `/v2/` API (OCI distribution-spec; docs/reference/image-registries.md §2):
//! HTTPS unless the registry is named with `--insecure-registry`, a `401` answered once with its
//! challenge ([`super::auth`]), and error answers read with a cap and turned into [`ResolveError`]s.
//!
//! Redirects (blob downloads go to storage) are followed up to [`MAX_REDIRECTS`], never from HTTPS down
//! to plain HTTP; the HTTP client drops the `Authorization` header when a redirect leaves the host.

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};
use winplace_rules::windows::ImageRef;

use super::auth::{self, Challenge};
use super::credentials::Auth;
use super::error::ResolveError;
use super::limits::{MAX_ERROR_BYTES, MAX_REDIRECTS, MAX_TOKEN_BYTES, quoted};

/// The host that serves Docker Hub's API (image-registries.md §2.5).
const DOCKER_HUB_API: &str = "registry-1.docker.io";

/// The HTTP client and what it needs to know to reach registries.
#[derive(Debug, Clone)]
pub(crate) struct RegistryClient {
    http: reqwest::Client,
    insecure: Vec<String>,
    timeout: Duration,
}

impl RegistryClient {
    /// A client whose requests each get `timeout` to connect and between reads.
    pub(crate) fn new(insecure: Vec<String>, timeout: Duration) -> Self {
        // reqwest is built without a default TLS provider (kube's `ring` is already linked; aws-lc is
        // not): install ring once per process. A second install fails harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let downgrade = attempt.url().scheme() == "http"
                && attempt
                    .previous()
                    .last()
                    .is_some_and(|u| u.scheme() == "https");
            if downgrade {
                attempt.error("refused a redirect from HTTPS to plain HTTP")
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            .read_timeout(timeout)
            .redirect(redirects)
            .user_agent(concat!("winplace/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "cannot configure the registry client; using defaults");
                reqwest::Client::new()
            });
        RegistryClient {
            http,
            insecure,
            timeout,
        }
    }

    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    pub(crate) fn insecure(&self) -> &[String] {
        &self.insecure
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// `http://` for a registry named with `--insecure-registry`, else `https://`, and the API host
    /// (`registry-1.docker.io` for `docker.io`).
    fn base(&self, registry: &str) -> String {
        let scheme = if auth::is_named(&self.insecure, registry) {
            "http"
        } else {
            "https"
        };
        let host = if registry == "docker.io" {
            DOCKER_HUB_API
        } else {
            registry
        };
        format!("{scheme}://{host}/v2/")
    }
}

/// The requests of one look-up: one image's repository, its credentials, and the authorization the
/// registry granted (kept for the look-up's next request, the config blob).
pub(crate) struct Session<'a> {
    client: &'a RegistryClient,
    image: &'a ImageRef,
    auth: &'a Auth,
    authorization: Option<HeaderValue>,
}

impl<'a> Session<'a> {
    pub(crate) fn new(client: &'a RegistryClient, image: &'a ImageRef, auth: &'a Auth) -> Self {
        Session {
            client,
            image,
            auth,
            authorization: None,
        }
    }

    /// `GET /v2/<repository>/<path>` with `accept`; a `401` is answered once with its challenge. Any
    /// answer but a success is an error (404 and the registry's `*_UNKNOWN` codes are
    /// [`ResolveError::NotFound`]).
    pub(crate) async fn get(
        &mut self,
        path: &str,
        accept: &str,
    ) -> Result<reqwest::Response, ResolveError> {
        let url = format!(
            "{}{}/{path}",
            self.client.base(&self.image.registry),
            self.image.repository
        );
        let mut answered_challenge = false;
        loop {
            let mut request = self.client.http.get(&url).header(ACCEPT, accept);
            if let Some(value) = &self.authorization {
                request = request.header(AUTHORIZATION, value.clone());
            }
            let response = request
                .send()
                .await
                .map_err(|e| ResolveError::from_http(&e, self.client.timeout))?;
            if response.status() != StatusCode::UNAUTHORIZED || answered_challenge {
                return self.checked(response, &url).await;
            }
            answered_challenge = true;
            let challenge = response
                .headers()
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .and_then(Challenge::parse);
            self.authorization = Some(match challenge {
                Some(Challenge::Bearer(bearer)) => {
                    let scope = bearer
                        .scope
                        .clone()
                        .unwrap_or_else(|| format!("repository:{}:pull", self.image.repository));
                    let token = self
                        .client
                        .fetch_token(&self.image.registry, &bearer, &scope, self.auth)
                        .await?;
                    let mut value = header_value(&format!("Bearer {token}"))?;
                    value.set_sensitive(true);
                    value
                }
                Some(Challenge::Basic) => match self.auth {
                    Auth::Basic { username, password } => {
                        use base64::Engine as _;
                        let pair = format!("{username}:{password}");
                        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
                        let mut value = header_value(&format!("Basic {encoded}"))?;
                        value.set_sensitive(true);
                        value
                    }
                    Auth::Anonymous => {
                        return Err(ResolveError::Unauthorized(format!(
                            "{url} asks for credentials and the Docker config has none for {}",
                            self.image.registry
                        )));
                    }
                },
                None => {
                    return Err(ResolveError::Unauthorized(format!(
                        "401 from {url} without a challenge winplace can answer"
                    )));
                }
            });
        }
    }

    /// `response` when it is a success; else the error its status and error envelope say.
    async fn checked(
        &self,
        response: reqwest::Response,
        url: &str,
    ) -> Result<reqwest::Response, ResolveError> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let timeout = self.client.timeout;
        let body = super::body::read_capped(response, MAX_ERROR_BYTES, "the error", timeout)
            .await
            .unwrap_or_default();
        let envelope = ErrorEnvelope::read(&body);
        if status == StatusCode::NOT_FOUND || envelope.says_unknown() {
            return Err(ResolveError::NotFound);
        }
        let said = envelope.text().unwrap_or_else(|| {
            quoted(&String::from_utf8_lossy(&body))
                .chars()
                .take(200)
                .collect()
        });
        let detail = if said.is_empty() {
            format!("{status} from {url}")
        } else {
            format!("{status} from {url}: {said}")
        };
        Err(match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ResolveError::Unauthorized(detail),
            StatusCode::TOO_MANY_REQUESTS => ResolveError::Unavailable(detail),
            _ if status.is_server_error() => ResolveError::Unavailable(detail),
            _ => ResolveError::Registry(detail),
        })
    }
}

fn header_value(text: &str) -> Result<HeaderValue, ResolveError> {
    HeaderValue::from_str(text).map_err(|_| {
        ResolveError::Unauthorized(
            "the credentials or the token cannot be sent in an HTTP header".into(),
        )
    })
}

/// The distribution-spec's error body: `{"errors": [{"code": "MANIFEST_UNKNOWN", "message": "…"}]}`.
#[derive(Debug, Default, serde::Deserialize)]
struct ErrorEnvelope {
    #[serde(default)]
    errors: Vec<ErrorEntry>,
}

#[derive(Debug, serde::Deserialize)]
struct ErrorEntry {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

impl ErrorEnvelope {
    fn read(body: &[u8]) -> Self {
        serde_json::from_slice(body).unwrap_or_default()
    }

    /// A code that means the repository, tag or digest does not exist.
    fn says_unknown(&self) -> bool {
        self.errors.iter().any(|e| {
            matches!(
                e.code.as_str(),
                "MANIFEST_UNKNOWN" | "NAME_UNKNOWN" | "BLOB_UNKNOWN" | "NOT_FOUND"
            )
        })
    }

    /// `CODE: message; …`, quoted, or `None` without entries.
    fn text(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| {
            quoted(
                &self
                    .errors
                    .iter()
                    .map(|e| format!("{}: {}", e.code, e.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })
    }
}

/// The token request, the one request made on behalf of a registry to another host.
impl RegistryClient {
    /// Asks the token service of `bearer` for a token for `scope`, on behalf of `registry`: with the
    /// registry's `auth` when [`auth::credentials_may_go_to`] allows it, anonymously otherwise.
    pub(crate) async fn fetch_token(
        &self,
        registry: &str,
        bearer: &auth::Bearer,
        scope: &str,
        auth: &Auth,
    ) -> Result<String, ResolveError> {
        let timeout = self.timeout();
        let realm = &bearer.realm;
        let mut url = Url::parse(realm).map_err(|e| {
            ResolveError::Unauthorized(format!(
                "the registry names a token service that is not a URL ({}): {e}",
                quoted(realm)
            ))
        })?;
        let send_credentials = auth::credentials_may_go_to(&url, self.insecure())?;
        {
            let mut query = url.query_pairs_mut();
            if let Some(service) = &bearer.service {
                query.append_pair("service", service);
            }
            query.append_pair("scope", scope);
        }
        let mut request = self.http().get(url);
        match auth {
            Auth::Basic { username, password } if send_credentials => {
                request = request.basic_auth(username, Some(password));
            }
            Auth::Basic { .. } => tracing::debug!(
                registry,
                realm = %quoted(realm),
                "not sending this registry's credentials to its token service: plain HTTP to a host not named \
                 with --insecure-registry; asking for a token anonymously"
            ),
            Auth::Anonymous => {}
        }
        let response = request
            .send()
            .await
            .map_err(|e| ResolveError::from_http(&e, timeout))?;
        let status = response.status();
        if !status.is_success() {
            let body = super::body::read_capped(response, MAX_ERROR_BYTES, "the error", timeout)
                .await
                .unwrap_or_default();
            return Err(ResolveError::Unauthorized(format!(
                "the token service answered {status}: {}",
                quoted(&String::from_utf8_lossy(&body))
            )));
        }
        let body = super::body::read_capped(response, MAX_TOKEN_BYTES, "the token answer", timeout)
            .await?;
        #[derive(serde::Deserialize)]
        struct TokenAnswer {
            token: Option<String>,
            access_token: Option<String>,
        }
        let answer: TokenAnswer = serde_json::from_slice(&body).map_err(|e| {
            ResolveError::Unauthorized(format!("the token service's answer is not JSON: {e}"))
        })?;
        answer
            .token
            .or(answer.access_token)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ResolveError::Unauthorized("the token service answered no token".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_for_registries_named_insecure() {
        let client = RegistryClient::new(vec!["127.0.0.1:5000".into()], Duration::from_secs(1));
        assert_eq!(client.base("127.0.0.1:5000"), "http://127.0.0.1:5000/v2/");
        assert_eq!(client.base("127.0.0.1:5001"), "https://127.0.0.1:5001/v2/");
        assert_eq!(client.base("docker.io"), "https://registry-1.docker.io/v2/");
    }

    #[test]
    fn error_envelopes_name_what_is_unknown() {
        let unknown =
            ErrorEnvelope::read(br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"m"}]}"#);
        assert!(unknown.says_unknown());
        let denied = ErrorEnvelope::read(br#"{"errors":[{"code":"DENIED","message":"no"}]}"#);
        assert!(!denied.says_unknown());
        assert_eq!(denied.text().as_deref(), Some("DENIED: no"));
        assert_eq!(ErrorEnvelope::read(b"<html>").text(), None);
    }
}
