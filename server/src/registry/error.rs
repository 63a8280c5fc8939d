//! Why an image could not be resolved ([`ResolveError`]), in the words a finding quotes, and the errors of
//! setting the client up ([`SetupError`]).

use oci_client::errors::{OciDistributionError, OciErrorCode};

/// Why an image's manifest could not be read. The `Display` text is a clause a finding quotes
/// (`the registry answered 401 Unauthorized (unauthorized)`); [`ResolveError::kind`] is the one-word reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The reference is not one the kubelet could pull.
    #[error("`{0}` is not a valid image reference")]
    InvalidReference(String),
    /// The registry refused the credentials, or asked for some that were not given.
    #[error("the registry refused access to it (unauthorized): {0}")]
    Unauthorized(String),
    /// The registry does not know the repository, tag or digest.
    #[error("the registry does not know this repository or tag (not found)")]
    NotFound,
    /// No answer within the time limit.
    #[error("the registry did not answer within {0:?} (timeout)")]
    Timeout(std::time::Duration),
    /// The registry could not be reached (DNS, refused connection, TLS).
    #[error("the registry could not be reached (unreachable): {0}")]
    Unreachable(String),
    /// The registry answered something else: a server error, a document that is not a manifest.
    #[error("the registry answered unexpectedly: {0}")]
    Registry(String),
}

impl ResolveError {
    /// One word for metrics and the API: `invalid`, `unauthorized`, `not-found`, `timeout`,
    /// `unreachable`, `registry`.
    pub fn kind(&self) -> &'static str {
        match self {
            ResolveError::InvalidReference(_) => "invalid",
            ResolveError::Unauthorized(_) => "unauthorized",
            ResolveError::NotFound => "not-found",
            ResolveError::Timeout(_) => "timeout",
            ResolveError::Unreachable(_) => "unreachable",
            ResolveError::Registry(_) => "registry",
        }
    }

    /// Reads what the OCI client reported; `timeout` is the limit a timed-out request had.
    pub(crate) fn from_oci(error: OciDistributionError, timeout: std::time::Duration) -> Self {
        match error {
            OciDistributionError::UnauthorizedError { url } => {
                ResolveError::Unauthorized(format!("401 from {url}"))
            }
            OciDistributionError::AuthenticationFailure(why) => {
                ResolveError::Unauthorized(format!("the token service said: {}", why.trim()))
            }
            OciDistributionError::ImageManifestNotFoundError(_) => ResolveError::NotFound,
            OciDistributionError::RegistryError { envelope, url } => {
                let codes: Vec<&OciErrorCode> = envelope.errors.iter().map(|e| &e.code).collect();
                if codes.iter().any(|c| {
                    matches!(
                        c,
                        OciErrorCode::ManifestUnknown
                            | OciErrorCode::NameUnknown
                            | OciErrorCode::BlobUnknown
                            | OciErrorCode::NotFound
                    )
                }) {
                    ResolveError::NotFound
                } else if codes
                    .iter()
                    .any(|c| matches!(c, OciErrorCode::Unauthorized | OciErrorCode::Denied))
                {
                    ResolveError::Unauthorized(format!("{envelope} from {url}"))
                } else {
                    ResolveError::Registry(format!("{envelope} from {url}"))
                }
            }
            OciDistributionError::ServerError { code: 404, .. } => ResolveError::NotFound,
            OciDistributionError::ServerError {
                code: 401 | 403,
                url,
                ..
            } => ResolveError::Unauthorized(format!("denied by {url}")),
            OciDistributionError::ServerError { code, url, .. } => {
                ResolveError::Registry(format!("HTTP {code} from {url}"))
            }
            OciDistributionError::RequestError(e) if e.is_timeout() => {
                ResolveError::Timeout(timeout)
            }
            OciDistributionError::RequestError(e) if e.is_connect() => {
                ResolveError::Unreachable(error_chain(&e))
            }
            other => ResolveError::Registry(error_chain(&other)),
        }
    }
}

/// An error and its sources on one line (reqwest hides the cause, e.g. "connection refused", in them).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

/// The registry client could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// `--registry-config FILE` could not be read.
    #[error("cannot read the registry config {path}: {source}")]
    ConfigUnreadable {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--registry-config FILE` is not a Docker config (JSON with `auths`).
    #[error("{path}: line {line}: not a Docker config file: {message}")]
    ConfigInvalid {
        /// The file.
        path: String,
        /// Line of the error.
        line: usize,
        /// What the JSON parser said.
        message: String,
    },
}
