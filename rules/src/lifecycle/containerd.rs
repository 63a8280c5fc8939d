//! containerd's support calendar, keyed on a node's `status.nodeInfo.containerRuntimeVersion`
//! (`containerd://1.7.27`): each line's end of life, the last Kubernetes minor that supports containerd 1.x,
//! and releases known to be broken (`docs/reference/lifecycle.md`, "containerd", every row with its source).
//!
//! Like the Windows calendar ([`super::FACTS`]) this is data: [`CONTAINERD`] holds the page's rows, same id,
//! same order, and `rules/tests/containerd_doc.rs` fails when the two differ.
//!
//! ```
//! use winplace_rules::lifecycle::containerd::{ContainerdVersion, issues};
//! let v = ContainerdVersion::parse("containerd://2.3.1").unwrap();
//! // Known broken, whatever the date: a pause image by tag and digest cannot start pods.
//! assert_eq!(issues(v, None, None)[0].fact, "C10");
//! let v = ContainerdVersion::parse("containerd://1.7.27").unwrap();
//! let at = "1.37".parse().unwrap();
//! assert_eq!(issues(v, None, Some(at))[0].fact, "C7");
//! assert!(issues(v, None, Some("1.35".parse().unwrap())).is_empty());
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};

use super::date::{Date, FactDate, KubeMinor};
use super::{READ, Status};

/// Which containerd releases a row is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Versions {
    /// Every release of a major line (`1.x`).
    Major(u32),
    /// Every release of a minor line (`2.3`).
    Minor(u32, u32),
    /// Patch releases `from` to `to` of a minor line, both included (`2.3.0–2.3.3`).
    Patches {
        /// The major version.
        major: u32,
        /// The minor version.
        minor: u32,
        /// The first patch.
        from: u32,
        /// The last patch.
        to: u32,
    },
}

impl Versions {
    /// Whether `v` is one of them.
    pub fn contains(self, v: ContainerdVersion) -> bool {
        match self {
            Versions::Major(m) => v.major == m,
            Versions::Minor(m, n) => (v.major, v.minor) == (m, n),
            Versions::Patches {
                major,
                minor,
                from,
                to,
            } => (v.major, v.minor) == (major, minor) && (from..=to).contains(&v.patch),
        }
    }
}

impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Versions::Major(m) => write!(f, "{m}.x"),
            Versions::Minor(m, n) => write!(f, "{m}.{n}"),
            Versions::Patches {
                major,
                minor,
                from,
                to,
            } => write!(f, "{major}.{minor}.{from}–{major}.{minor}.{to}"),
        }
    }
}

/// What a containerd row says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuntimeKind {
    /// The line's end of life: no more patches from its date (a month-only date: from the month after).
    EndOfLife,
    /// The last Kubernetes minor the containerd project lists the line as supported for.
    LastKubernetes,
    /// The last Kubernetes minor whose kubelet still starts on the line.
    LastKubelet,
    /// Releases known to be broken.
    Broken,
}

impl RuntimeKind {
    /// The name in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::EndOfLife => "end-of-life",
            RuntimeKind::LastKubernetes => "last-kubernetes",
            RuntimeKind::LastKubelet => "last-kubelet",
            RuntimeKind::Broken => "broken",
        }
    }
}

/// One row of containerd's calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeFact {
    /// The row's id in `lifecycle.md` (`C1`).
    pub id: &'static str,
    /// The releases it is about.
    pub versions: Versions,
    /// What the row says, as the table's `what` column.
    pub what: &'static str,
    /// What kind of fact.
    pub kind: RuntimeKind,
    /// When an end of life takes effect.
    pub date: Option<FactDate>,
    /// The Kubernetes minor of a `last-kubernetes`/`last-kubelet` row.
    pub kubernetes: Option<KubeMinor>,
    /// Whether winplace applies it.
    pub status: Status,
    /// The keys of its sources in [`CONTAINERD_SOURCES`].
    pub sources: &'static [&'static str],
}

/// A source the containerd rows cite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSource {
    /// The key (`C-rel`).
    pub key: &'static str,
    /// Repository, path and commit, or URL: a part of the source's line in `lifecycle.md`.
    pub cite: &'static str,
}

const fn day(year: u16, month: u8, d: u8) -> FactDate {
    FactDate::Day(Date::ymd(year, month, d))
}

const fn month(year: u16, month: u8) -> FactDate {
    FactDate::Month { year, month }
}

use RuntimeKind::*;
use Status::*;

/// Every row of containerd's calendar, in the table's order.
pub const CONTAINERD: &[RuntimeFact] = &[
    RuntimeFact {
        id: "C1",
        versions: Versions::Minor(1, 7),
        what: "containerd 1.7 LTS: committers' support ended 2026-03-10; extended support \"through September 2026\" by two maintainers, for Kubernetes 1.30–1.32 on GKE",
        kind: EndOfLife,
        date: Some(month(2026, 9)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C2",
        versions: Versions::Minor(2, 0),
        what: "containerd 2.0: committers' support ended 2025-11-07; extended support \"through March 2027\" by two maintainers, for Kubernetes 1.33 on GKE",
        kind: EndOfLife,
        date: Some(month(2027, 3)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C3",
        versions: Versions::Minor(2, 1),
        what: "containerd 2.1 end of life",
        kind: EndOfLife,
        date: Some(day(2026, 7, 3)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C4",
        versions: Versions::Minor(2, 2),
        what: "containerd 2.2 end of life",
        kind: EndOfLife,
        date: Some(day(2026, 11, 6)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C5",
        versions: Versions::Minor(2, 3),
        what: "containerd 2.3 LTS end of life",
        kind: EndOfLife,
        date: Some(day(2028, 4, 30)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C6",
        versions: Versions::Minor(2, 4),
        what: "containerd 2.4 end of life (tentative: 2.4 not released at the snapshot)",
        kind: EndOfLife,
        date: Some(day(2027, 4, 26)),
        kubernetes: None,
        status: Current,
        sources: &["C-rel"],
    },
    RuntimeFact {
        id: "C7",
        versions: Versions::Major(1),
        what: "containerd's Kubernetes matrix lists a 1.x line up to Kubernetes 1.35 (1.35: \"2.2.0+, 2.1.5+, 1.7.28+\"; 1.36: \"2.3.0+, 2.2.0+\"); Kubernetes 1.34's release notes: \"The last Kubernetes release to offer this support will be v1.35\"",
        kind: LastKubernetes,
        date: None,
        kubernetes: Some(KubeMinor::new(1, 35)),
        status: Current,
        sources: &["C-rel", "K-1.34"],
    },
    RuntimeFact {
        id: "C8",
        versions: Versions::Major(1),
        what: "KEP-4033 of 2026-02: the kubelet's cgroup-driver fallback (what lets it start on a runtime without the RuntimeConfig call, as containerd 1.x) removed in Kubernetes 1.37",
        kind: LastKubelet,
        date: None,
        kubernetes: Some(KubeMinor::new(1, 36)),
        status: Superseded,
        sources: &["K-4033@676160a"],
    },
    RuntimeFact {
        id: "C9",
        versions: Versions::Major(1),
        what: "KEP-4033 of 2026-05 (current): the fallback removed in Kubernetes 1.38; the kubelet counts kubelet_cri_losing_support{version=\"1.38.0\"} on such a runtime",
        kind: LastKubelet,
        date: None,
        kubernetes: Some(KubeMinor::new(1, 37)),
        status: Current,
        sources: &["K-4033", "K-kubelet"],
    },
    RuntimeFact {
        id: "C10",
        versions: Versions::Patches {
            major: 2,
            minor: 3,
            from: 0,
            to: 3,
        },
        what: "a sandbox (pause) image configured by tag and digest (name:tag@sha256:…) or by a short name fails RunPodSandbox with \"failed to get sandbox image … not found\": no pod starts on the node; fixed in 2.3.4",
        kind: Broken,
        date: None,
        kubernetes: None,
        status: Current,
        sources: &["C-13529", "C-13759"],
    },
];

/// Every source the containerd rows cite.
pub const CONTAINERD_SOURCES: &[RuntimeSource] = &[
    RuntimeSource {
        key: "C-rel",
        cite: "containerd/containerd RELEASES.md @301026e5",
    },
    RuntimeSource {
        key: "K-1.34",
        cite: "https://kubernetes.io/blog/2025/08/27/kubernetes-v1-34-release/",
    },
    RuntimeSource {
        key: "K-4033@676160a",
        cite: "kubernetes/enhancements keps/sig-node/4033-group-driver-detection-over-cri/README.md @676160a7",
    },
    RuntimeSource {
        key: "K-4033",
        cite: "kubernetes/enhancements keps/sig-node/4033-group-driver-detection-over-cri/README.md @64765b4b",
    },
    RuntimeSource {
        key: "K-kubelet",
        cite: "kubernetes/kubernetes cmd/kubelet/app/server.go @001332b0",
    },
    RuntimeSource {
        key: "C-13529",
        cite: "https://github.com/containerd/containerd/issues/13529",
    },
    RuntimeSource {
        key: "C-13759",
        cite: "https://github.com/containerd/containerd/pull/13759",
    },
];

/// A containerd version read from `containerRuntimeVersion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContainerdVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch (0 when the version names none).
    pub patch: u32,
}

impl ContainerdVersion {
    /// The version in a node's `status.nodeInfo.containerRuntimeVersion` when the runtime is containerd
    /// (`containerd://1.7.27`, `containerd://v2.3.1`, `containerd://1.7.20-1+azure`); `None` for another
    /// runtime or a version that does not start with numbers.
    pub fn parse(runtime_version: &str) -> Option<ContainerdVersion> {
        let rest = runtime_version.trim().strip_prefix("containerd://")?;
        let rest = rest.strip_prefix('v').unwrap_or(rest);
        let core = rest.split(['-', '+', '~', ' ']).next()?;
        let mut parts = core.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 0,
        };
        Some(ContainerdVersion {
            major,
            minor,
            patch,
        })
    }
}

impl fmt::Display for ContainerdVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A containerd row that holds for a node's version, at the date and Kubernetes version asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeIssue {
    /// The row id (`C3`).
    pub fact: String,
    /// The kind of row.
    pub kind: RuntimeKind,
    /// The releases it is about (`2.1`, `1.x`, `2.3.0–2.3.3`).
    pub versions: String,
    /// The end of life (`2026-07-03`, `2026-09` for a month), for an `end-of-life` row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The last Kubernetes minor, for a `last-kubernetes`/`last-kubelet` row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kubernetes: Option<String>,
    /// What the row says.
    pub what: String,
    /// The row and its sources with the date read.
    pub source: String,
}

/// Where a source key points; `None` for an unknown key.
pub fn cite_runtime(key: &str) -> Option<&'static str> {
    CONTAINERD_SOURCES
        .iter()
        .find(|s| s.key == key)
        .map(|s| s.cite)
}

/// The first day a line is past an end-of-life date: the day itself, or the first day after the month
/// of a month-only date ("through September 2026").
pub fn past_end_from(date: FactDate) -> Date {
    match date {
        FactDate::Day(d) => d,
        FactDate::Month { year, month: 12 } => Date::ymd(year + 1, 1, 1),
        FactDate::Month { year, month } => Date::ymd(year, month + 1, 1),
    }
}

fn issue(f: &RuntimeFact) -> RuntimeIssue {
    let cites: Vec<String> = f
        .sources
        .iter()
        .map(|k| cite_runtime(k).unwrap_or(k).to_string())
        .collect();
    RuntimeIssue {
        fact: f.id.to_string(),
        kind: f.kind,
        versions: f.versions.to_string(),
        date: f.date.map(|d| d.to_string()),
        kubernetes: f.kubernetes.map(|k| k.to_string()),
        what: f.what.to_string(),
        source: format!("lifecycle.md {}: {} (read {READ})", f.id, cites.join("; ")),
    }
}

/// The current rows that hold for containerd `v`: a `broken` row always; an end of life when `on` is at
/// or past it; for Kubernetes `kubernetes`, the kubelet's last minor when it is past it, else the
/// containerd matrix's last minor when it is past that.
pub fn issues(
    v: ContainerdVersion,
    on: Option<Date>,
    kubernetes: Option<KubeMinor>,
) -> Vec<RuntimeIssue> {
    let mine = || {
        CONTAINERD
            .iter()
            .filter(move |f| f.status == Status::Current && f.versions.contains(v))
    };
    let mut out: Vec<RuntimeIssue> = mine().filter(|f| f.kind == Broken).map(issue).collect();
    if let Some(on) = on {
        out.extend(
            mine()
                .filter(|f| f.kind == EndOfLife)
                .filter(|f| f.date.is_some_and(|d| past_end_from(d) <= on))
                .map(issue),
        );
    }
    if let Some(k) = kubernetes {
        let past = |kind: RuntimeKind| {
            mine().find(|f| f.kind == kind && f.kubernetes.is_some_and(|last| k > last))
        };
        if let Some(f) = past(LastKubelet).or_else(|| past(LastKubernetes)) {
            out.push(issue(f));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str) -> ContainerdVersion {
        ContainerdVersion::parse(text).unwrap_or_else(|| panic!("{text}"))
    }

    #[test]
    fn runtime_versions_are_read_as_nodes_report_them() {
        // (containerRuntimeVersion, expected) — as kubelets report them (`containerd://<version>`).
        let rows = [
            ("containerd://1.7.27", Some((1, 7, 27))),
            ("containerd://v2.3.1", Some((2, 3, 1))),
            ("containerd://1.7.20-1+azure", Some((1, 7, 20))),
            ("containerd://2.0.4+azure-1", Some((2, 0, 4))),
            ("containerd://1.7", Some((1, 7, 0))),
            ("docker://20.10.7", None),
            ("cri-o://1.30.1", None),
            ("containerd://", None),
            ("", None),
        ];
        for (text, want) in rows {
            let got = ContainerdVersion::parse(text).map(|v| (v.major, v.minor, v.patch));
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn one_node_per_line() {
        // (containerRuntimeVersion, date, Kubernetes, expected facts) — lifecycle.md "containerd".
        type Row<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [&'a str]);
        let rows: &[Row] = &[
            // 1.7: supported through September 2026 (month only: from October on it is past).
            ("containerd://1.7.27", Some("2026-09-30"), None, &[]),
            ("containerd://1.7.27", Some("2026-10-01"), None, &["C1"]),
            // 1.x and Kubernetes: containerd's matrix ends at 1.35; the kubelet stops at 1.38.
            ("containerd://1.7.27", None, Some("1.35"), &[]),
            ("containerd://1.7.27", None, Some("1.36"), &["C7"]),
            ("containerd://1.7.27", None, Some("1.37"), &["C7"]),
            ("containerd://1.7.27", None, Some("1.38"), &["C9"]),
            ("containerd://1.6.39", None, Some("1.38"), &["C9"]),
            // 2.0: through March 2027.
            ("containerd://2.0.6", Some("2027-03-31"), None, &[]),
            (
                "containerd://2.0.6",
                Some("2027-04-01"),
                Some("1.40"),
                &["C2"],
            ),
            // 2.1: end of life on 2026-07-03.
            ("containerd://2.1.5", Some("2026-07-02"), None, &[]),
            ("containerd://2.1.5", Some("2026-07-03"), None, &["C3"]),
            // 2.2: 2026-11-06.
            ("containerd://2.2.5", Some("2026-11-06"), None, &["C4"]),
            // 2.3 LTS: 2028-04-30; 2.3.0 to 2.3.3 broken whatever the date, 2.3.4 not.
            ("containerd://2.3.0", None, None, &["C10"]),
            ("containerd://2.3.3", Some("2026-09-01"), None, &["C10"]),
            ("containerd://2.3.4", Some("2028-04-29"), None, &[]),
            ("containerd://2.3.4", Some("2028-04-30"), None, &["C5"]),
            // 2.4: 2027-04-26 (tentative).
            ("containerd://2.4.0", Some("2027-04-26"), None, &["C6"]),
            ("containerd://2.4.0", Some("2027-04-25"), Some("1.37"), &[]),
        ];
        for (text, on, k, want) in rows {
            let got: Vec<String> = issues(
                v(text),
                on.map(|d| d.parse().unwrap()),
                k.map(|k| k.parse().unwrap()),
            )
            .into_iter()
            .map(|i| i.fact)
            .collect();
            assert_eq!(got, *want, "{text} {on:?} {k:?}");
        }
        let c3 = &issues(
            v("containerd://2.1.5"),
            Some("2026-08-01".parse().unwrap()),
            None,
        )[0];
        assert_eq!(c3.date.as_deref(), Some("2026-07-03"));
        assert_eq!(
            c3.source,
            "lifecycle.md C3: containerd/containerd RELEASES.md @301026e5 (read 2026-11-25)"
        );
    }

    #[test]
    fn rows_are_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for f in CONTAINERD {
            for key in f.sources {
                assert!(
                    cite_runtime(key).is_some(),
                    "{}: unknown source {key}",
                    f.id
                );
            }
            match f.kind {
                EndOfLife => assert!(f.date.is_some() && f.kubernetes.is_none(), "{}", f.id),
                LastKubernetes | LastKubelet => {
                    assert!(f.kubernetes.is_some() && f.date.is_none(), "{}", f.id)
                }
                Broken => assert!(f.date.is_none() && f.kubernetes.is_none(), "{}", f.id),
            }
            if f.status == Status::Current {
                assert!(
                    seen.insert((f.versions.to_string(), f.kind.as_str())),
                    "two current rows for {} {}",
                    f.versions,
                    f.kind.as_str()
                );
            }
        }
    }
}
