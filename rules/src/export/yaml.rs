//! A small YAML writer for the exported manifests: block mappings and sequences, every string
//! double-quoted (a YAML double-quoted scalar is a JSON string, so any CEL text survives as written).

use serde_json::Value;

/// `value` as a YAML document body (no `---`), ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value, 0, false);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        Value::Null => "null".to_string(),
        other => other.to_string(),
    }
}

fn key(k: &str) -> String {
    let plain = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b))
        && k.as_bytes()[0].is_ascii_alphabetic();
    if plain {
        k.to_string()
    } else {
        serde_json::to_string(k).unwrap_or_default()
    }
}

fn is_block(value: &Value) -> bool {
    match value {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Writes `value` at `indent`; `inline` when the first line continues a `- ` already written.
fn write_value(out: &mut String, value: &Value, indent: usize, inline: bool) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (i, (k, v)) in map.iter().enumerate() {
                if !(inline && i == 0) {
                    out.push_str(&pad);
                }
                out.push_str(&key(k));
                out.push(':');
                if is_block(v) {
                    out.push('\n');
                    let child = if v.is_array() { indent } else { indent + 2 };
                    write_value(out, v, child, false);
                } else {
                    out.push(' ');
                    out.push_str(&empty_or_scalar(v));
                    out.push('\n');
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push_str("- ");
                if is_block(item) {
                    if item.is_array() {
                        out.push('\n');
                        write_value(out, item, indent + 2, false);
                    } else {
                        write_value(out, item, indent + 2, true);
                    }
                } else {
                    out.push_str(&empty_or_scalar(item));
                    out.push('\n');
                }
            }
        }
        other => {
            out.push_str(&empty_or_scalar(other));
            out.push('\n');
        }
    }
}

fn empty_or_scalar(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".to_string(),
        Value::Array(_) => "[]".to_string(),
        other => scalar(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_block_yaml_that_reads_back() {
        let value = json!({
            "apiVersion": "v1",
            "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"}},
            "spec": {"list": [{"a": 1, "b": ["x", "y"]}, "s'q\"\\", []], "empty": {}, "t": true}
        });
        let text = to_yaml(&value);
        assert!(
            text.starts_with(
                "apiVersion: \"v1\"\nmetadata:\n  labels:\n    app.kubernetes.io/name: \"x\"\n"
            ),
            "{text}"
        );
        let parsed = crate::input::parse("t.yaml", &text, &crate::input::Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}\n{text}", parsed.errors);
        assert_eq!(parsed.documents[0].value, value, "{text}");
    }
}
