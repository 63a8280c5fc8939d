//! The README a person reads, and the pages it sends them to: every relative link in README.md,
//! CONTRIBUTING.md and docs/**/*.md names a file of the repository (and, with `#anchor`, a heading of that
//! file); the README stays short enough to read (at most 400 lines and 30 KB, the two commands within its
//! first 60 lines); docs/README.md lists every page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// README.md, CONTRIBUTING.md and every Markdown file under docs/.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    walk(&root().join("docs"), &mut out);
    out
}

/// The Markdown outside fenced code blocks, line by line with its 1-based number.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// Link targets on a line: `[text](target)` and `![alt](target)`, outside inline code spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_code = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                if let Some(end) = line[i + 2..].find(')') {
                    let target = line[i + 2..i + 2 + end].trim();
                    // `[text](target "title")`: the target is the first word.
                    let target = target.split_whitespace().next().unwrap_or("");
                    targets.push(target.trim_matches(['<', '>']).to_string());
                    i += 2 + end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    targets
}

/// GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens, and a
/// repeated heading numbered (`-1`, `-2`, …).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line
            .strip_prefix('#')
            .map(|h| h.trim_start_matches('#'))
            .filter(|h| h.starts_with(' '))
        else {
            continue;
        };
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while seen.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        seen.insert(unique);
    }
    seen
}

#[test]
fn every_relative_link_names_a_file_and_every_anchor_a_heading() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("readable page");
        let dir = page.parent().expect("a page is in a folder");
        for (number, line) in prose(&text) {
            for target in link_targets(line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    dir.join(file)
                };
                let shown = format!(
                    "{}:{number}: {target}",
                    page.strip_prefix(root()).unwrap_or(&page).display()
                );
                if !path.exists() {
                    broken.push(format!("{shown}: no such file"));
                } else if let Some(anchor) = anchor {
                    let headings = std::fs::read_to_string(&path)
                        .map(|t| anchors(&t))
                        .unwrap_or_default();
                    if !headings.contains(anchor) {
                        broken.push(format!("{shown}: no heading with that anchor"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 100,
        "only {checked} links read: the link reader is broken"
    );
}

/// docs/README.md is the index: it links every page of docs/ and docs/reference/, and docs/rules/ through
/// its own index (one page per rule is listed there, not here).
#[test]
fn the_docs_index_lists_every_page() {
    let docs = root().join("docs");
    let index = std::fs::read_to_string(docs.join("README.md")).expect("docs/README.md");
    let linked: BTreeSet<String> = prose(&index)
        .into_iter()
        .flat_map(|(_, line)| link_targets(line))
        .map(|t| t.split('#').next().unwrap_or("").to_string())
        .collect();
    let mut missing = Vec::new();
    for dir in ["", "reference/"] {
        let mut names: Vec<String> = std::fs::read_dir(docs.join(dir))
            .unwrap_or_else(|e| panic!("docs/{dir}: {e}"))
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .filter_map(|p| p.file_name()?.to_str().map(|n| format!("{dir}{n}")))
            .filter(|n| n != "README.md")
            .collect();
        names.push("rules/README.md".into());
        missing.extend(names.into_iter().filter(|n| !linked.contains(n)));
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/README.md does not list: {}",
        missing.join(", ")
    );
}

#[test]
fn the_readme_is_short_and_starts_with_the_two_commands() {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = text.lines().count();
    assert!(lines <= 400, "README.md has {lines} lines (at most 400)");
    assert!(
        text.len() <= 30 * 1024,
        "README.md is {} bytes (at most 30 KB)",
        text.len()
    );
    let head: Vec<&str> = text.lines().take(60).collect();
    for command in ["cargo xtask run", "cargo xtask test"] {
        assert!(
            head.iter().any(|l| l.trim() == command),
            "`{command}` is not on a line of its own in the README's first 60 lines"
        );
    }
}

#[test]
fn anchors_follow_github() {
    let a = anchors(
        "# `winplace check`\n## Admission latency (issues 13.5 and 16)\n```\n# not a heading\n```\n## A, b\n## A, b\n",
    );
    let want: BTreeSet<String> = [
        "winplace-check",
        "admission-latency-issues-135-and-16",
        "a-b",
        "a-b-1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(a, want);
    assert_eq!(
        link_targets("see [a](x.md#y), `[not](code)` and ![p](d/p.png \"t\")"),
        vec!["x.md#y", "d/p.png"]
    );
}
