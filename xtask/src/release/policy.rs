//! policy.wasm as the OCI artifact Kubewarden pulls, in an oci-archive, and its Artifact Hub files.
//!
//! The manifest is what `kwctl push` writes (docs/reference/kubewarden-packaging.md, "The policy artifact"):
//! a config `{}` of type `application/vnd.wasm.config.v1+json`, one layer, the module, of type
//! `application/vnd.wasm.content.layer.v1+wasm` (policy-server pulls the layer of that type), and as the
//! manifest's annotations the metadata's single-line annotations, trimmed, plus
//! `org.opencontainers.image.source` from `io.kubewarden.policy.source`.

use crate::image::Source;
use crate::oci::{self, Layout};
use serde_json::{Map, Value, json};
use std::path::Path;

/// The archive's file in the set, and the Artifact Hub package and repository files.
pub const FILES: [&str; 3] = [ARCHIVE, "artifacthub-pkg.yml", "artifacthub-repo.yml"];
pub const ARCHIVE: &str = "winplace-policy.oci.tar";
/// oci-client's `WASM_CONFIG_MEDIA_TYPE` and `WASM_LAYER_MEDIA_TYPE`, which Kubewarden's policy-fetcher
/// pushes and pulls with.
pub const CONFIG_TYPE: &str = "application/vnd.wasm.config.v1+json";
pub const LAYER_TYPE: &str = "application/vnd.wasm.content.layer.v1+wasm";

/// Writes the policy's archive (its manifest named `v<version>`) and its Artifact Hub files into `output`;
/// returns the manifest's digest.
pub fn write(wasm: &Path, output: &Path, source: &Source) -> Result<String, String> {
    let root = crate::util::root();
    let metadata = root.join("policy-wasm/metadata.yml");
    let text =
        std::fs::read_to_string(&metadata).map_err(|e| format!("{}: {e}", metadata.display()))?;
    let metadata_json = crate::annotate::metadata_json(&text)
        .map_err(|e| format!("{}: {e}", metadata.display()))?;
    let module = std::fs::read(wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let mut layout = Layout::default();
    let descriptor = manifest(&mut layout, module, &metadata_json)?;
    let digest = descriptor["digest"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    layout.list(descriptor, Some(&format!("v{}", source.version)));
    layout.write_archive(&output.join(ARCHIVE), source.epoch)?;
    let package = root.join("policy-wasm/artifacthub-pkg.yml");
    let package =
        std::fs::read_to_string(&package).map_err(|e| format!("{}: {e}", package.display()))?;
    oci::write_atomically(
        &output.join("artifacthub-pkg.yml"),
        dated(&package, source.epoch)?.as_bytes(),
    )?;
    let repository = root.join("policy-wasm/artifacthub-repo.yml");
    std::fs::copy(&repository, output.join("artifacthub-repo.yml"))
        .map(|_| ())
        .map_err(|e| format!("{}: {e}", repository.display()))?;
    Ok(digest)
}

/// The policy's manifest, config and layer into `layout`; returns the manifest's descriptor.
fn manifest(
    layout: &mut Layout,
    module: Vec<u8>,
    metadata: &Map<String, Value>,
) -> Result<Value, String> {
    let config = layout.blob(CONFIG_TYPE, b"{}".to_vec());
    let layer = layout.blob(LAYER_TYPE, module);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST,
        "config": config,
        "layers": [layer],
        "annotations": annotations(metadata),
    });
    layout.document(oci::MANIFEST, &manifest)
}

/// kwctl's `build_oci_annotations` (crates/kwctl/src/push.rs): the metadata's annotations but the
/// multi-line ones, trimmed, and `org.opencontainers.image.source` from `io.kubewarden.policy.source`
/// when not given.
fn annotations(metadata: &Map<String, Value>) -> Map<String, Value> {
    let mut out: Map<String, Value> = metadata
        .get("annotations")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (v.lines().count() <= 1).then(|| (k.clone(), Value::String(v.trim().to_string())))
        })
        .collect();
    if let Some(source) = out.get("io.kubewarden.policy.source").cloned() {
        out.entry("org.opencontainers.image.source")
            .or_insert(source);
    }
    out
}

/// The package with its `createdAt` the release's time (kwctl's scaffold writes the time of its run).
fn dated(package: &str, epoch: u64) -> Result<String, String> {
    let mut found = false;
    let text: String = package
        .lines()
        .map(|line| {
            if line.starts_with("createdAt:") {
                found = true;
                format!("createdAt: {}\n", oci::rfc3339(epoch))
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    if found {
        Ok(text)
    } else {
        Err("policy-wasm/artifacthub-pkg.yml: no createdAt line".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_are_kwctls() {
        let metadata = json!({"annotations": {
            "io.kubewarden.policy.title": " winplace ",
            "io.kubewarden.policy.source": "https://github.com/winplace/winplace",
            "io.kubewarden.policy.usage": "line one\nline two",
        }});
        let got = annotations(metadata.as_object().expect("object"));
        assert_eq!(
            Value::Object(got),
            json!({
                "io.kubewarden.policy.title": "winplace",
                "io.kubewarden.policy.source": "https://github.com/winplace/winplace",
                "org.opencontainers.image.source": "https://github.com/winplace/winplace",
            })
        );
    }

    #[test]
    fn the_manifest_has_kwctls_media_types() {
        let mut layout = Layout::default();
        let descriptor = manifest(&mut layout, b"\0asm".to_vec(), &Map::new()).expect("manifest");
        assert_eq!(descriptor["mediaType"], oci::MANIFEST);
        let mut entries = layout;
        entries.list(descriptor, Some("v1"));
        // The layer and the config are the blobs of the module and of `{}`.
        let blob = oci::sha256(b"\0asm");
        let config = oci::sha256(b"{}");
        let dir = tempfile_dir();
        entries
            .write_archive(&dir.join("p.tar"), 0)
            .expect("archive");
        let tar = std::fs::read(dir.join("p.tar")).expect("read");
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut manifest = None;
        for entry in archive.entries().expect("entries") {
            let mut entry = entry.expect("entry");
            let mut text = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut text).expect("read");
            if let Ok(v) = serde_json::from_slice::<Value>(&text)
                && v["layers"].is_array()
            {
                manifest = Some(v);
            }
        }
        let manifest = manifest.expect("the manifest");
        assert_eq!(manifest["config"]["mediaType"], CONFIG_TYPE);
        assert_eq!(manifest["config"]["digest"], config);
        assert_eq!(manifest["layers"][0]["mediaType"], LAYER_TYPE);
        assert_eq!(manifest["layers"][0]["digest"], blob);
        assert_eq!(manifest["layers"].as_array().map(Vec::len), Some(1));
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn the_package_is_dated_at_the_release() {
        let package = "version: 0.1.0\ncreatedAt: 2025-11-21T00:00:00Z\nname: winplace\n";
        assert_eq!(
            dated(package, 1_700_000_000).expect("dated"),
            "version: 0.1.0\ncreatedAt: 2023-11-14T22:13:20Z\nname: winplace\n"
        );
        assert!(dated("version: 0.1.0\n", 0).is_err());
    }
}
