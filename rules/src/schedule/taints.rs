//! Tolerations against taints, as the scheduler, the kubelet and the API server see them (kubernetes-windows-rules.md §3.1,
//! §3.2): `(*Toleration).ToleratesTaint` (k8s.io/api `core/v1/toleration.go`), `TolerationsTolerateTaint` and
//! `FindMatchingUntoleratedTaint` (component-helpers), the TaintToleration plugin's filter and score,
//! `ValidateTolerations` and `validateNodeTaints` (validation.go).

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::{ProblemKind, selector, supported_values};

/// `NoSchedule`: new pods that do not tolerate the taint are not scheduled onto the node.
pub const NO_SCHEDULE: &str = "NoSchedule";
/// `PreferNoSchedule`: the scheduler tries to avoid the node; never filters.
pub const PREFER_NO_SCHEDULE: &str = "PreferNoSchedule";
/// `NoExecute`: not scheduled, rejected by the kubelet at admission, and evicted when running.
pub const NO_EXECUTE: &str = "NoExecute";

/// The kubelet's admission reason when a pod bound with `spec.nodeName` does not tolerate a `NoExecute`
/// taint (`tainttoleration.ErrReasonNotMatch`).
pub const ERR_REASON_NOT_MATCH: &str = "node(s) had taints that the pod didn't tolerate";

/// The taints Kubernetes itself sets and lifts with a node's condition (kubernetes/api
/// `core/v1/well_known_taints.go`, kubernetes-windows-rules.md §3.2): the node lifecycle controller's and
/// the kubelet's (`not-ready`, `unreachable`, `unschedulable`, the pressures, `network-unavailable`),
/// the operator's `out-of-service`, the cloud provider's `uninitialized` and `shutdown`. Exact keys, not
/// the `node.kubernetes.io/` prefix: GKE's Windows taint `node.kubernetes.io/os` is none of them.
pub const CONDITION_TAINT_KEYS: &[&str] = &[
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/out-of-service",
    "node.cloudprovider.kubernetes.io/uninitialized",
    "node.cloudprovider.kubernetes.io/shutdown",
];

/// Whether a taint key is one Kubernetes sets for a node's condition ([`CONDITION_TAINT_KEYS`]): it
/// comes and goes with the condition, keeps no workload away for good, and a placement never adds a
/// toleration of it (a pod that tolerated `not-ready` could land on a node that is not ready).
///
/// ```
/// use winplace_rules::schedule::taints::is_condition_taint;
/// assert!(is_condition_taint("node.kubernetes.io/not-ready"));
/// assert!(!is_condition_taint("node.kubernetes.io/os"));
/// ```
pub fn is_condition_taint(key: &str) -> bool {
    CONDITION_TAINT_KEYS.contains(&key)
}

/// Options that change matching (feature gates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gates {
    /// `TaintTolerationComparisonOperators` (KEP-5471, alpha in 1.35, default off): enables the `Lt` and `Gt`
    /// toleration operators in matching and API validation.
    pub taint_comparison_operators: bool,
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("")
}

/// `ToleratesTaint` with the string comparison for keys and values passed in.
fn matches_with(t: &Toleration, taint: &Taint, gates: Gates, same: fn(&str, &str) -> bool) -> bool {
    let effect = opt(&t.effect);
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = opt(&t.key);
    if !key.is_empty() && !same(key, &taint.key) {
        return false;
    }
    let (value, taint_value) = (opt(&t.value), opt(&taint.value));
    match opt(&t.operator) {
        // An empty operator means Equal (there is no defaulting for tolerations).
        "" | "Equal" => same(value, taint_value),
        "Exists" => true,
        op @ ("Lt" | "Gt") => {
            if !gates.taint_comparison_operators {
                return false;
            }
            match (comparison_value(value), comparison_value(taint_value)) {
                (Some(tol), Some(tnt)) if op == "Lt" => tnt < tol,
                (Some(tol), Some(tnt)) => tnt > tol,
                _ => false,
            }
        }
        _ => false,
    }
}

/// `content.IsDecimalInteger`: "0", or an optional `-` then a digit 1-9 and more digits. Empty = valid.
pub fn decimal_integer_errors(value: &str) -> Vec<String> {
    const MSG: &str = "must be a valid decimal integer in canonical form";
    let b = value.as_bytes();
    let Some(&first) = b.first() else {
        return vec!["must be non-empty".to_string()];
    };
    if value == "0" {
        return Vec::new();
    }
    let digits = if first == b'-' { &b[1..] } else { b };
    match digits.first() {
        Some(d) if (b'1'..=b'9').contains(d) && digits.iter().all(u8::is_ascii_digit) => Vec::new(),
        _ => vec![MSG.to_string()],
    }
}

/// The number a toleration or taint value stands for under `Lt`/`Gt`: canonical decimal form
/// ([`decimal_integer_errors`]) that also fits in an int64 (`strconv.ParseInt(v, 10, 64)`).
pub fn comparison_value(value: &str) -> Option<i64> {
    if !decimal_integer_errors(value).is_empty() {
        return None;
    }
    value.parse::<i64>().ok()
}

/// Whether `toleration` tolerates `taint` (`ToleratesTaint`): effect, then key, then operator.
///
/// ```
/// use k8s_openapi::api::core::v1::{Taint, Toleration};
/// use winplace_rules::schedule::taints::{tolerates, Gates};
/// let taint = Taint { key: "os".into(), value: Some("windows".into()), effect: "NoSchedule".into(), ..Default::default() };
/// let all = Toleration { operator: Some("Exists".into()), ..Default::default() };
/// assert!(tolerates(&all, &taint, Gates::default()));
/// ```
pub fn tolerates(toleration: &Toleration, taint: &Taint, gates: Gates) -> bool {
    matches_with(toleration, taint, gates, |a, b| a == b)
}

/// `TolerationsTolerateTaint`: any toleration matches.
pub fn tolerated_by_any(tolerations: &[Toleration], taint: &Taint, gates: Gates) -> bool {
    tolerations.iter().any(|t| tolerates(t, taint, gates))
}

/// Whether the scheduler's filter looks at this taint (`DoNotScheduleTaintsFilterFunc`): `NoSchedule` or
/// `NoExecute`. `PreferNoSchedule` (and anything else) never filters.
pub fn filters(taint: &Taint) -> bool {
    taint.effect == NO_SCHEDULE || taint.effect == NO_EXECUTE
}

/// The first taint with a filtering effect that no toleration matches (`FindMatchingUntoleratedTaint` with
/// `DoNotScheduleTaintsFilterFunc`, as the TaintToleration filter calls it).
pub fn first_untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    gates: Gates,
) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|t| filters(t) && !tolerated_by_any(tolerations, t, gates))
}

/// The first untolerated `NoExecute` taint: the only effect the kubelet checks at admission, which is all
/// a pod bound with `spec.nodeName` (skipping the scheduler) meets. Gates off; see
/// [`first_untolerated_no_execute_with`].
pub fn first_untolerated_no_execute<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    first_untolerated_no_execute_with(taints, tolerations, Gates::default())
}

/// [`first_untolerated_no_execute`] with explicit gates (the kubelet honours the same comparison gate).
pub fn first_untolerated_no_execute_with<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    gates: Gates,
) -> Option<&'a Taint> {
    taints
        .iter()
        .find(|t| t.effect == NO_EXECUTE && !tolerated_by_any(tolerations, t, gates))
}

/// The TaintToleration score input: how many `PreferNoSchedule` taints are not tolerated, counting only
/// tolerations whose effect is empty or `PreferNoSchedule` (`getAllTolerationPreferNoSchedule`). Fewer is
/// better (the score is normalized in reverse).
pub fn count_intolerable_prefer_no_schedule(
    taints: &[Taint],
    tolerations: &[Toleration],
    gates: Gates,
) -> usize {
    let relevant: Vec<Toleration> = tolerations
        .iter()
        .filter(|t| matches!(opt(&t.effect), "" | PREFER_NO_SCHEDULE))
        .cloned()
        .collect();
    taints
        .iter()
        .filter(|t| t.effect == PREFER_NO_SCHEDULE && !tolerated_by_any(&relevant, t, gates))
        .count()
}

/// The scheduler's filter message for an untolerated taint: `node(s) had untolerated taint {<key>: <value>}`.
pub fn untolerated_reason(taint: &Taint) -> String {
    format!(
        "node(s) had untolerated taint {{{}: {}}}",
        taint.key,
        opt(&taint.value)
    )
}

/// A toleration that would match `taint` if its key, value, effect and operator were compared ignoring
/// ASCII case, but does not match exactly (`Windows` vs `windows`: Kubernetes compares case-sensitively,
/// and the API server refuses an effect or operator not spelt exactly). Gates off.
pub fn case_mismatch(toleration: &Toleration, taint: &Taint) -> bool {
    !case_differences(toleration, taint).is_empty()
}

/// One part of a toleration written in another letter case than the taint it is meant for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseDifference {
    /// `key`, `operator`, `value` or `effect`.
    pub field: &'static str,
    /// As the toleration writes it.
    pub written: String,
    /// As it must be written to tolerate the taint (`Equal`/`Exists` for the operator).
    pub wanted: String,
}

/// Every part in which `toleration` differs from `taint` only by letter case, in field order (key,
/// operator, value, effect), when respelling those parts makes it tolerate `taint` and it does not
/// already; else nothing. Gates off.
///
/// ```
/// use winplace_rules::schedule::taints::case_differences;
/// use k8s_openapi::api::core::v1::{Taint, Toleration};
/// let taint = Taint { key: "os".into(), value: Some("windows".into()), effect: "NoSchedule".into(), time_added: None };
/// let tol = Toleration { key: Some("OS".into()), value: Some("Windows".into()), effect: Some("noschedule".into()), ..Toleration::default() };
/// let fields: Vec<&str> = case_differences(&tol, &taint).iter().map(|d| d.field).collect();
/// assert_eq!(fields, ["key", "value", "effect"]);
/// ```
pub fn case_differences(toleration: &Toleration, taint: &Taint) -> Vec<CaseDifference> {
    let gates = Gates::default();
    if tolerates(toleration, taint, gates) {
        return Vec::new();
    }
    let mut differences = Vec::new();
    let mut fixed = toleration.clone();
    let mut respell = |field: &'static str, slot: &mut Option<String>, wanted: &str| {
        if let Some(written) = slot.as_deref()
            && written != wanted
            && written.eq_ignore_ascii_case(wanted)
        {
            differences.push(CaseDifference {
                field,
                written: written.to_string(),
                wanted: wanted.to_string(),
            });
            *slot = Some(wanted.to_string());
        }
    };
    respell("key", &mut fixed.key, &taint.key);
    let operator = opt(&toleration.operator);
    for known in ["Equal", "Exists"] {
        respell("operator", &mut fixed.operator, known);
        if operator.eq_ignore_ascii_case(known) {
            break;
        }
    }
    if !matches!(opt(&fixed.operator), "Exists") {
        respell("value", &mut fixed.value, opt(&taint.value));
    }
    respell("effect", &mut fixed.effect, &taint.effect);
    if tolerates(&fixed, taint, gates) {
        differences
    } else {
        Vec::new()
    }
}

/// `Taint.ToString()`: `key=value:Effect`, or `key:Effect` when the value is empty.
pub fn taint_display(t: &Taint) -> String {
    match opt(&t.value) {
        "" => format!("{}:{}", t.key, t.effect),
        v => format!("{}={}:{}", t.key, v, t.effect),
    }
}

/// The toleration of `t` as a user writes it (`{key: os, operator: Equal, value: windows, effect:
/// NoSchedule}`; `operator: Exists` for a taint without a value): what a message tells to add.
pub fn toleration_display(t: &Taint) -> String {
    match opt(&t.value) {
        "" => format!("{{key: {}, operator: Exists, effect: {}}}", t.key, t.effect),
        v => format!(
            "{{key: {}, operator: Equal, value: {v}, effect: {}}}",
            t.key, t.effect
        ),
    }
}

/// One problem `ValidateTolerations` finds in a toleration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TolerationProblem {
    /// The sub-field upstream reports the problem at: `key`, `operator`, `value`, `effect`. Note that
    /// upstream reports a bad value for `Equal` and a value given with `Exists` at `operator`.
    pub field: &'static str,
    /// Invalid, NotSupported, ...
    pub kind: ProblemKind,
    /// The upstream detail message.
    pub message: String,
}

/// API validation of one toleration (`ValidateTolerations`, validation.go), in upstream order.
///
/// With the comparison gate off, `Lt`/`Gt` are `NotSupported` like any unknown operator. With it on, their
/// value must be a canonical decimal int64 (`content.IsDecimalInteger`, then int64 range). The range
/// message (`must be a valid int64`) is derived: the upstream text was not read.
pub fn validate_toleration(t: &Toleration, gates: Gates) -> Vec<TolerationProblem> {
    let mut out = Vec::new();
    let mut push = |field, kind, message: String| {
        out.push(TolerationProblem {
            field,
            kind,
            message,
        })
    };
    let (key, op, value, effect) = (opt(&t.key), opt(&t.operator), opt(&t.value), opt(&t.effect));
    if !key.is_empty() {
        for m in selector::is_qualified_name(key) {
            push("key", ProblemKind::Invalid, m);
        }
    }
    if key.is_empty() && op != "Exists" {
        push(
            "operator",
            ProblemKind::Invalid,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"".to_string(),
        );
    }
    if t.toleration_seconds.is_some() && effect != NO_EXECUTE {
        push(
            "effect",
            ProblemKind::Invalid,
            "effect must be 'NoExecute' when `tolerationSeconds` is set".to_string(),
        );
    }
    match op {
        "" | "Equal" => {
            let errs = selector::is_valid_label_value(value);
            if !errs.is_empty() {
                push("operator", ProblemKind::Invalid, errs.join(";"));
            }
        }
        "Exists" => {
            if !value.is_empty() {
                push(
                    "operator",
                    ProblemKind::Invalid,
                    "value must be empty when `operator` is 'Exists'".to_string(),
                );
            }
        }
        "Lt" | "Gt" if gates.taint_comparison_operators => {
            let errs = decimal_integer_errors(value);
            if !errs.is_empty() {
                push("value", ProblemKind::Invalid, errs.join(";"));
            } else if value.parse::<i64>().is_err() {
                push(
                    "value",
                    ProblemKind::Invalid,
                    "must be a valid int64".to_string(),
                );
            }
        }
        _ => {
            let valid: &[&str] = if gates.taint_comparison_operators {
                &["Equal", "Exists", "Lt", "Gt"]
            } else {
                &["Equal", "Exists"]
            };
            push(
                "operator",
                ProblemKind::NotSupported,
                supported_values(valid),
            );
        }
    }
    if !effect.is_empty() && !matches!(effect, NO_SCHEDULE | PREFER_NO_SCHEDULE | NO_EXECUTE) {
        push(
            "effect",
            ProblemKind::NotSupported,
            supported_values(&[NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]),
        );
    }
    out
}

/// One problem `validateNodeTaints` finds in a Node's `spec.taints`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaintProblem {
    /// Index in `spec.taints`.
    pub index: usize,
    /// `key`, `value`, `effect`, or `""` for the taint as a whole (duplicates).
    pub field: &'static str,
    /// Invalid, Required, NotSupported, Duplicate.
    pub kind: ProblemKind,
    /// The upstream detail message.
    pub message: String,
}

/// API validation of a Node's taints (`validateNodeTaints`): key a qualified name, value a label value,
/// effect required and known, and (key, effect) pairs unique.
pub fn validate_node_taints(taints: &[Taint]) -> Vec<TaintProblem> {
    let mut out = Vec::new();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (index, t) in taints.iter().enumerate() {
        let mut push = |field, kind, message: String| {
            out.push(TaintProblem {
                index,
                field,
                kind,
                message,
            })
        };
        for m in selector::is_qualified_name(&t.key) {
            push("key", ProblemKind::Invalid, m);
        }
        let errs = selector::is_valid_label_value(opt(&t.value));
        if !errs.is_empty() {
            push("value", ProblemKind::Invalid, errs.join(";"));
        }
        if t.effect.is_empty() {
            push("effect", ProblemKind::Required, String::new());
        } else if !matches!(
            t.effect.as_str(),
            NO_SCHEDULE | PREFER_NO_SCHEDULE | NO_EXECUTE
        ) {
            push(
                "effect",
                ProblemKind::NotSupported,
                supported_values(&[NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE]),
            );
        }
        if seen.contains(&(t.key.as_str(), t.effect.as_str())) {
            push(
                "",
                ProblemKind::Duplicate,
                "taints must be unique by key and effect pair".to_string(),
            );
            continue;
        }
        seen.push((t.key.as_str(), t.effect.as_str()));
    }
    out
}

/// Two tolerations equal as the API server's Go structs would be (absent and empty strings are the same).
pub(crate) fn same_toleration(a: &Toleration, b: &Toleration) -> bool {
    same_ignoring_seconds(a, b) && a.toleration_seconds == b.toleration_seconds
}

fn same_ignoring_seconds(a: &Toleration, b: &Toleration) -> bool {
    opt(&a.key) == opt(&b.key)
        && opt(&a.operator) == opt(&b.operator)
        && opt(&a.value) == opt(&b.value)
        && opt(&a.effect) == opt(&b.effect)
}

/// Pod update rule (`validateOnlyAddedTolerations`): every existing toleration must still be there, changed
/// at most in `tolerationSeconds`. Returns the upstream Forbidden message when the update breaks the rule.
pub fn validate_toleration_update(old: &[Toleration], new: &[Toleration]) -> Option<String> {
    let kept = old
        .iter()
        .all(|o| new.iter().any(|n| same_ignoring_seconds(o, n)));
    (!kept)
        .then(|| "existing toleration can not be modified except its tolerationSeconds".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    /// A toleration from (key, operator, value, effect); `None` fields stay unset.
    fn tol(
        key: Option<&str>,
        op: Option<&str>,
        value: Option<&str>,
        effect: Option<&str>,
    ) -> Toleration {
        Toleration {
            key: key.map(String::from),
            operator: op.map(String::from),
            value: value.map(String::from),
            effect: effect.map(String::from),
            toleration_seconds: None,
        }
    }

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(String::from),
            effect: effect.into(),
            time_added: None,
        }
    }

    const OFF: Gates = Gates {
        taint_comparison_operators: false,
    };
    const ON: Gates = Gates {
        taint_comparison_operators: true,
    };

    #[test]
    fn tolerates_table() {
        let win = taint("os", Some("windows"), NO_SCHEDULE);
        // kubernetes-windows-rules.md §3.1.
        /// A toleration, a taint, the feature gates, whether it tolerates and why.
        struct ToleratesCase<'a> {
            toleration: Toleration,
            taint: Taint,
            gates: Gates,
            want: bool,
            why: &'a str,
        }
        let rows = vec![
            ToleratesCase {
                toleration: tol(
                    Some("os"),
                    Some("Equal"),
                    Some("windows"),
                    Some(NO_SCHEDULE),
                ),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "exact match",
            },
            ToleratesCase {
                toleration: tol(Some("os"), None, Some("windows"), Some(NO_SCHEDULE)),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "unset operator = Equal",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some(""), Some("windows"), Some(NO_SCHEDULE)),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "empty operator = Equal",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), Some("Windows"), None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "values case-sensitive",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), Some("WINDOWS"), None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "values case-sensitive",
            },
            ToleratesCase {
                toleration: tol(Some("OS"), Some("Equal"), Some("windows"), None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "keys case-sensitive",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), Some("windows "), None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "no trimming",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "Equal with empty value vs non-empty",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), None, None),
                taint: taint("os", None, NO_SCHEDULE),
                gates: OFF,
                want: true,
                why: "both values empty",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Equal"), Some(""), None),
                taint: taint("os", Some(""), NO_SCHEDULE),
                gates: OFF,
                want: true,
                why: "Some(\"\") = None",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "Exists ignores value",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), Some("linux"), None),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "Exists ignores even a wrong value",
            },
            ToleratesCase {
                toleration: tol(None, Some("Exists"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "empty key matches all keys",
            },
            ToleratesCase {
                toleration: tol(Some(""), Some("Exists"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "empty key string matches all keys",
            },
            ToleratesCase {
                toleration: tol(None, Some("Equal"), Some("windows"), None),
                taint: win.clone(),
                gates: OFF,
                want: true,
                why: "empty key + Equal (API rejects) still matches on value",
            },
            ToleratesCase {
                toleration: tol(None, Some("Exists"), None, Some(NO_EXECUTE)),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "effect checked before key",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), None, None),
                taint: taint("os", None, PREFER_NO_SCHEDULE),
                gates: OFF,
                want: true,
                why: "empty effect matches all",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), None, None),
                taint: taint("os", None, NO_EXECUTE),
                gates: OFF,
                want: true,
                why: "empty effect matches NoExecute",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), None, Some(NO_SCHEDULE)),
                taint: taint("os", None, NO_EXECUTE),
                gates: OFF,
                want: false,
                why: "different effect",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Exists"), None, Some("noschedule")),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "effect case-sensitive",
            },
            ToleratesCase {
                toleration: tol(Some("gpu"), Some("Exists"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "different key",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("exists"), None, None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "operator case-sensitive: unknown",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("In"), Some("windows"), None),
                taint: win.clone(),
                gates: OFF,
                want: false,
                why: "unknown operator",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Gt"), Some("1"), None),
                taint: taint("os", Some("5"), NO_SCHEDULE),
                gates: OFF,
                want: false,
                why: "Gt with gate off",
            },
            ToleratesCase {
                toleration: tol(Some("os"), Some("Lt"), Some("9"), None),
                taint: taint("os", Some("5"), NO_SCHEDULE),
                gates: OFF,
                want: false,
                why: "Lt with gate off",
            },
        ];
        for ToleratesCase {
            toleration: t,
            taint: tn,
            gates: g,
            want,
            why,
        } in rows
        {
            assert_eq!(tolerates(&t, &tn, g), want, "{why}: {t:?} vs {tn:?}");
        }
    }

    #[test]
    fn comparison_operators_table() {
        // (operator, toleration value, taint value, expected with gate on) — kubernetes-windows-rules.md §3.1 Lt/Gt.
        let rows: &[(&str, &str, &str, bool)] = &[
            ("Gt", "5", "6", true),
            ("Gt", "5", "5", false), // strict
            ("Gt", "5", "4", false),
            ("Lt", "5", "4", true),
            ("Lt", "5", "5", false), // strict
            ("Lt", "5", "6", false),
            ("Gt", "-5", "0", true),
            ("Lt", "0", "-1", true),
            ("Gt", "-10", "-9", true),
            ("Gt", "1", "05", false), // leading zero in taint
            ("Gt", "01", "5", false), // leading zero in toleration
            ("Gt", "1", "+5", false), // plus sign
            ("Gt", "1", " 5", false), // space
            ("Gt", "1", "5 ", false),
            ("Gt", "-1", "-0", false), // "-0" is not canonical
            ("Lt", "1", "0", true),    // "0" is canonical
            ("Gt", "1", "", false),    // empty
            ("Gt", "", "5", false),
            ("Gt", "1", "-", false),
            ("Gt", "1", "5.0", false),
            ("Gt", "1", "1e3", false),
            ("Gt", "1", "0x10", false),
            ("Gt", "1", "9223372036854775807", true), // int64 max
            ("Gt", "1", "9223372036854775808", false), // overflow
            ("Lt", "1", "-9223372036854775808", true), // int64 min
            ("Lt", "1", "-9223372036854775809", false), // underflow
            ("Gt", "1", "٣", false),                  // non-ASCII digit
        ];
        for (op, tv, tnv, want) in rows {
            let t = tol(Some("sla"), Some(op), Some(tv), None);
            let tn = taint("sla", Some(tnv), NO_SCHEDULE);
            assert_eq!(
                tolerates(&t, &tn, ON),
                *want,
                "{op} {tv:?} vs taint {tnv:?}"
            );
            assert!(
                !tolerates(&t, &tn, OFF),
                "gate off never matches: {op} {tv:?} {tnv:?}"
            );
        }
        // Key and effect are still checked first with comparison operators.
        let t = tol(Some("sla"), Some("Gt"), Some("1"), Some(NO_EXECUTE));
        assert!(!tolerates(&t, &taint("sla", Some("5"), NO_SCHEDULE), ON));
        assert!(!tolerates(
            &tol(Some("x"), Some("Gt"), Some("1"), None),
            &taint("sla", Some("5"), NO_SCHEDULE),
            ON
        ));
        assert!(tolerates(
            &tol(None, Some("Gt"), Some("1"), None),
            &taint("sla", Some("5"), NO_SCHEDULE),
            ON
        ));
    }

    #[test]
    fn decimal_integer_table() {
        let canon = "must be a valid decimal integer in canonical form";
        let rows: &[(&str, Option<&str>)] = &[
            ("0", None),
            ("7", None),
            ("-7", None),
            ("1234567890", None),
            ("99999999999999999999", None), // canonical, though too big for int64
            ("", Some("must be non-empty")),
            ("-", Some(canon)),
            ("-0", Some(canon)),
            ("00", Some(canon)),
            ("0700", Some(canon)),
            ("-01", Some(canon)),
            ("+5", Some(canon)),
            (" 5", Some(canon)),
            ("5 ", Some(canon)),
            ("1_000", Some(canon)),
            ("5a", Some(canon)),
        ];
        for (v, want) in rows {
            assert_eq!(
                decimal_integer_errors(v),
                want.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "{v:?}"
            );
        }
        assert_eq!(comparison_value("99999999999999999999"), None);
        assert_eq!(comparison_value("-42"), Some(-42));
    }

    #[test]
    fn any_toleration_tolerates() {
        // TolerationsTolerateTaint: ANY toleration matching is enough; none → not tolerated.
        let win = taint("os", Some("windows"), NO_SCHEDULE);
        let wrong = tol(Some("os"), None, Some("Windows"), None);
        let right = tol(Some("os"), None, Some("windows"), None);
        assert!(!tolerated_by_any(&[], &win, OFF));
        assert!(!tolerated_by_any(std::slice::from_ref(&wrong), &win, OFF));
        assert!(tolerated_by_any(&[wrong, right], &win, OFF));
    }

    #[test]
    fn effects_filter_table() {
        // kubernetes-windows-rules.md §3.2: only NoSchedule and NoExecute filter.
        let rows = [
            (NO_SCHEDULE, true),
            (NO_EXECUTE, true),
            (PREFER_NO_SCHEDULE, false),
            ("", false),
            ("noschedule", false),
            ("NoScheduleNoAdmit", false),
        ];
        for (effect, want) in rows {
            assert_eq!(filters(&taint("k", None, effect)), want, "{effect}");
        }
    }

    #[test]
    fn first_untolerated_table() {
        let taints = vec![
            taint("soft", None, PREFER_NO_SCHEDULE),
            taint("os", Some("windows"), NO_SCHEDULE),
            taint("evict", None, NO_EXECUTE),
        ];
        let tol_os = tol(
            Some("os"),
            Some("Equal"),
            Some("windows"),
            Some(NO_SCHEDULE),
        );
        let tol_evict = tol(Some("evict"), Some("Exists"), None, None);
        let all = tol(None, Some("Exists"), None, None);
        // PreferNoSchedule never filters, so it is skipped even when untolerated.
        assert_eq!(
            first_untolerated(&taints, &[], OFF).map(|t| t.key.as_str()),
            Some("os")
        );
        assert_eq!(
            first_untolerated(&taints, std::slice::from_ref(&tol_os), OFF).map(|t| t.key.as_str()),
            Some("evict")
        );
        assert_eq!(
            first_untolerated(&taints, &[tol_os.clone(), tol_evict.clone()], OFF),
            None
        );
        assert_eq!(
            first_untolerated(&taints, std::slice::from_ref(&all), OFF),
            None
        );
        assert_eq!(
            first_untolerated(&[taint("soft", None, PREFER_NO_SCHEDULE)], &[], OFF),
            None
        );
        // The kubelet only checks NoExecute.
        assert_eq!(
            first_untolerated_no_execute(&taints, &[]).map(|t| t.key.as_str()),
            Some("evict")
        );
        assert_eq!(first_untolerated_no_execute(&taints, &[tol_evict]), None);
        assert_eq!(first_untolerated_no_execute(&taints[..2], &[]), None);
        // Kubelet with the gate on honours Gt.
        let sla = [taint("sla", Some("7"), NO_EXECUTE)];
        let gt = [tol(Some("sla"), Some("Gt"), Some("5"), None)];
        assert!(first_untolerated_no_execute(&sla, &gt).is_some());
        assert!(first_untolerated_no_execute_with(&sla, &gt, ON).is_none());
    }

    #[test]
    fn prefer_no_schedule_score_table() {
        let taints = vec![
            taint("a", None, PREFER_NO_SCHEDULE),
            taint("b", None, PREFER_NO_SCHEDULE),
            taint("c", None, NO_SCHEDULE),
        ];
        assert_eq!(count_intolerable_prefer_no_schedule(&taints, &[], OFF), 2);
        // A NoSchedule-only toleration does not count for PreferNoSchedule taints.
        let ns = tol(Some("a"), Some("Exists"), None, Some(NO_SCHEDULE));
        assert_eq!(count_intolerable_prefer_no_schedule(&taints, &[ns], OFF), 2);
        let empty_effect = tol(Some("a"), Some("Exists"), None, None);
        assert_eq!(
            count_intolerable_prefer_no_schedule(&taints, &[empty_effect], OFF),
            1
        );
        let pns = tol(Some("b"), Some("Exists"), None, Some(PREFER_NO_SCHEDULE));
        assert_eq!(
            count_intolerable_prefer_no_schedule(&taints, &[pns], OFF),
            1
        );
    }

    #[test]
    fn messages() {
        assert_eq!(
            untolerated_reason(&taint("os", Some("windows"), NO_SCHEDULE)),
            "node(s) had untolerated taint {os: windows}"
        );
        assert_eq!(
            untolerated_reason(&taint("dedicated", None, NO_SCHEDULE)),
            "node(s) had untolerated taint {dedicated: }"
        );
        assert_eq!(
            ERR_REASON_NOT_MATCH,
            "node(s) had taints that the pod didn't tolerate"
        );
        assert_eq!(
            taint_display(&taint("os", Some("windows"), NO_SCHEDULE)),
            "os=windows:NoSchedule"
        );
        assert_eq!(
            taint_display(&taint("key", None, NO_SCHEDULE)),
            "key:NoSchedule"
        );
        assert_eq!(
            taint_display(&taint("key", Some(""), NO_EXECUTE)),
            "key:NoExecute"
        );
    }

    #[test]
    fn case_mismatch_table() {
        let win = taint("os", Some("windows"), NO_SCHEDULE);
        let rows = [
            (
                tol(
                    Some("os"),
                    Some("Equal"),
                    Some("Windows"),
                    Some(NO_SCHEDULE),
                ),
                true,
            ),
            (tol(Some("OS"), Some("Equal"), Some("windows"), None), true),
            (tol(Some("Os"), None, Some("WINDOWS"), None), true),
            (tol(Some("os"), Some("Equal"), Some("windows"), None), false), // exact match: no mismatch
            (tol(Some("os"), Some("Equal"), Some("linux"), None), false), // different, not just case
            (tol(Some("OS"), Some("Exists"), None, None), true),
            (
                tol(Some("os"), Some("Equal"), Some("Windows"), Some(NO_EXECUTE)),
                false,
            ), // effect differs
            (
                tol(
                    Some("os"),
                    Some("Equal"),
                    Some("Windows"),
                    Some("noschedule"),
                ),
                true,
            ), // the effect's case too (the API server refuses `noschedule`)
            (tol(Some("os"), Some("exists"), None, None), true),
            (tol(Some("os"), Some("Exists"), Some("x"), None), false), // not a case matter
        ];
        for (t, want) in rows {
            assert_eq!(case_mismatch(&t, &win), want, "{t:?}");
        }
    }

    fn problems(t: &Toleration, g: Gates) -> Vec<(&'static str, ProblemKind, String)> {
        validate_toleration(t, g)
            .into_iter()
            .map(|p| (p.field, p.kind, p.message))
            .collect()
    }

    #[test]
    fn validate_toleration_table() {
        use ProblemKind::*;
        let empty_key = "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
        let secs = "effect must be 'NoExecute' when `tolerationSeconds` is set";
        let exists_value = "value must be empty when `operator` is 'Exists'";
        let eq_ex = r#"supported values: "Equal", "Exists""#;
        let effects = r#"supported values: "NoSchedule", "PreferNoSchedule", "NoExecute""#;
        let canon = "must be a valid decimal integer in canonical form";
        let mut with_secs = tol(Some("os"), Some("Exists"), None, Some(NO_SCHEDULE));
        with_secs.toleration_seconds = Some(30);
        let mut secs_ok = tol(Some("os"), Some("Exists"), None, Some(NO_EXECUTE));
        secs_ok.toleration_seconds = Some(30);
        let mut secs_no_effect = tol(Some("os"), Some("Exists"), None, None);
        secs_no_effect.toleration_seconds = Some(0);
        /// A toleration, the feature gates and the problems it has.
        struct ProblemCase<'a> {
            toleration: Toleration,
            gates: Gates,
            want: Vec<(&'a str, ProblemKind, &'a str)>,
        }
        let rows = vec![
            ProblemCase {
                toleration: tol(
                    Some("os"),
                    Some("Equal"),
                    Some("windows"),
                    Some(NO_SCHEDULE),
                ),
                gates: OFF,
                want: vec![],
            },
            ProblemCase {
                toleration: tol(Some("os"), None, Some("windows"), None),
                gates: OFF,
                want: vec![],
            },
            ProblemCase {
                toleration: tol(None, Some("Exists"), None, None),
                gates: OFF,
                want: vec![],
            },
            ProblemCase {
                toleration: tol(None, Some("Equal"), Some("x"), None),
                gates: OFF,
                want: vec![("operator", Invalid, empty_key)],
            },
            ProblemCase {
                toleration: tol(None, None, None, None),
                gates: OFF,
                want: vec![("operator", Invalid, empty_key)],
            },
            ProblemCase {
                toleration: with_secs,
                gates: OFF,
                want: vec![("effect", Invalid, secs)],
            },
            ProblemCase {
                toleration: secs_ok,
                gates: OFF,
                want: vec![],
            },
            ProblemCase {
                toleration: secs_no_effect,
                gates: OFF,
                want: vec![("effect", Invalid, secs)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Exists"), Some("windows"), None),
                gates: OFF,
                want: vec![("operator", Invalid, exists_value)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("exists"), None, None),
                gates: OFF,
                want: vec![("operator", NotSupported, eq_ex)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Lt"), Some("5"), None),
                gates: OFF,
                want: vec![("operator", NotSupported, eq_ex)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some("5"), None),
                gates: OFF,
                want: vec![("operator", NotSupported, eq_ex)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some("5"), None),
                gates: ON,
                want: vec![],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Lt"), Some("-5"), None),
                gates: ON,
                want: vec![],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some("05"), None),
                gates: ON,
                want: vec![("value", Invalid, canon)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some("+5"), None),
                gates: ON,
                want: vec![("value", Invalid, canon)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some(""), None),
                gates: ON,
                want: vec![("value", Invalid, "must be non-empty")],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Gt"), Some("9223372036854775808"), None),
                gates: ON,
                want: vec![("value", Invalid, "must be a valid int64")],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("In"), None, None),
                gates: ON,
                want: vec![(
                    "operator",
                    NotSupported,
                    r#"supported values: "Equal", "Exists", "Lt", "Gt""#,
                )],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Exists"), None, Some("NoScheduleNoAdmit")),
                gates: OFF,
                want: vec![("effect", NotSupported, effects)],
            },
            ProblemCase {
                toleration: tol(Some("os"), Some("Exists"), None, Some("noschedule")),
                gates: OFF,
                want: vec![("effect", NotSupported, effects)],
            },
        ];
        for ProblemCase {
            toleration: t,
            gates: g,
            want,
        } in rows
        {
            let want: Vec<(&str, ProblemKind, String)> = want
                .into_iter()
                .map(|(f, k, m)| (f, k, m.to_string()))
                .collect();
            assert_eq!(problems(&t, g), want, "{t:?}");
        }
        // A bad key and a bad Equal value (reported at `operator`, as upstream does).
        let p = problems(
            &tol(Some("bad key"), Some("Equal"), Some("Win dows"), None),
            OFF,
        );
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].0, p[0].1), ("key", Invalid));
        assert!(p[0].2.starts_with("name part must consist of"));
        assert_eq!((p[1].0, p[1].1), ("operator", Invalid));
        assert!(p[1].2.starts_with("a valid label must be an empty string"));
    }

    #[test]
    fn validate_node_taints_table() {
        use ProblemKind::*;
        let ok = vec![
            taint("os", Some("windows"), NO_SCHEDULE),
            taint("os", Some("windows"), NO_EXECUTE),
        ];
        assert!(
            validate_node_taints(&ok).is_empty(),
            "same key, different effects is fine"
        );
        let dup = vec![
            taint("os", Some("windows"), NO_SCHEDULE),
            taint("os", Some("linux"), NO_SCHEDULE),
        ];
        let p = validate_node_taints(&dup);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].index, p[0].field, p[0].kind), (1, "", Duplicate));
        assert_eq!(p[0].message, "taints must be unique by key and effect pair");
        let p = validate_node_taints(&[taint("os", None, "")]);
        assert_eq!((p[0].field, p[0].kind), ("effect", Required));
        let p = validate_node_taints(&[taint("os", None, "Bogus")]);
        assert_eq!((p[0].field, p[0].kind), ("effect", NotSupported));
        let p = validate_node_taints(&[taint("", Some("a b"), NO_SCHEDULE)]);
        assert_eq!(
            p.iter().map(|p| p.field).collect::<Vec<_>>(),
            vec!["key", "key", "value"]
        );
    }

    #[test]
    fn toleration_update_table() {
        let a = tol(Some("a"), Some("Exists"), None, Some(NO_EXECUTE));
        let mut a30 = a.clone();
        a30.toleration_seconds = Some(30);
        let b = tol(Some("b"), Some("Exists"), None, None);
        assert_eq!(
            validate_toleration_update(std::slice::from_ref(&a), &[a.clone(), b.clone()]),
            None,
            "adding is fine"
        );
        assert_eq!(
            validate_toleration_update(std::slice::from_ref(&a), std::slice::from_ref(&a30)),
            None,
            "seconds may change"
        );
        assert_eq!(
            validate_toleration_update(&[a.clone(), b.clone()], std::slice::from_ref(&a))
                .as_deref(),
            Some("existing toleration can not be modified except its tolerationSeconds"),
            "removing is forbidden"
        );
        let a_changed = tol(Some("a"), Some("Exists"), None, None);
        assert!(
            validate_toleration_update(&[a], &[a_changed]).is_some(),
            "changing effect is forbidden"
        );
        // None and Some("") are the same Go string.
        let x = tol(Some("x"), None, None, None);
        let x2 = tol(Some("x"), Some(""), Some(""), Some(""));
        assert!(validate_toleration_update(&[x], &[x2]).is_none());
        assert!(same_toleration(
            &tol(Some("x"), None, None, None),
            &tol(Some("x"), Some(""), None, Some(""))
        ));
    }

    // ---- property test against an independent model -------------------------------------------------

    /// The model: a taint is tolerated when every field the toleration names agrees with it. Integers for
    /// Lt/Gt are canonical exactly when they print back unchanged.
    #[allow(clippy::too_many_arguments)]
    fn model(
        k: &str,
        op: &str,
        v: &str,
        e: &str,
        tk: &str,
        tv: &str,
        te: &str,
        gate: bool,
    ) -> bool {
        let canonical = |s: &str| s.parse::<i64>().ok().filter(|n| n.to_string() == s);
        let effect_ok = e.is_empty() || e == te;
        let key_ok = k.is_empty() || k == tk;
        let value_ok = match op {
            "Exists" => true,
            "Equal" | "" => v == tv,
            "Lt" => gate && matches!((canonical(v), canonical(tv)), (Some(a), Some(b)) if b < a),
            "Gt" => gate && matches!((canonical(v), canonical(tv)), (Some(a), Some(b)) if b > a),
            _ => false,
        };
        effect_ok && key_ok && value_ok
    }

    fn pick(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        proptest::sample::select(options)
    }

    const KEYS: &[&str] = &["", "os", "OS", "Os", "gpu"];
    const OPS: &[&str] = &["", "Equal", "Exists", "Lt", "Gt", "exists", "In"];
    const VALUES: &[&str] = &[
        "",
        "windows",
        "Windows",
        "WINDOWS",
        "0",
        "5",
        "05",
        "-3",
        "+3",
        "-0",
        "10",
        " 5",
        "9223372036854775807",
        "9223372036854775808",
    ];
    const EFFECTS: &[&str] = &[
        "",
        "NoSchedule",
        "PreferNoSchedule",
        "NoExecute",
        "noschedule",
    ];

    proptest! {
        #[test]
        fn tolerates_agrees_with_model(
            k in pick(KEYS), op in pick(OPS), v in pick(VALUES), e in pick(EFFECTS),
            tk in pick(KEYS), tv in pick(VALUES), te in pick(EFFECTS),
            unset in 0u8..16, gate in any::<bool>(),
        ) {
            // Empty strings are sometimes left unset (None), which must mean the same.
            let field = |s: &str, bit: u8| if s.is_empty() && unset & bit != 0 { None } else { some(s) };
            let t = Toleration { key: field(k, 1), operator: field(op, 2), value: field(v, 4), effect: field(e, 8), toleration_seconds: None };
            let tn = Taint { key: tk.into(), value: field(tv, 4), effect: te.into(), time_added: None };
            let g = Gates { taint_comparison_operators: gate };
            prop_assert_eq!(tolerates(&t, &tn, g), model(k, op, v, e, tk, tv, te, gate));
            // case_mismatch implies no exact match, and exact match implies a case-insensitive match.
            if case_mismatch(&t, &tn) { prop_assert!(!tolerates(&t, &tn, Gates::default())); }
            let lower = |s: &str| s.to_ascii_lowercase();
            if tolerates(&t, &tn, Gates::default()) {
                prop_assert!(model(&lower(k), op, &lower(v), e, &lower(tk), &lower(tv), te, false));
            }
        }
    }
}
