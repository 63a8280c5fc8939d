//! The built-in tables of known images (kubernetes-windows-rules.md §6): the Microsoft
//! repositories whose tags name a Windows build, the repositories whose shared tags carry Linux and Windows
//! variants, the multi-OS images, and the well-known Linux-only images; and the tag vocabulary they are read
//! with (Windows variant markers, Linux distribution tokens, .NET Framework shared tags).
//!
//! They are data, kept apart from the code that turns a row into a classification ([`super::classify`]), so
//! that adding an image is a one-line change here. [`super::classify_image`]'s doc comment lists them for
//! readers.

use super::builds::{WindowsVersion, build_for_tag};
use super::reference::{DOCKER_HUB, ImageRef};

/// How the built-in tables treat a repository's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// Windows-only Microsoft base images: the tag names the build (`ltsc2022`, `1809-KB4493509`,
    /// `10.0.17763.437`, `ltsc2022-amd64`, `windowsservercore-ltsc2022`); other tags are Windows of unknown build.
    WindowsBase,
    /// The HostProcess base image: Windows, and its build never matters (§2.2).
    HostProcessBase,
    /// .NET Framework runtime/aspnet/sdk/wcf: Windows-only; shared tags `4.8`/`latest` hold 2016+2019, `4.8.1`
    /// holds 2022+2025 (§6).
    DotnetFramework,
    /// Other .NET Framework repositories (samples): Windows-only, build only from a `windowsservercore-<tag>`.
    DotnetFrameworkOther,
    /// Repositories whose shared tags carry Linux and Windows variants: a tag naming a Windows base
    /// (`nanoserver-ltsc2022`) is Windows, a tag naming a Linux distro (`alpine`, `bookworm`) is Linux,
    /// any other tag is multi-OS.
    SharedTags,
    /// Published for Linux and Windows under every tag.
    MultiOs,
    /// Linux-only, unless the tag itself names a Windows variant (`-windows-ltsc2019`).
    Linux,
}

/// One repository of the built-in tables.
pub(crate) struct Known {
    /// The registry host.
    pub(crate) registry: &'static str,
    /// The repository; ending in `/` means every repository below it.
    pub(crate) repository: &'static str,
    /// How its tags are read.
    pub(crate) family: Family,
}

const fn known(registry: &'static str, repository: &'static str, family: Family) -> Known {
    Known {
        registry,
        repository,
        family,
    }
}

const MCR: &str = "mcr.microsoft.com";

/// The built-in tables; [`super::classify_image`]'s doc comment lists them for readers.
pub(crate) const KNOWN: &[Known] = &[
    // Microsoft base images (§6), including servercore/iis and the insider repositories.
    known(MCR, "windows", Family::WindowsBase),
    known(MCR, "windows/", Family::WindowsBase),
    known(
        DOCKER_HUB,
        "microsoft/windowsservercore",
        Family::WindowsBase,
    ),
    known(DOCKER_HUB, "microsoft/nanoserver", Family::WindowsBase),
    known(DOCKER_HUB, "microsoft/iis", Family::WindowsBase),
    known(
        MCR,
        "oss/kubernetes/windows-host-process-containers-base-image",
        Family::HostProcessBase,
    ),
    // .NET Framework (§6).
    known(MCR, "dotnet/framework/runtime", Family::DotnetFramework),
    known(MCR, "dotnet/framework/aspnet", Family::DotnetFramework),
    known(MCR, "dotnet/framework/sdk", Family::DotnetFramework),
    known(MCR, "dotnet/framework/wcf", Family::DotnetFramework),
    known(MCR, "dotnet/framework/", Family::DotnetFrameworkOther),
    // .NET (§6): shared tags are manifest lists over Linux and Nano Server.
    known(MCR, "dotnet/runtime", Family::SharedTags),
    known(MCR, "dotnet/aspnet", Family::SharedTags),
    known(MCR, "dotnet/sdk", Family::SharedTags),
    known(MCR, "dotnet/samples", Family::SharedTags),
    known(MCR, "dotnet/core/runtime", Family::SharedTags),
    known(MCR, "dotnet/core/aspnet", Family::SharedTags),
    known(MCR, "dotnet/core/sdk", Family::SharedTags),
    known(MCR, "dotnet/runtime-deps", Family::Linux),
    known(MCR, "dotnet/monitor", Family::Linux),
    known(MCR, "dotnet/aspire-dashboard", Family::Linux),
    // PowerShell: nanoserver/windowsservercore tags next to Linux distro tags.
    known(MCR, "powershell", Family::SharedTags),
    known(DOCKER_HUB, "microsoft/powershell", Family::SharedTags),
    // Docker Hub official images whose shared tags also carry windowsservercore/nanoserver variants.
    known(DOCKER_HUB, "library/golang", Family::SharedTags),
    known(DOCKER_HUB, "library/python", Family::SharedTags),
    known(DOCKER_HUB, "library/mongo", Family::SharedTags),
    // Multi-OS pause images (§6).
    known("registry.k8s.io", "pause", Family::MultiOs),
    known("k8s.gcr.io", "pause", Family::MultiOs),
    known(MCR, "oss/kubernetes/pause", Family::MultiOs),
    // CSI sidecars the Windows node plugins run, published for Linux and Windows under every tag
    // (docs/reference/multi-os-images.md).
    known(
        "registry.k8s.io",
        "sig-storage/csi-node-driver-registrar",
        Family::MultiOs,
    ),
    known(
        "registry.k8s.io",
        "sig-storage/livenessprobe",
        Family::MultiOs,
    ),
    known(
        "k8s.gcr.io",
        "sig-storage/csi-node-driver-registrar",
        Family::MultiOs,
    ),
    known("k8s.gcr.io", "sig-storage/livenessprobe", Family::MultiOs),
    // Well-known Linux-only images.
    known(DOCKER_HUB, "library/busybox", Family::Linux),
    known(DOCKER_HUB, "library/alpine", Family::Linux),
    known(DOCKER_HUB, "library/nginx", Family::Linux),
    known(DOCKER_HUB, "library/ubuntu", Family::Linux),
    known(DOCKER_HUB, "library/debian", Family::Linux),
    known(DOCKER_HUB, "library/centos", Family::Linux),
    known(DOCKER_HUB, "library/fedora", Family::Linux),
    known(DOCKER_HUB, "library/redis", Family::Linux),
    known(DOCKER_HUB, "library/postgres", Family::Linux),
    known(DOCKER_HUB, "library/mysql", Family::Linux),
    known(DOCKER_HUB, "library/mariadb", Family::Linux),
    known(DOCKER_HUB, "library/httpd", Family::Linux),
    known(DOCKER_HUB, "library/node", Family::Linux),
    known(DOCKER_HUB, "fluent/fluent-bit", Family::Linux),
    known("cr.fluentbit.io", "fluent/fluent-bit", Family::Linux),
    known(DOCKER_HUB, "fluent/fluentd", Family::Linux),
    known(DOCKER_HUB, "grafana/grafana", Family::Linux),
    known(DOCKER_HUB, "grafana/loki", Family::Linux),
    known(DOCKER_HUB, "prom/prometheus", Family::Linux),
    known(DOCKER_HUB, "prom/node-exporter", Family::Linux),
    known(DOCKER_HUB, "prom/alertmanager", Family::Linux),
    known("quay.io", "prometheus/prometheus", Family::Linux),
    known("quay.io", "prometheus/node-exporter", Family::Linux),
    known("quay.io", "prometheus/alertmanager", Family::Linux),
    known("registry.k8s.io", "kube-proxy", Family::Linux),
    known(MCR, "cbl-mariner/", Family::Linux),
    known(MCR, "azurelinux/", Family::Linux),
];

/// The family of the first table row that holds `reference`'s repository, if any.
pub(super) fn lookup(reference: &ImageRef) -> Option<Family> {
    KNOWN
        .iter()
        .find(|k| {
            reference.registry.eq_ignore_ascii_case(k.registry)
                && match k.repository.strip_suffix('/') {
                    Some(prefix) => reference
                        .repository
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.starts_with('/')),
                    None => reference.repository == k.repository,
                }
        })
        .map(|k| k.family)
}

/// The build of one tag token: a base tag (`ltsc2019`, `1809`) or a full version (`10.0.17763.437`).
pub(super) fn base_token_build(token: &str) -> Option<u32> {
    if let Some(build) = build_for_tag(token) {
        return Some(build);
    }
    WindowsVersion::parse(token)
        .filter(|v| v.major == 10 && v.minor == 0)
        .map(|v| v.build)
}

/// Finds a Windows variant marker (`windowsservercore`, `nanoserver`, `servercore`, `windows`) among the tag's
/// `-` tokens. `Some(build)` when found, where `build` comes from the token right after the marker: a base tag,
/// a full version, or an LTSC year (`windows-2019`).
pub(super) fn windows_variant(tokens: &[&str]) -> Option<Option<u32>> {
    let at = tokens
        .iter()
        .position(|t| VARIANT_MARKERS.iter().any(|m| t.eq_ignore_ascii_case(m)))?;
    let build = tokens.get(at + 1).and_then(|next| {
        base_token_build(next).or_else(|| {
            VARIANT_YEARS
                .iter()
                .find(|(year, _)| year == next)
                .map(|(_, build)| *build)
        })
    });
    Some(build)
}

/// A tag token that names a Linux distribution or a Linux-only architecture.
pub(super) fn is_linux_token(token: &str) -> bool {
    let token = token.to_ascii_lowercase();
    const EXACT: &[&str] = LINUX_EXACT;
    const PREFIX: &[&str] = LINUX_PREFIX;
    EXACT.contains(&token.as_str()) || PREFIX.iter().any(|p| token.starts_with(p))
}

/// The builds of a .NET Framework shared tag, from its first `-` token (§6).
pub(super) fn framework_shared_builds(first_token: &str) -> Vec<u32> {
    FRAMEWORK_SHARED
        .iter()
        .find(|(tag, _)| *tag == first_token)
        .map(|(_, builds)| builds.to_vec())
        .unwrap_or_default()
}

/// The .NET Framework shared tags (first `-` token) and the builds they hold (§6).
pub(crate) const FRAMEWORK_SHARED: &[(&str, &[u32])] = &[
    ("4.8.1", &[20348, 26100]),
    ("4.8", &[14393, 17763]),
    ("latest", &[14393, 17763]),
];

/// The Windows variant markers among a tag's `-` tokens ([`windows_variant`]), compared ignoring case.
pub(crate) const VARIANT_MARKERS: [&str; 4] =
    ["windowsservercore", "nanoserver", "servercore", "windows"];

/// The LTSC years a token after a variant marker may name (`windows-2019`).
pub(crate) const VARIANT_YEARS: [(&str, u32); 4] = [
    ("2016", 14393),
    ("2019", 17763),
    ("2022", 20348),
    ("2025", 26100),
];

/// The Linux distribution tokens of [`is_linux_token`]: exact tokens, then prefixes (lowercase).
pub(crate) const LINUX_TOKENS: (&[&str], &[&str]) = (LINUX_EXACT, LINUX_PREFIX);
const LINUX_EXACT: &[&str] = &[
    "bookworm",
    "bullseye",
    "buster",
    "stretch",
    "jessie",
    "trixie",
    "slim",
    "jammy",
    "focal",
    "bionic",
    "noble",
    "xenial",
    "cbl",
    "chiseled",
    "distroless",
    "arm32v7",
    "arm64v8",
];
const LINUX_PREFIX: &[&str] = &[
    "alpine",
    "ubuntu",
    "debian",
    "azurelinux",
    "mariner",
    "centos",
    "fedora",
    "opensuse",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::reference::parse_image_ref;

    #[test]
    fn every_known_entry_is_reachable() {
        // Each table row is matched by some reference (catches shadowed rows).
        for (i, k) in KNOWN.iter().enumerate() {
            let repository = match k.repository.strip_suffix('/') {
                Some(prefix) => format!("{prefix}/x"),
                None => k.repository.to_string(),
            };
            let image = format!("{}/{}", k.registry, repository);
            let reference = parse_image_ref(&image);
            assert!(reference.is_some(), "{image}");
            let found = reference.as_ref().and_then(lookup);
            assert_eq!(found, Some(k.family), "row {i}: {image}");
            let first = KNOWN.iter().position(|o| {
                o.registry == k.registry
                    && reference
                        .as_ref()
                        .is_some_and(|r| match o.repository.strip_suffix('/') {
                            Some(p) => r.repository.starts_with(&format!("{p}/")),
                            None => r.repository == o.repository,
                        })
            });
            assert_eq!(first, Some(i), "row {i} is shadowed: {image}");
        }
    }
}
