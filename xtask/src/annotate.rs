//! Annotates `policy.wasm` the way `kwctl annotate` does: the policy's `metadata.yml`, as JSON with
//! `protocolVersion` set, in the module's `io.kubewarden.metadata` custom section. policy-server and kwctl
//! read the section (`kwctl inspect`); so does the dashboard's waPC host, to show which policy answered.
//!
//! kwctl (crates/kwctl/src/annotate.rs in kubewarden/kubewarden-controller) also adds an
//! `io.kubewarden.kwctl` annotation with its own version; this is not kwctl, so it adds none.

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{Map, Value};
use std::path::Path;
use wasm_encoder::{CustomSection, Section};

/// The custom section kwctl writes (policy-evaluator's `KUBEWARDEN_CUSTOM_SECTION_METADATA`).
pub const METADATA_SECTION: &str = "io.kubewarden.metadata";

/// The waPC protocol version the policy answers to `protocol_version` (the SDK's `ProtocolVersion::V1`).
const PROTOCOL_VERSION: &str = "v1";

/// Appends `metadata` (the text of metadata.yml) to the module at `wasm` as its metadata section.
pub fn annotate(wasm: &Path, metadata: &Path) -> Result<(), String> {
    let text =
        std::fs::read_to_string(metadata).map_err(|e| format!("{}: {e}", metadata.display()))?;
    let mut json = metadata_json(&text).map_err(|e| format!("{}: {e}", metadata.display()))?;
    json.insert(
        "protocolVersion".into(),
        Value::String(PROTOCOL_VERSION.into()),
    );
    let mut module = std::fs::read(wasm).map_err(|e| format!("{}: {e}", wasm.display()))?;
    let data = serde_json::to_vec(&json).map_err(|e| e.to_string())?;
    CustomSection {
        name: METADATA_SECTION.into(),
        data: data.into(),
    }
    .append_to(&mut module);
    std::fs::write(wasm, module).map_err(|e| format!("{}: {e}", wasm.display()))
}

/// metadata.yml as a JSON object.
pub fn metadata_json(text: &str) -> Result<Map<String, Value>, String> {
    let docs = Yaml::load_from_str(text).map_err(|e| e.to_string())?;
    match docs.first().map(to_json).transpose()? {
        Some(Value::Object(map)) => Ok(map),
        _ => Err("the metadata is not a mapping".into()),
    }
}

fn to_json(node: &Yaml) -> Result<Value, String> {
    Ok(match node {
        Yaml::Value(Scalar::Null) => Value::Null,
        Yaml::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        Yaml::Value(Scalar::Integer(i)) => Value::from(*i),
        Yaml::Value(Scalar::FloatingPoint(f)) => Value::from(f.into_inner()),
        Yaml::Value(Scalar::String(s)) => Value::String(s.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match to_json(k)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
        other => return Err(format!("unsupported YAML node {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_becomes_json_with_types_kept() {
        let json = metadata_json(
            "rules:\n- apiGroups: [\"\"]\n  operations: [CREATE]\nmutating: true\nannotations:\n  io.kubewarden.policy.version: 0.1.0\n",
        )
        .unwrap();
        assert_eq!(json["mutating"], Value::Bool(true));
        assert_eq!(json["rules"][0]["apiGroups"][0], "");
        assert_eq!(json["annotations"]["io.kubewarden.policy.version"], "0.1.0");
    }

    #[test]
    fn a_list_is_not_metadata() {
        assert!(metadata_json("- a\n- b\n").is_err());
    }
}
