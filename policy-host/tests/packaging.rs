//! The policy's packaging agrees with itself: metadata.yml, artifacthub-pkg.yml and the
//! ClusterAdmissionPolicies in deploy/policy/ cover every kind the policy evaluates, with the same rules,
//! the same contextAwareResources and consistent mutation settings.

use serde_json::{Value, json};
use std::path::PathBuf;
use winplace_kubewarden::admission::{CONTEXT_RESOURCES, EVALUATED_KINDS};
use winplace_rules::input::{Limits, parse};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every YAML document of a file, as JSON.
fn yaml(path: &str) -> Vec<Value> {
    let full = root().join(path);
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    let parsed = parse(path, &text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{path}: {:?}", parsed.errors);
    parsed.documents.into_iter().map(|d| d.value).collect()
}

fn metadata() -> Value {
    yaml("kubewarden/metadata.yml").remove(0)
}

/// The plural resource of each evaluated kind, by API group.
fn resource(kind: &str) -> String {
    format!("{}s", kind.to_lowercase()).replace("classs", "classes")
}

/// `(group, resource, operation)` triples a rules list admits.
fn covered(rules: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for rule in rules.as_array().expect("rules is a list") {
        let strings = |k: &str| -> Vec<String> {
            rule[k]
                .as_array()
                .unwrap_or(&Vec::new())
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        };
        assert_eq!(strings("apiVersions"), ["v1"], "{rule}");
        for g in strings("apiGroups") {
            for r in strings("resources") {
                for o in strings("operations") {
                    out.push((g.clone(), r.clone(), o.clone()));
                }
            }
        }
    }
    out.sort();
    out
}

fn context_resources() -> Value {
    CONTEXT_RESOURCES
        .iter()
        .map(|(v, k)| json!({"apiVersion": v, "kind": k}))
        .collect()
}

#[test]
fn metadata_covers_every_evaluated_kind_for_create_and_update() {
    let m = metadata();
    let mut want: Vec<(String, String, String)> = EVALUATED_KINDS
        .iter()
        .flat_map(|(g, k)| {
            ["CREATE", "UPDATE"].map(|o| (g.to_string(), resource(k), o.to_string()))
        })
        .collect();
    want.sort();
    assert_eq!(covered(&m["rules"]), want);
    assert_eq!(m["mutating"], json!(true));
    assert_eq!(m["backgroundAudit"], json!(true));
    assert_eq!(m["executionMode"], json!("kubewarden-wapc"));
    assert_eq!(m["policyType"], json!("kubernetes"));
    assert_eq!(m["contextAwareResources"], context_resources());
    assert!(
        m["minimumKubewardenVersion"]
            .as_str()
            .is_some_and(|v| v >= "1.11.0")
    );
    let a = &m["annotations"];
    for key in [
        "title",
        "version",
        "description",
        "author",
        "url",
        "source",
        "license",
        "ociUrl",
        "severity",
        "category",
    ] {
        let value = a[format!("io.kubewarden.policy.{key}")]
            .as_str()
            .unwrap_or_default();
        assert!(!value.is_empty(), "io.kubewarden.policy.{key}");
    }
    for key in ["displayName", "resources", "keywords"] {
        assert!(
            a[format!("io.artifacthub.{key}")].is_string(),
            "io.artifacthub.{key}"
        );
    }
    assert_eq!(
        a["io.kubewarden.policy.version"],
        json!(env!("CARGO_PKG_VERSION"))
    );
    let resources = a["io.artifacthub.resources"].as_str().unwrap_or_default();
    for (_, kind) in EVALUATED_KINDS {
        assert!(
            resources.split(", ").any(|r| r == *kind),
            "io.artifacthub.resources lacks {kind}"
        );
    }
}

#[test]
fn artifacthub_package_matches_the_metadata() {
    let m = metadata();
    let p = yaml("kubewarden/artifacthub-pkg.yml").remove(0);
    let a = &m["annotations"];
    assert_eq!(p["version"], a["io.kubewarden.policy.version"]);
    assert_eq!(p["license"], a["io.kubewarden.policy.license"]);
    assert_eq!(p["description"], a["io.kubewarden.policy.description"]);
    assert_eq!(p["annotations"]["kubewarden/mutation"], json!("true"));
    assert_eq!(
        p["annotations"]["kubewarden/resources"],
        a["io.artifacthub.resources"]
    );
    let embedded = |key: &str| {
        // The reader takes objects at the top: wrap the embedded list in one.
        let text = p["annotations"][key].as_str().unwrap_or_default();
        let wrapped: String = text.lines().map(|l| format!("  {l}\n")).collect();
        let parsed = parse(key, &format!("list:\n{wrapped}"), &Limits::default());
        assert!(parsed.errors.is_empty(), "{key}: {:?}", parsed.errors);
        parsed
            .documents
            .into_iter()
            .next()
            .map(|d| d.value["list"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(embedded("kubewarden/rules"), m["rules"]);
    assert_eq!(
        embedded("kubewarden/contextAwareResources"),
        m["contextAwareResources"]
    );
    let image = p["containersImages"][0]["image"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(
        image,
        format!(
            "{}:v{}",
            a["io.kubewarden.policy.ociUrl"]
                .as_str()
                .unwrap_or_default(),
            p["version"].as_str().unwrap_or_default()
        )
    );
}

#[test]
fn cluster_admission_policies_are_consistent_with_the_metadata() {
    let m = metadata();
    let version = m["annotations"]["io.kubewarden.policy.version"]
        .as_str()
        .unwrap_or_default();
    let oci = m["annotations"]["io.kubewarden.policy.ociUrl"]
        .as_str()
        .unwrap_or_default();
    // (file, mutating, context-aware).
    let rows = [
        ("deploy/policy/validate.yaml", false, false),
        ("deploy/policy/mutate.yaml", true, false),
        ("deploy/policy/cluster-aware.yaml", false, true),
    ];
    for (file, mutating, aware) in rows {
        let docs = yaml(file);
        assert_eq!(docs.len(), 1, "{file}");
        let cap = &docs[0];
        assert_eq!(
            cap["apiVersion"],
            json!("policies.kubewarden.io/v1"),
            "{file}"
        );
        assert_eq!(cap["kind"], json!("ClusterAdmissionPolicy"), "{file}");
        let spec = &cap["spec"];
        assert_eq!(
            spec["module"],
            json!(format!("registry://{oci}:v{version}")),
            "{file}"
        );
        assert_eq!(
            spec["rules"], m["rules"],
            "{file}: rules differ from metadata.yml"
        );
        // policy-server refuses a mutation the policy is not allowed to make: the flag and the setting agree.
        assert_eq!(spec["mutating"], json!(mutating), "{file}");
        assert_eq!(spec["settings"]["mutate"], json!(mutating), "{file}");
        assert_eq!(spec["backgroundAudit"], m["backgroundAudit"], "{file}");
        if aware {
            assert_eq!(
                spec["contextAwareResources"], m["contextAwareResources"],
                "{file}"
            );
        } else {
            assert!(spec["contextAwareResources"].is_null(), "{file}");
        }
        // The settings are valid settings.
        let settings: winplace_rules::Settings = serde_json::from_value(spec["settings"].clone())
            .unwrap_or_else(|e| panic!("{file}: settings: {e}"));
        settings
            .validate()
            .unwrap_or_else(|e| panic!("{file}: settings: {e}"));
    }
}

/// The built policy.wasm carries metadata.yml as `kwctl annotate` writes it: JSON in the
/// `io.kubewarden.metadata` custom section, with `protocolVersion` (docs/reference/kubewarden-hosting.md §3).
#[test]
fn the_built_module_is_annotated_with_its_metadata() {
    let module = winplace_policy_host::built_policy().expect("policy.wasm");
    let mut sections = Vec::new();
    for payload in wasmparser::Parser::new(0).parse_all(&module) {
        if let Ok(wasmparser::Payload::CustomSection(reader)) = payload
            && reader.name() == "io.kubewarden.metadata"
        {
            sections.push(reader.data().to_vec());
        }
    }
    assert_eq!(sections.len(), 1, "one metadata section");
    let embedded: Value = serde_json::from_slice(&sections[0]).expect("the section is JSON");
    let mut expected = metadata();
    expected["protocolVersion"] = json!("v1");
    assert_eq!(embedded, expected);
}
