//! One chunk of text (one YAML document) → JSON values with the line of every node.
//!
//! saphyr parses; this file turns its marked nodes into `serde_json::Value` under the YAML 1.2 core
//! schema (what `sigs.k8s.io/yaml` does for kubectl, minus YAML 1.1 quirks such as `yes`/`no`
//! booleans, which the core schema reads as strings).

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::{Map, Number, Value};

use super::limits::{Limits, prescan};
use super::lines::LineMap;

/// A parsed document of a chunk, lines relative to the chunk (1-based).
#[derive(Debug)]
pub(crate) struct ChunkDoc {
    /// First line of the document's root node.
    pub line: u32,
    /// The document as JSON.
    pub value: Value,
    /// Lines of its nodes.
    pub lines: LineMap,
}

/// An error in a chunk, line relative to the chunk, both 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Parses `text` (one document, possibly starting with `---`, `\n` line ends) into its documents.
///
/// Empty documents (comments only) and documents holding only `null` give nothing.
pub(crate) fn parse_chunk(text: &str, limits: &Limits) -> Vec<Result<ChunkDoc, ChunkError>> {
    if let Err(e) = prescan(text, limits) {
        return vec![Err(ChunkError {
            line: e.line,
            column: e.column,
            message: e.message,
        })];
    }
    let docs = match MarkedYamlOwned::load_from_str(text) {
        Ok(docs) => docs,
        Err(e) => return vec![Err(scan_error(text, &e))],
    };
    let mut out = Vec::new();
    for doc in docs {
        if matches!(
            doc.data,
            YamlDataOwned::BadValue | YamlDataOwned::Value(ScalarOwned::Null)
        ) {
            continue;
        }
        let line = to_u32(doc.span.start.line());
        let mut conv = Converter {
            limits,
            nodes: 0,
            furthest: 0,
            lines: LineMap::default(),
        };
        let root = conv.lines.add_root(line);
        out.push(conv.convert(doc, 1, root).map(|value| {
            let mut lines = conv.lines;
            lines.finish();
            ChunkDoc { line, value, lines }
        }));
    }
    out
}

/// A saphyr error as a chunk error, with the key named for duplicate keys and the line clamped to the
/// text (errors at the end of input are reported on the last line).
fn scan_error(text: &str, e: &saphyr::ScanError) -> ChunkError {
    let last_line = text.trim_end_matches('\n').split('\n').count().max(1);
    let mark = e.marker();
    let (line, column) = if mark.line() > last_line {
        let last = text
            .trim_end_matches('\n')
            .rsplit('\n')
            .next()
            .unwrap_or("");
        (last_line, last.chars().count() + 1)
    } else {
        (mark.line().max(1), mark.col() + 1)
    };
    let message = match e.info() {
        "duplicated key in mapping" => {
            let key = key_text_at(text, mark.line(), mark.col());
            format!("duplicate key {key:?} (the API server rejects duplicate fields)")
        }
        "recursion limit exceeded" => "flow collections nested too deeply".to_string(),
        m if m.starts_with("alias expansion exceeded") => {
            "aliases expand to more than 100,000 nodes (a \"billion laughs\" document?); nothing of it was read"
                .to_string()
        }
        other => other.to_string(),
    };
    ChunkError {
        line: to_u32(line),
        column: to_u32(column),
        message,
    }
}

/// The text of the mapping key written at `line` (1-based), `col` (0-based, in characters).
fn key_text_at(text: &str, line: usize, col: usize) -> String {
    let Some(l) = text.split('\n').nth(line.saturating_sub(1)) else {
        return String::new();
    };
    let rest: String = l.chars().skip(col).collect();
    let rest = rest.strip_prefix("? ").unwrap_or(&rest);
    if let Some(q @ ('"' | '\'')) = rest.chars().next() {
        let inner = &rest[1..];
        return inner.split(q).next().unwrap_or("").to_string();
    }
    let end = rest
        .char_indices()
        .find(|&(i, c)| {
            (c == ':'
                && rest[i + 1..]
                    .chars()
                    .next()
                    .is_none_or(|n| n == ' ' || n == '\t'))
                || c == ','
                || c == '}'
        })
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].trim().to_string()
}

struct Converter<'a> {
    limits: &'a Limits,
    nodes: usize,
    /// The furthest line reached: nodes copied by an alias carry their anchor's (earlier) lines, and a
    /// limit crossed inside such a copy is reported at the alias.
    furthest: u32,
    lines: LineMap,
}

fn node_line(node: &MarkedYamlOwned) -> u32 {
    to_u32(node.span.start.line())
}

fn error_at(node: &MarkedYamlOwned, message: String) -> ChunkError {
    ChunkError {
        line: node_line(node).max(1),
        column: to_u32(node.span.start.col() + 1),
        message,
    }
}

impl Converter<'_> {
    /// Converts `node` at nesting `depth` (root = 1) whose lines live at `line_id`.
    fn convert(
        &mut self,
        node: MarkedYamlOwned,
        depth: usize,
        line_id: u32,
    ) -> Result<Value, ChunkError> {
        self.nodes += 1;
        self.furthest = self.furthest.max(node_line(&node));
        if self.nodes > self.limits.max_nodes {
            return Err(ChunkError {
                line: self.furthest.max(1),
                column: 1,
                message: format!(
                    "the document has more than {} nodes (aliases expanded)",
                    self.limits.max_nodes
                ),
            });
        }
        if depth > self.limits.max_depth {
            return Err(ChunkError {
                line: self.furthest.max(1),
                column: 1,
                message: format!(
                    "nesting is deeper than the limit of {} levels (aliases expanded)",
                    self.limits.max_depth
                ),
            });
        }
        let MarkedYamlOwned { span, data } = node;
        let at = MarkedYamlOwned {
            span,
            data: YamlDataOwned::BadValue,
        };
        match data {
            YamlDataOwned::Value(s) => scalar(&at, s),
            YamlDataOwned::Representation(s, _, _) => Ok(Value::String(s)),
            YamlDataOwned::Tagged(_, inner) => self.convert(*inner, depth, line_id),
            YamlDataOwned::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    let l = node_line(&item);
                    let child = self.lines.add_child(line_id, i.to_string(), l, l);
                    out.push(self.convert(item, depth + 1, child)?);
                }
                Ok(Value::Array(out))
            }
            YamlDataOwned::Mapping(entries) => {
                let mut out = Map::new();
                let mut merges: Vec<(Value, u32)> = Vec::new();
                for (k, v) in entries {
                    let key_line = node_line(&k);
                    let key = key_string(&k)?;
                    if key == "<<" && is_merge_source(&v) {
                        let child = self.lines.add_child(line_id, key, key_line, node_line(&v));
                        let value = self.convert(v, depth + 1, child)?;
                        merges.push((value, child));
                        continue;
                    }
                    if out.contains_key(&key) {
                        let first = self.lines.child_line(line_id, &key).unwrap_or(0);
                        return Err(error_at(
                            &k,
                            format!(
                                "duplicate key {key:?} (also at line {first}; the API server rejects duplicate fields)"
                            ),
                        ));
                    }
                    let child = self.lines.add_child(line_id, key.clone(), key_line, node_line(&v));
                    let value = self.convert(v, depth + 1, child)?;
                    out.insert(key, value);
                }
                for (source, child) in merges {
                    self.merge(&mut out, source, line_id, child);
                }
                Ok(Value::Object(out))
            }
            YamlDataOwned::Alias(_) | YamlDataOwned::BadValue => Err(error_at(
                &at,
                "invalid value: an alias to an unknown anchor, or a value that does not match its tag (such as `!!int abc`)"
                    .to_string(),
            )),
        }
    }

    /// Applies a `<<` merge key (YAML 1.1, which kubectl accepts): keys of the merged mapping(s) that the
    /// mapping does not set itself are added, the earlier source winning.
    fn merge(&mut self, out: &mut Map<String, Value>, source: Value, parent: u32, merge_id: u32) {
        let sources: Vec<(Value, Vec<String>)> = match source {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (v, vec![i.to_string()]))
                .collect(),
            other => vec![(other, Vec::new())],
        };
        let merge_lines = self.lines.rebase_from(merge_id);
        for (value, prefix) in sources {
            let Value::Object(map) = value else { continue };
            let sub = merge_lines.rebase(&prefix);
            for (k, v) in map {
                if out.contains_key(&k) {
                    continue;
                }
                self.lines.graft(parent, &k, &sub);
                out.insert(k, v);
            }
        }
    }
}

/// Whether a `<<` value is a merge (a mapping, or a sequence of mappings) rather than a plain key.
fn is_merge_source(v: &MarkedYamlOwned) -> bool {
    fn is_map(v: &MarkedYamlOwned) -> bool {
        match &v.data {
            YamlDataOwned::Mapping(_) => true,
            YamlDataOwned::Tagged(_, inner) => is_map(inner),
            _ => false,
        }
    }
    match &v.data {
        YamlDataOwned::Sequence(items) => !items.is_empty() && items.iter().all(is_map),
        _ => is_map(v),
    }
}

/// A mapping key as a JSON object key: scalars are written out (`1` → `"1"`, `true` → `"true"`).
fn key_string(k: &MarkedYamlOwned) -> Result<String, ChunkError> {
    match &k.data {
        YamlDataOwned::Value(s) => match s {
            ScalarOwned::Null => Ok("null".to_string()),
            ScalarOwned::Boolean(b) => Ok(b.to_string()),
            ScalarOwned::Integer(i) => Ok(i.to_string()),
            ScalarOwned::FloatingPoint(f) => Ok(f.into_inner().to_string()),
            ScalarOwned::String(s) => Ok(s.clone()),
        },
        YamlDataOwned::Representation(s, _, _) => Ok(s.clone()),
        YamlDataOwned::Tagged(_, inner) => key_string(inner),
        _ => Err(error_at(
            k,
            "a mapping key must be a string or another scalar, not a mapping or a list".to_string(),
        )),
    }
}

fn scalar(at: &MarkedYamlOwned, s: ScalarOwned) -> Result<Value, ChunkError> {
    Ok(match s {
        ScalarOwned::Null => Value::Null,
        ScalarOwned::Boolean(b) => Value::Bool(b),
        ScalarOwned::Integer(i) => Value::Number(i.into()),
        ScalarOwned::FloatingPoint(f) => match Number::from_f64(f.into_inner()) {
            Some(n) => Value::Number(n),
            None => {
                return Err(error_at(
                    at,
                    "JSON cannot hold NaN or infinity (`.nan`, `.inf`, or a number too large); quote it if it is a string"
                        .to_string(),
                ));
            }
        },
        ScalarOwned::String(s) => Value::String(s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<ChunkDoc, ChunkError> {
        let mut docs = parse_chunk(text, &Limits::default());
        assert_eq!(docs.len(), 1, "{text:?}");
        docs.remove(0)
    }

    #[test]
    fn core_schema_scalars_become_json() {
        // YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
        let doc =
            one("a: 1\nb: 0x1F\nc: 1.5\nd: true\ne: ~\nf: yes\ng: '1'\nh: !!str 2\ni: 0o17\nj:\n")
                .expect("parses");
        let want = serde_json::json!({
            "a": 1, "b": 31, "c": 1.5, "d": true, "e": null, "f": "yes", "g": "1", "h": "2", "i": 15, "j": null
        });
        assert_eq!(doc.value, want);
        assert!(doc.value["a"].is_i64());
    }

    #[test]
    fn non_json_numbers_are_errors_at_their_line() {
        for (text, line) in [
            ("a: 1\nb: .nan\n", 2),
            ("a:\n  - .inf\n", 2),
            ("x: -.Inf\n", 1),
            ("y: 1e999\n", 1),
        ] {
            let err = one(text).expect_err(text);
            assert_eq!(err.line, line, "{text:?}");
            assert!(err.message.contains("NaN or infinity"), "{}", err.message);
        }
    }

    #[test]
    fn keys_are_stringified_and_duplicates_refused() {
        let doc = one("1: a\ntrue: b\nnull: c\n").expect("parses");
        assert_eq!(
            doc.value,
            serde_json::json!({"1": "a", "true": "b", "null": "c"})
        );
        // Same key twice (saphyr finds it) and two keys that collide once written as strings.
        let rows = [
            ("a: 1\nb: 2\na: 3\n", 3, "\"a\""),
            ("a:\n  \"x y\": 1\n  \"x y\": 2\n", 3, "\"x y\""),
            ("m: {k: 1, k: 2}\n", 1, "\"k\""),
            ("1: a\n\"1\": b\n", 2, "\"1\""),
        ];
        for (text, line, key) in rows {
            let err = one(text).expect_err(text);
            assert_eq!(err.line, line, "{text:?}");
            assert!(
                err.message.contains(&format!("duplicate key {key}")),
                "{}",
                err.message
            );
        }
        let err = one("? [a]\n: 1\n").expect_err("complex key");
        assert!(err.message.contains("must be a string"));
    }

    #[test]
    fn merge_keys_fill_missing_fields_with_lines() {
        let doc = one("base: &b\n  x: 1\n  y: 2\nthing:\n  <<: *b\n  y: 3\n").expect("parses");
        assert_eq!(doc.value["thing"], serde_json::json!({"x": 1, "y": 3}));
        let lines = doc.lines;
        // A merged key keeps the line it is written at (in the anchor).
        assert_eq!(lines.line_of(&crate::FieldPath::parse("thing.x")), Some(2));
        assert_eq!(lines.line_of(&crate::FieldPath::parse("thing.y")), Some(6));
    }

    #[test]
    fn bad_tags_and_unknown_aliases_are_errors() {
        assert!(one("a: !!int abc\n").is_err());
        assert!(one("a: *nope\n").is_err());
    }

    #[test]
    fn empty_and_null_documents_give_nothing() {
        for text in [
            "",
            "# only a comment\n",
            "---\n",
            "--- # c\n\n",
            "~\n",
            "null\n",
        ] {
            assert!(parse_chunk(text, &Limits::default()).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn node_budget_counts_alias_expansion() {
        let limits = Limits {
            max_nodes: 50,
            ..Limits::default()
        };
        let text = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9]\nb: [*a, *a, *a, *a, *a]\n";
        let docs = parse_chunk(text, &limits);
        let Some(Err(err)) = docs.first() else {
            panic!("{docs:?}")
        };
        assert_eq!(err.line, 2);
        assert!(err.message.contains("more than 50 nodes"));
    }
}
