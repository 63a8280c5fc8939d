//! The release's provenance: an in-toto statement (v1) with a SLSA provenance (v1) predicate, written from
//! what the build knows: the commit, Cargo.lock, the toolchain, the command, and the digest of every part
//! of the set. Nothing in it depends on the machine or the moment (no build times, no paths, no host
//! names), so that two builds of one commit write the same statement.
//!
//! It is not signed here: it is a claim of this build about itself. The release workflow signs it (with
//! everything else, keyless, with cosign), which binds it to the workflow run that built it
//! (docs/deploy.md, "Verifying a release").
//!
//! Formats: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md and
//! https://slsa.dev/spec/v1.0/provenance (`buildDefinition`: `buildType`, `externalParameters`,
//! `internalParameters`, `resolvedDependencies`; `runDetails.builder.id`).

use crate::image::{SOURCE_URL, Source};
use crate::oci::hex;
use serde_json::{Value, json};

/// One subject of the statement: a name and its SHA-256.
pub struct Subject {
    name: String,
    sha256: String,
}

impl Subject {
    /// An OCI manifest or index by its digest (`sha256:…`), named by its repository.
    pub fn oci(repository: &str, digest: &str) -> Subject {
        Subject {
            name: repository.into(),
            sha256: digest.trim_start_matches("sha256:").into(),
        }
    }

    /// A file of the set by its name and bytes.
    pub fn file(name: &str, data: &[u8]) -> Subject {
        Subject {
            name: name.into(),
            sha256: hex(data),
        }
    }
}

/// What the statement says the build is: this page documents its parameters.
pub const BUILD_TYPE: &str =
    "https://github.com/winplace/winplace/blob/main/docs/deploy.md#the-release-set";

/// The statement, as the bytes the set holds.
pub fn statement(subjects: &[Subject], source: &Source) -> Result<Vec<u8>, String> {
    let root = crate::util::root();
    let lock = std::fs::read(root.join("Cargo.lock")).map_err(|e| format!("Cargo.lock: {e}"))?;
    let statement = json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": subjects
            .iter()
            .map(|s| json!({"name": s.name, "digest": {"sha256": s.sha256}}))
            .collect::<Vec<Value>>(),
        "predicateType": "https://slsa.dev/provenance/v1",
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "source": {
                        "uri": format!("git+{SOURCE_URL}"),
                        "digest": {"gitCommit": source.revision},
                    },
                    "command": "cargo xtask release",
                    "version": source.version,
                },
                "internalParameters": {
                    "SOURCE_DATE_EPOCH": source.epoch,
                    "toolchain": toolchain(),
                },
                "resolvedDependencies": [
                    {
                        "uri": format!("git+{SOURCE_URL}@{}", source.revision),
                        "digest": {"gitCommit": source.revision},
                    },
                    {
                        "name": "Cargo.lock",
                        "digest": {"sha256": hex(&lock)},
                    },
                ],
            },
            "runDetails": {
                "builder": {"id": format!("{SOURCE_URL}/blob/main/xtask/src/release/mod.rs")},
            },
        },
    });
    let mut bytes = serde_json::to_vec_pretty(&statement).map_err(|e| format!("JSON: {e}"))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// The versions of the tools that built the binaries, as they report them (a tool that is missing, as in
/// the tests' small packing, is left out).
fn toolchain() -> Value {
    let mut out = serde_json::Map::new();
    let python = crate::setup::python_dir().join("bin");
    for (name, program, args) in [
        ("rustc", "rustc".into(), vec!["--version"]),
        ("cargo", "cargo".into(), vec!["--version"]),
        (
            "zig",
            python.join("python3"),
            vec!["-m", "ziglang", "version"],
        ),
        (
            "cargo-zigbuild",
            python.join("cargo-zigbuild"),
            vec!["--version"],
        ),
    ] {
        let program: std::path::PathBuf = program;
        if let Some(version) = crate::util::output(&program.to_string_lossy(), &args) {
            out.insert(name.into(), Value::String(version.trim().to_string()));
        }
    }
    Value::Object(out)
}
