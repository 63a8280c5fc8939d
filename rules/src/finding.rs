//! What the rules report: findings with their object, field path, source line and fix.

use serde::{Deserialize, Serialize};

mod patch;

pub use patch::Patch;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; never fails a check.
    Info,
    /// Likely to break or already fragile.
    Warning,
    /// The workload will be rejected, misplaced or fail to start.
    Error,
}

impl Severity {
    /// The lowercase name used in output and settings (`error`, `warning`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The error of parsing a [`Severity`]: the text was not exactly `error`, `warning` or `info`.
///
/// ```
/// use winplace_rules::Severity;
/// assert_eq!("warning".parse::<Severity>(), Ok(Severity::Warning));
/// let err = "fatal".parse::<Severity>().unwrap_err();
/// assert_eq!(err.to_string(), r#"unknown severity "fatal" (expected error, warning or info)"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity {0:?} (expected error, warning or info)")]
pub struct UnknownSeverity(pub String);

impl std::str::FromStr for Severity {
    type Err = UnknownSeverity;
    fn from_str(s: &str) -> Result<Self, UnknownSeverity> {
        match s {
            "info" => Ok(Severity::Info),
            "warning" => Ok(Severity::Warning),
            "error" => Ok(Severity::Error),
            other => Err(UnknownSeverity(other.to_string())),
        }
    }
}

/// The Kubernetes object a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `apiVersion` of the object (`apps/v1`).
    pub api_version: String,
    /// `kind` of the object (`Deployment`).
    pub kind: String,
    /// Namespace; `None` for cluster-scoped objects (Node, RuntimeClass).
    pub namespace: Option<String>,
    /// `metadata.name` (or `generateName` when there is no name).
    pub name: String,
}

impl ObjectRef {
    /// A reference to `kind` `name` (in `namespace`, for namespaced kinds) of `api_version`.
    ///
    /// ```
    /// let web = winplace_rules::ObjectRef::new("apps/v1", "Deployment", Some("shop"), "web");
    /// assert_eq!(web.display_name(), "Deployment/shop/web");
    /// ```
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        ObjectRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects (the corpus notation).
    pub fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

/// A repair: a JSON patch (RFC 6902) against the object, and what it does in one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fix {
    /// One line saying what the patch changes.
    pub description: String,
    /// RFC 6902 operations, paths relative to the object's root.
    pub patch: Patch,
}

/// One problem found in one object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable rule id (`windows-pod-without-os-selector`).
    pub rule: String,
    /// Severity after settings' overrides.
    pub severity: Severity,
    /// The object the finding is about.
    pub object: ObjectRef,
    /// The input file, when the object came from text.
    pub file: Option<String>,
    /// 1-based line of `path` (or of its nearest present parent) in `file`.
    pub line: Option<u32>,
    /// Field path in Kubernetes notation; for a missing field, where a fix would put it.
    pub path: String,
    /// What is wrong and what to do, for a cluster operator.
    pub message: String,
    /// The repair, when one exists.
    pub fix: Option<Fix>,
}

impl Finding {
    /// A finding of `rule` on `object` with no place, message or fix yet, for code that builds findings
    /// outside the rules (hosts, reports, tests); the rules themselves emit through their `Emitter`.
    pub fn new(rule: &str, severity: Severity, object: ObjectRef) -> Self {
        Finding {
            rule: rule.to_string(),
            severity,
            object,
            file: None,
            line: None,
            path: String::new(),
            message: String::new(),
            fix: None,
        }
    }
}

/// Findings and parse errors of one evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Every finding, in file, line, rule order.
    pub findings: Vec<Finding>,
    /// Documents that could not be read.
    pub parse_errors: Vec<crate::ParseError>,
}

/// The order of a report: by file, line, rule and path.
pub(crate) fn order(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    (&a.file, a.line, &a.rule, &a.path).cmp(&(&b.file, b.line, &b.rule, &b.path))
}

impl Report {
    /// Sorts findings by file, line, rule and path so that output is stable.
    pub fn sort(&mut self) {
        self.findings.sort_by(order);
    }

    /// Number of findings with the given severity.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}
