//! A plain textarea with a line-number gutter and line marks (parse errors, findings by severity, the
//! selected finding): a band behind the line, a bar in the gutter and a highlighted span under the line's
//! text.
//!
//! Lines do not wrap and have a fixed height ([`LINE_PX`], the same in playground.css), so a line's
//! place is `(line - 1) × LINE_PX` minus the scroll offset, and a column's is `column × 1ch` in the
//! textarea's monospace font: no measuring, no per-line elements. Only the marks near the visible lines
//! are in the DOM (a thousand-document paste can mark thousands of lines).

use leptos::html;
use leptos::prelude::*;
use leptos::web_sys;

/// Height of one line in pixels: `--pg-line` in playground.css.
pub const LINE_PX: i32 = 20;
/// Texts longer than this (UTF-16 units) are read from the textarea after a pause in typing, not on
/// every keystroke.
const BIG_TEXT: u32 = 256 * 1024;
/// The pause.
const BIG_TEXT_DELAY: std::time::Duration = std::time::Duration::from_millis(100);
/// Top padding of the textarea in pixels: `--pg-pad` in playground.css.
const PAD_PX: i32 = 8;
/// Columns a tab advances to a multiple of: `tab-size` in playground.css.
const TAB_COLUMNS: u32 = 2;

/// What a mark on a line means, weakest first (a line's strongest mark is drawn last).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MarkKind {
    /// An info finding is on this line.
    Info,
    /// A warning is on this line.
    Warning,
    /// An error finding, a parse error or a bad context object is on this line.
    Error,
    /// The entry selected in the findings list is on this line.
    Selected,
}

impl MarkKind {
    /// The CSS class suffix and `data-kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            MarkKind::Info => "info",
            MarkKind::Warning => "warning",
            MarkKind::Error => "error",
            MarkKind::Selected => "selected",
        }
    }
}

/// A marked line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// 1-based line.
    pub line: u32,
    /// What the mark means.
    pub kind: MarkKind,
    /// The line's text without its indentation and trailing blanks, as (first column, width) in
    /// display columns ([`text_columns`]); width 0 draws no span.
    pub columns: (u32, u32),
}

/// A request to select and show a line; a new `nonce` repeats a jump to the same line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jump {
    /// 1-based line.
    pub line: u32,
    /// Distinguishes two jumps to the same line.
    pub nonce: u32,
}

/// Number of lines of `text` as the textarea shows them (a final newline opens an empty last line).
pub fn line_count(text: &str) -> usize {
    text.bytes().filter(|b| *b == b'\n').count() + 1
}

/// Start and end of 1-based `line` in UTF-16 code units (what `setSelectionRange` counts), without
/// the line end; past the end, the end of the text.
pub fn line_span_utf16(text: &str, line: u32) -> (u32, u32) {
    let mut offset = 0u32;
    for (i, l) in text.split('\n').enumerate() {
        let len = l.trim_end_matches('\r').encode_utf16().count() as u32;
        if i + 1 == line as usize {
            return (offset, offset + len);
        }
        offset += l.encode_utf16().count() as u32 + 1;
    }
    let end = offset.saturating_sub(1);
    (end, end)
}

/// The text of `line` (without its line end) without its indentation and trailing blanks, as (first
/// column, width) in display columns: a tab advances to the next multiple of [`TAB_COLUMNS`], any other
/// character takes one column (wide characters are drawn wider, so a span on such a line falls short).
pub fn text_columns(line: &str) -> (u32, u32) {
    let line = line.trim_end_matches(['\r', ' ', '\t']);
    let mut column = 0u32;
    let mut start = None;
    for c in line.chars() {
        if start.is_none() && c != ' ' && c != '\t' {
            start = Some(column);
        }
        column = if c == '\t' {
            (column / TAB_COLUMNS + 1) * TAB_COLUMNS
        } else {
            column + 1
        };
    }
    match start {
        Some(s) => (s, column - s),
        None => (0, 0),
    }
}

/// The marks of lines `first..=last` of `marks` (sorted by line).
fn marks_between(marks: &[Mark], first: u32, last: u32) -> &[Mark] {
    let from = marks.partition_point(|m| m.line < first);
    let to = marks.partition_point(|m| m.line <= last);
    &marks[from..to.max(from)]
}

/// "1\n2\n…\nn" for the gutter.
fn numbers(n: usize) -> String {
    let mut s = String::with_capacity(n * 6);
    for i in 1..=n {
        if i > 1 {
            s.push('\n');
        }
        s.push_str(&i.to_string());
    }
    s
}

/// The editor. `loaded` puts text in from outside (examples, repairs, links); what the user types is
/// reported through `on_input` and is never written back (a 2 MB paste is not copied back and forth).
#[component]
pub fn Editor(
    /// The textarea's id.
    id: &'static str,
    /// Its visible label.
    label: &'static str,
    /// Visible lines.
    #[prop(default = 18)]
    rows: u32,
    /// Text set from outside.
    #[prop(into)]
    loaded: Signal<String>,
    /// Called with the whole text after every edit.
    on_input: impl Fn(String) + Send + Sync + 'static,
    /// Marked lines.
    #[prop(into)]
    marks: Signal<Vec<Mark>>,
    /// Line to select and scroll to.
    #[prop(into)]
    jump: Signal<Option<Jump>>,
) -> impl IntoView {
    let area = NodeRef::<html::Textarea>::new();
    let lines = RwSignal::new(1usize);
    let scroll = RwSignal::new(0i32);
    let scroll_left = RwSignal::new(0i32);
    Effect::new(move |_| lines.set(line_count(&loaded.read())));
    let gutter = Memo::new(move |_| numbers(lines.get()));
    // Marks sorted by line (the strongest of a line last); only the pages of lines around the visible one
    // are drawn, and a page changes every `rows` lines of scrolling, not on every scroll event.
    let sorted = Memo::new(move |_| {
        let mut m = marks.get();
        m.sort_by_key(|m| (m.line, m.kind));
        m
    });
    let page_px = (rows.max(1) as i32) * LINE_PX;
    let page = Memo::new(move |_| scroll.get().max(0) / page_px);
    let shown = Memo::new(move |_| {
        let p = page.get() as u32;
        let first = p.saturating_sub(1) * rows + 1;
        let last = (p + 2) * rows;
        sorted.with(|m| marks_between(m, first, last).to_vec())
    });
    let sync_scroll = move |el: &web_sys::HtmlTextAreaElement| {
        scroll.set(el.scroll_top());
        scroll_left.set(el.scroll_left());
    };
    Effect::new(move |_| {
        let Some(j) = jump.get() else { return };
        let Some(el) = area.get_untracked() else {
            return;
        };
        let (start, end) = line_span_utf16(&el.value(), j.line);
        let _ = el.focus();
        let _ = el.set_selection_range(start, end);
        let top = (j.line as i32 - 1) * LINE_PX - el.client_height() / 3;
        el.set_scroll_top(top.max(0));
        sync_scroll(&el);
    });
    let later = super::dom::debouncer(BIG_TEXT_DELAY);
    let on_input = StoredValue::new(on_input);
    let read = move |el: web_sys::HtmlTextAreaElement| {
        let text = el.value();
        let n = line_count(&text);
        // Same count: no gutter work (most keystrokes).
        if n != lines.get_untracked() {
            lines.set(n);
        }
        on_input.with_value(|f| f(text));
    };
    let shift = move || format!("translateY({}px)", -scroll.get());
    let shift_both = move || format!("translate({}px, {}px)", -scroll_left.get(), -scroll.get());
    let top_of = |line: u32| format!("{}px", PAD_PX + (line as i32 - 1) * LINE_PX);
    let on_wheel = move |ev: web_sys::WheelEvent| {
        let Some(el) = area.get_untracked() else {
            return;
        };
        let unit = if ev.delta_mode() == web_sys::WheelEvent::DOM_DELTA_LINE {
            LINE_PX as f64
        } else {
            1.0
        };
        let before = el.scroll_top();
        el.set_scroll_top(before + (ev.delta_y() * unit) as i32);
        // At either end the page scrolls instead, as over the text itself.
        if el.scroll_top() != before {
            ev.prevent_default();
            sync_scroll(&el);
        }
    };
    let on_text_input = move |_| {
        let Some(el) = area.get_untracked() else {
            return;
        };
        if el.text_length() < BIG_TEXT {
            read(el);
        } else {
            // Copying megabytes out of the textarea on every keystroke would slow typing.
            later(Box::new(move || {
                if let Some(el) = area.get_untracked() {
                    read(el);
                }
            }));
        }
    };
    view! {
        <div class="editor">
            <label class="editor-label" for=id>
                {label}
            </label>
            <div
                class="editor-body"
                style:height=format!("{}px", rows as i32 * LINE_PX + 2 * PAD_PX + 2)
            >
                <div class="editor-marks" aria-hidden="true" style:transform=shift>
                    {move || {
                        shown
                            .get()
                            .into_iter()
                            .map(|m| {
                                view! {
                                    <div
                                        class=format!("mark mark-{}", m.kind.as_str())
                                        data-line=m.line.to_string()
                                        style:top=top_of(m.line)
                                    ></div>
                                }
                            })
                            .collect_view()
                    }}
                </div>
                // The wheel over the numbers scrolls the text, as over the text itself.
                <div class="editor-gutter" aria-hidden="true" on:wheel=on_wheel>
                    <div class="gutter-lines" style:transform=shift>
                        <pre>{gutter}</pre>
                        {move || {
                            shown
                                .get()
                                .into_iter()
                                .filter(|m| m.kind != MarkKind::Selected)
                                .map(|m| {
                                    view! {
                                        <div
                                            class=format!("gutter-mark gutter-{}", m.kind.as_str())
                                            data-line=m.line.to_string()
                                            style:top=top_of(m.line)
                                        ></div>
                                    }
                                })
                                .collect_view()
                        }}
                    </div>
                </div>
                <div class="editor-text">
                    <div class="editor-spans" aria-hidden="true">
                        <div class="spans" style:transform=shift_both>
                            {move || {
                                shown
                                    .get()
                                    .into_iter()
                                    .filter(|m| m.kind != MarkKind::Selected && m.columns.1 > 0)
                                    .map(|m| {
                                        view! {
                                            <div
                                                class=format!("span span-{}", m.kind.as_str())
                                                data-line=m.line.to_string()
                                                style:top=top_of(m.line)
                                                style:left=format!(
                                                    "calc(var(--pg-pad) + {}ch)",
                                                    m.columns.0,
                                                )
                                                style:width=format!("{}ch", m.columns.1)
                                            ></div>
                                        }
                                    })
                                    .collect_view()
                            }}
                        </div>
                    </div>
                    <textarea
                        id=id
                        node_ref=area
                        spellcheck="false"
                        wrap="off"
                        autocomplete="off"
                        autocapitalize="off"
                        prop:value=move || loaded.get()
                        on:input=on_text_input
                        on:scroll=move |_| {
                            if let Some(el) = area.get_untracked() {
                                sync_scroll(&el);
                            }
                        }
                    ></textarea>
                </div>
            </div>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_spans_count_utf16_units() {
        // (text, line, span): setSelectionRange counts UTF-16 code units, and CRLF ends are not selected.
        let rows = [
            ("a\nbb\nccc", 1, (0, 1)),
            ("a\nbb\nccc", 2, (2, 4)),
            ("a\nbb\nccc", 3, (5, 8)),
            ("a\nbb\nccc", 9, (8, 8)),
            ("é𝄞\nx", 2, (4, 5)),
            ("a\r\nb\r\n", 1, (0, 1)),
            ("a\r\nb\r\n", 2, (3, 4)),
            ("", 1, (0, 0)),
        ];
        for (text, line, want) in rows {
            assert_eq!(line_span_utf16(text, line), want, "{text:?} line {line}");
        }
    }

    #[test]
    fn gutter_numbers_every_line() {
        assert_eq!(line_count(""), 1);
        assert_eq!(line_count("a\n"), 2);
        assert_eq!(numbers(3), "1\n2\n3");
        assert_eq!(numbers(line_count("x")), "1");
    }

    #[test]
    fn text_columns_skip_indentation_and_trailing_blanks() {
        // (line, (first column, width)): tabs advance to the next multiple of two, as tab-size: 2 draws them.
        let rows = [
            ("  image: x", (2, 8)),
            ("- name: c   ", (0, 9)),
            ("\timage: x", (2, 8)),
            (" \tx", (2, 1)),
            ("a\tb", (0, 3)),
            ("    ", (0, 0)),
            ("", (0, 0)),
            ("  é: 1\r", (2, 4)),
        ];
        for (line, want) in rows {
            assert_eq!(text_columns(line), want, "{line:?}");
        }
    }

    #[test]
    fn marks_between_takes_the_lines_asked_for() {
        let m = |line| Mark {
            line,
            kind: MarkKind::Error,
            columns: (0, 1),
        };
        let marks = [m(1), m(5), m(5), m(9), m(40)];
        let lines = |first, last| {
            marks_between(&marks, first, last)
                .iter()
                .map(|m| m.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(1, 5), [1, 5, 5]);
        assert_eq!(lines(6, 39), [9]);
        assert_eq!(lines(41, 90), Vec::<u32>::new());
        assert_eq!(lines(9, 2), Vec::<u32>::new());
    }
}
