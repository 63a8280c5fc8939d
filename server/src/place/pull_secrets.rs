//! A pod's registry credentials: the image pull secrets it names, then its service account's
//! (docs/reference/image-registries.md §2.3: `kubernetes.io/dockerconfigjson` secrets hold a Docker
//! config), read from watched caches ([`PullSecretCaches`]: kube-rs reflectors over the ServiceAccounts
//! and the `kubernetes.io/dockerconfigjson` Secrets), not with a GET per pod: a burst of gated pods costs
//! the API server nothing.
//!
//! A name the cache does not hold (yet: a Secret created with the pod) is read once with a GET. A
//! Secret that does not exist, or cannot be parsed, is skipped with a warning, as the kubelet skips a
//! missing pull secret. An API error that may pass (429, 5xx, no answer) is NOT a missing secret: it is
//! returned, and the pod waits for the next try rather than be read anonymously.

use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client};

use crate::registry::Credentials;

/// The key of a `kubernetes.io/dockerconfigjson` secret.
const DOCKER_CONFIG_JSON: &str = ".dockerconfigjson";

/// The `type` of the Secrets the cache watches (a field selector Secrets support: docs/reference/
/// scheduling-gates.md §7): only pull secrets are held in memory, not every Secret of the cluster.
pub const PULL_SECRET_TYPE: &str = "kubernetes.io/dockerconfigjson";

/// The watched caches pull secrets are read from.
#[derive(Clone)]
pub struct PullSecretCaches {
    /// Every ServiceAccount.
    pub accounts: Store<ServiceAccount>,
    /// Every Secret of type [`PULL_SECRET_TYPE`].
    pub secrets: Store<Secret>,
}

/// Whether an API error may pass on its own (so the request is worth asking again): 429, a 5xx, or no
/// answer at all (a lost connection, a timeout).
pub fn is_transient(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// The credentials of `pod`'s pull secrets, in order: its own `imagePullSecrets`, then those of its
/// service account (`default` when it names none). `Err` only for a transient API error (see the module
/// docs): the caller tries again later instead of pulling anonymously.
pub async fn for_pod(
    client: &Client,
    caches: &PullSecretCaches,
    pod: &Pod,
) -> Result<Vec<Credentials>, kube::Error> {
    let Some(namespace) = pod.metadata.namespace.as_deref() else {
        return Ok(Vec::new());
    };
    let spec = pod.spec.as_ref();
    let mut names: Vec<String> = spec
        .and_then(|s| s.image_pull_secrets.as_ref())
        .into_iter()
        .flatten()
        .map(|r| r.name.clone())
        .collect();
    let account = spec
        .and_then(|s| s.service_account_name.as_deref())
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    let cached = caches
        .accounts
        .get(&ObjectRef::new(account).within(namespace));
    let sa = match cached {
        Some(sa) => Some((*sa).clone()),
        None => read(
            Api::<ServiceAccount>::namespaced(client.clone(), namespace).get_opt(account),
            || format!("service account {namespace}/{account}"),
        )
        .await?
        .flatten(),
    };
    if let Some(sa) = sa {
        names.extend(
            sa.image_pull_secrets
                .into_iter()
                .flatten()
                .map(|r| r.name.clone()),
        );
    }
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    let mut out = Vec::new();
    for name in names {
        let secret = match caches.secrets.get(&ObjectRef::new(&name).within(namespace)) {
            Some(secret) => Some((*secret).clone()),
            None => read(
                Api::<Secret>::namespaced(client.clone(), namespace).get_opt(&name),
                || format!("pull secret {namespace}/{name}"),
            )
            .await?
            .flatten(),
        };
        let Some(secret) = secret else {
            tracing::warn!(namespace, secret = name, "pull secret not found; skipped");
            continue;
        };
        let Some(bytes) = secret
            .data
            .as_ref()
            .and_then(|d| d.get(DOCKER_CONFIG_JSON))
            .map(|b| b.0.clone())
        else {
            tracing::warn!(
                namespace,
                secret = name,
                "the pull secret has no .dockerconfigjson; skipped"
            );
            continue;
        };
        match Credentials::from_bytes(format!("secret {namespace}/{name}"), bytes) {
            Ok(c) => out.push(c),
            Err(error) => tracing::warn!(%error, "pull secret skipped"),
        }
    }
    Ok(out)
}

/// One uncached GET: `Ok(Some(answer))`, `Ok(None)` for an error that will not pass (a 403: logged and
/// skipped, as before), `Err` for a transient one.
async fn read<T>(
    request: impl std::future::Future<Output = Result<T, kube::Error>>,
    what: impl Fn() -> String,
) -> Result<Option<T>, kube::Error> {
    match request.await {
        Ok(found) => Ok(Some(found)),
        Err(error) if is_transient(&error) => Err(error),
        Err(error) => {
            tracing::warn!(%error, "cannot read the {}; skipped", what());
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_server_errors_and_lost_answers_are_transient() {
        let status = |code: u16| {
            kube::Error::Api(
                kube::core::Status::failure("x", "y")
                    .with_code(code)
                    .boxed(),
            )
        };
        assert!(is_transient(&status(429)));
        assert!(is_transient(&status(503)));
        assert!(!is_transient(&status(403)));
        assert!(!is_transient(&status(404)));
    }
}
