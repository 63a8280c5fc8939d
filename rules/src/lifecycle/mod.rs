//! The retirement calendar: when each platform stops offering, patching or keeping the node images of a
//! Windows build, and which Kubernetes versions it offers them for (`docs/reference/lifecycle.md`, every
//! row with its source and the date it was read).
//!
//! Pure like the rest of the crate: there is no clock here. The date a question is asked for is always
//! handed in (`what-if --on`, the planner's date field, the CLI's today through the `lifecycle.date`
//! setting).
//!
//! ```
//! use winplace_rules::lifecycle::{self, LifecyclePlatform, LifecycleSettings};
//! let none = LifecycleSettings::default();
//! let on = "2026-03-02".parse().unwrap();
//! let r = lifecycle::retirement(&none, Some(LifecyclePlatform::Aks), "10.0.17763", Some(on), None)
//!     .expect("AKS retired Windows Server 2019 on 2026-03-01");
//! assert_eq!(r.date.as_deref(), Some("2026-03-01"));
//! assert_eq!(r.fact, "A1");
//! let before = "2026-02-28".parse().unwrap();
//! assert!(lifecycle::retirement(&none, Some(LifecyclePlatform::Aks), "10.0.17763", Some(before), None).is_none());
//! // Kubernetes 1.37 on AKS: Windows Server 2022's last minor is 1.36 (A12).
//! let k = "1.37".parse().unwrap();
//! let r = lifecycle::retirement(&none, Some(LifecyclePlatform::Aks), "10.0.20348", None, Some(k)).unwrap();
//! assert_eq!(r.fact, "A12");
//! ```

mod calendar;
pub mod containerd;
mod date;
mod node_platform;
mod settings;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use calendar::{FACTS, Fact, READ, SOURCES, Source, cite};
pub use date::{BadDate, Date, FactDate, KubeMinor};
pub use node_platform::{node_platform, platform_from_labels};
pub use settings::{LifecycleOverride, LifecycleSettings};

/// Whose calendar a fact is: a platform's, or Microsoft's own support dates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LifecyclePlatform {
    /// Azure Kubernetes Service.
    Aks,
    /// AKS enabled by Azure Arc (AKS on Azure Local).
    AksArc,
    /// Amazon EKS.
    Eks,
    /// Google Kubernetes Engine.
    Gke,
    /// OpenShift with the Windows Machine Config Operator.
    Openshift,
    /// Microsoft's support dates of Windows Server, which hold on every platform.
    Microsoft,
}

impl LifecyclePlatform {
    /// Every calendar.
    pub const ALL: [LifecyclePlatform; 6] = [
        LifecyclePlatform::Aks,
        LifecyclePlatform::AksArc,
        LifecyclePlatform::Eks,
        LifecyclePlatform::Gke,
        LifecyclePlatform::Openshift,
        LifecyclePlatform::Microsoft,
    ];

    /// The name in the table, settings and JSON (`aks-arc`).
    pub fn as_str(self) -> &'static str {
        match self {
            LifecyclePlatform::Aks => "aks",
            LifecyclePlatform::AksArc => "aks-arc",
            LifecyclePlatform::Eks => "eks",
            LifecyclePlatform::Gke => "gke",
            LifecyclePlatform::Openshift => "openshift",
            LifecyclePlatform::Microsoft => "microsoft",
        }
    }

    /// The name in messages (`AKS`).
    pub fn title(self) -> &'static str {
        match self {
            LifecyclePlatform::Aks => "AKS",
            LifecyclePlatform::AksArc => "AKS Arc",
            LifecyclePlatform::Eks => "EKS",
            LifecyclePlatform::Gke => "GKE",
            LifecyclePlatform::Openshift => "OpenShift",
            LifecyclePlatform::Microsoft => "Microsoft",
        }
    }

    /// The calendar of a platform preset (`--platform`, setting `platform`); `None` for `generic`,
    /// which has only Microsoft's.
    pub fn of_preset(p: crate::platform::Platform) -> Option<LifecyclePlatform> {
        use crate::platform::Platform;
        match p {
            Platform::Generic => None,
            Platform::Eks => Some(LifecyclePlatform::Eks),
            Platform::Aks => Some(LifecyclePlatform::Aks),
            Platform::Gke => Some(LifecyclePlatform::Gke),
            Platform::Openshift => Some(LifecyclePlatform::Openshift),
        }
    }
}

impl fmt::Display for LifecyclePlatform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for LifecyclePlatform {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LifecyclePlatform::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("unknown platform {s:?} (aks, aks-arc, eks, gke, openshift, microsoft)")
            })
    }
}

/// What a fact says (`lifecycle.md`, "Kinds").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Node images offered from the date.
    Available,
    /// No new images or patches, no new pools; existing pools unsupported but running.
    Retired,
    /// Images deleted: scaling, reimage and redeploy fail.
    Removed,
    /// The lowest Kubernetes minor with images of the build.
    FirstKubernetes,
    /// The highest Kubernetes minor with images of the build.
    LastKubernetes,
    /// Microsoft: end of mainstream support (security updates continue; not a retirement).
    MainstreamEnd,
    /// Microsoft: end of extended support, no more security updates.
    ExtendedEnd,
}

impl Kind {
    /// Whether a row of this kind is dated by the last day of support (Microsoft's mainstream and
    /// extended ends: supported through that day, `lifecycle.md` "Which day a date is") rather than by
    /// its first day in effect (every other kind).
    pub fn last_supported_day(self) -> bool {
        matches!(self, Kind::MainstreamEnd | Kind::ExtendedEnd)
    }

    /// Whether a fact of this kind dated `date` holds on `on`: from the day after a last supported
    /// day, from the first day in effect otherwise.
    ///
    /// ```
    /// use winplace_rules::lifecycle::Kind;
    /// let d = |t: &str| t.parse().unwrap();
    /// // Windows Server 2016's extended support ends on 2027-01-12 (lifecycle.md M2): still supported that day.
    /// assert!(!Kind::ExtendedEnd.holds(d("2027-01-12"), d("2027-01-12")));
    /// assert!(Kind::ExtendedEnd.holds(d("2027-01-12"), d("2027-01-13")));
    /// // AKS retires Windows Server 2019 "starting" 2026-03-01 (A1): in effect that day.
    /// assert!(Kind::Retired.holds(d("2026-03-01"), d("2026-03-01")));
    /// ```
    pub fn holds(self, date: Date, on: Date) -> bool {
        if self.last_supported_day() {
            date < on
        } else {
            date <= on
        }
    }

    /// The name in the table (`last-kubernetes`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Available => "available",
            Kind::Retired => "retired",
            Kind::Removed => "removed",
            Kind::FirstKubernetes => "first-kubernetes",
            Kind::LastKubernetes => "last-kubernetes",
            Kind::MainstreamEnd => "mainstream-end",
            Kind::ExtendedEnd => "extended-end",
        }
    }
}

/// Whether winplace applies a row (`lifecycle.md`, "status").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Applied: the newest source where sources disagree.
    Current,
    /// Replaced by a newer source; kept for the record.
    Superseded,
    /// Its publication could not be confirmed.
    Unconfirmed,
}

impl Status {
    /// The name in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Current => "current",
            Status::Superseded => "superseded",
            Status::Unconfirmed => "unconfirmed",
        }
    }
}

/// A build a platform no longer offers at the date (or Kubernetes version) asked about, and the fact
/// that says so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retirement {
    /// Whose calendar (Microsoft's end of extended support holds on every platform).
    pub platform: LifecyclePlatform,
    /// The Windows build (`10.0.17763`).
    pub build: String,
    /// The date it took effect (`2026-03-01`, or `2026-03` when the source names only the month); `None`
    /// for a Kubernetes-version fact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// For a Kubernetes-version fact: the first or last minor with images of the build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
    /// The kind of fact (`retired`, `removed`, `extended-end`, `last-kubernetes`, `first-kubernetes`).
    pub kind: Kind,
    /// What the fact says.
    pub what: String,
    /// Where it comes from: the calendar row and its sources with the date read, or the setting.
    pub source: String,
    /// The row id (`A1`), or the setting (`lifecycle.overrides[0]`).
    pub fact: String,
}

/// A row as applied: a current row of [`FACTS`], or a setting that replaces one.
#[derive(Debug, Clone, Copy)]
struct Applied<'a> {
    platform: LifecyclePlatform,
    build: &'a str,
    kind: Kind,
    date: Option<FactDate>,
    kubernetes: Option<KubeMinor>,
    origin: Origin<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Origin<'a> {
    Row(&'a Fact),
    Setting(usize),
}

/// The facts in force: the current rows, each replaced by an override of the same platform, build and
/// kind, and the overrides that replace no row.
fn applied(settings: &LifecycleSettings) -> impl Iterator<Item = Applied<'_>> {
    let overrides = settings.overrides.iter().enumerate().flat_map(|(i, o)| {
        o.facts().map(move |(kind, date, kubernetes)| Applied {
            platform: o.platform,
            build: o.build.as_str(),
            kind,
            date: date.map(FactDate::Day),
            kubernetes,
            origin: Origin::Setting(i),
        })
    });
    let overridden = |f: &Fact| {
        settings.overrides.iter().any(|o| {
            o.platform == f.platform && o.build == f.build && o.facts().any(|(k, ..)| k == f.kind)
        })
    };
    FACTS
        .iter()
        .filter(|f| f.status == Status::Current)
        .filter(move |f| !overridden(f))
        .map(|f| Applied {
            platform: f.platform,
            build: f.build,
            kind: f.kind,
            date: f.date,
            kubernetes: f.kubernetes,
            origin: Origin::Row(f),
        })
        .chain(overrides)
}

impl Applied<'_> {
    fn retirement(&self) -> Retirement {
        let (what, source, fact) = match self.origin {
            Origin::Row(f) => {
                let cites: Vec<String> = f
                    .sources
                    .iter()
                    .map(|k| cite(k).unwrap_or_else(|| k.to_string()))
                    .collect();
                (
                    f.what.to_string(),
                    format!(
                        "lifecycle.md {}: {} (read {})",
                        f.id,
                        cites.join("; "),
                        f.read
                    ),
                    f.id.to_string(),
                )
            }
            Origin::Setting(i) => {
                let setting = format!("lifecycle.overrides[{i}]");
                let what = match self.kind {
                    Kind::LastKubernetes => format!(
                        "last Kubernetes {} with images of {} (setting)",
                        self.kubernetes.map(|k| k.to_string()).unwrap_or_default(),
                        self.build
                    ),
                    kind => format!("{} {} (setting)", self.build, kind.as_str()),
                };
                (what, format!("settings: {setting}"), setting)
            }
        };
        Retirement {
            platform: self.platform,
            build: self.build.to_string(),
            date: self.date.map(|d| d.to_string()),
            kubernetes: self.kubernetes.map(|k| k.to_string()),
            kind: self.kind,
            what,
            source,
            fact,
        }
    }
}

/// Whether `platform`'s calendar (or Microsoft's, which holds everywhere) has retired `build` by `on`
/// (its images retired, removed, or past Microsoft's extended support), or does not offer it at
/// Kubernetes `kubernetes` (above its last minor, below its first). The earliest dated fact wins;
/// a Kubernetes-version fact is named when no dated one applies. `platform` `None`: Microsoft's only.
pub fn retirement(
    settings: &LifecycleSettings,
    platform: Option<LifecyclePlatform>,
    build: &str,
    on: Option<Date>,
    kubernetes: Option<KubeMinor>,
) -> Option<Retirement> {
    let mine = |a: &Applied<'_>| {
        a.build == build
            && (Some(a.platform) == platform || a.platform == LifecyclePlatform::Microsoft)
    };
    let dated = on.and_then(|on| {
        applied(settings)
            .filter(mine)
            .filter(|a| match a.platform {
                LifecyclePlatform::Microsoft => a.kind == Kind::ExtendedEnd,
                _ => matches!(a.kind, Kind::Retired | Kind::Removed),
            })
            .filter_map(|a| Some((a.date?.effective(), a)))
            .filter(|(effective, a)| a.kind.holds(*effective, on))
            .min_by_key(|(effective, _)| *effective)
            .map(|(_, a)| a)
    });
    let versioned = || {
        let k = kubernetes?;
        applied(settings)
            .filter(mine)
            .find(|a| match (a.kind, a.kubernetes) {
                (Kind::LastKubernetes, Some(last)) => k > last,
                (Kind::FirstKubernetes, Some(first)) => k < first,
                _ => false,
            })
    };
    dated.or_else(versioned).map(|a| a.retirement())
}

/// The date `platform` removes the node images of `build` (scaling and reimage fail from then), when its
/// calendar says.
pub fn removal(
    settings: &LifecycleSettings,
    platform: LifecyclePlatform,
    build: &str,
) -> Option<FactDate> {
    applied(settings)
        .find(|a| a.platform == platform && a.build == build && a.kind == Kind::Removed)
        .and_then(|a| a.date)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Date {
        text.parse().unwrap()
    }

    fn k(text: &str) -> KubeMinor {
        text.parse().unwrap()
    }

    #[test]
    fn one_current_row_per_platform_build_and_kind() {
        let mut seen = std::collections::BTreeSet::new();
        for f in FACTS.iter().filter(|f| f.status == Status::Current) {
            assert!(
                seen.insert((f.platform, f.build, f.kind.as_str(), f.preview)),
                "two current rows for {} {} {}",
                f.platform,
                f.build,
                f.kind.as_str()
            );
        }
        for f in FACTS {
            for key in f.sources {
                assert!(cite(key).is_some(), "{}: unknown source {key}", f.id);
            }
            assert!(
                crate::windows::builds::WindowsVersion::parse(f.build).is_some(),
                "{}",
                f.id
            );
        }
    }

    #[test]
    fn retirements_table() {
        use LifecyclePlatform::*;
        let none = LifecycleSettings::default();
        // (platform, build, on, kubernetes, expected fact) — lifecycle.md rows.
        type Row<'a> = (
            Option<LifecyclePlatform>,
            &'a str,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
        );
        let rows: &[Row] = &[
            (Some(Aks), "10.0.17763", Some("2026-02-28"), None, None),
            (
                Some(Aks),
                "10.0.17763",
                Some("2026-03-01"),
                None,
                Some("A1"),
            ),
            // Retired first, removed later: the earliest names it.
            (
                Some(Aks),
                "10.0.17763",
                Some("2027-05-01"),
                None,
                Some("A1"),
            ),
            (
                Some(Aks),
                "10.0.25398",
                Some("2026-05-15"),
                None,
                Some("A4"),
            ),
            // The superseded 2027-03-15 (A6, A8) does not apply; the current 2028-06-30 (A11) does.
            (Some(Aks), "10.0.20348", Some("2027-06-01"), None, None),
            (
                Some(Aks),
                "10.0.20348",
                Some("2028-06-30"),
                None,
                Some("A11"),
            ),
            // Kubernetes versions: 2019 ends at 1.32 (A2), 2022 at 1.36 (A12); 2025 from 1.32 (A17).
            (Some(Aks), "10.0.17763", None, Some("1.33"), Some("A2")),
            (Some(Aks), "10.0.17763", None, Some("1.32"), None),
            (Some(Aks), "10.0.20348", None, Some("1.36"), None),
            (Some(Aks), "10.0.20348", None, Some("1.37"), Some("A12")),
            (Some(Aks), "10.0.26100", None, Some("1.31"), Some("A17")),
            (
                Some(Aks),
                "10.0.26100",
                Some("2040-01-01"),
                Some("1.40"),
                Some("M10"),
            ),
            // EKS: 2025 from 1.35 (E2); no EKS end date for 2019, Microsoft's extended end holds (M4).
            (Some(Eks), "10.0.26100", None, Some("1.34"), Some("E2")),
            (Some(Eks), "10.0.17763", Some("2028-12-31"), None, None),
            (Some(Eks), "10.0.17763", Some("2029-01-09"), None, None),
            (
                Some(Eks),
                "10.0.17763",
                Some("2029-01-10"),
                None,
                Some("M4"),
            ),
            // AKS Arc: the month-only R1 counts from 2026-03-01; R2 (superseded) never applies.
            (
                Some(AksArc),
                "10.0.17763",
                Some("2026-03-01"),
                None,
                Some("R1"),
            ),
            (Some(AksArc), "10.0.20348", Some("2026-11-01"), None, None),
            (
                Some(AksArc),
                "10.0.20348",
                Some("2027-03-01"),
                None,
                Some("R6"),
            ),
            // GKE's SAC images: "After August 9, 2022, you can no longer" create SAC pools (G1, dated
            // 2022-08-10, its first day in effect); on 2022-08-09 they are still offered. From 2022-08-10
            // Microsoft's end of servicing of 20H2 (M11, last day 2022-08-09) holds too and is the earlier.
            (Some(Gke), "10.0.19042", Some("2022-08-09"), None, None),
            (
                Some(Gke),
                "10.0.19042",
                Some("2022-08-10"),
                None,
                Some("M11"),
            ),
            // Microsoft's mainstream end is no retirement; generic nodes have only Microsoft's calendar.
            (None, "10.0.20348", Some("2027-01-01"), None, None),
            // Microsoft's end dates are the last supported day (lifecycle.md "Which day a date is"):
            // Windows Server 2016 is supported through 2027-01-12 (M2, the product page's date).
            (None, "10.0.14393", Some("2027-01-11"), None, None),
            (None, "10.0.14393", Some("2027-01-12"), None, None),
            (None, "10.0.14393", Some("2027-01-13"), None, Some("M2")),
            (None, "10.0.17763", None, Some("1.40"), None),
            // OpenShift's unconfirmed last version for 2019 (O2) is not applied.
            (Some(Openshift), "10.0.17763", None, Some("1.35"), None),
        ];
        for (platform, build, on, kube, want) in rows {
            let got = retirement(&none, *platform, build, on.map(d), kube.map(k));
            assert_eq!(
                got.as_ref().map(|r| r.fact.as_str()),
                *want,
                "{platform:?} {build} {on:?} {kube:?}: {got:?}"
            );
        }
        let a1 = retirement(&none, Some(Aks), "10.0.17763", Some(d("2026-03-02")), None).unwrap();
        assert_eq!(a1.date.as_deref(), Some("2026-03-01"));
        assert!(
            a1.source.starts_with("lifecycle.md A1: MicrosoftDocs/azure-aks-docs articles/aks/includes/windows-server-2019-retirement.md @61b373f2; Azure/AKS CHANGELOG.md @a8a2f81d, release notes of 2026-05-29"),
            "{}",
            a1.source
        );
        assert!(a1.source.ends_with("(read 2026-11-25)"), "{}", a1.source);
        let r1 = retirement(
            &none,
            Some(AksArc),
            "10.0.17763",
            Some(d("2026-03-05")),
            None,
        )
        .unwrap();
        assert_eq!(r1.date.as_deref(), Some("2026-03"));
        assert_eq!(
            removal(&none, Aks, "10.0.17763")
                .map(|d| d.to_string())
                .as_deref(),
            Some("2027-04-01")
        );
    }

    #[test]
    fn settings_override_a_row() {
        use LifecyclePlatform::*;
        // A team that plans with the 2024 claim (A6) instead of the current 2028-06-30 (A11).
        let s: LifecycleSettings = serde_json::from_value(serde_json::json!({
            "overrides": [
                {"platform": "aks", "build": "10.0.20348", "retired": "2027-03-15"},
                {"platform": "eks", "build": "10.0.17763", "lastKubernetes": "1.34"}
            ]
        }))
        .unwrap();
        let r = retirement(&s, Some(Aks), "10.0.20348", Some(d("2027-03-15")), None).unwrap();
        assert_eq!(
            (r.fact.as_str(), r.date.as_deref()),
            ("lifecycle.overrides[0]", Some("2027-03-15"))
        );
        assert_eq!(r.source, "settings: lifecycle.overrides[0]");
        // The override replaces A11: the row's later date is not applied beside it.
        assert!(retirement(&s, Some(Aks), "10.0.20348", Some(d("2027-03-14")), None).is_none());
        // Other kinds of the same build stay (A13 removed 2029-06-30).
        assert_eq!(
            removal(&s, Aks, "10.0.20348")
                .map(|d| d.to_string())
                .as_deref(),
            Some("2029-06-30")
        );
        let r = retirement(&s, Some(Eks), "10.0.17763", None, Some(k("1.35"))).unwrap();
        assert_eq!(r.fact, "lifecycle.overrides[1]");
        assert!(retirement(&s, Some(Eks), "10.0.17763", None, Some(k("1.34"))).is_none());
    }
}
