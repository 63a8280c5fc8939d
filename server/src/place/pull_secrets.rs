//! A pod's registry credentials: the image pull secrets it names, then its service account's
//! (docs/reference/image-registries.md §2.3: `kubernetes.io/dockerconfigjson` secrets hold a Docker
//! config). A secret that cannot be read or parsed is skipped with a warning: the next credentials, or
//! anonymous access, are tried instead, as the kubelet does with a missing pull secret.

use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::{Api, Client};

use crate::registry::Credentials;

/// The key of a `kubernetes.io/dockerconfigjson` secret.
const DOCKER_CONFIG_JSON: &str = ".dockerconfigjson";

/// The credentials of `pod`'s pull secrets, in order: its own `imagePullSecrets`, then those of its
/// service account (`default` when it names none).
pub async fn for_pod(client: &Client, pod: &Pod) -> Vec<Credentials> {
    let Some(namespace) = pod.metadata.namespace.as_deref() else {
        return Vec::new();
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
    match Api::<ServiceAccount>::namespaced(client.clone(), namespace)
        .get_opt(account)
        .await
    {
        Ok(Some(sa)) => names.extend(
            sa.image_pull_secrets
                .into_iter()
                .flatten()
                .map(|r| r.name.clone()),
        ),
        Ok(None) => {}
        Err(error) => {
            tracing::warn!(namespace, account, %error, "cannot read the service account's pull secrets");
        }
    }
    names.dedup();
    let secrets = Api::<Secret>::namespaced(client.clone(), namespace);
    let mut out = Vec::new();
    for name in names {
        match secrets.get_opt(&name).await {
            Ok(Some(secret)) => {
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
            Ok(None) => {
                tracing::warn!(namespace, secret = name, "pull secret not found; skipped")
            }
            Err(error) => {
                tracing::warn!(namespace, secret = name, %error, "cannot read the pull secret; skipped")
            }
        }
    }
    out
}
