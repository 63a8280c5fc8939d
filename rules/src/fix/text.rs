//! Writing repaired documents back into their text.
//!
//! Untouched documents keep every byte. A changed YAML document is edited line by line where it can be
//! (a changed entry's lines are rewritten, new keys go after the last entry of their block mapping at its
//! indentation, new items after the last item of their block list, removed entries and items lose their
//! lines), so comments and layout elsewhere in the document stay. Flow collections (`{a: b}`, JSON) are
//! edited inside their brackets, in flow style ([`super::flow`]). Every line keeps its own line end;
//! new lines take the line end of the line they replace or follow.
//!
//! Several changes to one document are several edits of its lines, applied together; of two
//! insertions at one line, the deeper node's lines come first.
//!
//! When an edit is not possible or its result does not read back as the repaired value, a document
//! that uses anchors, aliases or merge keys (`<<:`) is refused (left as it was: rewriting it would
//! expand them and drop its comments); any other document is written anew as block YAML (a JSON
//! document as pretty JSON).

use serde_json::Value;

use super::{emit, flow};
use crate::input::{Document, Limits, LineMap, parse, prescan};
use crate::path::{FieldPath, Segment};

/// `---` or `...` at the start of a line, followed by a blank or the end of the line.
fn is_marker(line: &str) -> bool {
    let body = line.trim_end_matches(['\n', '\r']);
    ["---", "..."].iter().any(|m| {
        body.strip_prefix(m)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// A line that holds no YAML content.
fn is_blank_or_comment(line: &str) -> bool {
    let t = line
        .trim_start_matches([' ', '\t'])
        .trim_end_matches(['\n', '\r']);
    t.is_empty() || t.starts_with('#')
}

/// One edit of a document's lines: lines `start..end` (0-based, absolute) become `lines`.
#[derive(Debug, Clone, PartialEq)]
struct Edit {
    start: usize,
    end: usize,
    lines: Vec<String>,
    /// Depth of the node the lines belong to: of two insertions at one line, the deeper one's lines
    /// come first (they end the nested block that the shallower one follows).
    depth: usize,
}

/// The lines of one document and where its content ends.
struct Doc<'a> {
    /// Every line of the file, without line ends.
    lines: &'a [&'a str],
    map: &'a LineMap,
    /// 0-based line after the document's last content line.
    end: usize,
    /// The document's region (`start..end`) as saphyr reads it, for flow-style edits.
    tree: Option<flow::Tree>,
    /// 0-based first line of the region.
    start: usize,
}

/// Where a block mapping entry or block list item is written.
struct Span {
    /// 0-based first line.
    start: usize,
    /// 0-based line after its last content line.
    end: usize,
    /// Column of the key (for an entry) or of the dash (for an item).
    col: usize,
    /// Whether the entry is the first key of a list item (`- key: ...`): it shares the dash's line.
    after_dash: bool,
}

/// Column after leading blanks and list-item dashes, and whether a dash was skipped.
fn content_col(line: &str) -> (usize, bool) {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut dash = false;
    loop {
        while bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        if bytes.get(i) == Some(&b'-') && matches!(bytes.get(i + 1), Some(b' ')) {
            dash = true;
            i += 2;
        } else {
            return (i, dash);
        }
    }
}

/// Whether `rest` starts with the mapping key `key` (plain or quoted) followed by `:`.
fn starts_with_key(rest: &str, key: &str) -> bool {
    let quoted = [
        key.to_string(),
        format!("\"{key}\""),
        format!("'{key}'"),
        Value::String(key.to_string()).to_string(),
    ];
    quoted.iter().any(|k| {
        rest.strip_prefix(k.as_str())
            .is_some_and(|after| after.trim_start_matches([' ', '\t']).starts_with(':'))
    })
}

fn line_index(line: u32) -> usize {
    (line as usize).saturating_sub(1)
}

impl Doc<'_> {
    /// Line `i` without its line end.
    fn line(&self, i: usize) -> &str {
        self.lines
            .get(i)
            .copied()
            .unwrap_or("")
            .trim_end_matches('\r')
    }

    /// The edit of the flow collection at `path`: `None` when it is not written in flow style,
    /// `Some(None)` when it is but the edit failed.
    fn flow_edit(&self, path: &FieldPath, old_v: &Value, new_v: &Value) -> Option<Option<Edit>> {
        let tree = self.tree.as_ref()?;
        let replaces = tree.edit(path, old_v, new_v)?;
        Some(
            replaces
                .and_then(|r| tree.to_lines(r))
                .map(|(l0, l1, lines)| Edit {
                    start: self.start + l0,
                    end: self.start + l1,
                    lines,
                    depth: path.segments().len(),
                }),
        )
    }

    /// The line after the last content line of the node at `path` that starts at `start`: the first line
    /// of a later sibling of it or of one of its ancestors, else the document's end; trailing blank and
    /// comment lines belong to what follows.
    fn node_end(&self, old: &Value, path: &FieldPath, start: usize) -> usize {
        let mut end = self.end;
        let segments = path.segments();
        for depth in (0..segments.len()).rev() {
            let parent = FieldPath(segments[..depth].to_vec());
            let Some(pv) = crate::model::get(old, &parent) else {
                continue;
            };
            let children: Vec<Segment> = match pv {
                Value::Object(m) => m.keys().map(|k| Segment::Key(k.clone().into())).collect(),
                Value::Array(a) => (0..a.len()).map(Segment::Index).collect(),
                _ => Vec::new(),
            };
            for child in children {
                let p = FieldPath(vec![child]);
                let p = parent.join(&p);
                if !self.map.contains(&p) {
                    continue;
                }
                if let Some(l) = self.map.line_of(&p).map(line_index)
                    && l > start
                    && l < end
                {
                    end = l;
                }
            }
        }
        while end > start + 1 && is_blank_or_comment(self.line(end - 1)) {
            end -= 1;
        }
        end
    }

    /// The quote (`"` or `'`) the key of the block entry at `span` is written with, if any.
    fn key_quote(&self, span: &Span) -> Option<char> {
        let text = self.line(span.start);
        text.get(span.col..)?
            .chars()
            .next()
            .filter(|c| matches!(c, '"' | '\''))
    }

    /// The span of the block entry or item at `path`; `None` when it is not written in block style.
    fn span(&self, old: &Value, path: &FieldPath) -> Option<Span> {
        let last = path.segments().last()?;
        if !self.map.contains(path) {
            return None;
        }
        let start = line_index(self.map.line_of(path)?);
        let text = self.line(start);
        let (col, after_dash) = match last {
            Segment::Index(_) => {
                let col = text.len() - text.trim_start_matches(' ').len();
                let rest = &text[col..];
                if !(rest == "-" || rest.starts_with("- ")) {
                    return None;
                }
                // `- - x`: nested lists on one line are not edited.
                if rest
                    .get(2..)
                    .is_some_and(|r| r.trim_start().starts_with("- "))
                {
                    return None;
                }
                (col, false)
            }
            Segment::Field(k) | Segment::Key(k) => {
                let (col, dash) = content_col(text);
                if !starts_with_key(&text[col..], k) {
                    return None;
                }
                (col, dash)
            }
        };
        Some(Span {
            start,
            end: self.node_end(old, path, start),
            col,
            after_dash,
        })
    }

    /// Lines of `value` written where the node at `path` is written (entry or item), `first_prefix`
    /// replacing the first line's indentation.
    fn write_node(
        path: &FieldPath,
        value: &Value,
        span: &Span,
        original_first: &str,
    ) -> Vec<String> {
        let mut out = Vec::new();
        match path.segments().last() {
            Some(Segment::Index(_)) => emit::item(value, span.col, &mut out),
            Some(Segment::Field(k) | Segment::Key(k)) => emit::entry(k, value, span.col, &mut out),
            None => {}
        }
        if span.after_dash
            && let (Some(first), Some(prefix)) = (out.first_mut(), original_first.get(..span.col))
        {
            first.replace_range(..span.col, prefix);
        }
        out
    }

    /// Edits turning the node at `path` from `old_v` into `new_v` (both present).
    fn diff(
        &self,
        old: &Value,
        path: &FieldPath,
        old_v: &Value,
        new_v: &Value,
        edits: &mut Vec<Edit>,
    ) -> Option<()> {
        if old_v == new_v {
            return Some(());
        }
        if let Some(edit) = self.flow_edit(path, old_v, new_v) {
            edits.push(edit?);
            return Some(());
        }
        let mut local = Vec::new();
        let fine = match (old_v, new_v) {
            (Value::Object(a), Value::Object(b)) if !a.is_empty() && !b.is_empty() => {
                self.diff_map(old, path, a, b, &mut local)
            }
            (Value::Array(a), Value::Array(b)) if !a.is_empty() && !b.is_empty() => {
                self.diff_list(old, path, a, b, &mut local)
            }
            _ => None,
        };
        if fine.is_some() {
            edits.extend(local);
            return Some(());
        }
        // Rewrite the whole entry or item.
        let span = self.span(old, path)?;
        let lines = Self::write_node(path, new_v, &span, self.line(span.start));
        edits.push(Edit {
            start: span.start,
            end: span.end,
            lines,
            depth: path.segments().len(),
        });
        Some(())
    }

    fn diff_map(
        &self,
        old: &Value,
        path: &FieldPath,
        a: &serde_json::Map<String, Value>,
        b: &serde_json::Map<String, Value>,
        edits: &mut Vec<Edit>,
    ) -> Option<()> {
        let child = |k: &str| path.key(k.to_string());
        let mut last_end = 0usize;
        let mut col = None;
        let mut first_line = usize::MAX;
        // How the keys are quoted: a new key takes the quotes of the key it replaces (a removed one),
        // else of its siblings when they all have the same.
        let mut removed_quote: Option<Option<char>> = None;
        let mut quotes: Vec<Option<char>> = Vec::new();
        for (k, v) in a {
            let p = child(k);
            let span = self.span(old, &p)?;
            last_end = last_end.max(span.end);
            if span.start < first_line {
                first_line = span.start;
                col = Some(span.col);
            }
            let quote = self.key_quote(&span);
            quotes.push(quote);
            match b.get(k) {
                None if span.after_dash => return None,
                None => {
                    removed_quote.get_or_insert(quote);
                    edits.push(Edit {
                        start: span.start,
                        end: span.end,
                        lines: Vec::new(),
                        depth: p.segments().len(),
                    });
                }
                Some(nv) => self.diff(old, &p, v, nv, edits)?,
            }
        }
        let col = col?;
        let quote = removed_quote.unwrap_or_else(|| {
            quotes
                .first()
                .copied()
                .flatten()
                .filter(|q| quotes.iter().all(|o| *o == Some(*q)))
        });
        let mut added = Vec::new();
        for (k, v) in b {
            if !a.contains_key(k) {
                emit::entry_as(&emit::key_as(k, quote), v, col, &mut added);
            }
        }
        if !added.is_empty() {
            edits.push(Edit {
                start: last_end,
                end: last_end,
                lines: added,
                depth: path.segments().len() + 1,
            });
        }
        Some(())
    }

    fn diff_list(
        &self,
        old: &Value,
        path: &FieldPath,
        a: &[Value],
        b: &[Value],
        edits: &mut Vec<Edit>,
    ) -> Option<()> {
        let item = |i: usize| path.index(i);
        if a.len() == b.len() {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                self.diff(old, &item(i), x, y, edits)?;
            }
            return Some(());
        }
        if b.len() > a.len() && b.get(..a.len()) == Some(a) {
            let first = self.span(old, &item(0))?;
            let last = self.span(old, &item(a.len() - 1))?;
            // Items written as one-line flow collections (`- {key: a, operator: In}`) get siblings in
            // the same style.
            let flow_items = last.end == last.start + 1
                && self
                    .tree
                    .as_ref()
                    .is_some_and(|t| t.is_flow_at(&item(a.len() - 1)));
            // In the document's own flow style (key quoting, padding), as flow edits write.
            let style = self
                .tree
                .as_ref()
                .map(flow::Tree::style)
                .unwrap_or_default();
            let mut lines = Vec::new();
            for v in b.get(a.len()..).unwrap_or_default() {
                match v {
                    Value::Object(_) | Value::Array(_) if flow_items => lines.push(format!(
                        "{}- {}",
                        " ".repeat(first.col),
                        flow::flow_value(v, &style, style.keys)
                    )),
                    _ => emit::item(v, first.col, &mut lines),
                }
            }
            edits.push(Edit {
                start: last.end,
                end: last.end,
                lines,
                depth: path.segments().len() + 1,
            });
            return Some(());
        }
        // Items removed, the rest unchanged and in order.
        let mut j = 0usize;
        for (i, x) in a.iter().enumerate() {
            if b.get(j) == Some(x) {
                j += 1;
                continue;
            }
            let span = self.span(old, &item(i))?;
            edits.push(Edit {
                start: span.start,
                end: span.end,
                lines: Vec::new(),
                depth: path.segments().len() + 1,
            });
        }
        (j == b.len()).then_some(())
    }
}

/// Whether the line an edit at `start..end` of `lines` writes over (or, inserting, follows) ends in
/// CRLF: new lines take that line end.
fn crlf_at(lines: &[&str], start: usize, end: usize) -> bool {
    let at = if end > start {
        start
    } else {
        start.saturating_sub(1)
    };
    // The last line has no line end of its own: look at the one before it.
    let at = if at + 1 >= lines.len() {
        at.saturating_sub(1)
    } else {
        at
    };
    lines.get(at).is_some_and(|l| l.ends_with('\r'))
}

/// Applies non-overlapping `edits` to `lines`; `None` when two edits overlap. With `line_ends`, the
/// edits' lines are bare and get a `\r` where [`crlf_at`] says so.
fn apply(lines: &[&str], mut edits: Vec<Edit>, line_ends: bool) -> Option<Vec<String>> {
    // Bottom up, a deletion before an insertion at the same line; of insertions at one line the
    // shallower first, so that the deeper one's lines, spliced in after, come before them.
    edits.sort_by_key(|e| (std::cmp::Reverse((e.start, e.end)), e.depth));
    for pair in edits.windows(2) {
        let (later, earlier) = (&pair[0], &pair[1]);
        if earlier.end > later.start
            || (earlier.start == later.start && earlier.end > earlier.start)
        {
            return None;
        }
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for e in edits {
        if e.end > out.len() || e.start > e.end {
            return None;
        }
        let mut new = e.lines;
        if line_ends && crlf_at(lines, e.start, e.end) {
            for l in &mut new {
                l.push('\r');
            }
        }
        out.splice(e.start..e.end, new);
    }
    Some(out)
}

/// Whether `text` reads back as exactly `value` (one document).
fn reads_back(text: &str, value: &Value) -> bool {
    let parsed = parse("repair", text, &Limits::default());
    parsed.errors.is_empty()
        && parsed.documents.len() == 1
        && parsed.documents.first().map(|d| &d.value) == Some(value)
}

/// Whether a document's text uses anchors, aliases or merge keys.
fn uses_anchors(region: &str) -> bool {
    prescan(region, &Limits::default()).map_or(true, |p| p.anchors > 0)
        || region.split('\n').any(|l| {
            let (col, _) = content_col(l);
            let rest = &l[col..];
            ["<<", "\"<<\"", "'<<'"].iter().any(|k| {
                rest.strip_prefix(k)
                    .is_some_and(|r| r.trim_start().starts_with(':'))
            })
        })
        || region.contains("<<:")
}

/// Whether `line` holds an anchor (`&name`) or alias (`*name`) token (or, conservatively, text that
/// looks like one inside a string).
fn has_anchor_or_alias(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        matches!(b, b'&' | b'*')
            && (i == 0
                || matches!(
                    bytes[i - 1],
                    b' ' | b'\t' | b'[' | b'{' | b',' | b'-' | b':'
                ))
            && bytes
                .get(i + 1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
    })
}

/// The result of [`render`].
pub(crate) struct Rendered {
    /// The text with the changed documents written back.
    pub text: String,
    /// Positions (in `documents`) of the documents left unchanged because they use anchors, aliases
    /// or merge keys and could not be edited in place.
    pub refused: Vec<usize>,
}

/// `text` (no byte order mark; `\n` or `\r\n` line ends) with each changed document (`new[i]` is the
/// repaired value of `documents[i]`, `None` when unchanged) written back; see the module docs.
pub(crate) fn render(text: &str, documents: &[Document], new: &[Option<Value>]) -> Rendered {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut edits: Vec<Edit> = Vec::new();
    let mut refused = Vec::new();
    for (position, (doc, value)) in documents.iter().zip(new).enumerate() {
        let Some(value) = value else { continue };
        if value == &doc.value {
            continue;
        }
        let start = line_index(doc.line);
        let mut end = (start + 1..lines.len())
            .find(|i| lines.get(*i).is_some_and(|l| is_marker(l)))
            .unwrap_or(lines.len());
        while end > start + 1 && lines.get(end - 1).is_some_and(|l| is_blank_or_comment(l)) {
            end -= 1;
        }
        let region_text = lines
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|l| l.trim_end_matches('\r'))
            .collect::<Vec<_>>()
            .join("\n");
        let first = lines.get(start).copied().unwrap_or("");
        // Written anew as JSON only when it is JSON (a flow-style YAML document is not).
        let json = first.trim_start().starts_with('{')
            && serde_json::from_str::<Value>(&region_text).is_ok();
        let on_marker = is_marker(first);
        let anchored = uses_anchors(&region_text);
        let region = Doc {
            lines: &lines,
            map: &doc.lines,
            end,
            tree: (!on_marker && !anchored)
                .then(|| flow::Tree::parse(&region_text))
                .flatten(),
            start,
        };
        let edited = (!on_marker)
            .then(|| {
                let mut doc_edits = Vec::new();
                region.diff(
                    &doc.value,
                    &FieldPath::root(),
                    &doc.value,
                    value,
                    &mut doc_edits,
                )?;
                // Rewriting a line that holds an anchor or alias would drop or expand it.
                if anchored
                    && doc_edits.iter().any(|e| {
                        lines
                            .get(e.start..e.end)
                            .unwrap_or_default()
                            .iter()
                            .any(|l| has_anchor_or_alias(l))
                    })
                {
                    return None;
                }
                let slice = lines.get(start..end)?;
                let shifted = doc_edits
                    .into_iter()
                    .map(|e| {
                        Some(Edit {
                            start: e.start.checked_sub(start)?,
                            end: e.end.checked_sub(start)?,
                            lines: e.lines,
                            depth: e.depth,
                        })
                    })
                    .collect::<Option<Vec<_>>>()?;
                let out = apply(slice, shifted, true)?;
                let mut joined = out.join("\n");
                joined.push('\n');
                reads_back(&joined, value).then_some(out)
            })
            .flatten();
        let replacement = match edited {
            Some(out) => out,
            None if anchored => {
                refused.push(position);
                continue;
            }
            None => {
                let body = if json {
                    serde_json::to_string_pretty(value).unwrap_or_default()
                } else {
                    emit::document(value).trim_end_matches('\n').to_string()
                };
                let mut out: Vec<String> = Vec::new();
                if on_marker {
                    out.push("---".into());
                }
                out.extend(body.split('\n').map(str::to_string));
                if first.ends_with('\r') {
                    for l in &mut out {
                        l.push('\r');
                    }
                }
                out
            }
        };
        edits.push(Edit {
            start,
            end,
            lines: replacement,
            depth: 0,
        });
    }
    let text = match apply(&lines, edits, false) {
        Some(out) => out.join("\n"),
        None => text.to_string(),
    };
    Rendered { text, refused }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn docs(text: &str) -> Vec<Document> {
        let parsed = parse("t.yaml", text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        parsed.documents
    }

    /// Renders `text` with its first document changed by `change`, checks the result reads back.
    fn edit(text: &str, change: impl Fn(&mut Value)) -> String {
        let documents = docs(text);
        let mut value = documents[0].value.clone();
        change(&mut value);
        let mut new = vec![None; documents.len()];
        new[0] = Some(value.clone());
        let out = render(text, &documents, &new).text;
        let back = docs(&out);
        assert_eq!(back[0].value, value, "{out}");
        out
    }

    const DEPLOY: &str = "# header comment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web # the name\nspec:\n  template:\n    spec:\n      # why these tolerations\n      tolerations:\n      - key: \"os\"\n        value: \"Windows\"\n        Effect: \"NoSchedule\"\n      containers:\n      - name: app\n        image: mcr.microsoft.com/windows/servercore:ltsc2022\n      nodeSelector:\n        kubernetes.io/os: windows # pinned\n---\n# second document\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";

    #[test]
    fn a_new_key_keeps_the_quotes_of_the_key_it_replaces_or_its_siblings() {
        let rename = |v: &mut Value| {
            let s = &mut v["spec"]["nodeSelector"];
            let old = s
                .as_object_mut()
                .and_then(|m| m.remove("beta.kubernetes.io/os"));
            s["kubernetes.io/os"] = old.unwrap_or_default();
        };
        let text = "kind: Pod\nspec:\n  nodeSelector:\n    \"beta.kubernetes.io/os\": windows\n";
        assert!(edit(text, rename).ends_with("    \"kubernetes.io/os\": windows\n"));
        let single = "kind: Pod\nspec:\n  nodeSelector:\n    'beta.kubernetes.io/os': windows\n";
        assert!(edit(single, rename).ends_with("    'kubernetes.io/os': windows\n"));
        let plain = "kind: Pod\nspec:\n  nodeSelector:\n    beta.kubernetes.io/os: windows\n";
        assert!(edit(plain, rename).ends_with("    kubernetes.io/os: windows\n"));
        // Added beside siblings that are all double-quoted: double-quoted too.
        let siblings = "kind: Pod\nspec:\n  nodeSelector:\n    \"a\": b\n";
        let out = edit(siblings, |v| v["spec"]["nodeSelector"]["c"] = json!("d"));
        assert!(out.ends_with("    \"a\": b\n    \"c\": d\n"), "{out}");
    }

    #[test]
    fn line_edits_keep_comments_and_layout() {
        // Each row: a change and the exact text it must produce around it.
        type Change = fn(&mut Value);
        let rows: [(&str, Change, &str, &str); 5] = [
            (
                "replace a scalar",
                |v| v["spec"]["template"]["spec"]["tolerations"][0]["value"] = json!("windows"),
                "        value: \"Windows\"\n",
                "        value: windows\n",
            ),
            (
                "rename a key",
                |v| {
                    let t = &mut v["spec"]["template"]["spec"]["tolerations"][0];
                    let e = t.as_object_mut().and_then(|m| m.remove("Effect"));
                    t["effect"] = e.unwrap_or_default();
                },
                "        value: \"Windows\"\n        Effect: \"NoSchedule\"\n",
                "        value: \"Windows\"\n        effect: NoSchedule\n",
            ),
            (
                "add a key to a block mapping",
                |v| {
                    v["spec"]["template"]["spec"]["nodeSelector"]["node.kubernetes.io/windows-build"] =
                        json!("10.0.20348")
                },
                "        kubernetes.io/os: windows # pinned\n",
                "        kubernetes.io/os: windows # pinned\n        node.kubernetes.io/windows-build: \"10.0.20348\"\n",
            ),
            (
                "append to a block list",
                |v| {
                    if let Some(a) = v["spec"]["template"]["spec"]["tolerations"].as_array_mut() {
                        a.push(json!({"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}));
                    }
                },
                "        Effect: \"NoSchedule\"\n      containers:",
                "        Effect: \"NoSchedule\"\n      - effect: NoSchedule\n        key: os\n        operator: Equal\n        value: windows\n      containers:",
            ),
            (
                "remove a list item",
                |v| v["spec"]["template"]["spec"]["tolerations"] = json!([]),
                "      # why these tolerations\n      tolerations:\n      - key",
                "      # why these tolerations\n      tolerations: []\n      containers:",
            ),
        ];
        for (name, change, before, after) in rows {
            assert!(DEPLOY.contains(before), "{name}");
            let out = edit(DEPLOY, change);
            assert!(out.contains(after), "{name}:\n{out}");
            // Comments elsewhere and the second document are untouched.
            assert!(out.starts_with("# header comment\napiVersion"), "{name}");
            assert!(out.contains("  name: web # the name\n"), "{name}");
            assert!(
                out.ends_with(
                    "---\n# second document\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                ),
                "{name}:\n{out}"
            );
        }
    }

    #[test]
    fn flow_style_stays_flow_style() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}  # keep?\nspec:\n  nodeSelector: {beta.kubernetes.io/os: windows}\n  containers: [{name: c, image: i}]\n";
        let out = edit(text, |v| {
            v["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
        });
        assert!(
            out.contains(
                "  nodeSelector: {kubernetes.io/os: windows}\n  containers: [{name: c, image: i}]"
            ),
            "{out}"
        );
        assert!(out.contains("metadata: {name: p}  # keep?"), "{out}");
    }

    #[test]
    fn new_maps_are_added_whole() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n";
        let out = edit(text, |v| {
            v["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
            v["spec"]["tolerations"] = json!([{"key": "os"}]);
        });
        assert_eq!(
            out,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n  nodeSelector:\n    kubernetes.io/os: windows\n  tolerations:\n  - key: os\n"
        );
    }

    #[test]
    fn items_added_to_a_block_list_of_flow_items_are_flow_items() {
        // A block list whose first item is a flow mapping starts at a bracket too: it is still a block
        // list, and the new item goes on its own line, in its siblings' style (the build range
        // ANDed into a term written the Kubernetes docs' way).
        let text = "spec:\n  terms:\n  - exprs:\n    - {key: zone, operator: In, values: [a]}\n    - {key: rack, operator: Exists}\n  other: 1\n";
        let out = edit(text, |v| {
            v["spec"]["terms"][0]["exprs"]
                .as_array_mut()
                .expect("list")
                .push(json!({"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.20348", "10.0.26100"]}));
        });
        assert_eq!(
            out,
            "spec:\n  terms:\n  - exprs:\n    - {key: zone, operator: In, values: [a]}\n    - {key: rack, operator: Exists}\n    - {key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.20348\", \"10.0.26100\"]}\n  other: 1\n"
        );
        // A block list of flow lists, the same.
        let text = "m:\n- [a, b]\n- [c]\n";
        let out = edit(text, |v| {
            v["m"].as_array_mut().expect("list").push(json!(["d"]));
        });
        assert_eq!(out, "m:\n- [a, b]\n- [c]\n- [d]\n");
        // Block items stay block items.
        let text = "m:\n- key: a\n  operator: Exists\n";
        let out = edit(text, |v| {
            v["m"]
                .as_array_mut()
                .expect("list")
                .push(json!({"key": "b"}));
        });
        assert_eq!(out, "m:\n- key: a\n  operator: Exists\n- key: b\n");
    }

    #[test]
    fn removing_the_first_key_of_an_item_rewrites_the_item() {
        let text =
            "kind: Pod\nspec:\n  tolerations:\n  - Key: os # odd\n    value: windows\n  - key: b\n";
        let out = edit(text, |v| {
            v["spec"]["tolerations"][0] = json!({"key": "os", "value": "windows"});
        });
        assert_eq!(
            out,
            "kind: Pod\nspec:\n  tolerations:\n  - key: os\n    value: windows\n  - key: b\n"
        );
    }

    #[test]
    fn json_stays_json() {
        let text = "{\n  \"apiVersion\": \"v1\", \"kind\": \"Pod\",\n  \"spec\": {}\n}\n";
        let out = edit(text, |v| v["spec"]["nodeName"] = json!("n1"));
        let back: Value = serde_json::from_str(&out).expect("json");
        assert_eq!(back["spec"]["nodeName"], "n1");
    }

    #[test]
    fn several_fixes_of_one_document_are_several_edits() {
        // apiVersion replaced, spec.selector added after the template, a nodeSelector added at the end
        // of the pod spec: the last two insert at the same line, the deeper one first.
        let text = "# old chart\napiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata:\n  name: \"logs\"\nspec:\n  template:\n    metadata:\n      labels: {app: logs}\n    spec:\n      containers:\n      - name: c  # agent\n        image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"\n        env:\n        - {name: B, value: \"2\"}\n        - {name: A, value: \"1\"}\n";
        let out = edit(text, |v| {
            v["apiVersion"] = json!("apps/v1");
            v["spec"]["selector"] = json!({"matchLabels": {"app": "logs"}});
            v["spec"]["template"]["spec"]["nodeSelector"] = json!({"kubernetes.io/os": "windows"});
        });
        assert_eq!(
            out,
            "# old chart\napiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: \"logs\"\nspec:\n  template:\n    metadata:\n      labels: {app: logs}\n    spec:\n      containers:\n      - name: c  # agent\n        image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"\n        env:\n        - {name: B, value: \"2\"}\n        - {name: A, value: \"1\"}\n      nodeSelector:\n        kubernetes.io/os: windows\n  selector:\n    matchLabels:\n      app: logs\n"
        );
    }

    /// The build pin as required node affinity (`node.kubernetes.io/windows-build In [...]`).
    fn pin_expression() -> Value {
        json!({"key": "node.kubernetes.io/windows-build", "operator": "In", "values": ["10.0.20348", "10.0.26100"]})
    }

    /// The pin added as a new required node affinity.
    fn add_required_affinity(v: &mut Value) {
        let spec = &mut v["spec"]["template"]["spec"];
        if let Some(m) = spec.get_mut("nodeSelector").and_then(Value::as_object_mut) {
            m.remove("node.kubernetes.io/windows-build");
        }
        let required = json!({"nodeSelectorTerms": [{"matchExpressions": [pin_expression()]}]});
        if spec["affinity"].is_null() {
            spec["affinity"] = json!({});
        }
        spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
            required;
    }

    /// The pin ANDed into every term of an existing required node affinity.
    fn and_into_every_term(v: &mut Value) {
        let terms = &mut v["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        for term in terms.as_array_mut().into_iter().flatten() {
            match term["matchExpressions"].as_array_mut() {
                Some(list) => list.push(pin_expression()),
                None => term["matchExpressions"] = json!([pin_expression()]),
            }
        }
    }

    #[test]
    fn required_node_affinity_is_added_in_block_style() {
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\nspec:\n  template:\n    spec:\n      nodeSelector:\n        kubernetes.io/os: windows\n        node.kubernetes.io/windows-build: \"10.0.20348\" # the old pin\n      containers:\n      - name: c\n        image: i\n";
        let out = edit(text, add_required_affinity);
        assert_eq!(
            out,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: w\nspec:\n  template:\n    spec:\n      nodeSelector:\n        kubernetes.io/os: windows\n      containers:\n      - name: c\n        image: i\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - key: node.kubernetes.io/windows-build\n                operator: In\n                values:\n                - \"10.0.20348\"\n                - \"10.0.26100\"\n"
        );
        // Beside another affinity: only nodeAffinity is added, after it.
        let text = "kind: Deployment\nspec:\n  template:\n    spec:\n      affinity:\n        podAntiAffinity: # spread\n          preferredDuringSchedulingIgnoredDuringExecution: []\n      containers: [{name: c, image: i}]\n";
        let out = edit(text, add_required_affinity);
        assert!(
            out.starts_with("kind: Deployment\nspec:\n  template:\n    spec:\n      affinity:\n        podAntiAffinity: # spread\n          preferredDuringSchedulingIgnoredDuringExecution: []\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n"),
            "{out}"
        );
        assert!(
            out.ends_with("      containers: [{name: c, image: i}]\n"),
            "{out}"
        );
    }

    #[test]
    fn an_expression_is_anded_into_every_term_in_block_style() {
        let text = "kind: Deployment\nspec:\n  template:\n    spec:\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            # Windows nodes\n            - matchExpressions:\n              - key: kubernetes.io/os\n                operator: In\n                values: [windows]\n            # or this one node\n            - matchFields:\n              - {key: metadata.name, operator: In, values: [n1]}\n          preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 1\n            preference: {matchExpressions: [{key: a, operator: Exists}]}\n      containers: [{name: c, image: i}]\n";
        let out = edit(text, and_into_every_term);
        assert_eq!(
            out,
            "kind: Deployment\nspec:\n  template:\n    spec:\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            # Windows nodes\n            - matchExpressions:\n              - key: kubernetes.io/os\n                operator: In\n                values: [windows]\n              - key: node.kubernetes.io/windows-build\n                operator: In\n                values:\n                - \"10.0.20348\"\n                - \"10.0.26100\"\n            # or this one node\n            - matchFields:\n              - {key: metadata.name, operator: In, values: [n1]}\n              matchExpressions:\n              - key: node.kubernetes.io/windows-build\n                operator: In\n                values:\n                - \"10.0.20348\"\n                - \"10.0.26100\"\n          preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 1\n            preference: {matchExpressions: [{key: a, operator: Exists}]}\n      containers: [{name: c, image: i}]\n"
        );
    }

    #[test]
    fn required_node_affinity_is_added_and_anded_in_flow_style() {
        // A flow-style pod spec inside a block document.
        let text = "kind: Deployment\nspec:\n  template:\n    spec: {containers: [{name: c, image: i}], nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}}  # pinned\n";
        let out = edit(text, add_required_affinity);
        assert_eq!(
            out,
            "kind: Deployment\nspec:\n  template:\n    spec: {containers: [{name: c, image: i}], nodeSelector: {kubernetes.io/os: windows}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.20348\", \"10.0.26100\"]}]}]}}}}  # pinned\n"
        );
        // The docs' layout: a root mapping, one entry per line, trailing commas, padded braces.
        let text = "{\n  kind: Deployment,\n  spec: {\n    template: {\n      spec: {\n        affinity: {\n          nodeAffinity: {\n            requiredDuringSchedulingIgnoredDuringExecution: {\n              nodeSelectorTerms: [\n                { matchExpressions: [ { key: kubernetes.io/os, operator: In, values: [ windows ] } ] },\n                { matchFields: [ { key: metadata.name, operator: In, values: [ n1 ] } ] },\n              ],\n            },\n          },\n        },\n        containers: [ { name: c, image: i } ],\n      },\n    },\n  },\n}\n";
        let out = edit(text, and_into_every_term);
        assert_eq!(
            out,
            "{\n  kind: Deployment,\n  spec: {\n    template: {\n      spec: {\n        affinity: {\n          nodeAffinity: {\n            requiredDuringSchedulingIgnoredDuringExecution: {\n              nodeSelectorTerms: [\n                { matchExpressions: [ { key: kubernetes.io/os, operator: In, values: [ windows ] }, { key: node.kubernetes.io/windows-build, operator: In, values: [ \"10.0.20348\", \"10.0.26100\" ] } ] },\n                { matchFields: [ { key: metadata.name, operator: In, values: [ n1 ] } ], matchExpressions: [ { key: node.kubernetes.io/windows-build, operator: In, values: [ \"10.0.20348\", \"10.0.26100\" ] } ] },\n              ],\n            },\n          },\n        },\n        containers: [ { name: c, image: i } ],\n      },\n    },\n  },\n}\n"
        );
        // No affinity yet in the docs' layout: a new entry on a line of its own.
        let text = "{\n  kind: Deployment,\n  spec: {\n    template: {\n      spec: {\n        nodeSelector: { kubernetes.io/os: windows },\n        containers: [ { name: c, image: i } ],\n      },\n    },\n  },\n}\n";
        let out = edit(text, add_required_affinity);
        assert_eq!(
            out,
            "{\n  kind: Deployment,\n  spec: {\n    template: {\n      spec: {\n        nodeSelector: { kubernetes.io/os: windows },\n        containers: [ { name: c, image: i } ],\n        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [ { matchExpressions: [ { key: node.kubernetes.io/windows-build, operator: In, values: [ \"10.0.20348\", \"10.0.26100\" ] } ] } ] } } },\n      },\n    },\n  },\n}\n"
        );
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let e = |start, end| Edit {
            start,
            end,
            lines: vec![],
            depth: 0,
        };
        assert!(apply(&["a", "b", "c"], vec![e(0, 2), e(1, 3)], false).is_none());
        assert_eq!(
            apply(&["a", "b", "c"], vec![e(0, 1), e(1, 1), e(1, 2)], false),
            Some(vec!["c".to_string()])
        );
    }
}
