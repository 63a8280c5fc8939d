//! The CLI for the machines where manifests are written and built: the three binaries as they are
//! (`winplace-linux-amd64`, `winplace-linux-arm64`, `winplace-windows-amd64.exe`, for CI jobs and
//! pre-commit), each also in an archive as `kubectl-winplace` (`.exe` on Windows), the name that makes
//! kubectl run it as `kubectl winplace` (a kubectl plugin is an executable named `kubectl-<name>` on
//! PATH), and the krew manifest that installs those archives (`winplace.yaml`; krew's plugin manifest:
//! https://krew.sigs.k8s.io/docs/developer-guide/plugin-manifest).

use super::{DOWNLOADS, Inputs};
use crate::image::Source;
use crate::oci::{self, Entry, hex};
use std::path::Path;

/// The krew manifest's file: krew wants it named after the plugin.
pub const KREW_MANIFEST: &str = "winplace.yaml";

/// `(os, arch, input, file name suffix)` of each binary.
fn platforms(inputs: &Inputs) -> [(&'static str, &'static str, &Path, &'static str); 3] {
    [
        ("linux", "amd64", &inputs.linux_amd64, ""),
        ("linux", "arm64", &inputs.linux_arm64, ""),
        ("windows", "amd64", &inputs.windows_amd64, ".exe"),
    ]
}

/// Writes the binaries, their plugin archives and the krew manifest into `output`; returns their names.
pub fn write(inputs: &Inputs, output: &Path, source: &Source) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    let mut krew_platforms = String::new();
    for (os, arch, input, exe) in platforms(inputs) {
        let binary = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
        let name = format!("winplace-{os}-{arch}{exe}");
        write_executable(&output.join(&name), &binary)?;
        files.push(name);
        let plugin = format!("kubectl-winplace{exe}");
        let archive = oci::gzip(&oci::tar_of(
            &[Entry {
                path: plugin.clone(),
                mode: 0o755,
                data: binary,
            }],
            source.epoch,
        )?)?;
        let archive_name = format!("kubectl-winplace-{os}-{arch}.tar.gz");
        oci::write_atomically(&output.join(&archive_name), &archive)?;
        krew_platforms.push_str(&format!(
            "  - selector:\n      matchLabels:\n        os: {os}\n        arch: {arch}\n    uri: {DOWNLOADS}/v{version}/{archive_name}\n    sha256: {sum}\n    bin: {plugin}\n",
            version = source.version,
            sum = hex(&archive),
        ));
        files.push(archive_name);
    }
    let manifest = format!(
        "# The krew plugin manifest of winplace v{version} (`kubectl krew install --manifest={KREW_MANIFEST}`),\n# written by `cargo xtask release`.\napiVersion: krew.googlecontainertools.github.com/v1alpha2\nkind: Plugin\nmetadata:\n  name: winplace\nspec:\n  version: v{version}\n  homepage: https://github.com/winplace/winplace\n  shortDescription: Keep Windows and Linux workloads on the right nodes\n  description: |\n    Checks manifests and live clusters for Windows and Linux workloads placed on the wrong OS or\n    Windows build (node selectors, Windows taints and tolerations, build pinning, RuntimeClasses),\n    explains the errors mixed clusters print, and plans node pool changes:\n    `kubectl winplace check`, `audit`, `explain`, `what-if`.\n  platforms:\n{krew_platforms}",
        version = source.version,
    );
    oci::write_atomically(&output.join(KREW_MANIFEST), manifest.as_bytes())?;
    files.push(KREW_MANIFEST.into());
    Ok(files)
}

fn write_executable(path: &Path, data: &[u8]) -> Result<(), String> {
    oci::write_atomically(path, data)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}
