//! Windows version numbers and the table of Windows builds (kubernetes-windows-rules.md §5.1, §5.4, §6).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A Windows version `major.minor.build[.revision]` as node labels, kernelVersion and image os.version carry it.
///
/// Ordering compares major, minor, build, then revision (`None` sorts before any revision).
///
/// ```
/// use winplace_rules::windows::WindowsVersion;
/// let v = WindowsVersion::parse("10.0.20348.2762").unwrap();
/// assert_eq!(v.build, 20348);
/// assert_eq!(v.label(), "10.0.20348");
/// assert_eq!(WindowsVersion::parse("10.0.20348 "), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WindowsVersion {
    /// Major version (10 for every supported Windows).
    pub major: u32,
    /// Minor version (0 for every supported Windows).
    pub minor: u32,
    /// Build number, e.g. 20348 for Windows Server 2022.
    pub build: u32,
    /// Update build revision (UBR), present in kernelVersion and image os.version, absent in the node label.
    pub revision: Option<u32>,
}

impl WindowsVersion {
    /// Parses `major.minor.build` or `major.minor.build.revision`.
    ///
    /// Every part must be plain ASCII digits without a sign, spaces or leading zeros (`0` itself is fine), so
    /// that [`WindowsVersion::label`] and `Display` give back exactly the text that was parsed.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split('.');
        let major = parse_part(parts.next()?)?;
        let minor = parse_part(parts.next()?)?;
        let build = parse_part(parts.next()?)?;
        let revision = match parts.next() {
            Some(part) => Some(parse_part(part)?),
            None => None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(WindowsVersion {
            major,
            minor,
            build,
            revision,
        })
    }

    /// Reads `status.nodeInfo.kernelVersion`: the current `10.0.17763.1879` form, or the legacy
    /// `10.0 14393 (14393.1715.amd64fre.rs1_release_inmarket.170906-1810)` form of old Docker-era nodes (§5.4).
    pub fn from_kernel_version(text: &str) -> Option<Self> {
        if let Some(version) = Self::parse(text) {
            return Some(version);
        }
        // Legacy: "<major>.<minor> <build> (<build>.<revision>.<arch>...)".
        let (head, rest) = text.split_once(' ')?;
        let (major, minor) = head.split_once('.')?;
        let (build, detail) = rest.split_once(' ')?;
        let build = parse_part(build)?;
        let detail = detail.strip_prefix('(')?;
        let mut fields = detail.split('.');
        let revision = match (fields.next(), fields.next()) {
            (Some(b), Some(rev)) if parse_part(b) == Some(build) => parse_part(rev),
            _ => None,
        };
        Some(WindowsVersion {
            major: parse_part(major)?,
            minor: parse_part(minor)?,
            build,
            revision,
        })
    }

    /// The version `10.0.<build>` without revision.
    pub fn new(build: u32) -> Self {
        WindowsVersion {
            major: 10,
            minor: 0,
            build,
            revision: None,
        }
    }

    /// The `node.kubernetes.io/windows-build` form `major.minor.build` (no revision), e.g. `10.0.20348`.
    pub fn label(&self) -> String {
        format!("{}.{}.{}", self.major, self.minor, self.build)
    }
}

/// One decimal part of a version: digits only, no leading zeros, fits in `u32`.
fn parse_part(part: &str) -> Option<u32> {
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if part.len() > 1 && part.starts_with('0') {
        return None;
    }
    part.parse().ok()
}

impl fmt::Display for WindowsVersion {
    /// `major.minor.build` or `major.minor.build.revision`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.build)?;
        if let Some(revision) = self.revision {
            write!(f, ".{revision}")?;
        }
        Ok(())
    }
}

/// The error of parsing a [`WindowsVersion`] from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidWindowsVersion(pub String);

impl fmt::Display for InvalidWindowsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a Windows version such as 10.0.20348 or 10.0.20348.2762",
            self.0
        )
    }
}

impl std::error::Error for InvalidWindowsVersion {}

impl FromStr for WindowsVersion {
    type Err = InvalidWindowsVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| InvalidWindowsVersion(s.to_string()))
    }
}

/// The servicing channel of a Windows release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Channel {
    /// Long-Term Servicing Channel (Windows Server 2016, 2019, 2022, 2025).
    Ltsc,
    /// Semi-Annual Channel (Windows Server 1709 … 20H2), all out of support.
    SemiAnnual,
    /// Annual Channel for containers hosts (Windows Server 23H2).
    AnnualChannel,
    /// A Windows 10/11 client release: no container base images of its own.
    Client,
}

/// One Windows build of the reference table (§5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BuildInfo {
    /// The build number, e.g. 20348.
    pub build: u32,
    /// The release's name, e.g. `Windows Server 2022`.
    pub name: &'static str,
    /// The servicing channel.
    pub channel: Channel,
    /// The container base-image tags built for it, e.g. `["ltsc2022"]` (empty for client builds).
    pub tags: &'static [&'static str],
}

/// Every build of the reference table (§5.1), ascending, including client builds.
///
/// 22631 (Windows 11 23H2) and 26200 (Windows 11 25H2) come from third-party sources only (§9).
pub const BUILDS: &[BuildInfo] = &[
    BuildInfo {
        build: 14393,
        name: "Windows Server 2016",
        channel: Channel::Ltsc,
        tags: &["ltsc2016", "1607"],
    },
    BuildInfo {
        build: 15063,
        name: "Windows 10 1703",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 16299,
        name: "Windows Server 1709",
        channel: Channel::SemiAnnual,
        tags: &["1709"],
    },
    BuildInfo {
        build: 17134,
        name: "Windows Server 1803",
        channel: Channel::SemiAnnual,
        tags: &["1803"],
    },
    BuildInfo {
        build: 17763,
        name: "Windows Server 2019",
        channel: Channel::Ltsc,
        tags: &["ltsc2019", "1809"],
    },
    BuildInfo {
        build: 18362,
        name: "Windows Server 1903",
        channel: Channel::SemiAnnual,
        tags: &["1903"],
    },
    BuildInfo {
        build: 18363,
        name: "Windows Server 1909",
        channel: Channel::SemiAnnual,
        tags: &["1909"],
    },
    BuildInfo {
        build: 19041,
        name: "Windows Server 2004",
        channel: Channel::SemiAnnual,
        tags: &["2004"],
    },
    BuildInfo {
        build: 19042,
        name: "Windows Server 20H2",
        channel: Channel::SemiAnnual,
        // .NET images used `2009` before the release was renamed `20H2`.
        tags: &["20H2", "2009"],
    },
    BuildInfo {
        build: 19043,
        name: "Windows Server 21H1",
        channel: Channel::SemiAnnual,
        tags: &[],
    },
    BuildInfo {
        build: 19044,
        name: "Windows 10 21H2",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 19045,
        name: "Windows 10 22H2",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 20348,
        name: "Windows Server 2022",
        channel: Channel::Ltsc,
        tags: &["ltsc2022"],
    },
    BuildInfo {
        build: 22000,
        name: "Windows 11 21H2",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 22621,
        name: "Windows 11 22H2",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 22631,
        name: "Windows 11 23H2",
        channel: Channel::Client,
        tags: &[],
    },
    BuildInfo {
        build: 25398,
        name: "Windows Server 23H2",
        channel: Channel::AnnualChannel,
        tags: &[],
    },
    BuildInfo {
        build: 26100,
        name: "Windows Server 2025",
        channel: Channel::Ltsc,
        tags: &["ltsc2025"],
    },
    BuildInfo {
        build: 26200,
        name: "Windows 11 25H2",
        channel: Channel::Client,
        tags: &[],
    },
];

/// The Windows Server LTSC builds: 2016, 2019, 2022, 2025.
pub const LTSC_BUILDS: &[u32] = &[14393, 17763, 20348, 26100];

/// The table row of `build`, if the build is known.
pub fn build_info(build: u32) -> Option<&'static BuildInfo> {
    BUILDS.iter().find(|info| info.build == build)
}

/// A human name for a build: `Windows Server 2022 (10.0.20348)`, or `10.0.12345` when unknown.
pub fn build_display(build: u32) -> String {
    let label = WindowsVersion::new(build).label();
    match build_info(build) {
        Some(info) => format!("{} ({label})", info.name),
        None => label,
    }
}

/// The build a Microsoft base-image tag names: `ltsc2019` and `1809` give 17763, `20H2` and `2009` give 19042.
///
/// The tag must be exactly one base tag (compare [`BuildInfo::tags`]); letter case is ignored (`20h2`).
/// Longer tags such as `ltsc2022-amd64` are taken apart by the image classifier, not here.
pub fn build_for_tag(tag: &str) -> Option<u32> {
    BUILDS
        .iter()
        .find(|info| info.tags.iter().any(|t| t.eq_ignore_ascii_case(tag)))
        .map(|info| info.build)
}

/// The same image with the tag of `build`'s Windows Server release, when its tag names another release
/// (`…:4.8-windowsservercore-ltsc2019` → `…:4.8-windowsservercore-ltsc2022` for 20348): what the plans'
/// and the explained errors' fixes suggest. Whether that tag is published is for the registry to say.
///
/// ```
/// use winplace_rules::windows::builds::retag_for_build;
/// assert_eq!(
///     retag_for_build("mcr.microsoft.com/windows/servercore:ltsc2019", 20348).as_deref(),
///     Some("mcr.microsoft.com/windows/servercore:ltsc2022")
/// );
/// assert_eq!(retag_for_build("nginx:1.27", 20348), None);
/// ```
pub fn retag_for_build(image: &str, build: u32) -> Option<String> {
    let new_tag = build_info(build)?
        .tags
        .iter()
        .find(|t| t.starts_with("ltsc"))?;
    let (repo, tag) = image.rsplit_once(':')?;
    if repo.contains('@') || tag.contains('/') {
        return None;
    }
    let lower = tag.to_ascii_lowercase();
    let old = BUILDS
        .iter()
        .flat_map(|i| i.tags.iter())
        .filter(|t| t.starts_with("ltsc") || t.len() == 4)
        .find(|t| lower.contains(&t.to_ascii_lowercase()))?;
    if old.eq_ignore_ascii_case(new_tag) {
        return None;
    }
    let at = lower.find(&old.to_ascii_lowercase())?;
    Some(format!(
        "{repo}:{}{new_tag}{}",
        &tag[..at],
        &tag[at + old.len()..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_versions() {
        // §5.4: the label has three parts, kernelVersion and os.version four.
        type Parts = (u32, u32, u32, Option<u32>);
        let cases: &[(&str, Parts)] = &[
            ("10.0.20348", (10, 0, 20348, None)),
            ("10.0.20348.2762", (10, 0, 20348, Some(2762))),
            ("10.0.17763.0", (10, 0, 17763, Some(0))),
            ("6.3.9600", (6, 3, 9600, None)),
            ("10.0.4294967295", (10, 0, u32::MAX, None)),
        ];
        for (text, (major, minor, build, revision)) in cases {
            let v = WindowsVersion::parse(text);
            assert_eq!(
                v,
                Some(WindowsVersion {
                    major: *major,
                    minor: *minor,
                    build: *build,
                    revision: *revision
                }),
                "{text}"
            );
            let v = v.unwrap_or(WindowsVersion::new(0));
            assert_eq!(v.to_string(), *text, "round trip of {text}");
            assert_eq!(text.parse::<WindowsVersion>().ok(), Some(v));
        }
    }

    #[test]
    fn parse_rejects_junk() {
        let cases = [
            "",
            "10",
            "10.0",
            "10.0.",
            ".10.0.20348",
            "10..20348",
            "10.0.20348.",
            "10.0.20348.1.2",
            "+10.0.20348",
            "10.0.+20348",
            "10.0.-20348",
            " 10.0.20348",
            "10.0.20348 ",
            "10.0. 20348",
            "10.0.2O348",
            "10.0.020348",
            "10.0.20348.01",
            "10.0.4294967296",
            "v10.0.20348",
            "ltsc2022",
            "１0.0.20348",
        ];
        for text in cases {
            assert_eq!(WindowsVersion::parse(text), None, "{text:?}");
            assert!(text.parse::<WindowsVersion>().is_err(), "{text:?}");
        }
    }

    #[test]
    fn kernel_version_forms() {
        // §5.4: current and legacy kernelVersion formats.
        type BuildRevision = Option<(u32, Option<u32>)>;
        let cases: &[(&str, BuildRevision)] = &[
            ("10.0.17763.1879", Some((17763, Some(1879)))),
            ("10.0.20348", Some((20348, None))),
            (
                "10.0 14393 (14393.1715.amd64fre.rs1_release_inmarket.170906-1810)",
                Some((14393, Some(1715))),
            ),
            ("10.0 14393 (junk)", Some((14393, None))),
            ("5.15.0-1057-azure", None),
            ("10.0 x (14393.1)", None),
            ("", None),
        ];
        for (text, expected) in cases {
            let got = WindowsVersion::from_kernel_version(text).map(|v| (v.build, v.revision));
            assert_eq!(got, *expected, "{text}");
        }
    }

    #[test]
    fn label_and_new() {
        assert_eq!(WindowsVersion::new(26100).label(), "10.0.26100");
        let full = WindowsVersion::parse("10.0.26100.1742");
        assert_eq!(full.map(|v| v.label()), Some("10.0.26100".to_string()));
        assert!(WindowsVersion::new(17763) < WindowsVersion::new(20348));
        assert!(WindowsVersion::parse("10.0.20348.1") > Some(WindowsVersion::new(20348)));
    }

    #[test]
    fn tags_to_builds() {
        // §5.1 and §6: every base-image tag.
        let cases = [
            ("ltsc2016", 14393),
            ("1607", 14393),
            ("1709", 16299),
            ("1803", 17134),
            ("1809", 17763),
            ("ltsc2019", 17763),
            ("1903", 18362),
            ("1909", 18363),
            ("2004", 19041),
            ("20H2", 19042),
            ("20h2", 19042),
            ("2009", 19042),
            ("ltsc2022", 20348),
            ("ltsc2025", 26100),
            ("LTSC2022", 20348),
        ];
        for (tag, build) in cases {
            assert_eq!(build_for_tag(tag), Some(build), "{tag}");
        }
        for tag in [
            "",
            "latest",
            "ltsc2020",
            "ltsc2022-amd64",
            "21H2",
            "23H2",
            "10.0.20348",
        ] {
            assert_eq!(build_for_tag(tag), None, "{tag}");
        }
    }

    #[test]
    fn table_rows() {
        // §5.1: every row, its name and channel.
        let cases = [
            (14393, "Windows Server 2016", Channel::Ltsc),
            (15063, "Windows 10 1703", Channel::Client),
            (16299, "Windows Server 1709", Channel::SemiAnnual),
            (17134, "Windows Server 1803", Channel::SemiAnnual),
            (17763, "Windows Server 2019", Channel::Ltsc),
            (18362, "Windows Server 1903", Channel::SemiAnnual),
            (18363, "Windows Server 1909", Channel::SemiAnnual),
            (19041, "Windows Server 2004", Channel::SemiAnnual),
            (19042, "Windows Server 20H2", Channel::SemiAnnual),
            (19043, "Windows Server 21H1", Channel::SemiAnnual),
            (19044, "Windows 10 21H2", Channel::Client),
            (19045, "Windows 10 22H2", Channel::Client),
            (20348, "Windows Server 2022", Channel::Ltsc),
            (22000, "Windows 11 21H2", Channel::Client),
            (22621, "Windows 11 22H2", Channel::Client),
            (22631, "Windows 11 23H2", Channel::Client),
            (25398, "Windows Server 23H2", Channel::AnnualChannel),
            (26100, "Windows Server 2025", Channel::Ltsc),
            (26200, "Windows 11 25H2", Channel::Client),
        ];
        assert_eq!(BUILDS.len(), cases.len());
        for (build, name, channel) in cases {
            let info = build_info(build);
            assert_eq!(info.map(|i| (i.name, i.channel)), Some((name, channel)));
        }
        assert!(BUILDS.windows(2).all(|w| w[0].build < w[1].build));
        let ltsc: Vec<u32> = BUILDS
            .iter()
            .filter(|i| i.channel == Channel::Ltsc)
            .map(|i| i.build)
            .collect();
        assert_eq!(ltsc, LTSC_BUILDS);
        // Every tag maps back to its own row.
        for info in BUILDS {
            for tag in info.tags {
                assert_eq!(build_for_tag(tag), Some(info.build), "{tag}");
            }
        }
    }

    #[test]
    fn display() {
        assert_eq!(build_display(20348), "Windows Server 2022 (10.0.20348)");
        assert_eq!(build_display(26100), "Windows Server 2025 (10.0.26100)");
        assert_eq!(build_display(12345), "10.0.12345");
        assert_eq!(build_info(12345), None);
    }
}
