//! What an image reference says about the OS and Windows build it runs on (kubernetes-windows-rules.md §6, DESIGN "Images").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::builds::{WindowsVersion, build_display, build_for_tag};

/// An operating system a pod or image runs on (the values of `spec.os.name` and `kubernetes.io/os`).
///
/// ```
/// use winplace_rules::windows::Os;
/// assert_eq!("windows".parse::<Os>(), Ok(Os::Windows));
/// assert!("Windows".parse::<Os>().is_err()); // exact case, as the API server requires
/// assert_eq!(Os::Linux.to_string(), "linux");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    /// `linux`.
    Linux,
    /// `windows`.
    Windows,
}

impl Os {
    /// The lowercase name, `linux` or `windows`.
    pub fn as_str(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::Windows => "windows",
        }
    }
}

impl fmt::Display for Os {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an [`Os`]: the text was not exactly `linux` or `windows`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidOs(pub String);

impl fmt::Display for InvalidOs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an OS: use exactly `linux` or `windows`",
            self.0
        )
    }
}

impl std::error::Error for InvalidOs {}

impl FromStr for Os {
    type Err = InvalidOs;

    /// Accepts exactly `linux` or `windows` (case-sensitive, like `validateOS`, §1.1).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "linux" => Ok(Os::Linux),
            "windows" => Ok(Os::Windows),
            _ => Err(InvalidOs(s.to_string())),
        }
    }
}

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

/// A settings image rule: a glob on the image reference (`*` matches any run of characters, `/` included,
/// `?` exactly one), e.g. `myregistry.io/win/*`.
///
/// The pattern is matched against the reference as written in the pod **and** against its normalized form
/// (`docker.io/library/nginx:1.27` for `nginx:1.27`), so `docker.io/library/nginx*` also matches `nginx:1.27`.
/// A pattern without `*` must equal the whole reference, tag included.
///
/// ```
/// use winplace_rules::windows::{classify_image, ImageOs, ImageRule, Os};
/// let rule = ImageRule { pattern: "myregistry.io/win/*".into(), os: Os::Windows, builds: vec!["10.0.20348".into()] };
/// let class = classify_image("myregistry.io/win/app:1.0", &[rule]);
/// assert_eq!(class.os, ImageOs::Windows { builds: vec![20348] });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageRule {
    /// The glob pattern.
    pub pattern: String,
    /// The OS of matching images.
    pub os: Os,
    /// For Windows images, the builds they were built for, as `10.0.20348` (empty: unknown build).
    #[serde(default)]
    pub builds: Vec<String>,
}

impl ImageRule {
    /// Whether the rule's pattern matches `image` as written or in its normalized form.
    pub fn matches(&self, image: &str) -> bool {
        if glob_match(&self.pattern, image) {
            return true;
        }
        match parse_image_ref(image) {
            Some(reference) => {
                let normalized = reference.to_string();
                normalized != image && glob_match(&self.pattern, &normalized)
            }
            None => false,
        }
    }

    /// Checks the rule for settings validation: a non-empty pattern, builds only for Windows, and every build
    /// in the `10.0.20348` form. The error names the field (`pattern`, `builds`) and says what to do.
    pub fn validate(&self) -> Result<(), crate::settings::InvalidSetting> {
        use crate::settings::InvalidSetting;
        if self.pattern.trim().is_empty() {
            return Err(InvalidSetting::new("pattern", "must not be empty"));
        }
        if self.os == Os::Linux && !self.builds.is_empty() {
            return Err(InvalidSetting::new(
                "builds",
                "only a Windows image rule can list builds",
            ));
        }
        for (i, build) in self.builds.iter().enumerate() {
            if WindowsVersion::parse(build).is_none() {
                return Err(InvalidSetting::new(
                    format!("builds[{i}]"),
                    format!("`{build}` is not a Windows build such as 10.0.20348"),
                ));
            }
        }
        Ok(())
    }

    /// The rule's build numbers, sorted and deduplicated; entries that do not parse are skipped
    /// ([`ImageRule::validate`] rejects them up front).
    pub fn build_numbers(&self) -> Vec<u32> {
        let mut builds: Vec<u32> = self
            .builds
            .iter()
            .filter_map(|b| WindowsVersion::parse(b))
            .map(|v| v.build)
            .collect();
        builds.sort_unstable();
        builds.dedup();
        builds
    }
}

/// Glob match: `*` matches any run of characters (including none and `/`), `?` exactly one character,
/// everything else itself (case-sensitive).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0usize, 0usize);
    // Position of the last `*` seen and the text position it was tried at; backtracking to it is enough
    // because a later `*` can absorb anything an earlier one could.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == '?' || c == text[t] => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A parsed image reference, normalized like Docker (`nginx` → `docker.io/library/nginx`).
///
/// ```
/// use winplace_rules::windows::parse_image_ref;
/// let r = parse_image_ref("localhost:5000/team/app:1.2").unwrap();
/// assert_eq!((r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()), ("localhost:5000", "team/app", Some("1.2")));
/// assert_eq!(parse_image_ref("nginx").unwrap().to_string(), "docker.io/library/nginx");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ImageRef {
    /// The registry host (and port), `docker.io` when the reference names none.
    pub registry: String,
    /// The repository path, with `library/` added for Docker Hub official images.
    pub repository: String,
    /// The tag, if written (the kubelet pulls `latest` when neither tag nor digest is given).
    pub tag: Option<String>,
    /// The digest, e.g. `sha256:…`, if written.
    pub digest: Option<String>,
}

impl ImageRef {
    /// The tag the kubelet pulls: the written tag, `latest` when neither tag nor digest is written, or `None`
    /// for a digest-only reference.
    pub fn effective_tag(&self) -> Option<&str> {
        match (&self.tag, &self.digest) {
            (Some(tag), _) => Some(tag),
            (None, None) => Some("latest"),
            (None, Some(_)) => None,
        }
    }

    /// A short name for messages: `nginx` for Docker Hub official images, `registry/repository` otherwise.
    pub fn short_name(&self) -> String {
        match self.repository.strip_prefix("library/") {
            Some(name) if self.registry == DOCKER_HUB => name.to_string(),
            _ => format!("{}/{}", self.registry, self.repository),
        }
    }
}

impl fmt::Display for ImageRef {
    /// The normalized reference `registry/repository[:tag][@digest]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

const DOCKER_HUB: &str = "docker.io";

/// Parses an image reference with the Docker reference grammar (distribution/reference
/// `ParseNormalizedNamed`) and normalizes it: no registry → `docker.io`, `index.docker.io` → `docker.io`,
/// a one-part Docker Hub name gets `library/`. The registry keeps its letter case; the repository must be
/// lowercase. Returns `None` for anything the kubelet could not pull by that name.
pub fn parse_image_ref(image: &str) -> Option<ImageRef> {
    if image.len() == 64
        && image
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        // Docker refuses a bare 64-hex name: it looks like an image id.
        return None;
    }
    let (rest, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest
        && !valid_digest(digest)
    {
        return None;
    }
    // The tag is the `:` part after the last `/`; a `:` before it is the registry port.
    let last_component = rest.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match rest[last_component..].find(':') {
        Some(i) => {
            let at = last_component + i;
            (&rest[..at], Some(&rest[at + 1..]))
        }
        None => (rest, None),
    };
    if let Some(tag) = tag
        && !valid_tag(tag)
    {
        return None;
    }
    if name.is_empty() || name.len() > 255 {
        return None;
    }
    let (registry, remainder) = match name.split_once('/') {
        Some((first, remainder))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase()) =>
        {
            (first, remainder)
        }
        _ => (DOCKER_HUB, name),
    };
    if !valid_registry(registry) || !valid_path(remainder) {
        return None;
    }
    let registry = if registry == "index.docker.io" {
        DOCKER_HUB
    } else {
        registry
    };
    let repository = if registry == DOCKER_HUB && !remainder.contains('/') {
        format!("library/{remainder}")
    } else {
        remainder.to_string()
    };
    Some(ImageRef {
        registry: registry.to_string(),
        repository,
        tag: tag.map(str::to_string),
        digest: digest.map(str::to_string),
    })
}

/// `[\w][\w.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && word(bytes[0])
        && bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
}

/// `algorithm:hex` with `algorithm = [A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*` and 32+ hex digits.
fn valid_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|part| {
        let mut bytes = part.bytes();
        bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
            && bytes.all(|b| b.is_ascii_alphanumeric())
    });
    algorithm_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `host[:port]` where host is a DNS name (components of letters, digits and inner hyphens), or `[IPv6]`.
fn valid_registry(registry: &str) -> bool {
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else {
            return false;
        };
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
            return false;
        }
        match after {
            "" => return true,
            _ => match after.strip_prefix(':') {
                Some(port) => ("", Some(port)),
                None => return false,
            },
        }
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (registry, None),
        }
    };
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    if registry.starts_with('[') {
        return true;
    }
    !host.is_empty()
        && host.split('.').all(|component| {
            let bytes = component.as_bytes();
            !bytes.is_empty()
                && bytes[0].is_ascii_alphanumeric()
                && bytes[bytes.len() - 1].is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Path components `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*` joined by `/`.
fn valid_path(path: &str) -> bool {
    path.split('/').all(|component| {
        let bytes = component.as_bytes();
        let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
            return false;
        }
        let mut i = 0;
        while i < bytes.len() {
            if alnum(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !alnum(bytes[i]) {
                i += 1;
            }
            let separator = &component[start..i];
            let ok = matches!(separator, "." | "_" | "__") || separator.bytes().all(|b| b == b'-');
            if !ok {
                return false;
            }
        }
        true
    })
}

/// How the built-in tables treat a repository's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
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
struct Known {
    registry: &'static str,
    /// The repository; ending in `/` means every repository below it.
    repository: &'static str,
    family: Family,
}

const fn known(registry: &'static str, repository: &'static str, family: Family) -> Known {
    Known {
        registry,
        repository,
        family,
    }
}

const MCR: &str = "mcr.microsoft.com";

/// The built-in tables; [`classify_image`]'s doc comment lists them for readers.
const KNOWN: &[Known] = &[
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

fn lookup(reference: &ImageRef) -> Option<Family> {
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
/// | `registry.k8s.io/pause`, `k8s.gcr.io/pause`, `mcr.microsoft.com/oss/kubernetes/pause` | multi-OS, any tag |
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

/// The build of one tag token: a base tag (`ltsc2019`, `1809`) or a full version (`10.0.17763.437`).
fn base_token_build(token: &str) -> Option<u32> {
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
fn windows_variant(tokens: &[&str]) -> Option<Option<u32>> {
    let at = tokens.iter().position(|t| {
        ["windowsservercore", "nanoserver", "servercore", "windows"]
            .iter()
            .any(|m| t.eq_ignore_ascii_case(m))
    })?;
    let build = tokens.get(at + 1).and_then(|next| {
        base_token_build(next).or(match *next {
            "2016" => Some(14393),
            "2019" => Some(17763),
            "2022" => Some(20348),
            "2025" => Some(26100),
            _ => None,
        })
    });
    Some(build)
}

/// A tag token that names a Linux distribution or a Linux-only architecture.
fn is_linux_token(token: &str) -> bool {
    let token = token.to_ascii_lowercase();
    const EXACT: &[&str] = &[
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
    const PREFIX: &[&str] = &[
        "alpine",
        "ubuntu",
        "debian",
        "azurelinux",
        "mariner",
        "centos",
        "fedora",
        "opensuse",
    ];
    EXACT.contains(&token.as_str()) || PREFIX.iter().any(|p| token.starts_with(p))
}

/// The builds of a .NET Framework shared tag, from its first `-` token (§6).
fn framework_shared_builds(first_token: &str) -> Vec<u32> {
    match first_token {
        "4.8.1" => vec![20348, 26100],
        "4.8" | "latest" => vec![14393, 17763],
        _ => Vec::new(),
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
    fn os_text() {
        // §1.1: exactly `linux` or `windows`.
        assert_eq!("linux".parse::<Os>(), Ok(Os::Linux));
        assert_eq!("windows".parse::<Os>(), Ok(Os::Windows));
        for bad in ["Linux", "WINDOWS", " windows", "", "darwin"] {
            assert!(bad.parse::<Os>().is_err(), "{bad:?}");
        }
        assert_eq!(Os::Windows.to_string(), "windows");
        assert_eq!(
            serde_json::to_string(&Os::Linux).ok().as_deref(),
            Some("\"linux\"")
        );
        assert_eq!(
            serde_json::from_str::<Os>("\"windows\"").ok(),
            Some(Os::Windows)
        );
        assert!(serde_json::from_str::<Os>("\"Windows\"").is_err());
    }

    #[test]
    fn parse_references() {
        // Docker reference grammar and normalization.
        type Row = (
            &'static str,
            &'static str,
            &'static str,
            Option<&'static str>,
            Option<&'static str>,
        );
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let cases: Vec<Row> = vec![
            ("nginx", "docker.io", "library/nginx", None, None),
            (
                "nginx:1.27",
                "docker.io",
                "library/nginx",
                Some("1.27"),
                None,
            ),
            ("docker.io/nginx", "docker.io", "library/nginx", None, None),
            (
                "index.docker.io/library/nginx:1",
                "docker.io",
                "library/nginx",
                Some("1"),
                None,
            ),
            (
                "docker.io/library/nginx:1.27",
                "docker.io",
                "library/nginx",
                Some("1.27"),
                None,
            ),
            (
                "fluent/fluent-bit:3.1",
                "docker.io",
                "fluent/fluent-bit",
                Some("3.1"),
                None,
            ),
            ("localhost/app", "localhost", "app", None, None),
            ("localhost:5000/x", "localhost:5000", "x", None, None),
            (
                "localhost:5000/team/x:v1",
                "localhost:5000",
                "team/x",
                Some("v1"),
                None,
            ),
            (
                "localhost:5000",
                "docker.io",
                "library/localhost",
                Some("5000"),
                None,
            ),
            (
                "myregistry.io:443/a/b/c:tag_1.0-rc",
                "myregistry.io:443",
                "a/b/c",
                Some("tag_1.0-rc"),
                None,
            ),
            ("MyRegistry/app", "MyRegistry", "app", None, None),
            ("[::1]:5000/app:1", "[::1]:5000", "app", Some("1"), None),
            (
                "192.168.1.10:5000/app",
                "192.168.1.10:5000",
                "app",
                None,
                None,
            ),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                "mcr.microsoft.com",
                "windows/servercore",
                Some("ltsc2022"),
                None,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:20H2",
                "mcr.microsoft.com",
                "windows/nanoserver",
                Some("20H2"),
                None,
            ),
            (
                "a__b/c-----d/e.f_g",
                "docker.io",
                "a__b/c-----d/e.f_g",
                None,
                None,
            ),
        ];
        for (image, registry, repository, tag, dig) in cases {
            let got = parse_image_ref(image);
            let expected = ImageRef {
                registry: registry.into(),
                repository: repository.into(),
                tag: tag.map(Into::into),
                digest: dig.map(Into::into),
            };
            assert_eq!(got, Some(expected), "{image}");
        }
        let with_digest = format!("nginx@{digest}");
        let r = parse_image_ref(&with_digest);
        assert_eq!(
            r.as_ref().and_then(|r| r.digest.clone()).as_deref(),
            Some(digest)
        );
        assert_eq!(r.as_ref().and_then(|r| r.tag.clone()), None);
        assert_eq!(r.as_ref().and_then(|r| r.effective_tag()), None);
        let both = format!("localhost:5000/app:1.0@{digest}");
        let r = parse_image_ref(&both);
        assert_eq!(
            r.as_ref().map(|r| (r.tag.as_deref(), r.registry.as_str())),
            Some((Some("1.0"), "localhost:5000"))
        );
        assert_eq!(r.map(|r| r.to_string()), Some(both.clone()));
    }

    #[test]
    fn parse_rejects_invalid_references() {
        let long_tag = format!("app:{}", "a".repeat(129));
        let long_name = format!("a/{}", "b".repeat(254));
        let bad = [
            "",
            "NGINX",
            "docker.io/Library/nginx",
            "myregistry.io/App:1",
            "nginx:",
            "nginx:-1",
            "nginx:1:2",
            ":1",
            "/nginx",
            "nginx/",
            "a//b",
            "nginx@",
            "nginx@sha256:abc",
            "nginx@sha256:0123456789abcdef0123456789abcdeg",
            "nginx@:0123456789abcdef0123456789abcdef",
            "-nginx",
            "nginx-",
            "ngi..nx",
            "ngi___nx",
            "ngi nx",
            " nginx",
            "localhost:/app",
            "localhost:50a0/app",
            "my_registry.io/app",
            "-registry.io/app",
            "[zz]:5000/app",
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            long_tag.as_str(),
            long_name.as_str(),
        ];
        for image in bad {
            assert_eq!(parse_image_ref(image), None, "{image:?}");
        }
        assert!(parse_image_ref(&format!("app:{}", "a".repeat(128))).is_some());
    }

    #[test]
    fn glob() {
        let cases = [
            ("myregistry.io/win/*", "myregistry.io/win/app:1", true),
            ("myregistry.io/win/*", "myregistry.io/win/a/b/c", true),
            ("myregistry.io/win/*", "myregistry.io/linux/app", false),
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("*:ltsc2022", "x/y:ltsc2022", true),
            ("*:ltsc2022", "x/y:ltsc2019", false),
            ("*a*b*c", "xxaxxbxxbxc", true),
            ("*a*b*c", "xxaxxbxxbx", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "anything", true),
            ("é?", "éé", true),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(glob_match(pattern, text), expected, "{pattern} ~ {text}");
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
        // DESIGN "Images" (corpus mixed-os-containers, daemonset-tolerates-everything).
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
    fn image_rule_serde_and_validation() {
        let rule: Result<ImageRule, _> = serde_json::from_str(
            r#"{"pattern": "acme.io/*", "os": "windows", "builds": ["10.0.26100"]}"#,
        );
        let rule = rule.ok();
        assert_eq!(rule.as_ref().map(|r| r.build_numbers()), Some(vec![26100]));
        assert_eq!(rule.as_ref().map(|r| r.validate()), Some(Ok(())));
        let no_builds: Option<ImageRule> =
            serde_json::from_str(r#"{"pattern": "x", "os": "linux"}"#).ok();
        assert_eq!(no_builds.map(|r| r.builds.len()), Some(0));
        for bad in [
            r#"{"pattern": "x", "os": "Windows"}"#,
            r#"{"pattern": "x", "os": "windows", "build": []}"#,
            r#"{"os": "windows"}"#,
        ] {
            assert!(serde_json::from_str::<ImageRule>(bad).is_err(), "{bad}");
        }
        let rule = |pattern: &str, os: Os, builds: &[&str]| ImageRule {
            pattern: pattern.into(),
            os,
            builds: builds.iter().map(|b| b.to_string()).collect(),
        };
        assert!(rule(" ", Os::Windows, &[]).validate().is_err());
        assert!(rule("x", Os::Linux, &["10.0.20348"]).validate().is_err());
        let err = rule("x", Os::Windows, &["10.0.20348", "ltsc2022"]).validate();
        assert_eq!(
            err.map_err(|e| e.to_string()),
            Err("builds[1]: `ltsc2022` is not a Windows build such as 10.0.20348".to_string())
        );
        assert_eq!(
            rule("x", Os::Windows, &["junk"]).build_numbers(),
            Vec::<u32>::new()
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
