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

use crate::oci::{self, Entry, Layout, gzip, rfc3339, sha256, tar_of};
use crate::util::{cargo, root, run, target_dir};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The user the image runs as: a number, so that Kubernetes' `runAsNonRoot` can check it without reading
/// the image's /etc/passwd (65532 is distroless' `nonroot`). The chart sets no `runAsUser`: where the
/// platform assigns one (OpenShift's `restricted-v2`), that one runs the binary, which reads only what
/// every user may.
pub const UID: u32 = 65532;
/// Where the binary is in the image; the entrypoint.
pub const BINARY: &str = "usr/local/bin/winplace";
/// Debian's bundle of the CA certificates (package `ca-certificates`), copied into the image: registries
/// and the Kubernetes API are reached over TLS with the system's roots.
const CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// The target of the release binary: musl links statically, and its resolver needs no NSS modules.
pub const STATIC_TARGET: &str = "x86_64-unknown-linux-musl";
/// The repository, as the images' and artifacts' `org.opencontainers.image.source`.
pub const SOURCE_URL: &str = "https://github.com/winplace/winplace";

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
/// them).
fn release_binary() -> Result<PathBuf, String> {
    crate::build::assets()?;
    static_binary()
}

/// The statically linked release `winplace` for linux/amd64 (musl), from the static/ already built. Paths
/// are remapped, so that two clones of one commit build the same bytes.
pub fn static_binary() -> Result<PathBuf, String> {
    static_toolchain()?;
    let flags = remapped_paths()?;
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

/// rustc's flags that write the workspace's and cargo's home paths as `/winplace` and `/cargo` into the
/// binary (panic messages, debug info): two clones in different folders build the same bytes.
pub fn remapped_paths() -> Result<String, String> {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| Path::new(&h).join(".cargo")))
        .map_err(|_| "neither CARGO_HOME nor HOME is set")?;
    Ok(format!(
        "--remap-path-prefix={}=/winplace --remap-path-prefix={}=/cargo",
        root().display(),
        home.display()
    ))
}

/// The musl target (rustup), Debian's musl-gcc for the C parts (ring, mimalloc) and the CA bundle.
fn static_toolchain() -> Result<(), String> {
    crate::setup::rustup_targets(&[STATIC_TARGET])?;
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
    /// The image's labels (its config's `Labels`, its manifest's annotations).
    pub fn labels(&self) -> Value {
        json!({
            "org.opencontainers.image.created": rfc3339(self.epoch),
            "org.opencontainers.image.description": "winplace: keeps Windows and Linux workloads on the right nodes of mixed Kubernetes clusters (dashboard, API, audit)",
            "org.opencontainers.image.licenses": "Apache-2.0",
            "org.opencontainers.image.revision": self.revision,
            "org.opencontainers.image.source": SOURCE_URL,
            "org.opencontainers.image.title": "winplace",
            "org.opencontainers.image.version": self.version,
        })
    }

    /// The commit checked out, its time (or `SOURCE_DATE_EPOCH`) and the workspace's version.
    pub fn of_head() -> Result<Source, String> {
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

/// Writes the archive of `binary` (linux/amd64) to `output`; returns the manifest's digest (`sha256:…`).
pub fn write(binary: &Path, output: &Path, source: &Source) -> Result<String, String> {
    let mut layout = Layout::default();
    let manifest = manifest(&mut layout, binary, "amd64", source)?;
    let digest = manifest["digest"].as_str().unwrap_or_default().to_string();
    layout.list(manifest, Some(&source.version));
    layout.write_archive(output, source.epoch)?;
    Ok(digest)
}

/// The image of `binary` for linux/`architecture` (`amd64`, `arm64`): its layer, config and manifest into
/// `layout`; returns the manifest's descriptor, with its platform.
pub fn manifest(
    layout: &mut Layout,
    binary: &Path,
    architecture: &str,
    source: &Source,
) -> Result<Value, String> {
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let files = vec![
        Entry {
            path: BINARY.into(),
            mode: 0o755,
            data: read(binary)?,
        },
        Entry {
            path: CA_BUNDLE.trim_start_matches('/').into(),
            mode: 0o644,
            data: read(Path::new(CA_BUNDLE))?,
        },
        Entry {
            path: "etc/passwd".into(),
            mode: 0o644,
            data: format!("root:x:0:0:root:/root:/sbin/nologin\nwinplace:x:{UID}:{UID}:winplace:/home/winplace:/sbin/nologin\n").into_bytes(),
        },
        Entry {
            path: "etc/group".into(),
            mode: 0o644,
            data: format!("root:x:0:\nwinplace:x:{UID}:\n").into_bytes(),
        },
    ];
    let layer_tar = layer(&files, source.epoch)?;
    let diff_id = sha256(&layer_tar);
    let layer = layout.blob(
        "application/vnd.oci.image.layer.v1.tar+gzip",
        gzip(&layer_tar)?,
    );
    let labels = source.labels();
    let created = rfc3339(source.epoch);
    let user = format!("{UID}:{UID}");
    let config = json!({
        "architecture": architecture,
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
    let config = layout.document("application/vnd.oci.image.config.v1+json", &config)?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": oci::MANIFEST,
        "config": config,
        "layers": [layer],
        "annotations": labels,
    });
    let mut descriptor = layout.document(oci::MANIFEST, &manifest)?;
    descriptor["platform"] = json!({"architecture": architecture, "os": "linux"});
    Ok(descriptor)
}

/// The layer: `files` with every directory above them, and `/tmp` (world-writable, sticky).
fn layer(files: &[Entry], epoch: u64) -> Result<Vec<u8>, String> {
    let mut all: Vec<Entry> = Vec::new();
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
        all.push(Entry {
            path: format!("{dir}/"),
            mode,
            data: Vec::new(),
        });
    }
    all.extend(files.iter().map(|f| Entry {
        path: f.path.clone(),
        mode: f.mode,
        data: f.data.clone(),
    }));
    tar_of(&all, epoch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layer_is_sorted_owned_by_root_and_dated() {
        let files = [Entry {
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
    }
}
