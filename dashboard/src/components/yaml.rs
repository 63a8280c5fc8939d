//! JSON values as YAML text, for fixes and generated manifests that people copy.
//!
//! A small emitter in block style (the `kubectl get -o yaml` layout) rather than a YAML library: the
//! dashboard only ever writes YAML, and a writer for JSON values is a few dozen lines.

use serde_json::Value;

/// Renders `value` as a YAML document (no leading `---`), ending with a newline:
/// `{"spec": {"os": {"name": "windows"}}}` becomes `spec:\n  os:\n    name: windows\n`.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        scalar => {
            out.push_str(&scalar_text(scalar));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (key, value) in map {
        pad(out, indent);
        out.push_str(&string_text(key));
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                write_map(out, inner, indent + 2);
            }
            // Sequences under a key sit at the key's indentation, as kubectl writes them.
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                write_seq(out, items, indent);
            }
            scalar => {
                out.push(' ');
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        match item {
            Value::Object(_) | Value::Array(_) if !is_empty_collection(item) => {
                // Render the item two columns deeper, then turn its first indentation into the dash.
                let mut nested = String::new();
                match item {
                    Value::Object(map) => write_map(&mut nested, map, indent + 2),
                    Value::Array(inner) => write_seq(&mut nested, inner, indent + 2),
                    _ => {}
                }
                pad(out, indent);
                out.push_str("- ");
                out.push_str(nested.get(indent + 2..).unwrap_or_default());
            }
            scalar => {
                pad(out, indent);
                out.push_str("- ");
                out.push_str(&scalar_text(scalar));
                out.push('\n');
            }
        }
    }
}

fn is_empty_collection(value: &Value) -> bool {
    match value {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string_text(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string as a plain scalar when YAML would read it back as the same string, else double-quoted.
fn string_text(s: &str) -> String {
    if needs_quotes(s) {
        // A JSON string is a valid YAML double-quoted scalar with the same escapes.
        serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
    } else {
        s.to_string()
    }
}

fn needs_quotes(s: &str) -> bool {
    const RESERVED: &[&str] = &[
        "null", "~", "true", "false", "yes", "no", "on", "off", "y", "n",
    ];
    let Some(first) = s.chars().next() else {
        return true;
    };
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(s)) {
        return true;
    }
    // Anything that starts like a number (10.0.20348, 1e3, -1, .5) could be read as one.
    let looks_numeric = first.is_ascii_digit()
        || (matches!(first, '-' | '+' | '.')
            && s[1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit() || c == '.'));
    looks_numeric
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.chars().any(|c| c.is_control())
}

#[cfg(test)]
mod tests {
    use super::to_yaml;
    use serde_json::json;

    #[test]
    fn documents_render_in_kubectl_block_style() {
        let cases = [
            (
                json!({"a": 1, "b": true, "c": null}),
                "a: 1\nb: true\nc: null\n",
            ),
            (
                json!({"spec": {"os": {"name": "windows"}}}),
                "spec:\n  os:\n    name: windows\n",
            ),
            (
                json!({"tolerations": [{"key": "os", "value": "windows"}]}),
                "tolerations:\n- key: os\n  value: windows\n",
            ),
            (
                json!([{"op": "add", "path": "/spec/x", "value": ["a", "b"]}]),
                "- op: add\n  path: /spec/x\n  value:\n  - a\n  - b\n",
            ),
            (json!([["a", "b"], "c"]), "- - a\n  - b\n- c\n"),
            (json!({"empty": {}, "none": []}), "empty: {}\nnone: []\n"),
            (json!([]), "[]\n"),
            (json!("plain"), "plain\n"),
        ];
        for (value, want) in cases {
            assert_eq!(to_yaml(&value), want, "{value}");
        }
    }

    #[test]
    fn strings_yaml_would_misread_are_quoted() {
        let cases = [
            ("10.0.20348", "\"10.0.20348\""),
            ("true", "\"true\""),
            ("No", "\"No\""),
            ("", "\"\""),
            ("-1", "\"-1\""),
            ("a: b", "\"a: b\""),
            ("*", "\"*\""),
            ("line\nbreak", "\"line\\nbreak\""),
            ("kubernetes.io/os", "kubernetes.io/os"),
            ("NoSchedule", "NoSchedule"),
            ("registry://ghcr.io/x:v1", "registry://ghcr.io/x:v1"),
            (
                "/spec/template/spec/nodeSelector",
                "/spec/template/spec/nodeSelector",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                to_yaml(&json!({ "k": input })),
                format!("k: {want}\n"),
                "{input:?}"
            );
        }
    }
}
