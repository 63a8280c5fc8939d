//! What a registry said about an image ([`ManifestFacts`]: its digest and the platforms it is built for),
//! and what that means for placement ([`ManifestFacts::class`]).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use winplace_rules::windows::ImageClass;

/// One platform an image is built for: from an index entry's `platform`, or from the image config of a
/// single-platform image (read by [`super::fetch`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Platform {
    /// `linux`, `windows`, …
    pub os: String,
    /// `amd64`, `arm64`, …
    pub architecture: String,
    /// `os.version`: the Windows build (`10.0.20348.2762`); usually absent for Linux.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
    /// `os.features` (`win32k` on Server Core images): containerd 2.3+ picks a Windows entry only when
    /// they are `win32k` at most (kubernetes-windows-rules.md §5.5.2). Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub os_features: Vec<String>,
}

/// Where an image's platforms were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PlatformSource {
    /// The image index (or Docker manifest list): `manifests[].platform`.
    Index,
    /// The config blob of a single-platform image manifest.
    Config,
}

/// What the registry said about one image reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestFacts {
    /// The digest of the document the reference names (the index, or the single manifest).
    pub digest: String,
    /// Where the platforms were read.
    pub source: PlatformSource,
    /// Every platform, in the registry's order.
    pub platforms: Vec<Platform>,
}

impl ManifestFacts {
    /// What the platforms mean for placement: the same reading as the Kubewarden policy's
    /// ([`winplace_rules::windows::class_from_manifest`]), so the CLI, the server and admission
    /// agree. `None` when no platform is Linux or Windows.
    ///
    /// ```
    /// use winplace::registry::{ManifestFacts, Platform, PlatformSource};
    /// use winplace_rules::windows::ImageOs;
    /// let facts = ManifestFacts {
    ///     digest: "sha256:00".into(),
    ///     source: PlatformSource::Config,
    ///     platforms: vec![Platform { os: "windows".into(), architecture: "amd64".into(), os_version: Some("10.0.17763.6414".into()), os_features: vec!["win32k".into()] }],
    /// };
    /// assert_eq!(facts.class("example.com/app:1").unwrap().os, ImageOs::Windows { builds: vec![17763] });
    /// ```
    pub fn class(&self, image: &str) -> Option<ImageClass> {
        let platforms: Vec<Value> = self
            .platforms
            .iter()
            .map(|p| {
                let mut platform = json!({"os": p.os, "architecture": p.architecture});
                if let Some(version) = &p.os_version {
                    platform["os.version"] = json!(version);
                }
                if !p.os_features.is_empty() {
                    platform["os.features"] = json!(p.os_features);
                }
                platform
            })
            .collect();
        match self.source {
            PlatformSource::Index => {
                let entries: Vec<Value> = platforms
                    .into_iter()
                    .map(|p| json!({"platform": p}))
                    .collect();
                winplace_rules::windows::class_from_manifest(
                    image,
                    &json!({"manifests": entries}),
                    None,
                )
            }
            PlatformSource::Config => {
                winplace_rules::windows::class_from_manifest(image, &json!({}), platforms.first())
            }
        }
    }
}
