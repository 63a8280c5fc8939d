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

use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use winplace_rules::{Checker, ClusterContext, Finding, ParseError, Settings};

use admission::AdmissionPanel;
use context::{ContextPanel, ServerContext, SettingsPanel, load_server_context};
use editor::{Editor, Jump};
use eval::{ContextChoice, INPUT_FILE};
use findings::{FindingsList, Selection, Source};
use repair::RepairPanel;
use share::Shared;

/// Quiet time after the last keystroke before the text is evaluated.
const EVAL_DELAY: Duration = Duration::from_millis(150);
/// Quiet time before the URL fragment is rewritten.
const SHARE_DELAY: Duration = Duration::from_millis(500);
/// When the engine is warmed up after the page loads.
const WARM_UP_DELAY: Duration = Duration::from_millis(400);
/// Larger states are not put in the URL (browsers and chat tools cut long links).
const MAX_SHARED_BYTES: usize = 1024 * 1024;

/// One evaluation of the manifests.
#[derive(Debug, Clone, Default)]
struct Evaluated {
    findings: Arc<Vec<Finding>>,
    parse_errors: Arc<Vec<ParseError>>,
    /// Milliseconds spent in the rules crate.
    ms: f64,
    /// Counts evaluations (tests wait for it to move).
    seq: u32,
}

/// Runs `f` with the context `choice` selects.
fn with_context<R>(
    choice: ContextChoice,
    pasted: Option<&ClusterContext>,
    server: &ServerContext,
    f: impl FnOnce(Option<&ClusterContext>) -> R,
) -> R {
    match choice {
        ContextChoice::None => f(None),
        ContextChoice::Pasted => f(pasted),
        ContextChoice::Server => f(server.context()),
    }
}

/// What the results column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ResultsView {
    /// The findings of the rules linked into this page.
    Findings,
    /// What policy.wasm answers (the Admission view).
    Admission,
}

/// A committed text and the text shown in its editor when set from outside.
#[derive(Clone, Copy)]
struct TextState {
    committed: RwSignal<String>,
    loaded: RwSignal<String>,
}

impl TextState {
    fn new(text: String) -> Self {
        TextState {
            committed: RwSignal::new(text.clone()),
            loaded: RwSignal::new(text),
        }
    }

    /// Puts `text` in the editor and commits it at once.
    fn load(self, text: String) {
        self.loaded.set(text.clone());
        self.committed.set(text);
    }

    /// The editor callback: commits after [`EVAL_DELAY`] of quiet.
    fn on_input(self) -> impl Fn(String) + Copy + Send + Sync + 'static {
        let debounce = dom::debouncer(EVAL_DELAY);
        move |text: String| debounce(Box::new(move || self.committed.set(text)))
    }
}

/// The playground view.
#[component]
pub fn PlaygroundPage() -> impl IntoView {
    let (start, link_error) = match share::decode(&dom::fragment()) {
        Ok(state) => (state.unwrap_or_default(), None),
        Err(e) => (Shared::default(), Some(e)),
    };
    let input = TextState::new(start.input);
    let cluster = TextState::new(start.cluster);
    let settings_text = TextState::new(start.settings);
    let choice = RwSignal::new(start.context);
    let server = RwSignal::new(ServerContext::Idle);

    let settings = Memo::new(move |_| eval::parse_settings(&settings_text.committed.read()));
    let effective = Memo::new(move |_| settings.get().unwrap_or_else(|_| Settings::default()));
    let pasted = Memo::new(move |_| eval::parse_context(&cluster.committed.read()));

    Effect::new(move |_| {
        if choice.get() == ContextChoice::Server
            && matches!(server.get_untracked(), ServerContext::Idle)
        {
            load_server_context(server);
        }
    });

    // The engine first runs wasm with its baseline compiler and optimizes hot functions later: evaluating
    // the examples once the page is idle gets the parser and rules optimized before a large paste.
    set_timeout(
        move || {
            let warm = examples::warm_up_text();
            let checker = Checker::builder().build();
            for _ in 0..3 {
                let _ = checker.report(INPUT_FILE, &warm);
            }
        },
        WARM_UP_DELAY,
    );

    let seq = StoredValue::new(0u32);
    let evaluation = Memo::new_with_compare(
        move |_| {
            let s = effective.get();
            let choice = choice.get();
            let t0 = dom::now_ms();
            let report = input.committed.with(|text| {
                pasted.with(|p| {
                    server.with(|sv| {
                        with_context(choice, p.context.as_ref(), sv, |ctx| {
                            Checker::builder()
                                .settings(&s)
                                .cluster(ctx)
                                .build()
                                .report(INPUT_FILE, text)
                        })
                    })
                })
            });
            let ms = dom::now_ms() - t0;
            seq.update_value(|n| *n += 1);
            Arc::new(Evaluated {
                findings: Arc::new(report.findings),
                parse_errors: Arc::new(report.parse_errors),
                ms,
                seq: seq.get_value(),
            })
        },
        |_, _| true,
    );
    let context_findings = Memo::new(move |_| {
        Arc::new(if choice.get() == ContextChoice::Pasted {
            eval::context_findings(&cluster.committed.read(), &effective.get())
        } else {
            Vec::new()
        })
    });
    // The cluster the Admission view grants the module (list_resources_all), as the findings use it.
    let chosen_context = Memo::new(move |_| {
        pasted.with(|p| {
            server.with(|sv| {
                with_context(choice.get(), p.context.as_ref(), sv, |ctx| {
                    ctx.cloned().map(Arc::new)
                })
            })
        })
    });
    let results_view = RwSignal::new(ResultsView::Findings);

    // Only the Arcs are cloned: a thousand-document paste has thousands of findings.
    let findings = Signal::derive(move || evaluation.read().findings.clone());
    let parse_errors = Signal::derive(move || evaluation.read().parse_errors.clone());

    // Selection and jumps.
    let selected: RwSignal<Option<Selection>> = RwSignal::new(None);
    let selected_line: RwSignal<Option<(Source, u32)>> = RwSignal::new(None);
    let jump_input = RwSignal::new(None::<Jump>);
    let jump_context = RwSignal::new(None::<Jump>);
    let nonce = StoredValue::new(0u32);
    Effect::new(move |_| {
        evaluation.track();
        context_findings.track();
        selected.set(None);
        selected_line.set(None);
    });
    let on_show = move |source: Source, line: u32| {
        nonce.update_value(|n| *n += 1);
        let jump = Some(Jump {
            line,
            nonce: nonce.get_value(),
        });
        selected_line.set(Some((source, line)));
        match source {
            Source::Input => jump_input.set(jump),
            Source::Context => jump_context.set(jump),
        }
    };
    let input_marks = Memo::new(move |_| {
        let selected = match selected_line.get() {
            Some((Source::Input, line)) => Some(line),
            _ => None,
        };
        let errors = parse_errors.get();
        input.committed.with(|text| {
            marks::line_marks(
                text,
                errors.iter().map(|e| e.line),
                &findings.get(),
                selected,
            )
        })
    });
    let context_marks = Memo::new(move |_| {
        let selected = match selected_line.get() {
            Some((Source::Context, line)) => Some(line),
            _ => None,
        };
        let errors: Vec<u32> = pasted
            .read()
            .problems
            .iter()
            .filter_map(|p| p.line)
            .collect();
        cluster
            .committed
            .with(|text| marks::line_marks(text, errors, &context_findings.get(), selected))
    });

    // Repairs.
    let repair = RwSignal::new(None::<Arc<eval::RepairView>>);
    let propose = move |only: Option<Finding>| {
        let s = effective.get_untracked();
        let view = input.committed.with_untracked(|text| {
            pasted.with_untracked(|p| {
                server.with_untracked(|sv| {
                    with_context(choice.get_untracked(), p.context.as_ref(), sv, |ctx| {
                        eval::repair(text, ctx, &s, only.as_ref())
                    })
                })
            })
        });
        repair.set(Some(Arc::new(view)));
    };

    // Sharing.
    let share_note = RwSignal::new(link_error);
    let share_debounce = dom::debouncer(SHARE_DELAY);
    Effect::new(move |_| {
        let state = Shared {
            version: share::VERSION,
            input: input.committed.get(),
            context: choice.get(),
            cluster: cluster.committed.get(),
            settings: settings_text.committed.get(),
        };
        share_debounce(Box::new(move || {
            let size = state.input.len() + state.cluster.len() + state.settings.len();
            if state
                == (Shared {
                    version: share::VERSION,
                    ..Shared::default()
                })
            {
                dom::replace_fragment("");
            } else if size > MAX_SHARED_BYTES {
                dom::replace_fragment("");
                share_note.set(Some(format!(
                    "{} KB is too large to share in a link; the link holds nothing.",
                    size / 1024
                )));
                return;
            } else {
                dom::replace_fragment(&share::encode(&state));
            }
            share_note.set(None);
        }));
    });
    let copy_link = move |_| {
        spawn_local(async move {
            let note = match dom::copy_text(&dom::href()).await {
                Ok(()) => "Link copied.".to_string(),
                Err(e) => format!("Cannot copy the link: {e}"),
            };
            share_note.set(Some(note));
        });
    };

    let on_example = move |ev| {
        let Some(example) = examples::find(&event_target_value(&ev)) else {
            return;
        };
        input.load(example.input.to_string());
        if let Some(c) = example.cluster {
            cluster.load(c.to_string());
            choice.set(ContextChoice::Pasted);
        }
    };

    view! {
        <section class="playground" aria-labelledby="playground-title"
            data-eval-ms=move || format!("{:.1}", evaluation.get().ms)
            data-eval-seq=move || evaluation.get().seq.to_string()>
            <header class="pg-head">
                <h2 id="playground-title">"Playground"</h2>
                <label class="examples">"Examples "
                    <select id="examples" on:change=on_example prop:value="">
                        <option value="">"Choose a scenario…"</option>
                        {examples::EXAMPLES.iter().map(|e| view! {
                            <option value=e.id>{e.title}</option>
                        }).collect_view()}
                    </select>
                </label>
                <button class="copy-link" on:click=copy_link>"Copy link"</button>
                <span class="share-note" aria-live="polite">{move || share_note.get()}</span>
            </header>
            <p class="muted">"Evaluated in your browser by the same rules as the admission policy and the CLI; nothing is sent to the server."</p>
            <div class="pg-main">
                <div class="pg-editor">
                    <Editor id="manifest" label="Paste Kubernetes manifests (YAML or JSON)"
                        loaded=input.loaded on_input=input.on_input()
                        marks=input_marks jump=jump_input/>
                    <p class="eval-status muted">
                        {move || format!("Evaluated in {:.1} ms", evaluation.get().ms)}
                    </p>
                </div>
                <div class="pg-results">
                    <div class="results-tabs" role="tablist" aria-label="Results">
                        <button role="tab" id="tab-findings"
                            aria-selected=move || (results_view.get() == ResultsView::Findings).to_string()
                            on:click=move |_| results_view.set(ResultsView::Findings)>"Findings"</button>
                        <button role="tab" id="tab-admission"
                            aria-selected=move || (results_view.get() == ResultsView::Admission).to_string()
                            on:click=move |_| results_view.set(ResultsView::Admission)>"Admission (policy.wasm)"</button>
                    </div>
                    <div hidden=move || results_view.get() != ResultsView::Findings>
                        <FindingsList findings parse_errors context_findings selected on_show
                            on_fix=move |f| propose(Some(f)) on_fix_all=move || propose(None)/>
                    </div>
                    <Show when=move || results_view.get() == ResultsView::Admission>
                        <AdmissionPanel input=Signal::derive(move || input.committed.get())
                            settings=Signal::derive(move || settings_text.committed.get())
                            context=Signal::derive(move || chosen_context.get())/>
                    </Show>
                </div>
            </div>
            <RepairPanel repair on_use=move |text| input.load(text)/>
            <explain::ExplainPanel context=Signal::derive(move || chosen_context.get())
                settings=Signal::derive(move || effective.get())/>
            <div class="pg-options">
                <ContextPanel choice server loaded=cluster.loaded on_input=cluster.on_input()
                    marks=context_marks jump=jump_context
                    problems=Signal::derive(move || pasted.get().problems)/>
                <SettingsPanel loaded=settings_text.loaded on_input=settings_text.on_input()
                    error=Signal::derive(move || settings.get().err())/>
            </div>
        </section>
    }
}
