//! Reading one image's platforms from its registry: the manifest the reference names, and, when that is a
//! single-platform image manifest (which carries no platform), its config blob.

use oci_client::Client;
use oci_client::Reference;
use oci_client::manifest::{
    IMAGE_MANIFEST_LIST_MEDIA_TYPE, IMAGE_MANIFEST_MEDIA_TYPE, OCI_IMAGE_INDEX_MEDIA_TYPE,
    OCI_IMAGE_MEDIA_TYPE,
};
use oci_client::secrets::RegistryAuth;
use serde_json::Value;

use super::error::ResolveError;
use super::facts::{ManifestFacts, Platform, PlatformSource};

/// The manifest types asked for: OCI index and manifest, Docker manifest list and v2 manifest.
const ACCEPTED: &[&str] = &[
    OCI_IMAGE_INDEX_MEDIA_TYPE,
    IMAGE_MANIFEST_LIST_MEDIA_TYPE,
    OCI_IMAGE_MEDIA_TYPE,
    IMAGE_MANIFEST_MEDIA_TYPE,
];

/// The largest config blob read (real ones are a few KiB; Windows ones with long histories, tens).
const MAX_CONFIG_BYTES: usize = 4 << 20;

/// Reads the platforms of `reference`: an index's `manifests[].platform`, or a single manifest's
/// config `os`, `architecture`, `os.version`. `timeout` is only quoted by errors.
pub(crate) async fn fetch(
    client: &Client,
    reference: &Reference,
    auth: &RegistryAuth,
    timeout: std::time::Duration,
) -> Result<ManifestFacts, ResolveError> {
    let oci = |e| ResolveError::from_oci(e, timeout);
    let (body, digest) = client
        .pull_manifest_raw(reference, auth, ACCEPTED)
        .await
        .map_err(oci)?;
    let manifest: Value = serde_json::from_slice(&body)
        .map_err(|e| ResolveError::Registry(format!("the manifest is not JSON: {e}")))?;
    if let Some(entries) = manifest.get("manifests").and_then(Value::as_array) {
        let platforms = entries
            .iter()
            .filter_map(|e| e.get("platform"))
            .filter_map(Platform::from_json)
            .collect();
        return Ok(ManifestFacts {
            digest,
            source: PlatformSource::Index,
            platforms,
        });
    }
    let config_digest = manifest
        .pointer("/config/digest")
        .and_then(Value::as_str)
        .ok_or_else(|| ResolveError::Registry("the manifest names no config blob".into()))?;
    let mut blob: Vec<u8> = Vec::new();
    client
        .pull_blob(reference, config_digest, &mut blob)
        .await
        .map_err(oci)?;
    if blob.len() > MAX_CONFIG_BYTES {
        return Err(ResolveError::Registry(format!(
            "the config blob is {} bytes, more than the {MAX_CONFIG_BYTES} read",
            blob.len()
        )));
    }
    let config: Value = serde_json::from_slice(&blob)
        .map_err(|e| ResolveError::Registry(format!("the config blob is not JSON: {e}")))?;
    Ok(ManifestFacts {
        digest,
        source: PlatformSource::Config,
        platforms: Platform::from_json(&config).into_iter().collect(),
    })
}
