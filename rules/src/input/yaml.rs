//! One chunk of text (one YAML document) → JSON values with the line of every node, read as kubectl
//! reads it: sigs.k8s.io/yaml over go-yaml v2 (docs/reference/yaml-kubectl.md).
//!
//! saphyr's parser reads the text (the syntax, with the position of every event); the events build
//! `serde_json::Value`s here as go-yaml v2 and sigs.k8s.io/yaml would: scalars resolved as YAML 1.1
//! ([`super::scalars`]: `yes` is `true`, `0777` is 511), a key written twice keeps its last value, a
//! `<<` merge key sets the merged mapping's keys where it stands (of a list of sources, the earlier
//! wins), keys that are not strings are written as strings, a null key is refused. Where saphyr refuses
//! what go-yaml reads (a quoted scalar's continuation lines indented with tabs), the text is repaired
//! and read again ([`super::blanks`]). Aliases are expanded, each copy counted against
//! [`Limits::max_nodes`] before it is made.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Value};

use super::blanks;
use super::limits::{Limits, prescan};
use super::lines::LineMap;
use super::scalars::{self, Scalar};

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
    let mut text = Cow::Borrowed(text);
    let mut budget = blanks::REPAIR_BUDGET;
    loop {
        match read(&text, limits) {
            Ok(docs) => return docs,
            Err(e) => {
                let mark = e.marker();
                let repaired = (budget >= text.len())
                    .then(|| blanks::repair(&text, e.info(), mark.line(), mark.col()))
                    .flatten();
                match repaired {
                    Some(repaired) => {
                        budget -= text.len();
                        text = Cow::Owned(repaired);
                    }
                    None => return vec![Err(scan_error(&text, &e))],
                }
            }
        }
    }
}

/// Reads the documents of `text`; `Err` when saphyr cannot scan it.
fn read(text: &str, limits: &Limits) -> Result<Vec<Result<ChunkDoc, ChunkError>>, ScanError> {
    let mut out = Vec::new();
    let mut builder: Option<Builder<'_>> = None;
    for next in Parser::new_from_str(text) {
        let (event, span) = next?;
        match event {
            Event::DocumentStart(_) => builder = Some(Builder::new(limits)),
            Event::DocumentEnd => {
                if let Some(doc) = builder.take().and_then(Builder::finish) {
                    out.push(Ok(doc));
                }
            }
            Event::StreamStart | Event::StreamEnd | Event::Nothing => {}
            event => {
                // A document over a limit is refused at once; the rest of its events are skipped.
                if let Some(b) = builder.as_mut()
                    && let Err(mut e) = b.event(event, span)
                {
                    // An event at the end of the input is reported on its last line.
                    let last_line = to_u32(text.trim_end_matches('\n').split('\n').count().max(1));
                    e.line = e.line.min(last_line);
                    out.push(Err(e));
                    builder = None;
                }
            }
        }
    }
    Ok(out)
}

/// A saphyr error as a chunk error, the line clamped to the text (errors at the end of input are
/// reported on the last line).
fn scan_error(text: &str, e: &ScanError) -> ChunkError {
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
        "recursion limit exceeded" => "flow collections nested too deeply".to_string(),
        other => other.to_string(),
    };
    ChunkError {
        line: to_u32(line),
        column: to_u32(column),
        message,
    }
}

fn error_at(span: Span, message: String) -> ChunkError {
    ChunkError {
        line: to_u32(span.start.line()).max(1),
        column: to_u32(span.start.col() + 1),
        message,
    }
}

/// A tag as the resolver takes it: a core tag's suffix (`int` of `!!int`), another tag's text.
fn tag_name(tag: Option<&Tag>) -> Option<Cow<'_, str>> {
    tag.map(|t| {
        if t.is_yaml_core_schema() {
            Cow::Borrowed(t.suffix.as_str())
        } else {
            Cow::Owned(t.to_string())
        }
    })
}

/// An anchored node, kept for its aliases.
#[derive(Debug)]
struct Anchored {
    value: Value,
    /// Its lines, the node as the root.
    lines: LineMap,
    /// Nodes it holds (aliases in it expanded).
    nodes: usize,
    /// Levels of nesting it holds (a scalar: 1).
    height: usize,
}

/// A mapping key read, waiting for its value.
#[derive(Debug)]
struct Key {
    text: String,
    line: u32,
    /// A `<<` merge key (plain, or tagged `!!merge`).
    merge: bool,
}

/// An open mapping or sequence.
#[derive(Debug)]
struct Open {
    /// Its items, or its entries and the key waiting for a value.
    kind: Kind,
    /// Its node in the line map.
    line_id: u32,
    /// Its anchor id (0: none).
    anchor: usize,
    /// `nodes` when it opened.
    nodes_before: usize,
    /// The deepest nesting below it so far (itself: 1).
    height: usize,
}

#[derive(Debug)]
enum Kind {
    Sequence(Vec<Value>),
    Mapping(Map<String, Value>, Option<Key>),
}

/// Builds one document from saphyr's events.
struct Builder<'a> {
    limits: &'a Limits,
    nodes: usize,
    lines: LineMap,
    stack: Vec<Open>,
    anchors: HashMap<usize, Anchored>,
    root: Option<(Value, u32)>,
}

/// Where a new node goes.
enum Slot {
    /// A mapping's key.
    Key,
    /// A value, at this line node.
    Value(u32),
}

impl<'a> Builder<'a> {
    fn new(limits: &'a Limits) -> Self {
        Builder {
            limits,
            nodes: 0,
            lines: LineMap::default(),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
        }
    }

    /// The document, or `None` when it holds nothing (or only null).
    fn finish(mut self) -> Option<ChunkDoc> {
        let (value, line) = self.root.take()?;
        if value.is_null() {
            return None;
        }
        self.lines.finish();
        Some(ChunkDoc {
            line,
            value,
            lines: self.lines,
        })
    }

    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), ChunkError> {
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag_name(tag.as_deref());
                let plain = style == ScalarStyle::Plain;
                match self.slot(span)? {
                    Slot::Key => {
                        let merge = (plain && tag.is_none() && text == "<<")
                            || tag.as_deref() == Some("merge");
                        let resolved = if merge {
                            Scalar::Str(text.into_owned())
                        } else {
                            scalars::resolve(&text, plain, tag.as_deref())
                                .map_err(|e| error_at(span, e.0))?
                        };
                        let Some(key) = scalars::key_text(resolved) else {
                            return Err(error_at(span, NULL_KEY.to_string()));
                        };
                        if anchor > 0 {
                            self.anchors.insert(
                                anchor,
                                Anchored {
                                    value: Value::String(key.clone()),
                                    lines: LineMap::with_root(line_of(span)),
                                    nodes: 1,
                                    height: 1,
                                },
                            );
                        }
                        self.set_key(key, line_of(span), merge);
                        Ok(())
                    }
                    Slot::Value(line_id) => {
                        let resolved = scalars::resolve(&text, plain, tag.as_deref())
                            .map_err(|e| error_at(span, e.0))?;
                        let value = scalars::to_json(resolved)
                            .map_err(|()| error_at(span, NOT_JSON.to_string()))?;
                        self.count(1, span)?;
                        if anchor > 0 {
                            self.anchors.insert(
                                anchor,
                                Anchored {
                                    value: value.clone(),
                                    lines: self.lines.rebase_from(line_id),
                                    nodes: 1,
                                    height: 1,
                                },
                            );
                        }
                        self.place(value, 1, line_id, span)
                    }
                }
            }
            Event::SequenceStart(anchor, _) => self.open(Kind::Sequence(Vec::new()), anchor, span),
            Event::MappingStart(anchor, _) => {
                self.open(Kind::Mapping(Map::new(), None), anchor, span)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(open) = self.stack.pop() else {
                    return Ok(());
                };
                let value = match open.kind {
                    Kind::Sequence(items) => Value::Array(items),
                    Kind::Mapping(entries, _) => Value::Object(entries),
                };
                if open.anchor > 0 {
                    self.anchors.insert(
                        open.anchor,
                        Anchored {
                            value: value.clone(),
                            lines: self.lines.rebase_from(open.line_id),
                            nodes: self.nodes - open.nodes_before,
                            height: open.height,
                        },
                    );
                }
                self.place(value, open.height, open.line_id, span)
            }
            Event::Alias(id) => {
                let slot = self.slot(span)?;
                let Some(anchored) = self.anchors.get(&id) else {
                    return Err(error_at(span, UNKNOWN_ALIAS.to_string()));
                };
                let (nodes, height) = (anchored.nodes, anchored.height);
                match slot {
                    Slot::Key => {
                        let key = match &anchored.value {
                            Value::String(s) => s.clone(),
                            Value::Bool(b) => b.to_string(),
                            Value::Number(n) => n.to_string(),
                            Value::Null => return Err(error_at(span, NULL_KEY.to_string())),
                            _ => return Err(error_at(span, COMPLEX_KEY.to_string())),
                        };
                        self.set_key(key, line_of(span), false);
                        Ok(())
                    }
                    Slot::Value(line_id) => {
                        self.count(nodes, span)?;
                        if self.stack.len() + height > self.limits.max_depth {
                            return Err(error_at(span, self.too_deep()));
                        }
                        let anchored = &self.anchors[&id];
                        let value = anchored.value.clone();
                        self.lines.graft_children(line_id, &anchored.lines);
                        self.place(value, height, line_id, span)
                    }
                }
            }
            Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart(_)
            | Event::DocumentEnd
            | Event::Nothing => Ok(()),
        }
    }

    /// Where the node starting at `span` goes: a key of the open mapping, or a value (its line node
    /// made).
    fn slot(&mut self, span: Span) -> Result<Slot, ChunkError> {
        let line = line_of(span);
        let Some(open) = self.stack.last() else {
            return Ok(Slot::Value(self.lines.add_root(line)));
        };
        let parent = open.line_id;
        match &open.kind {
            Kind::Sequence(items) => {
                let index = items.len().to_string();
                Ok(Slot::Value(self.lines.add_child(parent, index, line, line)))
            }
            Kind::Mapping(_, None) => Ok(Slot::Key),
            Kind::Mapping(_, Some(key)) => {
                let (name, key_line) = (key.text.clone(), key.line);
                Ok(Slot::Value(
                    self.lines.add_child(parent, name, key_line, line),
                ))
            }
        }
    }

    /// Opens a mapping or sequence starting at `span`.
    fn open(&mut self, kind: Kind, anchor: usize, span: Span) -> Result<(), ChunkError> {
        let Slot::Value(line_id) = self.slot(span)? else {
            return Err(error_at(span, COMPLEX_KEY.to_string()));
        };
        self.count(1, span)?;
        if self.stack.len() + 1 > self.limits.max_depth {
            return Err(error_at(span, self.too_deep()));
        }
        self.stack.push(Open {
            kind,
            line_id,
            anchor,
            nodes_before: self.nodes - 1,
            height: 1,
        });
        Ok(())
    }

    fn set_key(&mut self, text: String, line: u32, merge: bool) {
        if let Some(Open {
            kind: Kind::Mapping(_, key),
            ..
        }) = self.stack.last_mut()
        {
            *key = Some(Key { text, line, merge });
        }
    }

    /// Counts `n` more nodes against the limit.
    fn count(&mut self, n: usize, span: Span) -> Result<(), ChunkError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.limits.max_nodes {
            return Err(error_at(
                span,
                format!(
                    "the document has more than {} nodes (aliases expanded)",
                    self.limits.max_nodes
                ),
            ));
        }
        Ok(())
    }

    fn too_deep(&self) -> String {
        format!(
            "nesting is deeper than the limit of {} levels (aliases expanded)",
            self.limits.max_depth
        )
    }

    /// Puts a finished node (`height` levels deep, at line node `line_id`) where it goes.
    fn place(
        &mut self,
        value: Value,
        height: usize,
        line_id: u32,
        span: Span,
    ) -> Result<(), ChunkError> {
        let Some(open) = self.stack.last_mut() else {
            let line = self.lines.root_line().unwrap_or_else(|| line_of(span));
            self.root = Some((value, line));
            return Ok(());
        };
        open.height = open.height.max(height + 1);
        let parent = open.line_id;
        let source = match &mut open.kind {
            Kind::Sequence(items) => {
                items.push(value);
                return Ok(());
            }
            Kind::Mapping(entries, key) => {
                let Some(key) = key.take() else {
                    return Ok(());
                };
                if !key.merge {
                    // A key written twice keeps its last value, as go-yaml v2 does (kubectl drops the
                    // first silently); the line map keeps the last one's lines (LineMap::finish).
                    entries.insert(key.text, value);
                    return Ok(());
                }
                value
            }
        };
        self.merge(source, parent, line_id, span)
    }

    /// Applies a `<<` merge key (go-yaml v2, `decoder.merge`): the merged mapping's keys are set on
    /// the open mapping where the `<<` stands (a key it already has is overwritten, one written after
    /// it overwrites); of a list of mappings, the earlier wins.
    fn merge(
        &mut self,
        source: Value,
        parent: u32,
        merge_id: u32,
        span: Span,
    ) -> Result<(), ChunkError> {
        let merge_lines = self.lines.rebase_from(merge_id);
        let sources: Vec<(Map<String, Value>, LineMap)> = match source {
            Value::Object(map) => vec![(map, merge_lines)],
            Value::Array(items) => {
                let mut sources = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate().rev() {
                    let Value::Object(map) = item else {
                        return Err(error_at(span, MERGE_NOT_MAP.to_string()));
                    };
                    sources.push((map, merge_lines.rebase(&[i.to_string()])));
                }
                sources
            }
            _ => return Err(error_at(span, MERGE_NOT_MAP.to_string())),
        };
        let Some(Open {
            kind: Kind::Mapping(entries, _),
            ..
        }) = self.stack.last_mut()
        else {
            return Ok(());
        };
        for (map, lines) in sources {
            for (k, v) in map {
                self.lines.graft(parent, &k, &lines);
                entries.insert(k, v);
            }
        }
        Ok(())
    }
}

fn line_of(span: Span) -> u32 {
    to_u32(span.start.line())
}

const NULL_KEY: &str = "a null mapping key (`~`, `null` or nothing before the colon): kubectl refuses it (sigs.k8s.io/yaml: Unsupported map key of type <nil>); quote it if it is a string";
const NOT_JSON: &str =
    "JSON cannot hold NaN or infinity (`.nan`, `.inf`); quote it if it is a string";
const COMPLEX_KEY: &str =
    "a mapping key must be a string or another scalar, not a mapping or a list";
const UNKNOWN_ALIAS: &str = "an alias to an unknown anchor";
const MERGE_NOT_MAP: &str = "a `<<` merge key needs a mapping or a list of mappings as its value (go-yaml: map merge requires map or sequence of maps as the value)";

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<ChunkDoc, ChunkError> {
        let mut docs = parse_chunk(text, &Limits::default());
        assert_eq!(docs.len(), 1, "{text:?}");
        docs.remove(0)
    }

    #[test]
    fn scalars_become_json_as_kubectl_reads_them() {
        // go-yaml v2 through sigs.k8s.io/yaml (docs/reference/yaml-kubectl.md, "Scalars").
        let doc = one(
            "a: 1\nb: 0x1F\nc: 1.5\nd: true\ne: ~\nf: yes\ng: '1'\nh: !!str 2\ni: 0o17\nj:\nk: 0777\nl: \"on\"\nm: 1_000\nq: 1e999\no: !!int \"3\"\np: 1e3\n",
        )
        .expect("parses");
        let want = serde_json::json!({
            "a": 1, "b": 31, "c": 1.5, "d": true, "e": null, "f": true, "g": "1", "h": "2", "i": 15,
            "j": null, "k": 511, "l": "on", "m": 1000, "q": "1e999", "o": 3, "p": 1000
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
        ] {
            let err = one(text).expect_err(text);
            assert_eq!(err.line, line, "{text:?}");
            assert!(err.message.contains("NaN or infinity"), "{}", err.message);
        }
    }

    #[test]
    fn keys_are_written_as_strings_and_a_key_written_twice_keeps_its_last_value() {
        let doc = one("1: a\ntrue: b\non: c\n0x1F: d\n1.5: e\n").expect("parses");
        assert_eq!(
            doc.value,
            serde_json::json!({"1": "a", "true": "c", "31": "d", "1.5": "e"})
        );
        let doc = one("a: 1\nb:\n  x: 1\na: 3\nb:\n  z: 2\n").expect("parses");
        assert_eq!(doc.value, serde_json::json!({"a": 3, "b": {"z": 2}}));
        // The lines are the last key's.
        assert_eq!(doc.lines.line_of(&crate::FieldPath::parse("a")), Some(4));
        assert_eq!(doc.lines.line_of(&crate::FieldPath::parse("b.z")), Some(6));
        assert_eq!(doc.lines.line_of(&crate::FieldPath::parse("b.x")), Some(5));
        // YAML 1.1: `y` and `n` are booleans, so a key `y` is the key "true".
        let doc = one("point: {x: 1, y: 2}\n").expect("parses");
        assert_eq!(doc.value["point"], serde_json::json!({"x": 1, "true": 2}));
        let err = one("? [a]\n: 1\n").expect_err("complex key");
        assert!(err.message.contains("must be a string"));
        let err = one("a: 1\n~: 2\n").expect_err("null key");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("null mapping key"), "{}", err.message);
    }

    #[test]
    fn merge_keys_set_their_keys_where_they_stand() {
        let doc = one("base: &b\n  x: 1\n  z: 2\nthing:\n  <<: *b\n  z: 3\n").expect("parses");
        assert_eq!(doc.value["thing"], serde_json::json!({"x": 1, "z": 3}));
        let lines = doc.lines;
        // A merged key keeps the line it is written at (in the anchor).
        assert_eq!(lines.line_of(&crate::FieldPath::parse("thing.x")), Some(2));
        assert_eq!(lines.line_of(&crate::FieldPath::parse("thing.z")), Some(6));
        // go-yaml v2: a key before the `<<` is overwritten by it; of a list, the earlier source wins.
        let doc =
            one("x: {a: 1, <<: {a: 2, b: 3}}\nz:\n  <<: [{a: 1}, {a: 2, b: 3}]\n").expect("parses");
        assert_eq!(doc.value["x"], serde_json::json!({"a": 2, "b": 3}));
        assert_eq!(doc.value["z"], serde_json::json!({"a": 1, "b": 3}));
        let err = one("<<: 5\na: 1\n").expect_err("merge of a scalar");
        assert!(err.message.contains("merge"), "{}", err.message);
        // A quoted `<<` is a key like any other.
        let doc = one("\"<<\": 5\n").expect("parses");
        assert_eq!(doc.value, serde_json::json!({"<<": 5}));
    }

    #[test]
    fn tab_indented_continuations_of_quoted_scalars_are_read_with_their_lines() {
        // A Windows DaemonSet's script as kubectl applies it: continuation lines indented with a tab,
        // or less than the block around the scalar.
        let text = "spec:\n  args:\n  - \"$x = 1;\n\t$y = 2;\n\t\t$z = 3\"\n  - 'a\nb'\n  next: [1,\n\t2]\n";
        let text = text
            .replace("  next", "  other: 1\n  next")
            .replace("  - 'a\nb'\n  other: 1\n", "");
        let doc = one(&text).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(doc.value["spec"]["args"][0], "$x = 1; $y = 2; $z = 3");
        assert_eq!(
            doc.lines.line_of(&crate::FieldPath::parse("spec.next")),
            Some(to_u32(
                text.lines()
                    .position(|l| l.starts_with("  next"))
                    .expect("next")
                    + 1
            ))
        );
        let doc = one("a:\n  b: 'x\ny'\n  c: 1\n").expect("less indented");
        assert_eq!(doc.value["a"], serde_json::json!({"b": "x y", "c": 1}));
        assert_eq!(doc.lines.line_of(&crate::FieldPath::parse("a.c")), Some(4));
        // A tab that starts a block line is still an error, for go-yaml too.
        assert!(one("a:\n\tb: 1\n").is_err());
    }

    #[test]
    fn bad_tags_and_unknown_aliases_are_errors() {
        assert!(one("a: !!int abc\n").is_err());
        assert!(one("a: *nope\n").is_err());
        // Tags go-yaml does not resolve leave the text.
        assert_eq!(one("a: !foo 1\n").expect("parses").value["a"], "1");
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
