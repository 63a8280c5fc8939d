//! A pod's registry credentials: the image pull secrets it names, then its service account's, read as
//! the kubelet reads them (docs/reference/image-registries.md §2.3): a `kubernetes.io/dockerconfigjson`
//! secret's `.dockerconfigjson` holds a Docker config (`{"auths": {registry: …}}`), a
//! `kubernetes.io/dockercfg` secret's `.dockercfg` the older format, the map of registries itself; a
//! secret of another type, or without its type's key, holds no credentials. They are read from watched
//! caches ([`PullSecretCaches`]: kube-rs reflectors over the ServiceAccounts and the Secrets of those two
//! types), not with a GET per pod: a burst of gated pods costs the API server nothing.
//!
//! A name the cache does not hold (yet: a Secret created with the pod) is read once with a GET. A
//! Secret that does not exist, or cannot be parsed, is skipped with a warning, as the kubelet skips a
//! missing pull secret. An API error that may pass (429, 5xx, no answer) is NOT a missing secret: it is
//! returned, and the pod waits for the next try rather than be read anonymously.

use k8s_openapi::api::core::v1::{Pod, Secret, ServiceAccount};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client};

use super::retry::is_transient;
use crate::registry::Credentials;

/// The pull secret types the kubelet reads, each with the key that holds its credentials (kubelet
/// `credentialprovider/secrets`, image-registries.md §2.3): the Secrets the caches watch (a field
/// selector on `type`, which Secrets support: scheduling-gates.md §7), so that only pull secrets are
/// held in memory, not every Secret of the cluster.
pub const PULL_SECRET_TYPES: [(&str, &str); 2] = [
    ("kubernetes.io/dockerconfigjson", ".dockerconfigjson"),
    ("kubernetes.io/dockercfg", ".dockercfg"),
];

/// The watched caches pull secrets are read from.
#[derive(Clone)]
pub struct PullSecretCaches {
    /// Every ServiceAccount.
    pub accounts: Store<ServiceAccount>,
    /// The Secrets of each of [`PULL_SECRET_TYPES`], in that order.
    pub secrets: Vec<Store<Secret>>,
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
        let key = ObjectRef::new(&name).within(namespace);
        let cached = caches.secrets.iter().find_map(|store| store.get(&key));
        let secret = match cached {
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
        match credentials(&secret, &format!("secret {namespace}/{name}")) {
            Ok(c) => out.push(c),
            Err(why) => tracing::warn!(namespace, secret = name, "pull secret skipped: {why}"),
        }
    }
    Ok(out)
}

/// The credentials a pull secret holds, as the kubelet reads them: its type's key, non-empty, parsed as
/// that type's format (a `.dockercfg` map becomes the `auths` of a Docker config). `Err` says why it
/// holds none.
///
/// ```
/// use base64::Engine as _;
/// use k8s_openapi::api::core::v1::Secret;
/// use winplace::place::pull_secrets::credentials;
/// use winplace::registry::Auth;
/// let cfg = br#"{"registry.example.com": {"auth": "dTpw"}}"#;
/// let secret: Secret = serde_json::from_value(serde_json::json!({
///     "type": "kubernetes.io/dockercfg",
///     "data": {".dockercfg": base64::engine::general_purpose::STANDARD.encode(cfg)}})).unwrap();
/// let creds = credentials(&secret, "secret shop/old").unwrap();
/// assert_eq!(creds.auth_for("registry.example.com"),
///            Auth::Basic { username: "u".into(), password: "p".into() });
/// ```
pub fn credentials(secret: &Secret, name: &str) -> Result<Credentials, String> {
    let type_ = secret.type_.as_deref().unwrap_or("");
    let Some((_, key)) = PULL_SECRET_TYPES.iter().find(|(t, _)| *t == type_) else {
        return Err(format!(
            "its type is {type_:?}, not one the kubelet reads image credentials from"
        ));
    };
    let Some(bytes) = secret
        .data
        .as_ref()
        .and_then(|d| d.get(*key))
        .map(|b| b.0.clone())
        .filter(|b| !b.is_empty())
    else {
        return Err(format!("it has no {key}"));
    };
    let bytes = if *key == ".dockercfg" {
        // The older format is the map of registries a Docker config holds under `auths`.
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{name}: {key} is not a JSON object: {e}"))?;
        serde_json::to_vec(&serde_json::json!({ "auths": map })).map_err(|e| e.to_string())?
    } else {
        bytes
    };
    Credentials::from_bytes(name.to_string(), bytes).map_err(|e| e.to_string())
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
    use base64::Engine as _;

    fn secret(type_: &str, key: &str, text: &str) -> Secret {
        serde_json::from_value(serde_json::json!({"type": type_,
            "data": {key: base64::engine::general_purpose::STANDARD.encode(text)}}))
        .expect("secret")
    }

    #[test]
    fn each_type_is_read_from_its_own_key_as_the_kubelet_reads_it() {
        let auths = r#"{"auths": {"r.example": {"auth": "dTpw"}}}"#;
        let map = r#"{"r.example": {"auth": "dTpw"}}"#;
        let basic = crate::registry::Auth::Basic {
            username: "u".into(),
            password: "p".into(),
        };
        for (type_, key, text, read) in [
            (
                "kubernetes.io/dockerconfigjson",
                ".dockerconfigjson",
                auths,
                true,
            ),
            ("kubernetes.io/dockercfg", ".dockercfg", map, true),
            // The key of the other type, or another type: no credentials (the kubelet checks both).
            ("kubernetes.io/dockercfg", ".dockerconfigjson", auths, false),
            ("kubernetes.io/dockerconfigjson", ".dockercfg", map, false),
            ("Opaque", ".dockerconfigjson", auths, false),
            // Empty, or not the format of its type.
            ("kubernetes.io/dockercfg", ".dockercfg", "", false),
            ("kubernetes.io/dockercfg", ".dockercfg", "[1]", false),
        ] {
            let got = credentials(&secret(type_, key, text), "s");
            assert_eq!(got.is_ok(), read, "{type_} {key}: {got:?}");
            if let Ok(c) = got {
                assert_eq!(c.auth_for("r.example"), basic, "{type_}");
            }
        }
    }
}
