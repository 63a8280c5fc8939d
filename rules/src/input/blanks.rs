//! Blanks go-yaml reads and saphyr refuses.
//!
//! go-yaml's scanner (libyaml's, ported) is lenient with blanks where YAML 1.2 is strict
//! (docs/reference/yaml-kubectl.md, "Blanks"):
//!
//! * the blanks that start a quoted scalar's continuation lines are dropped whatever they are: tabs,
//!   or fewer spaces than the block around the scalar is indented (`yaml_parser_scan_flow_scalar`
//!   checks only for document markers), so a Windows DaemonSet whose quoted PowerShell script is
//!   indented with tabs is applied by kubectl;
//! * inside a flow collection (`[…]`, `{…}`) that goes on over lines, blanks are never indentation:
//!   tabs and short indentation are read (`yaml_parser_scan_to_next_token` eats tabs when
//!   `flow_level > 0`);
//! * a tab may follow a `:` (`key:<tab>value`).
//!
//! saphyr refuses each of them (`tab cannot be used as indentation`, `invalid indentation in quoted
//! scalar`, `tabs disallowed within this context (block indentation)`, `invalid indentation`, `':'
//! must be followed by a valid YAML whitespace`) and has no option to accept them. [`repair`] rewrites
//! the text where saphyr's error points: the blanks become spaces, enough of them where indentation is
//! checked. The values are the same (those blanks are dropped either way), every line stays where it
//! was, so line numbers are exact; only columns after rewritten blanks move. The parse is then tried
//! again, within a budget of bytes re-read ([`REPAIR_BUDGET`]), so that hostile input cannot make it
//! quadratic. A tab that starts a line of a block mapping or sequence stays an error: go-yaml refuses
//! it too.

use super::limits::continuation_lines;

/// The most bytes re-parsed for repairs of one chunk: a manifest with a handful of tab-indented
/// scripts needs a few re-parses of a few kilobytes; a huge hostile chunk gets its error.
pub(crate) const REPAIR_BUDGET: usize = 16 * 1024 * 1024;

/// saphyr's errors about blanks go-yaml accepts.
const TAB_INDENT: &str = "tab cannot be used as indentation";
const SHORT_INDENT: &str = "invalid indentation in quoted scalar";
const BLOCK_TAB: &str = "tabs disallowed within this context (block indentation)";
const INDENTATION: &str = "invalid indentation";
const TAB_AFTER_COLON: &str = "':' must be followed by a valid YAML whitespace";

/// The text with the blanks that `error` (a saphyr error at 1-based `line`, 0-based `column` in
/// characters) is about rewritten as go-yaml reads them, or `None` when the error is not about such
/// blanks, or the text cannot be repaired.
pub(crate) fn repair(text: &str, error: &str, line: usize, column: usize) -> Option<String> {
    let at = offset(text, line, column)?;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    match error {
        // saphyr names the quote that starts the scalar.
        SHORT_INDENT => respace_scalar(text, at),
        // saphyr names the tab: spaces of the same count make it the indentation error, which names the
        // scalar's start on the next try.
        TAB_INDENT => detab_leading(text, start),
        // Between the tokens of a flow collection that goes on over lines (in a block one, go-yaml
        // refuses a tab or a short indentation too).
        BLOCK_TAB | INDENTATION => respace_flow(text, line),
        // `key:<tab>value`: the tabs after the colon, before where saphyr stopped.
        TAB_AFTER_COLON => {
            let before = &text[start..at];
            let blanks = before.len() - before.trim_end_matches([' ', '\t']).len();
            let colon = at - blanks;
            (blanks > 0 && before[..before.len() - blanks].ends_with(':')).then(|| {
                format!(
                    "{}{}{}",
                    &text[..colon],
                    text[colon..at].replace('\t', " "),
                    &text[at..]
                )
            })
        }
        _ => None,
    }
}

/// The line starting at byte `start` with the tabs of its leading blanks made spaces (one each).
fn detab_leading(text: &str, start: usize) -> Option<String> {
    let blanks = text[start..]
        .find(|c| c != ' ' && c != '\t')
        .map_or(text.len() - start, |n| n);
    let run = &text[start..start + blanks];
    run.contains('\t').then(|| {
        format!(
            "{}{}{}",
            &text[..start],
            run.replace('\t', " "),
            &text[start + blanks..]
        )
    })
}

/// Rewrites the leading blanks of every continuation line of the flow collection that 1-based `line`
/// goes on with: spaces, one more than the column of the content of the line that opened it (the block
/// around a flow collection is never indented further than that).
fn respace_flow(text: &str, line: usize) -> Option<String> {
    let continues = continuation_lines(text);
    let index = line.checked_sub(1)?;
    if !continues.get(index).copied().unwrap_or(false) {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let opening = (0..index).rev().find(|&i| !continues[i])?;
    let needed = content_column(lines[opening]) + 1;
    let mut out = String::with_capacity(text.len() + 64);
    let mut changed = false;
    for (i, l) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let blanks = l.len() - l.trim_start_matches([' ', '\t']).len();
        let content = &l[blanks..];
        let inside = i > opening && continues.get(i).copied().unwrap_or(false);
        let run = &l[..blanks];
        if inside
            && !content.is_empty()
            && !content.starts_with('#')
            && (run.contains('\t') || blanks < needed)
        {
            out.push_str(&" ".repeat(needed));
            out.push_str(content);
            changed = true;
        } else {
            out.push_str(l);
        }
    }
    changed.then_some(out)
}

/// The column of a line's content after its indentation and any `- ` or `? ` entry indicators.
fn content_column(line: &str) -> usize {
    let mut col = 0;
    let mut rest = line;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t']);
        col += rest.len() - trimmed.len();
        rest = trimmed;
        match rest.get(..2) {
            Some("- " | "? " | "-\t" | "?\t") => {
                col += 1;
                rest = &rest[1..];
            }
            _ => return col,
        }
    }
}

/// Byte offset of 1-based `line`, 0-based `column` (characters).
fn offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &text[start..];
    let within = rest
        .char_indices()
        .nth(column)
        .map_or(rest.len(), |(i, _)| i);
    Some(start + within)
}

/// Rewrites the blanks that start each continuation line of the quoted scalar whose opening quote is
/// at byte `at`: a blank-only line loses them, any other line gets the quote's column plus one in
/// spaces (never less than the block around the scalar requires, since the scalar starts inside it).
fn respace_scalar(text: &str, at: usize) -> Option<String> {
    let quote = text[at..].chars().next()?;
    if quote != '"' && quote != '\'' {
        return None;
    }
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let indent = text[line_start..at].chars().count() + 1;
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..=at]);
    let mut rest = text[at + 1..].char_indices().peekable();
    let body = &text[at + 1..];
    let mut copied = 0usize;
    let mut changed = false;
    while let Some((i, c)) = rest.next() {
        match c {
            // An escape: the next character is content (an escaped line break is still a break).
            '\\' if quote == '"' && rest.peek().is_some_and(|&(_, n)| n != '\n') => {
                rest.next();
            }
            '\'' if quote == '\'' && rest.peek().is_some_and(|&(_, n)| n == '\'') => {
                rest.next();
            }
            c if c == quote => {
                out.push_str(&body[copied..]);
                return changed.then_some(out);
            }
            '\n' => {
                let from = i + 1;
                let blanks = body[from..]
                    .find(|c| c != ' ' && c != '\t')
                    .unwrap_or(body.len() - from);
                let next = &body[from + blanks..];
                // A document marker ends the scalar for go-yaml too: leave the error.
                if blanks == 0 && (next.starts_with("---") || next.starts_with("...")) {
                    return None;
                }
                let wanted = if next.starts_with('\n') || next.is_empty() {
                    String::new()
                } else {
                    " ".repeat(indent)
                };
                if body[from..from + blanks] != wanted {
                    out.push_str(&body[copied..from]);
                    out.push_str(&wanted);
                    copied = from + blanks;
                    changed = true;
                }
                // Skip the blanks just handled.
                while rest.peek().is_some_and(|&(j, _)| j < from + blanks) {
                    rest.next();
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scalar_named_gets_spaces_and_keeps_its_lines() {
        let text = "a:\n  b: \"one\n\ttwo \\\"x\\\"\n\n  three\"\nc: 'it''s\n\tfine'\n";
        let at = text.find('"').expect("quote");
        let repaired = respace_scalar(text, at).expect("repaired");
        assert_eq!(
            repaired,
            "a:\n  b: \"one\n      two \\\"x\\\"\n\n      three\"\nc: 'it''s\n\tfine'\n"
        );
        assert_eq!(repaired.lines().count(), text.lines().count());
        let single = text.find("'it").expect("quote");
        let repaired = respace_scalar(text, single).expect("repaired");
        assert!(repaired.ends_with("c: 'it''s\n    fine'\n"), "{repaired}");
        // Nothing to do: no change, no repair.
        assert_eq!(respace_scalar("a: \"x\n    y\"\n", 3), None);
        // An unterminated scalar or a document marker inside it is left to its error.
        assert_eq!(respace_scalar("a: \"x\n\ty\n", 3), None);
        assert_eq!(respace_scalar("a: \"x\n---\n\ty\"\n", 3), None);
    }

    #[test]
    fn a_tab_error_becomes_an_indentation_error_on_the_same_line() {
        let text = "a:\n  b: \"one\n\t\ttwo\"\n";
        let repaired = repair(text, TAB_INDENT, 3, 0).expect("repaired");
        assert_eq!(repaired, "a:\n  b: \"one\n  two\"\n");
        assert_eq!(repair(text, "something else", 3, 0), None);
    }

    #[test]
    fn flow_continuations_and_tabs_after_a_colon() {
        let text = "k:\n- a: [1,\n\t2,\n3]\n  b:\tx\n";
        let repaired = repair(text, BLOCK_TAB, 3, 1).expect("repaired");
        assert_eq!(repaired, "k:\n- a: [1,\n   2,\n   3]\n  b:\tx\n");
        let repaired = repair(&repaired, TAB_AFTER_COLON, 5, 5).expect("repaired");
        assert!(repaired.ends_with("  b: x\n"), "{repaired}");
        // A tab that starts a block line is not a flow's: left to its error.
        assert_eq!(repair("a:\n\tb: 1\n", BLOCK_TAB, 2, 1), None);
    }
}
