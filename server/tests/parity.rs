//! One finding everywhere: every corpus case, with its settings and its cluster, through the rules crate,
//! through `winplace check` (this crate's `check`, in process, reading the same files the binary
//! reads) and through the built policy.wasm in wasmtime (one compiled module, one instance, for every
//! case); then each case again with settings `platform` eks, aks, gke and openshift (the CLI is given
//! `--platform`, the policy `{"platform": …}` in its settings, the crate `Settings::from_text_on`).
//!
//! What is compared, and why:
//! * the crate and the CLI: every finding about the input file, whole (rule, object, path, severity,
//!   message), and the lines of its parse errors. The CLI's findings about the cluster file's own Nodes
//!   are left out (the crate is not asked about that file).
//! * the crate and the policy: per object the API server would send it (`is_sent`: the policy's rules
//!   select its kind, in `v1` of its group; an object in a version the API server no longer serves is
//!   refused before admission and never reaches a policy), the rule ids of the rejection message must be
//!   the crate's error rule ids about that object, and the rule ids of the warnings its warning rule ids,
//!   as multisets; `accepted` must be true exactly when there is no error. A Node's errors are warnings at
//!   admission (a kubelet must be able to register). Left out: info findings (the policy never reports
//!   them), paths and messages (the policy words each finding as `[rule] path: message` in one string;
//!   the rule ids are what a user acts on, and the crate's own tests check the words), and findings about
//!   objects that are not sent.
//! * The date: the CLI reads the retirement calendar at today's date unless told (`--on`, or the
//!   settings' `lifecycle.date`); the crate and the policy have no clock and read no calendar without the
//!   setting. Each case runs at its settings' date, else at [`DATE`] in all three, so that the calendar's
//!   rules are compared too.
//!
//! Cost: one process, one compiled module (wasmtime's cache, `policy-host/src/lib.rs`) and one instance
//! for every case; the CLI is this crate's `check`, called in process. It lives in the server crate, the
//! one crate that has all three at hand (the waPC host is a dev-dependency; it never depends on the server).
//!
//! Needs the built module: `cargo xtask build` (static/policy.wasm).

use crate::common::corpus;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use winplace::commands::check::{CheckArgs, FailOn, Format, Reports, ResolveArgs, check};
use winplace::inputs::SettingsArgs;
use winplace_policy_host::{Capability, PolicyHost, built_policy};
use winplace_policy_wasm::admission::{AdmissionRequest, is_evaluated};
use winplace_policy_wasm::host_answers::HostAnswers;
use winplace_policy_wasm::request::create_request;
use winplace_rules::catalog;
use winplace_rules::input::{Limits, parse};
use winplace_rules::lifecycle::Date;
use winplace_rules::platform::Platform;
use winplace_rules::{Checker, ClusterContext, Finding, Settings, model};

use corpus::{Case, Got, got_from_findings};

/// The date a case without `lifecycle.date` is checked at, by all three: after AKS retired Windows
/// Server 2019 (2026-03-01, docs/reference/lifecycle.md), so that the calendar's rules fire.
const DATE: &str = "2026-06-01";

/// The date `case` is checked at: its settings' `lifecycle.date`, else [`DATE`].
fn case_date(case: &Case) -> Date {
    case.settings()
        .unwrap_or_else(|e| panic!("{e}"))
        .lifecycle
        .date
        .unwrap_or_else(|| DATE.parse().expect("DATE"))
}

/// The host the policy runs in, answering list calls from whichever cluster the current case grants.
struct Policy {
    host: PolicyHost,
    granted: Arc<Mutex<HostAnswers>>,
}

impl Policy {
    fn load() -> Policy {
        let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
        let granted = Arc::new(Mutex::new(HostAnswers::default()));
        let answers = granted.clone();
        let capability: Box<Capability> = Box::new(move |b: &str, n: &str, o: &str, p: &[u8]| {
            answers.lock().ok()?.answer(b, n, o, p).ok()
        });
        let host = PolicyHost::new(&module, Some(capability)).unwrap_or_else(|e| panic!("{e}"));
        Policy { host, granted }
    }

    fn grant(&self, context: Option<&ClusterContext>) {
        *self.granted.lock().unwrap() = HostAnswers::for_context(context);
    }
}

/// The settings variants a case runs with: its own, then each platform over them.
fn variants() -> Vec<Option<Platform>> {
    let mut out = vec![None];
    out.extend(
        [
            Platform::Eks,
            Platform::Aks,
            Platform::Gke,
            Platform::Openshift,
        ]
        .map(Some),
    );
    out
}

/// The case's settings.yaml as the JSON policy-server hands the policy (`{}` without one), with
/// `platform` set over it.
fn settings_json(case: &Case, platform: Option<Platform>) -> Value {
    let mut value = match &case.settings_text {
        Some(text) => {
            let parsed = parse("settings.yaml", text, &Limits::default());
            assert!(
                parsed.errors.is_empty(),
                "{}: {:?}",
                case.name,
                parsed.errors
            );
            parsed
                .documents
                .into_iter()
                .next()
                .map(|d| d.value)
                .unwrap_or(Value::Null)
        }
        None => Value::Null,
    };
    if !value.is_object() {
        value = json!({});
    }
    if let Some(p) = platform {
        value["platform"] = json!(p.as_str());
    }
    if !value["lifecycle"].is_object() {
        value["lifecycle"] = json!({});
    }
    value["lifecycle"]["date"] = json!(case_date(case).to_string());
    value
}

/// The rule ids a policy answer names: each `[rule-id] path: message` item of its rejection message
/// (items joined by `; ` after `winplace rejected <object>: `) or of one warning.
fn rule_ids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices('[') {
        let starts_item = at == 0 || text[..at].ends_with("; ") || text[..at].ends_with(": ");
        let Some(len) = text[at + 1..].find(']') else {
            continue;
        };
        let id = &text[at + 1..at + 1 + len];
        if starts_item && catalog::rule(id).is_some() {
            out.push(id.to_string());
        }
    }
    out.sort();
    out
}

/// `(errors, warnings)` rule ids, sorted.
type Ids = (Vec<String>, Vec<String>);

/// What the crate's findings about `object` should make the policy answer.
fn expected_ids(findings: &[Finding], object: &str) -> Ids {
    let node = object.starts_with("Node/");
    let (mut errors, mut warnings) = (Vec::new(), Vec::new());
    for f in findings
        .iter()
        .filter(|f| f.object.display_name() == object)
    {
        match f.severity.as_str() {
            "error" if node => warnings.push(f.rule.clone()),
            "error" => errors.push(f.rule.clone()),
            "warning" => warnings.push(f.rule.clone()),
            _ => {}
        }
    }
    errors.sort();
    warnings.sort();
    (errors, warnings)
}

/// The policy's answer as rule ids.
fn answered_ids(answer: &Value) -> Ids {
    let errors = rule_ids(answer["message"].as_str().unwrap_or_default());
    let mut warnings: Vec<String> = answer["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(rule_ids)
        .collect();
    warnings.sort();
    (errors, warnings)
}

/// The crate's findings and parse-error lines for the case's input, named `input`.
fn through_the_crate(
    case: &Case,
    input: &str,
    context: Option<&ClusterContext>,
    platform: Option<Platform>,
) -> (Vec<Finding>, Vec<u32>) {
    let settings = Settings::from_text_on(
        "settings.yaml",
        case.settings_text.as_deref().unwrap_or(""),
        platform,
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let mut settings = settings;
    settings.lifecycle.date = Some(case_date(case));
    let report = Checker::builder()
        .settings(&settings)
        .cluster(context)
        .build()
        .report(input, &case.input);
    let lines = report.parse_errors.iter().map(|e| e.line).collect();
    (report.findings, lines)
}

/// `winplace check input.yaml [--cluster cluster.yaml] [--settings settings.yaml] [--platform P]`, in
/// process: the findings about the input and its parse-error lines.
fn through_the_cli(
    case: &Case,
    input: &str,
    platform: Option<Platform>,
) -> (Vec<Finding>, Vec<u32>) {
    let dir: &Path = &case.dir;
    let args = CheckArgs {
        paths: vec![input.into()],
        cluster: case
            .cluster
            .as_ref()
            .map(|_| dir.join("cluster.yaml"))
            .into_iter()
            .collect(),
        settings: SettingsArgs {
            settings: case
                .settings_text
                .as_ref()
                .map(|_| dir.join("settings.yaml")),
            platform,
            presume_linux: false,
        },
        reports: Reports::to_stdout(Format::Json),
        verbose: false,
        fix: false,
        fail_on: FailOn::Error,
        on: Some(case_date(case)),
        registry: ResolveArgs::default(),
    };
    let outcome = check(&args, &mut std::io::empty(), &mut Vec::new());
    let findings: Vec<Finding> = outcome
        .findings
        .iter()
        .map(|f| f.unwrap_or_else(|e| panic!("{}: {e}", case.name)))
        .filter(|f| f.file.as_deref() == Some(input))
        .collect();
    let lines = outcome
        .errors
        .iter()
        .filter(|e| e.file == input)
        .map(|e| e.line)
        .collect();
    (findings, lines)
}

/// The cluster the policy is granted: cluster.yaml, else the RuntimeClasses the input applies beside
/// its pods (the API server sends objects one at a time: a RuntimeClass applied with them exists, for
/// the policy, as cluster context).
fn granted_context(case: &Case, objects: &[model::Object]) -> Option<ClusterContext> {
    if let Some(context) = case.context().unwrap_or_else(|e| panic!("{e}")) {
        return Some(context);
    }
    let classes: Vec<model::Object> = objects
        .iter()
        .filter(|o| o.value["kind"] == "RuntimeClass")
        .cloned()
        .collect();
    (!classes.is_empty()).then(|| ClusterContext::from_objects(&classes).0)
}

/// Whether the API server sends `object` to the policy: its metadata's rules select the kind, in `v1`
/// of its group (an object in a version the API server no longer serves is refused before admission).
fn is_sent(request: &Value) -> bool {
    let Ok(parsed) = serde_json::from_value::<AdmissionRequest>(request.clone()) else {
        return false;
    };
    parsed.kind.version == "v1" && is_evaluated(&parsed)
}

/// One test, so that one instance of the module serves every case.
#[test]
fn every_corpus_case_gives_the_same_findings_through_the_crate_the_cli_and_policy_wasm() {
    let policy = Policy::load();
    the_policy_applies_the_platform_setting(&policy);
    let cases: Vec<Case> = corpus::cases()
        .into_iter()
        .map(|c| c.unwrap_or_else(|e| panic!("{e}")))
        .collect();
    assert!(cases.len() >= 40, "only {} corpus cases", cases.len());
    let mut differences = Vec::new();
    let mut sent = 0;
    for case in &cases {
        let input = case.dir.join("input.yaml").display().to_string();
        let parsed = parse(&input, &case.input, &Limits::default());
        let objects = model::objects(&parsed.documents);
        let context = case.context().unwrap_or_else(|e| panic!("{e}"));
        let granted = granted_context(case, &objects);
        policy.grant(granted.as_ref());
        for platform in variants() {
            let name = match platform {
                Some(p) => format!("{} (platform {})", case.name, p.as_str()),
                None => case.name.clone(),
            };
            let (crate_findings, crate_lines) =
                through_the_crate(case, &input, context.as_ref(), platform);
            let (cli_findings, cli_lines) = through_the_cli(case, &input, platform);
            let (mut from_crate, mut from_cli): (Vec<Got>, Vec<Got>) = (
                got_from_findings(&crate_findings),
                got_from_findings(&cli_findings),
            );
            from_crate.sort();
            from_cli.sort();
            if from_crate != from_cli || crate_lines != cli_lines {
                differences.push(format!(
                    "{name}: the crate and the CLI differ:\n  crate {from_crate:#?} {crate_lines:?}\n  cli   {from_cli:#?} {cli_lines:?}"
                ));
            }
            let mut settings = settings_json(case, platform);
            if granted.is_some() {
                settings["contextAware"] = json!(true);
            }
            for object in &objects {
                let request = create_request(&object.value, "default");
                if !is_sent(&request) {
                    continue;
                }
                let shown = object.object_ref().display_name();
                let answer = match policy.host.validate(&request, &settings) {
                    Ok(answer) => answer,
                    Err(e) => {
                        differences.push(format!("{name}: {shown}: the policy failed: {e}"));
                        continue;
                    }
                };
                sent += 1;
                let (want, got) = (expected_ids(&crate_findings, &shown), answered_ids(&answer));
                if want != got {
                    differences.push(format!(
                        "{name}: {shown}: the crate says (errors, warnings) {want:?}, the policy {got:?}: {answer}"
                    ));
                }
                if answer["accepted"] != json!(want.0.is_empty()) {
                    differences.push(format!("{name}: {shown}: accepted is wrong: {answer}"));
                }
            }
        }
    }
    eprintln!(
        "{} corpus cases × {} settings: {sent} objects answered by policy.wasm",
        cases.len(),
        variants().len()
    );
    assert!(
        sent >= cases.len(),
        "only {sent} objects sent to the policy"
    );
    assert!(
        differences.is_empty(),
        "{} difference(s):\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// Issue 31 item 7: with `platform: eks` (or aks) the policy once decoded its settings without the presets
/// and still asked Windows pods to tolerate `os=windows:NoSchedule`.
fn the_policy_applies_the_platform_setting(policy: &Policy) {
    let case = corpus::cases()
        .into_iter()
        .filter_map(Result::ok)
        .find(|c| c.name == "windows-deployment-platform-eks")
        .expect("corpus case windows-deployment-platform-eks");
    policy.grant(None);
    let request = {
        let parsed = parse("input.yaml", &case.input, &Limits::default());
        create_request(&model::objects(&parsed.documents)[0].value, "default")
    };
    // (settings, accepted): EKS and AKS taint no Windows node; the generic default and GKE's taint do.
    let rows = [
        (json!({"platform": "eks"}), true),
        (json!({"platform": "aks"}), true),
        (json!({}), false),
        (json!({"platform": "gke"}), false),
        (
            json!({"platform": "eks", "windowsTaints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}),
            false,
        ),
    ];
    for (settings, accepted) in rows {
        let answer = policy.host.validate(&request, &settings).unwrap();
        assert_eq!(answer["accepted"], json!(accepted), "{settings}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert_eq!(
            message.contains("windows-pod-without-toleration"),
            !accepted,
            "{settings}: {answer}"
        );
    }
}
