//! A small block-style YAML writer for JSON values: what repaired parts of a manifest are written as.
//!
//! Strings are written plain when every YAML reader (YAML 1.2 core schema and the YAML 1.1 readers
//! `kubectl` uses) reads them back as the same string, and double-quoted otherwise.

use serde_json::Value;

/// Words YAML 1.1 or 1.2 readers turn into booleans or null.
const SPECIAL_WORDS: &[&str] = &[
    "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y",
    "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", ".inf",
    ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<", "=",
];

/// Whether some YAML reader could take `s` for a number (digits with signs, dots, `_`, `:`, `e`, `0x`).
fn looks_numeric(s: &str) -> bool {
    let body = s.trim_start_matches(['+', '-']);
    let first_digit = body.starts_with(|c: char| c.is_ascii_digit())
        || (body.starts_with('.') && body[1..].starts_with(|c: char| c.is_ascii_digit()));
    if !first_digit {
        return false;
    }
    let cleaned: String = body.chars().filter(|c| *c != '_').collect();
    cleaned.parse::<f64>().is_ok()
        || cleaned.starts_with("0x")
        || cleaned.starts_with("0o")
        || cleaned.starts_with("0b")
        || cleaned
            .chars()
            .all(|c| c.is_ascii_digit() || c == ':' || c == '.')
}

/// Whether `s` can be written without quotes and read back as the same string.
pub(crate) fn plain_ok(s: &str) -> bool {
    if SPECIAL_WORDS.contains(&s) || looks_numeric(s) {
        return false;
    }
    let Some(first) = s.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) || first.is_whitespace() {
        return false;
    }
    if s.ends_with([' ', '\t', ':']) {
        return false;
    }
    !(s.contains(": ")
        || s.contains(" #")
        || s.contains(['\n', '\r', '\t'])
        || s.chars().any(|c| c.is_control() || c == '\u{feff}'))
}

/// `s` as a YAML scalar: plain when safe, else double-quoted (JSON escapes are valid YAML ones).
pub(crate) fn string(s: &str) -> String {
    if plain_ok(s) {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

/// A scalar or an empty collection on one line; `None` for a collection with content.
fn inline(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("null".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(string(s)),
        Value::Array(a) if a.is_empty() => Some("[]".into()),
        Value::Object(m) if m.is_empty() => Some("{}".into()),
        _ => None,
    }
}

fn pad(indent: usize) -> String {
    " ".repeat(indent)
}

/// Lines of the mapping entry `key: value` with the key at column `indent`.
///
/// Lists under a key are written at the key's column (`kubectl` style).
pub(crate) fn entry(key: &str, value: &Value, indent: usize, out: &mut Vec<String>) {
    entry_as(&string(key), value, indent, out);
}

/// `key` written with `quote` (`"` or `'`), as the keys it replaces or stands beside are; plain or
/// double-quoted as [`string`] says without one.
pub(crate) fn key_as(key: &str, quote: Option<char>) -> String {
    match quote {
        Some('"') => Value::String(key.to_string()).to_string(),
        Some('\'') => format!("'{}'", key.replace('\'', "''")),
        _ => string(key),
    }
}

/// [`entry`] with its key already written (quoted or not).
pub(crate) fn entry_as(key: &str, value: &Value, indent: usize, out: &mut Vec<String>) {
    match inline(value) {
        Some(v) => out.push(format!("{}{key}: {v}", pad(indent))),
        None => {
            out.push(format!("{}{key}:", pad(indent)));
            match value {
                Value::Object(map) => {
                    for (k, v) in map {
                        entry(k, v, indent + 2, out);
                    }
                }
                Value::Array(items) => {
                    for v in items {
                        item(v, indent, out);
                    }
                }
                _ => {}
            }
        }
    }
}

/// Lines of the list item `- value` with the dash at column `indent`.
pub(crate) fn item(value: &Value, indent: usize, out: &mut Vec<String>) {
    match (inline(value), value) {
        (Some(v), _) => out.push(format!("{}- {v}", pad(indent))),
        (None, Value::Object(map)) => {
            let start = out.len();
            for (k, v) in map {
                entry(k, v, indent + 2, out);
            }
            // The first entry shares the dash's line.
            if let Some(first) = out.get_mut(start) {
                first.replace_range(indent..indent + 2, "- ");
            }
        }
        (None, _) => {
            out.push(format!("{}-", pad(indent)));
            if let Value::Array(items) = value {
                for v in items {
                    item(v, indent + 2, out);
                }
            }
        }
    }
}

/// A whole document (a mapping) as block YAML, ending with a newline.
pub(crate) fn document(value: &Value) -> String {
    let mut lines = Vec::new();
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                entry(k, v, 0, &mut lines);
            }
        }
        other => lines.push(inline(other).unwrap_or_default()),
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};
    use serde_json::json;

    #[test]
    fn strings_that_would_change_meaning_are_quoted() {
        let rows = [
            ("windows", "windows"),
            ("kubernetes.io/os", "kubernetes.io/os"),
            ("NoSchedule", "NoSchedule"),
            ("10.0.20348", "\"10.0.20348\""),
            ("1", "\"1\""),
            ("1_000", "\"1_000\""),
            ("12:30", "\"12:30\""),
            ("true", "\"true\""),
            ("yes", "\"yes\""),
            ("null", "\"null\""),
            ("", "\"\""),
            ("- x", "\"- x\""),
            ("a: b", "\"a: b\""),
            ("a #b", "\"a #b\""),
            ("*", "\"*\""),
            ("line\nbreak", "\"line\\nbreak\""),
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                "mcr.microsoft.com/windows/servercore:ltsc2022",
            ),
        ];
        for (input, want) in rows {
            assert_eq!(string(input), want, "{input:?}");
        }
    }

    #[test]
    fn documents_read_back_as_the_same_value() {
        let rows = [
            json!({"a": 1}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {}},
                   "spec": {"tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
                            "containers": [{"name": "c", "args": ["1", "-x", "true", ""], "ports": []}],
                            "nested": [[1, 2], [], {}], "n": null, "f": 1.5, "b": false}}),
            json!({"weird keys": {"a: b": "x", "#": "y", "10.0": "z"}}),
        ];
        for value in rows {
            let text = document(&value);
            let parsed = parse("e.yaml", &text, &Limits::default());
            assert!(parsed.errors.is_empty(), "{text}\n{:?}", parsed.errors);
            assert_eq!(parsed.documents[0].value, value, "{text}");
        }
    }

    #[test]
    fn lists_sit_at_the_key_column_and_items_open_on_the_dash() {
        let mut out = Vec::new();
        entry(
            "tolerations",
            &json!([{"effect": "NoSchedule", "key": "os"}]),
            4,
            &mut out,
        );
        assert_eq!(
            out,
            [
                "    tolerations:",
                "    - effect: NoSchedule",
                "      key: os"
            ]
        );
    }
}
