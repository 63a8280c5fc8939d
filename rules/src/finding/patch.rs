//! A fix's JSON patch held as its compact JSON text: a `serde_json::Value` object is a B-tree map
//! with room for eleven entries (~630 bytes), so an audit holding thousands of fixes as values holds
//! kilobytes per fix where the text takes a few hundred bytes.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// RFC 6902 operations, held as their compact JSON text (always a JSON array).
///
/// Built from the operations as values and read back as values; serializes exactly as the
/// `Vec<serde_json::Value>` it was built from would (an array of operations, pretty where the
/// output is pretty) and deserializes from the same array.
///
/// ```
/// use winplace_rules::Patch;
/// use serde_json::json;
/// let patch = Patch::new(vec![json!({"op": "add", "path": "/spec/nodeSelector", "value": {"kubernetes.io/os": "windows"}})]);
/// assert_eq!(patch.as_json(), r#"[{"op":"add","path":"/spec/nodeSelector","value":{"kubernetes.io/os":"windows"}}]"#);
/// assert_eq!(serde_json::to_value(&patch).unwrap(), json!(patch.ops()));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Patch(Box<str>);

impl Patch {
    /// The patch of `ops`, each an RFC 6902 operation (`{"op": "add", "path": …, "value": …}`).
    ///
    /// ```
    /// use winplace_rules::Patch;
    /// use serde_json::json;
    /// let patch = Patch::new(vec![json!({"op": "remove", "path": "/spec/hostNetwork"})]);
    /// assert_eq!(patch.as_json(), r#"[{"op":"remove","path":"/spec/hostNetwork"}]"#);
    /// ```
    pub fn new(ops: Vec<Value>) -> Self {
        Patch(Value::Array(ops).to_string().into_boxed_str())
    }

    /// The operations, decoded.
    ///
    /// ```
    /// use winplace_rules::Patch;
    /// use serde_json::json;
    /// let ops = vec![json!({"op": "add", "path": "/a", "value": [1, 2]})];
    /// assert_eq!(Patch::new(ops.clone()).ops(), ops);
    /// ```
    pub fn ops(&self) -> Vec<Value> {
        // The text was written by serde_json from an array of values, so it reads back; an empty
        // list would only stand for text no constructor makes.
        serde_json::from_str(&self.0).unwrap_or_default()
    }

    /// Whether the patch has no operation.
    ///
    /// ```
    /// use winplace_rules::Patch;
    /// assert!(Patch::new(vec![]).is_empty());
    /// assert!(!Patch::new(vec![serde_json::json!({"op": "remove", "path": "/a"})]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        &*self.0 == "[]"
    }

    /// The operations as compact JSON text: a JSON array, as `serde_json::to_string` writes it.
    ///
    /// ```
    /// use winplace_rules::Patch;
    /// use serde_json::json;
    /// let patch = Patch::new(vec![json!({"op": "add", "path": "/a", "value": 1})]);
    /// let parsed: json_patch::Patch = serde_json::from_str(patch.as_json()).unwrap();
    /// assert_eq!(parsed.0.len(), 1);
    /// ```
    pub fn as_json(&self) -> &str {
        &self.0
    }
}

impl Default for Patch {
    /// The patch of no operation (`[]`).
    ///
    /// ```
    /// assert_eq!(winplace_rules::Patch::default().as_json(), "[]");
    /// ```
    fn default() -> Self {
        Patch::new(Vec::new())
    }
}

impl From<Vec<Value>> for Patch {
    /// Same as [`Patch::new`].
    ///
    /// ```
    /// use winplace_rules::Patch;
    /// let patch: Patch = vec![serde_json::json!({"op": "remove", "path": "/a"})].into();
    /// assert_eq!(patch.as_json(), r#"[{"op":"remove","path":"/a"}]"#);
    /// ```
    fn from(ops: Vec<Value>) -> Self {
        Patch::new(ops)
    }
}

impl fmt::Debug for Patch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Patch({})", self.0)
    }
}

impl Serialize for Patch {
    /// As the decoded operations, so that every serializer (pretty JSON, YAML) writes what the
    /// `Vec<Value>` wrote; writing the text raw would print it compact inside pretty output.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.ops().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Patch {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<Value>::deserialize(deserializer).map(Patch::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Operations with what fixes carry: nested maps, lists, strings needing escapes, numbers of
    /// every kind JSON has, booleans and null.
    fn ops() -> Vec<Value> {
        vec![
            json!({"op": "add", "path": "/spec/affinity", "value": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.20348", "10.0.26100"]}]}]}}}}),
            json!({"op": "replace", "path": "/metadata/annotations/a~1b", "value": "line\n\"quoted\" \u{e9} \u{1f600}"}),
            json!({"op": "add", "path": "/spec/x", "value": [0, -1, u64::MAX, i64::MIN, 0.1, 0.30000000000000004, 1e300, 2.5e-308, true, false, null]}),
            json!({"op": "remove", "path": "/spec/tolerations/0"}),
        ]
    }

    #[test]
    fn serializes_exactly_as_the_values_did() {
        let values = ops();
        let patch = Patch::new(values.clone());
        assert_eq!(
            serde_json::to_string(&patch).unwrap(),
            serde_json::to_string(&values).unwrap()
        );
        assert_eq!(
            serde_json::to_string_pretty(&patch).unwrap(),
            serde_json::to_string_pretty(&values).unwrap()
        );
        assert_eq!(patch.as_json(), serde_json::to_string(&values).unwrap());
        // Inside a pretty document the operations are pretty too, not one compact line.
        let pretty = serde_json::to_string_pretty(&json!({"patch": patch})).unwrap();
        assert_eq!(
            pretty,
            serde_json::to_string_pretty(&json!({"patch": values})).unwrap()
        );
        assert!(pretty.contains("\n      \"op\": \"add\""), "{pretty}");
    }

    #[test]
    fn round_trips_through_json_and_back_to_the_values() {
        let values = ops();
        let patch = Patch::from(values.clone());
        assert_eq!(patch.ops(), values);
        for text in [
            serde_json::to_string(&patch).unwrap(),
            serde_json::to_string_pretty(&patch).unwrap(),
        ] {
            let back: Patch = serde_json::from_str(&text).unwrap();
            assert_eq!(back, patch);
            assert_eq!(back.as_json(), patch.as_json());
        }
    }

    #[test]
    fn only_an_array_deserializes() {
        let err = serde_json::from_str::<Patch>(r#"{"op": "remove", "path": "/a"}"#).unwrap_err();
        assert!(err.to_string().contains("expected a sequence"), "{err}");
        assert!(serde_json::from_str::<Patch>("[]").unwrap().is_empty());
    }

    #[test]
    fn debug_shows_the_text() {
        let patch = Patch::new(vec![json!({"op": "remove", "path": "/a"})]);
        assert_eq!(
            format!("{patch:?}"),
            r#"Patch([{"op":"remove","path":"/a"}])"#
        );
    }
}
