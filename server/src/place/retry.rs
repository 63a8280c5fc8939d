//! Asking the API server again: which of its answers may pass ([`is_transient`]), the doubling waits
//! between tries ([`with_retries`]), a fresh read of a pod ([`read_pod`]), and what a reconcile reports
//! when its budget ran out, by the step that failed ([`PlaceError`]).

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;

use super::report::PlaceReport;

/// The first wait before an API request that failed transiently (429, 5xx, no answer) is asked again;
/// doubled after each try up to [`API_RETRY_MAX`].
pub const API_RETRY_FIRST: Duration = Duration::from_millis(100);

/// The longest wait between two tries of an API request.
pub const API_RETRY_MAX: Duration = Duration::from_secs(2);

/// How long one API request (a read or a patch) may take before it counts as unanswered (transient).
pub const API_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a reconcile ended without placing or releasing the pod, by the step that failed; the pod keeps
/// its gate and is taken up again after the controller's retry (what was decided for it is kept).
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// Reading the pod's pull secrets (or its service account) failed for the whole API budget.
    #[error("reading the pod's pull secrets: {0}")]
    PullSecrets(#[source] kube::Error),
    /// Reading the pod again after a refused patch failed for the whole API budget.
    #[error("reading the pod again: {0}")]
    ReadPod(#[source] kube::Error),
    /// The patch (pins or release) met errors for the whole API budget, or one not handled.
    #[error("patching the pod ({action}): {source}")]
    Patch {
        /// `place` or `release`.
        action: &'static str,
        /// The last answer.
        #[source]
        source: kube::Error,
    },
    /// The pod does not encode as JSON (never expected).
    #[error("encoding the pod: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Whether an API error may pass on its own (so the request is worth asking again): 429, a 5xx, or no
/// answer at all (a lost connection, a timeout, a write this replica did not send because it did not
/// lead at that instant).
///
/// ```
/// use winplace::place::retry::is_transient;
/// let status = |code: u16| kube::Error::Api(kube::core::Status::failure("x", "y").with_code(code).boxed());
/// assert!(is_transient(&status(429)) && is_transient(&status(503)));
/// assert!(!is_transient(&status(403)) && !is_transient(&status(404)) && !is_transient(&status(422)));
/// ```
pub fn is_transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// `request`, asked again after a transient failure (429, 5xx, no answer within [`API_TIMEOUT`]) with a
/// doubling wait while `until` allows; the last error otherwise. Each retry is counted on `report`.
pub async fn with_retries<T, F, Fut>(
    report: &PlaceReport,
    until: Instant,
    mut request: F,
) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let mut wait = API_RETRY_FIRST;
    loop {
        let answer = match tokio::time::timeout(API_TIMEOUT, request()).await {
            Ok(answer) => answer,
            Err(elapsed) => Err(kube::Error::Service(Box::new(elapsed))),
        };
        match answer {
            Err(error) if is_transient(&error) && Instant::now() + wait < until => {
                report.api_retried();
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(API_RETRY_MAX);
            }
            other => return other,
        }
    }
}

/// The pod as the API server has it now (`None`: deleted), read with [`with_retries`] until `until`.
pub async fn read_pod(
    client: &kube::Client,
    report: &PlaceReport,
    pod: &Pod,
    until: Instant,
) -> Result<Option<Pod>, PlaceError> {
    let api = kube::Api::<Pod>::namespaced(
        client.clone(),
        pod.metadata.namespace.as_deref().unwrap_or("default"),
    );
    let name = pod.metadata.name.clone().unwrap_or_default();
    with_retries(report, until, || api.get_opt(&name))
        .await
        .map_err(PlaceError::ReadPod)
}
