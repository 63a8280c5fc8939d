//! What an image's manifest (an OCI image index, or one manifest and its image configuration) says about
//! the image's OS and Windows build: the reading the Kubewarden policy, the CLI's `--resolve-images` and
//! the server share, so all three classify a looked-up image alike.

use serde_json::Value;

use super::builds::{WindowsVersion, build_display};
use super::classify::{ImageClass, ImageOs, ImageSource};
use super::os_features;

/// What an image's manifest says about its OS and Windows build.
///
/// `manifest` is what the OCI capability returned: an image index (or Docker manifest list), whose
/// `manifests[].platform` carry `os`, `os.version` and `os.features`; or a single image manifest, which
/// carries no platform, in which case `config` (the image configuration: `os`, `os.version`,
/// `os.features`) decides. An index with Windows entries classifies as Windows with the builds of those
/// entries (the Windows variant is what a Windows node pulls), counting only the entries a Windows node's
/// containerd 2.3+ can pick by their `os.features` (`win32k` ignored, any other feature not offered:
/// [`os_features`]); Linux entries only, as Linux. `None` when the documents
/// say nothing usable.
///
/// ```
/// use serde_json::json;
/// use winplace_rules::windows::{ImageOs, class_from_manifest};
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
    use serde_json::json;

    #[test]
    fn manifests_classify_images() {
        // The shapes of policy-wasm's test_data/context/manifest-*.json: an OCI index, and a single
        // manifest with its image configuration.
        let index_17763 = json!({"manifests": [{"digest": "sha256:aa", "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.17763.6414"}}]});
        let index_mixed = json!({"manifests": [
            {"digest": "sha256:aa", "platform": {"os": "windows", "architecture": "amd64", "os.version": "10.0.20348.2762"}},
            {"digest": "sha256:bb", "platform": {"os": "linux", "architecture": "amd64"}}]});
        let single = json!({
            "manifest": {"config": {"digest": "sha256:cc"}, "layers": [{"digest": "sha256:dd"}]},
            "config": {"architecture": "amd64", "os": "windows", "os.version": "10.0.20348.2762"}});
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
}
