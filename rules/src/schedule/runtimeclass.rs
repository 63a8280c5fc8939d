//! What the RuntimeClass admission plugin (`plugin/pkg/admission/runtimeclass/admission.go`, kubernetes-windows-rules.md §4)
//! does to a pod that names a RuntimeClass: merge `scheduling.nodeSelector` and `scheduling.tolerations`
//! into the pod (`setScheduling`, `pkg/util/tolerations` merge), set and check `spec.overhead`
//! (`setOverhead`, `validateOverhead`).
//!
//! The plugin acts only on CREATE of `pods` ([`admission_applies`]): workload templates are not mutated, so a
//! linter that looks at a template has to simulate the merge with [`merge_scheduling`].

use std::cmp::Ordering;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Toleration;
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::taints::{NO_EXECUTE, same_toleration};
use super::{go_quote, selector};

/// The containerd handler for process-isolated Windows containers (containerd's Windows default runtime).
pub const HANDLER_WCOW_PROCESS: &str = "runhcs-wcow-process";
/// The containerd handler for Hyper-V isolated Windows containers (outside Kubernetes' supported matrix).
pub const HANDLER_WCOW_HYPERVISOR: &str = "runhcs-wcow-hypervisor";
/// The served RuntimeClass API (`node.k8s.io/v1`, since v1.20).
pub const API_VERSION_V1: &str = "node.k8s.io/v1";

/// `setOverhead` rejection.
pub const OVERHEAD_MISMATCH: &str =
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
/// `validateOverhead` rejection when the RuntimeClass defines no overhead.
pub const OVERHEAD_WITHOUT_RUNTIME_CLASS: &str =
    "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead";

/// Why RuntimeClass admission rejects a pod's `spec.overhead` ([`check_overhead`]); the messages are
/// upstream's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OverheadError {
    /// The RuntimeClass defines an overhead and the pod's differs ([`OVERHEAD_MISMATCH`]).
    #[error("{}", OVERHEAD_MISMATCH)]
    Mismatch,
    /// The pod sets an overhead and no RuntimeClass defines one ([`OVERHEAD_WITHOUT_RUNTIME_CLASS`]).
    #[error("{}", OVERHEAD_WITHOUT_RUNTIME_CLASS)]
    WithoutRuntimeClass,
}

/// Whether the plugin acts on a request: CREATE of `pods` (core group), no subresource.
pub fn admission_applies(operation: &str, group: &str, resource: &str, subresource: &str) -> bool {
    operation == "CREATE" && group.is_empty() && resource == "pods" && subresource.is_empty()
}

/// `prepareObjects`' rejection when the named RuntimeClass does not exist.
pub fn not_found_message(name: &str) -> String {
    format!("pod rejected: RuntimeClass {} not found", go_quote(name))
}

/// `admission.NewForbidden` for a pod: `pods "<name>" is forbidden: <message>` (`pods is forbidden: ...`
/// when the pod has no name yet, e.g. with `generateName`).
pub fn forbidden_message(pod_name: &str, message: &str) -> String {
    if pod_name.is_empty() {
        format!("pods is forbidden: {message}")
    } else {
        format!("pods {} is forbidden: {message}", go_quote(pod_name))
    }
}

/// `apiVersion`s of RuntimeClass that are no longer served (`node.k8s.io/v1beta1` stopped in v1.25;
/// `v1alpha1` earlier).
pub fn is_removed_api_version(api_version: &str) -> bool {
    matches!(api_version, "node.k8s.io/v1beta1" | "node.k8s.io/v1alpha1")
}

/// API validation of a RuntimeClass `handler`: a DNS-1123 label. Empty result = valid.
pub fn validate_handler(handler: &str) -> Vec<String> {
    selector::is_dns1123_label(handler)
}

/// One nodeSelector key the pod and the RuntimeClass set to different values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulingConflict {
    /// The nodeSelector key.
    pub key: String,
    /// The RuntimeClass's value.
    pub runtime_class_value: String,
    /// The pod's value.
    pub pod_value: String,
}

impl SchedulingConflict {
    /// The plugin's error, exactly:
    /// `conflict: runtimeClass.scheduling.nodeSelector[<key>] = <rcValue>; pod.spec.nodeSelector[<key>] = <podValue>`
    /// (the API server wraps it with [`forbidden_message`]).
    pub fn message(&self) -> String {
        format!(
            "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {rc}; pod.spec.nodeSelector[{k}] = {pod}",
            k = self.key,
            rc = self.runtime_class_value,
            pod = self.pod_value
        )
    }
}

/// The pod's placement after `setScheduling`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MergedScheduling {
    /// The effective nodeSelector (`None` when neither side sets one).
    pub node_selector: Option<BTreeMap<String, String>>,
    /// The merged tolerations.
    pub tolerations: Vec<Toleration>,
    /// Keys set differently by the pod and the RuntimeClass, in the RuntimeClass's key order. Upstream rejects
    /// the pod at the first one it meets (Go map order); any conflict means the pod is not created. For a
    /// conflicting key, `node_selector` keeps the pod's value.
    pub conflicts: Vec<SchedulingConflict>,
}

/// `setScheduling`: without RuntimeClass `scheduling` nothing changes. Otherwise a pod without a nodeSelector
/// takes the RuntimeClass's; a pod with one gets the RuntimeClass's keys added (conflicting values
/// reported); tolerations are [`merge_tolerations`]`(pod, runtimeClass)`.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::api::node::v1::{RuntimeClass, Scheduling};
/// use winplace_rules::schedule::runtimeclass::merge_scheduling;
/// let rc = RuntimeClass {
///     handler: "runhcs-wcow-process".into(),
///     scheduling: Some(Scheduling {
///         node_selector: Some(BTreeMap::from([("kubernetes.io/os".into(), "windows".into())])),
///         tolerations: None,
///     }),
///     ..Default::default()
/// };
/// let pod = BTreeMap::from([("kubernetes.io/os".to_string(), "linux".to_string())]);
/// let merged = merge_scheduling(Some(&pod), &[], &rc);
/// assert_eq!(merged.conflicts[0].message(),
///     "conflict: runtimeClass.scheduling.nodeSelector[kubernetes.io/os] = windows; pod.spec.nodeSelector[kubernetes.io/os] = linux");
/// ```
pub fn merge_scheduling(
    pod_selector: Option<&BTreeMap<String, String>>,
    pod_tolerations: &[Toleration],
    rc: &RuntimeClass,
) -> MergedScheduling {
    let Some(scheduling) = rc.scheduling.as_ref() else {
        return MergedScheduling {
            node_selector: pod_selector.cloned(),
            tolerations: pod_tolerations.to_vec(),
            conflicts: Vec::new(),
        };
    };
    let rc_selector = scheduling.node_selector.as_ref();
    let mut conflicts = Vec::new();
    let node_selector = match pod_selector {
        None => rc_selector.cloned(),
        Some(pod) => {
            let mut merged = pod.clone();
            for (key, rc_value) in rc_selector.into_iter().flatten() {
                match pod.get(key) {
                    Some(pod_value) if pod_value != rc_value => {
                        conflicts.push(SchedulingConflict {
                            key: key.clone(),
                            runtime_class_value: rc_value.clone(),
                            pod_value: pod_value.clone(),
                        })
                    }
                    _ => {
                        merged.insert(key.clone(), rc_value.clone());
                    }
                }
            }
            Some(merged)
        }
    };
    let rc_tolerations: &[Toleration] = scheduling.tolerations.as_deref().unwrap_or(&[]);
    MergedScheduling {
        node_selector,
        tolerations: merge_tolerations(pod_tolerations, rc_tolerations),
        conflicts,
    }
}

/// `MergeTolerations` (`pkg/util/tolerations`): `first` then `second`, dropping a toleration when one already
/// kept covers it, or a later different one covers it ([`is_superset`]); of exact duplicates the first is kept.
pub fn merge_tolerations(first: &[Toleration], second: &[Toleration]) -> Vec<Toleration> {
    let all: Vec<&Toleration> = first.iter().chain(second).collect();
    let mut merged: Vec<Toleration> = Vec::new();
    for (i, t) in all.iter().enumerate() {
        if merged.iter().any(|kept| is_superset(kept, t)) {
            continue;
        }
        if all[i + 1..]
            .iter()
            .any(|later| !same_toleration(t, later) && is_superset(later, t))
        {
            continue;
        }
        merged.push((*t).clone());
    }
    merged
}

/// `isSuperset`: whether `ss` tolerates everything `t` tolerates. Equal tolerations cover each other.
/// Otherwise: same key, or `ss` is the empty-key `Exists`; same effect, or `ss`'s effect is empty; for a
/// `NoExecute` `ss` with `tolerationSeconds`, `t` must have seconds and no more of them; and `ss` is `Exists`,
/// or `ss` is `Equal`/empty and `t` is `Equal` (literally; an empty operator in `t` does not count) with the
/// same value.
pub fn is_superset(ss: &Toleration, t: &Toleration) -> bool {
    if same_toleration(ss, t) {
        return true;
    }
    let s = |o: &Option<String>| o.as_deref().unwrap_or("").to_string();
    let (ss_key, ss_op, ss_effect) = (s(&ss.key), s(&ss.operator), s(&ss.effect));
    if s(&t.key) != ss_key && (!ss_key.is_empty() || ss_op != "Exists") {
        return false;
    }
    if s(&t.effect) != ss_effect && !ss_effect.is_empty() {
        return false;
    }
    if ss_effect == NO_EXECUTE
        && let Some(ss_secs) = ss.toleration_seconds
        && t.toleration_seconds.is_none_or(|t_secs| t_secs > ss_secs)
    {
        return false;
    }
    match ss_op.as_str() {
        "" | "Equal" => s(&t.operator) == "Equal" && s(&t.value) == s(&ss.value),
        "Exists" => true,
        _ => false,
    }
}

/// `setOverhead` then `validateOverhead`: the pod's `spec.overhead` after admission, or the rejection.
///
/// * RuntimeClass with `overhead`: a pod overhead that is set and differs (semantically, see
///   [`quantities_equal`]) is rejected; otherwise `spec.overhead` becomes `overhead.podFixed` (`Ok(Some)`, or
///   `Ok(None)` when `podFixed` is unset).
/// * No RuntimeClass, or one without `overhead`: a pod overhead that is set (even `{}`, as in Go) is
///   rejected; otherwise `Ok(None)`.
pub fn check_overhead(
    pod_overhead: Option<&BTreeMap<String, Quantity>>,
    rc: Option<&RuntimeClass>,
) -> Result<Option<BTreeMap<String, Quantity>>, OverheadError> {
    match rc.and_then(|r| r.overhead.as_ref()) {
        Some(overhead) => {
            let fixed = overhead.pod_fixed.as_ref();
            if let Some(pod) = pod_overhead
                && !resource_lists_equal(Some(pod), fixed)
            {
                return Err(OverheadError::Mismatch);
            }
            Ok(fixed.cloned())
        }
        None if pod_overhead.is_some() => Err(OverheadError::WithoutRuntimeClass),
        None => Ok(None),
    }
}

/// `equality.Semantic.DeepEqual` on two resource lists: nil and empty are equal; same names; quantities
/// equal by value.
pub fn resource_lists_equal(
    a: Option<&BTreeMap<String, Quantity>>,
    b: Option<&BTreeMap<String, Quantity>>,
) -> bool {
    let empty = BTreeMap::new();
    let (a, b) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
    a.len() == b.len()
        && a.iter()
            .all(|(k, qa)| b.get(k).is_some_and(|qb| quantities_equal(qa, qb)))
}

/// Whether two quantities are the same amount (`Quantity.Cmp == 0`): `1000m` = `1`, `1Ki` = `1024`,
/// `1e3` = `1k`, `0.5` = `500m`. Strings that do not parse as quantities (the API server would reject them)
/// compare as text.
pub fn quantities_equal(a: &Quantity, b: &Quantity) -> bool {
    match (parse_quantity(&a.0), parse_quantity(&b.0)) {
        (Some(x), Some(y)) => x == y,
        _ => a.0 == b.0,
    }
}

/// A quantity's exact value: sign, decimal digits without leading or trailing zeros, and a power of ten.
/// Zero is `(false, [], 0)`.
#[derive(Debug, PartialEq, Eq)]
struct Exact {
    negative: bool,
    digits: Vec<u8>,
    exp10: i64,
}

/// Longest quantity string that is compared by value (a real one is a few characters long).
const MAX_QUANTITY_LEN: usize = 64;

fn parse_quantity(s: &str) -> Option<Exact> {
    if s.is_empty() || s.len() > MAX_QUANTITY_LEN {
        return None;
    }
    let (negative, rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let num_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(num_end);
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
        return None;
    }
    let (mut exp10, pow1024): (i64, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 1),
        "Mi" => (0, 2),
        "Gi" => (0, 3),
        "Ti" => (0, 4),
        "Pi" => (0, 5),
        "Ei" => (0, 6),
        other => {
            let e = other.strip_prefix(['e', 'E'])?;
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            (e.parse::<i32>().ok()?.into(), 0)
        }
    };
    let mut digits: Vec<u8> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .map(|c| c - b'0')
        .collect();
    exp10 -= i64::try_from(frac_part.len()).ok()?;
    for _ in 0..pow1024 {
        digits = times_1024(&digits);
    }
    let first = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    digits.drain(..first);
    while digits.last() == Some(&0) {
        digits.pop();
        exp10 += 1;
    }
    if digits.is_empty() {
        return Some(Exact {
            negative: false,
            digits,
            exp10: 0,
        });
    }
    Some(Exact {
        negative,
        digits,
        exp10,
    })
}

/// Multiplies a big-endian decimal digit string by 1024.
fn times_1024(digits: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(digits.len() + 4);
    let mut carry: u32 = 0;
    for &d in digits.iter().rev() {
        let v = u32::from(d) * 1024 + carry;
        out.push((v % 10) as u8);
        carry = v / 10;
    }
    while carry > 0 {
        out.push((carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    out
}

/// Orders quantities by value where both parse (used by tests; kept for callers comparing overheads).
pub fn compare_quantities(a: &Quantity, b: &Quantity) -> Option<Ordering> {
    let (x, y) = (parse_quantity(&a.0)?, parse_quantity(&b.0)?);
    let sign = |e: &Exact| {
        if e.digits.is_empty() {
            0
        } else if e.negative {
            -1
        } else {
            1
        }
    };
    let (sx, sy) = (sign(&x), sign(&y));
    if sx != sy || sx == 0 {
        return Some(sx.cmp(&sy));
    }
    // Compare magnitudes: the number of integer digits (len + exp10), then digit by digit.
    let mag = |e: &Exact| e.digits.len() as i64 + e.exp10;
    let by_mag = mag(&x).cmp(&mag(&y)).then_with(|| {
        let n = x.digits.len().max(y.digits.len());
        let at = |e: &Exact, i: usize| e.digits.get(i).copied().unwrap_or(0);
        (0..n)
            .map(|i| at(&x, i).cmp(&at(&y, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
    Some(if sx < 0 { by_mag.reverse() } else { by_mag })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::node::v1::{Overhead, Scheduling};

    fn tol(key: &str, op: &str, value: &str, effect: &str, secs: Option<i64>) -> Toleration {
        let s = |v: &str| (!v.is_empty()).then(|| v.to_string());
        Toleration {
            key: s(key),
            operator: s(op),
            value: s(value),
            effect: s(effect),
            toleration_seconds: secs,
        }
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn rc(selector: Option<&[(&str, &str)]>, tolerations: Option<Vec<Toleration>>) -> RuntimeClass {
        RuntimeClass {
            handler: HANDLER_WCOW_PROCESS.into(),
            scheduling: Some(Scheduling {
                node_selector: selector.map(map),
                tolerations,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn merge_selector_table() {
        let os_win: &[(&str, &str)] = &[("kubernetes.io/os", "windows")];
        // kubernetes-windows-rules.md §4 setScheduling.
        /// The pod's and the RuntimeClass's nodeSelector, the merged one and how many conflicts.
        struct SchedulingCase<'a> {
            pod: Option<&'a [(&'a str, &'a str)]>,
            runtime_class: Option<&'a [(&'a str, &'a str)]>,
            want: Option<&'a [(&'a str, &'a str)]>,
            conflicts: usize,
        }
        let rows = vec![
            SchedulingCase {
                pod: None,
                runtime_class: Some(os_win),
                want: Some(os_win),
                conflicts: 0,
            }, // nil pod selector takes the RC's
            SchedulingCase {
                pod: None,
                runtime_class: None,
                want: None,
                conflicts: 0,
            },
            SchedulingCase {
                pod: Some(&[("zone", "a")]),
                runtime_class: Some(os_win),
                want: Some(&[("kubernetes.io/os", "windows"), ("zone", "a")]),
                conflicts: 0,
            }, // union
            SchedulingCase {
                pod: Some(os_win),
                runtime_class: Some(os_win),
                want: Some(os_win),
                conflicts: 0,
            }, // same value: no conflict
            SchedulingCase {
                pod: Some(&[]),
                runtime_class: Some(os_win),
                want: Some(os_win),
                conflicts: 0,
            }, // empty (non-nil) pod selector
            SchedulingCase {
                pod: Some(&[("zone", "a")]),
                runtime_class: None,
                want: Some(&[("zone", "a")]),
                conflicts: 0,
            },
            SchedulingCase {
                pod: Some(&[("kubernetes.io/os", "linux")]),
                runtime_class: Some(os_win),
                want: Some(&[("kubernetes.io/os", "linux")]),
                conflicts: 1,
            },
        ];
        for (
            i,
            SchedulingCase {
                pod,
                runtime_class: rcs,
                want,
                conflicts: nconf,
            },
        ) in rows.into_iter().enumerate()
        {
            let pod = pod.map(map);
            let m = merge_scheduling(pod.as_ref(), &[], &rc(rcs, None));
            assert_eq!(m.node_selector, want.map(map), "row {i}");
            assert_eq!(m.conflicts.len(), nconf, "row {i}");
        }
    }

    #[test]
    fn conflict_message_exact() {
        let pod = map(&[("a", "1"), ("kubernetes.io/os", "linux"), ("z", "9")]);
        let r = rc(
            Some(&[("z", "8"), ("kubernetes.io/os", "windows"), ("a", "1")]),
            None,
        );
        let m = merge_scheduling(Some(&pod), &[], &r);
        let msgs: Vec<String> = m
            .conflicts
            .iter()
            .map(SchedulingConflict::message)
            .collect();
        assert_eq!(
            msgs,
            vec![
                "conflict: runtimeClass.scheduling.nodeSelector[kubernetes.io/os] = windows; pod.spec.nodeSelector[kubernetes.io/os] = linux",
                "conflict: runtimeClass.scheduling.nodeSelector[z] = 8; pod.spec.nodeSelector[z] = 9",
            ]
        );
        assert_eq!(
            forbidden_message("web", &msgs[1]),
            "pods \"web\" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[z] = 8; pod.spec.nodeSelector[z] = 9"
        );
        assert_eq!(forbidden_message("", "x"), "pods is forbidden: x");
        assert_eq!(
            not_found_message("windows-2022"),
            "pod rejected: RuntimeClass \"windows-2022\" not found"
        );
    }

    #[test]
    fn no_scheduling_changes_nothing() {
        let r = RuntimeClass {
            handler: "runc".into(),
            ..Default::default()
        };
        let pod = map(&[("a", "1")]);
        let t = vec![tol("os", "Equal", "windows", "NoSchedule", None)];
        let m = merge_scheduling(Some(&pod), &t, &r);
        assert_eq!(
            m,
            MergedScheduling {
                node_selector: Some(pod),
                tolerations: t,
                conflicts: vec![]
            }
        );
        assert_eq!(merge_scheduling(None, &[], &r).node_selector, None);
    }

    #[test]
    fn superset_table() {
        // pkg/util/tolerations isSuperset.
        /// Two tolerations, whether the first is a superset of the second, and why.
        struct TolerationCase<'a> {
            superset: Toleration,
            toleration: Toleration,
            want: bool,
            why: &'a str,
        }
        let rows = vec![
            TolerationCase {
                superset: tol("a", "Equal", "1", "NoSchedule", None),
                toleration: tol("a", "Equal", "1", "NoSchedule", None),
                want: true,
                why: "equal",
            },
            TolerationCase {
                superset: tol("a", "", "1", "", None),
                toleration: tol("a", "", "1", "", None),
                want: true,
                why: "equal with empty operator",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "", None),
                toleration: tol("a", "Equal", "1", "NoSchedule", None),
                want: true,
                why: "Exists covers values, empty effect covers effects",
            },
            TolerationCase {
                superset: tol("", "Exists", "", "", None),
                toleration: tol("b", "Equal", "1", "NoExecute", Some(5)),
                want: true,
                why: "empty key + Exists covers all",
            },
            TolerationCase {
                superset: tol("", "Equal", "", "", None),
                toleration: tol("b", "Equal", "", "", None),
                want: false,
                why: "empty key needs Exists",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoSchedule", None),
                toleration: tol("a", "Exists", "", "", None),
                want: false,
                why: "effect narrower",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoSchedule", None),
                toleration: tol("a", "Exists", "", "NoExecute", None),
                want: false,
                why: "other effect",
            },
            TolerationCase {
                superset: tol("b", "Exists", "", "", None),
                toleration: tol("a", "Exists", "", "", None),
                want: false,
                why: "other key",
            },
            TolerationCase {
                superset: tol("a", "Equal", "1", "", None),
                toleration: tol("a", "Equal", "2", "", None),
                want: false,
                why: "other value",
            },
            TolerationCase {
                superset: tol("a", "Equal", "1", "", None),
                toleration: tol("a", "Exists", "", "", None),
                want: false,
                why: "Equal does not cover Exists",
            },
            TolerationCase {
                superset: tol("a", "Equal", "1", "", None),
                toleration: tol("a", "", "1", "", None),
                want: false,
                why: "quirk: t's empty operator is not Equal",
            },
            TolerationCase {
                superset: tol("a", "", "1", "", None),
                toleration: tol("a", "Equal", "1", "", None),
                want: true,
                why: "ss's empty operator means Equal",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoExecute", Some(60)),
                toleration: tol("a", "Exists", "", "NoExecute", Some(30)),
                want: true,
                why: "fewer seconds covered",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoExecute", Some(60)),
                toleration: tol("a", "Exists", "", "NoExecute", Some(60)),
                want: true,
                why: "same seconds",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoExecute", Some(30)),
                toleration: tol("a", "Exists", "", "NoExecute", Some(60)),
                want: false,
                why: "more seconds not covered",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoExecute", Some(30)),
                toleration: tol("a", "Exists", "", "NoExecute", None),
                want: false,
                why: "nil seconds = forever",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "NoExecute", None),
                toleration: tol("a", "Exists", "", "NoExecute", Some(30)),
                want: true,
                why: "forever covers bounded",
            },
            TolerationCase {
                superset: tol("a", "Exists", "", "", Some(30)),
                toleration: tol("a", "Exists", "", "NoExecute", None),
                want: true,
                why: "seconds only checked for NoExecute ss",
            },
            TolerationCase {
                superset: tol("a", "Lt", "5", "", None),
                toleration: tol("a", "Lt", "5", "NoSchedule", None),
                want: false,
                why: "unknown ss operator covers nothing else",
            },
        ];
        for TolerationCase {
            superset: ss,
            toleration: t,
            want,
            why,
        } in rows
        {
            assert_eq!(is_superset(&ss, &t), want, "{why}");
        }
    }

    #[test]
    fn merge_tolerations_table() {
        let win = tol("os", "Equal", "windows", "NoSchedule", None);
        let win_any = tol("os", "Exists", "", "", None);
        let all = tol("", "Exists", "", "", None);
        let gpu = tol("gpu", "Exists", "", "NoSchedule", None);
        let ne30 = tol("n", "Exists", "", "NoExecute", Some(30));
        let ne60 = tol("n", "Exists", "", "NoExecute", Some(60));
        /// Two lists of tolerations, the merged one and why.
        struct MergeCase<'a> {
            first: Vec<Toleration>,
            second: Vec<Toleration>,
            want: Vec<Toleration>,
            why: &'a str,
        }
        let rows = vec![
            MergeCase {
                first: vec![],
                second: vec![],
                want: vec![],
                why: "empty",
            },
            MergeCase {
                first: vec![win.clone()],
                second: vec![],
                want: vec![win.clone()],
                why: "pod only",
            },
            MergeCase {
                first: vec![],
                second: vec![win.clone()],
                want: vec![win.clone()],
                why: "rc only",
            },
            MergeCase {
                first: vec![win.clone()],
                second: vec![gpu.clone()],
                want: vec![win.clone(), gpu.clone()],
                why: "union in order, pod first",
            },
            MergeCase {
                first: vec![win.clone()],
                second: vec![win.clone()],
                want: vec![win.clone()],
                why: "exact duplicate kept once",
            },
            MergeCase {
                first: vec![win.clone()],
                second: vec![win_any.clone()],
                want: vec![win_any.clone()],
                why: "covered by a later one: dropped",
            },
            MergeCase {
                first: vec![win_any.clone()],
                second: vec![win.clone()],
                want: vec![win_any.clone()],
                why: "covered by a kept one: dropped",
            },
            MergeCase {
                first: vec![win.clone(), gpu.clone()],
                second: vec![all.clone()],
                want: vec![all.clone()],
                why: "tolerate-everything swallows all",
            },
            MergeCase {
                first: vec![ne30.clone()],
                second: vec![ne60.clone()],
                want: vec![ne60.clone()],
                why: "longer NoExecute seconds win",
            },
            MergeCase {
                first: vec![ne60.clone()],
                second: vec![ne30.clone()],
                want: vec![ne60.clone()],
                why: "…in either order",
            },
        ];
        for MergeCase {
            first: a,
            second: b,
            want,
            why,
        } in rows
        {
            assert_eq!(merge_tolerations(&a, &b), want, "{why}");
        }
        // Duplicates that differ only in None vs Some(""): the first is kept.
        let x1 = Toleration {
            key: Some("x".into()),
            operator: Some("Exists".into()),
            effect: None,
            ..Default::default()
        };
        let x2 = Toleration {
            key: Some("x".into()),
            operator: Some("Exists".into()),
            effect: Some(String::new()),
            ..Default::default()
        };
        assert_eq!(
            merge_tolerations(std::slice::from_ref(&x1), std::slice::from_ref(&x2)),
            vec![x1]
        );
        // Through merge_scheduling.
        let r = rc(None, Some(vec![win.clone()]));
        assert_eq!(
            merge_scheduling(None, std::slice::from_ref(&gpu), &r).tolerations,
            vec![gpu, win]
        );
    }

    fn q(s: &str) -> Quantity {
        Quantity(s.to_string())
    }

    fn res(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
        pairs.iter().map(|(k, v)| (k.to_string(), q(v))).collect()
    }

    fn rc_overhead(pod_fixed: Option<&[(&str, &str)]>) -> RuntimeClass {
        RuntimeClass {
            handler: HANDLER_WCOW_PROCESS.into(),
            overhead: Some(Overhead {
                pod_fixed: pod_fixed.map(res),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn overhead_table() {
        let fixed: &[(&str, &str)] = &[("cpu", "250m"), ("memory", "120Mi")];
        let with = rc_overhead(Some(fixed));
        let without = RuntimeClass {
            handler: "runc".into(),
            ..Default::default()
        };
        let empty_pod = res(&[]);
        let same_pod = res(&[("cpu", "0.25"), ("memory", "125829120")]);
        let other_pod = res(&[("cpu", "500m"), ("memory", "120Mi")]);
        let fewer_pod = res(&[("cpu", "250m")]);
        // kubernetes-windows-rules.md §4 setOverhead + Validate.
        /// The pod's overhead, the RuntimeClass and the result of the check.
        struct OverheadCase<'a> {
            pod: Option<&'a BTreeMap<String, Quantity>>,
            runtime_class: Option<&'a RuntimeClass>,
            want: Result<Option<BTreeMap<String, Quantity>>, OverheadError>,
        }
        let rows = vec![
            OverheadCase {
                pod: None,
                runtime_class: Some(&with),
                want: Ok(Some(res(fixed))),
            }, // set
            OverheadCase {
                pod: Some(&same_pod),
                runtime_class: Some(&with),
                want: Ok(Some(res(fixed))),
            }, // equal (semantically): set to RC's
            OverheadCase {
                pod: Some(&other_pod),
                runtime_class: Some(&with),
                want: Err(OverheadError::Mismatch),
            }, // different
            OverheadCase {
                pod: Some(&fewer_pod),
                runtime_class: Some(&with),
                want: Err(OverheadError::Mismatch),
            }, // missing resource
            OverheadCase {
                pod: Some(&empty_pod),
                runtime_class: Some(&with),
                want: Err(OverheadError::Mismatch),
            }, // {} is set and differs
            OverheadCase {
                pod: None,
                runtime_class: None,
                want: Ok(None),
            },
            OverheadCase {
                pod: None,
                runtime_class: Some(&without),
                want: Ok(None),
            },
            OverheadCase {
                pod: Some(&same_pod),
                runtime_class: None,
                want: Err(OverheadError::WithoutRuntimeClass),
            }, // no RC
            OverheadCase {
                pod: Some(&same_pod),
                runtime_class: Some(&without),
                want: Err(OverheadError::WithoutRuntimeClass),
            }, // RC without overhead
            OverheadCase {
                pod: Some(&empty_pod),
                runtime_class: None,
                want: Err(OverheadError::WithoutRuntimeClass),
            }, // {} counts as set
        ];
        for (
            i,
            OverheadCase {
                pod,
                runtime_class: r,
                want,
            },
        ) in rows.into_iter().enumerate()
        {
            assert_eq!(check_overhead(pod, r), want, "row {i}");
        }
        // RC overhead without podFixed: an empty pod overhead is semantically equal (nil == empty).
        let bare = rc_overhead(None);
        assert_eq!(check_overhead(Some(&empty_pod), Some(&bare)), Ok(None));
        assert_eq!(
            check_overhead(Some(&fewer_pod), Some(&bare)),
            Err(OverheadError::Mismatch)
        );
        assert_eq!(check_overhead(None, Some(&bare)), Ok(None));
        assert_eq!(
            OVERHEAD_MISMATCH,
            "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
        );
        assert_eq!(
            OVERHEAD_WITHOUT_RUNTIME_CLASS,
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
        );
        assert_eq!(OverheadError::Mismatch.to_string(), OVERHEAD_MISMATCH);
        assert_eq!(
            OverheadError::WithoutRuntimeClass.to_string(),
            OVERHEAD_WITHOUT_RUNTIME_CLASS
        );
    }

    #[test]
    fn quantity_equality_table() {
        let rows = [
            ("1000m", "1", true),
            ("1", "1.0", true),
            ("0.5", "500m", true),
            ("1Ki", "1024", true),
            ("1Mi", "1048576", true),
            ("120Mi", "125829120", true),
            ("1e3", "1k", true),
            ("1E3", "1000", true),
            ("1e-3", "1m", true),
            ("1k", "1000000m", true),
            ("1Gi", "1G", false),
            ("1", "2", false),
            ("-1", "1", false),
            ("0", "-0", true),
            ("0", "0m", true),
            ("+1", "1", true),
            (".5", "0.5", true),
            ("100n", "0.1u", true),
            ("1Ei", "1152921504606846976", true),
            ("abc", "abc", true), // unparsable: text compare
            ("abc", "abd", false),
            ("1x", "1", false),
            ("1.2.3", "1.2.3", true),
        ];
        for (a, b, want) in rows {
            assert_eq!(quantities_equal(&q(a), &q(b)), want, "{a} vs {b}");
        }
        assert_eq!(
            compare_quantities(&q("1Gi"), &q("1G")),
            Some(Ordering::Greater)
        );
        assert_eq!(compare_quantities(&q("-2"), &q("-1")), Some(Ordering::Less));
        assert_eq!(
            compare_quantities(&q("999m"), &q("1")),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare_quantities(&q("0"), &q("-5")),
            Some(Ordering::Greater)
        );
        assert_eq!(compare_quantities(&q("x"), &q("1")), None);
        assert!(
            resource_lists_equal(None, Some(&res(&[]))),
            "nil and empty are equal"
        );
    }

    #[test]
    fn misc_table() {
        assert!(admission_applies("CREATE", "", "pods", ""));
        assert!(!admission_applies("UPDATE", "", "pods", ""));
        assert!(!admission_applies("CREATE", "", "pods", "binding"));
        assert!(!admission_applies("CREATE", "apps", "deployments", ""));
        assert!(is_removed_api_version("node.k8s.io/v1beta1"));
        assert!(!is_removed_api_version(API_VERSION_V1));
        assert!(validate_handler(HANDLER_WCOW_PROCESS).is_empty());
        assert!(validate_handler(HANDLER_WCOW_HYPERVISOR).is_empty());
        assert!(!validate_handler("runhcs.wcow").is_empty());
        assert!(!validate_handler("").is_empty());
    }
}
