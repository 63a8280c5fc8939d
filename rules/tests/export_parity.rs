//! Parity of the exported admission policies with `winplace check` (DESIGN "The API server as a fourth
//! place"): every ValidatingAdmissionPolicy `winplace export` writes is evaluated with kube-cel (the kube-rs
//! project's Kubernetes CEL library: the `cel` interpreter with Kubernetes' extension functions) over every
//! workload of every corpus case, as the API server would admit it (matchConditions, then the variables
//! in order, then the validation), and the rules it denies or warns about must be exactly the exported
//! rules that the rules crate's [`Checker`] reports on that object alone with the case's settings.
//!
//! What the API server never admits is left out, and said: objects of API versions it no longer serves
//! (`workload-api-version-removed`) and objects whose pod template cannot be read (`manifest-invalid`).

#[path = "common/corpus.rs"]
mod corpus;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kube_cel::KubeCelExt;
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{Context, Program, Value as CelValue};
use serde_json::Value;
use winplace_rules::export::{self, Naming};
use winplace_rules::rules::RuleId;
use winplace_rules::{Checker, Settings, input, model};

/// A JSON value as CEL sees a Kubernetes object: integers are `int`.
fn to_cel(value: &Value) -> CelValue {
    match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => CelValue::Int(i),
            None => CelValue::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Array(items) => CelValue::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Object(map) => {
            let map: HashMap<Key, CelValue> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v)))
                .collect();
            CelValue::Map(Map { map: Arc::new(map) })
        }
    }
}

/// One compiled policy: its rule, matchConditions, variables and validation.
struct Policy {
    rule: RuleId,
    conditions: Vec<(String, Program)>,
    variables: Vec<(String, Program)>,
    validation: Program,
}

fn compile(text: &str, what: &str) -> Program {
    Program::compile(text).unwrap_or_else(|e| {
        let errors: Vec<String> = e
            .errors
            .iter()
            .map(|e| format!("{:?} {}", e.pos, e.msg))
            .collect();
        panic!("{what} does not compile: {errors:?}\n{text}")
    })
}

/// The exported ValidatingAdmissionPolicies for `settings`, compiled.
fn policies(settings: &Settings) -> Vec<Policy> {
    export::validating(settings, Naming::Cluster)
        .into_iter()
        .filter(|d| d.value["kind"] == "ValidatingAdmissionPolicy")
        .map(|d| {
            let spec = &d.value["spec"];
            let named = |list: &Value, key: &str| -> Vec<(String, Program)> {
                list.as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let name = c["name"].as_str().unwrap_or_default().to_string();
                        let text = c[key].as_str().unwrap_or_default();
                        let program = compile(text, &format!("{} {name}", d.name));
                        (name, program)
                    })
                    .collect()
            };
            let validations = spec["validations"].as_array().cloned().unwrap_or_default();
            assert_eq!(validations.len(), 1, "{}", d.name);
            Policy {
                rule: d.rule,
                conditions: named(&spec["matchConditions"], "expression"),
                variables: named(&spec["variables"], "expression"),
                validation: compile(
                    validations[0]["expression"].as_str().unwrap_or_default(),
                    &d.name,
                ),
            }
        })
        .collect()
}

/// Whether `policy` denies (or warns about) `object` in `namespace`; `Err` on an evaluation error.
fn fires(policy: &Policy, object: &Value, namespace: &str) -> Result<bool, String> {
    let mut ctx = Context::default();
    ctx.register_all();
    ctx.add_variable_from_value("object", to_cel(object));
    ctx.add_variable_from_value(
        "request",
        to_cel(&serde_json::json!({"namespace": namespace, "operation": "CREATE"})),
    );
    for (name, condition) in &policy.conditions {
        match condition.execute(&ctx) {
            Ok(CelValue::Bool(true)) => {}
            Ok(CelValue::Bool(false)) => return Ok(false),
            other => return Err(format!("matchCondition {name}: {other:?}")),
        }
    }
    let mut values: HashMap<Key, CelValue> = HashMap::new();
    for (name, variable) in &policy.variables {
        ctx.add_variable_from_value(
            "variables",
            CelValue::Map(Map {
                map: Arc::new(values.clone()),
            }),
        );
        let value = variable
            .execute(&ctx)
            .map_err(|e| format!("variable {name}: {e}"))?;
        values.insert(Key::String(Arc::new(name.clone())), value);
    }
    ctx.add_variable_from_value(
        "variables",
        CelValue::Map(Map {
            map: Arc::new(values),
        }),
    );
    match policy.validation.execute(&ctx) {
        Ok(CelValue::Bool(passed)) => Ok(!passed),
        other => Err(format!("validation: {other:?}")),
    }
}

/// The API versions the policies match (what the API server serves today).
fn served(api_version: &str, kind: &str) -> bool {
    match kind {
        "Pod" | "ReplicationController" => api_version == "v1",
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" => api_version == "apps/v1",
        "Job" | "CronJob" => api_version == "batch/v1",
        _ => false,
    }
}

/// The exported rules the checker and the policies report on each workload of `text`: one line per
/// object that differs (or fails to evaluate), and the number of objects compared.
fn compare(text: &str, settings: &Settings) -> (Vec<String>, usize) {
    let policies = policies(settings);
    let exported: BTreeSet<&str> = policies.iter().map(|p| p.rule.as_str()).collect();
    let checker = Checker::builder().settings(settings).build();
    let parsed = input::parse("input.yaml", text, &input::Limits::default());
    let mut differences = Vec::new();
    let mut compared = 0;
    for object in model::objects(&parsed.documents) {
        if !served(&object.api_version, &object.kind)
            || !matches!(model::pod_template(&object), Some(Ok(_)))
        {
            continue;
        }
        compared += 1;
        let want: BTreeSet<String> = checker
            .check_value(object.value.clone())
            .into_iter()
            .filter(|f| exported.contains(f.rule.as_str()))
            .map(|f| f.rule)
            .collect();
        let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
        let mut got = BTreeSet::new();
        for policy in &policies {
            match fires(policy, &object.value, &namespace) {
                Ok(true) => {
                    got.insert(policy.rule.as_str().to_string());
                }
                Ok(false) => {}
                Err(e) => differences.push(format!(
                    "{}: {} does not evaluate: {e}",
                    format!("{}/{}", object.kind, object.name),
                    policy.rule
                )),
            }
        }
        if want != got {
            differences.push(format!(
                "{}: check reports {want:?}, the policies {got:?}",
                format!("{}/{}", object.kind, object.name)
            ));
        }
    }
    (differences, compared)
}

/// Runs `f` on a thread with a large stack: the cel crate's parser recurses once per nesting level,
/// and the image classification nests one conditional per table row.
fn with_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

#[test]
fn the_policies_report_what_check_reports_on_every_corpus_case() {
    with_stack(parity_over_the_corpus);
}

fn parity_over_the_corpus() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for case in corpus::cases() {
        let case = case.expect("corpus case");
        let settings = case.settings().expect("settings");
        let (differences, n) = compare(&case.input, &settings);
        compared += n;
        failures.extend(
            differences
                .into_iter()
                .map(|d| format!("{}: {d}", case.name)),
        );
    }
    assert!(compared > 50, "only {compared} objects compared");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every exported rule fires somewhere in the corpus through its policy: the parity above is not
/// parity of policies that never fire.
#[test]
fn every_exported_rule_fires_on_some_corpus_object() {
    with_stack(every_rule_fires);
}

fn every_rule_fires() {
    let mut fired: BTreeSet<RuleId> = BTreeSet::new();
    for case in corpus::cases() {
        let case = case.expect("corpus case");
        let settings = case.settings().expect("settings");
        let policies = policies(&settings);
        let parsed = input::parse("input.yaml", &case.input, &input::Limits::default());
        for object in model::objects(&parsed.documents) {
            if !served(&object.api_version, &object.kind) {
                continue;
            }
            for p in &policies {
                if fires(p, &object.value, "default") == Ok(true) {
                    fired.insert(p.rule);
                }
            }
        }
    }
    let missing: Vec<&RuleId> = winplace_rules::rules::cel::EXPORTED
        .iter()
        .filter(|r| !fired.contains(r))
        .collect();
    assert!(missing.is_empty(), "never fired: {missing:?}");
}
