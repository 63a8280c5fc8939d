//! The exported policies compile where the API server compiles them (docs/reference/admission-policies.md
//! §8). kube-cel (the parity tests' interpreter) evaluates only what an input reaches, and has neither a
//! type checker nor cel-go's planning; the API server refuses a policy at creation for either:
//!
//! * **Constants are folded when a program is planned.** kube-apiserver plans every expression with
//!   `cel.EvalOptions(cel.OptOptimize, …)` (`k8s.io/apiserver/pkg/cel/environment/base.go`), and cel-go's
//!   `decOptimize` (`interpreter/decorators.go`) evaluates a type conversion of a constant
//!   (`maybeOptimizeConstUnary`), list and map literals of constants, and compiles a constant regular
//!   expression (`matches`, and Kubernetes' `find`/`findAll`), on every branch, taken or not: an error
//!   fails the program (`program instantiation failed`, `k8s.io/apiserver/pkg/admission/plugin/cel/compile.go`).
//!   [`every_constant_subexpression_evaluates`] finds every subexpression that reads no variable and
//!   evaluates it, a stricter rule than cel-go's (it folds only those kinds), and compiles every constant
//!   pattern.
//! * **Types are checked** against the declarations the API server makes: see
//!   [`every_expression_type_checks_as_the_api_server_declares_it`].

#[path = "common/admission.rs"]
mod admission;

use std::collections::BTreeSet;

use admission::{
    PolicyExpressions, evaluate_constant, policy_expressions, readable_patch, settings_variety,
    with_stack,
};
use kube_cel::cel::Program;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

fn parsed(text: &str) -> Program {
    Program::compile(text).unwrap_or_else(|e| panic!("{} parse errors: {text}", e.errors.len()))
}

/// The identifiers `e` reads that it does not bind itself (comprehension variables are bound).
fn free_identifiers(e: &IdedExpr, out: &mut BTreeSet<String>) {
    match &e.expr {
        Expr::Ident(name) => {
            out.insert(name.clone());
        }
        Expr::Select(s) => free_identifiers(&s.operand, out),
        Expr::Call(c) => {
            c.target.iter().for_each(|t| free_identifiers(t, out));
            c.args.iter().for_each(|a| free_identifiers(a, out));
        }
        Expr::List(l) => l.elements.iter().for_each(|x| free_identifiers(x, out)),
        Expr::Map(m) => m.entries.iter().for_each(|x| match &x.expr {
            EntryExpr::MapEntry(me) => {
                free_identifiers(&me.key, out);
                free_identifiers(&me.value, out);
            }
            EntryExpr::StructField(f) => free_identifiers(&f.value, out),
        }),
        Expr::Struct(s) => s.entries.iter().for_each(|x| {
            if let EntryExpr::StructField(f) = &x.expr {
                free_identifiers(&f.value, out);
            }
        }),
        Expr::Comprehension(c) => {
            let mut inner = BTreeSet::new();
            for x in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                free_identifiers(x, &mut inner);
            }
            inner.remove(&c.iter_var);
            if let Some(v) = &c.iter_var2 {
                inner.remove(v);
            }
            inner.remove(&c.accu_var);
            out.extend(inner);
            free_identifiers(&c.iter_range, out);
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// The children of `e`.
fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Select(s) => vec![&s.operand],
        Expr::Call(c) => c.target.iter().map(|t| &**t).chain(&c.args).collect(),
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => m
            .entries
            .iter()
            .flat_map(|x| match &x.expr {
                EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Struct(s) => s
            .entries
            .iter()
            .filter_map(|x| match &x.expr {
                EntryExpr::StructField(f) => Some(&f.value),
                EntryExpr::MapEntry(_) => None,
            })
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// The functions whose constant pattern argument the API server compiles when it plans the program:
/// CEL's `matches` (`interpreter.MatchesRegexOptimization`) and Kubernetes' `find` and `findAll`
/// (`k8s.io/apiserver/pkg/cel/library/regex.go`, `FindRegexOptimization`, `FindAllRegexOptimization`).
const REGEX_FUNCTIONS: [&str; 3] = ["matches", "find", "findAll"];

/// What cel-go's planner would refuse in `e`: every subexpression that reads no variable and fails to
/// evaluate, every constant pattern that does not compile. The checks of a comprehension's body run
/// with its variables free, so a constant inside a loop is found too.
fn planning_errors(e: &IdedExpr, out: &mut Vec<String>) {
    let is_literal = matches!(e.expr, Expr::Literal(_));
    let mut free = BTreeSet::new();
    free_identifiers(e, &mut free);
    if free.is_empty()
        && !is_literal
        && let Err(error) = evaluate_constant(e)
    {
        let mut shown = format!("{:?}", e.expr);
        shown.truncate(300);
        out.push(format!("constant {shown} fails: {error}"));
        // Its own constant children are reported as well: the innermost is the one to fix.
    }
    if let Expr::Call(c) = &e.expr
        && REGEX_FUNCTIONS.contains(&c.func_name.as_str())
        && c.target.is_some()
        && let Some(IdedExpr {
            expr: Expr::Literal(LiteralValue::String(pattern)),
            ..
        }) = c.args.first()
        && let Err(error) = regex::Regex::new(pattern.inner())
    {
        out.push(format!(
            "pattern {:?} does not compile: {error}",
            pattern.inner()
        ));
    }
    for child in children(e) {
        planning_errors(child, out);
    }
}

fn errors_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    planning_errors(parsed(text).expression(), &mut out);
    out
}

/// Every expression of `policy`, named for a message, as the cel crate reads it.
fn texts(policy: &PolicyExpressions) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, c) in policy.conditions.iter().enumerate() {
        out.push((format!("matchConditions[{i}]"), c.clone()));
    }
    for (name, v) in &policy.variables {
        out.push((format!("variables.{name}"), v.clone()));
    }
    for (kind, f) in &policy.finals {
        let text = if *kind == "jsonPatch" {
            readable_patch(f)
        } else {
            f.clone()
        };
        out.push((kind.to_string(), text));
    }
    out
}

/// The finder catches what cel-go's planner refuses: a conversion of a literal that fails on a branch
/// never taken (the error the API server gave `deploy/vap/` before), one inside a comprehension, a bad
/// constant pattern; and leaves alone what reads the object.
#[test]
fn the_constant_finder_refuses_what_cel_go_refuses() {
    with_stack(|| {
        for bad in [
            "'windows'.matches('^[0-9]+$') && int('windows') > 0",
            "object.kind == 'Pod' ? 1 : int('linux')",
            "object.spec.containers.exists(c, c.name == string(int('x')))",
            "[1, 2].map(x, x / 0).size() > 0",
            "object.spec.image.matches('(unclosed')",
            "object.spec.image.find('[z-a]') != ''",
        ] {
            assert!(!errors_of(bad).is_empty(), "not refused: {bad}");
        }
        for good in [
            "int(object.spec.replicas) > 0",
            "object.spec.containers.exists(c, int(c.port) > 0)",
            "['a', 'b'].exists(x, x == object.kind)",
            "int('42') + object.spec.x",
            "dyn('In') == 'In'",
            "'10.0.20348'.matches('^10\\\\.0\\\\.[0-9]+$')",
        ] {
            assert_eq!(errors_of(good), Vec::<String>::new(), "{good}");
        }
    });
}

/// No exported expression, for any settings that change what is generated, has a constant subexpression
/// that fails or a constant pattern that does not compile.
#[test]
fn every_constant_subexpression_evaluates() {
    with_stack(|| {
        let mut bad = Vec::new();
        // Each distinct expression once: the policies share most of theirs.
        let mut seen = std::collections::HashSet::new();
        let mut checked = 0;
        for (variant, settings) in settings_variety() {
            for policy in policy_expressions(&settings) {
                for (what, text) in texts(&policy) {
                    checked += 1;
                    if !seen.insert(text.clone()) {
                        continue;
                    }
                    for error in errors_of(&text) {
                        bad.push(format!("{variant}: {} {what}: {error}", policy.name));
                    }
                }
            }
        }
        assert!(checked > 500, "only {checked} expressions");
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    });
}

/// The Python of the virtual environment `cargo xtask setup` (and `cargo xtask test`) makes, with
/// cel-expr-python and protobuf.
fn python() -> std::path::PathBuf {
    let python = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../.tools/python/bin/python"
    ))
    .to_path_buf();
    assert!(
        python.exists(),
        "{} is missing: run `cargo xtask setup` (it installs cel-expr-python, Google's CEL checker)",
        python.display()
    );
    python
}

/// `policies` type-checked by `cel_types.py`: one line per expression that does not check.
fn type_errors(policies: &[serde_json::Value]) -> Vec<String> {
    use std::io::Write;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cel_types.py");
    let mut child = std::process::Command::new(python())
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    let input = serde_json::to_vec(policies).expect("json");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("write");
    let output = child.wait_with_output().expect("python ends");
    assert!(output.status.success(), "cel_types.py failed");
    let found: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout).expect("its JSON");
    found
        .iter()
        .map(|e| format!("{} {}: {}", e["policy"], e["what"], e["error"]))
        .collect()
}

fn policy_json(p: &PolicyExpressions) -> serde_json::Value {
    serde_json::json!({
        "name": p.name,
        "mutating": p.mutating,
        "conditions": p.conditions,
        "variables": p.variables,
        "finals": p.finals,
    })
}

/// The checker refuses what cel-go refuses, each in a policy of its own: a typo in a field of `request`, a
/// variable read before it is declared (or never), mixed literals (a `dyn` beside a string too, which is
/// why images are listed as `string(i)`), a message that is not a string, a validation that is not a bool,
/// a function of the wrong arity, an unknown function, a JSONPatch of a wrong field type or a map for a
/// JSONPatch; and passes the same expressions written right.
#[test]
fn the_type_checker_refuses_what_cel_go_refuses() {
    let policy = |variables: &[(&str, &str)], kind: &str, text: &str| {
        serde_json::json!({"name": text, "mutating": kind == "jsonPatch", "conditions": [],
            "variables": variables, "finals": [[kind, text]]})
    };
    let spec = [("spec", "object.spec")];
    let bad = [
        policy(&[], "expression", "request.operaton == 'UPDATE'"),
        policy(
            &[("a", "variables.b + 1"), ("b", "1")],
            "expression",
            "variables.a > 0",
        ),
        policy(&spec, "expression", "variables.nope"),
        policy(&[], "expression", "[1, 'a'].size() > 0"),
        policy(
            &spec,
            "expression",
            "[variables.spec.image, 'a'].size() > 0",
        ),
        policy(&[], "expression", "{'a': 1, 'b': 'c'}.size() > 0"),
        policy(&[], "messageExpression", "'replicas: ' + 1"),
        policy(&spec, "expression", "variables.spec"),
        policy(&[], "expression", "'a'.matches()"),
        policy(&[], "expression", "size(1, 2) > 0"),
        policy(&[], "expression", "'a'.nope()"),
        policy(
            &[],
            "jsonPatch",
            "[JSONPatch{op: 'add', path: 1, value: 1}]",
        ),
        policy(&[], "jsonPatch", "[{'op': 'add', 'path': '/a'}]"),
    ];
    let good = [
        policy(&[], "expression", "request.operation == 'UPDATE'"),
        policy(
            &[("b", "1"), ("a", "variables.b + 1")],
            "expression",
            "variables.a > 0",
        ),
        policy(
            &spec,
            "expression",
            "[string(variables.spec.image), 'a'].size() > 0",
        ),
        policy(&[], "expression", "{'a': dyn(1), 'b': dyn('c')}.size() > 0"),
        policy(&[], "messageExpression", "'replicas: ' + string(1)"),
        policy(
            &spec,
            "expression",
            "variables.spec.image.find('[a-z]+') != ''",
        ),
        policy(
            &[],
            "jsonPatch",
            "[JSONPatch{op: 'add', path: '/a', value: {'k': [1]}}]",
        ),
    ];
    let refused = type_errors(&bad);
    for case in &bad {
        let name = case["name"].to_string();
        assert!(
            refused.iter().any(|e| e.starts_with(&name)),
            "not refused: {name}\n{refused:#?}"
        );
    }
    assert_eq!(type_errors(&good), Vec::<String>::new());
}

/// Every exported expression, for every settings that changes what is generated, type-checks against
/// the declarations of the API server (`cel_types.py`: `object` and `oldObject` dyn, `request` a
/// `kubernetes.AdmissionRequest`, `variables.*` of their checked types, the return types it requires,
/// literals of one element type).
#[test]
fn every_expression_type_checks_as_the_api_server_declares_it() {
    let mut policies = Vec::new();
    for (variant, settings) in settings_variety() {
        for p in policy_expressions(&settings) {
            let mut json = policy_json(&p);
            json["name"] = format!("{variant}: {}", p.name).into();
            policies.push(json);
        }
    }
    assert!(policies.len() > 100, "only {} policies", policies.len());
    let errors = type_errors(&policies);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
