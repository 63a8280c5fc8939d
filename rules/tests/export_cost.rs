//! The exported policies stay inside kube-apiserver's CEL cost limits
//! (`k8s.io/apiserver/pkg/apis/cel/config.go`: `PerCallLimit` 1,000,000 per expression,
//! `RuntimeCELCostBudget` 10,000,000 per ValidatingAdmissionPolicyBinding, `RuntimeCELCostBudgetMatchConditions`
//! 2,500,000 for the matchConditions; docs/reference/admission-policies.md §5).
//!
//! kube-cel has no cost model that matches cel-go's and its interpreter counts no cost, so this test bounds
//! each expression by its structure (cel crate's AST), pessimistically: one unit per identifier, field
//! selection and call; a comprehension costs its range's bound times its body; a ternary the dearer branch;
//! a regular expression the length of the longest string it may read; other string functions a tenth of it
//! (cel-go's traversal factor); `in` and `+` on a list its bound. The bounds are stated in [`Bounds`]: every
//! list the object holds, every string. Variables are evaluated once and cached (lazily, upstream), so
//! an expression is bounded alone (`PerCallLimit`) and a policy by the sum of all (`RuntimeCELCostBudget`).

// The parity harness's settings variants and its deep-stack thread (the rest of it is not used here).
#[path = "common/admission.rs"]
mod admission;

use admission::{classes, exact, with_stack};
use kube_cel::cel::Program;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr};
use serde_json::Value;
use winplace_rules::Settings;
use winplace_rules::export::{self, Naming};

const PER_CALL_LIMIT: f64 = 1_000_000.0;
const RUNTIME_CEL_COST_BUDGET: f64 = 10_000_000.0;
const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS: f64 = 2_500_000.0;

/// The sizes the bound assumes.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    /// Any list the object holds that is not one of the affinity's below (containers of the three
    /// lists together, tolerations, …).
    list: f64,
    /// The required affinity's node selector terms (`nodeSelectorTerms`, `variables.terms`, …).
    terms: f64,
    /// A term's requirements (`matchExpressions`).
    expressions: f64,
    /// A term's requirements on the build label (the per-term lists of `variables.buildReqs` and
    /// `variables.buildValues`).
    build_requirements: f64,
    /// A requirement's values.
    values: f64,
    /// Any string (an image reference: 255 for the name, a tag of 128, a digest).
    string: f64,
    /// The `-` tokens of a split tag (a valid tag has at most 128 characters).
    tokens: f64,
}

impl Bounds {
    /// Every list at most `n` long.
    fn lists(n: f64) -> Bounds {
        Bounds {
            list: n,
            terms: n,
            expressions: n,
            build_requirements: n,
            values: n,
            ..HELD
        }
    }

    /// The affinity's lists as long as the build rules' size guard (`variables.affinityBounded`) lets
    /// through, whatever the other lists: a policy that reads the guard first evaluates nothing else
    /// beyond it, so this is its worst case for any affinity.
    fn guarded(self) -> Bounds {
        use winplace_rules::rules::cel::{
            MAX_BUILD_REQUIREMENTS, MAX_REQUIREMENT_VALUES, MAX_TERM_EXPRESSIONS, MAX_TERMS,
        };
        Bounds {
            terms: MAX_TERMS as f64,
            expressions: MAX_TERM_EXPRESSIONS as f64,
            build_requirements: MAX_BUILD_REQUIREMENTS as f64,
            values: MAX_REQUIREMENT_VALUES as f64,
            ..self
        }
    }
}

/// The bounds of a list and of the lists inside it, outermost first; deeper levels are `b.list`.
type Shape = Vec<f64>;

/// What the iteration variables in scope range over (the shape of their element).
type Scope = Vec<(String, Shape)>;

fn dim(shape: &Shape, i: usize, b: Bounds) -> f64 {
    shape.get(i).copied().unwrap_or(b.list)
}

thread_local! {
    /// The shapes of the policy's variables of a fixed length ([`literal_length`]).
    static VARIABLE_SHAPES: std::cell::RefCell<std::collections::HashMap<String, Shape>> =
        Default::default();
}

/// The length of a list literal, of a filter of one, or of a ternary between them (the variables of a
/// fixed list: the candidate hosts, the nodeSelector's build).
fn literal_length(e: &IdedExpr) -> Option<f64> {
    match &e.expr {
        Expr::List(l) => Some(l.elements.len() as f64),
        Expr::Comprehension(c) => literal_length(&c.iter_range),
        Expr::Call(c) if c.func_name == "_?_:_" => {
            Some(literal_length(&c.args[1])?.max(literal_length(&c.args[2])?))
        }
        _ => None,
    }
}

/// The shape of the list a field (or a variable) of this name holds.
fn field_shape(field: &str, b: Bounds) -> Shape {
    match field {
        "nodeSelectorTerms" | "terms" | "validTerms" => vec![b.terms],
        "buildReqs" => vec![b.terms, b.build_requirements, b.values + 1.0],
        "buildValues" | "passingValues" => vec![b.terms, b.build_requirements, b.values],
        "matchExpressions" => vec![b.expressions],
        "values" => vec![b.values],
        _ => VARIABLE_SHAPES
            .with(|v| v.borrow().get(field).cloned())
            .unwrap_or_else(|| vec![b.list]),
    }
}

/// The shape of the list `e` yields.
fn shape(e: &IdedExpr, b: Bounds, scope: &Scope) -> Shape {
    match &e.expr {
        Expr::List(l) => {
            let mut inner: Shape = Vec::new();
            for x in &l.elements {
                if let Expr::List(_) = x.expr {
                    let s = shape(x, b, scope);
                    for (i, d) in s.into_iter().enumerate() {
                        match inner.get_mut(i) {
                            Some(m) => *m = m.max(d),
                            None => inner.push(d),
                        }
                    }
                }
            }
            let mut out = vec![l.elements.len() as f64];
            out.extend(inner);
            out
        }
        Expr::Ident(name) => scope
            .iter()
            .rev()
            .find(|(n, s)| n == name && !s.is_empty())
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| vec![b.list]),
        Expr::Select(s) => field_shape(&s.field, b),
        Expr::Call(c) if c.func_name == "split" => vec![b.tokens],
        Expr::Call(c) if c.func_name == "_[_]" => {
            let outer = shape(&c.args[0], b, scope);
            if outer.len() > 1 {
                outer[1..].to_vec()
            } else {
                vec![b.list]
            }
        }
        Expr::Call(c) if c.func_name == "_+_" => {
            let parts: Vec<Shape> = c.args.iter().map(|a| shape(a, b, scope)).collect();
            let mut out = vec![parts.iter().map(|s| dim(s, 0, b)).sum()];
            let depth = parts.iter().map(Vec::len).max().unwrap_or(1);
            for i in 1..depth {
                out.push(parts.iter().map(|s| dim(s, i, b)).fold(0.0, f64::max));
            }
            out
        }
        Expr::Call(c) if c.func_name == "_?_:_" => {
            let (x, y) = (shape(&c.args[1], b, scope), shape(&c.args[2], b, scope));
            let depth = x.len().max(y.len());
            (0..depth)
                .map(|i| dim(&x, i, b).max(dim(&y, i, b)))
                .collect()
        }
        // map and filter: as long as their range (a map's elements are taken as unbounded below).
        Expr::Comprehension(c) => vec![dim(&shape(&c.iter_range, b, scope), 0, b)],
        _ => vec![b.list],
    }
}

/// The bound on the length of the list `e` yields.
fn list_bound(e: &IdedExpr, b: Bounds, scope: &Scope) -> f64 {
    dim(&shape(e, b, scope), 0, b)
}

/// The structural cost bound of `e`.
fn cost(e: &IdedExpr, b: Bounds) -> f64 {
    cost_in(e, b, &mut Vec::new())
}

fn cost_in(e: &IdedExpr, b: Bounds, scope: &mut Scope) -> f64 {
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => 0.0,
        Expr::Ident(_) => 1.0,
        Expr::Select(s) => 1.0 + cost_in(&s.operand, b, scope),
        Expr::List(l) => 1.0 + l.elements.iter().map(|x| cost_in(x, b, scope)).sum::<f64>(),
        Expr::Map(m) => {
            1.0 + m
                .entries
                .iter()
                .map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => {
                        cost_in(&me.key, b, scope) + cost_in(&me.value, b, scope)
                    }
                    EntryExpr::StructField(f) => cost_in(&f.value, b, scope),
                })
                .sum::<f64>()
        }
        Expr::Struct(s) => {
            1.0 + s
                .entries
                .iter()
                .map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => {
                        cost_in(&me.key, b, scope) + cost_in(&me.value, b, scope)
                    }
                    EntryExpr::StructField(f) => cost_in(&f.value, b, scope),
                })
                .sum::<f64>()
        }
        Expr::Comprehension(c) => {
            let range = shape(&c.iter_range, b, scope);
            let before = cost_in(&c.iter_range, b, scope) + cost_in(&c.accu_init, b, scope);
            scope.push((
                c.iter_var.clone(),
                range.get(1..).unwrap_or_default().to_vec(),
            ));
            let body = cost_in(&c.loop_cond, b, scope) + cost_in(&c.loop_step, b, scope);
            scope.pop();
            before + dim(&range, 0, b) * body + cost_in(&c.result, b, scope)
        }
        Expr::Call(c) => {
            let target = c.target.as_deref().map_or(0.0, |t| cost_in(t, b, scope));
            let args: Vec<f64> = c.args.iter().map(|a| cost_in(a, b, scope)).collect();
            let own = match c.func_name.as_str() {
                "_?_:_" => return 1.0 + args[0] + args[1].max(args[2]),
                "matches" | "find" | "findAll" => b.string,
                "lowerAscii" | "split" | "substring" | "contains" | "startsWith" | "endsWith"
                | "size" | "string" | "int" => b.string / 10.0,
                "@in" => match c.args.get(1) {
                    Some(list) => list_bound(list, b, scope),
                    None => 1.0,
                },
                "_+_" => c
                    .args
                    .iter()
                    .map(|a| list_bound(a, b, scope))
                    .sum::<f64>()
                    .max(1.0),
                _ => 1.0,
            };
            own + target + args.iter().sum::<f64>()
        }
    }
}

thread_local! {
    /// Every expression parsed once (the bounds are computed for many list sizes).
    static PARSED: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Program>>> =
        Default::default();
}

fn parsed(text: &str) -> std::rc::Rc<Program> {
    if let Some(p) = PARSED.with(|c| c.borrow().get(text).cloned()) {
        return p;
    }
    let program = std::rc::Rc::new(
        Program::compile(text).unwrap_or_else(|e| panic!("{:?}: {text}", e.errors.len())),
    );
    PARSED.with(|c| c.borrow_mut().insert(text.to_string(), program.clone()));
    program
}

/// Per policy: the dearest expression (alone: each variable is a program of its own), the sum of its
/// variables and validations or mutations, and its matchConditions.
#[derive(Debug)]
struct PolicyCost {
    name: String,
    /// Its validation or mutation reads the affinity's size guard first ([`is_guarded`]).
    guarded: bool,
    dearest: f64,
    total: f64,
    conditions: f64,
}

/// Whether the policy's validation or mutation reads `variables.affinityBounded` before anything else, on
/// the object and, on an UPDATE, on the object before it (`oldAffinityBounded`): then no other expression
/// of it is evaluated for an affinity beyond the guard (`&&` stops at the first false, left to right), and
/// its bound is that of the guarded sizes. The frames `export` puts around a rule's condition (the UPDATE
/// comparison) come first.
fn is_guarded(spec: &Value) -> bool {
    let validations = spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v["expression"].as_str().unwrap_or_default())
        // With `placementGate`, a deferred rule first reads whether the pod will be gated: that reads the
        // build pin only inside the guard (`variables.gateOpen`).
        .map(|f| {
            f.replacen(
                "!(!(object.kind != 'Pod' && variables.gateOpen) && ",
                "!(",
                1,
            )
        })
        .map(|f| {
            f.starts_with("!((variables.affinityBounded && ")
                && f.contains(
                    "!(request.operation == 'UPDATE' && (variables.oldAffinityBounded && ",
                )
        });
    let mutations = spec["mutations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["jsonPatch"]["expression"].as_str().unwrap_or_default())
        .map(|f| f.replacen("variables.gateOpen || ", "", 1))
        .map(|f| {
            f.starts_with("(request.operation == 'UPDATE' && (variables.oldAffinityBounded && ")
                && f.contains(") ? [] : (variables.affinityBounded && ")
        });
    let all: Vec<bool> = validations.chain(mutations).collect();
    !all.is_empty() && all.iter().all(|g| *g)
}

fn policy_costs(documents: &[export::Document], b: Bounds) -> Vec<PolicyCost> {
    documents
        .iter()
        .filter(|d| {
            d.value["kind"]
                .as_str()
                .is_some_and(|k| !k.ends_with("Binding"))
        })
        .map(|d| {
            let spec = &d.value["spec"];
            let guarded = is_guarded(spec);
            let b = if guarded { b.guarded() } else { b };
            let list = |v: &Value, key: &str| -> Vec<(String, f64)> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|x| {
                        let text = x[key].as_str().unwrap_or_default();
                        let name = x["name"].as_str().unwrap_or_default().to_string();
                        (name, cost(parsed(text).expression(), b))
                    })
                    .collect()
            };
            VARIABLE_SHAPES.with(|v| v.borrow_mut().clear());
            for x in spec["variables"].as_array().into_iter().flatten() {
                let text = x["expression"].as_str().unwrap_or_default();
                let name = x["name"].as_str().unwrap_or_default().to_string();
                if let Some(n) = literal_length(parsed(text).expression()) {
                    VARIABLE_SHAPES.with(|v| v.borrow_mut().insert(name, vec![n]));
                }
            }
            let variables = list(&spec["variables"], "expression");
            if std::env::var_os("WINPLACE_COST_DETAIL").is_some() {
                for (n, c) in &variables {
                    println!("  {}: variable {n} {c:.0}", d.name);
                }
            }
            // Each variable is a program of its own, bounded by `PerCallLimit` alone, its cost added to the
            // binding's budget (`variableAccessor.Callback`, k8s.io/apiserver/pkg/admission/plugin/cel/
            // composition.go).
            let each_variable: Vec<f64> = variables.iter().map(|(_, c)| *c).collect();
            let all_variables: f64 = variables.iter().map(|(_, c)| c).sum();
            // A validation's messageExpression is evaluated after it, when it fails: their costs add.
            let mut finals: Vec<f64> = list(&spec["validations"], "expression")
                .into_iter()
                .zip(spec["validations"].as_array().into_iter().flatten())
                .map(|((_, c), v)| {
                    c + v["messageExpression"]
                        .as_str()
                        .map_or(0.0, |m| cost(parsed(m).expression(), b))
                })
                .collect();
            for m in spec["mutations"].as_array().into_iter().flatten() {
                let text = m["jsonPatch"]["expression"].as_str().unwrap_or_default();
                // The cel crate does not parse message literals; their fields cost what a map's do.
                let text = text
                    .replace("JSONPatch{op: ", "{'op': ")
                    .replace(", path: variables.prefix", ", 'path': variables.prefix")
                    .replace(", value: ", ", 'value': ");
                finals.push(cost(parsed(&text).expression(), b));
            }
            let dearest = finals
                .iter()
                .copied()
                .chain(each_variable)
                .fold(0.0, f64::max);
            let conditions: f64 = list(&spec["matchConditions"], "expression")
                .into_iter()
                .map(|(_, c)| c)
                .sum();
            PolicyCost {
                name: d.name.clone(),
                guarded,
                dearest,
                total: all_variables + finals.iter().sum::<f64>(),
                conditions,
            }
        })
        .collect()
}

/// The bounds the figures start from: 8 containers (init, regular and ephemeral together), 8 tolerations,
/// 8 node selector terms of 8 requirements of 8 values; references of 512 characters.
const HELD: Bounds = Bounds {
    list: 8.0,
    terms: 8.0,
    expressions: 8.0,
    build_requirements: 8.0,
    values: 8.0,
    string: 512.0,
    tokens: 65.0,
};

fn within(c: &PolicyCost) -> bool {
    c.dearest <= PER_CALL_LIMIT
        && c.total <= RUNTIME_CEL_COST_BUDGET
        && c.conditions <= RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS
}

/// For each policy, the largest list bound (every list of the object at most that long; for a policy
/// behind the build rules' affinity guard, every list but the affinity's, which are at the guard's
/// sizes: their worst case, whatever the pod) at which the structural bound stays inside the limits; the
/// test requires at least [`MIN_LISTS`] for every policy and prints the figures
/// (docs/reference/admission-policies.md §5 lists them).
const MIN_LISTS: f64 = 3.0;

#[test]
fn every_expression_and_policy_stays_inside_the_cost_limits() {
    with_stack(|| {
        let settings = Settings::default();
        let mut documents = export::validating(&settings, Naming::Cluster);
        documents.extend(export::mutating(&settings, Naming::Cluster));
        // The fixes with `buildPinning: exact` (the build nodeSelector) after the range's, then with
        // `runtimeClasses` (the runtimeClassName where the exact pin's build is mapped), range and exact.
        documents.extend(export::mutating(&exact(&settings), Naming::Cluster));
        documents.extend(export::mutating(&classes(&settings), Naming::Cluster));
        documents.extend(export::mutating(
            &classes(&exact(&settings)),
            Naming::Cluster,
        ));
        // With the placement gate: the deferred rules first read whether the pod will be gated.
        let gating =
            Settings::from_text("s.yaml", "mutate: true\nplacementGate: true\n").expect("settings");
        documents.extend(export::validating(&gating, Naming::Cluster));
        documents.extend(export::mutating(&gating, Naming::Cluster));
        let at_held = policy_costs(&documents, HELD);
        assert!(at_held.len() >= 29, "{}", at_held.len());
        // The build rules and the build-range fix read the affinity's size guard first: their affinity
        // of any size costs at most what the guard lets through.
        let guarded: Vec<&str> = at_held
            .iter()
            .filter(|c| c.guarded)
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            guarded,
            [
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-build-mismatch",
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-pod-without-build-selector",
                "winplace-windows-build-mismatch",
                "winplace-windows-pod-without-build-selector",
            ]
        );
        let mut too_small = Vec::new();
        for (i, c) in at_held.iter().enumerate() {
            let largest = (1..=64)
                .map(f64::from)
                .take_while(|&list| {
                    within(&policy_costs(&documents[2 * i..2 * i + 1], Bounds::lists(list))[0])
                })
                .last()
                .unwrap_or(0.0);
            println!(
                "{:50} {} at lists of {}: dearest expression {:>12.0}  policy {:>12.0}  matchConditions {:>4.0}; inside the limits up to lists of {largest}",
                c.name,
                if documents[2 * i].value["kind"] == "MutatingAdmissionPolicy" {
                    "MAP"
                } else {
                    "VAP"
                },
                HELD.list,
                c.dearest,
                c.total,
                c.conditions
            );
            let at_min = &policy_costs(&documents[2 * i..2 * i + 1], Bounds::lists(MIN_LISTS))[0];
            println!(
                "{:50} at lists of {MIN_LISTS}: dearest expression {:>12.0}  policy {:>12.0}",
                "", at_min.dearest, at_min.total
            );
            if largest < MIN_LISTS {
                too_small.push((c.name.clone(), largest));
            }
        }
        assert!(
            too_small.is_empty(),
            "over the limits with lists of {MIN_LISTS}: {too_small:?}"
        );
    });
}

/// The bound grows with the lists: it is not a constant that always passes.
#[test]
fn the_bound_grows_with_the_lists_and_catches_an_unbounded_pod() {
    with_stack(|| {
        let settings = Settings::default();
        let documents = export::validating(&settings, Naming::Cluster);
        let small = policy_costs(&documents, HELD);
        let huge = policy_costs(&documents, Bounds::lists(4096.0));
        let dearest = |c: &[PolicyCost]| c.iter().map(|p| p.dearest).fold(0.0, f64::max);
        assert!(dearest(&huge) > dearest(&small) * 100.0);
        assert!(dearest(&huge) > PER_CALL_LIMIT, "{}", dearest(&huge));
    });
}

/// The kind of a literal element, when the AST says it: Kubernetes' CEL environment sets
/// `cel.HomogeneousAggregateLiterals()` (`k8s.io/apiserver/pkg/cel/environment/base.go`), so a list or map
/// literal whose elements have different types does not compile there (the cel crate takes it). `dyn(…)`
/// and expressions of unknown type say nothing.
fn literal_kind(e: &IdedExpr) -> Option<&'static str> {
    use kube_cel::cel::common::ast::LiteralValue;
    match &e.expr {
        Expr::Literal(LiteralValue::String(_)) => Some("string"),
        Expr::Literal(LiteralValue::Int(_)) => Some("int"),
        Expr::Literal(LiteralValue::Boolean(_)) => Some("bool"),
        Expr::List(_) => Some("list"),
        Expr::Map(_) => Some("map"),
        _ => None,
    }
}

/// The literals of `e` (and below) whose elements are of several kinds.
fn mixed_literals(e: &IdedExpr, out: &mut Vec<String>) {
    let mut check = |kinds: Vec<Option<&'static str>>, what: &str| {
        let mut known: Vec<&str> = kinds.into_iter().flatten().collect();
        known.dedup();
        known.sort_unstable();
        known.dedup();
        if known.len() > 1 {
            out.push(format!("{what} of {known:?}"));
        }
    };
    match &e.expr {
        Expr::List(l) => {
            check(l.elements.iter().map(literal_kind).collect(), "list");
            l.elements.iter().for_each(|x| mixed_literals(x, out));
        }
        Expr::Map(m) => {
            let values: Vec<&IdedExpr> = m
                .entries
                .iter()
                .filter_map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => Some(&me.value),
                    EntryExpr::StructField(_) => None,
                })
                .collect();
            let keys: Vec<String> = m
                .entries
                .iter()
                .filter_map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => match &me.key.expr {
                        Expr::Literal(kube_cel::cel::common::ast::LiteralValue::String(k)) => {
                            Some(k.inner().to_string())
                        }
                        _ => None,
                    },
                    EntryExpr::StructField(_) => None,
                })
                .collect();
            if keys != ["op", "path", "value"] {
                check(values.iter().map(|v| literal_kind(v)).collect(), "map");
            }
            values.iter().for_each(|x| mixed_literals(x, out));
        }
        Expr::Select(s) => mixed_literals(&s.operand, out),
        Expr::Call(c) => {
            c.target.iter().for_each(|t| mixed_literals(t, out));
            c.args.iter().for_each(|a| mixed_literals(a, out));
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                mixed_literals(x, out);
            }
        }
        _ => {}
    }
}

/// No exported expression holds a list or map literal of mixed element types (they would not compile in
/// the API server); the check itself catches one.
#[test]
fn no_literal_mixes_element_types() {
    with_stack(|| {
        let mut bad = Vec::new();
        let mut probe = Vec::new();
        mixed_literals(
            parsed("[['a', []]].size() + {'k': 'v', 'l': [1]}.size()").expression(),
            &mut probe,
        );
        assert_eq!(probe.len(), 2, "{probe:?}");
        let settings = Settings::default();
        let mut documents = export::validating(&settings, Naming::Cluster);
        documents.extend(export::mutating(&settings, Naming::Cluster));
        documents.extend(export::mutating(&exact(&settings), Naming::Cluster));
        documents.extend(export::mutating(
            &classes(&exact(&settings)),
            Naming::Cluster,
        ));
        for d in &documents {
            let spec = &d.value["spec"];
            let mut texts: Vec<String> = Vec::new();
            for key in ["variables", "matchConditions", "validations"] {
                for x in spec[key].as_array().into_iter().flatten() {
                    for field in ["expression", "messageExpression"] {
                        texts.extend(x[field].as_str().map(str::to_string));
                    }
                }
            }
            for m in spec["mutations"].as_array().into_iter().flatten() {
                // JSONPatch{op, path, value} is a message, not a map: its fields may differ in type (read
                // as the map {'op', 'path', 'value'}, which the check leaves alone).
                let text = m["jsonPatch"]["expression"].as_str().unwrap_or_default();
                texts.push(
                    text.replace("JSONPatch{op: ", "{'op': ")
                        .replace(", path: variables.prefix", ", 'path': variables.prefix")
                        .replace(", value: ", ", 'value': "),
                );
            }
            for text in texts {
                let mut found = Vec::new();
                mixed_literals(parsed(&text).expression(), &mut found);
                if !found.is_empty() {
                    bad.push(format!("{}: {found:?}", d.name));
                }
            }
        }
        assert!(bad.is_empty(), "{bad:#?}");
    });
}
