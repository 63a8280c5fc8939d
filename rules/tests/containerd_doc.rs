//! `docs/reference/lifecycle.md` ("containerd") and `rules/src/lifecycle/containerd.rs` hold the same rows:
//! id, versions, text, kind, date, Kubernetes minor, status and sources, in the same order; every source a
//! row cites is on the page's "containerd sources" list with the code's citation. Edit both together.

use std::path::Path;

use winplace_rules::lifecycle::containerd::{CONTAINERD, CONTAINERD_SOURCES, RuntimeFact};

fn section() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/lifecycle.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split("\n## containerd\n")
        .nth(1)
        .expect("a `## containerd` section")
        .to_string()
}

fn keys(cell: &str) -> Vec<String> {
    cell.split('[')
        .skip(1)
        .filter_map(|p| p.split_once(']').map(|(k, _)| k.to_string()))
        .collect()
}

/// (id, versions, what, kind, date, kubernetes, status, sources) of each table row.
type Row = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    Vec<String>,
);

fn page_rows(text: &str) -> Vec<Row> {
    text.lines()
        .filter_map(|line| {
            let c: Vec<&str> = line.split('|').map(str::trim).collect();
            // | # | versions | what | kind | date | kubernetes | status | source |
            if c.len() != 10 || !c[1].starts_with('C') || c[1][1..].parse::<u32>().is_err() {
                return None;
            }
            let first = |s: &str| s.split_whitespace().next().unwrap_or("").to_string();
            Some((
                c[1].into(),
                c[2].into(),
                c[3].into(),
                c[4].into(),
                first(c[5]),
                c[6].into(),
                c[7].into(),
                keys(c[8]),
            ))
        })
        .collect()
}

fn code_row(f: &RuntimeFact) -> Row {
    (
        f.id.into(),
        f.versions.to_string(),
        f.what.into(),
        f.kind.as_str().into(),
        f.date.map(|d| d.to_string()).unwrap_or_default(),
        f.kubernetes.map(|k| k.to_string()).unwrap_or_default(),
        f.status.as_str().into(),
        f.sources.iter().map(|s| s.to_string()).collect(),
    )
}

#[test]
fn the_code_holds_the_pages_containerd_rows() {
    let text = section();
    let page = page_rows(&text);
    let code: Vec<Row> = CONTAINERD.iter().map(code_row).collect();
    assert_eq!(page.len(), code.len(), "page rows: {page:#?}");
    for (p, c) in page.iter().zip(&code) {
        assert_eq!(p, c, "row {} differs (left: page, right: code)", c.0);
    }
}

#[test]
fn every_cited_source_is_listed_with_its_citation() {
    let text = section();
    let sources = text
        .split("### containerd sources")
        .nth(1)
        .expect("a `### containerd sources` list");
    for s in CONTAINERD_SOURCES {
        let line = sources
            .lines()
            .find(|l| l.contains(&format!("[{}]", s.key)))
            .unwrap_or_else(|| panic!("[{}] is not listed", s.key));
        assert!(
            line.contains(s.cite),
            "[{}]: {:?} not in {line:?}",
            s.key,
            s.cite
        );
    }
    for f in CONTAINERD {
        for key in f.sources {
            assert!(
                CONTAINERD_SOURCES.iter().any(|s| s.key == *key),
                "{}: [{key}] has no citation",
                f.id
            );
        }
    }
}

#[test]
fn the_check_can_fail() {
    let text = section().replace(
        "| end-of-life | 2026-07-03 |",
        "| end-of-life | 2026-07-04 |",
    );
    let rows = page_rows(&text);
    let c3 = rows.iter().find(|r| r.0 == "C3").expect("C3");
    assert_ne!(*c3, code_row(&CONTAINERD[2]));
}
