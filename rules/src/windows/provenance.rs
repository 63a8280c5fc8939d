//! Where the OS and build the rules used for an image came from, as the dashboard shows it next to each
//! image ([`ImageProvenance`]): its name (the built-in tables), its manifest (read from a registry), or an
//! image rule of the settings; and, when a registry look-up failed, why.
//!
//! [`crate::rules::ImageFacts::describe`] builds one from what a registry client learnt.

use serde::{Deserialize, Serialize};

use super::classify::{ImageOs, ImageSource};

/// Where an image's classification came from, in the three words the dashboard shows.
///
/// ```
/// use winplace_rules::windows::{ImageSource, Provenance};
/// assert_eq!(Provenance::of(ImageSource::MicrosoftTags), Provenance::Name);
/// assert_eq!(Provenance::of(ImageSource::ImageRule(0)), Provenance::Settings);
/// assert_eq!(serde_json::to_value(Provenance::Manifest).unwrap(), "manifest");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Provenance {
    /// The image's name: a tag or repository the built-in tables know (Microsoft tags, the well-known
    /// Linux and multi-OS lists), or nothing recognized it.
    Name,
    /// The image's manifest, read from its registry.
    Manifest,
    /// An image rule of the settings (`imageRules`).
    Settings,
}

impl Provenance {
    /// The provenance of a classification's source.
    pub fn of(source: ImageSource) -> Provenance {
        match source {
            ImageSource::Manifest => Provenance::Manifest,
            ImageSource::ImageRule(_) => Provenance::Settings,
            ImageSource::MicrosoftTags
            | ImageSource::WellKnownLinux
            | ImageSource::MultiOsList
            | ImageSource::Unrecognized => Provenance::Name,
        }
    }

    /// `name`, `manifest` or `settings`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Name => "name",
            Provenance::Manifest => "manifest",
            Provenance::Settings => "settings",
        }
    }
}

/// One image as the rules judged it: its OS and builds, where they came from, and why a registry
/// look-up failed (the image then keeps what its name says).
///
/// ```
/// use winplace_rules::windows::{ImageOs, ImageProvenance, Provenance};
/// let image = ImageProvenance {
///     image: "contoso.azurecr.io/billing:4.2".into(),
///     os: ImageOs::Windows { builds: vec![17763] },
///     from: Provenance::Manifest,
///     digest: Some("sha256:52d5".into()),
///     unresolved: None,
///     reason: "the manifest says Windows Server 2019".into(),
/// };
/// let json = serde_json::to_value(&image).unwrap();
/// assert_eq!(json["from"], "manifest");
/// assert_eq!(json["os"]["builds"][0], 17763);
/// assert!(json.get("unresolved").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageProvenance {
    /// The reference as written in the pod.
    pub image: String,
    /// The OS (and Windows builds) the rules used.
    pub os: ImageOs,
    /// Where that came from.
    pub from: Provenance,
    /// The digest the registry answered with (the index, or the single manifest), when `from` is
    /// `manifest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// Why the registry look-up failed (`the registry does not know this repository or tag (not
    /// found)`); `from` is then `name` or `settings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
    /// The classification's sentence (`the tag ltsc2019 is Windows Server 2019 (10.0.17763)`).
    pub reason: String,
}
