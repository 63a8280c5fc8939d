//! A template's pod spec as the engine holds it: its compact JSON text, parsed into the template's object
//! when the catalogue runs (the typed spec is decoded from that tree, as for `check`).
//!
//! Why not the typed `PodSpec`: k8s-openapi's types hold every optional field inline, so a one-container
//! pod's spec is about 10 KB typed and a few hundred bytes as JSON; with a template per bare pod, the typed
//! specs were a quarter of what an audit of misplaced, unowned pods held (docs/benchmarks.md). The
//! catalogue builds the template's object as a JSON tree anyway, so decoding from text costs it little.

use k8s_openapi::api::core::v1::PodSpec;
use serde_json::Value;

/// A pod spec as compact JSON; equal texts are equal specs (one serializer writes them all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SpecText(Box<str>);

impl SpecText {
    /// The text of `spec`.
    pub(super) fn of(spec: &PodSpec) -> Self {
        // Serializing a typed spec cannot fail (string keys, no non-finite floats).
        SpecText(serde_json::to_string(spec).unwrap_or_default().into())
    }

    /// The spec as a JSON tree (what `serde_json::to_value` of the typed spec gives).
    pub(super) fn value(&self) -> Value {
        serde_json::from_str(&self.0).unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_gives_back_the_typed_spec_and_its_tree() {
        let spec: PodSpec = serde_json::from_value(serde_json::json!({
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
            "containers": [{"name": "app", "image": "mcr.microsoft.com/windows/servercore:ltsc2022",
                "resources": {"limits": {"memory": "1Gi"}}}]
        }))
        .unwrap();
        let text = SpecText::of(&spec);
        assert_eq!(text.value(), serde_json::to_value(&spec).unwrap());
        let back: PodSpec = serde_json::from_value(text.value()).unwrap();
        assert_eq!(back, spec);
        assert_eq!(SpecText::of(&back), text, "the same spec, the same text");
        let mut other = spec.clone();
        other.containers[0].image = Some("mcr.microsoft.com/windows/servercore:ltsc2019".into());
        assert_ne!(SpecText::of(&other), text);
    }
}
