//! Image manifests: which images of a request are worth a look-up through the OCI capability, and what a
//! manifest says about an image's OS and Windows build.

use serde_json::Value;
use winplace_rules::input::LineMap;
use winplace_rules::model::{self, ClusterContext};
use winplace_rules::placement::{PodOs, Resolver};
use winplace_rules::settings::Settings;
use winplace_rules::windows::builds::{WindowsVersion, build_display};
use winplace_rules::windows::{ImageClass, ImageOs, ImageSource, classify_image, os_features};

use super::{AdmissionRequest, asks_for_manifests, is_exempt, malformed, reads_context};

/// Most distinct images whose manifests one request looks up (each lookup is a registry round trip).
pub const MAX_MANIFEST_LOOKUPS: usize = 8;

/// The images of a workload whose Windows build their name does not tell and a manifest could: Windows
/// images of unknown build, and unrecognized images of a Windows pod (HostProcess pods are not matched
/// on builds, so none there). Distinct, in container order, at most [`MAX_MANIFEST_LOOKUPS`]. None at all
/// unless the settings say the registry capabilities are granted ([`asks_for_manifests`]).
pub fn manifest_lookups(
    request: &AdmissionRequest,
    context: Option<&ClusterContext>,
    settings: &Settings,
) -> Vec<String> {
    if !asks_for_manifests(settings)
        || !reads_context(request)
        || is_exempt(request, settings)
        || malformed(request).is_some()
        || !names_leave_a_build_open(&request.object, settings)
    {
        return Vec::new();
    }
    let Some(object) = model::Object::from_value("", 0, request.object.clone(), LineMap::default())
    else {
        return Vec::new();
    };
    let Some(Ok(template)) = model::pod_template(&object) else {
        return Vec::new();
    };
    let placement = Resolver::new(context, settings).resolve(&template);
    if placement.host_process {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for image in &placement.images {
        let wanted = match &image.class.os {
            ImageOs::Windows { builds } => builds.is_empty(),
            ImageOs::Unrecognized => placement.os == PodOs::Windows,
            ImageOs::Linux | ImageOs::MultiOs => false,
        };
        if wanted && !out.contains(&image.image) && out.len() < MAX_MANIFEST_LOOKUPS {
            out.push(image.image.clone());
        }
    }
    out
}

/// Whether some image of the workload, classified by its name and the settings' image rules alone (as
/// the resolver classifies it when no manifest is known), could be one [`manifest_lookups`] names: a
/// Windows image of unknown build, or an unrecognized one. When none is, no lookup can be wanted, and the
/// pod template need not be decoded and resolved to know it (most requests: this runs on every one).
fn names_leave_a_build_open(object: &Value, settings: &Settings) -> bool {
    let kind = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    let Some(workload) = model::WorkloadKind::of(kind("apiVersion"), kind("kind")) else {
        return false;
    };
    let Some(spec) = model::get(object, &workload.pod_spec_path()) else {
        return false;
    };
    model::raw_spec::raw_containers(spec)
        .filter_map(|container| container.value.get("image")?.as_str())
        .filter(|image| !image.is_empty())
        .any(
            |image| match classify_image(image, &settings.image_rules).os {
                ImageOs::Windows { builds } => builds.is_empty(),
                ImageOs::Unrecognized => true,
                ImageOs::Linux | ImageOs::MultiOs => false,
            },
        )
}

/// What an image's manifest says about its OS and Windows build.
///
/// `manifest` is what the OCI capability returned: an image index (or Docker manifest list), whose
/// `manifests[].platform` carry `os`, `os.version` and `os.features`; or a single image manifest, which
/// carries no platform, in which case `config` (the image configuration: `os`, `os.version`,
/// `os.features`) decides. An index with Windows entries classifies as Windows with the builds of those
/// entries (the Windows variant is what a Windows node pulls), counting only the entries a Windows node's
/// containerd 2.3+ can pick by their `os.features` (`win32k` ignored, any other feature not offered:
/// [`winplace_rules::windows::os_features`]); Linux entries only, as Linux. `None` when the documents
/// say nothing usable.
///
/// ```
/// use serde_json::json;
/// use winplace_policy_wasm::admission::class_from_manifest;
/// use winplace_rules::windows::ImageOs;
/// let index = json!({"manifests": [
///     {"platform": {"os": "linux", "architecture": "amd64"}},
///     {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.2762",
///                   "os.features": ["win32k"]}}]});
/// let class = class_from_manifest("example.com/app:1", &index, None).unwrap();
/// assert_eq!(class.os, ImageOs::Windows { builds: vec![20348] });
/// ```
pub fn class_from_manifest(
    image: &str,
    manifest: &Value,
    config: Option<&Value>,
) -> Option<ImageClass> {
    /// One platform: `os`, `os.version`, `os.features`.
    struct Entry<'v> {
        os: &'v str,
        version: Option<&'v str>,
        features: Vec<&'v str>,
    }
    fn entry(p: &Value) -> Option<Entry<'_>> {
        Some(Entry {
            os: p.get("os").and_then(Value::as_str)?,
            version: p.get("os.version").and_then(Value::as_str),
            features: p
                .get("os.features")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
        })
    }
    let platforms: Vec<Entry<'_>> = match manifest.get("manifests") {
        Some(Value::Array(entries)) => entries
            .iter()
            .filter_map(|e| e.get("platform"))
            .filter_map(entry)
            .collect(),
        _ => config.and_then(entry).into_iter().collect(),
    };
    let windows: Vec<&Entry<'_>> = platforms
        .iter()
        .filter(|e| e.os.eq_ignore_ascii_case("windows"))
        .collect();
    let linux = platforms.iter().any(|e| e.os.eq_ignore_ascii_case("linux"));
    if !windows.is_empty() {
        let pickable: Vec<&&Entry<'_>> = windows
            .iter()
            .filter(|e| os_features::features_match(&e.features))
            .collect();
        let mut builds: Vec<u32> = pickable
            .iter()
            .filter_map(|e| e.version.and_then(WindowsVersion::parse))
            .map(|v| v.build)
            .collect();
        builds.sort_unstable();
        builds.dedup();
        let reason = if pickable.is_empty() {
            let mut features: Vec<&str> = windows
                .iter()
                .flat_map(|e| os_features::unmatched(&e.features))
                .collect();
            features.sort_unstable();
            features.dedup();
            format!(
                "the manifest of {image} is Windows, but every Windows entry asks for os.features ({}) a Windows node's containerd 2.3+ does not match",
                features.join(", ")
            )
        } else if builds.is_empty() {
            format!("the manifest of {image} is Windows but names no os.version")
        } else {
            let names: Vec<String> = builds.iter().map(|&b| build_display(b)).collect();
            format!("the manifest of {image} says Windows {}", names.join(", "))
        };
        return Some(ImageClass {
            os: ImageOs::Windows { builds },
            source: ImageSource::Manifest,
            reason,
        });
    }
    linux.then(|| ImageClass {
        os: ImageOs::Linux,
        source: ImageSource::Manifest,
        reason: format!("the manifest of {image} lists only Linux"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{fixture, no_manifests, request, settings};
    use crate::admission::{Decision, Verdict, review};
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn manifests_classify_images() {
        let index_17763 = fixture("context/manifest-index-windows-17763.json");
        let index_mixed = fixture("context/manifest-index-windows-20348-linux.json");
        let single = fixture("context/manifest-config-windows-20348.json");
        let linux = json!({"manifests": [{"platform": {"os": "linux", "architecture": "amd64"}}, {"platform": {"os": "linux", "architecture": "arm64"}}]});
        let no_version =
            json!({"manifests": [{"platform": {"os": "windows", "architecture": "amd64"}}]});
        let no_platform = json!({"manifests": [{"digest": "sha256:00"}]});
        // kubernetes-windows-rules.md §5.5.2: containerd 2.3+ strips `win32k`; an entry asking for any
        // other feature is not picked on a Windows node.
        let features = json!({"manifests": [
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.17763.1", "os.features": ["win32k"]}},
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1", "os.features": ["win32k", "sse4"]}},
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.26100.1", "os.features": []}}]});
        let only_odd = json!({"manifests": [
            {"platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.1", "os.features": ["sse4"]}},
            {"platform": {"os": "linux", "architecture": "amd64"}}]});
        let config_win32k =
            json!({"os": "windows", "os.version": "10.0.20348.1", "os.features": ["win32k"]});
        // (manifest, config, expected OS).
        let rows = [
            (
                &index_17763,
                None,
                Some(ImageOs::Windows {
                    builds: vec![17763],
                }),
            ),
            (
                &index_mixed,
                None,
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
            (
                &single["manifest"],
                Some(&single["config"]),
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
            (&single["manifest"], None, None),
            (&linux, None, Some(ImageOs::Linux)),
            (&no_version, None, Some(ImageOs::Windows { builds: vec![] })),
            (&no_platform, None, None),
            (
                &features,
                None,
                Some(ImageOs::Windows {
                    builds: vec![17763, 26100],
                }),
            ),
            (&only_odd, None, Some(ImageOs::Windows { builds: vec![] })),
            (
                &single["manifest"],
                Some(&config_win32k),
                Some(ImageOs::Windows {
                    builds: vec![20348],
                }),
            ),
        ];
        let why = class_from_manifest("example.com/app:1", &only_odd, None).map(|c| c.reason);
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("os.features (sse4)")),
            "{why:?}"
        );
        for (manifest, config, want) in rows {
            let got = class_from_manifest("example.com/app:1", manifest, config);
            assert_eq!(got.as_ref().map(|c| c.os.clone()), want, "{manifest}");
            if let Some(class) = got {
                assert_eq!(class.source, ImageSource::Manifest);
                assert!(
                    class.reason.contains("example.com/app:1"),
                    "{}",
                    class.reason
                );
            }
        }
    }

    #[test]
    fn manifest_lookups_are_distinct_and_only_where_a_build_is_unknown() {
        let hostprocess = {
            let mut r = request("pod-windows-private-image");
            r.object["spec"]["securityContext"] = json!({"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}});
            r.object["spec"]["hostNetwork"] = json!(true);
            r
        };
        let rows: [(&str, AdmissionRequest, &[&str]); 7] = [
            (
                "private",
                request("pod-windows-private-image"),
                &["registry.example.com/shop/win-api:2.3"],
            ),
            (
                "floating",
                request("pod-windows-floating-tag"),
                &["mcr.microsoft.com/windows/servercore:latest"],
            ),
            (
                "repeated",
                request("pod-windows-private-images-repeated"),
                &[
                    "registry.example.com/shop/win-init:1.0",
                    "registry.example.com/shop/win-api:2.3",
                ],
            ),
            ("known build", request("deployment-windows-pinned"), &[]),
            ("linux", request("pod-linux"), &[]),
            ("node", request("node-windows"), &[]),
            ("hostprocess", hostprocess, &[]),
        ];
        let granted = settings(json!({"registryAware": true}));
        for (what, r, want) in rows {
            assert_eq!(manifest_lookups(&r, None, &granted), want, "{what}");
            // Not granted (the default): nothing is asked, whatever the images.
            assert!(
                manifest_lookups(&r, None, &Settings::default()).is_empty(),
                "{what}"
            );
        }
        let exempt = settings(json!({"exemptNamespaces": ["default"], "registryAware": true}));
        assert!(manifest_lookups(&request("pod-windows-private-image"), None, &exempt).is_empty());
        let mut many = request("pod-windows-private-image");
        many.object["spec"]["containers"] = (0..20)
            .map(|i| json!({"name": format!("c{i}"), "image": format!("registry.example.com/app{i}:1")}))
            .collect();
        assert_eq!(
            manifest_lookups(&many, None, &granted).len(),
            MAX_MANIFEST_LOOKUPS
        );
    }

    #[test]
    fn manifests_decide_the_build() {
        let r = request("pod-windows-private-image");
        let image = "registry.example.com/shop/win-api:2.3";
        let facts = |manifest: &str| {
            let m = fixture(manifest);
            let class = class_from_manifest(image, &m, None).unwrap();
            BTreeMap::from([(image.to_string(), class)])
        };
        // No manifest (the lookup failed): a warning, never a rejection.
        let d = review(r.clone(), &Settings::default(), None, &no_manifests());
        assert_eq!(d.verdict, Verdict::Accept);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.starts_with("[windows-image-build-unknown]"))
        );
        // Built for 2022, pinned to 2022: accepted, and nothing unknown any more (the pin's only warning
        // is that it is exact, off with buildPinning: exact).
        let exact = Settings {
            build_pinning: winplace_rules::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let d = review(
            r.clone(),
            &exact,
            None,
            &facts("context/manifest-index-windows-20348-linux.json"),
        );
        assert_eq!(d, Decision::accept());
        // Built for 2019, pinned to 2022: process isolation needs the same build (kubernetes-windows-rules.md §5.1).
        let d = review(
            r.clone(),
            &Settings::default(),
            None,
            &facts("context/manifest-index-windows-17763.json"),
        );
        assert!(
            matches!(d.verdict, Verdict::Reject(ref m) if m.contains("windows-build-mismatch")),
            "{d:?}"
        );
    }
}
