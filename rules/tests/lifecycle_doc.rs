//! `docs/reference/lifecycle.md` and `rules/src/lifecycle/calendar.rs` hold the same calendar: every row
//! of the markdown table is a [`Fact`] with the same id, platform, text, build, kind, date, Kubernetes
//! version, status and sources, in the same order, read on the date the page says; every source key a
//! row cites is on the page's source list, and the citation the code gives for it is part of that line.
//! Edit both together; on a difference the failure prints the row as the code should hold it.

use std::path::Path;

use winplace_rules::lifecycle::{FACTS, Fact, SOURCES, cite};

fn page() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/lifecycle.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A calendar row as the page writes it, reduced to what the code holds.
#[derive(Debug, PartialEq)]
struct Row {
    id: String,
    platform: String,
    what: String,
    build: String,
    kind: String,
    preview: bool,
    date: Option<String>,
    kubernetes: Option<String>,
    status: String,
    sources: Vec<String>,
}

/// `1.34 (WMCO 10.21)` → `1.34`; `2026-03 (month only)` → `2026-03`; a cell that holds no date or
/// version (a note in parentheses) → `None`.
fn leading(cell: &str, is: impl Fn(&str) -> bool) -> Option<String> {
    let first = cell.split_whitespace().next()?;
    is(first).then(|| first.to_string())
}

fn is_date(t: &str) -> bool {
    let parts: Vec<&str> = t.split('-').collect();
    (parts.len() == 2 || parts.len() == 3)
        && parts[0].len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_version(t: &str) -> bool {
    let parts: Vec<&str> = t.split('.').collect();
    parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The `[KEY]`s of a source cell, before any `contra` (sources the row is disputed by).
fn keys(cell: &str) -> Vec<String> {
    let cell = cell.split(" contra ").next().unwrap_or(cell);
    let mut out = Vec::new();
    let mut rest = cell;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        out.push(rest[open + 1..open + close].to_string());
        rest = &rest[open + close + 1..];
    }
    out
}

fn page_rows(text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | # | platform | what | build | kind | date | kubernetes | status | source |
        if cells.len() != 11 {
            continue;
        }
        let id = cells[1];
        let is_row = id.len() >= 2
            && id.as_bytes()[0].is_ascii_uppercase()
            && id[1..].bytes().all(|b| b.is_ascii_digit());
        if !is_row {
            continue;
        }
        rows.push(Row {
            id: id.into(),
            platform: cells[2].into(),
            what: cells[3].replace("**", ""),
            build: cells[4].split_whitespace().next().unwrap_or("").into(),
            kind: cells[5].split_whitespace().next().unwrap_or("").into(),
            preview: cells[5].contains("(preview)"),
            date: leading(cells[6], is_date),
            kubernetes: leading(cells[7], is_version),
            status: cells[8].into(),
            sources: keys(cells[9]),
        });
    }
    rows
}

fn code_row(f: &Fact) -> Row {
    Row {
        id: f.id.into(),
        platform: f.platform.as_str().into(),
        what: f.what.into(),
        build: f.build.into(),
        kind: f.kind.as_str().into(),
        preview: f.preview,
        date: f.date.map(|d| d.to_string()),
        kubernetes: f.kubernetes.map(|k| k.to_string()),
        status: f.status.as_str().into(),
        sources: f.sources.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn the_code_holds_the_pages_calendar() {
    let text = page();
    let rows = page_rows(&text);
    assert!(
        rows.len() >= 40,
        "only {} rows read from the page",
        rows.len()
    );
    let code: Vec<Row> = FACTS.iter().map(code_row).collect();
    let mut problems = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        match code.iter().position(|c| c.id == row.id) {
            None => problems.push(format!("row {} is not in calendar.rs: {row:#?}", row.id)),
            Some(j) if code[j] != *row => problems.push(format!(
                "row {} differs:\n page: {row:#?}\n code: {:#?}",
                row.id, code[j]
            )),
            Some(j) if j != i => problems.push(format!(
                "row {} is at {j} in the code, {i} on the page",
                row.id
            )),
            Some(_) => {}
        }
    }
    for c in &code {
        if !rows.iter().any(|r| r.id == c.id) {
            problems.push(format!("calendar.rs row {} is not on the page", c.id));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The page's "Sources" section: each `[KEY]` with the text after it (up to the next key).
fn source_lines(text: &str) -> Vec<(String, String)> {
    let section = text
        .split("\n## Sources")
        .nth(1)
        .expect("a Sources section");
    let mut out = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("* [")) {
        for part in line.split("; [").map(|p| p.trim_start_matches("* [")) {
            if let Some((key, rest)) = part.split_once(']') {
                out.push((key.to_string(), rest.replace('`', "")));
            }
        }
    }
    out
}

#[test]
fn every_cited_source_is_on_the_page() {
    let text = page();
    let lines = source_lines(&text);
    // The read date the page states is every row's.
    let read = text
        .split("\n## Sources")
        .nth(1)
        .and_then(|s| s.split("Read ").nth(1))
        .and_then(|s| s.get(..10))
        .expect("Read YYYY-MM-DD under Sources");
    for f in FACTS {
        assert_eq!(f.read.to_string(), read, "{}", f.id);
    }
    for s in SOURCES {
        let line = lines
            .iter()
            .find(|(k, _)| k == s.key)
            .unwrap_or_else(|| panic!("source [{}] is not on the page", s.key));
        assert!(
            line.1.contains(s.cite),
            "[{}]: {:?} is not in {:?}",
            s.key,
            s.cite,
            line.1
        );
    }
    for f in FACTS {
        for key in f.sources {
            assert!(cite(key).is_some(), "{}: no citation for [{key}]", f.id);
            if let Some(section) = key.strip_prefix("A-CL-") {
                let log = lines.iter().find(|(k, _)| k == "A-CL-…").expect("[A-CL-…]");
                assert!(
                    log.1.contains(section),
                    "{}: [A-CL-…] has no section {section}",
                    f.id
                );
            } else {
                assert!(
                    lines.iter().any(|(k, _)| k == key),
                    "{}: [{key}] is not on the page",
                    f.id
                );
            }
        }
    }
}

#[test]
fn the_check_can_fail() {
    // A page row with another date is a difference.
    let text = page().replace("| retired | 2026-03-01 |", "| retired | 2026-03-02 |");
    let rows = page_rows(&text);
    let a1 = rows.iter().find(|r| r.id == "A1").expect("A1");
    assert_ne!(*a1, code_row(&FACTS[0]));
    assert_eq!(
        keys("[O-rn-10.21-pr], contra [O-wmco-4.22]"),
        ["O-rn-10.21-pr"]
    );
}
