//! Node affinity as the scheduler evaluates it (component-helpers `scheduling/corev1/nodeaffinity`,
//! apimachinery `labels.Requirement`, kubernetes-windows-rules.md §3.4) and as the API server validates it
//! (`ValidateNodeSelector`, `ValidateNodeSelectorRequirement`, `ValidateNodeFieldSelectorRequirement`,
//! `ValidatePreferredSchedulingTerms`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodSpec,
    PreferredSchedulingTerm,
};

use super::{ProblemKind, go_quote, selector, supported_values};
use crate::path::FieldPath;

/// The node affinity filter's failure reason (`nodeaffinity.ErrReasonPod`).
pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";

/// The only field `matchFields` can select on.
pub const NODE_NAME_FIELD: &str = "metadata.name";

static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();

/// The node as the matcher sees it: labels and name.
#[derive(Debug, Clone, Copy)]
pub struct NodeFacts<'a> {
    /// `metadata.name` (matched by `matchFields`; empty means "unknown", see [`term_matches`]).
    pub name: &'a str,
    /// `metadata.labels`.
    pub labels: &'a BTreeMap<String, String>,
}

impl<'a> NodeFacts<'a> {
    /// The facts of a Node object (missing name or labels read as empty).
    pub fn from_node(node: &'a Node) -> Self {
        NodeFacts {
            name: node.metadata.name.as_deref().unwrap_or(""),
            labels: node.metadata.labels.as_ref().unwrap_or(&NO_LABELS),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LabelOp {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

/// A `matchExpressions` entry parsed as `nodeSelectorRequirementsAsSelector` + `labels.NewRequirement` do.
struct LabelRequirement<'r> {
    key: &'r str,
    op: LabelOp,
    values: &'r [String],
}

/// Why a `matchExpressions` or `matchFields` entry does not parse (upstream records the error and the term it
/// is in matches nothing). Written as apimachinery's field errors, relative to the requirement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    /// The operator is not one of `supported` (operators are case-sensitive).
    #[error(
        "operator: {}: {}: {}",
        ProblemKind::NotSupported.as_str(),
        go_quote(.operator),
        supported_values(.supported)
    )]
    UnsupportedOperator {
        /// The operator given.
        operator: String,
        /// The operators this kind of requirement takes.
        supported: &'static [&'static str],
    },
    /// The key or the values are invalid; every problem found, in upstream's order.
    #[error("{}", join_problems(.0))]
    Invalid(Vec<RequirementProblem>),
}

/// One invalid part of a node selector requirement whose operator is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequirementProblem {
    /// The key is not a qualified name (`detail` says why).
    #[error("{}", invalid("key", .key, .detail))]
    Key {
        /// The key.
        key: String,
        /// What `IsQualifiedName` says.
        detail: String,
    },
    /// `In` or `NotIn` without values.
    #[error("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")]
    NoValues,
    /// `Exists` or `DoesNotExist` with values.
    #[error("values: Invalid value: [...]: values set must be empty for exists and does not exist")]
    ValuesNotEmpty,
    /// `Gt` or `Lt` without exactly one value.
    #[error(
        "values: Invalid value: [...]: for 'Gt', 'Lt' operators, exactly one value is required"
    )]
    NotOneComparand,
    /// A `Gt` or `Lt` value that is not an integer.
    #[error(
        "{}",
        invalid(&format!("values[{index}]"), .value, "for 'Gt', 'Lt' operators, the value must be an integer")
    )]
    NotAnInteger {
        /// Its index in `values`.
        index: usize,
        /// The value.
        value: String,
    },
    /// A value that is not a valid label value (`detail` says why).
    #[error("{}", invalid(&format!("values[{index}][{key}]"), .value, .detail))]
    LabelValue {
        /// Its index in `values`.
        index: usize,
        /// The requirement's key.
        key: String,
        /// The value.
        value: String,
        /// What `IsValidLabelValue` says.
        detail: String,
    },
    /// A `matchFields` entry without exactly one value.
    #[error("values: Invalid value: [...]: must have one element")]
    NotOneField,
}

fn join_problems(problems: &[RequirementProblem]) -> String {
    let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

fn invalid(field: &str, value: &str, detail: &str) -> String {
    format!(
        "{field}: {}: {}: {detail}",
        ProblemKind::Invalid.as_str(),
        go_quote(value)
    )
}

fn parse_label_requirement(
    req: &NodeSelectorRequirement,
) -> Result<LabelRequirement<'_>, RequirementError> {
    let values: &[String] = req.values.as_deref().unwrap_or(&[]);
    let op = match req.operator.as_str() {
        "In" => LabelOp::In,
        "NotIn" => LabelOp::NotIn,
        "Exists" => LabelOp::Exists,
        "DoesNotExist" => LabelOp::DoesNotExist,
        "Gt" => LabelOp::Gt,
        "Lt" => LabelOp::Lt,
        other => {
            return Err(RequirementError::UnsupportedOperator {
                operator: other.to_string(),
                supported: &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
            });
        }
    };
    let mut errs = Vec::new();
    for detail in selector::is_qualified_name(&req.key) {
        errs.push(RequirementProblem::Key {
            key: req.key.clone(),
            detail,
        });
    }
    let count = values.len();
    match op {
        LabelOp::In | LabelOp::NotIn if count == 0 => errs.push(RequirementProblem::NoValues),
        LabelOp::Exists | LabelOp::DoesNotExist if count != 0 => {
            errs.push(RequirementProblem::ValuesNotEmpty)
        }
        LabelOp::Gt | LabelOp::Lt => {
            if count != 1 {
                errs.push(RequirementProblem::NotOneComparand);
            }
            for (index, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(RequirementProblem::NotAnInteger {
                        index,
                        value: v.clone(),
                    });
                }
            }
        }
        _ => {}
    }
    for (index, v) in values.iter().enumerate() {
        for detail in selector::is_valid_label_value(v) {
            errs.push(RequirementProblem::LabelValue {
                index,
                key: req.key.clone(),
                value: v.clone(),
                detail,
            });
        }
    }
    if errs.is_empty() {
        Ok(LabelRequirement {
            key: &req.key,
            op,
            values,
        })
    } else {
        Err(RequirementError::Invalid(errs))
    }
}

impl LabelRequirement<'_> {
    /// `labels.Requirement.Matches`.
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let label = labels.get(self.key);
        let listed = |v: &String| self.values.contains(v);
        match self.op {
            LabelOp::In => label.is_some_and(listed),
            LabelOp::NotIn => label.is_none_or(|v| !listed(v)),
            LabelOp::Exists => label.is_some(),
            LabelOp::DoesNotExist => label.is_none(),
            LabelOp::Gt | LabelOp::Lt => {
                // strconv.ParseInt(s, 10, 64): sign allowed, leading zeros allowed ("0206").
                let (Some(label), [want]) = (label, self.values) else {
                    return false;
                };
                let (Ok(have), Ok(want)) = (label.parse::<i64>(), want.parse::<i64>()) else {
                    return false;
                };
                if self.op == LabelOp::Gt {
                    have > want
                } else {
                    have < want
                }
            }
        }
    }
}

/// Whether one `matchExpressions` entry holds for these labels (`labels.Requirement.Matches`).
///
/// `Err` is the parse error upstream would record (the term it is in then matches nothing): unknown
/// operator, wrong number of values, a non-integer `Gt`/`Lt` value, an invalid key or label value.
/// The error text follows apimachinery's field errors, relative to the requirement.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::api::core::v1::NodeSelectorRequirement;
/// use winplace_rules::schedule::affinity::requirement_matches;
/// let req = NodeSelectorRequirement { key: "gpu".into(), operator: "NotIn".into(), values: Some(vec!["a100".into()]) };
/// assert_eq!(requirement_matches(&req, &BTreeMap::new()), Ok(true)); // NotIn matches an absent label
/// ```
pub fn requirement_matches(
    req: &NodeSelectorRequirement,
    labels: &BTreeMap<String, String>,
) -> Result<bool, RequirementError> {
    parse_label_requirement(req).map(|r| r.matches(labels))
}

/// A `matchFields` entry as `nodeSelectorRequirementsAsFieldSelector` parses it.
fn parse_field_requirement(
    req: &NodeSelectorRequirement,
) -> Result<(bool, &str, &str), RequirementError> {
    let values: &[String] = req.values.as_deref().unwrap_or(&[]);
    let in_op = match req.operator.as_str() {
        "In" => true,
        "NotIn" => false,
        other => {
            return Err(RequirementError::UnsupportedOperator {
                operator: other.to_string(),
                supported: &["In", "NotIn"],
            });
        }
    };
    match values {
        [v] => Ok((in_op, req.key.as_str(), v.as_str())),
        _ => Err(RequirementError::Invalid(vec![
            RequirementProblem::NotOneField,
        ])),
    }
}

fn is_empty_term(term: &NodeSelectorTerm) -> bool {
    term.match_expressions.as_ref().is_none_or(Vec::is_empty)
        && term.match_fields.as_ref().is_none_or(Vec::is_empty)
}

/// Whether a node selector term selects the node (`nodeSelectorTerm.match`).
///
/// All `matchExpressions` must hold and all `matchFields` must hold. A term with a parse error, or with
/// neither list (upstream drops such terms: "nil or empty term selects no objects"), matches nothing.
/// Quirk kept from upstream: `matchFields` is only checked when the node has a non-empty name.
/// `matchFields` compare against `metadata.name`; any other field reads as `""`.
pub fn term_matches(term: &NodeSelectorTerm, node: NodeFacts) -> bool {
    if is_empty_term(term) {
        return false;
    }
    let exprs: &[NodeSelectorRequirement] = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields: &[NodeSelectorRequirement] = term.match_fields.as_deref().unwrap_or(&[]);
    // Parse everything first: a parse error anywhere in the term makes it match nothing.
    let Ok(labels) = exprs
        .iter()
        .map(parse_label_requirement)
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    let Ok(fields) = fields
        .iter()
        .map(parse_field_requirement)
        .collect::<Result<Vec<_>, _>>()
    else {
        return false;
    };
    if !labels.iter().all(|r| r.matches(node.labels)) {
        return false;
    }
    if node.name.is_empty() {
        return true;
    }
    fields.iter().all(|&(in_op, key, value)| {
        let have = if key == NODE_NAME_FIELD {
            node.name
        } else {
            ""
        };
        (have == value) == in_op
    })
}

/// The pod's required node affinity, `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`
/// (RuntimeClasses add none): the one walk down to it for the rules, the resolver and the audit.
///
/// ```
/// use k8s_openapi::api::core::v1::Affinity;
/// use winplace_rules::schedule::affinity::required_node_affinity;
/// let affinity: Affinity = serde_json::from_value(serde_json::json!({"nodeAffinity": {
///     "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}}})).unwrap();
/// assert_eq!(required_node_affinity(Some(&affinity)).unwrap().node_selector_terms.len(), 1);
/// assert!(required_node_affinity(None).is_none());
/// ```
pub fn required_node_affinity(affinity: Option<&Affinity>) -> Option<&NodeSelector> {
    affinity?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
}

/// One `matchExpressions` requirement of a required node selector, with where it is.
#[derive(Debug, Clone, Copy)]
pub struct TermExpression<'a> {
    /// The index of its term in `nodeSelectorTerms`.
    pub term: usize,
    /// Its index in the term's `matchExpressions`.
    pub index: usize,
    /// The requirement.
    pub requirement: &'a NodeSelectorRequirement,
}

impl TermExpression<'_> {
    /// Its path under the selector's own path: `{selector}.nodeSelectorTerms[term].matchExpressions[index]`.
    pub fn path(&self, selector: &FieldPath) -> FieldPath {
        selector
            .field("nodeSelectorTerms")
            .index(self.term)
            .field("matchExpressions")
            .index(self.index)
    }
}

/// Every `matchExpressions` requirement of the selector's terms, term by term, in order (none for
/// `None`).
///
/// ```
/// use k8s_openapi::api::core::v1::NodeSelector;
/// use winplace_rules::schedule::affinity::term_expressions;
/// let selector: NodeSelector = serde_json::from_value(serde_json::json!({"nodeSelectorTerms": [
///     {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
///     {"matchExpressions": [{"key": "b", "operator": "Exists"}, {"key": "c", "operator": "Exists"}]}]})).unwrap();
/// let at: Vec<(usize, usize, &str)> = term_expressions(Some(&selector))
///     .map(|e| (e.term, e.index, e.requirement.key.as_str()))
///     .collect();
/// assert_eq!(at, [(0, 0, "a"), (1, 0, "b"), (1, 1, "c")]);
/// ```
pub fn term_expressions(
    selector: Option<&NodeSelector>,
) -> impl Iterator<Item = TermExpression<'_>> {
    selector
        .into_iter()
        .flat_map(|s| s.node_selector_terms.iter().enumerate())
        .flat_map(|(term, t)| {
            t.match_expressions
                .iter()
                .flatten()
                .enumerate()
                .map(move |(index, requirement)| TermExpression {
                    term,
                    index,
                    requirement,
                })
        })
}

/// Whether some term of the selector has `matchFields` (nodes named one by one).
pub fn has_match_fields(selector: Option<&NodeSelector>) -> bool {
    selector.is_some_and(|s| {
        s.node_selector_terms
            .iter()
            .any(|t| t.match_fields.as_ref().is_some_and(|f| !f.is_empty()))
    })
}

/// Whether a required node selector (`requiredDuringSchedulingIgnoredDuringExecution`) selects the node
/// (`LazyErrorNodeSelector.Match`): `None` → no constraint; terms are ORed; empty terms are dropped; a
/// selector with no remaining term selects nothing.
pub fn required_affinity_matches(selector: Option<&NodeSelector>, node: NodeFacts) -> bool {
    match selector {
        None => true,
        Some(sel) => sel
            .node_selector_terms
            .iter()
            .filter(|t| !is_empty_term(t))
            .any(|t| term_matches(t, node)),
    }
}

/// nodeSelector AND required node affinity (`RequiredNodeAffinity.Match`), nodeSelector first.
pub fn pod_matches_node(
    node_selector: Option<&BTreeMap<String, String>>,
    affinity: Option<&Affinity>,
    node: NodeFacts,
) -> bool {
    if let Some(sel) = node_selector
        && !selector::node_selector_matches(sel, node.labels)
    {
        return false;
    }
    required_affinity_matches(required_node_affinity(affinity), node)
}

/// [`pod_matches_node`] for a pod spec.
pub fn pod_spec_matches_node(spec: &PodSpec, node: NodeFacts) -> bool {
    pod_matches_node(spec.node_selector.as_ref(), spec.affinity.as_ref(), node)
}

/// The preferred-affinity score of a node: the sum of the weights of the preferred terms that match
/// (`PreferredSchedulingTerms.Score`). Terms with weight 0 or an empty preference are skipped.
///
/// Divergence: upstream fails the whole scoring step when a preferred term does not parse (possible only
/// with a non-integer `Gt`/`Lt` value, which the API accepts); here such a term just scores nothing.
pub fn preferred_score(terms: &[PreferredSchedulingTerm], node: NodeFacts) -> i32 {
    terms
        .iter()
        .filter(|t| t.weight != 0 && !is_empty_term(&t.preference))
        .filter(|t| term_matches(&t.preference, node))
        .fold(0i32, |acc, t| acc.saturating_add(t.weight))
}

/// API validation of a required node selector (`ValidateNodeSelector` and friends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AffinityProblem {
    /// Path relative to the NodeSelector (or to the preferred list for [`validate_preferred_terms`]):
    /// `nodeSelectorTerms`, `nodeSelectorTerms[0].matchExpressions[1].values`, ...
    pub path: String,
    /// Required, Forbidden, Invalid.
    pub kind: ProblemKind,
    /// The upstream detail message.
    pub message: String,
}

/// API validation of a required node selector: at least one term; each term's requirements checked
/// (`ValidateNodeSelectorRequirement`: value counts per operator, key a qualified name, values label
/// values; `ValidateNodeFieldSelectorRequirement`: In/NotIn with exactly one value, key `metadata.name`,
/// value a node name). Integer-ness of `Gt`/`Lt` values is not checked by the API.
///
/// Label values are checked as for a new object (`AllowInvalidLabelValueInRequiredNodeAffinity` off).
pub fn validate_node_selector(sel: &NodeSelector) -> Vec<AffinityProblem> {
    let mut out = Vec::new();
    if sel.node_selector_terms.is_empty() {
        out.push(AffinityProblem {
            path: "nodeSelectorTerms".to_string(),
            kind: ProblemKind::Required,
            message: "must have at least one node selector term".to_string(),
        });
        return out;
    }
    for (i, term) in sel.node_selector_terms.iter().enumerate() {
        validate_term(term, &format!("nodeSelectorTerms[{i}]"), true, &mut out);
    }
    out
}

/// API validation of preferred terms (`ValidatePreferredSchedulingTerms`): weight 1–100 and each
/// preference's requirements. Paths are relative to the list (`[0].weight`, `[0].preference.matchFields[0].key`).
pub fn validate_preferred_terms(terms: &[PreferredSchedulingTerm]) -> Vec<AffinityProblem> {
    let mut out = Vec::new();
    for (i, t) in terms.iter().enumerate() {
        if t.weight <= 0 || t.weight > 100 {
            out.push(AffinityProblem {
                path: format!("[{i}].weight"),
                kind: ProblemKind::Invalid,
                message: "must be in the range 1-100".to_string(),
            });
        }
        validate_term(&t.preference, &format!("[{i}].preference"), false, &mut out);
    }
    out
}

fn validate_term(
    term: &NodeSelectorTerm,
    base: &str,
    label_values: bool,
    out: &mut Vec<AffinityProblem>,
) {
    let mut push = |path: String, kind, message: &str| {
        out.push(AffinityProblem {
            path,
            kind,
            message: message.to_string(),
        });
    };
    for (j, rq) in term.match_expressions.iter().flatten().enumerate() {
        let p = format!("{base}.matchExpressions[{j}]");
        let values: &[String] = rq.values.as_deref().unwrap_or(&[]);
        match rq.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => push(
                format!("{p}.values"),
                ProblemKind::Required,
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            "Exists" | "DoesNotExist" if !values.is_empty() => push(
                format!("{p}.values"),
                ProblemKind::Forbidden,
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
            "Gt" | "Lt" if values.len() != 1 => push(
                format!("{p}.values"),
                ProblemKind::Required,
                "must be specified single value when `operator` is 'Lt' or 'Gt'",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
            _ => push(
                format!("{p}.operator"),
                ProblemKind::Invalid,
                "not a valid selector operator",
            ),
        }
        for m in selector::is_qualified_name(&rq.key) {
            push(format!("{p}.key"), ProblemKind::Invalid, &m);
        }
        if label_values {
            for (k, v) in values.iter().enumerate() {
                for m in selector::is_valid_label_value(v) {
                    push(format!("{p}.values[{k}]"), ProblemKind::Invalid, &m);
                }
            }
        }
    }
    for (j, rq) in term.match_fields.iter().flatten().enumerate() {
        let p = format!("{base}.matchFields[{j}]");
        let values: &[String] = rq.values.as_deref().unwrap_or(&[]);
        match rq.operator.as_str() {
            "In" | "NotIn" => {
                if values.len() != 1 {
                    push(
                        format!("{p}.values"),
                        ProblemKind::Required,
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    );
                }
            }
            _ => push(
                format!("{p}.operator"),
                ProblemKind::Invalid,
                "not a valid selector operator",
            ),
        }
        if rq.key != NODE_NAME_FIELD {
            push(
                format!("{p}.key"),
                ProblemKind::Invalid,
                "not a valid field selector key",
            );
        } else {
            for (k, v) in values.iter().enumerate() {
                for m in selector::is_dns1123_subdomain(v) {
                    push(format!("{p}.values[{k}]"), ProblemKind::Invalid, &m);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::NodeAffinity;
    use proptest::prelude::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn req(key: &str, op: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: if values.is_empty() {
                None
            } else {
                Some(values.iter().map(|v| v.to_string()).collect())
            },
        }
    }

    fn term(
        exprs: Vec<NodeSelectorRequirement>,
        fields: Vec<NodeSelectorRequirement>,
    ) -> NodeSelectorTerm {
        NodeSelectorTerm {
            match_expressions: (!exprs.is_empty()).then_some(exprs),
            match_fields: (!fields.is_empty()).then_some(fields),
        }
    }

    fn sel(terms: Vec<NodeSelectorTerm>) -> NodeSelector {
        NodeSelector {
            node_selector_terms: terms,
        }
    }

    fn node<'a>(name: &'a str, l: &'a BTreeMap<String, String>) -> NodeFacts<'a> {
        NodeFacts { name, labels: l }
    }

    #[test]
    fn requirement_table() {
        let win = labels(&[
            ("kubernetes.io/os", "windows"),
            ("build", "0206"),
            ("n", "abc"),
            ("empty", ""),
        ]);
        // (requirement, expected) — kubernetes-windows-rules.md §3.4 operators.
        let rows: Vec<(NodeSelectorRequirement, Result<bool, ()>)> = vec![
            (req("kubernetes.io/os", "In", &["windows"]), Ok(true)),
            (
                req("kubernetes.io/os", "In", &["linux", "windows"]),
                Ok(true),
            ),
            (req("kubernetes.io/os", "In", &["Windows"]), Ok(false)), // case-sensitive
            (req("missing", "In", &["x"]), Ok(false)),                // In needs the label
            (req("empty", "In", &[""]), Ok(true)),
            (req("kubernetes.io/os", "NotIn", &["linux"]), Ok(true)),
            (req("kubernetes.io/os", "NotIn", &["windows"]), Ok(false)),
            (req("missing", "NotIn", &["x"]), Ok(true)), // NotIn: absent label matches
            (req("kubernetes.io/os", "Exists", &[]), Ok(true)),
            (req("missing", "Exists", &[]), Ok(false)),
            (req("empty", "Exists", &[]), Ok(true)),
            (req("kubernetes.io/os", "DoesNotExist", &[]), Ok(false)),
            (req("missing", "DoesNotExist", &[]), Ok(true)),
            // Gt/Lt: ParseInt accepts leading zeros on both sides; strict comparison.
            (req("build", "Gt", &["205"]), Ok(true)),
            (req("build", "Gt", &["206"]), Ok(false)),
            (req("build", "Lt", &["207"]), Ok(true)),
            (req("build", "Lt", &["0206"]), Ok(false)),
            (req("build", "Gt", &["0100"]), Ok(true)), // leading zeros in the requirement value too
            (req("build", "Gt", &["+100"]), Err(())), // ParseInt takes '+', but it is not a label value
            (req("build", "Gt", &["-5"]), Err(())), // an integer, but not a label value (leading '-')
            (req("n", "Gt", &["1"]), Ok(false)),    // non-integer label: no match
            (req("missing", "Lt", &["1"]), Ok(false)), // absent label: no match
            (req("empty", "Lt", &["1"]), Ok(false)), // "" does not parse
            // Parse errors.
            (req("build", "Gt", &["x"]), Err(())),
            (req("build", "Gt", &["1.5"]), Err(())),
            (req("build", "Gt", &["1", "2"]), Err(())),
            (req("build", "Gt", &[]), Err(())),
            (req("build", "Gt", &["9223372036854775808"]), Err(())),
            (req("kubernetes.io/os", "In", &[]), Err(())),
            (req("kubernetes.io/os", "NotIn", &[]), Err(())),
            (req("kubernetes.io/os", "Exists", &["windows"]), Err(())),
            (
                req("kubernetes.io/os", "DoesNotExist", &["windows"]),
                Err(()),
            ),
            (req("kubernetes.io/os", "in", &["windows"]), Err(())), // operators are case-sensitive
            (req("kubernetes.io/os", "Equals", &["windows"]), Err(())),
            (req("bad key", "Exists", &[]), Err(())),
            (
                req("kubernetes.io/os", "In", &["not a label value"]),
                Err(()),
            ),
        ];
        for (r, want) in rows {
            let got = requirement_matches(&r, &win).map_err(|_| ());
            assert_eq!(got, want, "{r:?}");
        }
    }

    #[test]
    fn requirement_error_text() {
        let e = requirement_matches(&req("k", "Foo", &[]), &BTreeMap::new()).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"operator: Unsupported value: "Foo": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt""#
        );
        let e = requirement_matches(&req("k", "Gt", &["x"]), &BTreeMap::new()).unwrap_err();
        assert_eq!(
            e,
            RequirementError::Invalid(vec![RequirementProblem::NotAnInteger {
                index: 0,
                value: "x".into()
            }])
        );
        assert_eq!(
            e.to_string(),
            r#"values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer"#
        );
        let e = requirement_matches(&req("k", "In", &[]), &BTreeMap::new()).unwrap_err();
        assert!(
            e.to_string()
                .ends_with("for 'in', 'notin' operators, values set can't be empty")
        );
        // Every problem, joined as upstream joins them.
        let e =
            requirement_matches(&req("bad key", "Gt", &["x", "y"]), &BTreeMap::new()).unwrap_err();
        let text = e.to_string();
        assert_eq!(text.matches("; ").count(), 3, "{text}");
        assert!(
            text.starts_with(r#"key: Invalid value: "bad key": "#),
            "{text}"
        );
        let fields = NodeSelectorRequirement {
            key: NODE_NAME_FIELD.into(),
            operator: "Exists".into(),
            values: None,
        };
        assert_eq!(
            parse_field_requirement(&fields).unwrap_err().to_string(),
            r#"operator: Unsupported value: "Exists": supported values: "In", "NotIn""#
        );
        let fields = NodeSelectorRequirement {
            operator: "In".into(),
            ..fields
        };
        assert_eq!(
            parse_field_requirement(&fields).unwrap_err().to_string(),
            "values: Invalid value: [...]: must have one element"
        );
    }

    #[test]
    fn term_table() {
        let l = labels(&[
            ("kubernetes.io/os", "windows"),
            ("metadata.name", "label-name"),
        ]);
        let os_win = || req("kubernetes.io/os", "In", &["windows"]);
        let os_lin = || req("kubernetes.io/os", "In", &["linux"]);
        let name_in = |n: &str| req("metadata.name", "In", &[n]);
        /// A node selector term, a node name, whether it matches and why.
        struct TermCase<'a> {
            term: NodeSelectorTerm,
            node_name: &'a str,
            want: bool,
            why: &'a str,
        }
        let rows = vec![
            TermCase {
                term: term(vec![os_win()], vec![]),
                node_name: "n1",
                want: true,
                why: "one expression",
            },
            TermCase {
                term: term(
                    vec![os_win(), req("kubernetes.io/os", "Exists", &[])],
                    vec![],
                ),
                node_name: "n1",
                want: true,
                why: "expressions ANDed",
            },
            TermCase {
                term: term(vec![os_win(), os_lin()], vec![]),
                node_name: "n1",
                want: false,
                why: "expressions ANDed, one fails",
            },
            TermCase {
                term: term(vec![], vec![]),
                node_name: "n1",
                want: false,
                why: "empty term matches nothing",
            },
            TermCase {
                term: NodeSelectorTerm {
                    match_expressions: Some(vec![]),
                    match_fields: Some(vec![]),
                },
                node_name: "n1",
                want: false,
                why: "empty lists",
            },
            TermCase {
                term: term(vec![], vec![name_in("n1")]),
                node_name: "n1",
                want: true,
                why: "matchFields In name",
            },
            TermCase {
                term: term(vec![], vec![name_in("n2")]),
                node_name: "n1",
                want: false,
                why: "matchFields In other name",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.name", "NotIn", &["n2"])]),
                node_name: "n1",
                want: true,
                why: "matchFields NotIn",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.name", "NotIn", &["n1"])]),
                node_name: "n1",
                want: false,
                why: "matchFields NotIn self",
            },
            TermCase {
                term: term(vec![os_win()], vec![name_in("n1")]),
                node_name: "n1",
                want: true,
                why: "both parts match",
            },
            TermCase {
                term: term(vec![os_lin()], vec![name_in("n1")]),
                node_name: "n1",
                want: false,
                why: "labels fail",
            },
            TermCase {
                term: term(vec![os_win()], vec![name_in("n2")]),
                node_name: "n1",
                want: false,
                why: "fields fail",
            },
            TermCase {
                term: term(vec![], vec![name_in("n2")]),
                node_name: "",
                want: true,
                why: "quirk: fields skipped for a nameless node",
            },
            TermCase {
                term: term(vec![os_lin()], vec![name_in("n2")]),
                node_name: "",
                want: false,
                why: "labels still checked for a nameless node",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.name", "In", &["n1", "n2"])]),
                node_name: "n1",
                want: false,
                why: "fields need exactly one value",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.name", "Exists", &[])]),
                node_name: "n1",
                want: false,
                why: "fields: only In/NotIn",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.uid", "In", &[""])]),
                node_name: "n1",
                want: true,
                why: "other field reads as empty",
            },
            TermCase {
                term: term(vec![], vec![req("metadata.uid", "In", &["n1"])]),
                node_name: "n1",
                want: false,
                why: "other field is not the name",
            },
            TermCase {
                term: term(vec![name_in("n1")], vec![]),
                node_name: "n1",
                want: false,
                why: "metadata.name in matchExpressions is a label lookup",
            },
            TermCase {
                term: term(vec![name_in("label-name")], vec![]),
                node_name: "n1",
                want: true,
                why: "…which reads the label",
            },
            TermCase {
                term: term(vec![os_win(), req("x", "Gt", &["nope"])], vec![]),
                node_name: "n1",
                want: false,
                why: "parse error: term matches nothing",
            },
            TermCase {
                term: term(vec![os_win()], vec![req("metadata.name", "Gt", &["1"])]),
                node_name: "",
                want: false,
                why: "field parse error, even nameless",
            },
        ];
        for TermCase {
            term: t,
            node_name: name,
            want,
            why,
        } in rows
        {
            assert_eq!(term_matches(&t, node(name, &l)), want, "{why}");
        }
    }

    #[test]
    fn required_selector_table() {
        let l = labels(&[("kubernetes.io/os", "windows")]);
        let win = || term(vec![req("kubernetes.io/os", "In", &["windows"])], vec![]);
        let lin = || term(vec![req("kubernetes.io/os", "In", &["linux"])], vec![]);
        let bad = || term(vec![req("kubernetes.io/os", "In", &[])], vec![]);
        let n = node("n1", &l);
        assert!(
            required_affinity_matches(None, n),
            "nil required: everything"
        );
        assert!(
            !required_affinity_matches(Some(&sel(vec![])), n),
            "no terms: nothing"
        );
        assert!(
            !required_affinity_matches(Some(&sel(vec![term(vec![], vec![])])), n),
            "only empty terms: nothing"
        );
        assert!(
            required_affinity_matches(Some(&sel(vec![lin(), win()])), n),
            "terms ORed"
        );
        assert!(
            required_affinity_matches(Some(&sel(vec![term(vec![], vec![]), win()])), n),
            "empty term dropped"
        );
        assert!(!required_affinity_matches(Some(&sel(vec![lin()])), n));
        assert!(
            required_affinity_matches(Some(&sel(vec![bad(), win()])), n),
            "a bad term does not spoil the others"
        );
        assert!(!required_affinity_matches(Some(&sel(vec![bad()])), n));
    }

    fn affinity(terms: Vec<NodeSelectorTerm>) -> Affinity {
        Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(sel(terms)),
                preferred_during_scheduling_ignored_during_execution: None,
            }),
            ..Default::default()
        }
    }

    #[test]
    fn pod_matches_node_table() {
        let wl = labels(&[("kubernetes.io/os", "windows")]);
        let ll = labels(&[("kubernetes.io/os", "linux")]);
        let sel_win = labels(&[("kubernetes.io/os", "windows")]);
        let empty = BTreeMap::new();
        let aff_win = affinity(vec![term(
            vec![req("kubernetes.io/os", "In", &["windows"])],
            vec![],
        )]);
        let aff_none = affinity(vec![]);
        let no_na = Affinity::default();
        /// A nodeSelector, an affinity, the node labels and whether the pod matches the node.
        struct MatchCase<'a> {
            selector: Option<&'a BTreeMap<String, String>>,
            affinity: Option<&'a Affinity>,
            labels: &'a BTreeMap<String, String>,
            want: bool,
        }
        let rows = vec![
            MatchCase {
                selector: None,
                affinity: None,
                labels: &wl,
                want: true,
            },
            MatchCase {
                selector: Some(&empty),
                affinity: None,
                labels: &ll,
                want: true,
            },
            MatchCase {
                selector: Some(&sel_win),
                affinity: None,
                labels: &wl,
                want: true,
            },
            MatchCase {
                selector: Some(&sel_win),
                affinity: None,
                labels: &ll,
                want: false,
            },
            MatchCase {
                selector: None,
                affinity: Some(&aff_win),
                labels: &wl,
                want: true,
            },
            MatchCase {
                selector: None,
                affinity: Some(&aff_win),
                labels: &ll,
                want: false,
            },
            MatchCase {
                selector: Some(&sel_win),
                affinity: Some(&aff_win),
                labels: &wl,
                want: true,
            },
            MatchCase {
                selector: Some(&sel_win),
                affinity: Some(&aff_win),
                labels: &ll,
                want: false,
            },
            MatchCase {
                selector: Some(&sel_win),
                affinity: Some(&aff_none),
                labels: &wl,
                want: false,
            }, // AND: affinity with no terms fails
            MatchCase {
                selector: None,
                affinity: Some(&no_na),
                labels: &ll,
                want: true,
            }, // affinity without nodeAffinity
        ];
        for (
            i,
            MatchCase {
                selector: s,
                affinity: a,
                labels: l,
                want,
            },
        ) in rows.into_iter().enumerate()
        {
            assert_eq!(pod_matches_node(s, a, node("n", l)), want, "row {i}");
        }
        let spec = PodSpec {
            node_selector: Some(sel_win.clone()),
            ..Default::default()
        };
        assert!(pod_spec_matches_node(&spec, node("n", &wl)));
        assert!(!pod_spec_matches_node(&spec, node("n", &ll)));
        let n = Node {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("w1".into()),
                labels: Some(wl.clone()),
                ..Default::default()
            },
            ..Default::default()
        };
        let f = NodeFacts::from_node(&n);
        assert_eq!(f.name, "w1");
        assert!(pod_spec_matches_node(&spec, f));
        assert!(NodeFacts::from_node(&Node::default()).labels.is_empty());
    }

    #[test]
    fn preferred_score_table() {
        let l = labels(&[("kubernetes.io/os", "windows"), ("zone", "a")]);
        let pt = |w: i32, t: NodeSelectorTerm| PreferredSchedulingTerm {
            weight: w,
            preference: t,
        };
        let terms = vec![
            pt(
                10,
                term(vec![req("kubernetes.io/os", "In", &["windows"])], vec![]),
            ),
            pt(5, term(vec![req("zone", "In", &["a"])], vec![])),
            pt(7, term(vec![req("zone", "In", &["b"])], vec![])),
            pt(0, term(vec![req("zone", "In", &["a"])], vec![])), // weight 0 skipped
            pt(50, term(vec![], vec![])),                         // empty preference skipped
            pt(3, term(vec![req("zone", "Gt", &["x"])], vec![])), // parse error scores nothing
        ];
        assert_eq!(preferred_score(&terms, node("n", &l)), 15);
        assert_eq!(preferred_score(&[], node("n", &l)), 0);
        assert_eq!(
            ERR_REASON_POD,
            "node(s) didn't match Pod's node affinity/selector"
        );
    }

    fn vproblems(s: &NodeSelector) -> Vec<(String, ProblemKind, String)> {
        validate_node_selector(s)
            .into_iter()
            .map(|p| (p.path, p.kind, p.message))
            .collect()
    }

    #[test]
    fn validate_table() {
        use ProblemKind::*;
        let one = |r| sel(vec![term(vec![r], vec![])]);
        let field = |r| sel(vec![term(vec![], vec![r])]);
        let e0 = "nodeSelectorTerms[0].matchExpressions[0]";
        let f0 = "nodeSelectorTerms[0].matchFields[0]";
        /// A node selector and the problems it has.
        struct ProblemCase<'a> {
            selector: NodeSelector,
            want: Vec<(String, ProblemKind, &'a str)>,
        }
        let rows = vec![
            ProblemCase {
                selector: sel(vec![]),
                want: vec![(
                    "nodeSelectorTerms".into(),
                    Required,
                    "must have at least one node selector term",
                )],
            },
            ProblemCase {
                selector: sel(vec![term(vec![], vec![])]),
                want: vec![],
            }, // an empty term is accepted (and matches nothing)
            ProblemCase {
                selector: one(req("kubernetes.io/os", "In", &["windows"])),
                want: vec![],
            },
            ProblemCase {
                selector: one(req("kubernetes.io/os", "In", &[])),
                want: vec![(
                    format!("{e0}.values"),
                    Required,
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )],
            },
            ProblemCase {
                selector: one(req("kubernetes.io/os", "NotIn", &[])),
                want: vec![(
                    format!("{e0}.values"),
                    Required,
                    "must be specified when `operator` is 'In' or 'NotIn'",
                )],
            },
            ProblemCase {
                selector: one(req("kubernetes.io/os", "Exists", &["x"])),
                want: vec![(
                    format!("{e0}.values"),
                    Forbidden,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )],
            },
            ProblemCase {
                selector: one(req("kubernetes.io/os", "DoesNotExist", &["x"])),
                want: vec![(
                    format!("{e0}.values"),
                    Forbidden,
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )],
            },
            ProblemCase {
                selector: one(req("build", "Gt", &[])),
                want: vec![(
                    format!("{e0}.values"),
                    Required,
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )],
            },
            ProblemCase {
                selector: one(req("build", "Lt", &["1", "2"])),
                want: vec![(
                    format!("{e0}.values"),
                    Required,
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                )],
            },
            ProblemCase {
                selector: one(req("build", "Gt", &["abc"])),
                want: vec![],
            }, // integer-ness is not checked by the API
            ProblemCase {
                selector: one(req("build", "Equals", &["1"])),
                want: vec![(
                    format!("{e0}.operator"),
                    Invalid,
                    "not a valid selector operator",
                )],
            },
            ProblemCase {
                selector: field(req("metadata.name", "In", &["node-1"])),
                want: vec![],
            },
            ProblemCase {
                selector: field(req("metadata.name", "In", &["a", "b"])),
                want: vec![(
                    format!("{f0}.values"),
                    Required,
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )],
            },
            ProblemCase {
                selector: field(req("metadata.name", "Exists", &[])),
                want: vec![(
                    format!("{f0}.operator"),
                    Invalid,
                    "not a valid selector operator",
                )],
            },
            ProblemCase {
                selector: field(req("metadata.uid", "In", &["x"])),
                want: vec![(
                    format!("{f0}.key"),
                    Invalid,
                    "not a valid field selector key",
                )],
            },
        ];
        for ProblemCase { selector: s, want } in rows {
            let want: Vec<_> = want
                .into_iter()
                .map(|(p, k, m)| (p, k, m.to_string()))
                .collect();
            assert_eq!(vproblems(&s), want, "{s:?}");
        }
        // Bad key, bad label value, bad node name.
        let p = vproblems(&one(req("bad key", "In", &["bad value"])));
        assert_eq!(
            p.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            vec![format!("{e0}.key"), format!("{e0}.values[0]")]
        );
        let p = vproblems(&field(req("metadata.name", "In", &["Node_1"])));
        assert_eq!(p[0].0, format!("{f0}.values[0]"));
        assert!(p[0].2.starts_with("a lowercase RFC 1123 subdomain"));
        // Paths count terms and requirements.
        let s = sel(vec![
            term(vec![req("a", "Exists", &[])], vec![]),
            term(vec![req("a", "Exists", &[]), req("b", "In", &[])], vec![]),
        ]);
        assert_eq!(
            vproblems(&s)[0].0,
            "nodeSelectorTerms[1].matchExpressions[1].values"
        );
    }

    #[test]
    fn validate_preferred_table() {
        let pt = |w: i32| PreferredSchedulingTerm {
            weight: w,
            preference: term(vec![req("a", "In", &["bad value"])], vec![]),
        };
        assert!(
            validate_preferred_terms(&[pt(1), pt(100)]).is_empty(),
            "label values not checked for preferred terms"
        );
        for w in [0, -1, 101] {
            let p = validate_preferred_terms(&[pt(w)]);
            assert_eq!(
                (p[0].path.as_str(), p[0].message.as_str()),
                ("[0].weight", "must be in the range 1-100"),
                "{w}"
            );
        }
        let p = validate_preferred_terms(&[
            pt(1),
            PreferredSchedulingTerm {
                weight: 1,
                preference: term(vec![req("a", "In", &[])], vec![]),
            },
        ]);
        assert_eq!(p[0].path, "[1].preference.matchExpressions[0].values");
    }

    // ---- property test against an independent model -------------------------------------------------

    const KEYS: &[&str] = &["os", "OS", "build", "zone"];
    const VALS: &[&str] = &["", "windows", "Windows", "linux", "a"];

    #[derive(Debug, Clone)]
    struct Expr {
        key: &'static str,
        op: &'static str,
        values: Vec<&'static str>,
    }

    fn expr() -> impl Strategy<Value = Expr> {
        (
            proptest::sample::select(KEYS),
            proptest::sample::select(&["In", "NotIn", "Exists", "DoesNotExist"][..]),
            proptest::collection::vec(proptest::sample::select(VALS), 1..3),
        )
            .prop_map(|(key, op, values)| {
                let values = if matches!(op, "Exists" | "DoesNotExist") {
                    vec![]
                } else {
                    values
                };
                Expr { key, op, values }
            })
    }

    /// The model: In = "has one of these values"; NotIn = "does not have one of these values";
    /// Exists/DoesNotExist = presence. A selector = all pairs present and equal.
    fn model_expr(e: &Expr, node: &[(&str, &str)]) -> bool {
        let value = node
            .iter()
            .rev()
            .find(|(k, _)| *k == e.key)
            .map(|(_, v)| *v);
        match e.op {
            "In" => e.values.iter().any(|v| Some(*v) == value),
            "NotIn" => !e.values.iter().any(|v| Some(*v) == value),
            "Exists" => value.is_some(),
            _ => value.is_none(),
        }
    }

    proptest! {
        #[test]
        fn matching_agrees_with_model(
            node_pairs in proptest::collection::vec((proptest::sample::select(KEYS), proptest::sample::select(VALS)), 0..4),
            selector_pairs in proptest::collection::vec((proptest::sample::select(KEYS), proptest::sample::select(VALS)), 0..3),
            terms in proptest::collection::vec(proptest::collection::vec(expr(), 0..3), 0..3),
            has_affinity in any::<bool>(),
        ) {
            // Later pairs win, as in a map built from the list.
            let node_labels: BTreeMap<String, String> = node_pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let node_selector: BTreeMap<String, String> = selector_pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let model_selector = node_selector.iter().all(|(k, v)| node_pairs.iter().rev().find(|(nk, _)| nk == k).map(|(_, nv)| *nv) == Some(v.as_str()));
            prop_assert_eq!(selector::node_selector_matches(&node_selector, &node_labels), model_selector);

            let model_affinity = !has_affinity
                || terms.iter().any(|t| !t.is_empty() && t.iter().all(|e| model_expr(e, &node_pairs)));
            let k8s_terms: Vec<NodeSelectorTerm> = terms.iter().map(|t| term(t.iter().map(|e| req(e.key, e.op, &e.values)).collect(), vec![])).collect();
            let aff = affinity(k8s_terms);
            let got = pod_matches_node(Some(&node_selector), has_affinity.then_some(&aff), node("n", &node_labels));
            prop_assert_eq!(got, model_selector && model_affinity);
        }
    }
}
