//! Which lines an editor marks: errors that stop reading (parse errors, bad context objects), each
//! finding by severity, and the selected entry, with the columns of each line's text for its span.

use std::collections::BTreeSet;

use winplace_rules::{Finding, Severity};

use super::editor::{Mark, MarkKind, text_columns};

/// The marks of `text`: one per line and kind (two findings of one severity on a line mark it once).
pub fn line_marks(
    text: &str,
    errors: impl IntoIterator<Item = u32>,
    findings: &[Finding],
    selected: Option<u32>,
) -> Vec<Mark> {
    let by_severity = |s: Severity| match s {
        Severity::Error => MarkKind::Error,
        Severity::Warning => MarkKind::Warning,
        Severity::Info => MarkKind::Info,
    };
    let wanted: BTreeSet<(u32, MarkKind)> = errors
        .into_iter()
        .map(|line| (line, MarkKind::Error))
        .chain(
            findings
                .iter()
                .filter_map(|f| Some((f.line?, by_severity(f.severity)))),
        )
        .chain(selected.map(|line| (line, MarkKind::Selected)))
        .filter(|(line, _)| *line >= 1)
        .collect();
    // One pass over the text for every marked line's columns (the set is sorted by line).
    let mut marks = Vec::with_capacity(wanted.len());
    let mut lines = text.split('\n').enumerate();
    let mut current: Option<(u32, (u32, u32))> = None;
    for (line, kind) in wanted {
        let columns = match current {
            Some((l, c)) if l == line => c,
            _ => {
                let c = lines
                    .by_ref()
                    .find(|(i, _)| *i + 1 == line as usize)
                    .map_or((0, 0), |(_, l)| text_columns(l));
                current = Some((line, c));
                c
            }
        };
        marks.push(Mark {
            line,
            kind,
            columns,
        });
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_marked_once_per_kind_with_its_text_columns() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: w}\nspec:\n  containers:\n  - name: c\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
        let report = winplace_rules::Checker::builder()
            .build()
            .report("f.yaml", text);
        assert!(report.findings.len() >= 3, "{:?}", report.findings);
        let marks = line_marks(text, [2, 2], &report.findings, Some(7));
        // Sorted by line and kind, no line twice with one kind.
        let keys: Vec<(u32, MarkKind)> = marks.iter().map(|m| (m.line, m.kind)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(keys, sorted);
        assert!(keys.contains(&(2, MarkKind::Error)));
        assert!(keys.contains(&(7, MarkKind::Selected)));
        for f in &report.findings {
            let line = f.line.expect("findings of text have lines");
            let kind = match f.severity {
                Severity::Error => MarkKind::Error,
                Severity::Warning => MarkKind::Warning,
                Severity::Info => MarkKind::Info,
            };
            let mark = marks
                .iter()
                .find(|m| m.line == line && m.kind == kind)
                .unwrap_or_else(|| panic!("{} on line {line} unmarked", f.rule));
            let source = text.split('\n').nth(line as usize - 1).unwrap_or("");
            assert_eq!(mark.columns, text_columns(source), "line {line}");
        }
        let image = marks.iter().find(|m| m.line == 7).expect("line 7");
        assert_eq!(image.columns, (4, 52));
    }

    #[test]
    fn lines_past_the_text_have_no_span() {
        let marks = line_marks("a\nb", [0, 9], &[], None);
        assert_eq!(
            marks,
            [Mark {
                line: 9,
                kind: MarkKind::Error,
                columns: (0, 0)
            }]
        );
    }
}
