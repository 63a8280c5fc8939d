//! `cargo xtask release`'s packing, on small inputs (`--from`: a few bytes under each binary's name, the
//! built policy.wasm, a small SBOM), so that no release build runs in the tests: two packs are the same
//! bytes; the image archive holds an index for linux/amd64 and linux/arm64 with the SBOM and the
//! provenance as its referrers; the policy artifact has kwctl's media types and goes to Debian's
//! `docker-registry` with skopeo and comes back byte-equal; the krew manifest, the plugin archives, the
//! packaged chart (digests pinned), the provenance and SHA256SUMS agree with the files.
//!
//! The real release (cross-compiles, cargo-cyclonedx, and its reproducibility) runs under `cargo xtask
//! release` alone: docs/deploy.md, "The release set".

use crate::common::oci_registry::*;

use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The small inputs, in `dir`: distinct bytes per binary, the built policy.wasm, a CycloneDX document.
fn inputs(dir: &Path) {
    std::fs::create_dir_all(dir).expect("inputs dir");
    for name in [
        "winplace-linux-amd64",
        "winplace-linux-arm64",
        "winplace-windows-amd64.exe",
    ] {
        std::fs::write(dir.join(name), format!("not really {name}\n")).expect("write");
    }
    let policy = root().join("static/policy.wasm");
    assert!(
        policy.exists(),
        "{} is missing: run `cargo xtask build` once",
        policy.display()
    );
    std::fs::copy(&policy, dir.join("policy.wasm")).expect("copy policy.wasm");
    let sbom =
        json!({"bomFormat": "CycloneDX", "specVersion": "1.5", "version": 1, "components": []});
    std::fs::write(dir.join("winplace.cdx.json"), sbom.to_string()).expect("write");
}

/// `xtask release --output OUTPUT --from INPUTS` (the xtask `cargo xtask` built, beside the binary).
fn pack(inputs: &Path, output: &Path) {
    let xtask = Path::new(env!("CARGO_BIN_EXE_winplace")).with_file_name("xtask");
    assert!(
        xtask.exists(),
        "{} is missing: run `cargo xtask build` once",
        xtask.display()
    );
    let out = Command::new(&xtask)
        .args(["release", "--output"])
        .arg(output)
        .arg("--from")
        .arg(inputs)
        .output()
        .expect("xtask runs");
    assert!(
        out.status.success(),
        "xtask release failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The files of a directory by name (no folders).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                read(&e.path()),
            )
        })
        .collect()
}

/// An oci-archive unpacked: its index.json and its blobs by digest.
struct Layout {
    index: Value,
    blobs: BTreeMap<String, Vec<u8>>,
}

fn unpack(archive: &Path, into: &Path) -> Layout {
    std::fs::create_dir_all(into).expect("dir");
    let out = Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(into)
        .output()
        .expect("tar runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let layout: Value =
        serde_json::from_slice(&read(&into.join("oci-layout"))).expect("oci-layout");
    assert_eq!(layout["imageLayoutVersion"], "1.0.0");
    let blobs = std::fs::read_dir(into.join("blobs/sha256"))
        .expect("blobs")
        .flatten()
        .map(|e| {
            let data = read(&e.path());
            let name = e.file_name().to_string_lossy().into_owned();
            assert_eq!(hex(&data), name, "a blob's name is its digest");
            (format!("sha256:{name}"), data)
        })
        .collect();
    Layout {
        index: serde_json::from_slice(&read(&into.join("index.json"))).expect("index.json"),
        blobs,
    }
}

impl Layout {
    fn json(&self, digest: &Value) -> Value {
        let digest = digest.as_str().expect("a digest");
        serde_json::from_slice(
            self.blobs
                .get(digest)
                .unwrap_or_else(|| panic!("no blob {digest}")),
        )
        .expect("JSON")
    }
}

/// `what → repository@digest` of DIGESTS.
fn digests(set: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, String> {
    String::from_utf8_lossy(&set["DIGESTS"])
        .lines()
        .map(|l| {
            let (what, reference) = l.split_once(' ').expect("what reference");
            (what.to_string(), reference.to_string())
        })
        .collect()
}

#[test]
fn the_release_set_packs_reproducibly_and_holds_what_it_says() {
    let work = tempfile::tempdir().expect("tempdir");
    let input = work.path().join("inputs");
    inputs(&input);
    let (first, second) = (work.path().join("first"), work.path().join("second"));
    pack(&input, &first);
    pack(&input, &second);
    let set = files(&first);
    assert_eq!(set, files(&second), "two packs of the same inputs differ");
    let version = env!("CARGO_PKG_VERSION");
    let tag = format!("v{version}");
    let mut names: Vec<&str> = set.keys().map(String::as_str).collect();
    names.sort();
    let chart = format!("winplace-{version}.tgz");
    let mut want = vec![
        "DIGESTS",
        "SHA256SUMS",
        "artifacthub-pkg.yml",
        "artifacthub-repo.yml",
        "kubectl-winplace-linux-amd64.tar.gz",
        "kubectl-winplace-linux-arm64.tar.gz",
        "kubectl-winplace-windows-amd64.tar.gz",
        chart.as_str(),
        "winplace-image.oci.tar",
        "winplace-linux-amd64",
        "winplace-linux-arm64",
        "winplace-policy.oci.tar",
        "winplace-windows-amd64.exe",
        "winplace.cdx.json",
        "winplace.intoto.json",
        "winplace.yaml",
    ];
    want.sort();
    assert_eq!(names, want);

    // SHA256SUMS: every other file, as sha256sum writes and checks it.
    let sums = String::from_utf8_lossy(&set["SHA256SUMS"]).into_owned();
    let listed: BTreeMap<&str, &str> = sums
        .lines()
        .map(|l| {
            let (sum, name) = l.split_once("  ").expect("sum  name");
            (name, sum)
        })
        .collect();
    assert_eq!(listed.len(), set.len() - 1);
    for (name, data) in &set {
        if name != "SHA256SUMS" {
            assert_eq!(
                listed.get(name.as_str()),
                Some(&hex(data).as_str()),
                "{name}"
            );
        }
    }
    let check = Command::new("sha256sum")
        .args(["--check", "--strict", "SHA256SUMS"])
        .current_dir(&first)
        .output()
        .expect("sha256sum runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    // The image: an index of the two Linux platforms, named by the tag; the SBOM and the provenance as
    // its referrers.
    let digests = digests(&set);
    let image_digest = digests["image"]
        .strip_prefix("ghcr.io/winplace/winplace@")
        .expect("the image's repository");
    let image = unpack(
        &first.join("winplace-image.oci.tar"),
        &work.path().join("image"),
    );
    let entries = image.index["manifests"].as_array().expect("manifests");
    let named: Vec<&Value> = entries
        .iter()
        .filter(|e| e["annotations"]["org.opencontainers.image.ref.name"].is_string())
        .collect();
    assert_eq!(named.len(), 1);
    assert_eq!(
        named[0]["annotations"]["org.opencontainers.image.ref.name"],
        tag.as_str()
    );
    assert_eq!(
        named[0]["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    assert_eq!(named[0]["digest"], image_digest);
    let index = image.json(&named[0]["digest"]);
    let platforms: Vec<(String, String)> = index["manifests"]
        .as_array()
        .expect("platforms")
        .iter()
        .map(|m| {
            let manifest = image.json(&m["digest"]);
            let config = image.json(&manifest["config"]["digest"]);
            assert_eq!(config["architecture"], m["platform"]["architecture"]);
            (
                m["platform"]["os"].as_str().unwrap_or_default().to_string(),
                m["platform"]["architecture"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        platforms,
        [
            ("linux".into(), "amd64".into()),
            ("linux".into(), "arm64".into())
        ]
    );
    let mut referrers = BTreeMap::new();
    for entry in entries.iter().filter(|e| e["annotations"].is_null()) {
        let manifest = image.json(&entry["digest"]);
        assert_eq!(
            manifest["subject"]["digest"], image_digest,
            "a referrer of the index"
        );
        assert_eq!(manifest["artifactType"], entry["artifactType"]);
        assert_eq!(
            manifest["config"]["mediaType"],
            "application/vnd.oci.empty.v1+json"
        );
        let layer = &manifest["layers"][0];
        assert_eq!(layer["mediaType"], manifest["artifactType"]);
        let title = layer["annotations"]["org.opencontainers.image.title"]
            .as_str()
            .expect("a title");
        assert_eq!(
            &image.blobs[layer["digest"].as_str().expect("digest")],
            &set[title],
            "{title}"
        );
        referrers.insert(
            manifest["artifactType"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            title.to_string(),
        );
    }
    assert_eq!(
        referrers,
        BTreeMap::from([
            (
                "application/vnd.cyclonedx+json".to_string(),
                "winplace.cdx.json".to_string()
            ),
            (
                "application/vnd.in-toto+json".to_string(),
                "winplace.intoto.json".to_string()
            ),
        ])
    );
    // skopeo reads the named index as an image of both platforms.
    let raw = skopeo(&[
        "inspect",
        "--raw",
        &format!(
            "oci-archive:{}:{tag}",
            first.join("winplace-image.oci.tar").display()
        ),
    ]);
    assert_eq!(format!("sha256:{}", hex(&raw)), image_digest);

    // The provenance: an in-toto statement naming both OCI digests and the files it precedes.
    let statement: Value = serde_json::from_slice(&set["winplace.intoto.json"]).expect("JSON");
    assert_eq!(statement["_type"], "https://in-toto.io/Statement/v1");
    assert_eq!(statement["predicateType"], "https://slsa.dev/provenance/v1");
    let subjects: BTreeMap<String, String> = statement["subject"]
        .as_array()
        .expect("subjects")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().into(),
                s["digest"]["sha256"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    for (what, reference) in &digests {
        let (repository, digest) = reference.split_once('@').expect("repository@digest");
        assert_eq!(
            subjects.get(repository).map(|d| format!("sha256:{d}")),
            Some(digest.to_string()),
            "{what}"
        );
    }
    for name in [
        "winplace-linux-amd64",
        "winplace-windows-amd64.exe",
        "winplace.yaml",
        chart.as_str(),
        "winplace.cdx.json",
    ] {
        assert_eq!(subjects.get(name), Some(&hex(&set[name])), "{name}");
    }
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(root())
        .output()
        .expect("git");
    assert_eq!(
        statement["predicate"]["buildDefinition"]["externalParameters"]["source"]["digest"]["gitCommit"],
        String::from_utf8_lossy(&head.stdout).trim()
    );

    // The krew manifest installs each plugin archive, which holds kubectl-winplace for its platform.
    let krew = winplace_rules::input::parse(
        "winplace.yaml",
        &String::from_utf8_lossy(&set["winplace.yaml"]),
        &Default::default(),
    );
    assert!(krew.errors.is_empty(), "{:?}", krew.errors);
    let krew = &krew.documents[0].value;
    assert_eq!(krew["kind"], "Plugin");
    assert_eq!(krew["metadata"]["name"], "winplace");
    assert_eq!(krew["spec"]["version"], tag.as_str());
    let platforms = krew["spec"]["platforms"].as_array().expect("platforms");
    assert_eq!(platforms.len(), 3);
    for p in platforms {
        let (os, arch) = (
            p["selector"]["matchLabels"]["os"]
                .as_str()
                .unwrap_or_default(),
            p["selector"]["matchLabels"]["arch"]
                .as_str()
                .unwrap_or_default(),
        );
        let archive = format!("kubectl-winplace-{os}-{arch}.tar.gz");
        assert_eq!(
            p["uri"],
            format!("https://github.com/winplace/winplace/releases/download/{tag}/{archive}")
        );
        assert_eq!(p["sha256"], hex(&set[&archive]));
        let exe = if os == "windows" { ".exe" } else { "" };
        assert_eq!(p["bin"], format!("kubectl-winplace{exe}"));
        let listing = Command::new("tar")
            .args(["-tvzf"])
            .arg(first.join(&archive))
            .output()
            .expect("tar");
        let listing = String::from_utf8_lossy(&listing.stdout);
        assert!(
            listing.starts_with("-rwxr-xr-x")
                && listing
                    .trim_end()
                    .ends_with(&format!(" kubectl-winplace{exe}")),
            "{archive}: {listing}"
        );
        let binary = set[&format!("winplace-{os}-{arch}{exe}")].clone();
        assert_eq!(
            binary,
            format!("not really winplace-{os}-{arch}{exe}\n").into_bytes()
        );
    }

    // The packaged chart pins the image and the policy by the digests of this set.
    let chart_dir = work.path().join("chart");
    std::fs::create_dir_all(&chart_dir).expect("dir");
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(first.join(&chart))
        .arg("-C")
        .arg(&chart_dir)
        .output()
        .expect("tar");
    assert!(untar.status.success());
    let values =
        String::from_utf8_lossy(&read(&chart_dir.join("winplace/values.yaml"))).into_owned();
    let policy_digest = digests["policy"]
        .strip_prefix("ghcr.io/winplace/policies/winplace@")
        .expect("the policy's repository");
    assert!(
        values.contains(&format!("\n  digest: \"{image_digest}\"\n")),
        "{values}"
    );
    assert!(
        values.contains(&format!("\n    digest: \"{policy_digest}\"\n")),
        "{values}"
    );
    assert!(
        chart_dir
            .join("winplace/files/admission-policies/validating.yaml")
            .is_file(),
        "the links to deploy/vap are followed"
    );
}

/// The policy artifact is what `kwctl push` writes (docs/reference/kubewarden-packaging.md), and Debian's
/// docker-registry takes it from skopeo and gives it back byte-equal, under the digest DIGESTS names.
#[test]
fn the_policy_artifact_round_trips_a_registry_byte_equal() {
    require_tools();
    let work = tempfile::tempdir().expect("tempdir");
    let input = work.path().join("inputs");
    inputs(&input);
    let set_dir = work.path().join("set");
    pack(&input, &set_dir);
    let set = files(&set_dir);
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    let policy_digest = digests(&set)["policy"]
        .split_once('@')
        .expect("@")
        .1
        .to_string();
    let layout = unpack(
        &set_dir.join("winplace-policy.oci.tar"),
        &work.path().join("policy"),
    );
    let entry = &layout.index["manifests"][0];
    assert_eq!(
        entry["annotations"]["org.opencontainers.image.ref.name"],
        tag.as_str()
    );
    assert_eq!(entry["digest"], policy_digest.as_str());
    let manifest = layout.json(&entry["digest"]);
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v1+json"
    );
    assert_eq!(
        layout.blobs[manifest["config"]["digest"].as_str().expect("digest")],
        b"{}"
    );
    let layers = manifest["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 1);
    assert_eq!(
        layers[0]["mediaType"],
        "application/vnd.wasm.content.layer.v1+wasm"
    );
    let wasm = read(&input.join("policy.wasm"));
    assert_eq!(
        layout.blobs[layers[0]["digest"].as_str().expect("digest")],
        wasm
    );
    assert_eq!(
        manifest["annotations"]["io.kubewarden.policy.title"],
        "winplace"
    );
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.source"],
        manifest["annotations"]["io.kubewarden.policy.source"]
    );

    let registry = Registry::start(None);
    let remote = format!("docker://{}/policies/winplace:{tag}", registry.host());
    let archive = format!(
        "oci-archive:{}:{tag}",
        set_dir.join("winplace-policy.oci.tar").display()
    );
    skopeo(&[
        "--insecure-policy",
        "copy",
        "--preserve-digests",
        "--dest-tls-verify=false",
        &archive,
        &remote,
    ]);
    let raw = skopeo(&["inspect", "--raw", "--tls-verify=false", &remote]);
    assert_eq!(
        format!("sha256:{}", hex(&raw)),
        policy_digest,
        "the registry holds another manifest"
    );
    let back = work.path().join("back");
    skopeo(&[
        "--insecure-policy",
        "copy",
        "--src-tls-verify=false",
        &remote,
        &format!("dir:{}", back.display()),
    ]);
    assert_eq!(read(&back.join("manifest.json")), raw);
    let layer = layers[0]["digest"]
        .as_str()
        .expect("digest")
        .trim_start_matches("sha256:");
    assert_eq!(
        read(&back.join(layer)),
        wasm,
        "the module came back changed"
    );
}
