//! Minimal edits inside flow-style collections (`{a: b}`, `[x, y]`, JSON): only the entries and items a
//! fix changes are rewritten, in flow style; the rest keeps its bytes, order and quoting.
//!
//! saphyr gives each node its start and, for a flow collection, the position of its closing bracket;
//! edits are byte replacements in the document's text (`\n` line ends).

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::Value;

use super::emit;
use crate::path::{FieldPath, Segment};

/// A parsed document region: its text and saphyr tree.
pub(super) struct Tree {
    text: String,
    /// Byte offset of the start of each line of `text`.
    line_starts: Vec<usize>,
    root: MarkedYamlOwned,
    /// New values are written as JSON (the document is JSON).
    json: bool,
}

/// One byte replacement in the region's text.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Replace {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// A scalar of the region written in flow context: quoted when it holds a flow indicator.
fn flow_string(s: &str) -> String {
    if emit::plain_ok(s) && !s.contains([',', '[', ']', '{', '}']) {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

/// `value` in flow style on one line, `{k: v, k2: v2}` (JSON, spaced the same way, when `json`).
pub(super) fn flow_value(value: &Value, json: bool) -> String {
    let string = |s: &str| {
        if json {
            Value::String(s.to_string()).to_string()
        } else {
            flow_string(s)
        }
    };
    match value {
        Value::String(s) => string(s),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(m) => {
            let inner: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", string(k), flow_value(v, json)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(|v| flow_value(v, json)).collect();
            format!("[{}]", inner.join(", "))
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
        let json = text.trim_start().starts_with('{');
        Some(Tree {
            text: text.to_string(),
            line_starts,
            root,
            json,
        })
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

    /// Byte offset just after `node`: after the closing bracket of a flow collection.
    fn end(&self, node: &MarkedYamlOwned) -> Option<usize> {
        let end = self.offset(node.span.end)?;
        if self.is_flow(node) {
            let close = self.text.get(end..)?.chars().next()?;
            return matches!(close, '}' | ']').then_some(end + 1);
        }
        Some(end)
    }

    /// Whether `node` is a flow collection (written with brackets).
    ///
    /// A block collection starts where its first entry or item starts, so a block list whose first item
    /// is a flow mapping (`- {key: a}`) also starts at a bracket: a flow collection's first child starts
    /// after its opening bracket, a block collection's where the collection does.
    fn is_flow(&self, node: &MarkedYamlOwned) -> bool {
        let first_child = match &node.data {
            YamlDataOwned::Mapping(m) => m.iter().next().map(|(k, _)| k),
            YamlDataOwned::Sequence(items) => items.first(),
            _ => return false,
        };
        let Some(start) = self.start(node) else {
            return false;
        };
        self.text
            .get(start..)
            .is_some_and(|t| t.starts_with(['{', '[']))
            && first_child.is_none_or(|c| self.start(c).is_some_and(|c| c > start))
    }

    /// Whether the node at `path` is written as a flow collection.
    pub(super) fn is_flow_at(&self, path: &FieldPath) -> bool {
        self.node(path).is_some_and(|n| self.is_flow(n))
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
    /// node at `path` is not a flow collection.
    pub(super) fn edit(&self, path: &FieldPath, old: &Value, new: &Value) -> Option<Vec<Replace>> {
        let node = self.node(path)?;
        if !self.is_flow(node) {
            return None;
        }
        let mut out = Vec::new();
        if self.diff(node, old, new, &mut out).is_none() {
            out.clear();
            out.push(Replace {
                start: self.start(node)?,
                end: self.end(node)?,
                text: flow_value(new, self.json),
            });
        }
        Some(out)
    }

    /// Where a new entry or item goes after the one ending at `after` whose first byte is `first`:
    /// on its own line at the same column when the collection is written one entry per line.
    fn separator(&self, first: usize, open: usize) -> String {
        let line_of = |o: usize| self.line_starts.partition_point(|s| *s <= o);
        if line_of(first) != line_of(open) {
            let line_start = self.line_starts[line_of(first) - 1];
            let col = self.text[line_start..first].chars().count();
            format!(",\n{}", " ".repeat(col))
        } else {
            ", ".into()
        }
    }

    fn diff(
        &self,
        node: &MarkedYamlOwned,
        old: &Value,
        new: &Value,
        out: &mut Vec<Replace>,
    ) -> Option<()> {
        if old == new {
            return Some(());
        }
        let replace_whole = |out: &mut Vec<Replace>| -> Option<()> {
            out.push(Replace {
                start: self.start(node)?,
                end: self.end(node)?,
                text: flow_value(new, self.json),
            });
            Some(())
        };
        if !self.is_flow(node) {
            // A scalar inside a flow collection (block nodes cannot be nested in flow ones).
            return match node.data {
                YamlDataOwned::Value(_) => replace_whole(out),
                _ => None,
            };
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
                    return replace_whole(out);
                }
                for (i, (k, v, name)) in entries.iter().enumerate() {
                    match b.get(name) {
                        Some(nv) => self.diff(v, a.get(name)?, nv, out)?,
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
                let added: Vec<(&String, &Value)> =
                    b.iter().filter(|(k, _)| !a.contains_key(*k)).collect();
                if !added.is_empty() {
                    let (last_k, last_v, _) = entries.last()?;
                    let sep = self.separator(self.start(last_k)?, open);
                    let mut text = String::new();
                    for (k, v) in added {
                        let key = if self.json {
                            Value::String(k.clone()).to_string()
                        } else {
                            flow_string(k)
                        };
                        text.push_str(&format!("{sep}{key}: {}", flow_value(v, self.json)));
                    }
                    let at = self.end(last_v)?;
                    out.push(Replace {
                        start: at,
                        end: at,
                        text,
                    });
                }
                Some(())
            }
            (YamlDataOwned::Sequence(items), Value::Array(a), Value::Array(b))
                if !a.is_empty() && items.len() == a.len() =>
            {
                if a.len() == b.len() {
                    for ((item, x), y) in items.iter().zip(a).zip(b) {
                        self.diff(item, x, y, out)?;
                    }
                    return Some(());
                }
                if b.len() > a.len() && b.get(..a.len()) == Some(a) {
                    let last = items.last()?;
                    let sep = self.separator(self.start(last)?, open);
                    let text: String = b[a.len()..]
                        .iter()
                        .map(|v| format!("{sep}{}", flow_value(v, self.json)))
                        .collect();
                    let at = self.end(last)?;
                    out.push(Replace {
                        start: at,
                        end: at,
                        text,
                    });
                    return Some(());
                }
                replace_whole(out)
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
        let line_of = |o: usize| self.line_starts.partition_point(|s| *s <= o) - 1;
        let (l0, l1) = (line_of(first), line_of(last));
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
        let replaces = tree.edit(&path, &at(&old), &at(&new)).expect("flow node");
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

    #[test]
    fn flow_scalars_with_indicators_are_quoted() {
        assert_eq!(
            flow_value(&json!({"a": "x,y", "b": "[z]"}), false),
            "{a: \"x,y\", b: \"[z]\"}"
        );
        assert_eq!(flow_value(&json!(["p", 1, true]), false), "[p, 1, true]");
    }
}
