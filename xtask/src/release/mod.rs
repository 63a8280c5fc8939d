//! `cargo xtask release --output DIR [--from INPUTS]`: everything a release publishes, as files, built
//! offline and reproducibly (the same commit, toolchain and Cargo.lock give the same bytes; two runs give the
//! same digests). What the set holds and how to pin each part by digest: docs/deploy.md, "The release set".
//!
//! Two halves: [`build`] compiles the inputs (the static server for linux/amd64 and linux/arm64, the CLI for
//! windows/amd64, policy.wasm, the SBOM: minutes, cross-compiles); [`pack`] turns inputs into the set
//! (seconds). `--from INPUTS` packs inputs already built, under the names [`Inputs::from_dir`] reads: the
//! tests pack small ones (the dev binary under every name) to check the packaging without a release build.
//! What needs the network (signing, pushing, attaching) is `.github/workflows/release.yml`'s.

mod binaries;
mod build;
mod chart;
mod image_index;
mod policy;
mod provenance;

use crate::image::Source;
use crate::oci::hex;
use std::path::{Path, PathBuf};

/// What [`pack`] packs.
pub struct Inputs {
    /// The statically linked server and CLI for linux/amd64 (musl).
    pub linux_amd64: PathBuf,
    /// The same for linux/arm64.
    pub linux_arm64: PathBuf,
    /// The CLI for Windows on amd64 (a PE32+ executable).
    pub windows_amd64: PathBuf,
    /// policy.wasm, annotated with its metadata as `kwctl annotate` does.
    pub policy: PathBuf,
    /// The CycloneDX SBOM of the `winplace` binary, from Cargo.lock.
    pub sbom: PathBuf,
}

impl Inputs {
    /// The inputs in `dir`: `winplace-linux-amd64`, `winplace-linux-arm64`, `winplace-windows-amd64.exe`,
    /// `policy.wasm`, `winplace.cdx.json`.
    pub fn from_dir(dir: &Path) -> Inputs {
        Inputs {
            linux_amd64: dir.join("winplace-linux-amd64"),
            linux_arm64: dir.join("winplace-linux-arm64"),
            windows_amd64: dir.join("winplace-windows-amd64.exe"),
            policy: dir.join("policy.wasm"),
            sbom: dir.join("winplace.cdx.json"),
        }
    }
}

/// Where the release set's parts are published (docs/deploy.md): the workflow pushes there, the packaged
/// chart and the Artifact Hub package name them.
pub const IMAGE_REPOSITORY: &str = "ghcr.io/winplace/winplace";
pub const POLICY_REPOSITORY: &str = "ghcr.io/winplace/policies/winplace";
pub const CHART_REPOSITORY: &str = "ghcr.io/winplace/charts";
/// Where the GitHub release's files are downloaded from (the krew manifest's URIs).
pub const DOWNLOADS: &str = "https://github.com/winplace/winplace/releases/download";

/// `release --output DIR [--from INPUTS]`.
pub fn command(args: &[String]) -> Result<(), String> {
    let mut output = None;
    let mut from = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--output" => output = args.next().map(PathBuf::from),
            "--from" => from = args.next().map(PathBuf::from),
            other => return Err(format!("release: unknown argument {other:?}")),
        }
    }
    let output = output.ok_or("release: --output DIR is required")?;
    let started = std::time::Instant::now();
    let inputs = match from {
        Some(dir) => {
            crate::setup::python_tools("test", &crate::setup::TEST_PYTHON_PACKAGES)?;
            Inputs::from_dir(&dir)
        }
        None => build::inputs()?,
    };
    let source = Source::of_head()?;
    let set = pack(&inputs, &output, &source)?;
    for (what, reference) in &set.digests {
        eprintln!("release {what}: {reference}");
    }
    eprintln!(
        "release chart: winplace-{}.tgz, for oci://{CHART_REPOSITORY}",
        source.version
    );
    eprintln!(
        "release {}: {} files in {:.1} s",
        output.display(),
        set.files.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// What [`pack`] wrote.
pub struct ReleaseSet {
    /// `(what, repository@digest)` of the OCI parts: the image index, the policy artifact.
    pub digests: Vec<(&'static str, String)>,
    /// Every file of the set, by name.
    pub files: Vec<String>,
}

/// Writes the release set of `inputs` into `output` (made when missing; files of an earlier set with the
/// same names are replaced).
pub fn pack(inputs: &Inputs, output: &Path, source: &Source) -> Result<ReleaseSet, String> {
    std::fs::create_dir_all(output).map_err(|e| format!("{}: {e}", output.display()))?;
    let tag = format!("v{}", source.version);
    let mut files: Vec<String> = Vec::new();

    let mut cli = binaries::write(inputs, output, source)?;
    files.append(&mut cli);

    let policy_digest = policy::write(&inputs.policy, output, source)?;
    files.extend(policy::FILES.map(String::from));

    let image = image_index::Index::of(inputs, source)?;
    let image_digest = image.digest.clone();
    let chart = chart::package(output, &image.digest, &policy_digest, source)?;
    files.push(chart);

    let sbom = read(&inputs.sbom)?;
    write(&output.join(SBOM), &sbom)?;
    files.push(SBOM.into());

    // The provenance names every file so far and both OCI digests (not the image archive, which carries it).
    let mut subjects = vec![
        provenance::Subject::oci(IMAGE_REPOSITORY, &image.digest),
        provenance::Subject::oci(POLICY_REPOSITORY, &policy_digest),
    ];
    for name in &files {
        subjects.push(provenance::Subject::file(name, &read(&output.join(name))?));
    }
    let statement = provenance::statement(&subjects, source)?;
    write(&output.join(PROVENANCE), &statement)?;
    files.push(PROVENANCE.into());

    image.write(
        &output.join(image_index::FILE),
        &sbom,
        &statement,
        &tag,
        source,
    )?;
    files.push(image_index::FILE.into());

    let digests = vec![
        ("image", format!("{IMAGE_REPOSITORY}@{image_digest}")),
        ("policy", format!("{POLICY_REPOSITORY}@{policy_digest}")),
    ];
    let pinned: String = digests
        .iter()
        .map(|(what, reference)| format!("{what} {reference}\n"))
        .collect();
    write(&output.join(DIGESTS), pinned.as_bytes())?;
    files.push(DIGESTS.into());

    files.sort();
    let mut sums = String::new();
    for name in &files {
        sums.push_str(&format!("{}  {name}\n", hex(&read(&output.join(name))?)));
    }
    write(&output.join(SUMS), sums.as_bytes())?;
    files.push(SUMS.into());
    Ok(ReleaseSet { digests, files })
}

/// The SBOM's file in the set.
pub const SBOM: &str = "winplace.cdx.json";
/// The provenance statement's.
pub const PROVENANCE: &str = "winplace.intoto.json";
/// The OCI digests to pin, one `what repository@digest` a line.
pub const DIGESTS: &str = "DIGESTS";
/// `sha256sum`'s format for every other file.
pub const SUMS: &str = "SHA256SUMS";

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    crate::oci::write_atomically(path, data)
}
