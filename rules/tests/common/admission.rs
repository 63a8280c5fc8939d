//! The exported admission policies evaluated as the API server evaluates them, with kube-cel (the kube-rs
//! project's Kubernetes CEL library: the `cel` interpreter with Kubernetes' extension functions), and
//! compared with `winplace check` (docs/policy.md). Included with `#[path]` by
//! the rules crate's parity test (`rules/tests/export_parity.rs`: the corpus, the playground's examples,
//! pods over every known image) and by the synthetic crate's (`synthetic/tests/export_parity_seeds.rs`:
//! the demo's seeded clusters), so both compare the same way.
//!
//! Fast by sharing what the API server would compute alike: every expression is compiled once per
//! settings (the policies' variables are one list, `cel::variables`, each policy carrying the ones it
//! reads), each object's variables are evaluated once and read by every policy (each policy sees only the
//! variables it declares, each variable only the ones before it), the functions are registered once per
//! thread, and a regular expression is compiled once (as cel-go's `OptOptimize` compiles constant
//! patterns once, where the cel crate compiles one per call).

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use kube_cel::KubeCelExt;
use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::objects::{Key, Map};
use kube_cel::cel::{Context, ExecutionError, FunctionContext, Program, Value as CelValue};
use serde_json::Value;
use winplace_rules::catalog::RuleId;
use winplace_rules::export::{self, Naming};
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

thread_local! {
    /// The compiled regular expressions, by pattern.
    static REGEXES: RefCell<HashMap<String, Arc<regex::Regex>>> = RefCell::new(HashMap::new());
    /// CEL's and Kubernetes' functions, registered once per test thread: each evaluation is a scope of
    /// its own inside it. `matches` and `find` compile each pattern once.
    static FUNCTIONS: Context<'static> = {
        let mut root = Context::default();
        root.register_all();
        root.add_function("matches", cached_matches);
        root.add_function("find", cached_find);
        // CEL's `dyn(x)`: a type conversion, `x` at run time (the cel crate has no such function).
        root.add_function("dyn", |Arguments(args): Arguments| -> Result<CelValue, ExecutionError> {
            args.first().cloned().ok_or_else(|| ExecutionError::function_error("dyn", "no argument"))
        });
        root
    };
}

fn regex(pattern: &str) -> Result<Arc<regex::Regex>, regex::Error> {
    REGEXES.with(|cache| {
        if let Some(re) = cache.borrow().get(pattern) {
            return Ok(re.clone());
        }
        let re = Arc::new(regex::Regex::new(pattern)?);
        cache.borrow_mut().insert(pattern.to_string(), re.clone());
        Ok(re)
    })
}

/// The cel crate's `matches`, with the pattern compiled once.
fn cached_matches(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    pattern: Arc<String>,
) -> Result<bool, ExecutionError> {
    match regex(&pattern) {
        Ok(re) => Ok(re.is_match(&this)),
        Err(err) => Err(ftx.error(format!("'{pattern}' not a valid regex:\n{err}"))),
    }
}

/// kube-cel's `find`, with the pattern compiled once.
fn cached_find(
    This(this): This<Arc<String>>,
    pattern: Arc<String>,
) -> Result<CelValue, ExecutionError> {
    let re = regex(&pattern)
        .map_err(|e| ExecutionError::function_error("find", format!("invalid regex: {e}")))?;
    let found = re
        .find(&this)
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    Ok(CelValue::String(Arc::new(found)))
}

/// One compiled policy (validating or mutating): its rule, matchConditions (indices into
/// [`Compiled::conditions`]), the variables it declares (indices into [`Compiled::variables`]) and its
/// validation or JSONPatch expression.
pub struct Policy {
    pub rule: RuleId,
    conditions: Vec<usize>,
    variables: Vec<usize>,
    expression: Program,
    /// The validation's `messageExpression`, if any.
    message: Option<Program>,
}

/// The exported policies of one settings, compiled: every distinct matchCondition and variable once.
pub struct Compiled {
    conditions: Vec<(String, Program)>,
    /// In the order of `cel::variables`: a variable reads only the ones before it.
    variables: Vec<(String, Program)>,
    /// For each variable, the ones before it that it reads (transitively), as the API server binds
    /// them for a policy that declares it.
    reads: Vec<Vec<usize>>,
    /// The index of the first twin over `oldObject` (`export::all_variables` lists them after the others).
    first_old: usize,
    pub policies: Vec<Policy>,
}

/// The cel crate has no message literals, so each `JSONPatch{op: …, path: …, value: …}` is read as the
/// map `{'op': …, 'path': …, 'value': …}` (the generator writes them in exactly that form); the rest of
/// the expression is as exported.
fn patch_as_map(text: &str) -> String {
    let text = text
        .replace("JSONPatch{op: ", "{'op': ")
        .replace(", path: variables.prefix", ", 'path': variables.prefix")
        .replace(", value: ", ", 'value': ");
    assert!(!text.contains("JSONPatch"), "{text}");
    text
}

impl Compiled {
    /// The exported ValidatingAdmissionPolicies (or, with `mutating`, MutatingAdmissionPolicies) for
    /// `settings`, compiled.
    pub fn new(settings: &Settings, mutating: bool) -> Option<Compiled> {
        let documents = if mutating {
            export::mutating(settings, Naming::Cluster)
        } else {
            export::validating(settings, Naming::Cluster)
        };
        let all = export::all_variables(settings);
        let mut out = Compiled {
            conditions: Vec::new(),
            variables: all
                .iter()
                .map(|(name, expression)| (name.clone(), compile(expression, name)))
                .collect(),
            reads: all
                .iter()
                .map(|(_, expression)| {
                    export::variables_for(&all, expression)
                        .iter()
                        .map(|r| all.iter().position(|a| a.0 == r.0).unwrap_or(0))
                        .collect()
                })
                .collect(),
            first_old: winplace_rules::rules::cel::variables(settings).len(),
            policies: Vec::new(),
        };
        let mut condition_texts: Vec<String> = Vec::new();
        for d in documents.iter().filter(|d| {
            !d.value["kind"]
                .as_str()
                .unwrap_or_default()
                .ends_with("Binding")
        }) {
            let spec = &d.value["spec"];
            let conditions = spec["matchConditions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let text = c["expression"].as_str().unwrap_or_default();
                    match condition_texts.iter().position(|t| t == text) {
                        Some(i) => i,
                        None => {
                            let name = c["name"].as_str().unwrap_or_default().to_string();
                            out.conditions.push((name, compile(text, &d.name)));
                            condition_texts.push(text.to_string());
                            condition_texts.len() - 1
                        }
                    }
                })
                .collect();
            // Each declared variable is one of the shared list, with the same expression, in its order.
            let mut variables = Vec::new();
            for v in spec["variables"].as_array().into_iter().flatten() {
                let name = v["name"].as_str().unwrap_or_default();
                let i = all
                    .iter()
                    .position(|a| a.0 == name)
                    .unwrap_or_else(|| panic!("{}: variable {name} not shared", d.name));
                assert_eq!(
                    v["expression"].as_str(),
                    Some(all[i].1.as_str()),
                    "{} {name}",
                    d.name
                );
                assert!(
                    variables.last().is_none_or(|&j| j < i),
                    "{}: {name} out of order",
                    d.name
                );
                variables.push(i);
            }
            let expression = if mutating {
                let spec_m = &spec["mutations"][0];
                assert_eq!(spec["reinvocationPolicy"], "IfNeeded");
                assert_eq!(spec_m["patchType"], "JSONPatch");
                patch_as_map(
                    spec_m["jsonPatch"]["expression"]
                        .as_str()
                        .unwrap_or_default(),
                )
            } else {
                let validations = spec["validations"].as_array().cloned().unwrap_or_default();
                assert_eq!(validations.len(), 1, "{}", d.name);
                validations[0]["expression"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            };
            let message = spec["validations"][0]["messageExpression"]
                .as_str()
                .map(|m| compile(m, &format!("{} messageExpression", d.name)));
            out.policies.push(Policy {
                rule: d.rule,
                conditions,
                variables,
                expression: compile(&expression, &d.name),
                message,
            });
        }
        Some(out)
    }
}

/// What one admission request gives the policies: the object, the object before an UPDATE, the request's
/// namespace, operation and subresource.
#[derive(Clone, Debug)]
pub struct Request {
    pub object: Value,
    pub old_object: Option<Value>,
    pub namespace: String,
    pub operation: &'static str,
    pub sub_resource: &'static str,
}

impl Request {
    /// A CREATE of `object` in `namespace`.
    pub fn create(object: &Value, namespace: &str) -> Request {
        Request {
            object: object.clone(),
            old_object: None,
            namespace: namespace.to_string(),
            operation: "CREATE",
            sub_resource: "",
        }
    }

    /// An UPDATE of `old` into `object`.
    pub fn update(old: &Value, object: &Value, namespace: &str) -> Request {
        Request {
            old_object: Some(old.clone()),
            operation: "UPDATE",
            ..Request::create(object, namespace)
        }
    }

    /// The same request with `object` changed (by a mutation).
    pub fn with_object(&self, object: &Value) -> Request {
        Request {
            object: object.clone(),
            ..self.clone()
        }
    }
}

/// One object under admission: its context (`object`, `request`) and what has been evaluated of it.
pub struct Admission<'r> {
    ctx: Context<'r>,
    /// An UPDATE (its old object's variables are bound).
    update: bool,
    conditions: Vec<Option<Result<bool, String>>>,
    variables: Vec<Option<Result<CelValue, String>>>,
}

impl<'r> Admission<'r> {
    fn new(root: &'r Context<'r>, compiled: &Compiled, request: &Request) -> Self {
        let mut ctx = root.new_inner_scope();
        ctx.add_variable_from_value("object", to_cel(&request.object));
        ctx.add_variable_from_value(
            "oldObject",
            request
                .old_object
                .as_ref()
                .map(to_cel)
                .unwrap_or(CelValue::Null),
        );
        ctx.add_variable_from_value(
            "request",
            to_cel(
                &serde_json::json!({"namespace": request.namespace, "operation": request.operation,
                "subResource": request.sub_resource}),
            ),
        );
        Admission {
            ctx,
            update: request.operation == "UPDATE",
            conditions: vec![None; compiled.conditions.len()],
            variables: vec![None; compiled.variables.len()],
        }
    }

    fn condition(&mut self, compiled: &Compiled, i: usize) -> Result<bool, String> {
        if self.conditions[i].is_none() {
            let (name, program) = &compiled.conditions[i];
            self.conditions[i] = Some(match program.execute(&self.ctx) {
                Ok(CelValue::Bool(b)) => Ok(b),
                other => Err(format!("matchCondition {name}: {other:?}")),
            });
        }
        self.conditions[i].clone().unwrap_or(Ok(false))
    }

    /// The `variables` map holding `names` (evaluated, each seeing only the variables before it).
    /// The twins over `oldObject` are bound only on an UPDATE: the API server evaluates a variable when an
    /// expression reads it, and the exported expressions read them only once `request.operation ==
    /// 'UPDATE'` held (an expression that read one on a CREATE would fail here on the missing key).
    fn variables_map(&mut self, compiled: &Compiled, names: &[usize]) -> Result<CelValue, String> {
        let mut map: HashMap<Key, CelValue> = HashMap::new();
        for &i in names {
            if i >= compiled.first_old && !self.update {
                continue;
            }
            let value = self.variable(compiled, i)?;
            map.insert(
                Key::String(Arc::new(compiled.variables[i].0.clone())),
                value,
            );
        }
        Ok(CelValue::Map(Map { map: Arc::new(map) }))
    }

    fn variable(&mut self, compiled: &Compiled, i: usize) -> Result<CelValue, String> {
        if let Some(done) = &self.variables[i] {
            return done.clone();
        }
        // The variables before it that it reads, as the API server binds them.
        let reads = compiled.reads[i].clone();
        let result = self.variables_map(compiled, &reads).and_then(|map| {
            let mut inner = self.ctx.new_inner_scope();
            inner.add_variable_from_value("variables", map);
            let (name, program) = &compiled.variables[i];
            program
                .execute(&inner)
                .map_err(|e| format!("variable {name}: {e}"))
        });
        self.variables[i] = Some(result.clone());
        result
    }

    /// `policy`'s expression for this object, `None` when a matchCondition says no.
    fn evaluate(
        &mut self,
        compiled: &Compiled,
        policy: &Policy,
    ) -> Result<Option<CelValue>, String> {
        for &c in &policy.conditions {
            if !self.condition(compiled, c)? {
                return Ok(None);
            }
        }
        let map = self.variables_map(compiled, &policy.variables)?;
        let mut inner = self.ctx.new_inner_scope();
        inner.add_variable_from_value("variables", map);
        policy
            .expression
            .execute(&inner)
            .map(Some)
            .map_err(|e| format!("{e}"))
    }
}

/// The rules whose validating policies deny (or warn about) `object` in `namespace`; `Err` names a
/// policy that fails to evaluate.
pub fn fired(
    compiled: &Compiled,
    object: &Value,
    namespace: &str,
) -> Result<BTreeSet<RuleId>, String> {
    Ok(fired_with_messages(compiled, object, namespace)?
        .into_keys()
        .collect())
}

/// [`fired`], with each policy's `messageExpression` evaluated as the API server does on a failed
/// validation (`None` without one).
pub fn fired_with_messages(
    compiled: &Compiled,
    object: &Value,
    namespace: &str,
) -> Result<std::collections::BTreeMap<RuleId, Option<String>>, String> {
    fired_on(compiled, &Request::create(object, namespace))
}

/// The rules whose validating policies deny (or warn about) `request`, each with its
/// `messageExpression` evaluated as the API server does on a failed validation (`None` without one).
pub fn fired_on(
    compiled: &Compiled,
    request: &Request,
) -> Result<std::collections::BTreeMap<RuleId, Option<String>>, String> {
    FUNCTIONS.with(|root| {
        let mut admission = Admission::new(root, compiled, request);
        let mut out = std::collections::BTreeMap::new();
        for policy in &compiled.policies {
            match admission.evaluate(compiled, policy) {
                Ok(None) | Ok(Some(CelValue::Bool(true))) => {}
                Ok(Some(CelValue::Bool(false))) => {
                    let message = match &policy.message {
                        None => None,
                        Some(program) => {
                            let map = admission.variables_map(compiled, &policy.variables)?;
                            let mut inner = admission.ctx.new_inner_scope();
                            inner.add_variable_from_value("variables", map);
                            match program.execute(&inner) {
                                Ok(CelValue::String(s)) => Some(s.to_string()),
                                other => {
                                    return Err(format!(
                                        "{}: messageExpression gives {other:?}",
                                        policy.rule
                                    ));
                                }
                            }
                        }
                    };
                    out.insert(policy.rule, message);
                }
                Ok(Some(other)) => {
                    return Err(format!("{}: validation gives {other:?}", policy.rule));
                }
                Err(e) => return Err(format!("{} does not evaluate: {e}", policy.rule)),
            }
        }
        Ok(out)
    })
}

/// A message without its parenthesized details (` (…)`, nested ones too): what the policies' messages
/// must say of the object is the rest (`check` adds details the CEL does not rebuild, such as which
/// signal made the pod Linux).
fn without_details(message: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in message.chars() {
        match c {
            '(' => {
                if depth == 0 && out.ends_with(' ') {
                    out.pop();
                }
                depth += 1;
            }
            ')' if depth > 0 => depth -= 1,
            c if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether the API server's message for `rule` (`winplace <id>: <body> See <page>`) says what one of
/// `check`'s messages of that rule says, details aside.
fn says_what_check_says(rule: RuleId, api: &str, check: &[String]) -> bool {
    let prefix = format!("winplace {rule}: ");
    let suffix = format!(" See {}", winplace_rules::catalog::doc_url(rule.as_str()));
    let Some(body) = api
        .strip_prefix(&prefix)
        .and_then(|b| b.strip_suffix(&suffix))
    else {
        return false;
    };
    check
        .iter()
        .any(|m| without_details(m) == without_details(body))
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
pub struct Outcome {
    pub compared: usize,
    /// Objects the mutating policies changed.
    pub mutated: usize,
    pub differences: Vec<String>,
    pub fired: BTreeSet<RuleId>,
    /// Messages of the policies (`messageExpression`) compared with `check`'s.
    pub messages: usize,
    /// Objects the mutating policies gave a build nodeSelector (`node.kubernetes.io/windows-build`) they
    /// did not have (the exact build pin).
    pub build_selectors: usize,
    /// Objects the mutating policies gave a runtimeClassName they did not have (settings `runtimeClasses`).
    pub runtime_classes: usize,
}

/// `value`'s pod spec.
fn pod_spec(value: &Value) -> &Value {
    match value["kind"].as_str() {
        Some("Pod") => &value["spec"],
        Some("CronJob") => &value["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => &value["spec"]["template"]["spec"],
    }
}

/// Whether `value`'s pod template has a nodeSelector on the Windows build.
fn has_build_selector(value: &Value) -> bool {
    pod_spec(value)["nodeSelector"]
        .get(winplace_rules::placement::BUILD_LABEL)
        .is_some()
}

/// The objects of `text` the policies match: served versions, with a readable pod template.
pub fn admitted_objects(text: &str) -> Vec<model::Object> {
    let parsed = input::parse("input.yaml", text, &input::Limits::default());
    model::objects(&parsed.documents)
        .into_iter()
        .filter(|o| {
            served(&o.api_version, &o.kind) && matches!(model::pod_template(o), Some(Ok(_)))
        })
        .collect()
}

/// The exported rules the checker and the policies report on each of `objects`: a difference for each
/// object where they differ (or a policy fails to evaluate), or where a policy's `messageExpression`
/// does not say what `check`'s message says.
pub fn compare(
    source: &str,
    objects: &[model::Object],
    settings: &Settings,
    compiled: &Compiled,
    out: &mut Outcome,
) {
    let exported: BTreeSet<&str> = compiled.policies.iter().map(|p| p.rule.as_str()).collect();
    let checker = Checker::builder().settings(settings).build();
    for object in objects {
        out.compared += 1;
        let findings: Vec<winplace_rules::Finding> = checker
            .check_value(object.value.clone())
            .into_iter()
            .filter(|f| exported.contains(f.rule.as_str()))
            .collect();
        let want: BTreeSet<String> = findings.iter().map(|f| f.rule.clone()).collect();
        let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
        match fired_with_messages(compiled, &object.value, &namespace) {
            Ok(rules) => {
                out.fired.extend(rules.keys().copied());
                let got: BTreeSet<String> = rules.keys().map(|r| r.as_str().to_string()).collect();
                if want != got {
                    out.differences.push(format!(
                        "{source}: {}/{}: check reports {want:?}, the policies {got:?}",
                        object.kind, object.name
                    ));
                }
                for (rule, message) in rules.iter().filter_map(|(r, m)| Some((r, m.as_ref()?))) {
                    let check: Vec<String> = findings
                        .iter()
                        .filter(|f| f.rule == rule.as_str())
                        .map(|f| f.message.clone())
                        .collect();
                    if check.is_empty() {
                        continue;
                    }
                    out.messages += 1;
                    if !says_what_check_says(*rule, message, &check) {
                        out.differences.push(format!(
                            "{source}: {}/{}: {rule}: the policy says {message:?}, check {check:?}",
                            object.kind, object.name
                        ));
                    }
                }
            }
            Err(e) => out
                .differences
                .push(format!("{source}: {}/{}: {e}", object.kind, object.name)),
        }
    }
}

/// `settings` with `buildPinning: exact` (the build pin a nodeSelector of one build).
pub fn exact(settings: &Settings) -> Settings {
    Settings {
        build_pinning: winplace_rules::settings::BuildPinning::Exact,
        ..settings.clone()
    }
}

/// `settings` with `runtimeClasses` mapping Windows Server 2022 (`10.0.20348`) to a RuntimeClass (2025
/// left unmapped: both ways of the mapping are taken).
pub fn classes(settings: &Settings) -> Settings {
    Settings {
        runtime_classes: [("10.0.20348".to_string(), "windows-2022".to_string())].into(),
        ..settings.clone()
    }
}

/// Runs `f` on a thread with a stack deep enough for the CEL interpreter's recursion.
pub fn with_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(f)
        .expect("thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
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

/// The JSON patch `policy` makes on the admitted object (none when a matchCondition says no).
fn patches(
    compiled: &Compiled,
    admission: &mut Admission<'_>,
    policy: &Policy,
) -> Result<Vec<Value>, String> {
    match admission.evaluate(compiled, policy)? {
        None => Ok(Vec::new()),
        Some(list @ CelValue::List(_)) => match from_cel(&list) {
            Value::Array(items) => Ok(items),
            _ => unreachable!(),
        },
        Some(other) => Err(format!("mutation: {other:?}")),
    }
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
/// when a later mutation changed the object). An object's variables are evaluated once until a patch
/// changes it.
pub fn repaired_by_policies(
    compiled: &Compiled,
    object: &Value,
    namespace: &str,
) -> Result<Value, String> {
    repaired_on(compiled, &Request::create(object, namespace))
}

/// [`repaired_by_policies`] for any request (an UPDATE compares with its old object).
pub fn repaired_on(compiled: &Compiled, request: &Request) -> Result<Value, String> {
    FUNCTIONS.with(|root| {
        let mut current = request.object.clone();
        let mut admission = Admission::new(root, compiled, request);
        for _pass in 0..2 {
            let before = current.clone();
            for policy in &compiled.policies {
                let ops = patches(compiled, &mut admission, policy)
                    .map_err(|e| format!("{}: {e}", policy.rule))?;
                if !ops.is_empty() {
                    let next = apply(&current, ops).map_err(|e| format!("{}: {e}", policy.rule))?;
                    if next != current {
                        current = next;
                        admission = Admission::new(root, compiled, &request.with_object(&current));
                    }
                }
            }
            if current == before {
                break;
            }
        }
        Ok(current)
    })
}

/// Every one of `objects`: the mutating policies give what `check --fix` gives with their rules' fixes.
pub fn compare_fixes(
    source: &str,
    objects: &[model::Object],
    settings: &Settings,
    compiled: &Compiled,
    out: &mut Outcome,
) {
    let rules: BTreeSet<&str> = compiled.policies.iter().map(|m| m.rule.as_str()).collect();
    let checker = Checker::builder().settings(settings).build();
    for object in objects {
        out.compared += 1;
        let want = repaired_by_check(&checker, &object.value, &rules);
        let namespace = object.namespace.clone().unwrap_or_else(|| "default".into());
        match repaired_by_policies(compiled, &object.value, &namespace) {
            Ok(got) if got == want => {
                out.mutated += usize::from(got != object.value);
                out.build_selectors +=
                    usize::from(has_build_selector(&got) && !has_build_selector(&object.value));
                out.runtime_classes += usize::from(
                    pod_spec(&got).get("runtimeClassName").is_some()
                        && pod_spec(&object.value).get("runtimeClassName").is_none(),
                );
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

/// The expressions of one exported policy as the API server compiles them: its matchConditions, its
/// variables in order (each may read the ones before it), then its validations' `expression` and
/// `messageExpression` or its mutations' JSONPatch expressions.
pub struct PolicyExpressions {
    pub name: String,
    pub mutating: bool,
    pub conditions: Vec<String>,
    pub variables: Vec<(String, String)>,
    /// `("expression" | "messageExpression" | "jsonPatch", text)`.
    pub finals: Vec<(&'static str, String)>,
}

/// Every exported policy of `settings` (validating and mutating), as [`PolicyExpressions`].
pub fn policy_expressions(settings: &Settings) -> Vec<PolicyExpressions> {
    let mut documents = export::validating(settings, Naming::Cluster);
    documents.extend(export::mutating(settings, Naming::Cluster));
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    documents
        .iter()
        .filter(|d| {
            !d.value["kind"]
                .as_str()
                .unwrap_or_default()
                .ends_with("Binding")
        })
        .map(|d| {
            let spec = &d.value["spec"];
            let list = |key: &str| spec[key].as_array().cloned().unwrap_or_default();
            let mut finals = Vec::new();
            for v in list("validations") {
                finals.push(("expression", text(&v["expression"])));
                if v.get("messageExpression").is_some() {
                    finals.push(("messageExpression", text(&v["messageExpression"])));
                }
            }
            for m in list("mutations") {
                finals.push(("jsonPatch", text(&m["jsonPatch"]["expression"])));
            }
            PolicyExpressions {
                name: d.name.clone(),
                mutating: d.value["kind"] == "MutatingAdmissionPolicy",
                conditions: list("matchConditions")
                    .iter()
                    .map(|c| text(&c["expression"]))
                    .collect(),
                variables: list("variables")
                    .iter()
                    .map(|v| (text(&v["name"]), text(&v["expression"])))
                    .collect(),
                finals,
            }
        })
        .collect()
}

/// The settings whose exported policies the compile tests read: the defaults and every setting that
/// changes what is generated (build pinning, RuntimeClasses, the placement gate, exempt namespaces,
/// severities, no Windows taint, several taints, image rules).
pub fn settings_variety() -> Vec<(&'static str, Settings)> {
    let text = |yaml: &str| Settings::from_text("settings.yaml", yaml).expect("settings");
    vec![
        ("defaults", Settings::default()),
        ("exact", exact(&Settings::default())),
        ("runtimeClasses", classes(&Settings::default())),
        (
            "exact runtimeClasses",
            classes(&exact(&Settings::default())),
        ),
        ("placementGate", text("mutate: true\nplacementGate: true\n")),
        (
            "exempt, required build selector",
            text(
                "exemptNamespaces: [kube-system, 'it''s']\nrequireBuildSelector: true\nseverity: {deprecated-os-label: error}\n",
            ),
        ),
        ("no Windows taint", text("windowsTaints: []\n")),
        (
            "two taints, image rules",
            text(
                "windowsTaints:\n- {key: os, value: windows, effect: NoSchedule}\n- {key: sku, operator: Exists, effect: NoExecute}\nimageRules:\n- {pattern: 'registry.example.com/win/*', os: windows, builds: ['10.0.20348']}\n- {pattern: 'registry.example.com/lin/*', os: linux}\n",
            ),
        ),
    ]
}

/// A JSONPatch expression as the cel crate reads it: `JSONPatch{op: …}` as the map `{'op': …}`.
pub fn readable_patch(text: &str) -> String {
    patch_as_map(text)
}

/// Evaluates an expression without bindings (a constant subexpression) with CEL's and Kubernetes'
/// functions, as cel-go's planner folds one.
pub fn evaluate_constant(expr: &kube_cel::cel::common::ast::IdedExpr) -> Result<CelValue, String> {
    FUNCTIONS.with(|root| {
        let ctx = root.new_inner_scope();
        CelValue::resolve(expr, &ctx).map_err(|e| e.to_string())
    })
}

/// The RuntimeClass admission plugin (in-tree, `plugin/pkg/admission/runtimeclass/admission.go`), on a
/// Pod CREATE: the named class's `scheduling` merged into the pod (`setScheduling`: its nodeSelector, a
/// conflicting key refused; its tolerations by `MergeTolerations`), as `schedule::runtimeclass` does it.
/// A class not in `classes` is left alone (the plugin refuses it; the tests name only known ones).
pub fn runtime_class_plugin(
    object: &mut Value,
    classes: &std::collections::BTreeMap<String, k8s_openapi::api::node::v1::RuntimeClass>,
) -> Result<(), String> {
    use k8s_openapi::api::core::v1::Toleration;
    use winplace_rules::schedule::runtimeclass::merge_scheduling;
    if object["kind"] != "Pod" {
        return Ok(());
    }
    let Some(class) = object["spec"]["runtimeClassName"]
        .as_str()
        .and_then(|name| classes.get(name))
    else {
        return Ok(());
    };
    let selector: Option<std::collections::BTreeMap<String, String>> =
        serde_json::from_value(object["spec"]["nodeSelector"].clone()).ok();
    let tolerations: Vec<Toleration> =
        serde_json::from_value(object["spec"]["tolerations"].clone()).unwrap_or_default();
    let merged = merge_scheduling(selector.as_ref(), &tolerations, class);
    if let Some(conflict) = merged.conflicts.first() {
        return Err(format!("RuntimeClass admission: {}", conflict.message()));
    }
    if let Some(selector) = merged.node_selector {
        object["spec"]["nodeSelector"] = serde_json::to_value(selector).expect("selector");
    }
    if !merged.tolerations.is_empty() {
        object["spec"]["tolerations"] =
            serde_json::to_value(merged.tolerations).expect("tolerations");
    }
    Ok(())
}

/// The mutating part of the API server's admission chain for one request, as Kubernetes runs it
/// (docs/reference/admission-policies.md §9): the in-tree mutating plugins (of which the RuntimeClass
/// plugin matters here, [`runtime_class_plugin`]), then the MutatingAdmissionPolicies in `order`, then the
/// mutating webhooks (`webhook`: policy.wasm, or none); and once more when something changed the object
/// (`admission.reinvoker`): the in-tree plugins all again, the policies that asked for it
/// (`reinvocationPolicy: IfNeeded`, invoked before a later change: `policyReinvokeContext`), the webhook.
/// A policy's patch is applied all or nothing. The returned object is what the validating policies see.
pub fn mutating_chain(
    maps: &Compiled,
    order: &[usize],
    classes: &std::collections::BTreeMap<String, k8s_openapi::api::node::v1::RuntimeClass>,
    webhook: &dyn Fn(&Request) -> Result<Option<Value>, String>,
    request: &Request,
) -> Result<Value, String> {
    FUNCTIONS.with(|root| {
        let mut object = request.object.clone();
        let mut previously: BTreeSet<usize> = BTreeSet::new();
        let mut reinvoke: BTreeSet<usize> = BTreeSet::new();
        let mut should_reinvoke = false;
        let mut last_policy_output: Option<Value> = None;
        for pass in 0..2 {
            let reinvocation = pass == 1;
            if reinvocation && !should_reinvoke {
                break;
            }
            if request.operation == "CREATE" {
                runtime_class_plugin(&mut object, classes)?;
            }
            if reinvocation && last_policy_output.as_ref() != Some(&object) {
                reinvoke.append(&mut previously);
            }
            for &i in order {
                if reinvocation && !reinvoke.contains(&i) {
                    continue;
                }
                let policy = &maps.policies[i];
                let mut admission = Admission::new(root, maps, &request.with_object(&object));
                let ops = patches(maps, &mut admission, policy)
                    .map_err(|e| format!("{}: {e}", policy.rule))?;
                if !ops.is_empty() {
                    let next = apply(&object, ops).map_err(|e| format!("{}: {e}", policy.rule))?;
                    if next != object {
                        object = next;
                        reinvoke.append(&mut previously);
                        should_reinvoke = true;
                    }
                }
                previously.insert(i);
            }
            last_policy_output = Some(object.clone());
            if !reinvocation
                && let Some(mutated) = webhook(&request.with_object(&object))?
                && mutated != object
            {
                object = mutated;
                should_reinvoke = true;
            }
        }
        Ok(object)
    })
}

/// Every order of `n` policies (their permutations): Kubernetes promises none between policies.
pub fn every_order(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in every_order(n - 1) {
        for at in 0..=rest.len() {
            let mut order = rest.clone();
            order.insert(at, n - 1);
            out.push(order);
        }
    }
    out
}

/// One UPDATE the tests judge, with the rules the validating policies must deny (or warn about).
pub struct UpdateCase {
    pub what: &'static str,
    pub request: Request,
    pub fired: Vec<RuleId>,
}

/// The UPDATEs a cluster makes every day, on objects that may predate the policies: a label, the
/// scale-down of an old ReplicaSet, a Job pod's finalizer removed after `kubectl delete`, an image bump, a
/// template change that fixes or introduces a finding, a Linux debug container added to a Windows pod
/// (`kubectl debug`, through `pods/ephemeralcontainers`) and a label on that pod afterwards, a Job's
/// template changed. All in namespace `shop`, with the default settings.
pub fn update_cases() -> Vec<UpdateCase> {
    let object = |yaml: &str| {
        admitted_objects(yaml)
            .into_iter()
            .next()
            .expect("an admitted object")
            .value
    };
    let with = |yaml: &str, f: &dyn Fn(&mut Value)| {
        let mut v = object(yaml);
        f(&mut v);
        v
    };
    let windows = "mcr.microsoft.com/windows/servercore:ltsc2022";
    let unpinned_deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers: [{{name: c, image: \"{windows}\"}}]\n"
    );
    let pinned_deployment = unpinned_deployment.replace(
        "    spec:\n      containers",
        "    spec:\n      nodeSelector: {kubernetes.io/os: windows}\n      tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n      containers",
    );
    let replica_set = unpinned_deployment.replace("kind: Deployment", "kind: ReplicaSet");
    let pinned_pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: shop}}\nspec:\n  nodeSelector: {{kubernetes.io/os: windows}}\n  tolerations: [{{key: os, operator: Equal, value: windows, effect: NoSchedule}}]\n  containers: [{{name: c, image: \"{windows}\"}}]\n"
    );
    let unpinned_pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: shop, finalizers: [batch.kubernetes.io/job-tracking]}}\nspec:\n  containers: [{{name: c, image: \"{windows}\"}}]\n"
    );
    let job = format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: shop}}\nspec:\n  template:\n    spec:\n      nodeSelector: {{kubernetes.io/os: windows}}\n      restartPolicy: Never\n      containers: [{{name: c, image: \"{windows}\"}}]\n"
    );
    let debug = |v: &mut Value| {
        v["spec"]["ephemeralContainers"] = serde_json::json!([{"name": "debugger", "image": "busybox:1.36", "targetContainerName": "c"}]);
    };
    let update = |what, old: Value, new: Value, fired: Vec<RuleId>| UpdateCase {
        what,
        request: Request::update(&old, &new, "shop"),
        fired,
    };
    let mut ephemeral = update(
        "a Linux debug container added to a Windows pod (kubectl debug)",
        object(&pinned_pod),
        with(&pinned_pod, &debug),
        vec![RuleId::MixedOsContainers],
    );
    ephemeral.request.sub_resource = "ephemeralcontainers";
    vec![
        update(
            "a label on a Deployment that predates the policies",
            object(&unpinned_deployment),
            with(&unpinned_deployment, &|v| {
                v["metadata"]["labels"] = serde_json::json!({"tier": "a"})
            }),
            vec![],
        ),
        update(
            "the scale-down of an old ReplicaSet",
            object(&replica_set),
            with(&replica_set, &|v| v["spec"]["replicas"] = 0.into()),
            vec![],
        ),
        update(
            "a Job pod's finalizer removed after kubectl delete",
            object(&unpinned_pod),
            with(&unpinned_pod, &|v| {
                v["metadata"]["finalizers"] = serde_json::json!([]);
                v["metadata"]["deletionTimestamp"] = "2026-11-28T10:00:00Z".into();
            }),
            vec![],
        ),
        update(
            "an image bump on a Deployment that already lacked its pins",
            object(&unpinned_deployment),
            with(&unpinned_deployment, &|v| {
                v["spec"]["template"]["spec"]["containers"][0]["image"] =
                    "mcr.microsoft.com/windows/servercore:ltsc2022-amd64".into()
            }),
            vec![],
        ),
        update(
            "a template change that fixes the finding",
            object(&unpinned_deployment),
            object(&pinned_deployment),
            vec![],
        ),
        update(
            "a template change that introduces the finding",
            object(&pinned_deployment),
            object(&unpinned_deployment),
            vec![
                RuleId::WindowsPodWithoutOsSelector,
                RuleId::WindowsPodWithoutToleration,
            ],
        ),
        ephemeral,
        update(
            "a label on that pod afterwards",
            with(&pinned_pod, &debug),
            with(&pinned_pod, &|v| {
                debug(v);
                v["metadata"]["labels"] = serde_json::json!({"tier": "a"});
            }),
            vec![],
        ),
        update(
            "a Job's template changed: judged, never patched (the API server refuses the change anyway)",
            object(&job),
            with(&job, &|v| {
                v["spec"]["template"]["spec"]["nodeSelector"] = serde_json::json!({})
            }),
            // The toleration was missing before too: only the selector is new.
            vec![RuleId::WindowsPodWithoutOsSelector],
        ),
    ]
}
