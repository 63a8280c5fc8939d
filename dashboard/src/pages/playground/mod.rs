//! Paste manifests, get findings, fixes and a diff: evaluated in the browser by the rules crate, with
//! no server round trip. The whole state lives in the URL fragment, so a link reproduces it.
//!
//! Data flow: each editor reports every edit; a 150 ms debounce commits the text to a signal; memos
//! derive settings, the pasted context and the evaluation from the committed signals.

mod admission;
mod context;
mod diff;
pub(crate) mod dom;
mod editor;
mod eval;
mod examples;
mod explain;
mod findings;
mod marks;
mod repair;
pub(crate) mod share;
mod state;

use leptos::prelude::*;

use admission::AdmissionPanel;
use context::{ContextPanel, SettingsPanel};
use editor::Editor;
use findings::FindingsList;
use repair::RepairPanel;
use state::{PlaygroundState, ResultsView};

/// The playground view.
#[component]
pub fn PlaygroundPage() -> impl IntoView {
    let state = PlaygroundState::new();
    let inputs = state.inputs;
    let evaluation = state.evaluation;
    view! {
        <section
            class="playground"
            aria-labelledby="playground-title"
            data-eval-ms=move || format!("{:.1}", evaluation.get().ms)
            data-eval-seq=move || evaluation.get().seq.to_string()
        >
            <PlaygroundHeader state />
            <p class="muted">
                "Evaluated in your browser by the same rules as the admission policy and the CLI; nothing is sent to the server."
            </p>
            <div class="pg-main">
                <div class="pg-editor">
                    <Editor
                        id="manifest"
                        label="Paste Kubernetes manifests (YAML or JSON)"
                        loaded=inputs.input.loaded
                        on_input=inputs.input.on_input()
                        marks=state.input_marks
                        jump=state.jump_input
                    />
                    <p class="eval-status muted">
                        {move || format!("Evaluated in {:.1} ms", evaluation.get().ms)}
                    </p>
                </div>
                <ResultsColumn state />
            </div>
            <RepairPanel repair=state.repair on_use=move |text| inputs.input.load(text) />
            <explain::ExplainPanel
                context=Signal::derive(move || state.chosen_context.get())
                settings=Signal::derive(move || inputs.effective.get())
            />
            <div class="pg-options">
                <ContextPanel
                    choice=inputs.choice
                    server=inputs.server
                    loaded=inputs.cluster.loaded
                    on_input=inputs.cluster.on_input()
                    marks=state.context_marks
                    jump=state.jump_context
                    problems=Signal::derive(move || inputs.pasted.get().problems)
                />
                <SettingsPanel
                    loaded=inputs.settings_text.loaded
                    on_input=inputs.settings_text.on_input()
                    error=Signal::derive(move || inputs.settings.get().err())
                />
            </div>
        </section>
    }
}

/// The title, the examples, and the link.
#[component]
fn PlaygroundHeader(state: PlaygroundState) -> impl IntoView {
    view! {
        <header class="pg-head">
            <h2 id="playground-title">"Playground"</h2>
            <label class="examples">
                "Examples "
                <select
                    id="examples"
                    on:change=move |ev| state.load_example(&event_target_value(&ev))
                    prop:value=""
                >
                    <option value="">"Choose a scenario…"</option>
                    {examples::EXAMPLES
                        .iter()
                        .map(|e| view! { <option value=e.id>{e.title}</option> })
                        .collect_view()}
                </select>
            </label>
            <button class="copy-link" on:click=move |_| state.copy_link()>
                "Copy link"
            </button>
            <span class="share-note" aria-live="polite">
                {move || state.share_note.get()}
            </span>
        </header>
    }
}

/// The findings, or what policy.wasm answers.
#[component]
fn ResultsColumn(state: PlaygroundState) -> impl IntoView {
    let view = state.results_view;
    let inputs = state.inputs;
    view! {
        <div class="pg-results">
            <div class="results-tabs" role="tablist" aria-label="Results">
                <button
                    role="tab"
                    id="tab-findings"
                    aria-selected=move || (view.get() == ResultsView::Findings).to_string()
                    on:click=move |_| view.set(ResultsView::Findings)
                >
                    "Findings"
                </button>
                <button
                    role="tab"
                    id="tab-admission"
                    aria-selected=move || (view.get() == ResultsView::Admission).to_string()
                    on:click=move |_| view.set(ResultsView::Admission)
                >
                    "Admission (policy.wasm)"
                </button>
            </div>
            <div hidden=move || view.get() != ResultsView::Findings>
                <FindingsList
                    findings=state.findings()
                    parse_errors=state.parse_errors()
                    context_findings=state.context_findings
                    selected=state.selected
                    on_show=move |source, line| state.show(source, line)
                    on_fix=move |f| state.propose(Some(f))
                    on_fix_all=move || state.propose(None)
                />
            </div>
            <Show when=move || view.get() == ResultsView::Admission>
                <AdmissionPanel
                    input=Signal::derive(move || inputs.input.committed.get())
                    settings=Signal::derive(move || inputs.settings_text.committed.get())
                    context=Signal::derive(move || state.chosen_context.get())
                />
            </Show>
        </div>
    }
}
