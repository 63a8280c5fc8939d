//! A line diff of the input against its repair, shown as unified hunks.
//!
//! Myers' shortest edit script per YAML document: a repair keeps the documents in order and edits few
//! lines in each, so diffing document by document keeps the edit distance (and the memory of the trace)
//! small even for a thousand-document paste.

/// What happened to one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// In both texts.
    Same,
    /// Only in the old text.
    Removed,
    /// Only in the new text.
    Added,
}

/// One line of the unified diff, or a gap of unchanged lines between hunks (`change` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The change; `None` for the `@@` header that starts a hunk.
    pub change: Option<Change>,
    /// 1-based line in the old text.
    pub old: Option<usize>,
    /// 1-based line in the new text.
    pub new: Option<usize>,
    /// The line without its end, or the hunk header.
    pub text: String,
}

/// Edit distance above which a document pair is shown as removed and added whole (bounds the trace).
const MAX_EDITS: usize = 1_000;

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

/// The changes that turn `old` into `new`, line by line, in order.
pub fn changes<'a>(old: &'a str, new: &'a str) -> Vec<(Change, &'a str)> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let (da, db) = (documents(&a), documents(&b));
    let mut out = Vec::new();
    if da.len() == db.len() {
        for (ra, rb) in da.into_iter().zip(db) {
            myers(&a[ra], &b[rb], &mut out);
        }
    } else {
        myers(&a, &b, &mut out);
    }
    out
}

/// Line ranges of the YAML documents of `lines` (split before each `---` line).
fn documents(lines: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if i > start && line.starts_with("---") {
            out.push(start..i);
            start = i;
        }
    }
    out.push(start..lines.len());
    out
}

/// Appends the shortest edit script from `a` to `b` to `out` (common prefix and suffix taken first).
fn myers<'a>(a: &[&'a str], b: &[&'a str], out: &mut Vec<(Change, &'a str)>) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    out.extend(a[..prefix].iter().map(|l| (Change::Same, *l)));
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let middle = shortest_edit(ma, mb).unwrap_or_else(|| {
        ma.iter()
            .map(|l| (Change::Removed, *l))
            .chain(mb.iter().map(|l| (Change::Added, *l)))
            .collect()
    });
    out.extend(middle);
    out.extend(a[a.len() - suffix..].iter().map(|l| (Change::Same, *l)));
}

/// Myers' O((N+M)·D) algorithm with a kept trace; `None` when the distance exceeds [`MAX_EDITS`].
fn shortest_edit<'a>(a: &[&'a str], b: &[&'a str]) -> Option<Vec<(Change, &'a str)>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let offset = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    // trace[d] is v over k in -d..=d before step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let at = |v: &[isize], k: isize| v[(k + offset) as usize];
    let mut found = None;
    'search: for d in 0..=max.min(MAX_EDITS) as isize {
        trace.push(v[(offset - d) as usize..=(offset + d) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x = if k == -d || (k != d && at(&v, k - 1) < at(&v, k + 1)) {
                at(&v, k + 1)
            } else {
                at(&v, k - 1) + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[(k + offset) as usize] = x;
            if x >= n && y >= m {
                found = Some(d);
                break 'search;
            }
            k += 2;
        }
    }
    let last = found?;
    let mut out = Vec::new();
    let (mut x, mut y) = (n, m);
    for d in (0..=last).rev() {
        let snap = &trace[d as usize];
        let get = |k: isize| {
            let i = k + d;
            if (0..snap.len() as isize).contains(&i) {
                snap[i as usize]
            } else {
                0
            }
        };
        let k = x - y;
        let prev_k = if k == -d || (k != d && get(k - 1) < get(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = get(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x.max(0) && y > prev_y.max(0) {
            out.push((Change::Same, a[(x - 1) as usize]));
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == prev_x {
                out.push((Change::Added, b[(y - 1) as usize]));
            } else {
                out.push((Change::Removed, a[(x - 1) as usize]));
            }
            x = prev_x;
            y = prev_y;
        }
    }
    out.reverse();
    Some(out)
}

/// Unified hunks of `old` → `new`: changed lines with [`CONTEXT`] lines around them, each hunk headed by
/// `@@ -old,len +new,len @@`. Empty when the texts are equal line for line.
pub fn unified(old: &str, new: &str) -> Vec<Row> {
    let all = changes(old, new);
    // Which entries are shown: changes and their context.
    let mut show = vec![false; all.len()];
    for (i, (c, _)) in all.iter().enumerate() {
        if *c != Change::Same {
            let from = i.saturating_sub(CONTEXT);
            let to = (i + CONTEXT + 1).min(all.len());
            show[from..to].iter_mut().for_each(|s| *s = true);
        }
    }
    let (mut o, mut n) = (1usize, 1usize);
    let mut rows = Vec::new();
    let mut i = 0;
    while i < all.len() {
        if !show[i] {
            let (c, _) = all[i];
            if c != Change::Added {
                o += 1;
            }
            if c != Change::Removed {
                n += 1;
            }
            i += 1;
            continue;
        }
        let end = (i..all.len()).find(|&j| !show[j]).unwrap_or(all.len());
        let hunk = &all[i..end];
        let olen = hunk.iter().filter(|(c, _)| *c != Change::Added).count();
        let nlen = hunk.iter().filter(|(c, _)| *c != Change::Removed).count();
        rows.push(Row {
            change: None,
            old: None,
            new: None,
            text: format!("@@ -{o},{olen} +{n},{nlen} @@"),
        });
        for (c, text) in hunk {
            let row = Row {
                change: Some(*c),
                old: (*c != Change::Added).then_some(o),
                new: (*c != Change::Removed).then_some(n),
                text: (*text).to_string(),
            };
            if *c != Change::Added {
                o += 1;
            }
            if *c != Change::Removed {
                n += 1;
            }
            rows.push(row);
        }
        i = end;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a change list to rebuild both sides: the script must reproduce old and new exactly.
    fn sides(script: &[(Change, &str)]) -> (Vec<String>, Vec<String>) {
        let old = script
            .iter()
            .filter(|(c, _)| *c != Change::Added)
            .map(|(_, l)| l.to_string())
            .collect();
        let new = script
            .iter()
            .filter(|(c, _)| *c != Change::Removed)
            .map(|(_, l)| l.to_string())
            .collect();
        (old, new)
    }

    #[test]
    fn scripts_rebuild_both_texts_with_the_fewest_edits() {
        // (old, new, number of added + removed lines in a shortest script)
        let rows = [
            ("", "", 0),
            ("a\nb\n", "a\nb\n", 0),
            ("a\nb\nc\n", "a\nc\n", 1),
            ("a\nc\n", "a\nb\nc\n", 1),
            ("a\nb\nc\na\nb\nb\na\n", "c\nb\na\nb\na\nc\n", 5),
            ("x\n", "y\n", 2),
            ("a\n---\nb\n", "a\n---\nb\nc\n---\nd\n", 3),
            (
                "kind: Pod\nspec:\n  a: 1\n---\nkind: X\n",
                "kind: Pod\nspec:\n  b: 2\n  a: 1\n---\nkind: X\n",
                1,
            ),
        ];
        for (old, new, edits) in rows {
            let script = changes(old, new);
            let (o, n) = sides(&script);
            assert_eq!(o, old.lines().collect::<Vec<_>>(), "{old:?} → {new:?}");
            assert_eq!(n, new.lines().collect::<Vec<_>>(), "{old:?} → {new:?}");
            let got = script.iter().filter(|(c, _)| *c != Change::Same).count();
            assert_eq!(got, edits, "{old:?} → {new:?}: {script:?}");
        }
    }

    #[test]
    fn unified_hunks_carry_line_numbers_and_context() {
        let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
        let new = old.replace("l10\n", "l10\nnew\n").replace("l20\n", "");
        let rows = unified(&old, &new);
        assert_eq!(rows[0].text, "@@ -8,6 +8,7 @@");
        let added = rows
            .iter()
            .find(|r| r.change == Some(Change::Added))
            .expect("an added row");
        assert_eq!(
            (added.old, added.new, added.text.as_str()),
            (None, Some(11), "new")
        );
        let removed = rows
            .iter()
            .find(|r| r.change == Some(Change::Removed))
            .expect("a removed row");
        assert_eq!((removed.old, removed.new), (Some(20), None));
        assert_eq!(rows[8].text, "@@ -17,4 +18,3 @@");
        assert!(unified(&old, &old).is_empty());
    }

    #[test]
    fn a_huge_distance_falls_back_to_replace_whole() {
        let old: String = (0..3_000).map(|i| format!("a{i}\n")).collect();
        let new: String = (0..3_000).map(|i| format!("b{i}\n")).collect();
        let script = changes(&old, &new);
        let (o, n) = sides(&script);
        assert_eq!((o.len(), n.len()), (3_000, 3_000));
        assert!(script.iter().all(|(c, _)| *c != Change::Same));
    }
}
