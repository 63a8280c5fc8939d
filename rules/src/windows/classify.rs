//! The classification of an image: what an image reference says about the OS and Windows builds it runs on
//! ([`classify_image`] → [`ImageClass`]; kubernetes-windows-rules.md §6).
//!
//! It is the one place that combines the settings' image rules ([`super::image_rules`]), the reference grammar
//! ([`super::reference`]) and the built-in tables (`known_images`), in that order of precedence, and
//! that writes the sentence a finding quotes to say why.

use serde::{Deserialize, Serialize};

use super::builds::build_display;
use super::image_rules::ImageRule;
use super::known_images::{
    Family, base_token_build, framework_shared_builds, is_linux_token, lookup, windows_variant,
};
use super::os::Os;
use super::reference::{ImageRef, parse_image_ref};

/// What an image reference says about where it can run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "os", rename_all = "camelCase")]
pub enum ImageOs {
    /// Positively Linux-only (the well-known list, a Linux variant tag, or an image rule).
    Linux,
    /// Windows; the builds it was built for, sorted and deduplicated. Empty means a Windows image of unknown
    /// build (a floating or private tag).
    Windows {
        /// Build numbers, e.g. `[20348]`.
        builds: Vec<u32>,
    },
    /// Published for both Linux and Windows (the pause image, shared tags that carry Windows variants).
    MultiOs,
    /// Nothing recognizes it: callers presume Linux in a pod with no declared OS, the declared OS otherwise.
    Unrecognized,
}

impl ImageOs {
    /// The one OS the image is known to need, if any (`None` for multi-OS and unrecognized images).
    pub fn os(&self) -> Option<Os> {
        match self {
            ImageOs::Linux => Some(Os::Linux),
            ImageOs::Windows { .. } => Some(Os::Windows),
            ImageOs::MultiOs | ImageOs::Unrecognized => None,
        }
    }

    /// The Windows builds of a Windows image (empty otherwise, or when unknown).
    pub fn builds(&self) -> &[u32] {
        match self {
            ImageOs::Windows { builds } => builds,
            _ => &[],
        }
    }
}

/// Where an image's classification came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ImageSource {
    /// The settings' image rule at this index.
    ImageRule(usize),
    /// A Microsoft image, or a tag that names a Windows base image (`windowsservercore-ltsc2022`).
    MicrosoftTags,
    /// The built-in list of Linux-only images, or a Linux variant tag (`-alpine`, `-bookworm`, …).
    WellKnownLinux,
    /// The built-in list of multi-OS images and shared tags.
    MultiOsList,
    /// The image's own manifest (`platform.os`, `os.version`), when a host could read it. Never produced by
    /// [`classify_image`]; callers that read manifests use it.
    Manifest,
    /// Nothing recognized the image.
    Unrecognized,
}

/// The classification of one image reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageClass {
    /// The OS (and builds) the image needs.
    pub os: ImageOs,
    /// Which table or rule decided.
    pub source: ImageSource,
    /// A short sentence for messages, e.g. `the tag ltsc2019 is Windows Server 2019 (10.0.17763)`.
    pub reason: String,
}

/// Classifies an image reference: the settings' image rules first (the first matching rule wins), then the
/// built-in tables; anything else is [`ImageOs::Unrecognized`].
///
/// Built-in tables (registry `docker.io` unless named; see kubernetes-windows-rules.md §6):
///
/// | images | classification |
/// |---|---|
/// | `mcr.microsoft.com/windows` and everything below `mcr.microsoft.com/windows/` (servercore, nanoserver, server, servercore/iis, insider), Docker Hub `microsoft/windowsservercore`, `microsoft/nanoserver`, `microsoft/iis` | Windows; build from the tag: base tags (`ltsc2022`, `1809`, `20H2`, …), full versions (`10.0.17763.437`), KB tags (`1809-KB4493509`), suffixed tags (`ltsc2022-amd64`), `windowsservercore-ltsc2022`; other tags (`latest`, none) → unknown build |
/// | `mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image` | Windows, unknown build (HostProcess: the build never matters) |
/// | `mcr.microsoft.com/dotnet/framework/{runtime,aspnet,sdk,wcf}` | `…-windowsservercore-<tag>` → that build; `4.8.1…` → 2022+2025; `4.8…` and `latest` → 2016+2019; other shared tags (`3.5`, `4.7.2`, …) → unknown build (their contents are not verified) |
/// | other `mcr.microsoft.com/dotnet/framework/…` (samples) | Windows; build only from `windowsservercore-<tag>` |
/// | `mcr.microsoft.com/dotnet/{runtime,aspnet,sdk,samples}`, `dotnet/core/{runtime,aspnet,sdk}`, `mcr.microsoft.com/powershell`, `microsoft/powershell`, and the official `golang`, `python`, `mongo` | shared tags: `…nanoserver-<tag>`/`…windowsservercore-<tag>` → Windows of that build; a Linux distro or arch token (`alpine*`, `bookworm`, `bullseye`, `slim`, `jammy`, `noble`, `ubuntu*`, `debian*`, `azurelinux*`, `cbl-mariner`, `mariner*`, `chiseled`, …) → Linux; anything else (`8.0`, `3.12`, `latest`, `lts`) → multi-OS, because these projects publish their shared tags as manifest lists with Windows entries |
/// | `registry.k8s.io/pause`, `k8s.gcr.io/pause`, `mcr.microsoft.com/oss/kubernetes/pause`; the CSI sidecars `registry.k8s.io/sig-storage/{csi-node-driver-registrar,livenessprobe}` (also on `k8s.gcr.io`) | multi-OS, any tag |
/// | `busybox`, `alpine`, `nginx`, `ubuntu`, `debian`, `centos`, `fedora`, `redis`, `postgres`, `mysql`, `mariadb`, `httpd`, `node`, `fluent/fluent-bit` (also on `cr.fluentbit.io`), `fluent/fluentd`, `grafana/grafana`, `grafana/loki`, `prom/{prometheus,node-exporter,alertmanager}`, `quay.io/prometheus/{prometheus,node-exporter,alertmanager}`, `registry.k8s.io/kube-proxy`, `mcr.microsoft.com/dotnet/{runtime-deps,monitor,aspire-dashboard}`, `mcr.microsoft.com/cbl-mariner/…`, `mcr.microsoft.com/azurelinux/…` | Linux, unless the tag names a Windows variant (fluentd's `-windows-ltsc2019`), which is Windows |
///
/// Official images are matched on Docker Hub only (`nginx`, `docker.io/library/nginx`), not on mirrors.
/// A tag is what the kubelet pulls: no tag and no digest means `latest`; a digest-only reference has no tag
/// to read, so Windows repositories give an unknown build.
///
/// ```
/// use winplace_rules::windows::{classify_image, ImageOs};
/// assert_eq!(classify_image("mcr.microsoft.com/windows/servercore:ltsc2019", &[]).os, ImageOs::Windows { builds: vec![17763] });
/// assert_eq!(classify_image("nginx:1.27", &[]).os, ImageOs::Linux);
/// assert_eq!(classify_image("registry.k8s.io/pause:3.10", &[]).os, ImageOs::MultiOs);
/// assert_eq!(classify_image("ghcr.io/example/shop-api:2.3.1", &[]).os, ImageOs::Unrecognized);
/// ```
pub fn classify_image(image: &str, rules: &[ImageRule]) -> ImageClass {
    if let Some((index, rule)) = rules.iter().enumerate().find(|(_, r)| r.matches(image)) {
        return from_rule(index, rule);
    }
    let Some(reference) = parse_image_ref(image) else {
        return ImageClass {
            os: ImageOs::Unrecognized,
            source: ImageSource::Unrecognized,
            reason: format!("`{image}` is not a valid image reference"),
        };
    };
    match lookup(&reference) {
        Some(family) => classify_known(&reference, family),
        None => ImageClass {
            os: ImageOs::Unrecognized,
            source: ImageSource::Unrecognized,
            reason: format!(
                "no table or image rule recognizes {}",
                reference.short_name()
            ),
        },
    }
}

fn from_rule(index: usize, rule: &ImageRule) -> ImageClass {
    let os = match rule.os {
        Os::Linux => ImageOs::Linux,
        Os::Windows => ImageOs::Windows {
            builds: rule.build_numbers(),
        },
    };
    let what = match &os {
        ImageOs::Windows { builds } if !builds.is_empty() => {
            format!("a Windows image for {}", describe_builds(builds))
        }
        ImageOs::Windows { .. } => "a Windows image of unknown build".to_string(),
        _ => "a Linux image".to_string(),
    };
    ImageClass {
        os,
        source: ImageSource::ImageRule(index),
        reason: format!("image rule {index} (`{}`) makes it {what}", rule.pattern),
    }
}

fn classify_known(reference: &ImageRef, family: Family) -> ImageClass {
    let name = reference.short_name();
    let tag = reference.effective_tag();
    let tag_text = tag.unwrap_or("");
    let tokens: Vec<&str> = tag_text.split('-').collect();
    let variant = windows_variant(&tokens);
    let linux_tag = tokens.iter().any(|t| is_linux_token(t));
    match family {
        Family::WindowsBase => {
            let build = match variant {
                Some(build) => build,
                None => tokens.iter().find_map(|t| base_token_build(t)),
            };
            windows(&name, tag, build.into_iter().collect())
        }
        Family::HostProcessBase => ImageClass {
            os: ImageOs::Windows { builds: Vec::new() },
            source: ImageSource::MicrosoftTags,
            reason: format!(
                "{name} is the Windows HostProcess base image, which runs on any build"
            ),
        },
        Family::DotnetFramework | Family::DotnetFrameworkOther => {
            let builds = match variant {
                Some(build) => build.into_iter().collect(),
                None if family == Family::DotnetFramework => {
                    framework_shared_builds(tokens.first().copied().unwrap_or(""))
                }
                None => Vec::new(),
            };
            windows(&name, tag, builds)
        }
        Family::SharedTags => match variant {
            Some(build) => windows(&name, tag, build.into_iter().collect()),
            None if linux_tag => linux_variant(&name, tag_text),
            None => ImageClass {
                os: ImageOs::MultiOs,
                source: ImageSource::MultiOsList,
                reason: match tag {
                    Some(tag) => format!(
                        "the tag {tag} of {name} is a shared tag published for Linux and Windows"
                    ),
                    None => format!("{name} is published for Linux and Windows"),
                },
            },
        },
        Family::MultiOs => ImageClass {
            os: ImageOs::MultiOs,
            source: ImageSource::MultiOsList,
            reason: format!("{name} is published for Linux and Windows"),
        },
        Family::Linux => match variant {
            Some(build) => windows(&name, tag, build.into_iter().collect()),
            None => ImageClass {
                os: ImageOs::Linux,
                source: ImageSource::WellKnownLinux,
                reason: format!("{name} is a well-known Linux-only image"),
            },
        },
    }
}

fn windows(name: &str, tag: Option<&str>, mut builds: Vec<u32>) -> ImageClass {
    builds.sort_unstable();
    builds.dedup();
    let reason = match (tag, builds.is_empty()) {
        (Some(tag), false) => format!("the tag {tag} of {name} is {}", describe_builds(&builds)),
        (Some(tag), true) => {
            format!("{name} is a Windows image, but its tag {tag} does not say which Windows build")
        }
        (None, _) => {
            format!(
                "{name} is a Windows image, but a digest alone does not say which Windows build"
            )
        }
    };
    ImageClass {
        os: ImageOs::Windows { builds },
        source: ImageSource::MicrosoftTags,
        reason,
    }
}

fn linux_variant(name: &str, tag: &str) -> ImageClass {
    ImageClass {
        os: ImageOs::Linux,
        source: ImageSource::WellKnownLinux,
        reason: format!("the tag {tag} of {name} is a Linux variant"),
    }
}

/// `Windows Server 2016 (10.0.14393) and Windows Server 2019 (10.0.17763)`.
fn describe_builds(builds: &[u32]) -> String {
    let names: Vec<String> = builds.iter().map(|&b| build_display(b)).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(image: &str) -> ImageOs {
        classify_image(image, &[]).os
    }

    fn win(builds: &[u32]) -> ImageOs {
        ImageOs::Windows {
            builds: builds.to_vec(),
        }
    }

    #[test]
    fn microsoft_base_images() {
        // §6: base images, tag forms and floating tags.
        let cases: &[(&str, &[u32])] = &[
            ("mcr.microsoft.com/windows/servercore:ltsc2016", &[14393]),
            ("mcr.microsoft.com/windows/servercore:ltsc2019", &[17763]),
            ("mcr.microsoft.com/windows/servercore:1809", &[17763]),
            ("mcr.microsoft.com/windows/servercore:ltsc2022", &[20348]),
            ("mcr.microsoft.com/windows/servercore:ltsc2025", &[26100]),
            ("mcr.microsoft.com/windows/servercore:1709", &[16299]),
            ("mcr.microsoft.com/windows/servercore:1803", &[17134]),
            ("mcr.microsoft.com/windows/servercore:1903", &[18362]),
            ("mcr.microsoft.com/windows/servercore:1909", &[18363]),
            ("mcr.microsoft.com/windows/servercore:2004", &[19041]),
            ("mcr.microsoft.com/windows/servercore:20H2", &[19042]),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022-amd64",
                &[20348],
            ),
            (
                "mcr.microsoft.com/windows/servercore:10.0.20348.2762",
                &[20348],
            ),
            ("mcr.microsoft.com/windows/servercore:latest", &[]),
            ("mcr.microsoft.com/windows/servercore", &[]),
            ("mcr.microsoft.com/windows/nanoserver:1809", &[17763]),
            (
                "mcr.microsoft.com/windows/nanoserver:10.0.17763.437",
                &[17763],
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809-KB4493509",
                &[17763],
            ),
            ("mcr.microsoft.com/windows/nanoserver:ltsc2022", &[20348]),
            ("mcr.microsoft.com/windows/nanoserver:ltsc2025", &[26100]),
            ("mcr.microsoft.com/windows/nanoserver:1607", &[14393]),
            ("mcr.microsoft.com/windows:1809", &[17763]),
            ("mcr.microsoft.com/windows:20H2", &[19042]),
            ("mcr.microsoft.com/windows/server:ltsc2022", &[20348]),
            ("mcr.microsoft.com/windows/server:ltsc2025", &[26100]),
            (
                "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
                &[20348],
            ),
            (
                "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019",
                &[17763],
            ),
            ("mcr.microsoft.com/windows/servercore/iis:latest", &[]),
            (
                "mcr.microsoft.com/windows/servercore/insider:10.0.26080.1",
                &[26080],
            ),
            ("microsoft/windowsservercore:1709", &[16299]),
            ("docker.io/microsoft/nanoserver:1803", &[17134]),
            ("microsoft/nanoserver", &[]),
            ("microsoft/iis:windowsservercore-ltsc2016", &[14393]),
            ("MCR.Microsoft.com/windows/servercore:ltsc2022", &[20348]),
            (
                "mcr.microsoft.com/windows/servercore@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                &[],
            ),
            (
                "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
                &[],
            ),
        ];
        for (image, builds) in cases {
            let c = classify_image(image, &[]);
            assert_eq!(c.os, win(builds), "{image}");
            assert_eq!(c.source, ImageSource::MicrosoftTags, "{image}");
        }
    }

    #[test]
    fn dotnet_images() {
        // §6: .NET tags (corpus build-2022-image-on-2025-host uses aspnet:8.0-nanoserver-ltsc2022).
        let cases: &[(&str, ImageOs)] = &[
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
                win(&[20348]),
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-1809",
                win(&[17763]),
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:9.0-nanoserver-ltsc2025",
                win(&[26100]),
            ),
            (
                "mcr.microsoft.com/dotnet/runtime:8.0-windowsservercore-ltsc2019",
                win(&[17763]),
            ),
            (
                "mcr.microsoft.com/dotnet/sdk:9.0.100-windowsservercore-ltsc2022",
                win(&[20348]),
            ),
            (
                "mcr.microsoft.com/dotnet/sdk:5.0-nanoserver-2009",
                win(&[19042]),
            ),
            (
                "mcr.microsoft.com/dotnet/core/aspnet:3.1-nanoserver-1903",
                win(&[18362]),
            ),
            ("mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver", win(&[])),
            ("mcr.microsoft.com/dotnet/aspnet:8.0", ImageOs::MultiOs),
            ("mcr.microsoft.com/dotnet/aspnet:9.0", ImageOs::MultiOs),
            ("mcr.microsoft.com/dotnet/aspnet:8.0.11", ImageOs::MultiOs),
            ("mcr.microsoft.com/dotnet/sdk:latest", ImageOs::MultiOs),
            ("mcr.microsoft.com/dotnet/sdk", ImageOs::MultiOs),
            ("mcr.microsoft.com/dotnet/aspnet:8.0-alpine", ImageOs::Linux),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-alpine3.20",
                ImageOs::Linux,
            ),
            (
                "mcr.microsoft.com/dotnet/runtime:8.0-bookworm-slim",
                ImageOs::Linux,
            ),
            ("mcr.microsoft.com/dotnet/runtime:8.0-jammy", ImageOs::Linux),
            (
                "mcr.microsoft.com/dotnet/runtime:9.0-noble-chiseled",
                ImageOs::Linux,
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-azurelinux3.0",
                ImageOs::Linux,
            ),
            (
                "mcr.microsoft.com/dotnet/aspnet:8.0-cbl-mariner2.0",
                ImageOs::Linux,
            ),
            ("mcr.microsoft.com/dotnet/runtime-deps:8.0", ImageOs::Linux),
            ("mcr.microsoft.com/dotnet/monitor:8", ImageOs::Linux),
            (
                "mcr.microsoft.com/dotnet/aspire-dashboard:9.0",
                ImageOs::Linux,
            ),
        ];
        for (image, expected) in cases {
            assert_eq!(&class(image), expected, "{image}");
        }
    }

    #[test]
    fn dotnet_framework_images() {
        // §6: shared tag 4.8/latest hold 2016+2019, 4.8.1 holds 2022+2025 (corpus dotnet-framework-floating-tag).
        let cases: &[(&str, &[u32])] = &[
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8",
                &[14393, 17763],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:latest",
                &[14393, 17763],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime",
                &[14393, 17763],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-20240910",
                &[14393, 17763],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/sdk:4.8.1",
                &[20348, 26100],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/wcf:4.8.1-20250610",
                &[20348, 26100],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8-windowsservercore-ltsc2019",
                &[17763],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8-windowsservercore-ltsc2016",
                &[14393],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-windowsservercore-ltsc2022",
                &[20348],
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1-20250610-windowsservercore-ltsc2025",
                &[26100],
            ),
            ("mcr.microsoft.com/dotnet/framework/runtime:3.5", &[]),
            ("mcr.microsoft.com/dotnet/framework/runtime:4.7.2", &[]),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:3.5-windowsservercore-ltsc2025",
                &[26100],
            ),
            ("mcr.microsoft.com/dotnet/framework/samples:aspnetapp", &[]),
            ("mcr.microsoft.com/dotnet/framework/samples:latest", &[]),
            (
                "mcr.microsoft.com/dotnet/framework/samples:dotnetapp-windowsservercore-ltsc2022",
                &[20348],
            ),
        ];
        for (image, builds) in cases {
            assert_eq!(class(image), win(builds), "{image}");
        }
    }

    #[test]
    fn powershell_and_official_shared_tags() {
        let cases: &[(&str, ImageOs)] = &[
            (
                "mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022",
                win(&[20348]),
            ),
            (
                "mcr.microsoft.com/powershell:nanoserver-1809",
                win(&[17763]),
            ),
            (
                "mcr.microsoft.com/powershell:7.4-windowsservercore-ltsc2022",
                win(&[20348]),
            ),
            (
                "mcr.microsoft.com/powershell:windowsservercore-ltsc2025",
                win(&[26100]),
            ),
            ("mcr.microsoft.com/powershell:latest", ImageOs::MultiOs),
            ("mcr.microsoft.com/powershell:lts", ImageOs::MultiOs),
            (
                "mcr.microsoft.com/powershell:7.4-ubuntu-22.04",
                ImageOs::Linux,
            ),
            (
                "mcr.microsoft.com/powershell:preview-alpine-3.19",
                ImageOs::Linux,
            ),
            ("mcr.microsoft.com/powershell:mariner-2.0", ImageOs::Linux),
            ("mcr.microsoft.com/powershell:debian-12", ImageOs::Linux),
            ("microsoft/powershell:nanoserver", win(&[])),
            ("golang:1.22", ImageOs::MultiOs),
            ("golang", ImageOs::MultiOs),
            ("golang:1.22-alpine", ImageOs::Linux),
            ("golang:1.22-bookworm", ImageOs::Linux),
            ("golang:1.22-windowsservercore-ltsc2022", win(&[20348])),
            ("golang:1.22-nanoserver-1809", win(&[17763])),
            ("python:3.12", ImageOs::MultiOs),
            ("python:3.12-slim", ImageOs::Linux),
            ("python:3.12-slim-bookworm", ImageOs::Linux),
            ("python:3.12-windowsservercore-ltsc2025", win(&[26100])),
            ("python:windowsservercore", win(&[])),
            ("mongo:7.0", ImageOs::MultiOs),
            ("mongo:7.0-jammy", ImageOs::Linux),
            ("mongo:7.0-windowsservercore-ltsc2022", win(&[20348])),
        ];
        for (image, expected) in cases {
            assert_eq!(&class(image), expected, "{image}");
        }
    }

    #[test]
    fn multi_os_images() {
        // §6 (corpus multi-os-image-anywhere).
        for image in [
            "registry.k8s.io/pause:3.10",
            "registry.k8s.io/pause:3.6",
            "registry.k8s.io/pause",
            "k8s.gcr.io/pause:3.5",
            "mcr.microsoft.com/oss/kubernetes/pause:3.6",
            // docs/reference/multi-os-images.md: the CSI sidecars of Windows node plugins.
            "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0",
            "registry.k8s.io/sig-storage/livenessprobe:v2.15.0",
            "k8s.gcr.io/sig-storage/csi-node-driver-registrar:v2.3.0",
        ] {
            let c = classify_image(image, &[]);
            assert_eq!(
                (c.os, c.source),
                (ImageOs::MultiOs, ImageSource::MultiOsList),
                "{image}"
            );
        }
    }

    #[test]
    fn well_known_linux_images() {
        // Known Linux images (corpus mixed-os-containers, daemonset-tolerates-everything).
        for image in [
            "busybox:1.36",
            "docker.io/library/busybox:1.36",
            "alpine:3.20",
            "nginx",
            "docker.io/library/nginx:1.27",
            "ubuntu:24.04",
            "debian:bookworm",
            "centos:7",
            "fedora:40",
            "redis:7",
            "postgres:16",
            "mysql:8",
            "mariadb:11",
            "httpd:2.4",
            "node:20",
            "fluent/fluent-bit:3.1",
            "cr.fluentbit.io/fluent/fluent-bit:3.1",
            "fluent/fluentd:v1.16-1",
            "grafana/grafana:11.0.0",
            "grafana/loki:3.0.0",
            "prom/prometheus:v2.53.0",
            "prom/node-exporter:v1.8.1",
            "prom/alertmanager:v0.27.0",
            "quay.io/prometheus/prometheus:v2.53.0",
            "quay.io/prometheus/node-exporter:v1.8.1",
            "quay.io/prometheus/alertmanager:v0.27.0",
            "registry.k8s.io/kube-proxy:v1.31.0",
            "mcr.microsoft.com/cbl-mariner/base/core:2.0",
            "mcr.microsoft.com/azurelinux/base/core:3.0",
        ] {
            let c = classify_image(image, &[]);
            assert_eq!(
                (c.os, c.source),
                (ImageOs::Linux, ImageSource::WellKnownLinux),
                "{image}"
            );
        }
        // A Windows variant tag of a Linux-listed image is still Windows.
        assert_eq!(
            class("fluent/fluentd:v1.16-windows-ltsc2019-1"),
            win(&[17763])
        );
        assert_eq!(class("fluent/fluent-bit:3.1.4-windows-2022"), win(&[20348]));
        // Mirrors and look-alikes are not the official images.
        assert_eq!(
            class("mirror.example.com/library/nginx:1.27"),
            ImageOs::Unrecognized
        );
        assert_eq!(
            class("nginxinc/nginx-unprivileged:1.27"),
            ImageOs::Unrecognized
        );
        assert_eq!(
            class("mcr.microsoft.com/cbl-mariner"),
            ImageOs::Unrecognized
        );
    }

    #[test]
    fn unrecognized_images() {
        for image in [
            "ghcr.io/example/shop-api:2.3.1",
            "myregistry.io/win/app:1.0",
            "example/windows-app:latest",
            "mcr.microsoft.com/windowsserver:ltsc2022",
        ] {
            let c = classify_image(image, &[]);
            assert_eq!(
                (c.os, c.source),
                (ImageOs::Unrecognized, ImageSource::Unrecognized),
                "{image}"
            );
        }
        let c = classify_image("NGINX:1", &[]);
        assert_eq!(c.os, ImageOs::Unrecognized);
        assert!(
            c.reason.contains("not a valid image reference"),
            "{}",
            c.reason
        );
    }

    #[test]
    fn image_rules_come_first() {
        let rules = vec![
            ImageRule {
                pattern: "myregistry.io/win/*".into(),
                os: Os::Windows,
                builds: vec![
                    "10.0.20348".into(),
                    "10.0.17763".into(),
                    "10.0.20348.1".into(),
                ],
            },
            ImageRule {
                pattern: "myregistry.io/*".into(),
                os: Os::Windows,
                builds: vec![],
            },
            ImageRule {
                pattern: "docker.io/library/nginx*".into(),
                os: Os::Windows,
                builds: vec![],
            },
            ImageRule {
                pattern: "mcr.microsoft.com/windows/servercore:*".into(),
                os: Os::Linux,
                builds: vec![],
            },
        ];
        let cases: &[(&str, ImageOs, ImageSource)] = &[
            (
                "myregistry.io/win/app:1.0",
                win(&[17763, 20348]),
                ImageSource::ImageRule(0),
            ),
            (
                "myregistry.io/other:1.0",
                win(&[]),
                ImageSource::ImageRule(1),
            ),
            // Normalized form: `nginx:1.27` is docker.io/library/nginx:1.27.
            ("nginx:1.27", win(&[]), ImageSource::ImageRule(2)),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                ImageOs::Linux,
                ImageSource::ImageRule(3),
            ),
            ("busybox", ImageOs::Linux, ImageSource::WellKnownLinux),
        ];
        for (image, os, source) in cases {
            let c = classify_image(image, &rules);
            assert_eq!((&c.os, c.source), (os, *source), "{image}");
        }
        let c = classify_image("myregistry.io/win/app:1.0", &rules);
        assert_eq!(
            c.reason,
            "image rule 0 (`myregistry.io/win/*`) makes it a Windows image for Windows Server 2019 (10.0.17763) and Windows Server 2022 (10.0.20348)"
        );
    }

    #[test]
    fn reasons() {
        let c = classify_image("mcr.microsoft.com/windows/servercore:ltsc2019", &[]);
        assert_eq!(
            c.reason,
            "the tag ltsc2019 of mcr.microsoft.com/windows/servercore is Windows Server 2019 (10.0.17763)"
        );
        let c = classify_image("mcr.microsoft.com/dotnet/framework/runtime:4.8", &[]);
        assert_eq!(
            c.reason,
            "the tag 4.8 of mcr.microsoft.com/dotnet/framework/runtime is Windows Server 2016 (10.0.14393) and Windows Server 2019 (10.0.17763)"
        );
        let c = classify_image("mcr.microsoft.com/windows/servercore:latest", &[]);
        assert!(
            c.reason.contains("does not say which Windows build"),
            "{}",
            c.reason
        );
        assert_eq!(
            classify_image("nginx:1.27", &[]).reason,
            "nginx is a well-known Linux-only image"
        );
        let c = classify_image("ghcr.io/example/shop-api:2.3.1", &[]);
        assert_eq!(
            c.reason,
            "no table or image rule recognizes ghcr.io/example/shop-api"
        );
    }

    #[test]
    fn image_os_helpers() {
        assert_eq!(win(&[20348]).os(), Some(Os::Windows));
        assert_eq!(win(&[20348]).builds(), &[20348]);
        assert_eq!(ImageOs::Linux.os(), Some(Os::Linux));
        assert_eq!(ImageOs::MultiOs.os(), None);
        assert_eq!(ImageOs::Unrecognized.builds(), &[] as &[u32]);
        assert_eq!(
            serde_json::to_string(&win(&[20348])).ok().as_deref(),
            Some(r#"{"os":"windows","builds":[20348]}"#)
        );
        assert_eq!(
            serde_json::to_string(&ImageOs::MultiOs).ok().as_deref(),
            Some(r#"{"os":"multiOs"}"#)
        );
    }
}
