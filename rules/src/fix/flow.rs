//! Minimal edits inside flow-style collections (`{a: b}`, `[x, y]`, JSON): only the entries and items a
//! fix changes are rewritten, in flow style and in the collection's own style (key quoting, `{ a }`
//! padding, one entry per line, trailing commas); the rest keeps its bytes, order and quoting.
//!
//! saphyr gives each node its start; where a node ends is read from the text (a scalar's last
//! character, a collection's matching bracket), because saphyr's end marks of flow collections that
//! span lines point past them. Edits are byte replacements in the document's text (`\n` line ends).

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::Value;

use super::emit;
use crate::path::{FieldPath, Segment};

/// A parsed document region: its text, saphyr tree and writing style.
pub(super) struct Tree {
    text: String,
    /// Byte offset of the start of each line of `text`.
    line_starts: Vec<usize>,
    root: MarkedYamlOwned,
    style: Style,
}

/// One byte replacement in the region's text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Replace {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// How a string is quoted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    /// Plain where that reads back as the same string, else double-quoted.
    Plain,
    /// `"…"` (JSON).
    Double,
    /// `'…'`.
    Single,
}

/// How a document writes its flow collections, read from the document itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Style {
    /// How new keys are quoted where their collection has no key to follow.
    pub keys: Quote,
    /// How new string values are quoted: `Double` when the document quotes every string (JSON).
    pub values: Quote,
    /// `{ a: b }` rather than `{a: b}`.
    pub padded: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            keys: Quote::Plain,
            values: Quote::Plain,
            padded: false,
        }
    }
}

/// `s` written with `quote` in flow context (plain only where it reads back as `s`).
fn quoted(s: &str, quote: Quote) -> String {
    let json = || Value::String(s.to_string()).to_string();
    match quote {
        Quote::Plain if emit::plain_ok(s) && !s.contains([',', '[', ']', '{', '}']) => s.into(),
        Quote::Single if !s.chars().any(char::is_control) => format!("'{}'", s.replace('\'', "''")),
        _ => json(),
    }
}

/// `value` in flow style on one line, `{k: v, k2: v2}`, keys quoted as `keys`, the rest as `style`.
///
/// ```text
/// {effect: NoSchedule, key: os}     Style::default()
/// { "effect": "NoSchedule" }        keys and values Double, padded
/// ```
pub(super) fn flow_value(value: &Value, style: &Style, keys: Quote) -> String {
    let (open, close) = if style.padded {
        ("{ ", " }")
    } else {
        ("{", "}")
    };
    match value {
        Value::String(s) => quoted(s, style.values),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k, keys), flow_value(v, style, keys)))
                .collect();
            format!("{open}{}{close}", inner.join(", "))
        }
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(|v| flow_value(v, style, keys)).collect();
            if style.padded {
                format!("[ {} ]", inner.join(", "))
            } else {
                format!("[{}]", inner.join(", "))
            }
        }
        other => other.to_string(),
    }
}

/// The name a mapping key node is read as (what [`crate::input`] turns it into).
fn key_name(key: &MarkedYamlOwned) -> Option<String> {
    match &key.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.clone()),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Some(i.to_string()),
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Some(b.to_string()),
        YamlDataOwned::Value(ScalarOwned::Null) => Some("null".into()),
        _ => None,
    }
}

/// Votes for a document's style, counted over its flow collections.
#[derive(Default)]
struct Votes {
    plain_keys: usize,
    double_keys: usize,
    single_keys: usize,
    plain_strings: usize,
    double_strings: usize,
    padded: usize,
    tight: usize,
}

impl Tree {
    /// Parses `text` (one document, `\n` line ends); `None` when saphyr does not read one document.
    pub(super) fn parse(text: &str) -> Option<Tree> {
        let mut docs = MarkedYamlOwned::load_from_str(text).ok()?;
        if docs.len() != 1 {
            return None;
        }
        let root = docs.pop()?;
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut tree = Tree {
            text: text.to_string(),
            line_starts,
            root,
            style: Style::default(),
        };
        tree.style = tree.read_style();
        Some(tree)
    }

    /// The style the document's flow collections are written in (majorities; ties go to plain and
    /// unpadded).
    fn read_style(&self) -> Style {
        let mut votes = Votes::default();
        self.vote(&self.root, false, &mut votes);
        let keys = if votes.double_keys > votes.plain_keys.max(votes.single_keys) {
            Quote::Double
        } else if votes.single_keys > votes.plain_keys.max(votes.double_keys) {
            Quote::Single
        } else {
            Quote::Plain
        };
        // A document that writes no string plain (JSON, or YAML in JSON's manner) gets quoted values.
        let values =
            if keys == Quote::Double && votes.plain_strings == 0 && votes.double_strings > 0 {
                Quote::Double
            } else {
                Quote::Plain
            };
        Style {
            keys,
            values,
            padded: votes.padded > votes.tight,
        }
    }

    fn vote(&self, node: &MarkedYamlOwned, in_flow: bool, votes: &mut Votes) {
        let flow = self.is_flow(node);
        if flow && let Some(open) = self.start(node) {
            match self.text.as_bytes().get(open + 1) {
                Some(b' ') => votes.padded += 1,
                Some(b'\n' | b'\r' | b'}' | b']') | None => {}
                Some(_) => votes.tight += 1,
            }
        }
        let in_flow = in_flow || flow;
        match &node.data {
            YamlDataOwned::Mapping(m) => {
                for (k, v) in m.iter() {
                    if in_flow {
                        match self.quote_of(k) {
                            Quote::Plain => votes.plain_keys += 1,
                            Quote::Double => votes.double_keys += 1,
                            Quote::Single => votes.single_keys += 1,
                        }
                    }
                    self.vote(v, in_flow, votes);
                }
            }
            YamlDataOwned::Sequence(items) => {
                for item in items {
                    self.vote(item, in_flow, votes);
                }
            }
            YamlDataOwned::Value(ScalarOwned::String(_)) if in_flow => match self.quote_of(node) {
                Quote::Plain => votes.plain_strings += 1,
                _ => votes.double_strings += 1,
            },
            _ => {}
        }
    }

    /// How the scalar `node` is quoted in the text.
    fn quote_of(&self, node: &MarkedYamlOwned) -> Quote {
        match self.start(node).and_then(|s| self.text.as_bytes().get(s)) {
            Some(b'"') => Quote::Double,
            Some(b'\'') => Quote::Single,
            _ => Quote::Plain,
        }
    }

    /// Byte offset of a saphyr marker (1-based line, 0-based column in characters).
    fn offset(&self, mark: saphyr::Marker) -> Option<usize> {
        let start = *self.line_starts.get(mark.line().checked_sub(1)?)?;
        let line = &self.text[start..];
        let col = line
            .char_indices()
            .nth(mark.col())
            .map_or(line.len(), |(i, _)| i);
        Some(start + col)
    }

    fn start(&self, node: &MarkedYamlOwned) -> Option<usize> {
        self.offset(node.span.start)
    }

    /// Byte offset just after `node`: after the closing bracket of a flow collection, after the
    /// closing quote of a quoted scalar, after the last character of a plain one.
    fn end(&self, node: &MarkedYamlOwned) -> Option<usize> {
        let start = self.start(node)?;
        let bytes = self.text.as_bytes();
        match bytes.get(start)? {
            b'{' | b'[' if self.is_flow(node) => self.close_of(start).map(|c| c + 1),
            b'"' | b'\'' => self.quoted_end(start),
            _ => {
                let YamlDataOwned::Value(scalar) = &node.data else {
                    return None;
                };
                let end = self.plain_end(start);
                // A plain scalar continued on the next line is not edited.
                match scalar {
                    ScalarOwned::String(s) => (self.text.get(start..end)? == s).then_some(end),
                    _ => Some(end),
                }
            }
        }
    }

    /// Offset just after the quoted scalar that opens at `start` (`"…"` with `\` escapes, `'…'` with
    /// `''`).
    fn quoted_end(&self, start: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let quote = *bytes.get(start)?;
        let mut i = start + 1;
        while let Some(&b) = bytes.get(i) {
            if quote == b'"' && b == b'\\' {
                i += 2;
                continue;
            }
            if b == quote {
                if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                    i += 2;
                    continue;
                }
                return Some(i + 1);
            }
            i += 1;
        }
        None
    }

    /// Offset just after the plain scalar that starts at `start`, in flow context: it ends before a
    /// flow indicator, a `: `, a ` #` comment or the line's end, trailing blanks not included.
    fn plain_end(&self, start: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut i = start;
        while let Some(&b) = bytes.get(i) {
            let next = bytes.get(i + 1).copied();
            let ends = match b {
                b'\n' | b'\r' | b',' | b'[' | b']' | b'{' | b'}' => true,
                b':' => next.is_none_or(|n| b" \t\r\n,[]{}".contains(&n)),
                b'#' => i > start && matches!(bytes[i - 1], b' ' | b'\t'),
                _ => false,
            };
            if ends {
                break;
            }
            i += 1;
        }
        while i > start && matches!(bytes[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        i
    }

    /// Offset of the bracket that closes the flow collection opening at `open`, skipping quoted
    /// scalars and comments.
    fn close_of(&self, open: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut depth = 0usize;
        let mut i = open;
        // The last character that was not a blank: a quote opens a scalar only after an indicator.
        let mut before = b'{';
        while let Some(&b) = bytes.get(i) {
            match b {
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                b'"' | b'\'' if b"{[,:?".contains(&before) => {
                    i = self.quoted_end(i)?;
                    before = b;
                    continue;
                }
                b'#' if i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                    i = self.text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                    continue;
                }
                _ => {}
            }
            if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                before = b;
            }
            i += 1;
        }
        None
    }

    /// Whether `node` is a flow collection (written with brackets).
    fn is_flow(&self, node: &MarkedYamlOwned) -> bool {
        matches!(
            node.data,
            YamlDataOwned::Mapping(_) | YamlDataOwned::Sequence(_)
        ) && self
            .start(node)
            .and_then(|s| self.text.get(s..))
            .is_some_and(|t| t.starts_with(['{', '[']))
    }

    fn node(&self, path: &FieldPath) -> Option<&MarkedYamlOwned> {
        let mut node = &self.root;
        for seg in path.segments() {
            node = match (&node.data, seg) {
                (YamlDataOwned::Mapping(m), Segment::Field(k) | Segment::Key(k)) => m
                    .iter()
                    .find(|(key, _)| key_name(key).as_deref() == Some(k.as_ref()))
                    .map(|(_, v)| v)?,
                (YamlDataOwned::Sequence(items), Segment::Index(i)) => items.get(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Replacements turning the flow collection at `path` (written `old`) into `new`; `None` when the
    /// node at `path` is not a flow collection, `Some(None)` when it is but cannot be edited.
    pub(super) fn edit(
        &self,
        path: &FieldPath,
        old: &Value,
        new: &Value,
    ) -> Option<Option<Vec<Replace>>> {
        let node = self.node(path)?;
        if !self.is_flow(node) {
            return None;
        }
        let mut out = Vec::new();
        if self
            .diff(node, old, new, self.style.keys, &mut out)
            .is_some()
        {
            return Some(Some(out));
        }
        // A collection on one line may be written anew; a longer one is left to the caller.
        let (start, end) = (self.start(node)?, self.end(node)?);
        Some((self.line_of(start) == self.line_of(end)).then(|| {
            vec![Replace {
                start,
                end,
                text: flow_value(new, &self.style, self.key_quote(node, self.style.keys)),
            }]
        }))
    }

    /// 0-based line of byte offset `o`.
    fn line_of(&self, o: usize) -> usize {
        self.line_starts.partition_point(|s| *s <= o) - 1
    }

    /// Offset of the end of the line holding `o` (its `\n`, or the text's end).
    fn line_end(&self, o: usize) -> usize {
        self.text[o..].find('\n').map_or(self.text.len(), |n| o + n)
    }

    /// The blanks that start the line holding `o`, up to `o` when only blanks come before it.
    fn indent_before(&self, o: usize) -> Option<&str> {
        let start = self.line_starts[self.line_of(o)];
        let prefix = self.text.get(start..o)?;
        prefix
            .chars()
            .all(|c| c == ' ' || c == '\t')
            .then_some(prefix)
    }

    /// Replacements that write `new` (entries or items, each already written) after the last child
    /// of the flow collection opening at `open`: that child starts at `last_start` and ends at
    /// `last_end`. One entry per line when the collection is written that way (at the same column,
    /// trailing commas kept and comments left on their lines), else `, new` on the same line.
    fn append(
        &self,
        open: usize,
        last_start: usize,
        last_end: usize,
        new: &[String],
        out: &mut Vec<Replace>,
    ) -> Option<()> {
        let close = self.close_of(open)?;
        let insert = |at: usize, text: String, out: &mut Vec<Replace>| {
            out.push(Replace {
                start: at,
                end: at,
                text,
            })
        };
        let one_per_line = self.line_of(last_start) != self.line_of(open);
        let indent = self.indent_before(last_start);
        let (true, Some(indent)) = (one_per_line, indent) else {
            insert(last_end, format!(", {}", new.join(", ")), out);
            return Some(());
        };
        // What follows the last child up to the closing bracket: a comma, blanks, comments.
        let between = self.text.get(last_end..close)?;
        let comma = between
            .split('\n')
            .next()
            .and_then(|first| first.trim_start().starts_with(',').then_some(()))
            .is_some();
        let close_below = self.line_of(close) > self.line_of(last_end);
        if !close_below {
            // `  c: 3 }`: new entries before the bracket, on lines of their own.
            let text: String = new.iter().map(|n| format!(",\n{indent}{n}")).collect();
            insert(last_end, text, out);
            return Some(());
        }
        let eol = self.line_end(last_end);
        if comma {
            // `  c: 3,  # why` → new lines after it, each with its trailing comma.
            let text: String = new.iter().map(|n| format!("\n{indent}{n},")).collect();
            insert(eol, text, out);
        } else {
            insert(last_end, ",".into(), out);
            let text = new
                .iter()
                .map(|n| format!("\n{indent}{n}"))
                .collect::<Vec<_>>()
                .join(",");
            insert(eol, text, out);
        }
        Some(())
    }

    /// A replacement of the children of the flow collection opening at `open`, from `first` (the
    /// first child's start) to `last` (the last child's end), by `written`, separated as the
    /// collection separates them (one per line at the first child's column, or `, `).
    fn rewrite_children(
        &self,
        open: usize,
        first: usize,
        last: usize,
        written: &[String],
        out: &mut Vec<Replace>,
    ) -> Option<()> {
        let sep = match self.indent_before(first) {
            Some(indent) if self.line_of(first) != self.line_of(open) => format!(",\n{indent}"),
            _ => ", ".to_string(),
        };
        out.push(Replace {
            start: first,
            end: last,
            text: written.join(&sep),
        });
        Some(())
    }

    /// How the keys of the mapping `node` are quoted (its first key's way), else the document's way.
    fn key_quote(&self, node: &MarkedYamlOwned, fallback: Quote) -> Quote {
        match &node.data {
            YamlDataOwned::Mapping(m) => m.keys().next().map_or(fallback, |k| self.quote_of(k)),
            _ => fallback,
        }
    }

    fn diff(
        &self,
        node: &MarkedYamlOwned,
        old: &Value,
        new: &Value,
        keys: Quote,
        out: &mut Vec<Replace>,
    ) -> Option<()> {
        if old == new {
            return Some(());
        }
        let keys = self.key_quote(node, keys);
        let replace_whole = |out: &mut Vec<Replace>| -> Option<()> {
            out.push(Replace {
                start: self.start(node)?,
                end: self.end(node)?,
                text: flow_value(new, &self.style, keys),
            });
            Some(())
        };
        if !self.is_flow(node) {
            // A scalar inside a flow collection (block nodes cannot be nested in flow ones), written
            // anew in its own quotes.
            let YamlDataOwned::Value(_) = node.data else {
                return None;
            };
            let text = match (new, self.quote_of(node)) {
                (Value::String(s), q @ (Quote::Double | Quote::Single)) => quoted(s, q),
                _ => flow_value(new, &self.style, keys),
            };
            out.push(Replace {
                start: self.start(node)?,
                end: self.end(node)?,
                text,
            });
            return Some(());
        }
        let open = self.start(node)?;
        match (&node.data, old, new) {
            (YamlDataOwned::Mapping(entries), Value::Object(a), Value::Object(b))
                if !a.is_empty() =>
            {
                let entries: Vec<(&MarkedYamlOwned, &MarkedYamlOwned, String)> = entries
                    .iter()
                    .map(|(k, v)| Some((k, v, key_name(k)?)))
                    .collect::<Option<_>>()?;
                // Merge keys and anchors are not edited here.
                if entries.iter().any(|(_, _, k)| k == "<<") || entries.len() != a.len() {
                    return None;
                }
                let kept = entries.iter().filter(|(_, _, k)| b.contains_key(k)).count();
                if kept == 0 {
                    // Every entry replaced: the new ones are written where the old ones were, so the
                    // brackets, the layout and what follows the last entry stay.
                    let ((first, _, _), (_, last, _)) = (entries.first()?, entries.last()?);
                    let written: Vec<String> = b
                        .iter()
                        .map(|(k, v)| {
                            format!("{}: {}", quoted(k, keys), flow_value(v, &self.style, keys))
                        })
                        .collect();
                    return self.rewrite_children(
                        open,
                        self.start(first)?,
                        self.end(last)?,
                        &written,
                        out,
                    );
                }
                for (i, (k, v, name)) in entries.iter().enumerate() {
                    match b.get(name) {
                        Some(nv) => self.diff(v, a.get(name)?, nv, keys, out)?,
                        None => {
                            // `k: v, ` up to the next key, or `, k: v` for the last entry.
                            let (start, end) = match entries.get(i + 1) {
                                Some((next, _, _)) => (self.start(k)?, self.start(next)?),
                                None => {
                                    let (_, pv, _) = entries.get(i.checked_sub(1)?)?;
                                    (self.end(pv)?, self.end(v)?)
                                }
                            };
                            out.push(Replace {
                                start,
                                end,
                                text: String::new(),
                            });
                        }
                    }
                }
                let added: Vec<String> = b
                    .iter()
                    .filter(|(k, _)| !a.contains_key(*k))
                    .map(|(k, v)| {
                        format!("{}: {}", quoted(k, keys), flow_value(v, &self.style, keys))
                    })
                    .collect();
                if !added.is_empty() {
                    // After the last entry that stays.
                    let (last_k, last_v, _) =
                        entries.iter().rev().find(|(_, _, k)| b.contains_key(k))?;
                    self.append(open, self.start(last_k)?, self.end(last_v)?, &added, out)?;
                }
                Some(())
            }
            (YamlDataOwned::Sequence(items), Value::Array(a), Value::Array(b))
                if !a.is_empty() && items.len() == a.len() =>
            {
                if a.len() == b.len() {
                    for ((item, x), y) in items.iter().zip(a).zip(b) {
                        self.diff(item, x, y, keys, out)?;
                    }
                    return Some(());
                }
                let (first, last) = (items.first()?, items.last()?);
                if b.len() > a.len() && b.get(..a.len()) == Some(a) {
                    let added: Vec<String> = b[a.len()..]
                        .iter()
                        .map(|v| flow_value(v, &self.style, keys))
                        .collect();
                    return self.append(open, self.start(last)?, self.end(last)?, &added, out);
                }
                if b.is_empty() {
                    return replace_whole(out);
                }
                // Items removed or replaced: the list written anew between its first and last item,
                // each unchanged item in its own bytes.
                let mut used = vec![false; a.len()];
                let mut written = Vec::new();
                for y in b {
                    let same = (0..a.len()).find(|&k| !used[k] && a[k] == *y);
                    written.push(match same {
                        Some(k) => {
                            used[k] = true;
                            let item = items.get(k)?;
                            self.text
                                .get(self.start(item)?..self.end(item)?)?
                                .to_string()
                        }
                        None => flow_value(y, &self.style, keys),
                    });
                }
                self.rewrite_children(open, self.start(first)?, self.end(last)?, &written, out)
            }
            _ => replace_whole(out),
        }
    }
}

impl Tree {
    /// `replaces` as a line edit of the region: the first line touched, the line after the last one
    /// touched, and those lines rewritten.
    pub(super) fn to_lines(&self, replaces: Vec<Replace>) -> Option<(usize, usize, Vec<String>)> {
        let first = replaces.iter().map(|r| r.start).min()?;
        let last = replaces.iter().map(|r| r.end).max()?;
        let (l0, l1) = (self.line_of(first), self.line_of(last));
        let from = self.line_starts[l0];
        let to = self
            .line_starts
            .get(l1 + 1)
            .map_or(self.text.len(), |s| s - 1);
        let shifted = replaces
            .into_iter()
            .map(|r| Replace {
                start: r.start - from,
                end: r.end - from,
                text: r.text,
            })
            .collect();
        let out = apply(self.text.get(from..to)?, shifted)?;
        Some((l0, l1 + 1, out.split('\n').map(str::to_string).collect()))
    }
}

/// `text` with `replaces` applied; `None` when two overlap.
pub(super) fn apply(text: &str, mut replaces: Vec<Replace>) -> Option<String> {
    replaces.sort_by_key(|r| (r.start, r.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for r in replaces {
        if r.start < at || r.end < r.start {
            return None;
        }
        out.push_str(text.get(at..r.start)?);
        out.push_str(&r.text);
        at = r.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};
    use serde_json::json;

    /// `text` with the node at `path` changed by `change`: the result must read back as the change.
    fn edit(text: &str, path: &str, change: impl Fn(&mut Value)) -> String {
        let parsed = parse("t.yaml", text, &Limits::default());
        let old = parsed.documents[0].value.clone();
        let mut new = old.clone();
        change(&mut new);
        let path = FieldPath::parse(path);
        let tree = Tree::parse(text).expect("tree");
        let at = |v: &Value| crate::model::get(v, &path).cloned().expect("node");
        let replaces = tree
            .edit(&path, &at(&old), &at(&new))
            .expect("flow node")
            .expect("an edit");
        let out = apply(text, replaces).expect("no overlap");
        let back = parse("t.yaml", &out, &Limits::default());
        assert!(back.errors.is_empty(), "{out}: {:?}", back.errors);
        assert_eq!(back.documents[0].value, new, "{out}");
        out
    }

    #[test]
    fn only_what_changes_is_rewritten_in_flow_style() {
        type Change = fn(&mut Value);
        let text = "kind: Pod\nspec: {containers: [{name: c, image: \"i\"}], nodeSelector: {beta.kubernetes.io/os: windows}}  # kept\n";
        let rows: [(&str, &str, Change, &str); 4] = [
            (
                "add a key",
                "spec",
                |v| v["spec"]["nodeSelector"]["kubernetes.io/os"] = json!("windows"),
                "spec: {containers: [{name: c, image: \"i\"}], nodeSelector: {beta.kubernetes.io/os: windows, kubernetes.io/os: windows}}  # kept\n",
            ),
            (
                "remove the last key, add one",
                "spec",
                |v| {
                    v["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
                },
                "spec: {containers: [{name: c, image: \"i\"}], nodeSelector: {kubernetes.io/os: windows}}  # kept\n",
            ),
            (
                "append an item",
                "spec",
                |v| {
                    v["spec"]["tolerations"] =
                        json!([{"key": "os", "value": "windows", "effect": "NoSchedule"}])
                },
                "nodeSelector: {beta.kubernetes.io/os: windows}, tolerations: [{effect: NoSchedule, key: os, value: windows}]}  # kept\n",
            ),
            (
                "remove the first key",
                "spec",
                |v| {
                    if let Some(m) = v["spec"].as_object_mut() {
                        m.remove("containers");
                    }
                },
                "spec: {nodeSelector: {beta.kubernetes.io/os: windows}}  # kept\n",
            ),
        ];
        for (name, path, change, want) in rows {
            let out = edit(text, path, change);
            assert!(out.starts_with("kind: Pod\n"), "{name}: {out}");
            assert!(out.ends_with(want), "{name}:\n{out}");
        }
    }

    #[test]
    fn json_stays_json_in_its_own_order_and_layout() {
        let text = "{\n  \"kind\": \"Pod\",\n  \"apiVersion\": \"v1\",\n  \"spec\": {\"containers\": []}\n}\n";
        let out = edit(text, "", |v| v["spec"]["nodeName"] = json!("n1"));
        assert_eq!(
            out,
            "{\n  \"kind\": \"Pod\",\n  \"apiVersion\": \"v1\",\n  \"spec\": {\"containers\": [], \"nodeName\": \"n1\"}\n}\n"
        );
        let out = edit(text, "", |v| v["metadata"] = json!({"name": "p"}));
        assert!(
            out.ends_with(
                "\"spec\": {\"containers\": []},\n  \"metadata\": {\"name\": \"p\"}\n}\n"
            ),
            "{out}"
        );
    }

    /// The shapes of the Kubernetes docs' examples: a root `{ … }` mapping, unquoted keys, one entry per
    /// line, trailing commas, `{ a: b }` padding.
    const DOCS_POD: &str = "{\n  apiVersion: v1,\n  kind: Pod,\n  metadata: { name: p },\n  spec: {\n    containers: [\n      { name: c, image: \"mcr.microsoft.com/windows/nanoserver:ltsc2022\" },\n    ],\n    nodeSelector: {\n      kubernetes.io/os: windows,  # the OS\n    },\n  },\n}\n";

    #[test]
    fn new_entries_follow_the_collection_layout() {
        type Change = fn(&mut Value);
        let rows: [(&str, Change, &str); 4] = [
            (
                "a key on a line of its own, trailing comma kept, comment left in place",
                |v| {
                    v["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"] =
                        json!("10.0.20348")
                },
                "    nodeSelector: {\n      kubernetes.io/os: windows,  # the OS\n      node.kubernetes.io/windows-build: \"10.0.20348\",\n    },\n",
            ),
            (
                "a new entry after a multi-line one, padded like the document",
                |v| v["spec"]["tolerations"] = json!([{"key": "os", "effect": "NoSchedule"}]),
                "    },\n    tolerations: [ { effect: NoSchedule, key: os } ],\n  },\n}\n",
            ),
            (
                "a scalar replaced, nothing else",
                |v| v["apiVersion"] = json!("apps/v1"),
                "{\n  apiVersion: apps/v1,\n  kind: Pod,\n",
            ),
            (
                "an item appended to a one-line padded mapping inside a list",
                |v| v["spec"]["containers"][0]["args"] = json!(["/c", "x,y"]),
                "      { name: c, image: \"mcr.microsoft.com/windows/nanoserver:ltsc2022\", args: [ /c, \"x,y\" ] },\n",
            ),
        ];
        for (name, change, want) in rows {
            let out = edit(DOCS_POD, "", change);
            assert!(out.contains(want), "{name}:\n{out}");
            assert!(
                !out.contains("\"kind\""),
                "{name}: no JSON-quoted keys:\n{out}"
            );
            let kept = DOCS_POD
                .lines()
                .filter(|l| out.lines().any(|o| o == *l))
                .count();
            assert!(
                kept + 1 >= DOCS_POD.lines().count(),
                "{name}: lines lost\n{out}"
            );
        }
    }

    #[test]
    fn a_last_entry_without_a_trailing_comma_gets_one() {
        let text = "{\n  kind: Pod,\n  spec: {\n    nodeSelector: { a: b }  # why\n  }\n}\n";
        let out = edit(text, "", |v| v["spec"]["os"] = json!({"name": "windows"}));
        assert_eq!(
            out,
            "{\n  kind: Pod,\n  spec: {\n    nodeSelector: { a: b },  # why\n    os: { name: windows }\n  }\n}\n"
        );
        // The bracket on the last entry's line: new entries go before it.
        let text = "{kind: Pod,\n spec: {a: 1,\n        b: 2}}\n";
        let out = edit(text, "", |v| v["spec"]["c"] = json!(3));
        assert_eq!(
            out,
            "{kind: Pod,\n spec: {a: 1,\n        b: 2,\n        c: 3}}\n"
        );
    }

    #[test]
    fn replaced_children_are_written_where_the_old_ones_were() {
        // Every entry of a one-per-line mapping replaced: the layout and the comment after it stay.
        let text =
            "{\n  nodeSelector: {\n    beta.kubernetes.io/os: windows,  # old label\n  },\n}\n";
        let out = edit(text, "", |v| {
            v["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
        });
        assert_eq!(
            out,
            "{\n  nodeSelector: {\n    kubernetes.io/os: windows,  # old label\n  },\n}\n"
        );
        // An item removed: the others keep their bytes (quotes, padding).
        let text = "{tolerations: [ {key: \"a\"}, { operator: Exists }, 'x' ]}\n";
        let out = edit(text, "", |v| {
            v["tolerations"] = json!([{"key": "a"}, "x"]);
        });
        assert_eq!(out, "{tolerations: [ {key: \"a\"}, 'x' ]}\n");
    }

    #[test]
    fn keys_follow_their_collection_quoting() {
        // Quoted keys in JSON manner (trailing commas make it YAML): new keys and values quoted.
        let text = "{\n  \"kind\": \"Pod\",\n  \"spec\": { \"nodeSelector\": { \"kubernetes.io/os\": \"windows\" } },\n}\n";
        let out = edit(text, "", |v| {
            v["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"] = json!("10.0.20348");
            v["spec"]["tolerations"] = json!([{"key": "os"}]);
        });
        assert_eq!(
            out,
            "{\n  \"kind\": \"Pod\",\n  \"spec\": { \"nodeSelector\": { \"kubernetes.io/os\": \"windows\", \"node.kubernetes.io/windows-build\": \"10.0.20348\" }, \"tolerations\": [ { \"key\": \"os\" } ] },\n}\n"
        );
        // Single-quoted keys stay single-quoted.
        let out = edit("{'kind': Pod, 'spec': {}}\n", "", |v| {
            v["spec"]["os"] = json!({"name": "windows"})
        });
        assert_eq!(out, "{'kind': Pod, 'spec': {'os': {'name': windows}}}\n");
    }

    #[test]
    fn ends_are_read_from_the_text() {
        let text = "{a: \"q\\\"x\" , b: 'it''s' , c: plain value  # note\n, d: [ x ]\n}\n";
        let tree = Tree::parse(text).expect("tree");
        let YamlDataOwned::Mapping(m) = &tree.root.data else {
            panic!("a mapping")
        };
        let ends: Vec<&str> = m
            .values()
            .map(|v| &text[tree.start(v).unwrap()..tree.end(v).unwrap()])
            .collect();
        assert_eq!(ends, ["\"q\\\"x\"", "'it''s'", "plain value", "[ x ]"]);
        assert_eq!(tree.end(&tree.root), Some(text.len() - 1));
    }

    #[test]
    fn flow_scalars_with_indicators_are_quoted() {
        let style = Style::default();
        assert_eq!(
            flow_value(&json!({"a": "x,y", "b": "[z]"}), &style, Quote::Plain),
            "{a: \"x,y\", b: \"[z]\"}"
        );
        assert_eq!(
            flow_value(&json!(["p", 1, true]), &style, Quote::Plain),
            "[p, 1, true]"
        );
    }
}
