//! Why an image could not be resolved ([`ResolveError`]), in the words a finding quotes, and the errors of
//! setting the client up ([`SetupError`]).

/// Why an image's manifest could not be read. The `Display` text is a clause a finding quotes
/// (`the registry refused access to it (unauthorized): …`), said once; [`ResolveError::kind`] is the
/// one-word reason.
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
    /// An answer over a read limit ([`super::limits`]): what was refused, its size and the limit, with
    /// the words "too large".
    #[error("{0}")]
    TooLarge(String),
    /// The registry answered with a server error (5xx) or asked the client to slow down (429): trouble
    /// on its side that a later try may not meet.
    #[error("the registry is unavailable (server error): {0}")]
    Unavailable(String),
    /// The registry answered something else: a document that is not a manifest, a digest that does not
    /// match, another status.
    #[error("the registry answered unexpectedly: {0}")]
    Registry(String),
}

impl ResolveError {
    /// One word for metrics and the API: `invalid`, `unauthorized`, `not-found`, `timeout`,
    /// `unreachable`, `too-large`, `unavailable`, `registry`.
    pub fn kind(&self) -> &'static str {
        match self {
            ResolveError::InvalidReference(_) => "invalid",
            ResolveError::Unauthorized(_) => "unauthorized",
            ResolveError::NotFound => "not-found",
            ResolveError::Timeout(_) => "timeout",
            ResolveError::Unreachable(_) => "unreachable",
            ResolveError::TooLarge(_) => "too-large",
            ResolveError::Unavailable(_) => "unavailable",
            ResolveError::Registry(_) => "registry",
        }
    }

    /// Whether another try may succeed: no answer in time, no connection, a server error. The placement
    /// controller tries again within its deadline; a refusal, an unknown image or a bad document stays
    /// as it is.
    ///
    /// ```
    /// use winplace::registry::ResolveError;
    /// assert!(ResolveError::Unavailable("500 Internal Server Error".into()).is_transient());
    /// assert!(!ResolveError::NotFound.is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ResolveError::Timeout(_) | ResolveError::Unreachable(_) | ResolveError::Unavailable(_)
        )
    }

    /// Reads what the HTTP client reported; `timeout` is the limit a timed-out request had.
    pub(crate) fn from_http(error: &reqwest::Error, timeout: std::time::Duration) -> Self {
        if error.is_timeout() {
            ResolveError::Timeout(timeout)
        } else if error.is_connect() {
            ResolveError::Unreachable(super::limits::quoted(&error_chain(error)))
        } else {
            ResolveError::Registry(super::limits::quoted(&error_chain(error)))
        }
    }
}

/// An error and its sources on one line (reqwest hides the cause, e.g. "connection refused", in them);
/// a source whose text the line already holds is not repeated.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let more = e.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
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
        source: crate::bounded_read::ReadError,
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
