//! `deploy/chart/`, winplace's Helm chart, rendered and linted by real Helm (Helm v4's library through
//! PyPI's helm-python-sdk: `tests/chart/render.py`, run with the interpreter `cargo xtask test` installs in
//! `.tools/python`), under the default values, every platform preset and every component switched on:
//! every object parses as its Kubernetes type (no field the type does not have), winplace's own pods pass
//! `winplace check`, run as Pod Security `restricted` and OpenShift's `restricted-v2` admit them, and one
//! `settings` block feeds every component. The Kubewarden examples in `deploy/policy/` are the chart's
//! rendering (`UPDATE_SNAPSHOTS=1` writes them).

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use winplace_rules::input::{Limits, parse};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The release every case is rendered as (`helm install winplace deploy/chart -n winplace`).
const RELEASE: &str = "winplace";
const NAMESPACE: &str = "winplace";

/// The platform presets of `values.yaml` (`platform`), "" being generic.
const PLATFORMS: [&str; 6] = ["", "aks", "eks", "gke", "openshift", "rke2"];

/// The Kubewarden examples of `deploy/policy/`: file, name, `kubewarden.mutating`, `kubewarden.contextAware`.
const POLICY_EXAMPLES: [(&str, &str, bool, bool); 3] = [
    ("validate.yaml", "winplace", false, false),
    ("mutate.yaml", "winplace-mutate", true, false),
    ("cluster-aware.yaml", "winplace-cluster-aware", false, true),
];

/// Every case rendered, by name: its values.
fn cases() -> BTreeMap<String, Value> {
    let mut cases = BTreeMap::new();
    for platform in PLATFORMS {
        let name = if platform.is_empty() {
            "default"
        } else {
            platform
        };
        cases.insert(name.to_string(), json!({"platform": platform}));
    }
    // Every component on, on the platform with the strictest admission (OpenShift).
    cases.insert(
        "everything".into(),
        json!({
            "platform": "openshift",
            "placement": {"enabled": true, "deadline": 45},
            "metrics": {"serviceMonitor": {"enabled": true, "labels": {"release": "prometheus"}}},
            "kubewarden": {"enabled": true, "mutating": true, "contextAware": true},
            "dashboard": {"resolveImages": true},
            "settings": {"placementGate": true, "supportedBuilds": ["10.0.20348"], "exemptNamespaces": ["legacy"]},
        }),
    );
    // The findings in the cluster and the monitoring: reports, alerts, the Grafana dashboard.
    cases.insert(
        "monitoring".into(),
        json!({
            "placement": {"enabled": true},
            "reports": {"enabled": true, "interval": 5},
            "alerts": {"enabled": true, "labels": {"release": "prometheus"}},
            "grafanaDashboard": {"enabled": true},
        }),
    );
    cases.insert(
        "policy-reports".into(),
        json!({"reports": {"enabled": true, "format": "policyreport"}}),
    );
    cases.insert(
        "admission-policies".into(),
        json!({"admissionPolicies": {"validating": true, "mutating": true}}),
    );
    cases.insert(
        "pinned".into(),
        json!({
            "image": {"digest": format!("sha256:{}", "a".repeat(64))},
            "kubewarden": {"enabled": true, "module": {"digest": format!("sha256:{}", "b".repeat(64))}},
        }),
    );
    for (file, name, mutating, context_aware) in POLICY_EXAMPLES {
        cases.insert(
            format!("policy-{file}"),
            json!({"kubewarden": {"enabled": true, "name": name, "mutating": mutating, "contextAware": context_aware}}),
        );
    }
    // What the chart must refuse.
    cases.insert("refused-platform".into(), json!({"platform": "k3s"}));
    cases.insert("refused-key".into(), json!({"dashboard": {"replica": 3}}));
    cases.insert(
        "refused-digest".into(),
        json!({"image": {"digest": "latest"}}),
    );
    cases.insert(
        "refused-gate-without-mutation".into(),
        json!({"settings": {"placementGate": true}, "placement": {"enabled": true}}),
    );
    cases.insert(
        "refused-exported-policies".into(),
        json!({"platform": "aks", "admissionPolicies": {"validating": true}}),
    );
    cases
}

/// The cases the chart must refuse, and a word the refusal must contain.
const REFUSED: [(&str, &str); 5] = [
    ("refused-gate-without-mutation", "kubewarden.mutating"),
    ("refused-platform", "platform"),
    ("refused-key", "replica"),
    ("refused-digest", "digest"),
    ("refused-exported-policies", "winplace export"),
];

/// What render.py answers for one case.
struct Rendered {
    lint: Value,
    /// Template path → rendered text.
    manifests: BTreeMap<String, String>,
}

/// Every case, rendered once for all the tests of this file (one Python process: Helm's library takes
/// about a second to load).
fn rendered() -> &'static BTreeMap<String, Result<Rendered, String>> {
    static RENDERED: OnceLock<BTreeMap<String, Result<Rendered, String>>> = OnceLock::new();
    RENDERED.get_or_init(|| {
        let python = root().join(".tools/python/bin/python");
        assert!(
            python.exists(),
            "{} is missing: `cargo xtask setup` (or `cargo xtask test`) installs helm-python-sdk there",
            python.display()
        );
        let request = json!({
            "chart": root().join("deploy/chart"),
            "release": RELEASE,
            "namespace": NAMESPACE,
            "cases": cases(),
        });
        let mut child = Command::new(&python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chart/render.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python runs");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin
                .write_all(request.to_string().as_bytes())
                .expect("write the request");
        }
        let out = child.wait_with_output().expect("render.py finishes");
        assert!(
            out.status.success(),
            "render.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Value = serde_json::from_slice(&out.stdout).expect("render.py prints JSON");
        assert!(
            answer["helm"].as_str().is_some_and(|v| v.starts_with("v4.")),
            "not Helm v4: {}",
            answer["helm"]
        );
        answer["cases"]
            .as_object()
            .expect("cases")
            .iter()
            .map(|(name, case)| {
                let result = match case["error"].as_str() {
                    Some(error) => Err(error.to_string()),
                    None => Ok(Rendered {
                        lint: case["lint"].clone(),
                        manifests: serde_json::from_value(case["manifests"].clone())
                            .expect("manifests"),
                    }),
                };
                (name.clone(), result)
            })
            .collect()
    })
}

fn case(name: &str) -> &'static Rendered {
    match rendered().get(name) {
        Some(Ok(r)) => r,
        Some(Err(e)) => panic!("{name}: Helm refused to render it: {e}"),
        None => panic!("no case {name}"),
    }
}

/// Every object a case renders (NOTES.txt aside), with the template it came from.
fn objects(name: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (template, text) in &case(name).manifests {
        if template.ends_with("NOTES.txt") {
            continue;
        }
        let parsed = parse(template, text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{template}: {:?}", parsed.errors);
        out.extend(
            parsed
                .documents
                .into_iter()
                .filter(|d| !d.value.is_null())
                .map(|d| (template.clone(), d.value)),
        );
    }
    out
}

fn of_kind(name: &str, kind: &str) -> Vec<Value> {
    objects(name)
        .into_iter()
        .filter(|(_, o)| o["kind"] == kind)
        .map(|(_, o)| o)
        .collect()
}

fn one<T: serde::de::DeserializeOwned>(name: &str, kind: &str, object_name: &str) -> T {
    let all: Vec<Value> = of_kind(name, kind)
        .into_iter()
        .filter(|o| o["metadata"]["name"] == object_name)
        .collect();
    assert_eq!(all.len(), 1, "{name}: one {kind} {object_name}");
    serde_json::from_value(all[0].clone()).unwrap_or_else(|e| panic!("{kind}: {e}"))
}

/// `value` read as `T` and written back is `value`: no field `T` does not have (strict field validation,
/// as `kubectl apply` asks the API server for), no value of the wrong type.
fn strictly<T: serde::de::DeserializeOwned + serde::Serialize>(
    value: &Value,
) -> Result<(), String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(typed).map_err(|e| e.to_string())?;
    let mut lost = Vec::new();
    differences("", value, &back, &mut lost);
    if lost.is_empty() {
        Ok(())
    } else {
        Err(format!("fields the type does not have: {lost:?}"))
    }
}

/// Paths of `have` that `back` lacks or holds differently.
fn differences(path: &str, have: &Value, back: &Value, out: &mut Vec<String>) {
    match (have, back) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => differences(&format!("{path}.{k}"), v, w, out),
                    None => out.push(format!("{path}.{k}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), v, w, out);
            }
        }
        (a, b) if a == b => {}
        _ => out.push(path.to_string()),
    }
}

/// The `v1` openAPIV3Schema of a CRD under `tests/data/`, with every object schema that lists its
/// properties closed to others (unless it preserves unknown fields): the API server's strict field
/// validation refuses a field the schema does not declare.
fn crd_validator(file: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = parse(file, &text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    let mut schema = parsed.documents[0].value["spec"]["versions"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["name"] == "v1"))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap_or_else(|| panic!("{file}: no v1 schema"));
    close(&mut schema, true);
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn close(schema: &mut Value, top: bool) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for v in props.values_mut() {
            close(v, false);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = map.get_mut(key) {
            close(v, false);
        }
    }
    let preserves = map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if map.contains_key("properties") && !map.contains_key("additionalProperties") && !preserves {
        if top {
            // metadata is the API server's ObjectMeta, not the CRD's to declare.
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                props.insert("metadata".into(), json!({"type": "object"}));
            }
        }
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// Whether `object` is a valid object of its kind; the kinds the chart renders, and no other.
fn parses_as_its_type(object: &Value) -> Result<(), String> {
    use k8s_openapi::api::admissionregistration::v1 as adm;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Service, ServiceAccount};
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    static CAP: OnceLock<jsonschema::Validator> = OnceLock::new();
    static SERVICE_MONITOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    static PROMETHEUS_RULE: OnceLock<jsonschema::Validator> = OnceLock::new();
    let against = |v: &jsonschema::Validator| {
        let problems: Vec<String> = v
            .iter_errors(object)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    };
    match (object["apiVersion"].as_str(), object["kind"].as_str()) {
        (Some("v1"), Some("ServiceAccount")) => strictly::<ServiceAccount>(object),
        (Some("v1"), Some("ConfigMap")) => strictly::<ConfigMap>(object),
        (Some("v1"), Some("Service")) => strictly::<Service>(object),
        (Some("apps/v1"), Some("Deployment")) => strictly::<Deployment>(object),
        (Some("policy/v1"), Some("PodDisruptionBudget")) => strictly::<PodDisruptionBudget>(object),
        (Some("networking.k8s.io/v1"), Some("NetworkPolicy")) => strictly::<NetworkPolicy>(object),
        (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRole")) => {
            strictly::<ClusterRole>(object)
        }
        (Some("rbac.authorization.k8s.io/v1"), Some("ClusterRoleBinding")) => {
            strictly::<ClusterRoleBinding>(object)
        }
        (Some("rbac.authorization.k8s.io/v1"), Some("Role")) => strictly::<Role>(object),
        (Some("rbac.authorization.k8s.io/v1"), Some("RoleBinding")) => {
            strictly::<RoleBinding>(object)
        }
        (Some("admissionregistration.k8s.io/v1"), Some("ValidatingAdmissionPolicy")) => {
            strictly::<adm::ValidatingAdmissionPolicy>(object)
        }
        (Some("admissionregistration.k8s.io/v1"), Some("ValidatingAdmissionPolicyBinding")) => {
            strictly::<adm::ValidatingAdmissionPolicyBinding>(object)
        }
        (Some("admissionregistration.k8s.io/v1"), Some("MutatingAdmissionPolicy")) => {
            strictly::<adm::MutatingAdmissionPolicy>(object)
        }
        (Some("admissionregistration.k8s.io/v1"), Some("MutatingAdmissionPolicyBinding")) => {
            strictly::<adm::MutatingAdmissionPolicyBinding>(object)
        }
        (Some("policies.kubewarden.io/v1"), Some("ClusterAdmissionPolicy")) => {
            against(CAP.get_or_init(|| {
                crd_validator("kubewarden-crd/policies.kubewarden.io_clusteradmissionpolicies.yaml")
            }))
        }
        (Some("monitoring.coreos.com/v1"), Some("ServiceMonitor")) => {
            against(SERVICE_MONITOR.get_or_init(|| {
                crd_validator("prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml")
            }))
        }
        (Some("monitoring.coreos.com/v1"), Some("PrometheusRule")) => {
            against(PROMETHEUS_RULE.get_or_init(|| {
                crd_validator("prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml")
            }))
        }
        (version, kind) => Err(format!(
            "a kind this test does not know: {version:?} {kind:?}"
        )),
    }
}

/// The cases Helm must render.
fn rendered_cases() -> Vec<String> {
    let refused: BTreeSet<&str> = REFUSED.iter().map(|(c, _)| *c).collect();
    cases()
        .into_keys()
        .filter(|c| !refused.contains(c.as_str()))
        .collect()
}

#[test]
fn the_chart_lints_clean_and_every_object_parses_as_its_type() {
    for name in rendered_cases() {
        let lint = &case(&name).lint;
        assert_eq!(lint["errors"], json!([]), "{name}: {lint}");
        // Severity 1 is Helm's INFO ("icon is recommended"); 2 is a warning, 3 an error.
        let serious: Vec<&Value> = lint["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter(|m| m["severity"].as_u64().is_none_or(|s| s >= 2))
            .collect();
        assert!(serious.is_empty(), "{name}: {serious:?}");
        let objects = objects(&name);
        assert!(objects.len() >= 9, "{name}: {} objects", objects.len());
        for (template, object) in objects {
            if let Err(e) = parses_as_its_type(&object) {
                panic!(
                    "{name}: {template}: {} {}: {e}",
                    object["kind"], object["metadata"]["name"]
                );
            }
        }
    }
}

#[test]
fn the_type_checks_can_fail() {
    let mut deployment = of_kind("default", "Deployment").remove(0);
    deployment["spec"]["replicaz"] = json!(2);
    assert!(parses_as_its_type(&deployment).is_err());
    let mut policy = of_kind("everything", "ClusterAdmissionPolicy").remove(0);
    assert_eq!(parses_as_its_type(&policy), Ok(()));
    policy["spec"]["mutatin"] = json!(true);
    assert!(parses_as_its_type(&policy).is_err());
    let mut monitor = of_kind("everything", "ServiceMonitor").remove(0);
    monitor["spec"]["endpoints"][0]["interval"] = json!("soon");
    assert!(parses_as_its_type(&monitor).is_err());
}

#[test]
fn bad_values_are_refused_with_what_is_wrong() {
    for (name, word) in REFUSED {
        match rendered().get(name) {
            Some(Err(e)) => assert!(e.contains(word), "{name}: {e}"),
            Some(Ok(_)) => panic!("{name}: rendered"),
            None => panic!("no case {name}"),
        }
    }
}

/// The settings file a case gives the dashboard and the controller.
fn settings_of(name: &str) -> String {
    let map: k8s_openapi::api::core::v1::ConfigMap = one(name, "ConfigMap", "winplace-settings");
    map.data
        .and_then(|d| d.get("settings.yaml").cloned())
        .expect("settings.yaml")
}

#[test]
fn winplaces_own_pods_pass_winplace_check_under_every_preset() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in rendered_cases() {
        let settings = dir.path().join(format!("{name}-settings.yaml"));
        std::fs::write(&settings, settings_of(&name)).expect("write settings");
        // What `helm template … | winplace check -` reads.
        let all: String = case(&name)
            .manifests
            .iter()
            .filter(|(t, _)| !t.ends_with("NOTES.txt"))
            .map(|(_, text)| format!("---\n{text}\n"))
            .collect();
        let out = crate::common::run::winplace(
            dir.path(),
            &[
                "check",
                "--format",
                "json",
                "--settings",
                settings.to_str().expect("path"),
                "-",
            ],
            Some(&all),
        );
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        let serious: Vec<&Value> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter(|f| f["severity"] != "info")
            .collect();
        assert!(serious.is_empty(), "{name}: {serious:#?}");
        assert_eq!(out.status.code(), Some(0), "{name}");
    }
}

/// The check above reads the pods at all: an unpinned copy of the dashboard fails it.
#[test]
fn winplace_check_refuses_the_dashboard_without_its_os_pin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut deployment = of_kind("default", "Deployment").remove(0);
    let spec = &mut deployment["spec"]["template"]["spec"];
    spec.as_object_mut()
        .expect("pod spec")
        .remove("nodeSelector");
    spec.as_object_mut().expect("pod spec").remove("os");
    spec["containers"][0]["image"] = json!("mcr.microsoft.com/windows/servercore:ltsc2022");
    let out = crate::common::run::winplace(
        dir.path(),
        &["check", "--format", "json", "-"],
        Some(&deployment.to_string()),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Pod Security `restricted` (https://kubernetes.io/docs/concepts/security/pod-security-standards/) and
/// OpenShift's `restricted-v2` SCC (docs/reference/server-deployment.md): non-root without a fixed UID or
/// group (the SCC assigns one from the namespace's range and refuses another), no privilege escalation,
/// every capability dropped, the runtime's seccomp profile, only configMap volumes, no host namespaces
/// or ports; on Linux nodes of the image's architectures, spread, at least two dashboards and a budget.
#[test]
fn the_pods_run_restricted_without_a_fixed_uid_on_the_images_platforms() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;
    for name in ["default", "everything"] {
        let deployments: Vec<Deployment> = of_kind(name, "Deployment")
            .into_iter()
            .map(|d| serde_json::from_value(d).expect("a Deployment"))
            .collect();
        assert_eq!(deployments.len(), if name == "everything" { 2 } else { 1 });
        for d in deployments {
            let who = format!("{name}: {:?}", d.metadata.name);
            let spec = d.spec;
            assert!(spec.replicas.is_some_and(|r| r >= 2), "{who}");
            let labels = spec
                .template
                .metadata
                .and_then(|m| m.labels)
                .unwrap_or_default();
            let pod = spec.template.spec.expect("pod spec");
            assert_eq!(
                pod.os.as_ref().map(|o| o.name.as_str()),
                Some("linux"),
                "{who}"
            );
            assert_eq!(
                pod.node_selector
                    .as_ref()
                    .and_then(|s| s.get("kubernetes.io/os"))
                    .map(String::as_str),
                Some("linux"),
                "{who}"
            );
            let terms = pod
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref())
                .and_then(|n| {
                    n.required_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .map(|r| r.node_selector_terms.clone())
                .expect("required node affinity");
            for term in &terms {
                let arch = term
                    .match_expressions
                    .iter()
                    .flatten()
                    .find(|e| e.key == "kubernetes.io/arch")
                    .expect("every term pins the architecture");
                assert_eq!(arch.operator, "In");
                assert_eq!(
                    arch.values.clone().unwrap_or_default(),
                    ["amd64", "arm64"].map(String::from),
                    "{who}: the image's architectures"
                );
            }
            let spread = pod.topology_spread_constraints.clone().unwrap_or_default();
            let keys: BTreeSet<&str> = spread.iter().map(|c| c.topology_key.as_str()).collect();
            assert_eq!(
                keys,
                BTreeSet::from(["kubernetes.io/hostname", "topology.kubernetes.io/zone"]),
                "{who}"
            );
            for c in &spread {
                let selector = c
                    .label_selector
                    .as_ref()
                    .and_then(|s| s.match_labels.clone());
                assert!(
                    selector.is_some_and(
                        |s| !s.is_empty() && s.iter().all(|(k, v)| labels.get(k) == Some(v))
                    ),
                    "{who}: the spread counts this Deployment's pods"
                );
            }
            let psc = pod.security_context.clone().expect("pod securityContext");
            assert_eq!(psc.run_as_non_root, Some(true), "{who}");
            assert_eq!(
                (psc.run_as_user, psc.run_as_group, psc.fs_group),
                (None, None, None),
                "{who}: a fixed UID or group"
            );
            assert_eq!(
                psc.seccomp_profile.map(|s| s.type_).as_deref(),
                Some("RuntimeDefault"),
                "{who}"
            );
            assert!(
                pod.host_network.is_none() && pod.host_pid.is_none() && pod.host_ipc.is_none(),
                "{who}"
            );
            for v in pod.volumes.iter().flatten() {
                assert!(
                    v.config_map.is_some(),
                    "{who}: volume {} is not a configMap",
                    v.name
                );
            }
            assert_eq!(pod.containers.len(), 1);
            for c in &pod.containers {
                let sc = c
                    .security_context
                    .clone()
                    .expect("container securityContext");
                assert_eq!(sc.allow_privilege_escalation, Some(false), "{who}");
                assert_eq!(sc.read_only_root_filesystem, Some(true), "{who}");
                assert_eq!(sc.run_as_non_root, Some(true), "{who}");
                assert_eq!(
                    (sc.run_as_user, sc.run_as_group, sc.privileged),
                    (None, None, None),
                    "{who}"
                );
                assert_eq!(
                    sc.capabilities.and_then(|c| c.drop),
                    Some(vec!["ALL".to_string()]),
                    "{who}"
                );
                assert!(
                    c.ports.iter().flatten().all(|p| p.host_port.is_none()),
                    "{who}: a host port"
                );
                assert!(
                    c.image
                        .as_deref()
                        .is_some_and(|i| i.starts_with("ghcr.io/winplace/winplace")),
                    "{who}: {:?}",
                    c.image
                );
            }
            let budgets: Vec<PodDisruptionBudget> = of_kind(name, "PodDisruptionBudget")
                .into_iter()
                .map(|p| serde_json::from_value(p).expect("a PodDisruptionBudget"))
                .collect();
            assert!(
                budgets.iter().any(|b| {
                    let s = b.spec.clone().unwrap_or_default();
                    let selects = s
                        .selector
                        .and_then(|s| s.match_labels)
                        .is_some_and(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)));
                    selects && s.max_unavailable.is_some()
                }),
                "{who}: no PodDisruptionBudget for its pods"
            );
        }
    }
}

/// Peak resident memory of the release server at 5,000 nodes / 150,000 pods under the load script
/// (docs/benchmarks.md: `python3 server/load/load.py --nodes 5000 --pods 150000 --seconds 60`).
const ENVELOPE_PEAK_MIB: u64 = 646;

/// Peak resident memory of the release server with 20,000 misplaced, unowned Windows pods beside the demo's
/// (docs/benchmarks.md: `bash server/bench/misplaced_memory.sh 20000`): the audit's worst case per pod.
const MISPLACED_PEAK_MIB: u64 = 399;

/// A memory quantity (`Ki`, `Mi`, `Gi`, or plain bytes) in MiB, rounded down.
fn mebibytes(quantity: &str) -> u64 {
    let (number, unit) = quantity.split_at(
        quantity
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(quantity.len()),
    );
    let n: u64 = number
        .parse()
        .unwrap_or_else(|_| panic!("quantity {quantity:?}"));
    match unit {
        "" => n >> 20,
        "Ki" => n >> 10,
        "Mi" => n,
        "Gi" => n << 10,
        other => panic!("unit {other:?} in {quantity:?}"),
    }
}

/// The dashboard's container: args, probes on their own port, resources from the measured envelope.
#[test]
fn the_dashboard_serves_with_probes_metrics_and_resources_of_its_own() {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Service;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let d: Deployment = one("default", "Deployment", "winplace");
    let pod = d.spec.template.spec.expect("pod spec");
    assert_eq!(pod.service_account_name.as_deref(), Some("winplace"));
    let c = &pod.containers[0];
    let args = c.args.clone().unwrap_or_default();
    for arg in [
        "serve",
        "--listen=0.0.0.0:8080",
        "--probe-listen=0.0.0.0:8081",
        "--metrics-listen=0.0.0.0:9090",
        "--settings=/etc/winplace/settings.yaml",
    ] {
        assert!(args.iter().any(|a| a == arg), "{arg} in {args:?}");
    }
    assert!(!args.iter().any(|a| a == "--place"), "{args:?}");
    let env = |name: &str| {
        c.env
            .iter()
            .flatten()
            .find(|e| e.name == name)
            .and_then(|e| e.value.clone())
    };
    assert_eq!(
        env("WINPLACE_LOG_FORMAT").as_deref(),
        Some("json"),
        "JSON logs by default"
    );
    let resources = c.resources.clone().expect("resources");
    let mib = |map: &Option<
        BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >| {
        mebibytes(
            &map.as_ref()
                .and_then(|m| m.get("memory"))
                .expect("memory")
                .0,
        )
    };
    let (request, limit) = (mib(&resources.requests), mib(&resources.limits));
    // The request at least the worse of the measured peaks, the limit above it by less than 2x.
    let worse = ENVELOPE_PEAK_MIB.max(MISPLACED_PEAK_MIB);
    assert!(
        request >= worse,
        "request {request} MiB < the worse measured peak {worse} MiB"
    );
    assert!(
        limit > request && limit < 2 * request,
        "limit {limit} MiB vs request {request} MiB"
    );
    for key in ["cpu", "memory"] {
        assert!(
            resources
                .requests
                .as_ref()
                .is_some_and(|r| r.contains_key(key))
        );
        assert!(
            resources
                .limits
                .as_ref()
                .is_some_and(|r| r.contains_key(key))
        );
    }
    let port = |name: &str| {
        c.ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref() == Some(name))
            .map(|p| p.container_port)
    };
    assert_eq!(
        (port("http"), port("probes"), port("metrics")),
        (Some(8080), Some(8081), Some(9090))
    );
    for (name, probe) in [
        ("liveness", &c.liveness_probe),
        ("readiness", &c.readiness_probe),
        ("startup", &c.startup_probe),
    ] {
        let probe = probe.as_ref().unwrap_or_else(|| panic!("{name} probe"));
        // The default timeout (1 s) failed under load.
        assert!(probe.timeout_seconds.is_some_and(|t| t >= 2), "{name}");
        let get = probe.http_get.as_ref().expect("httpGet");
        assert_eq!(get.port, IntOrString::String("probes".into()), "{name}");
    }
    // The dashboard's Service targets the dashboard alone; the metrics Service the metrics port alone.
    let service: Service = one("default", "Service", "winplace");
    for p in service.spec.and_then(|s| s.ports).unwrap_or_default() {
        assert_eq!(
            p.target_port,
            Some(IntOrString::String("http".into())),
            "{p:?}"
        );
    }
    let metrics: Service = one("default", "Service", "winplace-metrics");
    let ports = metrics.spec.and_then(|s| s.ports).unwrap_or_default();
    assert_eq!(ports.len(), 1);
    assert_eq!(
        ports[0].target_port,
        Some(IntOrString::String("metrics".into()))
    );
    // A ServiceMonitor only when asked for, selecting the metrics Service.
    assert!(of_kind("default", "ServiceMonitor").is_empty());
    let monitor = of_kind("everything", "ServiceMonitor").remove(0);
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
    let wanted = monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels");
    let service = of_kind("everything", "Service")
        .into_iter()
        .find(|s| s["metadata"]["name"] == "winplace-metrics")
        .expect("the metrics Service");
    assert!(
        wanted
            .iter()
            .all(|(k, v)| &service["metadata"]["labels"][k] == v)
    );
    assert_eq!(monitor["metadata"]["labels"]["release"], "prometheus");
}

/// `(group, resource, verb)` a role grants.
fn grants(rules: &Value) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for rule in rules.as_array().into_iter().flatten() {
        assert!(rule.get("resourceNames").is_none() && rule.get("nonResourceURLs").is_none());
        for g in rule["apiGroups"].as_array().into_iter().flatten() {
            for r in rule["resources"].as_array().into_iter().flatten() {
                for v in rule["verbs"].as_array().into_iter().flatten() {
                    out.insert((
                        g.as_str().unwrap_or_default().to_string(),
                        r.as_str().unwrap_or_default().to_string(),
                        v.as_str().unwrap_or_default().to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// Everything a ServiceAccount of the release is granted by the case's roles and bindings.
fn granted_to(name: &str, account: &str) -> BTreeSet<(String, String, String)> {
    let roles: BTreeMap<(String, String), Value> = objects(name)
        .into_iter()
        .map(|(_, o)| o)
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        .map(|o| {
            let key = (
                o["kind"].as_str().unwrap_or_default().to_string(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            (key, o["rules"].clone())
        })
        .collect();
    let mut out = BTreeSet::new();
    for b in objects(name).into_iter().map(|(_, o)| o) {
        if b["kind"] != "ClusterRoleBinding" && b["kind"] != "RoleBinding" {
            continue;
        }
        let bound = b["subjects"].as_array().into_iter().flatten().any(|s| {
            s["kind"] == "ServiceAccount" && s["name"] == account && s["namespace"] == NAMESPACE
        });
        if bound {
            let key = (
                b["roleRef"]["kind"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                b["roleRef"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            let rules = roles
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: no role {key:?}"));
            out.extend(grants(rules));
        }
    }
    out
}

fn triples(list: &[(&str, &str, &[&str])]) -> BTreeSet<(String, String, String)> {
    list.iter()
        .flat_map(|(g, r, verbs)| {
            verbs
                .iter()
                .map(move |v| (g.to_string(), r.to_string(), v.to_string()))
        })
        .collect()
}

const READ: &[&str] = &["get", "list", "watch"];

fn reader() -> BTreeSet<(String, String, String)> {
    triples(&[
        ("", "nodes", READ),
        ("", "pods", READ),
        ("node.k8s.io", "runtimeclasses", READ),
        ("", "events", READ),
        ("events.k8s.io", "events", READ),
    ])
}

/// The dashboard reads Nodes, Pods, RuntimeClasses and Events, nothing else (never a Secret), with or
/// without the controller beside it; the controller alone patches pods, reads pull Secrets and takes the
/// Lease, in the namespace the policy's gate looks in.
#[test]
fn only_the_controller_writes_and_reads_secrets() {
    for name in ["default", "everything"] {
        assert_eq!(
            granted_to(name, "winplace"),
            reader(),
            "{name}: the dashboard's grants"
        );
    }
    assert!(
        !objects("default")
            .iter()
            .any(|(t, _)| t.ends_with("placement.yaml"))
    );
    let mut controller = reader();
    controller.extend(triples(&[
        ("", "pods", &["patch"]),
        ("", "secrets", READ),
        ("", "serviceaccounts", READ),
        ("events.k8s.io", "events", &["create", "patch"]),
        (
            "coordination.k8s.io",
            "leases",
            &["get", "create", "update"],
        ),
    ]));
    assert_eq!(granted_to("everything", "winplace-placement"), controller);
    let lease_role = of_kind("everything", "Role").remove(0);
    let settings = winplace_rules::Settings::from_text("settings.yaml", &settings_of("everything"))
        .expect("the settings parse");
    assert_eq!(
        lease_role["metadata"]["namespace"],
        settings.placement_lease_namespace.as_str()
    );
    let d: k8s_openapi::api::apps::v1::Deployment =
        one("everything", "Deployment", "winplace-placement");
    let pod = d.spec.template.spec.expect("pod spec");
    assert_eq!(
        pod.service_account_name.as_deref(),
        Some("winplace-placement")
    );
    let args = pod.containers[0].args.clone().unwrap_or_default();
    for arg in [
        "--place".to_string(),
        "--place-deadline=45".to_string(),
        format!(
            "--place-lease-namespace={}",
            settings.placement_lease_namespace
        ),
        format!("--place-lease-name={}", settings.placement_lease_name),
        "--settings=/etc/winplace/settings.yaml".to_string(),
    ] {
        assert!(args.contains(&arg), "{arg} in {args:?}");
    }
}

/// In: the dashboard's port from named peers, the metrics port from namespaces labelled for it; out: DNS
/// and the API server's ports.
#[test]
fn the_network_policies_open_the_dashboard_and_the_metrics_apart() {
    use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicyPort};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    let ports = |ports: &Option<Vec<NetworkPolicyPort>>| -> Vec<(String, i32)> {
        let mut out: Vec<(String, i32)> = ports
            .iter()
            .flatten()
            .map(|p| match &p.port {
                Some(IntOrString::Int(n)) => {
                    (p.protocol.clone().unwrap_or_else(|| "TCP".into()), *n)
                }
                other => panic!("ports are numbers: {other:?}"),
            })
            .collect();
        out.sort();
        out
    };
    for (policy, want_ingress) in [
        (
            "winplace",
            vec![
                vec![("TCP".to_string(), 8080)],
                vec![("TCP".to_string(), 9090)],
            ],
        ),
        ("winplace-placement", vec![vec![("TCP".to_string(), 9090)]]),
    ] {
        let p: NetworkPolicy = one("everything", "NetworkPolicy", policy);
        let spec = p.spec.expect("spec");
        assert_eq!(
            spec.policy_types.clone().unwrap_or_default(),
            ["Ingress", "Egress"].map(String::from)
        );
        let ingress = spec.ingress.clone().unwrap_or_default();
        for rule in &ingress {
            assert!(
                rule.from.as_ref().is_some_and(|f| !f.is_empty()),
                "{policy}: every ingress rule names its peers (an empty `from` admits everyone)"
            );
        }
        let got: Vec<Vec<(String, i32)>> = ingress.iter().map(|r| ports(&r.ports)).collect();
        assert_eq!(got, want_ingress, "{policy}");
        let metrics_peers = ingress
            .last()
            .and_then(|r| r.from.clone())
            .unwrap_or_default();
        assert!(metrics_peers.iter().all(|p| {
            p.pod_selector.is_none()
                && p.namespace_selector
                    .as_ref()
                    .and_then(|s| s.match_labels.clone())
                    .is_some_and(|m| {
                        m.get("winplace.io/metrics-access").map(String::as_str) == Some("true")
                    })
        }));
        let mut egress: Vec<(String, i32)> = spec
            .egress
            .unwrap_or_default()
            .iter()
            .flat_map(|r| ports(&r.ports))
            .collect();
        egress.sort();
        assert_eq!(
            egress,
            [("TCP", 53), ("TCP", 443), ("TCP", 6443), ("UDP", 53)]
                .map(|(p, n)| (p.to_string(), n))
        );
    }
}

/// The settings block reaches the dashboard's and the controller's file and the policy's settings
/// unchanged; the preset fills only what it leaves.
#[test]
fn one_settings_block_feeds_the_dashboard_the_controller_and_the_policy() {
    let file = settings_of("everything");
    let parsed = parse("settings.yaml", &file, &Limits::default());
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let settings = parsed.documents[0].value.clone();
    assert_eq!(settings["supportedBuilds"], json!(["10.0.20348"]));
    assert_eq!(settings["exemptNamespaces"], json!(["legacy"]));
    assert_eq!(settings["platform"], "openshift");
    let policy = of_kind("everything", "ClusterAdmissionPolicy").remove(0);
    assert_eq!(
        policy["spec"]["settings"], settings,
        "the policy's settings and the dashboard's"
    );
    // The admission switches come from `kubewarden.*` and agree with the policy's spec.
    assert_eq!(settings["mutate"], policy["spec"]["mutating"]);
    assert_eq!(
        settings["contextAware"],
        json!(policy["spec"].get("contextAwareResources").is_some())
    );
    // Each preset's file reads as winplace settings, with the preset's conventions.
    for platform in PLATFORMS {
        let name = if platform.is_empty() {
            "default"
        } else {
            platform
        };
        let s = winplace_rules::Settings::from_text("settings.yaml", &settings_of(name))
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        match platform {
            "" => assert_eq!(
                s,
                winplace_rules::Settings {
                    placement_lease_namespace: NAMESPACE.into(),
                    ..Default::default()
                }
            ),
            "rke2" => assert!(
                s.windows_taints.is_empty(),
                "rke2: Windows nodes carry no taint"
            ),
            other => assert_eq!(s.platform.as_str(), other),
        }
    }
    // Both components roll when the settings change.
    let checksum = |name: &str| -> BTreeSet<String> {
        of_kind(name, "Deployment")
            .iter()
            .map(|d| {
                d["spec"]["template"]["metadata"]["annotations"]["checksum/settings"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    assert_ne!(checksum("default"), checksum("aks"));
}

/// The image and the policy by digest when the values give one (the release's packaged chart does).
#[test]
fn digests_pin_the_image_and_the_policy() {
    let d: k8s_openapi::api::apps::v1::Deployment = one("pinned", "Deployment", "winplace");
    let image = d.spec.template.spec.expect("pod").containers[0]
        .image
        .clone();
    assert_eq!(
        image,
        Some(format!(
            "ghcr.io/winplace/winplace@sha256:{}",
            "a".repeat(64)
        ))
    );
    let policy = of_kind("pinned", "ClusterAdmissionPolicy").remove(0);
    assert_eq!(
        policy["spec"]["module"],
        format!(
            "registry://ghcr.io/winplace/policies/winplace@sha256:{}",
            "b".repeat(64)
        )
    );
    let d: k8s_openapi::api::apps::v1::Deployment = one("default", "Deployment", "winplace");
    let image = d.spec.template.spec.expect("pod").containers[0]
        .image
        .clone();
    assert_eq!(
        image,
        Some(format!(
            "ghcr.io/winplace/winplace:v{}",
            env!("CARGO_PKG_VERSION")
        ))
    );
}

/// The exported admission policies the chart renders are deploy/vap's, which `winplace export` writes
/// (rules/tests/export_deploy.rs): one source.
#[test]
fn the_exported_policies_are_what_winplace_export_writes() {
    let rendered: Vec<Value> = objects("admission-policies")
        .into_iter()
        .filter(|(t, _)| t.ends_with("admission-policies.yaml"))
        .map(|(_, o)| o)
        .collect();
    let mut files = Vec::new();
    for file in ["validating.yaml", "mutating.yaml"] {
        let text =
            std::fs::read_to_string(root().join("deploy/vap").join(file)).expect("deploy/vap");
        let parsed = parse(file, &text, &Limits::default());
        files.extend(parsed.documents.into_iter().map(|d| d.value));
    }
    assert!(!files.is_empty());
    assert_eq!(rendered, files);
    assert!(!objects("default").iter().any(|(_, o)| {
        o["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("admissionregistration"))
    }));
}

/// `deploy/policy/*.yaml` are the chart's ClusterAdmissionPolicy, rendered with `kubewarden.name`,
/// `.mutating` and `.contextAware` per file.
#[test]
fn the_kubewarden_examples_are_the_charts_rendering() {
    for (file, name, mutating, context_aware) in POLICY_EXAMPLES {
        let case = format!("policy-{file}");
        let text = case_text(&case, "kubewarden.yaml");
        let want = format!(
            "# Rendered from deploy/chart: helm template winplace deploy/chart -n winplace --show-only templates/kubewarden.yaml \\\n#   --set kubewarden.enabled=true,kubewarden.name={name},kubewarden.mutating={mutating},kubewarden.contextAware={context_aware}\n# Do not edit: `UPDATE_SNAPSHOTS=1 cargo test -p winplace --test integration chart::` writes it again.\n---\n{}",
            text.trim_start()
        );
        let path = root().join("deploy/policy").join(file);
        if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
            std::fs::write(&path, &want).expect("write deploy/policy");
            continue;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} differs from the chart's rendering: run `UPDATE_SNAPSHOTS=1 cargo test -p winplace --test integration chart::`",
            path.display()
        );
    }
}

fn case_text(case: &str, template: &str) -> String {
    self::case(case)
        .manifests
        .iter()
        .find(|(t, _)| t.ends_with(&format!("templates/{template}")))
        .map(|(_, text)| text.clone())
        .unwrap_or_else(|| panic!("{case}: no {template}"))
}

/// NOTES.txt says how to open the dashboard, with this release's names.
#[test]
fn the_notes_say_how_to_open_the_dashboard() {
    let notes = case_text("default", "NOTES.txt");
    assert!(
        notes.contains("kubectl -n winplace port-forward svc/winplace 8080:80"),
        "{notes}"
    );
    assert!(notes.contains("http://localhost:8080"), "{notes}");
}

/// `reports.enabled` adds to the dashboard's ServiceAccount the reports of the format asked and the
/// Lease that elects their writer, nothing else, and passes the flags; `alerts.enabled` renders every
/// group of files/alerts.yaml (the placement group with the controller), `grafanaDashboard.enabled` the
/// dashboard JSON in a ConfigMap the sidecar loads; all three off by default.
#[test]
fn reports_alerts_and_the_dashboard_add_only_what_they_need() {
    let lease = (
        "coordination.k8s.io",
        "leases",
        &["get", "create", "update"][..],
    );
    for (case, group, kinds) in [
        (
            "monitoring",
            "openreports.io",
            ["reports", "clusterreports"],
        ),
        (
            "policy-reports",
            "wgpolicyk8s.io",
            ["policyreports", "clusterpolicyreports"],
        ),
    ] {
        let write: &[&str] = &["get", "list", "create", "patch", "delete"];
        let mut want = reader();
        want.extend(triples(&[
            (group, kinds[0], write),
            (group, kinds[1], write),
            lease,
        ]));
        assert_eq!(
            granted_to(case, "winplace"),
            want,
            "{case}: the dashboard's grants"
        );
        let d: k8s_openapi::api::apps::v1::Deployment = one(case, "Deployment", "winplace");
        let args = d.spec.template.spec.expect("pod spec").containers[0]
            .args
            .clone()
            .unwrap_or_default();
        assert!(args.contains(&"--reports".to_string()), "{args:?}");
        let format = if group == "openreports.io" {
            "openreports"
        } else {
            "policyreport"
        };
        assert!(
            args.contains(&format!("--reports-format={format}")),
            "{args:?}"
        );
    }
    for kind in ["PrometheusRule", "ConfigMap"] {
        assert!(
            !objects("default").iter().any(|(_, o)| o["kind"] == kind
                && o["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| !n.ends_with("-settings"))),
            "default renders a {kind}"
        );
    }
    let rule = of_kind("monitoring", "PrometheusRule").remove(0);
    assert_eq!(rule["metadata"]["labels"]["release"], "prometheus");
    let file =
        std::fs::read_to_string(root().join("deploy/chart/files/alerts.yaml")).expect("alerts");
    let parsed = parse("alerts.yaml", &file, &Limits::default());
    assert_eq!(rule["spec"]["groups"], parsed.documents[0].value["groups"]);
    let map = of_kind("monitoring", "ConfigMap")
        .into_iter()
        .find(|c| c["metadata"]["labels"]["grafana_dashboard"] == "1")
        .expect("the dashboard's ConfigMap");
    let json: Value =
        serde_json::from_str(map["data"]["winplace.json"].as_str().expect("the JSON"))
            .expect("the dashboard parses");
    assert_eq!(json["uid"], "winplace-overview");
}
