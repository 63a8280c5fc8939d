//! The answer's shape and wording: accept, mutate or reject, the admission warnings, and each finding as
//! one line of them.

use serde_json::Value;
use winplace_rules::finding::{Finding, Severity};

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
