//! Reproducible OCI pieces: tar archives with fixed owners, order and times, gzip without a time, JSON with
//! sorted keys, digests, and the OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/…`) written as a
//! tar: the `oci-archive` skopeo reads. The same inputs give the same bytes, hence the same digests.
//!
//! The layout: OCI image spec, `image-layout.md`; descriptors: `descriptor.md`; artifacts (`artifactType`,
//! the empty config) and `subject` (what the referrers API lists): `manifest.md` (docs/deploy.md).

use flate2::{Compression, GzBuilder};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
/// The empty JSON object `{}`, the config (and placeholder layer) of an artifact that needs none
/// (`manifest.md`, "Guidance for an Empty Descriptor").
pub const EMPTY: &str = "application/vnd.oci.empty.v1+json";
/// The annotation that names a manifest in `index.json` (`annotations.md`): what
/// `skopeo copy oci-archive:FILE:NAME` picks.
pub const REF_NAME: &str = "org.opencontainers.image.ref.name";

/// A file of a tar archive (a path ending in `/` is a directory).
pub struct Entry {
    pub path: String,
    pub mode: u32,
    pub data: Vec<u8>,
}

/// A tar of `entries`, sorted by path, owned by root, every entry dated `epoch`.
pub fn tar_of(entries: &[Entry], epoch: u64) -> Result<Vec<u8>, String> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let mut builder = tar::Builder::new(Vec::new());
    for entry in sorted {
        let mut header = tar::Header::new_ustar();
        let directory = entry.path.ends_with('/');
        header.set_entry_type(if directory {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        });
        header.set_mode(entry.mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(epoch);
        header.set_size(entry.data.len() as u64);
        builder
            .append_data(&mut header, &entry.path, entry.data.as_slice())
            .map_err(|e| format!("tar {}: {e}", entry.path))?;
    }
    builder.into_inner().map_err(|e| format!("tar: {e}"))
}

/// gzip without a file name or a time (the header's MTIME is 0), at a fixed level.
pub fn gzip(data: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let mut encoder = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::new(6));
    encoder.write_all(data).map_err(|e| format!("gzip: {e}"))?;
    encoder.finish().map_err(|e| format!("gzip: {e}"))
}

/// `sha256:<hex>`.
pub fn sha256(data: &[u8]) -> String {
    format!("sha256:{}", hex(data))
}

/// The SHA-256 of `data` in hex.
pub fn hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A JSON document as bytes; keys sorted (serde_json's map), so equal documents are equal bytes.
pub fn json_bytes(value: &Value) -> Result<Vec<u8>, String> {
    serde_json::to_vec(value).map_err(|e| format!("JSON: {e}"))
}

/// The descriptor of `data` as `media_type`.
pub fn descriptor(media_type: &str, data: &[u8]) -> Value {
    json!({"mediaType": media_type, "digest": sha256(data), "size": data.len()})
}

/// Seconds since the epoch as an RFC 3339 UTC time, `2026-11-25T22:39:00Z` (the civil-from-days
/// algorithm: days since 1970-01-01 to a proleptic Gregorian date).
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let seconds = epoch % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// An OCI image layout being assembled: its blobs by digest and the entries of its `index.json`.
#[derive(Default)]
pub struct Layout {
    blobs: BTreeMap<String, Vec<u8>>,
    index: Vec<Value>,
}

impl Layout {
    /// Adds a blob; returns its descriptor as `media_type`.
    pub fn blob(&mut self, media_type: &str, data: Vec<u8>) -> Value {
        let descriptor = descriptor(media_type, &data);
        self.blobs.insert(sha256(&data), data);
        descriptor
    }

    /// Adds a JSON document (a manifest, an index, a config) as a blob; returns its descriptor.
    pub fn document(&mut self, media_type: &str, value: &Value) -> Result<Value, String> {
        Ok(self.blob(media_type, json_bytes(value)?))
    }

    /// Lists `descriptor` in `index.json`, named `name` when given (a tag to skopeo).
    pub fn list(&mut self, mut descriptor: Value, name: Option<&str>) {
        if let Some(name) = name {
            descriptor["annotations"][REF_NAME] = Value::String(name.into());
        }
        self.index.push(descriptor);
    }

    /// The layout's files: `oci-layout`, `index.json` and every blob.
    fn entries(&self) -> Result<Vec<Entry>, String> {
        let index = json!({"schemaVersion": 2, "mediaType": INDEX, "manifests": self.index});
        let mut entries = vec![
            Entry {
                path: "oci-layout".into(),
                mode: 0o644,
                data: json_bytes(&json!({"imageLayoutVersion": "1.0.0"}))?,
            },
            Entry {
                path: "index.json".into(),
                mode: 0o644,
                data: json_bytes(&index)?,
            },
        ];
        for (digest, data) in &self.blobs {
            entries.push(Entry {
                path: format!("blobs/sha256/{}", &digest["sha256:".len()..]),
                mode: 0o644,
                data: data.clone(),
            });
        }
        Ok(entries)
    }

    /// Writes the layout as a tar (`oci-archive:` to skopeo), every entry dated `epoch`.
    pub fn write_archive(&self, output: &Path, epoch: u64) -> Result<(), String> {
        write_atomically(output, &tar_of(&self.entries()?, epoch)?)
    }
}

/// Writes `data` to `path` through a temporary file beside it, so that no reader sees half a file.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, data).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_of_known_times() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(rfc3339(4_102_444_800), "2100-01-01T00:00:00Z");
    }

    #[test]
    fn the_empty_descriptor_is_the_specs() {
        // manifest.md, "Guidance for an Empty Descriptor": `{}`, 2 bytes, this digest.
        assert_eq!(
            descriptor(EMPTY, b"{}"),
            json!({"mediaType": EMPTY, "size": 2, "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"})
        );
    }

    #[test]
    fn a_layout_is_the_same_bytes_twice_and_lists_what_it_was_told() {
        let make = || {
            let mut layout = Layout::default();
            let b = layout.blob("application/octet-stream", b"two".to_vec());
            let a = layout.blob("application/octet-stream", b"one".to_vec());
            layout.list(a, Some("v1"));
            layout.list(b, None);
            tar_of(&layout.entries().expect("entries"), 1_700_000_000).expect("tar")
        };
        assert_eq!(make(), make());
        let tar = make();
        let mut archive = tar::Archive::new(tar.as_slice());
        let mut index = None;
        let mut paths = Vec::new();
        for entry in archive.entries().expect("entries") {
            let mut entry = entry.expect("an entry");
            let path = entry.path().expect("path").to_string_lossy().into_owned();
            if path == "index.json" {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut entry, &mut text).expect("read");
                index = Some(serde_json::from_str::<Value>(&text).expect("json"));
            }
            paths.push(path);
        }
        let mut sorted = paths.clone();
        sorted.sort();
        assert_eq!(paths, sorted);
        for blob in [b"one", b"two"] {
            assert!(paths.contains(&format!("blobs/sha256/{}", hex(blob))));
        }
        let index = index.expect("index.json");
        assert_eq!(index["manifests"][0]["annotations"][REF_NAME], "v1");
        assert_eq!(index["manifests"][1].get("annotations"), None);
        assert_eq!(index["manifests"][0]["digest"], sha256(b"one"));
    }

    #[test]
    fn gzip_has_no_time() {
        assert_eq!(gzip(b"x").expect("gzip"), gzip(b"x").expect("gzip"));
        // No time in gzip's header: bytes 4..8 are MTIME.
        assert_eq!(&gzip(b"x").expect("gzip")[4..8], &[0, 0, 0, 0]);
    }
}
