//! What policy-server makes of the module's ValidationResponse: allowed, denied, or (for a mutating
//! ClusterAdmissionPolicy) the JSONPatch and the patched object, and the AdmissionResponse it sends.

use base64::Engine;
use serde_json::{Value, json};

/// What policy-server answers when a policy that may not mutate returns a mutated object
/// (policy-evaluator's AdmissionResponse handling; see docs/reference/kubewarden-hosting.md).
pub const MUTATION_NOT_ALLOWED: &str = "The policy attempted to mutate the request, but it is currently configured to not allow mutations.";

/// What policy-server makes of the module's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accepted as is.
    Allowed,
    /// Rejected, with the message the user sees.
    Denied(String),
    /// Accepted with changes: the JSONPatch policy-server sends and the object after it.
    Mutated {
        /// RFC 6902 operations (policy-server diffs the request's object and the mutated one).
        patch: Value,
        /// The patched object.
        object: Value,
    },
}

/// The module's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The decision.
    pub verdict: Verdict,
    /// Admission warnings.
    pub warnings: Vec<String>,
    /// The AdmissionResponse policy-server sends the API server.
    pub response: Value,
}

/// Reads the module's ValidationResponse `raw` for a request about `object`, as policy-server does for a
/// ClusterAdmissionPolicy with `mutating: mutating`.
pub fn read_answer(raw: &str, object: &Value, mutating: bool) -> Result<Answer, String> {
    let v: Value =
        serde_json::from_str(raw).map_err(|e| format!("the module answered non-JSON: {e}"))?;
    let accepted = v["accepted"]
        .as_bool()
        .ok_or("the module's answer has no boolean `accepted`")?;
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let message = v["message"].as_str().map(str::to_string);
    let patch = match v.get("mutated_object") {
        Some(m) if !m.is_null() => {
            let patch = json_patch::diff(object, m);
            (!patch.0.is_empty())
                .then(|| (serde_json::to_value(&patch).unwrap_or_default(), m.clone()))
        }
        _ => None,
    };
    let (verdict, allowed) = match (accepted, patch) {
        (false, _) => (Verdict::Denied(message.clone().unwrap_or_default()), false),
        (true, Some(_)) if !mutating => (Verdict::Denied(MUTATION_NOT_ALLOWED.to_string()), false),
        (true, Some((patch, object))) => (Verdict::Mutated { patch, object }, true),
        (true, None) => (Verdict::Allowed, true),
    };
    let mut response =
        json!({"uid": winplace_policy_wasm::request::REQUEST_UID, "allowed": allowed});
    if !warnings.is_empty() {
        response["warnings"] = json!(warnings);
    }
    match &verdict {
        Verdict::Denied(m) => response["status"] = json!({"message": m}),
        Verdict::Mutated { patch, .. } => {
            response["patchType"] = json!("JSONPatch");
            response["patch"] =
                json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
        }
        Verdict::Allowed => {}
    }
    Ok(Answer {
        verdict,
        warnings,
        response: json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_policy_server_reads_them() {
        let object = json!({"kind": "Pod", "spec": {}});
        let denied = read_answer(
            r#"{"accepted":false,"message":"no","warnings":["w"]}"#,
            &object,
            true,
        )
        .unwrap();
        assert_eq!(denied.verdict, Verdict::Denied("no".into()));
        assert_eq!(denied.response["response"]["status"]["message"], "no");
        assert_eq!(denied.warnings, ["w"]);

        let mutated = r#"{"accepted":true,"mutated_object":{"kind":"Pod","spec":{"nodeSelector":{"kubernetes.io/os":"windows"}}}}"#;
        let answer = read_answer(mutated, &object, true).unwrap();
        let Verdict::Mutated { patch, .. } = &answer.verdict else {
            panic!("{answer:?}")
        };
        assert_eq!(patch[0]["op"], "add");
        assert_eq!(answer.response["response"]["patchType"], "JSONPatch");
        // A validating (non-mutating) policy may not mutate: policy-server rejects.
        let refused = read_answer(mutated, &object, false).unwrap();
        assert_eq!(
            refused.verdict,
            Verdict::Denied(MUTATION_NOT_ALLOWED.into())
        );
        // An unchanged "mutated" object is no mutation.
        let same = read_answer(
            r#"{"accepted":true,"mutated_object":{"kind":"Pod","spec":{}}}"#,
            &object,
            false,
        )
        .unwrap();
        assert_eq!(same.verdict, Verdict::Allowed);
        assert!(read_answer("[]", &object, true).is_err());
    }
}
