//! The release's inputs, built: policy.wasm and the dashboard (which every binary embeds), the static
//! server for linux/amd64 (musl, Debian's musl-gcc: the binary `cargo xtask image` packs) and linux/arm64,
//! the CLI for Windows (x86_64-pc-windows-gnu), and the SBOM.
//!
//! The two foreign targets are cross-compiled with cargo-zigbuild, zig being the C compiler (ring,
//! mimalloc) and the linker, both from PyPI (`ziglang`, `cargo-zigbuild`: docs/dependencies.md). Every
//! build remaps the source paths ([`crate::image::remapped_paths`]). The SBOM is cargo-cyclonedx's,
//! installed from crates.io into `.tools/cargo` on first use (minutes: never part of `cargo xtask test`).

use super::Inputs;
use crate::setup::{RELEASE_PYTHON_PACKAGES, TEST_PYTHON_PACKAGES, python_dir, python_tools};
use crate::util::{cargo, root, run, target_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The foreign targets: linux/arm64 (static, musl) and windows/amd64.
const ARM64: &str = "aarch64-unknown-linux-musl";
const WINDOWS: &str = "x86_64-pc-windows-gnu";

/// cargo-cyclonedx's version (crates.io).
const CYCLONEDX: &str = "0.5.9";

/// Builds every input into `target/release-inputs/`, under the names [`Inputs::from_dir`] reads.
pub fn inputs() -> Result<Inputs, String> {
    python_tools("test", &TEST_PYTHON_PACKAGES)?;
    python_tools("release", &RELEASE_PYTHON_PACKAGES)?;
    crate::setup::rustup_targets(&[ARM64, WINDOWS])?;
    let cyclonedx = cyclonedx()?;
    crate::build::assets()?;
    let amd64 = crate::image::static_binary()?;
    let arm64 = zigbuild(ARM64)?;
    let windows = zigbuild(WINDOWS)?;
    for (binary, machine) in [(&amd64, ELF_X86_64), (&arm64, ELF_AARCH64)] {
        let bytes = std::fs::read(binary).map_err(|e| format!("{}: {e}", binary.display()))?;
        static_elf(&bytes, machine).map_err(|e| format!("{}: {e}", binary.display()))?;
    }
    let bytes = std::fs::read(&windows).map_err(|e| format!("{}: {e}", windows.display()))?;
    pe32_plus_amd64(&bytes).map_err(|e| format!("{}: {e}", windows.display()))?;
    let dir = target_dir()?.join("release-inputs");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let inputs = Inputs::from_dir(&dir);
    for (from, to) in [
        (amd64, &inputs.linux_amd64),
        (arm64, &inputs.linux_arm64),
        (windows, &inputs.windows_amd64),
        (root().join("static/policy.wasm"), &inputs.policy),
    ] {
        std::fs::copy(&from, to)
            .map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))?;
    }
    sbom(&cyclonedx, &inputs.sbom)?;
    Ok(inputs)
}

/// ELF `e_machine` of x86-64 and of AArch64 (the System V ABI's processor supplements).
const ELF_X86_64: u16 = 62;
const ELF_AARCH64: u16 = 183;

/// Whether `bytes` is a 64-bit little-endian ELF executable for `machine` with no program interpreter
/// (`PT_INTERP`): statically linked, what `file` calls "statically linked" (or "static-pie linked").
fn static_elf(bytes: &[u8], machine: u16) -> Result<(), String> {
    let u16_at = |at: usize| {
        bytes
            .get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01") {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    if u16_at(18) != Some(machine) {
        return Err(format!("ELF machine {:?}, not {machine}", u16_at(18)));
    }
    let (phoff, phentsize, phnum) = match (u64_at(32), u16_at(54), u16_at(56)) {
        (Some(o), Some(s), Some(n)) => (o as usize, s as usize, n as usize),
        _ => return Err("a truncated ELF header".into()),
    };
    for i in 0..phnum {
        match u32_at(phoff + i * phentsize) {
            // PT_INTERP: the dynamic loader's path.
            Some(3) => return Err("dynamically linked (it names a program interpreter)".into()),
            Some(_) => {}
            None => return Err("a truncated program header table".into()),
        }
    }
    Ok(())
}

/// Whether `bytes` is a PE32+ executable for x86-64 (Microsoft's PE format: the `MZ` stub, `PE\0\0` at
/// the offset in 0x3c, machine 0x8664, optional header magic 0x20b): what `file` calls "PE32+ executable
/// … x86-64".
fn pe32_plus_amd64(bytes: &[u8]) -> Result<(), String> {
    if bytes.get(..2) != Some(b"MZ") {
        return Err("no MZ header".into());
    }
    let pe = bytes
        .get(0x3c..0x40)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or("a truncated MZ header")?;
    if bytes.get(pe..pe + 4) != Some(b"PE\0\0") {
        return Err("no PE signature".into());
    }
    let machine = bytes
        .get(pe + 4..pe + 6)
        .map(|b| u16::from_le_bytes([b[0], b[1]]));
    if machine != Some(0x8664) {
        return Err(format!("machine {machine:x?}, not x86-64 (0x8664)"));
    }
    // The optional header follows the 20-byte COFF header.
    let magic = bytes
        .get(pe + 24..pe + 26)
        .map(|b| u16::from_le_bytes([b[0], b[1]]));
    if magic != Some(0x20b) {
        return Err(format!(
            "optional header magic {magic:x?}, not PE32+ (0x20b)"
        ));
    }
    Ok(())
}

/// `cargo zigbuild --release -p winplace --target TARGET`; returns the binary.
fn zigbuild(target: &str) -> Result<PathBuf, String> {
    let bin = python_dir().join("bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let path = std::env::join_paths(paths).map_err(|e| format!("PATH: {e}"))?;
    let flags_var = format!(
        "CARGO_TARGET_{}_RUSTFLAGS",
        target.to_uppercase().replace('-', "_")
    );
    run(Command::new(cargo())
        .args([
            "zigbuild",
            "--release",
            "-p",
            "winplace",
            "--target",
            target,
        ])
        .env("PATH", path)
        .env(flags_var, crate::image::remapped_paths()?))?;
    let exe = if target.contains("windows") {
        "winplace.exe"
    } else {
        "winplace"
    };
    Ok(target_dir()?.join(target).join("release").join(exe))
}

/// cargo-cyclonedx, installed into `.tools/cargo` when missing.
fn cyclonedx() -> Result<PathBuf, String> {
    let tools = root().join(".tools/cargo");
    let bin = tools.join("bin/cargo-cyclonedx");
    let installed = crate::util::output(&bin.to_string_lossy(), &["cyclonedx", "--version"])
        .is_some_and(|v| v.contains(CYCLONEDX));
    if !installed {
        run(Command::new(cargo())
            .args([
                "install",
                "--locked",
                "--version",
                CYCLONEDX,
                "cargo-cyclonedx",
                "--root",
            ])
            .arg(&tools)
            // Its own build folder: not the workspace's target directory.
            .env_remove("CARGO_TARGET_DIR"))?;
    }
    Ok(bin)
}

/// The CycloneDX SBOM of the `winplace` package for the Linux binaries, from Cargo.lock, into `output`.
///
/// cargo-cyclonedx dates the document at `SOURCE_DATE_EPOCH` (and then writes no random serial number),
/// but names the package by its absolute path (`path+file:///…/server`): the checkout's folder is
/// written as `/winplace`, as the binaries' paths are remapped, so that two clones write the same SBOM. It
/// writes a file beside every member's Cargo.toml; the server's is kept, every other removed.
fn sbom(cyclonedx: &Path, output: &Path) -> Result<(), String> {
    let name = "winplace-release-sbom";
    let source = crate::image::Source::of_head()?;
    let generated = run(Command::new(cyclonedx)
        .args([
            "cyclonedx",
            "--manifest-path",
            "server/Cargo.toml",
            "--format",
            "json",
            "--spec-version",
            "1.5",
            "--target",
            crate::image::STATIC_TARGET,
            "--override-filename",
            name,
        ])
        .env("SOURCE_DATE_EPOCH", source.epoch.to_string()));
    let members = std::fs::read_dir(root()).map_err(|e| format!("{}: {e}", root().display()))?;
    let mut sbom = None;
    for member in members.flatten() {
        for dir in [member.path(), member.path().join("template-policy")] {
            let file = dir.join(format!("{name}.json"));
            if let Ok(text) = std::fs::read_to_string(&file) {
                if dir.ends_with("server") {
                    sbom = Some(text);
                }
                std::fs::remove_file(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            }
        }
    }
    generated?;
    let text = sbom.ok_or("cargo-cyclonedx wrote no server/winplace-release-sbom.json")?;
    let text = text.replace(&format!("file://{}", root().display()), "file:///winplace");
    crate::oci::write_atomically(output, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit ELF header for `machine` with one program header of `kind`.
    fn elf(machine: u16, kind: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; 64 + 56];
        bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        bytes[18..20].copy_from_slice(&machine.to_le_bytes());
        bytes[32..40].copy_from_slice(&64u64.to_le_bytes());
        bytes[54..56].copy_from_slice(&56u16.to_le_bytes());
        bytes[56..58].copy_from_slice(&1u16.to_le_bytes());
        bytes[64..68].copy_from_slice(&kind.to_le_bytes());
        bytes
    }

    #[test]
    fn a_static_elf_has_no_interpreter() {
        // PT_LOAD only: static.
        assert_eq!(static_elf(&elf(ELF_AARCH64, 1), ELF_AARCH64), Ok(()));
        // PT_INTERP: dynamic.
        assert!(static_elf(&elf(ELF_AARCH64, 3), ELF_AARCH64).is_err());
        // Another machine.
        assert!(static_elf(&elf(ELF_X86_64, 1), ELF_AARCH64).is_err());
        assert!(static_elf(b"#!/bin/sh\n", ELF_X86_64).is_err());
    }

    #[test]
    fn a_pe32_plus_for_x86_64_is_recognized() {
        let mut bytes = vec![0u8; 0x80 + 26];
        bytes[..2].copy_from_slice(b"MZ");
        bytes[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        bytes[0x80..0x84].copy_from_slice(b"PE\0\0");
        bytes[0x84..0x86].copy_from_slice(&0x8664u16.to_le_bytes());
        bytes[0x98..0x9a].copy_from_slice(&0x20bu16.to_le_bytes());
        assert_eq!(pe32_plus_amd64(&bytes), Ok(()));
        // PE32 (0x10b), not PE32+.
        bytes[0x98..0x9a].copy_from_slice(&0x10bu16.to_le_bytes());
        assert!(pe32_plus_amd64(&bytes).is_err());
        assert!(pe32_plus_amd64(b"\x7fELF").is_err());
    }
}
