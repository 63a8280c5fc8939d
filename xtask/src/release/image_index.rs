//! The server's image for linux/amd64 and linux/arm64 as one OCI image index, with the SBOM and the
//! provenance statement as its referrers: artifact manifests (`artifactType`, the empty config, the
//! document as their one layer) whose `subject` is the index, which a registry's referrers API lists for
//! the index's digest (OCI image spec 1.1, `manifest.md`: "Guidelines for Artifact Usage", `subject`).
//!
//! The layout's `index.json` names the index with the release's tag (`skopeo copy oci-archive:FILE:TAG`
//! copies it, without the referrers) and lists the two referrers unnamed; `oras cp -r` copies both
//! (the release workflow).

use super::Inputs;
use crate::image::Source;
use crate::oci::{self, Layout, rfc3339};
use serde_json::{Value, json};

/// The archive's file in the set.
pub const FILE: &str = "winplace-image.oci.tar";
/// CycloneDX JSON (https://cyclonedx.org/specification/overview/, "Media Types").
pub const SBOM_TYPE: &str = "application/vnd.cyclonedx+json";
/// An in-toto statement (https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md).
pub const PROVENANCE_TYPE: &str = "application/vnd.in-toto+json";

/// The index, its platforms' manifests and their blobs, before the referrers are added.
pub struct Index {
    layout: Layout,
    descriptor: Value,
    /// The index's digest: what a deployment pins.
    pub digest: String,
}

impl Index {
    /// The images of the two Linux binaries of `inputs`, under one index.
    pub fn of(inputs: &Inputs, source: &Source) -> Result<Index, String> {
        let mut layout = Layout::default();
        let manifests = vec![
            crate::image::manifest(&mut layout, &inputs.linux_amd64, "amd64", source)?,
            crate::image::manifest(&mut layout, &inputs.linux_arm64, "arm64", source)?,
        ];
        let index = json!({
            "schemaVersion": 2,
            "mediaType": oci::INDEX,
            "manifests": manifests,
            "annotations": source.labels(),
        });
        let descriptor = layout.document(oci::INDEX, &index)?;
        let digest = descriptor["digest"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(Index {
            layout,
            descriptor,
            digest,
        })
    }

    /// Adds the SBOM and the provenance statement as referrers of the index and writes the archive,
    /// the index named `tag`.
    pub fn write(
        mut self,
        output: &std::path::Path,
        sbom: &[u8],
        provenance: &[u8],
        tag: &str,
        source: &Source,
    ) -> Result<(), String> {
        for (artifact_type, title, data) in [
            (SBOM_TYPE, super::SBOM, sbom),
            (PROVENANCE_TYPE, super::PROVENANCE, provenance),
        ] {
            let referrer = referrer(
                &mut self.layout,
                &self.descriptor,
                artifact_type,
                title,
                data,
                source,
            )?;
            self.layout.list(referrer, None);
        }
        self.layout.list(self.descriptor.clone(), Some(tag));
        self.layout.write_archive(output, source.epoch)
    }
}

/// An artifact manifest of `data` whose subject is `subject`; returns its descriptor (with its
/// `artifactType`, as the referrers API lists it).
fn referrer(
    layout: &mut Layout,
    subject: &Value,
    artifact_type: &str,
    title: &str,
    data: &[u8],
    source: &Source,
) -> Result<Value, String> {
    let empty = layout.blob(oci::EMPTY, b"{}".to_vec());
    let mut layer = layout.blob(artifact_type, data.to_vec());
    layer["annotations"] = json!({"org.opencontainers.image.title": title});
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST,
        "artifactType": artifact_type,
        "config": empty,
        "layers": [layer],
        "subject": {
            "mediaType": subject["mediaType"],
            "digest": subject["digest"],
            "size": subject["size"],
        },
        "annotations": {"org.opencontainers.image.created": rfc3339(source.epoch)},
    });
    let mut descriptor = layout.document(oci::MANIFEST, &manifest)?;
    descriptor["artifactType"] = Value::String(artifact_type.into());
    Ok(descriptor)
}
