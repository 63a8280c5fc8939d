//! A watch's failure in words: what was asked of the API server, what it answered and, for a 403, what
//! the ClusterRole lacks — one line, never kube-rs's debug dump of the whole `Status`.
//!
//! The 403 Status is the API server's (docs/reference/limits.md §4): `reason: Forbidden`, `code: 403` and a
//! message naming the user, the verb and the resource.

use super::call_timeout::NoAnswer;
use kube::runtime::watcher;

/// The longest description kept (a proxy's HTML error page can be long).
const MAX_CHARS: usize = 400;

/// A kind the live source (or the placement controller) watches, as RBAC names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Watch {
    /// `nodes`.
    Nodes,
    /// `pods`.
    Pods,
    /// `runtimeclasses` (`node.k8s.io`).
    RuntimeClasses,
    /// `events` (`v1`).
    CoreEvents,
    /// `events` (`events.k8s.io`).
    Events,
    /// `secrets` (the placement controller's cache of pull secrets).
    Secrets,
    /// `serviceaccounts` (the placement controller's cache).
    ServiceAccounts,
}

impl Watch {
    /// The resource as the API server and RBAC name it, with its API group when not the core one.
    ///
    /// ```
    /// use winplace::source::watch_error::Watch;
    /// assert_eq!(Watch::Pods.resource(), "pods");
    /// assert_eq!(Watch::RuntimeClasses.resource(), "runtimeclasses.node.k8s.io");
    /// ```
    pub fn resource(self) -> &'static str {
        match self {
            Watch::Nodes => "nodes",
            Watch::Pods => "pods",
            Watch::RuntimeClasses => "runtimeclasses.node.k8s.io",
            Watch::CoreEvents => "events",
            Watch::Events => "events.events.k8s.io",
            Watch::Secrets => "secrets",
            Watch::ServiceAccounts => "serviceaccounts",
        }
    }
}

/// `error` of the watch on `watch`, in words.
///
/// ```
/// use kube::core::Status;
/// use kube::runtime::watcher;
/// use winplace::source::watch_error::{Watch, describe};
/// let status = Status::failure(
///     r#"pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope"#,
///     "Forbidden",
/// )
/// .with_code(403);
/// let error = watcher::Error::InitialListFailed(kube::Error::Api(status.boxed()));
/// assert_eq!(
///     describe(Watch::Pods, &error),
///     r#"cannot list pods: 403 Forbidden — the ClusterRole needs list and watch on pods (pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope)"#
/// );
/// ```
pub fn describe(watch: Watch, error: &watcher::Error) -> String {
    let resource = watch.resource();
    let text = match error {
        watcher::Error::InitialListFailed(e) => {
            format!("cannot list {resource}: {}", client(watch, e))
        }
        watcher::Error::WatchStartFailed(e) => {
            format!("cannot watch {resource}: {}", client(watch, e))
        }
        watcher::Error::WatchError(status) => {
            format!("watching {resource} failed: {}", api_status(watch, status))
        }
        watcher::Error::WatchFailed(e) => {
            format!("watching {resource} failed: {}", client(watch, e))
        }
        watcher::Error::NoResourceVersion => {
            format!("watching {resource} failed: the answer carried no resourceVersion")
        }
    };
    shorten(text)
}

/// An error of kube-rs's client: the API server's Status, a time limit, or the transport's chain of
/// causes.
fn client(watch: Watch, error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => api_status(watch, status),
        kube::Error::SerdeError(e) => format!("the answer did not decode: {e}"),
        other => {
            if let Some(no_answer) = find::<NoAnswer>(other) {
                return no_answer.to_string();
            }
            causes(other)
        }
    }
}

/// A Status the API server answered: `403 Forbidden — what to grant (its message)`.
fn api_status(watch: Watch, status: &kube::core::Status) -> String {
    let reason = if status.reason.is_empty() {
        http::StatusCode::from_u16(status.code)
            .ok()
            .and_then(|c| c.canonical_reason())
            .unwrap_or("")
            .to_string()
    } else {
        status.reason.clone()
    };
    let head = format!("{} {reason}", status.code).trim().to_string();
    let advice = match status.code {
        403 => format!(
            " — the ClusterRole needs list and watch on {}",
            rbac_resource(watch)
        ),
        401 => " — the API server refused the credentials".to_string(),
        410 => " — the API server no longer has the changes since the last list: listing again"
            .to_string(),
        _ => String::new(),
    };
    if status.message.is_empty() {
        format!("{head}{advice}")
    } else {
        format!("{head}{advice} ({})", status.message.trim())
    }
}

/// The resource as a ClusterRole rule names it: `pods`, `runtimeclasses (API group node.k8s.io)`.
fn rbac_resource(watch: Watch) -> String {
    match watch.resource().split_once('.') {
        Some((resource, group)) => format!("{resource} (API group {group})"),
        None => watch.resource().to_string(),
    }
}

/// The first error of type `E` in `error`'s chain of causes.
fn find<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// The chain of causes on one line, without kube-rs's `ServiceError:`/`HyperError:` prefixes and
/// without a cause that repeats the one before it.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        let text = text
            .strip_prefix("ServiceError: ")
            .or_else(|| text.strip_prefix("HyperError: "))
            .unwrap_or(&text)
            .to_string();
        if !parts.last().is_some_and(|last| last.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    // A cause whose words a wrapper already carries is said once.
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        if let Some(last) = out.last_mut()
            && part.contains(last.as_str())
        {
            *last = part;
            continue;
        }
        out.push(part);
    }
    out.join(": ")
}

fn shorten(mut text: String) -> String {
    if text.chars().count() > MAX_CHARS {
        text = text.chars().take(MAX_CHARS).collect::<String>() + "…";
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;
    use std::time::Duration;

    fn api(code: u16, reason: &str, message: &str) -> kube::Error {
        kube::Error::Api(Status::failure(message, reason).with_code(code).boxed())
    }

    #[test]
    fn failures_read_as_one_line_with_what_to_do() {
        let forbidden_watch = api(
            403,
            "Forbidden",
            r#"runtimeclasses.node.k8s.io is forbidden: User "u" cannot watch resource "runtimeclasses" in API group "node.k8s.io" at the cluster scope"#,
        );
        let rows: Vec<(Watch, watcher::Error, &str)> = vec![
            (
                Watch::RuntimeClasses,
                watcher::Error::WatchStartFailed(forbidden_watch),
                r#"cannot watch runtimeclasses.node.k8s.io: 403 Forbidden — the ClusterRole needs list and watch on runtimeclasses (API group node.k8s.io) (runtimeclasses.node.k8s.io is forbidden: User "u" cannot watch resource "runtimeclasses" in API group "node.k8s.io" at the cluster scope)"#,
            ),
            (
                Watch::Nodes,
                watcher::Error::InitialListFailed(api(401, "Unauthorized", "Unauthorized")),
                "cannot list nodes: 401 Unauthorized — the API server refused the credentials (Unauthorized)",
            ),
            (
                Watch::Pods,
                watcher::Error::InitialListFailed(api(500, "", "")),
                "cannot list pods: 500 Internal Server Error",
            ),
            (
                Watch::Pods,
                watcher::Error::InitialListFailed(kube::Error::Service(Box::new(NoAnswer(
                    Duration::from_secs(60),
                )))),
                "cannot list pods: no answer within 60 s",
            ),
            (
                Watch::Nodes,
                watcher::Error::InitialListFailed(kube::Error::SerdeError(
                    serde_json::from_str::<Vec<u8>>("[").unwrap_err(),
                )),
                "cannot list nodes: the answer did not decode: EOF while parsing a list at line 1 column 1",
            ),
            (
                Watch::Pods,
                watcher::Error::WatchFailed(kube::Error::Service(Box::new(std::io::Error::other(
                    "connection reset",
                )))),
                "watching pods failed: connection reset",
            ),
            (
                Watch::Nodes,
                watcher::Error::NoResourceVersion,
                "watching nodes failed: the answer carried no resourceVersion",
            ),
        ];
        for (watch, error, want) in rows {
            assert_eq!(describe(watch, &error), want);
        }
        // A long answer (a proxy's error page) is cut.
        let long = watcher::Error::InitialListFailed(api(502, "", &"x".repeat(5_000)));
        assert!(describe(Watch::Pods, &long).chars().count() <= MAX_CHARS + 1);
    }
}
