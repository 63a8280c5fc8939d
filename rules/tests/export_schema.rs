//! The exported admission policies are what `kubectl apply` accepts: every document deserializes into
//! k8s-openapi's type of its kind (`admissionregistration.k8s.io/v1` of Kubernetes 1.36, the crate's
//! `latest`), with its apiVersion and kind, and serializes back to exactly the same JSON, so that no field
//! is unknown to the API (k8s-openapi ignores unknown fields; the round trip does not), and the enum
//! fields hold values the API server's validation accepts.

use k8s_openapi::Resource;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use winplace_rules::export::{self, Naming};
use winplace_rules::{Settings, input};

/// `value` read as `T` and written back equals `value`; its apiVersion and kind are `T`'s.
fn round_trips<T: Resource + DeserializeOwned + Serialize>(value: &Value) -> Result<(), String> {
    if value["apiVersion"] != T::API_VERSION || value["kind"] != T::KIND {
        return Err(format!(
            "{} {} is not {}",
            value["apiVersion"],
            value["kind"],
            T::KIND
        ));
    }
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if &back != value {
        return Err(format!("fields lost in the round trip:\n{value}\n{back}"));
    }
    Ok(())
}

/// The checks of the API server's validation that the types do not carry: the enums.
fn enums(value: &Value) -> Result<(), String> {
    let spec = &value["spec"];
    let one_of = |v: &Value, allowed: &[&str], what: &str| match v {
        Value::Null => Ok(()),
        Value::String(s) if allowed.contains(&s.as_str()) => Ok(()),
        other => Err(format!("{what} {other} is not one of {allowed:?}")),
    };
    one_of(&spec["failurePolicy"], &["Ignore", "Fail"], "failurePolicy")?;
    one_of(
        &spec["reinvocationPolicy"],
        &["Never", "IfNeeded"],
        "reinvocationPolicy",
    )?;
    for action in spec["validationActions"].as_array().into_iter().flatten() {
        one_of(action, &["Deny", "Warn", "Audit"], "validationActions")?;
    }
    for m in spec["mutations"].as_array().into_iter().flatten() {
        one_of(
            &m["patchType"],
            &["JSONPatch", "ApplyConfiguration"],
            "patchType",
        )?;
    }
    for rule in spec["matchConstraints"]["resourceRules"]
        .as_array()
        .into_iter()
        .flatten()
    {
        for op in rule["operations"].as_array().into_iter().flatten() {
            one_of(
                op,
                &["CREATE", "UPDATE", "DELETE", "CONNECT", "*"],
                "operations",
            )?;
        }
    }
    Ok(())
}

fn check(value: &Value) -> Result<(), String> {
    match value["kind"].as_str() {
        Some("ValidatingAdmissionPolicy") => round_trips::<ValidatingAdmissionPolicy>(value),
        Some("ValidatingAdmissionPolicyBinding") => {
            round_trips::<ValidatingAdmissionPolicyBinding>(value)
        }
        Some("MutatingAdmissionPolicy") => round_trips::<MutatingAdmissionPolicy>(value),
        Some("MutatingAdmissionPolicyBinding") => {
            round_trips::<MutatingAdmissionPolicyBinding>(value)
        }
        other => Err(format!("unexpected kind {other:?}")),
    }?;
    enums(value)
}

#[test]
fn every_exported_document_is_a_valid_admissionregistration_v1_object() {
    let settings = [
        Settings::default(),
        Settings {
            build_pinning: winplace_rules::settings::BuildPinning::Exact,
            runtime_classes: [("10.0.20348".to_string(), "windows-2022".to_string())].into(),
            ..Settings::default()
        },
        Settings {
            exempt_namespaces: vec!["kube-system".into()],
            require_build_selector: true,
            ..Settings::default()
        },
    ];
    let mut checked = 0;
    for s in &settings {
        for naming in [Naming::Cluster, Naming::Static] {
            let mut docs = export::validating(s, naming);
            docs.extend(export::mutating(s, naming));
            // Through the YAML the command writes, read back as kubectl would read it.
            let text = export::to_yaml_stream(&docs);
            let parsed = input::parse("export.yaml", &text, &input::Limits::default());
            assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
            assert_eq!(parsed.documents.len(), docs.len());
            for (doc, read) in docs.iter().zip(&parsed.documents) {
                assert_eq!(read.value, doc.value, "{} reads back as written", doc.name);
                check(&read.value).unwrap_or_else(|e| panic!("{}: {e}", doc.name));
                let name = read.value["metadata"]["name"].as_str().unwrap_or("");
                // A DNS subdomain (the API's name rule), and the static suffix when static.
                assert!(
                    name.len() <= 253
                        && name.split('.').all(|l| !l.is_empty()
                            && l.bytes().all(|b| b.is_ascii_lowercase()
                                || b.is_ascii_digit()
                                || b == b'-')),
                    "{name}"
                );
                assert_eq!(
                    name.ends_with(".static.k8s.io"),
                    naming == Naming::Static,
                    "{name}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn the_round_trip_catches_an_unknown_field_and_a_bad_enum() {
    let docs = export::validating(&Settings::default(), Naming::Cluster);
    let mut bad = docs[0].value.clone();
    bad["spec"]["validations"][0]["messsage"] = "typo".into();
    assert!(check(&bad).is_err());
    let mut bad = docs[0].value.clone();
    bad["spec"]["failurePolicy"] = "Sometimes".into();
    assert!(check(&bad).is_err());
    let mut bad = docs[1].value.clone();
    bad["kind"] = "ValidatingAdmissionPolicy".into();
    assert!(check(&bad).is_err());
    assert!(check(&docs[0].value).is_ok());
}
