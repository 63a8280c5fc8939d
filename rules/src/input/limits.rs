//! Size limits on untrusted input, and a cheap pre-scan that enforces the nesting limit before the
//! YAML parser runs.
//!
//! Why a pre-scan: saphyr's parser recurses once per nesting level and clones anchored nodes
//! recursively when it resolves an alias, so a document nested a few hundred levels deep overflows a
//! 1 MiB stack (the wasm default) before any check on the parsed tree could run. The pre-scan reads
//! each line once, follows indentation, compact `- `/`? ` entries, `key:` openers, flow brackets,
//! quoted strings and block scalars, and computes an upper bound of the nesting depth that is exact for
//! ordinary YAML. The exact depth is checked again while the parsed tree is converted.

/// Limits on one call of [`parse`](super::parse). Inputs over a limit are refused with a
/// [`ParseError`](super::ParseError) at the line where the limit was crossed.
///
/// Aliases (`*name`) are expanded: each copy of the anchored node counts towards `max_nodes` before it
/// is made, so a document whose aliases would produce more nodes (the "billion laughs" attack) is refused
/// before it costs more than that. A document with aliases is also refused when its anchors could nest
/// deeper than twice `max_depth` once expanded (see [`prescan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest input in bytes (default 64 MiB: well above `kubectl get -A -o yaml` of a large namespace,
    /// far below what the browser or an admission request can hold).
    pub max_bytes: usize,
    /// Most documents in one input (default 100,000).
    pub max_documents: usize,
    /// Deepest nesting of mappings and sequences, the root counted as 1 (default 100; a Deployment is
    /// about 12 deep).
    pub max_depth: usize,
    /// Most nodes (scalars, mappings, sequences, mapping keys not counted) in one document, after alias
    /// expansion (default 1,000,000).
    pub max_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 64 * 1024 * 1024,
            max_documents: 100_000,
            max_depth: 100,
            max_nodes: 1_000_000,
        }
    }
}

/// A limit crossed during the pre-scan: 1-based line and column within the scanned text, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    /// 1-based line in the scanned text.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What was refused.
    pub message: String,
}

/// One open block collection: the column it starts at, and whether it is a sequence written at the same
/// column as its parent mapping's keys (`key:\n- item`).
#[derive(Clone, Copy)]
struct Block {
    col: usize,
    seq: bool,
    indentless_seq: bool,
}

/// Scanner state carried across lines.
struct Scan {
    max_depth: usize,
    blocks: Vec<Block>,
    flow: usize,
    /// Inside a quoted scalar that continues on the next line: the quote character.
    quote: Option<u8>,
    /// `Some((parent indent, content indent once known))` while inside a block scalar.
    block_scalar: Option<(isize, Option<usize>)>,
    /// The previous line left a node open (`key:`, `- `, properties only), so a deeper line may nest.
    opener: bool,
    deepest: usize,
    anchor_depths: Vec<usize>,
    first_alias: Option<(usize, usize)>,
    line: usize,
}

type ScanResult = Result<(), LimitError>;

impl Scan {
    fn new(max_depth: usize) -> Scan {
        Scan {
            max_depth,
            blocks: Vec::new(),
            flow: 0,
            quote: None,
            block_scalar: None,
            opener: true,
            deepest: 0,
            anchor_depths: Vec::new(),
            first_alias: None,
            line: 0,
        }
    }

    fn error(&self, col: usize, message: String) -> LimitError {
        LimitError {
            line: u32::try_from(self.line).unwrap_or(u32::MAX),
            column: u32::try_from(col + 1).unwrap_or(u32::MAX),
            message,
        }
    }

    /// Depth of a node written at the current position: open blocks, open flows, and the node itself.
    fn depth(&self) -> usize {
        self.blocks.len() + self.flow + 1
    }

    fn check(&mut self, col: usize) -> ScanResult {
        let d = self.depth();
        self.deepest = self.deepest.max(d);
        if d > self.max_depth {
            return Err(self.error(
                col,
                format!(
                    "nesting is deeper than the limit of {} levels",
                    self.max_depth
                ),
            ));
        }
        Ok(())
    }

    fn top_col(&self) -> Option<usize> {
        self.blocks.last().map(|b| b.col)
    }

    /// A block mapping (or a `?` complex key) starts at `col`.
    fn open_mapping(&mut self, col: usize) -> ScanResult {
        if self.top_col().is_none_or(|t| col > t) {
            self.blocks.push(Block {
                col,
                seq: false,
                indentless_seq: false,
            });
        }
        self.check(col)
    }

    /// A `- ` entry at `col`.
    fn open_sequence(&mut self, col: usize) -> ScanResult {
        match self.blocks.last() {
            // A sequence written at the column of its parent mapping's keys (`key:\n- item`).
            Some(b) if col == b.col && !b.seq => self.blocks.push(Block {
                col,
                seq: true,
                indentless_seq: true,
            }),
            // The same sequence (or an error the parser reports).
            Some(b) if col <= b.col => {}
            _ => self.blocks.push(Block {
                col,
                seq: true,
                indentless_seq: false,
            }),
        }
        self.check(col)
    }
}

fn is_blank(b: Option<&u8>) -> bool {
    matches!(b, None | Some(b' ' | b'\t'))
}

fn skip_spaces(line: &[u8], mut p: usize) -> usize {
    while matches!(line.get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    p
}

/// Skips a quoted scalar starting after its opening quote at `p`; returns the position after the
/// closing quote, or `None` when the scalar continues on the next line.
fn skip_quoted(line: &[u8], mut p: usize, quote: u8) -> Option<usize> {
    while let Some(&c) = line.get(p) {
        if quote == b'"' && c == b'\\' {
            p += 2;
            continue;
        }
        if c == quote {
            if quote == b'\'' && line.get(p + 1) == Some(&b'\'') {
                p += 2;
                continue;
            }
            return Some(p + 1);
        }
        p += 1;
    }
    None
}

/// Skips an anchor, tag or alias token (up to the next blank or flow indicator).
fn skip_token(line: &[u8], mut p: usize) -> usize {
    while let Some(&c) = line.get(p) {
        if matches!(c, b' ' | b'\t' | b',' | b'[' | b']' | b'{' | b'}') {
            break;
        }
        p += 1;
    }
    p
}

impl Scan {
    /// Reads flow content from `p` until the outermost flow collection closes or the line ends.
    /// Returns the position after the closing bracket, or `None` at the end of the line.
    fn flow_content(&mut self, line: &[u8], mut p: usize) -> Result<Option<usize>, LimitError> {
        // Whether the next character starts a token (after `[ { , :` or a blank).
        let mut token_start = true;
        while let Some(&c) = line.get(p) {
            if let Some(q) = self.quote {
                match skip_quoted(line, p, q) {
                    Some(end) => {
                        self.quote = None;
                        p = end;
                        token_start = false;
                        continue;
                    }
                    None => return Ok(None),
                }
            }
            match c {
                b'[' | b'{' => {
                    self.flow += 1;
                    self.check(p)?;
                    token_start = true;
                }
                b']' | b'}' => {
                    self.flow = self.flow.saturating_sub(1);
                    token_start = false;
                    if self.flow == 0 {
                        return Ok(Some(p + 1));
                    }
                }
                b',' | b':' | b' ' | b'\t' => token_start = true,
                b'#' if p == 0 || is_blank(line.get(p - 1)) => return Ok(None),
                b'"' | b'\'' if token_start => self.quote = Some(c),
                b'&' if token_start => {
                    self.anchor_depths.push(self.depth());
                    p = skip_token(line, p);
                    continue;
                }
                b'*' if token_start => {
                    self.first_alias.get_or_insert((self.line, p));
                    p = skip_token(line, p);
                    continue;
                }
                _ => token_start = false,
            }
            p += 1;
        }
        Ok(None)
    }

    /// Starts a flow collection or a quoted scalar at `p` (both may continue on later lines).
    /// Returns the position after it when it ends on this line.
    fn flow_or_quote(&mut self, line: &[u8], p: usize) -> Result<Option<usize>, LimitError> {
        match line.get(p) {
            Some(b'[' | b'{') => self.flow_content(line, p),
            Some(&q @ (b'"' | b'\'')) => match skip_quoted(line, p + 1, q) {
                Some(end) => Ok(Some(end)),
                None => {
                    self.quote = Some(q);
                    Ok(None)
                }
            },
            _ => Ok(Some(p)),
        }
    }

    /// Skips anchors and tags at `p`, recording anchors; returns the position after them.
    fn properties(&mut self, line: &[u8], mut p: usize) -> usize {
        while let Some(&c) = line.get(p) {
            match c {
                b'&' => self.anchor_depths.push(self.depth()),
                b'!' => {}
                _ => break,
            }
            p = skip_spaces(line, skip_token(line, p));
        }
        p
    }

    /// The value after `key: ` at `p` (a key cannot nest further on the same line in block style).
    fn value(&mut self, line: &[u8], p: usize) -> ScanResult {
        let p = self.properties(line, skip_spaces(line, p));
        match line.get(p) {
            None | Some(b'#') => self.opener = true,
            Some(b'|' | b'>') => {
                let parent = self.top_col().map_or(-1, |c| c as isize);
                self.block_scalar = Some((parent, None));
            }
            Some(b'*') => {
                self.first_alias.get_or_insert((self.line, p));
            }
            Some(b'[' | b'{' | b'"' | b'\'') => {
                // The value sits one level below the mapping, as `blocks.len() + 1` already counts.
                self.flow_or_quote(line, p)?;
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// One line in block context (no open flow collection or quoted scalar).
    fn block_line(&mut self, line: &[u8]) -> ScanResult {
        let indent = skip_spaces(line, 0);
        match line.get(indent) {
            None | Some(b'#') => return Ok(()),
            Some(b'%') if indent == 0 => return Ok(()),
            _ => {}
        }
        let mut p = indent;
        if indent == 0
            && (line.starts_with(b"---") || line.starts_with(b"..."))
            && is_blank(line.get(3))
        {
            self.blocks.clear();
            p = skip_spaces(line, 3);
            if p >= line.len() {
                self.opener = true;
                return Ok(());
            }
        } else {
            let starts_entry = line.get(indent) == Some(&b'-') && is_blank(line.get(indent + 1));
            while let Some(b) = self.blocks.last() {
                if b.col > indent || (b.col == indent && b.indentless_seq && !starts_entry) {
                    self.blocks.pop();
                } else {
                    break;
                }
            }
            if self.top_col().is_some_and(|t| indent > t) && !self.opener {
                // A continuation of a multi-line plain scalar (or an error the parser reports): it
                // cannot open a collection.
                return Ok(());
            }
        }
        self.opener = false;
        loop {
            p = skip_spaces(line, p);
            let c = line.get(p).copied();
            let next_blank = is_blank(line.get(p + 1));
            match c {
                None => {
                    self.opener = true;
                    return Ok(());
                }
                Some(b'#') => {
                    self.opener = true;
                    return Ok(());
                }
                Some(b'-') if next_blank => {
                    self.open_sequence(p)?;
                    p += 1;
                }
                Some(b'?') if next_blank => {
                    self.open_mapping(p)?;
                    p += 1;
                }
                Some(b':') if next_blank => {
                    p += 1;
                }
                Some(_) => return self.node(line, p),
            }
        }
    }

    /// A node in block context at `p`: properties, then a scalar, a flow collection or a `key: value`.
    fn node(&mut self, line: &[u8], p: usize) -> ScanResult {
        let start = p;
        let p = self.properties(line, p);
        match line.get(p) {
            None | Some(b'#') => {
                self.opener = true;
                Ok(())
            }
            Some(b'|' | b'>') => {
                let parent = self.top_col().map_or(-1, |c| c as isize);
                self.block_scalar = Some((parent, None));
                Ok(())
            }
            Some(b'*') => {
                self.first_alias.get_or_insert((self.line, p));
                let after = skip_spaces(line, skip_token(line, p));
                self.after_key_candidate(line, start, after)
            }
            Some(b'[' | b'{' | b'"' | b'\'') => {
                self.check(p)?;
                match self.flow_or_quote(line, p)? {
                    Some(after) => self.after_key_candidate(line, start, skip_spaces(line, after)),
                    None => Ok(()),
                }
            }
            Some(_) => {
                // A plain scalar; it is a key when `: ` (or `:` at the end) follows.
                let mut q = p;
                while let Some(&c) = line.get(q) {
                    if c == b':' && is_blank(line.get(q + 1)) {
                        self.open_mapping(start)?;
                        return self.value(line, q + 1);
                    }
                    if c == b'#' && is_blank(line.get(q.wrapping_sub(1))) {
                        break;
                    }
                    q += 1;
                }
                self.check(p)
            }
        }
    }

    /// After a quoted, flow or alias node at `start`: a `:` makes it a key.
    fn after_key_candidate(&mut self, line: &[u8], start: usize, p: usize) -> ScanResult {
        if line.get(p) == Some(&b':') && is_blank(line.get(p + 1)) {
            self.open_mapping(start)?;
            return self.value(line, p + 1);
        }
        Ok(())
    }

    fn scan_line(&mut self, line: &[u8]) -> ScanResult {
        if let Some((parent, content)) = self.block_scalar {
            let indent = skip_spaces(line, 0);
            if indent >= line.len() {
                return Ok(());
            }
            let inside = match content {
                Some(ci) => indent >= ci,
                None if (indent as isize) > parent => {
                    self.block_scalar = Some((parent, Some(indent)));
                    true
                }
                None => false,
            };
            if inside {
                return Ok(());
            }
            self.block_scalar = None;
        }
        if self.flow > 0 || self.quote.is_some() {
            let after = if self.flow > 0 {
                self.flow_content(line, 0)?
            } else if let Some(q) = self.quote {
                let end = skip_quoted(line, 0, q);
                if end.is_some() {
                    self.quote = None;
                }
                end
            } else {
                None
            };
            if let Some(after) = after {
                // A multi-line flow collection or quoted scalar used as a key.
                let rest = skip_spaces(line, after);
                if line.get(rest) == Some(&b':') && is_blank(line.get(rest + 1)) {
                    self.value(line, rest + 1)?;
                }
            }
            return Ok(());
        }
        self.block_line(line)
    }
}

/// Whether each line of `text` (one document, `\n` line ends) goes on with a flow collection or a quoted
/// scalar begun on an earlier line, as the pre-scan reads it: such a line's leading blanks are not
/// indentation. Lines after one the pre-scan cannot follow are `false`.
pub(crate) fn continuation_lines(text: &str) -> Vec<bool> {
    let mut scan = Scan::new(usize::MAX);
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        out.push(scan.block_scalar.is_none() && (scan.flow > 0 || scan.quote.is_some()));
        scan.line = i + 1;
        if scan.scan_line(line.as_bytes()).is_err() {
            break;
        }
    }
    out
}

/// What the pre-scan learned about a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prescan {
    /// Upper bound of the nesting depth, the root counted as 1.
    pub depth: usize,
    /// Number of anchors (`&name`).
    pub anchors: usize,
}

/// Refuses `text` (one document, `\n` line ends) when its nesting could exceed `limits.max_depth`, or
/// when it uses aliases and its anchors could nest deeper than twice `max_depth` once expanded.
///
/// The expanded bound is the deepest nesting plus, for every anchor, the depth of the tree below it:
/// aliases can chain (an anchored node containing an alias of another), so each anchor may add its
/// height once.
pub fn prescan(text: &str, limits: &Limits) -> Result<Prescan, LimitError> {
    let mut scan = Scan::new(limits.max_depth);
    for (i, line) in text.split('\n').enumerate() {
        scan.line = i + 1;
        scan.scan_line(line.as_bytes())?;
    }
    if let Some((line, col)) = scan.first_alias {
        let deepest = scan.deepest;
        let expanded = scan.anchor_depths.iter().fold(deepest, |acc, d| {
            acc.saturating_add(deepest.saturating_sub(*d) + 1)
        });
        let cap = limits.max_depth.saturating_mul(2);
        if expanded > cap {
            scan.line = line;
            return Err(scan.error(
                col,
                format!(
                    "aliases could nest {expanded} levels deep once expanded, over twice the limit of {} levels; \
                     expand the anchors by hand",
                    limits.max_depth
                ),
            ));
        }
    }
    Ok(Prescan {
        depth: scan.deepest,
        anchors: scan.anchor_depths.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(text: &str) -> usize {
        match prescan(text, &Limits::default()) {
            Ok(p) => p.depth,
            Err(e) => panic!("{text:?}: {e:?}"),
        }
    }

    #[test]
    fn bound_is_exact_for_ordinary_yaml() {
        // (text, real depth counting the root as 1)
        let rows = [
            ("a: b\n", 2),
            ("a:\n  b: c\n", 3),
            ("a:\n- x\n", 3),
            ("a:\n- x\nb: y\n", 3),
            ("- - - x\n", 4),
            ("- a: b\n  c: d\n", 3),
            ("a: [b, {c: [d]}]\n", 5),
            ("a: [\n  b,\n  {c: d}\n]\n", 4),
            ("a: |\n  - - - - x\n      - y\nb: c\n", 2),
            ("a: \"x\n  - - - - y\"\n", 2),
            ("a: long\n  plain - - text\n", 2),
            ("? - a\n: b\n", 3),
            ("--- {a: [b]}\n", 3),
            ("x: '[[[['\n", 2),
            ("x: a[0]\n", 2),
            (
                "spec:\n  template:\n    spec:\n      containers:\n      - name: app\n        env:\n        - {name: A, value: b}\n",
                9,
            ),
        ];
        for (text, want) in rows {
            assert_eq!(depth(text), want, "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_at_the_crossing_line() {
        let limits = Limits {
            max_depth: 5,
            ..Limits::default()
        };
        let rows = [
            ("a:\n  b:\n    c:\n      d:\n        e: f\n", 5),
            ("a: [[[[[x]]]]]\n", 1),
            ("- - - - - x\n", 1),
            ("a:\n  - [[\n  [[x]]]]\n", 3),
        ];
        for (text, line) in rows {
            let err = prescan(text, &limits).expect_err(text);
            assert_eq!(err.line, line, "{text:?}");
            assert!(
                err.message.contains("deeper than the limit of 5"),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn chained_aliases_count_each_anchor_height() {
        let limits = Limits {
            max_depth: 10,
            ..Limits::default()
        };
        // Depth 6 per anchor, three anchors chained: 6 + 3 * 5 = 21 > 20.
        let text = "a: &a [[[[x]]]]\nb: &b [[[[*a]]]]\nc: &c [[[[*b]]]]\nd: *c\n";
        let err = prescan(text, &limits).expect_err("chained aliases");
        assert_eq!(err.line, 2);
        // One anchor, used once: fine.
        assert!(prescan("a: &a [x]\nb: *a\n", &limits).is_ok());
    }
}
