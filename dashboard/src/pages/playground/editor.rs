//! A plain textarea with a line-number gutter and line marks (parse errors, the selected finding).
//!
//! Lines do not wrap and have a fixed height ([`LINE_PX`], the same in playground.css), so a line's
//! place is `(line - 1) × LINE_PX` minus the scroll offset: no measuring, no per-line elements.

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

/// What a mark on a line means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// A parse error or a bad context object is on this line.
    Error,
    /// The finding selected in the list is on this line.
    Selected,
}

/// A marked line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// 1-based line.
    pub line: u32,
    /// What the mark means.
    pub kind: MarkKind,
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
    Effect::new(move |_| lines.set(line_count(&loaded.read())));
    let gutter = Memo::new(move |_| numbers(lines.get()));
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
        scroll.set(el.scroll_top());
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
    view! {
        <div class="editor">
            <label class="editor-label" for=id>{label}</label>
            <div class="editor-body" style:height=format!("{}px", rows as i32 * LINE_PX + 2 * PAD_PX + 2)>
                <div class="editor-marks" aria-hidden="true" style:transform=shift>
                    {move || marks.get().into_iter().map(|m| view! {
                        <div class="mark"
                            class:mark-error=m.kind == MarkKind::Error
                            class:mark-selected=m.kind == MarkKind::Selected
                            data-line=m.line.to_string()
                            style:top=format!("{}px", PAD_PX + (m.line as i32 - 1) * LINE_PX)></div>
                    }).collect_view()}
                </div>
                <div class="editor-gutter" aria-hidden="true">
                    <pre style:transform=shift>{gutter}</pre>
                </div>
                <textarea id=id node_ref=area spellcheck="false" wrap="off"
                    autocomplete="off" autocapitalize="off"
                    prop:value=move || loaded.get()
                    on:input=move |_| {
                        let Some(el) = area.get_untracked() else { return };
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
                    }
                    on:scroll=move |_| {
                        if let Some(el) = area.get_untracked() {
                            scroll.set(el.scroll_top());
                        }
                    }></textarea>
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
}
