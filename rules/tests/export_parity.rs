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

thread_local! {
    /// CEL's and Kubernetes' functions, registered once per test thread: each evaluation is a scope of
    /// its own inside it, instead of a new context that registers them all again.
    static FUNCTIONS: Context<'static> = {
        let mut root = Context::default();
        root.register_all();
        root
    };
}

/// The context the API server evaluates a policy's expressions in for `object` in `namespace`: `object`,
/// `request` and, when every matchCondition holds, the `variables` bound in their order (a variable sees
/// the ones before it); `None` when a matchCondition says no.
fn admission_context<'r>(
    root: &'r Context<'r>,
    conditions: &[(String, Program)],
    variables: &[(String, Program)],
    object: &Value,
    namespace: &str,
) -> Result<Option<Context<'r>>, String> {
    let mut ctx = root.new_inner_scope();
    ctx.add_variable_from_value("object", to_cel(object));
    ctx.add_variable_from_value(
        "request",
        to_cel(&serde_json::json!({"namespace": namespace, "operation": "CREATE"})),
    );
    for (name, condition) in conditions {
        match condition.execute(&ctx) {
            Ok(CelValue::Bool(true)) => {}
            Ok(CelValue::Bool(false)) => return Ok(None),
            other => return Err(format!("matchCondition {name}: {other:?}")),
        }
    }
    let mut values: HashMap<Key, CelValue> = HashMap::new();
    for (name, variable) in variables {
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
    Ok(Some(ctx))
}

/// Whether `policy` denies (or warns about) `object` in `namespace`; `Err` on an evaluation error.
fn fires(policy: &Policy, object: &Value, namespace: &str) -> Result<bool, String> {
    FUNCTIONS.with(|root| {
        let Some(ctx) = admission_context(
            root,
            &policy.conditions,
            &policy.variables,
            object,
            namespace,
        )?
        else {
            return Ok(false);
        };
        match policy.validation.execute(&ctx) {
            Ok(CelValue::Bool(passed)) => Ok(!passed),
            other => Err(format!("validation: {other:?}")),
        }
    })
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

/// What a run compared: the objects, the differences (or evaluation errors), the rules that fired.
#[derive(Default)]
struct Outcome {
    compared: usize,
    /// Objects the mutating policies changed.
    mutated: usize,
    differences: Vec<String>,
    fired: BTreeSet<RuleId>,
}

/// The exported rules the checker and the policies report on each workload of `text`: a difference
/// for each object where they differ (or a policy fails to evaluate).
fn compare(source: &str, text: &str, settings: &Settings, policies: &[Policy], out: &mut Outcome) {
    let exported: BTreeSet<&str> = policies.iter().map(|p| p.rule.as_str()).collect();
    let checker = Checker::builder().settings(settings).build();
    let parsed = input::parse("input.yaml", text, &input::Limits::default());
    for object in model::objects(&parsed.documents) {
        if !served(&object.api_version, &object.kind)
            || !matches!(model::pod_template(&object), Some(Ok(_)))
        {
            continue;
        }
        out.compared += 1;
        let want: BTreeSet<String> = checker
            .check_value(object.value.clone())
            .into_iter()
            .filter(|f| exported.contains(f.rule.as_str()))
            .map(|f| f.rule)
            .collect();
        let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
        let mut got = BTreeSet::new();
        for policy in policies {
            match fires(policy, &object.value, &namespace) {
                Ok(true) => {
                    got.insert(policy.rule.as_str().to_string());
                    out.fired.insert(policy.rule);
                }
                Ok(false) => {}
                Err(e) => out.differences.push(format!(
                    "{source}: {}/{}: {} does not evaluate: {e}",
                    object.kind, object.name, policy.rule
                )),
            }
        }
        if want != got {
            out.differences.push(format!(
                "{source}: {}/{}: check reports {want:?}, the policies {got:?}",
                object.kind, object.name
            ));
        }
    }
}

/// Runs `f` on a thread with a large stack: the cel crate's parser recurses once per nesting level.
fn with_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

/// The playground's examples (`dashboard/examples/`), checked with the default settings.
fn playground_examples() -> Vec<(String, String)> {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dashboard/examples"
    ));
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("dashboard/examples")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml") && !p.to_string_lossy().contains("cluster")
        })
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("example");
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

/// Pods over the images the classification tables know (one per row, with tags that name a build, a
/// Windows variant, a Linux distribution, nothing, a digest), alone, with a Linux image, pinned to a
/// build and to an OS: the image rules of the CEL against `classify_image`.
fn image_pods() -> String {
    let images = [
        "mcr.microsoft.com/windows/servercore:ltsc2019",
        "mcr.microsoft.com/windows/servercore:ltsc2022-amd64",
        "mcr.microsoft.com/windows/nanoserver:10.0.17763.437",
        "mcr.microsoft.com/windows/nanoserver:1809-KB4493509",
        "mcr.microsoft.com/windows:20H2",
        "MCR.Microsoft.com/windows/servercore:ltsc2022",
        "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019",
        "mcr.microsoft.com/windows/servercore:latest",
        "mcr.microsoft.com/windows/servercore@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "microsoft/iis:windowsservercore-ltsc2016",
        "docker.io/microsoft/nanoserver:1803",
        "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
        "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1",
        "mcr.microsoft.com/dotnet/framework/runtime:4.8",
        "mcr.microsoft.com/dotnet/framework/sdk:4.8-windowsservercore-ltsc2022",
        "mcr.microsoft.com/dotnet/framework/samples:aspnetapp",
        "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
        "mcr.microsoft.com/dotnet/sdk:5.0-nanoserver-2009",
        "mcr.microsoft.com/dotnet/aspnet:8.0",
        "mcr.microsoft.com/dotnet/aspnet:8.0-alpine3.20",
        "mcr.microsoft.com/dotnet/runtime:9.0-noble-chiseled",
        "mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022",
        "python:3.12-windowsservercore-ltsc2022",
        "golang:1.23",
        "mongo:7.0-windowsservercore-1809",
        "fluent/fluentd:v1.16-windows-ltsc2019-1",
        "fluent/fluentd:v1.16-1",
        "nginx",
        "docker.io/library/nginx:1.27",
        "index.docker.io/library/busybox:1.36",
        "registry.k8s.io/pause:3.10",
        "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
        "mcr.microsoft.com/cbl-mariner/base/core:2.0",
        "ghcr.io/example/shop-api:2.3.1",
        "localhost:5000/team/app:1.2",
        "Not_A/Valid:ref",
    ];
    let mut out = String::new();
    let pod = |name: &str, spec: &str, images: &[&str]| {
        let containers: String = images
            .iter()
            .enumerate()
            .map(|(i, image)| format!("  - {{name: c{i}, image: \"{image}\"}}\n"))
            .collect();
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{spec}  containers:\n{containers}"
        )
    };
    let pinned = "  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";
    let range = "  nodeSelector: {kubernetes.io/os: windows}\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.17763\", \"10.0.26100\"]}]}]}}}\n";
    let linux = "  nodeSelector: {kubernetes.io/os: linux}\n";
    for (i, image) in images.iter().enumerate() {
        out.push_str(&pod(&format!("alone-{i}"), "", &[image]));
        out.push_str(&pod(&format!("with-nginx-{i}"), "", &[image, "nginx:1.27"]));
        out.push_str(&pod(&format!("pinned-{i}"), pinned, &[image]));
        out.push_str(&pod(&format!("range-{i}"), range, &[image]));
        out.push_str(&pod(&format!("linux-{i}"), linux, &[image, image]));
    }
    out
}

/// A CEL value as JSON (what the API server makes of a JSONPatch's value).
fn from_cel(value: &CelValue) -> Value {
    match value {
        CelValue::Null => Value::Null,
        CelValue::Bool(b) => Value::Bool(*b),
        CelValue::Int(i) => Value::from(*i),
        CelValue::UInt(u) => Value::from(*u),
        CelValue::Float(f) => Value::from(*f),
        CelValue::String(s) => Value::String(s.to_string()),
        CelValue::List(items) => Value::Array(items.iter().map(from_cel).collect()),
        CelValue::Map(m) => Value::Object(
            m.map
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Key::String(s) => s.to_string(),
                        other => format!("{other:?}"),
                    };
                    (key, from_cel(v))
                })
                .collect(),
        ),
        other => panic!("unexpected CEL value {other:?}"),
    }
}

/// One compiled MutatingAdmissionPolicy: its rule, matchConditions, variables and JSONPatch mutation.
struct Mutation {
    rule: RuleId,
    conditions: Vec<(String, Program)>,
    variables: Vec<(String, Program)>,
    patches: Program,
}

/// The exported MutatingAdmissionPolicies for `settings`, compiled. The cel crate has no message
/// literals, so each `JSONPatch{op: …, path: …, value: …}` is read as the map `{'op': …, 'path': …,
/// 'value': …}` (the generator writes them in exactly that form); the rest of the expression is as
/// exported.
fn mutations(settings: &Settings) -> Vec<Mutation> {
    let docs = export::mutating(settings, Naming::Cluster).expect("fixes exported");
    docs.into_iter()
        .filter(|d| d.value["kind"] == "MutatingAdmissionPolicy")
        .map(|d| {
            let spec = &d.value["spec"];
            assert_eq!(spec["reinvocationPolicy"], "IfNeeded");
            let named = |list: &Value| -> Vec<(String, Program)> {
                list.as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let name = c["name"].as_str().unwrap_or_default().to_string();
                        let text = c["expression"].as_str().unwrap_or_default();
                        (name.clone(), compile(text, &format!("{} {name}", d.name)))
                    })
                    .collect()
            };
            let mutation = &spec["mutations"][0];
            assert_eq!(mutation["patchType"], "JSONPatch");
            let text = mutation["jsonPatch"]["expression"]
                .as_str()
                .unwrap_or_default()
                .replace("JSONPatch{op: ", "{'op': ")
                .replace(", path: variables.prefix", ", 'path': variables.prefix")
                .replace(", value: ", ", 'value': ");
            assert!(!text.contains("JSONPatch"), "{text}");
            Mutation {
                rule: d.rule,
                conditions: named(&spec["matchConditions"]),
                variables: named(&spec["variables"]),
                patches: compile(&text, &d.name),
            }
        })
        .collect()
}

/// The JSON patch `m` makes on `object` (none when a matchCondition says no).
fn patches(m: &Mutation, object: &Value, namespace: &str) -> Result<Vec<Value>, String> {
    FUNCTIONS.with(|root| {
        let Some(ctx) = admission_context(root, &m.conditions, &m.variables, object, namespace)?
        else {
            return Ok(Vec::new());
        };
        match m.patches.execute(&ctx) {
            Ok(list @ CelValue::List(_)) => match from_cel(&list) {
                Value::Array(items) => Ok(items),
                _ => unreachable!(),
            },
            other => Err(format!("mutation: {other:?}")),
        }
    })
}

/// Applies a JSON patch, as the API server does (all or nothing).
fn apply(object: &Value, ops: Vec<Value>) -> Result<Value, String> {
    let fix = winplace_rules::Fix {
        description: String::new(),
        patch: ops.into(),
    };
    let (value, skipped) = winplace_rules::fix::apply_fixes(object, &[&fix]);
    match skipped.first() {
        None => Ok(value),
        Some((_, why)) => Err(why.clone()),
    }
}

/// What `check --fix` makes of `object` with only `rules`' fixes: rounds of check → apply, as the
/// repair loop runs them.
fn repaired_by_check(checker: &Checker<'_>, object: &Value, rules: &BTreeSet<&str>) -> Value {
    let mut current = object.clone();
    for _ in 0..winplace_rules::fix::MAX_ROUNDS {
        let findings = checker.check_value(current.clone());
        let fixes: Vec<&winplace_rules::Fix> = findings
            .iter()
            .filter(|f| rules.contains(f.rule.as_str()))
            .filter_map(|f| f.fix.as_ref())
            .collect();
        let (next, _) = winplace_rules::fix::apply_fixes(&current, &fixes);
        if fixes.is_empty() || next == current {
            break;
        }
        current = next;
    }
    current
}

/// The MutatingAdmissionPolicies applied in order, each to the object the previous one left, and once
/// more when one changed it (`reinvocationPolicy: IfNeeded`: the API server reinvokes a policy once
/// when a later mutation changed the object).
fn repaired_by_policies(ms: &[Mutation], object: &Value, namespace: &str) -> Result<Value, String> {
    let mut current = object.clone();
    for _pass in 0..2 {
        let before = current.clone();
        for m in ms {
            let ops = patches(m, &current, namespace).map_err(|e| format!("{}: {e}", m.rule))?;
            if !ops.is_empty() {
                current = apply(&current, ops).map_err(|e| format!("{}: {e}", m.rule))?;
            }
        }
        if current == before {
            break;
        }
    }
    Ok(current)
}

/// Every workload of `text`: the mutating policies give what `check --fix` gives with their rules' fixes.
fn compare_fixes(
    source: &str,
    text: &str,
    settings: &Settings,
    ms: &[Mutation],
    out: &mut Outcome,
) {
    let rules: BTreeSet<&str> = ms.iter().map(|m| m.rule.as_str()).collect();
    let checker = Checker::builder().settings(settings).build();
    let parsed = input::parse("input.yaml", text, &input::Limits::default());
    for object in model::objects(&parsed.documents) {
        if !served(&object.api_version, &object.kind)
            || !matches!(model::pod_template(&object), Some(Ok(_)))
        {
            continue;
        }
        out.compared += 1;
        let want = repaired_by_check(&checker, &object.value, &rules);
        let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
        match repaired_by_policies(ms, &object.value, &namespace) {
            Ok(got) if got == want => {
                out.mutated += usize::from(got != object.value);
            }
            Ok(got) => out.differences.push(format!(
                "{source}: {}/{}: check --fix gives\n{want}\nthe policies\n{got}",
                object.kind, object.name
            )),
            Err(e) => out
                .differences
                .push(format!("{source}: {}/{}: {e}", object.kind, object.name)),
        }
    }
}

#[test]
fn the_mutating_policies_repair_what_check_fix_repairs() {
    with_stack(fix_parity);
}

/// Every corpus case whose settings the mutating policies support, the playground's examples and
/// [`image_pods`].
fn fix_parity() {
    let mut out = Outcome::default();
    let defaults = Settings::default();
    let default_mutations = mutations(&defaults);
    for case in corpus::cases() {
        let case = case.expect("corpus case");
        let settings = case.settings().expect("settings");
        if export::mutating(&settings, Naming::Cluster).is_err() {
            continue;
        }
        let own;
        let ms = match &case.settings_text {
            None => &default_mutations,
            Some(_) => {
                own = mutations(&settings);
                &own
            }
        };
        compare_fixes(&case.name, &case.input, &settings, ms, &mut out);
    }
    for (name, text) in playground_examples() {
        compare_fixes(&name, &text, &defaults, &default_mutations, &mut out);
    }
    compare_fixes(
        "image pods",
        &image_pods(),
        &defaults,
        &default_mutations,
        &mut out,
    );
    assert!(out.compared > 200, "only {} objects compared", out.compared);
    assert!(
        out.mutated > 100,
        "the policies changed only {} objects",
        out.mutated
    );
    assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
}

#[test]
fn the_policies_report_what_check_reports() {
    with_stack(parity);
}

/// Every corpus case with its settings, the playground's examples and [`image_pods`] with the default
/// settings: no difference, and every exported rule fires somewhere (the parity is not that of policies
/// that never fire).
fn parity() {
    let mut out = Outcome::default();
    let defaults = Settings::default();
    let default_policies = policies(&defaults);
    for case in corpus::cases() {
        let case = case.expect("corpus case");
        let settings = case.settings().expect("settings");
        let own;
        let policies = match &case.settings_text {
            None => &default_policies,
            Some(_) => {
                own = policies(&settings);
                &own
            }
        };
        compare(&case.name, &case.input, &settings, policies, &mut out);
    }
    let corpus_objects = out.compared;
    for (name, text) in playground_examples() {
        compare(&name, &text, &defaults, &default_policies, &mut out);
    }
    compare(
        "image pods",
        &image_pods(),
        &defaults,
        &default_policies,
        &mut out,
    );
    assert!(
        corpus_objects > 50,
        "only {corpus_objects} corpus objects compared"
    );
    assert!(
        out.compared > corpus_objects + 150,
        "only {} objects compared",
        out.compared
    );
    assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
    let missing: Vec<&RuleId> = winplace_rules::rules::cel::EXPORTED
        .iter()
        .filter(|r| !out.fired.contains(r))
        .collect();
    assert!(missing.is_empty(), "never fired: {missing:?}");
}
