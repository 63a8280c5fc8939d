//! kube-scheduler, API-validation and RuntimeClass-admission semantics, case for case as upstream
//! (reference: `kubernetes-windows-rules.md` §3 and §4).
//!
//! * [`taints`]: toleration vs taint (`ToleratesTaint`), which effects filter, toleration and taint validation.
//! * [`selector`]: `spec.nodeSelector` (`labels.SelectorFromSet`) and the label/name syntax checks.
//! * [`affinity`]: required and preferred node affinity (component-helpers `nodeaffinity`) and its validation.
//! * [`pod_update`]: what `ValidatePodUpdate` refuses in an update of a pod's spec (scheduling-gated pods
//!   included: docs/reference/scheduling-gates.md §2).
//! * [`declared_features`]: which node declared features a pod needs (component-helpers `nodedeclaredfeatures`).
//! * [`runtimeclass`]: what the RuntimeClass admission plugin does to a pod (selector and toleration merge,
//!   overhead).
//!
//! Everything here is pure: the functions take k8s-openapi types and return plain values.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Taint, Toleration};
//! use winplace_rules::schedule::taints::{tolerates, Gates};
//! let taint = Taint { key: "os".into(), value: Some("windows".into()), effect: "NoSchedule".into(), ..Default::default() };
//! let tol = Toleration { key: Some("os".into()), value: Some("Windows".into()), ..Default::default() };
//! assert!(!tolerates(&tol, &taint, Gates::default())); // values are case-sensitive
//! ```

pub mod affinity;
pub mod declared_features;
pub mod pod_update;
pub mod runtimeclass;
pub mod selector;
pub mod taints;

pub use affinity::{NodeFacts, pod_matches_node, required_affinity_matches};
pub use runtimeclass::{MergedScheduling, merge_scheduling};
pub use selector::node_selector_matches;
pub use taints::{Gates, first_untolerated, tolerated_by_any, tolerates};

/// The kind of an API validation problem, as `field.ErrorType` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// `field.Invalid`: the value is malformed.
    Invalid,
    /// `field.Required`: something must be set.
    Required,
    /// `field.Forbidden`: something must not be set.
    Forbidden,
    /// `field.NotSupported`: the value is not one of a fixed list.
    NotSupported,
    /// `field.Duplicate`: the value repeats an earlier one.
    Duplicate,
}

impl ProblemKind {
    /// The words the API server puts before the detail (`Invalid value`, `Required value`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Invalid => "Invalid value",
            ProblemKind::Required => "Required value",
            ProblemKind::Forbidden => "Forbidden",
            ProblemKind::NotSupported => "Unsupported value",
            ProblemKind::Duplicate => "Duplicate value",
        }
    }
}

/// `field.NotSupported`'s detail: `supported values: "A", "B"`.
pub(crate) fn supported_values(values: &[&str]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("supported values: {}", quoted.join(", "))
}

/// Go's `%q` for the strings Kubernetes names are made of: quotes, with `"` and `\` escaped and control
/// characters written as `\xNN` (close enough to `strconv.Quote` for messages).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problem_kind_words() {
        // field.ErrorType.String() in apimachinery.
        let table = [
            (ProblemKind::Invalid, "Invalid value"),
            (ProblemKind::Required, "Required value"),
            (ProblemKind::Forbidden, "Forbidden"),
            (ProblemKind::NotSupported, "Unsupported value"),
            (ProblemKind::Duplicate, "Duplicate value"),
        ];
        for (kind, words) in table {
            assert_eq!(kind.as_str(), words);
        }
    }

    #[test]
    fn not_supported_detail() {
        assert_eq!(
            supported_values(&["Equal", "Exists"]),
            r#"supported values: "Equal", "Exists""#
        );
        assert_eq!(go_quote("a\"b\\c\n"), r#""a\"b\\c\n""#);
    }
}
