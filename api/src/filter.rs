//! The filters of `GET /api/nodes` and `GET /api/workloads`, applied the same way by the server (on the
//! query string) and by the dashboard (on the rows it holds, so that its filters answer instantly).

use serde::{Deserialize, Serialize};
use winplace_rules::Severity;
use winplace_rules::audit::{NodeOs, NodeReport, PlacementState, WorkloadReport};
use winplace_rules::catalog;
use winplace_rules::placement::PodOs;

/// A filter that cannot be applied: it names the parameter and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// `rule=` names no rule of the catalogue.
    #[error("unknown rule {0:?} (GET /api/rules lists them)")]
    UnknownRule(String),
    /// `limit=` is 0 or above [`MAX_PAGE`].
    #[error("limit: {0} is outside 1..={max}", max = MAX_PAGE)]
    Limit(usize),
}

/// Workloads answered when the query sets no `limit`.
pub const DEFAULT_PAGE: usize = 200;

/// Most workloads one answer carries (`limit` above it is a 400).
pub const MAX_PAGE: usize = 1000;

/// Which placement states a workload filter keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StateFilter {
    /// Nothing wrong.
    Fine,
    /// Could go wrong.
    AtRisk,
    /// Wrong now.
    Misplaced,
    /// At risk or misplaced: what the dashboard shows by default.
    Problems,
    /// Every state.
    All,
}

impl StateFilter {
    /// Whether a workload in `state` passes.
    pub fn accepts(self, state: PlacementState) -> bool {
        match self {
            StateFilter::Fine => state == PlacementState::Fine,
            StateFilter::AtRisk => state == PlacementState::AtRisk,
            StateFilter::Misplaced => state == PlacementState::Misplaced,
            StateFilter::Problems => state != PlacementState::Fine,
            StateFilter::All => true,
        }
    }

    /// The query value (`at-risk`).
    pub fn as_str(self) -> &'static str {
        match self {
            StateFilter::Fine => "fine",
            StateFilter::AtRisk => "at-risk",
            StateFilter::Misplaced => "misplaced",
            StateFilter::Problems => "problems",
            StateFilter::All => "all",
        }
    }
}

/// Filters of `GET /api/workloads`, every filter given must match, and the page of the matching rows
/// (in [`worst_first`](crate::worst_first) order) to answer.
///
/// ```
/// use winplace_api::{StateFilter, WorkloadFilter};
/// let filter = WorkloadFilter { namespace: Some("shop".into()), state: Some(StateFilter::Problems), ..Default::default() };
/// assert!(filter.validate().is_ok());
/// assert_eq!(filter.query_pairs(), [("namespace", "shop".to_string()), ("state", "problems".to_string())]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFilter {
    /// Namespace of the owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Text the owner's name contains, whatever its case (the workloads page's search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A rule id: workloads with a finding of this rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Workloads with a finding of this severity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// The OS the workload needs: `windows`, `linux`, `any` or `conflict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<PodOs>,
    /// Placement states to keep (all when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateFilter>,
    /// Matching rows to skip (0 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<usize>,
    /// Matching rows to answer at most, 1 to [`MAX_PAGE`] ([`DEFAULT_PAGE`] when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

impl WorkloadFilter {
    /// Checks what serde cannot: that `rule` names a rule of the catalogue and `limit` is in range.
    pub fn validate(&self) -> Result<(), FilterError> {
        match (&self.rule, self.limit) {
            (Some(rule), _) if catalog::rule(rule).is_none() => {
                Err(FilterError::UnknownRule(rule.clone()))
            }
            (_, Some(limit)) if limit == 0 || limit > MAX_PAGE => Err(FilterError::Limit(limit)),
            _ => Ok(()),
        }
    }

    /// The page asked for: (offset, limit), defaults filled in.
    ///
    /// ```
    /// use winplace_api::{DEFAULT_PAGE, WorkloadFilter};
    /// assert_eq!(WorkloadFilter::default().page(), (0, DEFAULT_PAGE));
    /// let second = WorkloadFilter { offset: Some(50), limit: Some(50), ..Default::default() };
    /// assert_eq!(second.page(), (50, 50));
    /// ```
    pub fn page(&self) -> (usize, usize) {
        (self.offset.unwrap_or(0), self.limit.unwrap_or(DEFAULT_PAGE))
    }

    /// The same filter without its page: what decides which rows match.
    pub fn without_page(&self) -> WorkloadFilter {
        WorkloadFilter {
            offset: None,
            limit: None,
            ..self.clone()
        }
    }

    /// Whether `w` passes every filter.
    pub fn accepts(&self, w: &WorkloadReport) -> bool {
        self.state.is_none_or(|s| s.accepts(w.state))
            && self
                .namespace
                .as_ref()
                .is_none_or(|ns| w.owner.namespace.as_ref() == Some(ns))
            && self
                .name
                .as_deref()
                .is_none_or(|text| name_contains(&w.owner.name, text))
            && self
                .rule
                .as_ref()
                .is_none_or(|r| w.findings.iter().any(|f| &f.rule == r))
            && self
                .severity
                .is_none_or(|s| w.findings.iter().any(|f| f.severity == s))
            && self.os.is_none_or(|os| w.os == os)
    }

    /// The filters that are set, as query parameters in a fixed order (not yet percent-encoded).
    pub fn query_pairs(&self) -> Vec<(&'static str, String)> {
        [
            ("namespace", self.namespace.clone()),
            ("name", self.name.clone()),
            ("rule", self.rule.clone()),
            ("severity", self.severity.map(|s| s.as_str().to_string())),
            ("os", self.os.map(|os| os.as_str().to_string())),
            ("state", self.state.map(|s| s.as_str().to_string())),
            ("offset", self.offset.map(|n| n.to_string())),
            ("limit", self.limit.map(|n| n.to_string())),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
    }
}

/// Whether `name` contains `text`, ignoring case (an empty text is in every name).
///
/// ```
/// assert!(winplace_api::name_contains("Billing-API", "billing"));
/// assert!(!winplace_api::name_contains("billing-api", "ledger"));
/// ```
pub fn name_contains(name: &str, text: &str) -> bool {
    name.to_lowercase().contains(&text.to_lowercase())
}

/// Filters of `GET /api/nodes`; every filter given must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeFilter {
    /// `windows`, `linux` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<NodeOs>,
    /// A Windows build (`10.0.20348`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
}

impl NodeFilter {
    /// Whether `n` passes every filter.
    pub fn accepts(&self, n: &NodeReport) -> bool {
        self.os.is_none_or(|os| n.os == os) && (self.build.is_none() || n.build == self.build)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::{Finding, ObjectRef};

    fn workload(
        ns: &str,
        os: PodOs,
        state: PlacementState,
        rules: &[(&str, Severity)],
    ) -> WorkloadReport {
        WorkloadReport {
            owner: ObjectRef {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                namespace: Some(ns.into()),
                name: format!("{ns}-{os}"),
            },
            os,
            state,
            pods: vec![],
            findings: rules
                .iter()
                .map(|(rule, severity)| {
                    Finding::new(rule, *severity, ObjectRef::new("v1", "Pod", Some(ns), "p"))
                })
                .map(std::sync::Arc::new)
                .collect(),
            images: vec![],
            incidents: vec![],
        }
    }

    #[test]
    fn workload_filters_combine() {
        use PlacementState::*;
        let bad = workload(
            "shop",
            PodOs::Windows,
            Misplaced,
            &[("pod-on-wrong-os", Severity::Error)],
        );
        let risky = workload(
            "ops",
            PodOs::Linux,
            AtRisk,
            &[("linux-pod-without-os-selector", Severity::Warning)],
        );
        let fine = workload("shop", PodOs::Linux, Fine, &[]);
        let query = |q: &str| -> WorkloadFilter {
            let pairs: serde_json::Map<String, serde_json::Value> = q
                .split('&')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap();
                    (k.to_string(), serde_json::Value::String(v.to_string()))
                })
                .collect();
            serde_json::from_value(serde_json::Value::Object(pairs)).unwrap()
        };
        let cases: [(&str, [bool; 3]); 10] = [
            ("", [true, true, true]),
            ("state=problems", [true, true, false]),
            ("state=fine", [false, false, true]),
            ("state=at-risk", [false, true, false]),
            ("namespace=shop", [true, false, true]),
            ("severity=warning", [false, true, false]),
            ("rule=pod-on-wrong-os&os=windows", [true, false, false]),
            ("os=linux&state=all", [false, true, true]),
            ("name=SHOP-&state=all", [true, false, true]),
            ("name=-linux&state=problems", [false, true, false]),
        ];
        for (q, want) in cases {
            let f = query(q);
            assert!(f.validate().is_ok(), "{q}");
            let got = [&bad, &risky, &fine].map(|w| f.accepts(w));
            assert_eq!(got, want, "{q}");
            // The query the dashboard writes reads back as the same filter.
            let again: Vec<String> = f
                .query_pairs()
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            assert_eq!(query(&again.join("&")), f, "{q}");
        }
    }

    #[test]
    fn node_filters_read_the_os_names() {
        for (text, os) in [
            ("windows", NodeOs::Windows),
            ("linux", NodeOs::Linux),
            ("unknown", NodeOs::Unknown),
        ] {
            let filter: NodeFilter =
                serde_json::from_value(serde_json::json!({"os": text})).unwrap();
            assert_eq!(filter.os, Some(os), "{text}");
        }
    }

    #[test]
    fn bad_filters_are_named() {
        let unknown = WorkloadFilter {
            rule: Some("no-such-rule".into()),
            ..Default::default()
        };
        assert_eq!(
            unknown.validate(),
            Err(FilterError::UnknownRule("no-such-rule".into()))
        );
        for limit in [0, MAX_PAGE + 1] {
            let page = WorkloadFilter {
                limit: Some(limit),
                ..Default::default()
            };
            assert_eq!(page.validate(), Err(FilterError::Limit(limit)));
            assert!(page.validate().unwrap_err().to_string().contains("limit"));
        }
        let err = serde_json::from_str::<WorkloadFilter>(r#"{"severity": "fatal"}"#).unwrap_err();
        assert!(err.to_string().contains("fatal"), "{err}");
        let err = serde_json::from_str::<WorkloadFilter>(r#"{"colour": "red"}"#).unwrap_err();
        assert!(err.to_string().contains("colour"), "{err}");
        let err = serde_json::from_str::<WorkloadFilter>(r#"{"os": "Windows"}"#).unwrap_err();
        assert!(err.to_string().contains("Windows"), "{err}");
        let err = serde_json::from_str::<NodeFilter>(r#"{"os": "macos"}"#).unwrap_err();
        assert!(err.to_string().contains("macos"), "{err}");
    }
}
