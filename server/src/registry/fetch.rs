//! Reading one image's platforms from its registry: the manifest the reference names, and, when that is a
//! single-platform image manifest (which carries no platform), its config blob. Every read is capped
//! ([`super::limits`]); the documents are decoded into the few fields read, so a large annotation or
//! history costs nothing kept.

use std::fmt;

use reqwest::header::HeaderName;
use serde::Deserialize;
use serde::de::{IgnoredAny, SeqAccess, Visitor};
use winplace_rules::windows::ImageRef;

use super::body::{read_capped, thousands, too_large};
use super::client::{RegistryClient, Session};
use super::credentials::Auth;
use super::error::ResolveError;
use super::facts::{ManifestFacts, Platform, PlatformSource};
use super::limits::{MAX_CONFIG_BYTES, MAX_INDEX_ENTRIES, MAX_MANIFEST_BYTES};

/// The manifest types asked for: OCI index and manifest, Docker manifest list and v2 manifest.
const ACCEPTED: &str = "application/vnd.oci.image.index.v1+json, \
application/vnd.docker.distribution.manifest.list.v2+json, \
application/vnd.oci.image.manifest.v1+json, \
application/vnd.docker.distribution.manifest.v2+json";

/// The digest a registry announces for a manifest (distribution-spec, "Pulling manifests").
const CONTENT_DIGEST: HeaderName = HeaderName::from_static("docker-content-digest");

/// Reads the platforms of `image`: an index's `manifests[].platform`, or a single manifest's config
/// `os`, `architecture`, `os.version`.
pub(crate) async fn fetch(
    client: &RegistryClient,
    image: &ImageRef,
    auth: &Auth,
) -> Result<ManifestFacts, ResolveError> {
    let timeout = client.timeout();
    let mut session = Session::new(client, image, auth);
    let reference = image
        .digest
        .as_deref()
        .or(image.tag.as_deref())
        .unwrap_or("latest");
    let response = session
        .get(&format!("manifests/{reference}"), ACCEPTED)
        .await?;
    let announced = response
        .headers()
        .get(CONTENT_DIGEST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = read_capped(response, MAX_MANIFEST_BYTES, "the manifest", timeout).await?;
    let digest = super::digest::verify(&body, image.digest.as_deref(), announced.as_deref())?;
    let manifest: Manifest = serde_json::from_slice(&body)
        .map_err(|e| ResolveError::Registry(format!("the manifest cannot be read: {e}")))?;
    drop(body);
    if let Some(entries) = manifest.manifests {
        if entries.total > MAX_INDEX_ENTRIES {
            return Err(ResolveError::TooLarge(format!(
                "the index lists {} manifests (too large: winplace reads at most {})",
                thousands(entries.total as u64),
                thousands(MAX_INDEX_ENTRIES as u64)
            )));
        }
        return Ok(ManifestFacts {
            digest,
            source: PlatformSource::Index,
            platforms: entries.platforms,
        });
    }
    let config = manifest
        .config
        .ok_or_else(|| ResolveError::Registry("the manifest names no config blob".into()))?;
    if let Some(size) = config.size
        && size > MAX_CONFIG_BYTES
    {
        return Err(too_large("the config blob", Some(size), MAX_CONFIG_BYTES));
    }
    let response = session
        .get(&format!("blobs/{}", config.digest), "*/*")
        .await?;
    let blob = read_capped(response, MAX_CONFIG_BYTES, "the config blob", timeout).await?;
    if let Some(actual) =
        super::digest::of(config.digest.split_once(':').map_or("", |(a, _)| a), &blob)
        && !actual.eq_ignore_ascii_case(&config.digest)
    {
        return Err(ResolveError::Registry(format!(
            "digest mismatch: the config blob read hashes to {actual}, not to {} that the manifest names",
            super::limits::quoted(&config.digest)
        )));
    }
    let platform: PlatformDoc = serde_json::from_slice(&blob)
        .map_err(|e| ResolveError::Registry(format!("the config blob cannot be read: {e}")))?;
    Ok(ManifestFacts {
        digest,
        source: PlatformSource::Config,
        platforms: platform.into_platform().into_iter().collect(),
    })
}

/// The fields of a manifest or index that are read.
#[derive(Deserialize)]
struct Manifest {
    /// An index's (or manifest list's) entries.
    manifests: Option<Entries>,
    /// A single manifest's config descriptor.
    config: Option<ConfigDescriptor>,
}

#[derive(Deserialize)]
struct ConfigDescriptor {
    digest: String,
    size: Option<u64>,
}

/// An entry's `platform`, or an image config's top level: `os`, `architecture`, `os.version`.
#[derive(Deserialize)]
struct PlatformDoc {
    os: Option<String>,
    architecture: Option<String>,
    #[serde(rename = "os.version")]
    os_version: Option<String>,
}

impl PlatformDoc {
    /// `None` without an `os`.
    fn into_platform(self) -> Option<Platform> {
        Some(Platform {
            os: self.os?,
            architecture: self.architecture.unwrap_or_default(),
            os_version: self.os_version,
        })
    }
}

#[derive(Deserialize)]
struct Entry {
    platform: Option<PlatformDoc>,
}

/// An index's entries: the platforms of the first [`MAX_INDEX_ENTRIES`], and how many there were in
/// all (the rest are counted, not kept).
struct Entries {
    platforms: Vec<Platform>,
    total: usize,
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Counting;
        impl<'de> Visitor<'de> for Counting {
            type Value = Entries;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of manifest descriptors")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Entries, A::Error> {
                let mut entries = Entries {
                    platforms: Vec::new(),
                    total: 0,
                };
                while entries.total < MAX_INDEX_ENTRIES {
                    let Some(entry) = seq.next_element::<Entry>()? else {
                        return Ok(entries);
                    };
                    entries.total += 1;
                    entries
                        .platforms
                        .extend(entry.platform.and_then(PlatformDoc::into_platform));
                }
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    entries.total += 1;
                }
                Ok(entries)
            }
        }
        deserializer.deserialize_seq(Counting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(entries: usize) -> String {
        let entry = r#"{"mediaType":"m","digest":"sha256:00","size":1,"platform":{"os":"windows","architecture":"amd64","os.version":"10.0.20348.1"}}"#;
        format!(
            r#"{{"schemaVersion":2,"manifests":[{}]}}"#,
            vec![entry; entries].join(",")
        )
    }

    #[test]
    fn index_entries_past_the_cap_are_counted_not_kept() {
        let small: Manifest = serde_json::from_str(&index(3)).expect("index");
        let entries = small.manifests.expect("entries");
        assert_eq!((entries.total, entries.platforms.len()), (3, 3));
        let big: Manifest = serde_json::from_str(&index(MAX_INDEX_ENTRIES + 5)).expect("index");
        let entries = big.manifests.expect("entries");
        assert_eq!(entries.total, MAX_INDEX_ENTRIES + 5);
        assert_eq!(entries.platforms.len(), MAX_INDEX_ENTRIES);
    }

    #[test]
    fn only_the_fields_read_are_decoded() {
        // A large annotation and unknown fields are skipped; an entry without a platform counts.
        let text = format!(
            r#"{{"schemaVersion":2,"annotations":{{"a":"{}"}},"manifests":[{{"digest":"sha256:00"}},{{"platform":{{"os":"linux"}}}}]}}"#,
            "x".repeat(10_000)
        );
        let manifest: Manifest = serde_json::from_str(&text).expect("index");
        let entries = manifest.manifests.expect("entries");
        assert_eq!(entries.total, 2);
        assert_eq!(entries.platforms[0].os, "linux");
        let single: Manifest =
            serde_json::from_str(r#"{"config":{"digest":"sha256:11","size":12}}"#).expect("single");
        assert_eq!(single.config.map(|c| c.size), Some(Some(12)));
    }
}
