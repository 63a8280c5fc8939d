//! Source lines of the nodes of one parsed document, addressed by field path.

use std::borrow::Cow;

use crate::path::FieldPath;

/// One node of the tree: where it is written and its children by name (sorted for binary search).
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineNode {
    /// Line of the mapping key for a mapping entry, else of the node itself.
    line: u32,
    /// Line where the node's value starts (differs from `line` for `key:` followed by a block).
    value_line: u32,
    /// Children as (key name or list index as text, node index), sorted by name.
    children: Vec<(Box<str>, u32)>,
}

/// The 1-based line of every node and every mapping key of a document.
///
/// Paths are looked up by the names of their steps: field and key names, and list indexes as text.
/// A path that is not in the document answers with the line of its nearest present ancestor, which is
/// where a finding about a missing field belongs.
///
/// ```
/// use winplace_rules::{FieldPath, input::{parse, Limits}};
/// let parsed = parse("a.yaml", "kind: Pod\nspec:\n  containers:\n  - name: app\n", &Limits::default());
/// let lines = &parsed.documents[0].lines;
/// assert_eq!(lines.line_of(&FieldPath::parse("spec.containers[0].name")), Some(4));
/// assert_eq!(lines.line_of(&FieldPath::parse("spec.tolerations")), Some(2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineMap {
    /// Arena of nodes; index 0 is the root when the map is not empty.
    nodes: Vec<LineNode>,
}

impl LineMap {
    /// A map holding only a root written at `line`.
    pub fn with_root(line: u32) -> Self {
        let mut map = LineMap::default();
        map.add_root(line);
        map
    }

    /// Adds the root node; returns its handle. Only the first call makes a root.
    pub(crate) fn add_root(&mut self, line: u32) -> u32 {
        self.push(line, line)
    }

    fn push(&mut self, line: u32, value_line: u32) -> u32 {
        let id = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
        self.nodes.push(LineNode {
            line,
            value_line,
            children: Vec::new(),
        });
        id
    }

    /// Adds a child named `name` under `parent`, written at `line` (its key) with its value at
    /// `value_line`; returns the child's handle.
    pub(crate) fn add_child(
        &mut self,
        parent: u32,
        name: String,
        line: u32,
        value_line: u32,
    ) -> u32 {
        let id = self.push(line, value_line);
        if let Some(p) = self.nodes.get_mut(parent as usize) {
            p.children.push((name.into_boxed_str(), id));
        }
        id
    }

    /// Sorts every node's children so lookups can binary-search; called once after building. Of a
    /// name added twice (a key written twice, or set again by a `<<` merge), the last added is kept, as
    /// its value is.
    pub(crate) fn finish(&mut self) {
        for node in &mut self.nodes {
            // Stable: children of one name stay in the order they were added.
            node.children.sort_by(|a, b| a.0.cmp(&b.0));
            let mut kept: Vec<(Box<str>, u32)> = Vec::with_capacity(node.children.len());
            for child in node.children.drain(..) {
                match kept.last_mut() {
                    Some(last) if last.0 == child.0 => *last = child,
                    _ => kept.push(child),
                }
            }
            node.children = kept;
        }
    }

    fn child(&self, node: u32, name: &str) -> Option<u32> {
        let n = self.nodes.get(node as usize)?;
        n.children
            .binary_search_by(|(k, _)| k.as_ref().cmp(name))
            .ok()
            .and_then(|i| n.children.get(i))
            .map(|(_, id)| *id)
    }

    /// The handle of the deepest node along `names`, and whether all of `names` was found.
    fn walk<'a, I: IntoIterator<Item = &'a str>>(&self, names: I) -> Option<(u32, bool)> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut at = 0u32;
        for name in names {
            match self.child(at, name) {
                Some(next) => at = next,
                None => return Some((at, false)),
            }
        }
        Some((at, true))
    }

    /// Line of `path` (its key's line for a mapping entry), or of its nearest present ancestor.
    pub fn line_of(&self, path: &FieldPath) -> Option<u32> {
        let keys: Vec<Cow<'_, str>> = path.segments().iter().map(|s| s.key_text()).collect();
        let (node, _) = self.walk(keys.iter().map(AsRef::as_ref))?;
        self.nodes.get(node as usize).map(|n| n.line)
    }

    /// Line where the value of `path` starts, or `None` when the path is not in the document.
    pub fn value_line_of(&self, path: &FieldPath) -> Option<u32> {
        let keys: Vec<Cow<'_, str>> = path.segments().iter().map(|s| s.key_text()).collect();
        match self.walk(keys.iter().map(AsRef::as_ref))? {
            (node, true) => self.nodes.get(node as usize).map(|n| n.value_line),
            _ => None,
        }
    }

    /// Whether `path` is present in the document.
    pub fn contains(&self, path: &FieldPath) -> bool {
        let keys: Vec<Cow<'_, str>> = path.segments().iter().map(|s| s.key_text()).collect();
        matches!(self.walk(keys.iter().map(AsRef::as_ref)), Some((_, true)))
    }

    /// The sub-tree under `prefix` (e.g. `["items", "3"]` for one item of a `List`) as a map of its own.
    ///
    /// When `prefix` is absent, the result holds only a root at the nearest present ancestor's line.
    pub fn rebase(&self, prefix: &[String]) -> LineMap {
        match self.walk(prefix.iter().map(String::as_str)) {
            Some((start, true)) => self.rebase_from(start),
            Some((start, false)) => match self.nodes.get(start as usize) {
                Some(n) => LineMap::with_root(n.line),
                None => LineMap::default(),
            },
            None => LineMap::default(),
        }
    }

    /// The sub-tree rooted at node `start` as a map of its own (children sorted).
    pub(crate) fn rebase_from(&self, start: u32) -> LineMap {
        let mut out = LineMap::default();
        if let Some(root) = self.nodes.get(start as usize) {
            out.push(root.line, root.value_line);
            out.copy_children(self, start, 0);
        }
        out.finish();
        out
    }

    /// Copies the children of `src` (a node of `from`) under `dst`, iteratively (no recursion on
    /// untrusted depth).
    fn copy_children(&mut self, from: &LineMap, src: u32, dst: u32) {
        let mut stack = vec![(src, dst)];
        while let Some((src, dst)) = stack.pop() {
            let Some(node) = from.nodes.get(src as usize) else {
                continue;
            };
            for (name, child) in &node.children {
                let Some(c) = from.nodes.get(*child as usize) else {
                    continue;
                };
                let id = self.add_child(dst, name.to_string(), c.line, c.value_line);
                stack.push((*child, id));
            }
        }
    }

    /// Copies the entry `name` of `sub`'s root (with its sub-tree) under `parent` (a `<<` merge).
    pub(crate) fn graft(&mut self, parent: u32, name: &str, sub: &LineMap) {
        let Some(src) = sub.child(0, name) else {
            return;
        };
        let Some(c) = sub.nodes.get(src as usize) else {
            return;
        };
        let id = self.add_child(parent, name.to_string(), c.line, c.value_line);
        self.copy_children(sub, src, id);
    }

    /// Copies the children of `sub`'s root (with their sub-trees) under `dst` (an alias's copy).
    pub(crate) fn graft_children(&mut self, dst: u32, sub: &LineMap) {
        self.copy_children(sub, 0, dst);
    }

    /// The root's line.
    pub(crate) fn root_line(&self) -> Option<u32> {
        self.nodes.first().map(|n| n.line)
    }

    /// Moves every line down by `by` (a document parsed on its own, placed back in its file).
    pub(crate) fn shift(&mut self, by: u32) {
        for n in &mut self.nodes {
            n.line = n.line.saturating_add(by);
            n.value_line = n.value_line.saturating_add(by);
        }
    }

    /// Number of nodes recorded (the root included).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LineMap {
        // spec:            (1)
        //   containers:    (2)
        //   - name: a      (3)
        //   - name: b      (4)
        let mut m = LineMap::with_root(1);
        let spec = m.add_child(0, "spec".into(), 1, 2);
        let cs = m.add_child(spec, "containers".into(), 2, 3);
        for (i, line) in [(0, 3), (1, 4)] {
            let item = m.add_child(cs, i.to_string(), line, line);
            m.add_child(item, "name".into(), line, line);
        }
        m.finish();
        m
    }

    #[test]
    fn present_paths_and_nearest_ancestor() {
        let m = sample();
        let rows: [(&str, Option<u32>); 6] = [
            ("spec", Some(1)),
            ("spec.containers", Some(2)),
            ("spec.containers[1].name", Some(4)),
            // Missing field: reported where its parent is.
            ("spec.containers[1].image", Some(4)),
            ("spec.tolerations[0].value", Some(1)),
            ("", Some(1)),
        ];
        for (path, line) in rows {
            assert_eq!(m.line_of(&FieldPath::parse(path)), line, "{path}");
        }
        assert_eq!(
            m.value_line_of(&FieldPath::parse("spec.containers")),
            Some(3)
        );
        assert_eq!(m.value_line_of(&FieldPath::parse("spec.nope")), None);
        assert!(m.contains(&FieldPath::parse("spec.containers[0]")));
        assert!(!m.contains(&FieldPath::parse("spec.containers[2]")));
    }

    #[test]
    fn rebase_keeps_absolute_lines() {
        let m = sample();
        let item = m.rebase(&["spec".into(), "containers".into(), "1".into()]);
        assert_eq!(item.line_of(&FieldPath::parse("name")), Some(4));
        assert_eq!(item.line_of(&FieldPath::root()), Some(4));
        assert_eq!(item.len(), 2);
        let missing = m.rebase(&["spec".into(), "volumes".into()]);
        assert_eq!(missing.line_of(&FieldPath::parse("x")), Some(1));
        assert_eq!(LineMap::default().line_of(&FieldPath::root()), None);
    }
}
