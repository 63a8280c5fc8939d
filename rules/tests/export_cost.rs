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
//! an expression's cost is its own plus that of every variable it reads, and a policy's the sum of all.

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
    /// Any list the object holds (containers of the three lists together, tolerations, terms, …).
    list: f64,
    /// Any string (an image reference: 255 for the name, a tag of 128, a digest).
    string: f64,
    /// The `-` tokens of a split tag (a valid tag has at most 128 characters).
    tokens: f64,
}

/// The bound on the length of the list `e` yields.
fn list_bound(e: &IdedExpr, b: Bounds) -> f64 {
    match &e.expr {
        Expr::List(l) => l.elements.len() as f64,
        Expr::Call(c) if c.func_name == "split" => b.tokens,
        Expr::Call(c) if c.func_name == "_+_" => c.args.iter().map(|a| list_bound(a, b)).sum(),
        Expr::Call(c) if c.func_name == "_?_:_" => c.args[1..]
            .iter()
            .map(|a| list_bound(a, b))
            .fold(0.0, f64::max),
        Expr::Comprehension(c) => list_bound(&c.iter_range, b),
        _ => b.list,
    }
}

/// The structural cost bound of `e`.
fn cost(e: &IdedExpr, b: Bounds) -> f64 {
    match &e.expr {
        Expr::Unspecified | Expr::Literal(_) => 0.0,
        Expr::Ident(_) => 1.0,
        Expr::Select(s) => 1.0 + cost(&s.operand, b),
        Expr::List(l) => 1.0 + l.elements.iter().map(|x| cost(x, b)).sum::<f64>(),
        Expr::Map(m) => {
            1.0 + m
                .entries
                .iter()
                .map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => cost(&me.key, b) + cost(&me.value, b),
                    EntryExpr::StructField(f) => cost(&f.value, b),
                })
                .sum::<f64>()
        }
        Expr::Struct(s) => {
            1.0 + s
                .entries
                .iter()
                .map(|x| match &x.expr {
                    EntryExpr::MapEntry(me) => cost(&me.key, b) + cost(&me.value, b),
                    EntryExpr::StructField(f) => cost(&f.value, b),
                })
                .sum::<f64>()
        }
        Expr::Comprehension(c) => {
            cost(&c.iter_range, b)
                + cost(&c.accu_init, b)
                + list_bound(&c.iter_range, b) * (cost(&c.loop_cond, b) + cost(&c.loop_step, b))
                + cost(&c.result, b)
        }
        Expr::Call(c) => {
            let target = c.target.as_deref().map_or(0.0, |t| cost(t, b));
            let args: Vec<f64> = c.args.iter().map(|a| cost(a, b)).collect();
            let own = match c.func_name.as_str() {
                "_?_:_" => return 1.0 + args[0] + args[1].max(args[2]),
                "matches" | "find" | "findAll" => b.string,
                "lowerAscii" | "split" | "substring" | "contains" | "startsWith" | "endsWith"
                | "size" | "string" | "int" => b.string / 10.0,
                "@in" => match c.args.get(1) {
                    Some(list) => list_bound(list, b),
                    None => 1.0,
                },
                "_+_" => c
                    .args
                    .iter()
                    .map(|a| list_bound(a, b))
                    .sum::<f64>()
                    .max(1.0),
                _ => 1.0,
            };
            own + target + args.iter().sum::<f64>()
        }
    }
}

fn parsed(text: &str) -> Program {
    Program::compile(text).unwrap_or_else(|e| panic!("{:?}: {text}", e.errors.len()))
}

/// Per policy: the dearest expression (its own cost plus the variables it reads), the sum of its
/// variables and validations or mutations, and its matchConditions.
#[derive(Debug)]
struct PolicyCost {
    name: String,
    dearest: f64,
    total: f64,
    conditions: f64,
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
            let variables = list(&spec["variables"], "expression");
            if std::env::var_os("WINPLACE_COST_DETAIL").is_some() {
                for (n, c) in &variables {
                    println!("  {}: variable {n} {c:.0}", d.name);
                }
            }
            // Each variable's cost with those it reads (every variable before it, pessimistically).
            let mut with_reads = Vec::new();
            let mut running = 0.0;
            for (_, c) in &variables {
                running += c;
                with_reads.push(running);
            }
            let all_variables: f64 = variables.iter().map(|(_, c)| c).sum();
            let mut finals: Vec<f64> = list(&spec["validations"], "expression")
                .into_iter()
                .map(|(_, c)| c)
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
                .map(|c| c + all_variables)
                .chain(with_reads)
                .fold(0.0, f64::max);
            let conditions: f64 = list(&spec["matchConditions"], "expression")
                .into_iter()
                .map(|(_, c)| c)
                .sum();
            PolicyCost {
                name: d.name.clone(),
                dearest,
                total: all_variables + finals.iter().sum::<f64>(),
                conditions,
            }
        })
        .collect()
}

fn run(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

/// The bounds the figures start from: 8 containers (init, regular and ephemeral together), 8 tolerations,
/// 8 node selector terms of 8 requirements of 8 values; references of 512 characters.
const HELD: Bounds = Bounds {
    list: 8.0,
    string: 512.0,
    tokens: 65.0,
};

fn within(c: &PolicyCost) -> bool {
    c.dearest <= PER_CALL_LIMIT
        && c.total <= RUNTIME_CEL_COST_BUDGET
        && c.conditions <= RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS
}

/// For each policy, the largest list bound (every list of the object at most that long) at which the
/// structural bound stays inside the limits; the test requires at least [`MIN_LISTS`] for every policy
/// and prints the figures (docs/reference/admission-policies.md §5 lists them).
const MIN_LISTS: f64 = 2.0;

#[test]
fn every_expression_and_policy_stays_inside_the_cost_limits() {
    run(|| {
        let settings = Settings::default();
        let mut documents = export::validating(&settings, Naming::Cluster);
        documents.extend(export::mutating(&settings, Naming::Cluster).expect("fixes"));
        let at_held = policy_costs(&documents, HELD);
        assert!(at_held.len() >= 17, "{}", at_held.len());
        let mut too_small = Vec::new();
        for (i, c) in at_held.iter().enumerate() {
            let largest = (1..=64)
                .map(f64::from)
                .take_while(|&list| {
                    within(&policy_costs(&documents[2 * i..2 * i + 1], Bounds { list, ..HELD })[0])
                })
                .last()
                .unwrap_or(0.0);
            println!(
                "{:50} at lists of {}: dearest expression {:>12.0}  policy {:>12.0}  matchConditions {:>4.0}; inside the limits up to lists of {largest}",
                c.name, HELD.list, c.dearest, c.total, c.conditions
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
    run(|| {
        let settings = Settings::default();
        let documents = export::validating(&settings, Naming::Cluster);
        let small = policy_costs(&documents, HELD);
        let huge = policy_costs(
            &documents,
            Bounds {
                list: 4096.0,
                ..HELD
            },
        );
        let dearest = |c: &[PolicyCost]| c.iter().map(|p| p.dearest).fold(0.0, f64::max);
        assert!(dearest(&huge) > dearest(&small) * 100.0);
        assert!(dearest(&huge) > PER_CALL_LIMIT, "{}", dearest(&huge));
    });
}
