//! A workload's images: for each, the OS and Windows build the rules used and where they came from — its
//! name, its manifest (read from the registry, with the digest), or an image rule of the settings — and,
//! when the registry look-up failed, why.

use leptos::prelude::*;
use winplace_rules::windows::{ImageOs, ImageProvenance, Provenance, build_display};

/// The OS and builds as people say them: `Windows Server 2019 (10.0.17763)`, `Linux`, `multi-OS (Linux
/// and Windows)`, `Windows, build unknown`, `OS unknown`.
pub fn os_label(os: &ImageOs) -> String {
    match os {
        ImageOs::Linux => "Linux".into(),
        ImageOs::MultiOs => "multi-OS (Linux and Windows)".into(),
        ImageOs::Unrecognized => "OS unknown".into(),
        ImageOs::Windows { builds } if builds.is_empty() => "Windows, build unknown".into(),
        ImageOs::Windows { builds } => builds
            .iter()
            .map(|b| build_display(*b))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Where the OS and build came from, in a few words: `from its name`, `from its manifest sha256:52d5…`,
/// `from an image rule of the settings`.
pub fn provenance_label(image: &ImageProvenance) -> String {
    match image.from {
        Provenance::Name => "from its name".into(),
        Provenance::Settings => "from an image rule of the settings".into(),
        Provenance::Manifest => match &image.digest {
            Some(digest) => format!("from its manifest {}", short_digest(digest)),
            None => "from its manifest".into(),
        },
    }
}

/// `sha256:` and the first 12 hex digits (the whole digest is in the title).
fn short_digest(digest: &str) -> String {
    match digest.split_once(':') {
        Some((algorithm, hex)) if hex.len() > 12 => format!("{algorithm}:{}…", &hex[..12]),
        _ => digest.to_string(),
    }
}

/// The list of a workload's images.
#[component]
pub fn ImageList(images: Vec<ImageProvenance>) -> impl IntoView {
    if images.is_empty() {
        return view! { <p class="muted images-none">"No container images."</p> }.into_any();
    }
    view! {
        <ul class="images" aria-label="Images: OS, build, and where they came from">
            {images
                .into_iter()
                .map(|image| {
                    let os = os_label(&image.os);
                    let from = provenance_label(&image);
                    let title = image.digest.clone().unwrap_or_else(|| image.reason.clone());
                    view! {
                        <li
                            class="image"
                            data-image=image.image.clone()
                            data-from=image.from.as_str()
                            data-unresolved=image.unresolved.is_some().to_string()
                        >
                            <code class="image-ref">{image.image.clone()}</code>
                            " "
                            <span class="image-os">{os}</span>
                            " "
                            <span
                                class=format!("provenance provenance-{}", image.from.as_str())
                                title=title
                            >
                                {from}
                            </span>
                            {image
                                .unresolved
                                .clone()
                                .map(|why| {
                                    view! {
                                        " "
                                        <span class="unresolved">"unresolved: "{why}</span>
                                    }
                                })}
                            <span class="image-reason muted">{image.reason.clone()}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(from: Provenance, digest: Option<&str>) -> ImageProvenance {
        ImageProvenance {
            image: "contoso.azurecr.io/billing:4.2".into(),
            os: ImageOs::Windows {
                builds: vec![17763],
            },
            from,
            digest: digest.map(str::to_string),
            unresolved: None,
            reason: "r".into(),
        }
    }

    #[test]
    fn os_labels_name_the_builds() {
        assert!(
            os_label(&ImageOs::Windows {
                builds: vec![17763]
            })
            .contains("2019")
        );
        assert_eq!(
            os_label(&ImageOs::Windows { builds: vec![] }),
            "Windows, build unknown"
        );
        let both = os_label(&ImageOs::Windows {
            builds: vec![17763, 20348],
        });
        assert!(both.contains("2019") && both.contains("2022"), "{both}");
        assert_eq!(os_label(&ImageOs::Linux), "Linux");
        assert_eq!(os_label(&ImageOs::Unrecognized), "OS unknown");
    }

    #[test]
    fn provenance_says_name_manifest_with_digest_or_settings() {
        assert_eq!(
            provenance_label(&image(Provenance::Name, None)),
            "from its name"
        );
        assert_eq!(
            provenance_label(&image(
                Provenance::Manifest,
                Some("sha256:52d5aa0123456789abcdef")
            )),
            "from its manifest sha256:52d5aa012345…"
        );
        assert_eq!(
            provenance_label(&image(Provenance::Manifest, None)),
            "from its manifest"
        );
        assert_eq!(
            provenance_label(&image(Provenance::Settings, None)),
            "from an image rule of the settings"
        );
    }
}
