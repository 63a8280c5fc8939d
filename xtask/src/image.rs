//! `cargo xtask image --output FILE [--binary PATH]`: the server's OCI image as an `oci-archive` file, built
//! without a container engine.
//!
//! One layer on an empty base: the statically linked `winplace` (musl; the dashboard and policy.wasm are
//! embedded in it), Debian's CA bundle, and `/etc/passwd` and `/etc/group` naming the non-root user it runs
//! as. Reproducible: the same inputs give the same bytes, hence the same digest. Tar entries are sorted,
//! with fixed owners and modes and the commit's time (`SOURCE_DATE_EPOCH`, else the commit time of HEAD)
//! as their mtime; gzip carries no time or name; the JSON documents have sorted keys. `--binary` packs a
//! given binary instead of building the release one (the registry test packs the dev binary).
//!
//! The archive is an OCI image layout in a tar (`oci-layout`, `index.json`, `blobs/sha256/…`), what
//! `skopeo copy oci-archive:FILE docker://REGISTRY/winplace:TAG` pushes (docs/deploy.md).

use crate::util::{cargo, root, run, target_dir};
use flate2::{Compression, GzBuilder};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The user the image runs as: a number, so that Kubernetes' `runAsNonRoot` can check it without reading
/// the image's /etc/passwd (65532 is distroless' `nonroot`; deploy/server/deployment.yaml runs as it).
pub const UID: u32 = 65532;
/// Where the binary is in the image; the entrypoint.
pub const BINARY: &str = "usr/local/bin/winplace";
/// Debian's bundle of the CA certificates (package `ca-certificates`), copied into the image: registries
/// and the Kubernetes API are reached over TLS with the system's roots.
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The target of the release binary: musl links statically, and its resolver needs no NSS modules.
const STATIC_TARGET: &str = "x86_64-unknown-linux-musl";

/// `image --output FILE [--binary PATH]`.
pub fn command(args: &[String]) -> Result<(), String> {
    let mut output = None;
    let mut binary = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--output" => output = args.next().map(PathBuf::from),
            "--binary" => binary = args.next().map(PathBuf::from),
            other => return Err(format!("image: unknown argument {other:?}")),
        }
    }
    let output = output.ok_or("image: --output FILE is required")?;
    let binary = match binary {
        Some(binary) => binary,
        None => release_binary()?,
    };
    let digest = write(&binary, &output, &Source::of_head()?)?;
    eprintln!(
        "image {}: winplace@{digest} ({})",
        output.display(),
        binary.display()
    );
    Ok(())
}

/// The statically linked release `winplace`, with policy.wasm and the dashboard built first (it embeds
/// them). Paths are remapped, so that two clones of one commit build the same bytes.
fn release_binary() -> Result<PathBuf, String> {
    static_toolchain()?;
    crate::build::assets()?;
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| Path::new(&h).join(".cargo")))
        .map_err(|_| "neither CARGO_HOME nor HOME is set")?;
    let flags = format!(
        "--remap-path-prefix={}=/winplace --remap-path-prefix={}=/cargo",
        root().display(),
        home.display()
    );
    run(Command::new(cargo())
        .args([
            "build",
            "--release",
            "-p",
            "winplace",
            "--target",
            STATIC_TARGET,
        ])
        .env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS", flags))?;
    Ok(target_dir()?.join(STATIC_TARGET).join("release/winplace"))
}

/// The musl target (rustup), Debian's musl-gcc for the C parts (ring, mimalloc) and the CA bundle.
fn static_toolchain() -> Result<(), String> {
    let installed =
        crate::util::output("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if !installed.lines().any(|l| l.trim() == STATIC_TARGET) {
        run(Command::new("rustup").args(["target", "add", STATIC_TARGET]))?;
    }
    let missing: Vec<&str> = [
        ("/usr/bin/musl-gcc", "musl-tools"),
        (CA_BUNDLE, "ca-certificates"),
    ]
    .into_iter()
    .filter(|(file, _)| !Path::new(file).exists())
    .map(|(_, package)| package)
    .collect();
    crate::setup::apt_install(&missing)
}

/// What the image says about where it came from: its `org.opencontainers.image.*` annotations.
pub struct Source {
    /// The commit (`git rev-parse HEAD`).
    pub revision: String,
    /// Seconds since the epoch: `SOURCE_DATE_EPOCH`, else the commit time of HEAD.
    pub epoch: u64,
    /// The workspace's version (Cargo.toml).
    pub version: String,
}

impl Source {
    fn of_head() -> Result<Source, String> {
        let git = |args: &[&str]| {
            crate::util::output("git", args)
                .map(|s| s.trim().to_string())
                .ok_or_else(|| {
                    format!(
                        "`git {}` failed: the image names its commit",
                        args.join(" ")
                    )
                })
        };
        let revision = git(&["-C", &root().to_string_lossy(), "rev-parse", "HEAD"])?;
        let epoch = match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) => v,
            Err(_) => git(&["-C", &root().to_string_lossy(), "log", "-1", "--format=%ct"])?,
        };
        let epoch = epoch
            .trim()
            .parse()
            .map_err(|_| format!("SOURCE_DATE_EPOCH {epoch:?} is not a number of seconds"))?;
        Ok(Source {
            revision,
            epoch,
            version: workspace_version()?,
        })
    }
}

/// `version` in `[workspace.package]` of the root Cargo.toml.
fn workspace_version() -> Result<String, String> {
    let text = std::fs::read_to_string(root().join("Cargo.toml"))
        .map_err(|e| format!("Cargo.toml: {e}"))?;
    text.lines()
        .skip_while(|l| l.trim() != "[workspace.package]")
        .find_map(|l| l.trim().strip_prefix("version = \""))
        .map(|v| v.trim_end_matches('"').to_string())
        .ok_or_else(|| "Cargo.toml: no version in [workspace.package]".into())
}

/// A file of the image's layer.
struct File {
    path: String,
    mode: u32,
    data: Vec<u8>,
}

/// Writes the archive of `binary` to `output`; returns the manifest's digest (`sha256:…`).
pub fn write(binary: &Path, output: &Path, source: &Source) -> Result<String, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let files = vec![
        File {
            path: BINARY.into(),
            mode: 0o755,
            data: read(binary)?,
        },
        File {
            path: CA_BUNDLE.trim_start_matches('/').into(),
            mode: 0o644,
            data: read(Path::new(CA_BUNDLE))?,
        },
        File {
            path: "etc/passwd".into(),
            mode: 0o644,
            data: format!("root:x:0:0:root:/root:/sbin/nologin\nwinplace:x:{UID}:{UID}:winplace:/home/winplace:/sbin/nologin\n").into_bytes(),
        },
        File {
            path: "etc/group".into(),
            mode: 0o644,
            data: format!("root:x:0:\nwinplace:x:{UID}:\n").into_bytes(),
        },
    ];
    let layer_tar = layer(&files, source.epoch)?;
    let diff_id = sha256(&layer_tar);
    let layer = gzip(&layer_tar)?;
    let created = rfc3339(source.epoch);
    let labels = json!({
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.description": "winplace: keeps Windows and Linux workloads on the right nodes of mixed Kubernetes clusters (dashboard, API, audit)",
        "org.opencontainers.image.licenses": "Apache-2.0",
        "org.opencontainers.image.revision": source.revision,
        "org.opencontainers.image.source": "https://github.com/winplace/winplace",
        "org.opencontainers.image.title": "winplace",
        "org.opencontainers.image.version": source.version,
    });
    let user = format!("{UID}:{UID}");
    let config = json!({
        "architecture": "amd64",
        "os": "linux",
        "created": created,
        "author": "winplace",
        "config": {
            "User": user,
            "Entrypoint": [format!("/{BINARY}")],
            "Cmd": ["serve", "--listen", "0.0.0.0:8080"],
            "Env": [
                "PATH=/usr/local/bin",
                format!("SSL_CERT_FILE={CA_BUNDLE}"),
            ],
            "ExposedPorts": {"8080/tcp": {}},
            "WorkingDir": "/",
            "Labels": labels,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": created, "created_by": "cargo xtask image"}],
    });
    let config = bytes(&config)?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": sha256(&config),
            "size": config.len(),
        },
        "layers": [{
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": sha256(&layer),
            "size": layer.len(),
        }],
        "annotations": labels,
    });
    let manifest = bytes(&manifest)?;
    let digest = sha256(&manifest);
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": digest,
            "size": manifest.len(),
            "platform": {"architecture": "amd64", "os": "linux"},
            "annotations": {"org.opencontainers.image.ref.name": source.version},
        }],
    });
    let mut entries = vec![
        File {
            path: "oci-layout".into(),
            mode: 0o644,
            data: bytes(&json!({"imageLayoutVersion": "1.0.0"}))?,
        },
        File {
            path: "index.json".into(),
            mode: 0o644,
            data: bytes(&index)?,
        },
    ];
    for blob in [config, manifest, layer] {
        entries.push(File {
            path: format!("blobs/sha256/{}", &sha256(&blob)["sha256:".len()..]),
            mode: 0o644,
            data: blob,
        });
    }
    let archive = archive_of(&entries, source.epoch)?;
    let tmp = output.with_extension("tmp");
    std::fs::write(&tmp, archive).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, output).map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(digest)
}

/// The layer: `files` with every directory above them, and `/tmp` (world-writable, sticky).
fn layer(files: &[File], epoch: u64) -> Result<Vec<u8>, String> {
    let mut all: Vec<File> = Vec::new();
    let mut dirs = std::collections::BTreeSet::from(["tmp".to_string()]);
    for f in files {
        let mut parent = Path::new(&f.path).parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            dirs.insert(dir.to_string_lossy().into_owned());
            parent = dir.parent();
        }
    }
    for dir in dirs {
        let mode = if dir == "tmp" { 0o1777 } else { 0o755 };
        all.push(File {
            path: format!("{dir}/"),
            mode,
            data: Vec::new(),
        });
    }
    all.extend(files.iter().map(|f| File {
        path: f.path.clone(),
        mode: f.mode,
        data: f.data.clone(),
    }));
    archive_of(&all, epoch)
}

/// A tar of `entries` (a path ending in `/` is a directory), sorted by path, owned by root, at `epoch`.
fn archive_of(entries: &[File], epoch: u64) -> Result<Vec<u8>, String> {
    let mut sorted: Vec<&File> = entries.iter().collect();
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
fn gzip(data: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write as _;
    let mut encoder = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::new(6));
    encoder.write_all(data).map_err(|e| format!("gzip: {e}"))?;
    encoder.finish().map_err(|e| format!("gzip: {e}"))
}

fn sha256(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    format!(
        "sha256:{}",
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    )
}

/// A JSON document as bytes; keys sorted (serde_json's map), so equal documents are equal bytes.
fn bytes(value: &Value) -> Result<Vec<u8>, String> {
    serde_json::to_vec(value).map_err(|e| format!("JSON: {e}"))
}

/// Seconds since the epoch as an RFC 3339 UTC time, `2026-11-25T22:39:00Z` (the civil-from-days
/// algorithm: days since 1970-01-01 to a proleptic Gregorian date).
fn rfc3339(epoch: u64) -> String {
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
    fn the_layer_is_sorted_owned_by_root_and_dated() {
        let files = [File {
            path: "usr/local/bin/x".into(),
            mode: 0o755,
            data: b"x".to_vec(),
        }];
        let tar = layer(&files, 1_700_000_000).expect("a layer");
        let mut archive = tar::Archive::new(tar.as_slice());
        let entries: Vec<(String, u32, u64, u64)> = archive
            .entries()
            .expect("entries")
            .map(|e| {
                let e = e.expect("an entry");
                let h = e.header();
                (
                    e.path().expect("a path").to_string_lossy().into_owned(),
                    h.mode().expect("a mode"),
                    h.uid().expect("a uid"),
                    h.mtime().expect("an mtime"),
                )
            })
            .collect();
        assert_eq!(
            entries,
            vec![
                ("tmp/".into(), 0o1777, 0, 1_700_000_000),
                ("usr/".into(), 0o755, 0, 1_700_000_000),
                ("usr/local/".into(), 0o755, 0, 1_700_000_000),
                ("usr/local/bin/".into(), 0o755, 0, 1_700_000_000),
                ("usr/local/bin/x".into(), 0o755, 0, 1_700_000_000),
            ]
        );
        assert_eq!(gzip(&tar).expect("gzip"), gzip(&tar).expect("gzip"));
        // No time in gzip's header: bytes 4..8 are MTIME.
        assert_eq!(&gzip(&tar).expect("gzip")[4..8], &[0, 0, 0, 0]);
    }
}
