//! Image manifests: which images of a request are worth a look-up through the OCI capability (what a
//! manifest then says is read by [`winplace_rules::windows::class_from_manifest`]).

use serde_json::Value;
use winplace_rules::input::LineMap;
use winplace_rules::model::{self, ClusterContext};
use winplace_rules::placement::{PodOs, Resolver};
use winplace_rules::settings::Settings;
use winplace_rules::windows::{ImageOs, classify_image};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::{fixture, no_manifests, request, settings};
    use crate::admission::{Decision, Verdict, review};
    use serde_json::json;
    use std::collections::BTreeMap;
    use winplace_rules::windows::class_from_manifest;

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
