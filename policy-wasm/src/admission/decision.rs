//! The answer's shape and wording: accept, mutate or reject, the admission warnings, and each finding as
//! one line of them.

use serde_json::Value;
use winplace_rules::finding::{Finding, Fix, Severity};

/// What to answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accept as is.
    Accept,
    /// Accept with this object instead (the host turns it into a JSON patch).
    Mutate(Value),
    /// Reject with this message.
    Reject(String),
}

/// The answer to one request: the verdict and the admission warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Accept, mutate or reject.
    pub verdict: Verdict,
    /// Admission warnings (`kubectl` prints them): warning-severity findings, errors an UPDATE did not
    /// introduce, and the fixes a mutation applied.
    pub warnings: Vec<String>,
}

impl Decision {
    pub(super) fn accept() -> Self {
        Decision {
            verdict: Verdict::Accept,
            warnings: Vec::new(),
        }
    }
}

/// One finding as a line of a message or a warning: `[rule] path: message`.
pub fn finding_line(f: &Finding) -> String {
    format!("[{}] {}: {}", f.rule, f.path, f.message)
}

/// What a mutation says of each fix it put in its patch: the finding, and what the patch does, worded so
/// that it stays true where the patch is not applied. The policy cannot tell whether its
/// ClusterAdmissionPolicy is `mutating`; under a validate-only one policy-server applies no patch and
/// rejects the request (docs/reference/kubewarden-hosting.md §4), so the warning says so instead of
/// reading as a change made.
///
/// ```
/// use winplace_policy_wasm::admission::patch_warning;
/// use winplace_rules::finding::{Finding, Fix, ObjectRef, Severity};
/// let web = ObjectRef::new("v1", "Pod", Some("shop"), "web");
/// let finding = Finding::new("windows-pod-without-os-selector", Severity::Error, web);
/// let fix = Fix { description: "add nodeSelector kubernetes.io/os: windows".into(), patch: Default::default() };
/// let warning = patch_warning(&finding, &fix);
/// assert!(warning.ends_with("; winplace proposed a patch, not applied unless the policy is mutating: add nodeSelector kubernetes.io/os: windows"));
/// ```
pub fn patch_warning(f: &Finding, fix: &Fix) -> String {
    format!("{}; {PATCH_PROPOSED}: {}", finding_line(f), fix.description)
}

/// How [`patch_warning`] introduces a fix's description.
pub const PATCH_PROPOSED: &str =
    "winplace proposed a patch, not applied unless the policy is mutating";

/// Accept or reject on `findings`: new errors reject; old errors and warnings are warnings. `repaired`:
/// the findings are those left after the fixes, and a rejection says so.
pub(super) fn decide(
    findings: &[Finding],
    is_new: &dyn Fn(&Finding) -> bool,
    repaired: bool,
) -> Decision {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for f in findings {
        match f.severity {
            Severity::Error if is_new(f) => errors.push(finding_line(f)),
            Severity::Error => warnings.push(format!(
                "{} (already present before this update)",
                finding_line(f)
            )),
            Severity::Warning => warnings.push(finding_line(f)),
            Severity::Info => {}
        }
    }
    if errors.is_empty() {
        return Decision {
            verdict: Verdict::Accept,
            warnings,
        };
    }
    let object = findings
        .first()
        .map(|f| f.object.display_name())
        .unwrap_or_default();
    let lead = if repaired {
        format!("winplace rejected {object} (the fixes could not repair it)")
    } else {
        format!("winplace rejected {object}")
    };
    Decision {
        verdict: Verdict::Reject(format!("{lead}: {}", errors.join("; "))),
        warnings,
    }
}
