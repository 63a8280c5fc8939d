//! The proposed repair: what was fixed, the diff against the input, the repaired text with copy,
//! download, and "use in the editor".

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::diff::Change;
use super::dom;
use super::eval::RepairView;

/// Diff rows rendered (a whole-file rewrite of a large paste would be tens of thousands).
const MAX_ROWS: usize = 3_000;

/// The diff as `+`/`-`/` ` lines with old and new line numbers.
#[component]
fn DiffView(view: Arc<RepairView>) -> impl IntoView {
    let total = view.rows.len();
    let rows = view
        .rows
        .iter()
        .take(MAX_ROWS)
        .map(|r| {
            let (kind, sign) = match r.change {
                None => ("hunk", ""),
                Some(Change::Same) => ("same", " "),
                Some(Change::Removed) => ("removed", "-"),
                Some(Change::Added) => ("added", "+"),
            };
            let n = |l: Option<usize>| l.map(|l| l.to_string()).unwrap_or_default();
            view! {
                <div class="diff-line" data-kind=kind>
                    <span class="diff-old">{n(r.old)}</span>
                    <span class="diff-new">{n(r.new)}</span>
                    <span class="diff-text">{sign}{r.text.clone()}</span>
                </div>
            }
        })
        .collect_view();
    let more = (total > MAX_ROWS).then(|| {
        view! { <p class="muted">{format!("{} more diff lines not shown", total - MAX_ROWS)}</p> }
    });
    view! {
        <div class="diff" role="region" aria-label="Diff against the input">
            {if total == 0 { Some(view! { <p class="muted">"No change."</p> }) } else { None }}
            {rows}
            {more}
        </div>
    }
}

/// The panel; hidden while `repair` is `None`.
#[component]
pub fn RepairPanel(
    /// The proposed repair.
    repair: RwSignal<Option<Arc<RepairView>>>,
    /// Put the repaired text in the editor.
    on_use: impl Fn(String) + Copy + Send + Sync + 'static,
) -> impl IntoView {
    let status = RwSignal::new(String::new());
    let text = move || {
        repair
            .read()
            .as_ref()
            .map(|r| r.text.clone())
            .unwrap_or_default()
    };
    let copy = move |_| {
        let t = text();
        spawn_local(async move {
            status.set(match dom::copy_text(&t).await {
                Ok(()) => "Copied.".into(),
                Err(e) => format!("Cannot copy: {e}"),
            });
        });
    };
    let download = move |_| {
        status.set(
            match crate::components::download::download_text(
                "repaired.yaml",
                "application/yaml",
                &text(),
            ) {
                Ok(()) => "Downloaded repaired.yaml.".into(),
                Err(e) => format!("Cannot download: {e}"),
            },
        );
    };
    move || {
        repair.get().map(|r| {
            let summary = format!(
                "{} applied, {} skipped; {} errors left ({} fixable).",
                r.applied.len(),
                r.skipped.len(),
                r.remaining_errors,
                r.remaining_fixable
            );
            let text_value = r.text.clone();
            view! {
                <section
                    class="repair"
                    aria-labelledby="repair-title"
                    data-remaining-fixable=r.remaining_fixable.to_string()
                >
                    <h3 id="repair-title">"Repair: "{r.title.clone()}</h3>
                    <p class="repair-summary">{summary}</p>
                    <ul class="applied">
                        {r.applied.iter().map(|a| view! { <li>{a.clone()}</li> }).collect_view()}
                        {r
                            .skipped
                            .iter()
                            .map(|s| view! { <li class="skipped">"Skipped: "{s.clone()}</li> })
                            .collect_view()}
                    </ul>
                    <div class="repair-actions">
                        <button
                            class="use-repair"
                            on:click=move |_| {
                                on_use(text());
                                repair.set(None);
                            }
                        >
                            "Use in the editor"
                        </button>
                        <button class="copy-repair" on:click=copy>
                            "Copy"
                        </button>
                        <button class="download-repair" on:click=download>
                            "Download"
                        </button>
                        <button class="close-repair" on:click=move |_| repair.set(None)>
                            "Close"
                        </button>
                        <span class="status" aria-live="polite">
                            {move || status.get()}
                        </span>
                    </div>
                    <DiffView view=r.clone() />
                    <label for="repaired">"Repaired manifests"</label>
                    <textarea
                        id="repaired"
                        class="repaired"
                        readonly
                        rows="12"
                        wrap="off"
                        spellcheck="false"
                        prop:value=text_value
                    ></textarea>
                </section>
            }
        })
    }
}
