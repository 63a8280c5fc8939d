//! The playground's state: what the user gave (three texts and the chosen cluster), what is derived
//! from it (settings, the pasted cluster, the evaluation, marks), and what the page does (select a
//! line, propose a repair, load an example, keep the link current).

use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;
use winplace_rules::{Checker, ClusterContext, Finding, ParseError, Settings};

use super::context::{ServerContext, load_server_context};
use super::editor::{Jump, Mark};
use super::eval::{self, ContextChoice, INPUT_FILE, PastedContext, RepairView};
use super::findings::{Selection, Source};
use super::share::{self, Shared};
use super::{dom, examples, marks};

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
pub struct Evaluated {
    pub findings: Arc<Vec<Finding>>,
    pub parse_errors: Arc<Vec<ParseError>>,
    /// Milliseconds spent in the rules crate.
    pub ms: f64,
    /// Counts evaluations (tests wait for it to move).
    pub seq: u32,
}

/// What the results column shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsView {
    /// The findings of the rules linked into this page.
    Findings,
    /// What policy.wasm answers (the Admission view).
    Admission,
}

/// A committed text and the text shown in its editor when set from outside.
#[derive(Clone, Copy)]
pub struct TextState {
    pub committed: RwSignal<String>,
    pub loaded: RwSignal<String>,
}

impl TextState {
    fn new(text: String) -> Self {
        TextState {
            committed: RwSignal::new(text.clone()),
            loaded: RwSignal::new(text),
        }
    }

    /// Puts `text` in the editor and commits it at once.
    pub fn load(self, text: String) {
        self.loaded.set(text.clone());
        self.committed.set(text);
    }

    /// The editor callback: commits after [`EVAL_DELAY`] of quiet.
    pub fn on_input(self) -> impl Fn(String) + Copy + Send + Sync + 'static {
        let debounce = dom::debouncer(EVAL_DELAY);
        move |text: String| debounce(Box::new(move || self.committed.set(text)))
    }
}

/// What the user gave, and the two readings every evaluation needs.
#[derive(Clone, Copy)]
pub struct Inputs {
    /// The manifests.
    pub input: TextState,
    /// The pasted cluster.
    pub cluster: TextState,
    /// The settings text.
    pub settings_text: TextState,
    /// Which cluster the manifests are checked against.
    pub choice: RwSignal<ContextChoice>,
    /// The server's cluster, once asked for.
    pub server: RwSignal<ServerContext>,
    /// The settings text read, or why it cannot be.
    pub settings: Memo<Result<Settings, String>>,
    /// The settings used: the defaults while the text does not read.
    pub effective: Memo<Settings>,
    /// The pasted cluster read.
    pub pasted: Memo<PastedContext>,
}

impl Inputs {
    fn new(start: Shared) -> Self {
        let settings_text = TextState::new(start.settings);
        let cluster = TextState::new(start.cluster);
        let settings = Memo::new(move |_| eval::parse_settings(&settings_text.committed.read()));
        Inputs {
            input: TextState::new(start.input),
            cluster,
            settings_text,
            choice: RwSignal::new(start.context),
            server: RwSignal::new(ServerContext::Idle),
            settings,
            effective: Memo::new(move |_| settings.get().unwrap_or_else(|_| Settings::default())),
            pasted: Memo::new(move |_| eval::parse_context(&cluster.committed.read())),
        }
    }

    /// Runs `f` with the cluster the choice selects (tracked).
    pub fn with_context<R>(self, f: impl FnOnce(Option<&ClusterContext>) -> R) -> R {
        let choice = self.choice.get();
        self.pasted.with(|p| {
            self.server.with(|server| match choice {
                ContextChoice::None => f(None),
                ContextChoice::Pasted => f(p.context.as_ref()),
                ContextChoice::Server => f(server.context()),
            })
        })
    }

    /// Runs `f` with the manifests, the chosen cluster and the settings used (tracked).
    pub fn with_inputs<R>(
        self,
        f: impl FnOnce(&str, Option<&ClusterContext>, &Settings) -> R,
    ) -> R {
        self.effective.with(|settings| {
            self.input
                .committed
                .with(|text| self.with_context(|ctx| f(text, ctx, settings)))
        })
    }
}

/// The playground page's state.
#[derive(Clone, Copy)]
pub struct PlaygroundState {
    /// What the user gave.
    pub inputs: Inputs,
    /// The latest evaluation of the manifests.
    pub evaluation: Memo<Arc<Evaluated>>,
    /// Findings of the pasted cluster's own objects.
    pub context_findings: Memo<Arc<Vec<Finding>>>,
    /// The cluster the Admission view grants the module (list_resources_all), as the findings use it.
    pub chosen_context: Memo<Option<Arc<ClusterContext>>>,
    /// Which view the results column shows.
    pub results_view: RwSignal<ResultsView>,
    /// The selected finding.
    pub selected: RwSignal<Option<Selection>>,
    /// The line shown last, marked in its editor.
    selected_line: RwSignal<Option<(Source, u32)>>,
    /// Line to show in the manifests' editor.
    pub jump_input: RwSignal<Option<Jump>>,
    /// Line to show in the pasted cluster's editor.
    pub jump_context: RwSignal<Option<Jump>>,
    /// Makes each jump new, so that showing the same line twice scrolls twice.
    nonce: StoredValue<u32>,
    /// Marked lines of the manifests.
    pub input_marks: Memo<Vec<Mark>>,
    /// Marked lines of the pasted cluster.
    pub context_marks: Memo<Vec<Mark>>,
    /// The repair proposed last.
    pub repair: RwSignal<Option<Arc<RepairView>>>,
    /// What the page says about its link.
    pub share_note: RwSignal<Option<String>>,
}

impl PlaygroundState {
    /// The state the URL fragment holds (the defaults, with a note, when it is damaged); starts the
    /// effects that fetch the server's cluster, clear the selection and keep the link current.
    pub fn new() -> Self {
        let (start, link_error) = match share::decode(&dom::fragment()) {
            Ok(state) => (state.unwrap_or_default(), None),
            Err(e) => (Shared::default(), Some(e)),
        };
        let inputs = Inputs::new(start);
        let evaluation = evaluation(inputs);
        let Inputs {
            cluster,
            choice,
            effective,
            ..
        } = inputs;
        let context_findings = Memo::new(move |_| {
            Arc::new(if choice.get() == ContextChoice::Pasted {
                eval::context_findings(&cluster.committed.read(), &effective.get())
            } else {
                Vec::new()
            })
        });
        let selected_line = RwSignal::new(None);
        let state = PlaygroundState {
            inputs,
            evaluation,
            context_findings,
            chosen_context: Memo::new(move |_| {
                inputs.with_context(|ctx| ctx.cloned().map(Arc::new))
            }),
            results_view: RwSignal::new(ResultsView::Findings),
            selected: RwSignal::new(None),
            selected_line,
            jump_input: RwSignal::new(None),
            jump_context: RwSignal::new(None),
            nonce: StoredValue::new(0),
            input_marks: input_marks(inputs, evaluation, selected_line),
            context_marks: context_marks(inputs, context_findings, selected_line),
            repair: RwSignal::new(None),
            share_note: RwSignal::new(link_error),
        };
        state.fetch_server_context_when_chosen();
        state.clear_selection_on_evaluation();
        state.keep_link_current();
        warm_up();
        state
    }

    /// Only the Arc is cloned: a thousand-document paste has thousands of findings.
    pub fn findings(self) -> Signal<Arc<Vec<Finding>>> {
        Signal::derive(move || self.evaluation.read().findings.clone())
    }

    /// The manifests' parse errors.
    pub fn parse_errors(self) -> Signal<Arc<Vec<ParseError>>> {
        Signal::derive(move || self.evaluation.read().parse_errors.clone())
    }

    /// Selects `line` of `source` and scrolls its editor to it.
    pub fn show(self, source: Source, line: u32) {
        self.nonce.update_value(|n| *n += 1);
        let jump = Some(Jump {
            line,
            nonce: self.nonce.get_value(),
        });
        self.selected_line.set(Some((source, line)));
        match source {
            Source::Input => self.jump_input.set(jump),
            Source::Context => self.jump_context.set(jump),
        }
    }

    /// Proposes the fix of `only`, or of every finding.
    pub fn propose(self, only: Option<Finding>) {
        let view = untrack(|| {
            self.inputs
                .with_inputs(|text, ctx, settings| eval::repair(text, ctx, settings, only.as_ref()))
        });
        self.repair.set(Some(Arc::new(view)));
    }

    /// Loads the example `id` (and its cluster, chosen).
    pub fn load_example(self, id: &str) {
        let Some(example) = examples::find(id) else {
            return;
        };
        self.inputs.input.load(example.input.to_string());
        if let Some(c) = example.cluster {
            self.inputs.cluster.load(c.to_string());
            self.inputs.choice.set(ContextChoice::Pasted);
        }
    }

    /// Copies the page's link to the clipboard and says so.
    pub fn copy_link(self) {
        let note = self.share_note;
        spawn_local(async move {
            let text = match dom::copy_text(&dom::href()).await {
                Ok(()) => "Link copied.".to_string(),
                Err(e) => format!("Cannot copy the link: {e}"),
            };
            note.set(Some(text));
        });
    }

    fn fetch_server_context_when_chosen(self) {
        let Inputs { choice, server, .. } = self.inputs;
        Effect::new(move |_| {
            if choice.get() == ContextChoice::Server
                && matches!(server.get_untracked(), ServerContext::Idle)
            {
                load_server_context(server);
            }
        });
    }

    fn clear_selection_on_evaluation(self) {
        Effect::new(move |_| {
            self.evaluation.track();
            self.context_findings.track();
            self.selected.set(None);
            self.selected_line.set(None);
        });
    }

    /// Rewrites the URL fragment after [`SHARE_DELAY`] of quiet; too large a state empties it.
    fn keep_link_current(self) {
        let Inputs {
            input,
            cluster,
            settings_text,
            choice,
            ..
        } = self.inputs;
        let share_note = self.share_note;
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
    }
}

/// The manifests checked against the chosen cluster with the settings used; every run is new (tests
/// wait for `seq` to move).
fn evaluation(inputs: Inputs) -> Memo<Arc<Evaluated>> {
    let seq = StoredValue::new(0u32);
    Memo::new_with_compare(
        move |_| {
            let t0 = dom::now_ms();
            let report = inputs.with_inputs(|text, ctx, settings| {
                Checker::builder()
                    .settings(settings)
                    .cluster(ctx)
                    .build()
                    .report(INPUT_FILE, text)
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
    )
}

fn input_marks(
    inputs: Inputs,
    evaluation: Memo<Arc<Evaluated>>,
    selected_line: RwSignal<Option<(Source, u32)>>,
) -> Memo<Vec<Mark>> {
    Memo::new(move |_| {
        let selected = match selected_line.get() {
            Some((Source::Input, line)) => Some(line),
            _ => None,
        };
        let evaluated = evaluation.get();
        inputs.input.committed.with(|text| {
            marks::line_marks(
                text,
                evaluated.parse_errors.iter().map(|e| e.line),
                &evaluated.findings,
                selected,
            )
        })
    })
}

fn context_marks(
    inputs: Inputs,
    context_findings: Memo<Arc<Vec<Finding>>>,
    selected_line: RwSignal<Option<(Source, u32)>>,
) -> Memo<Vec<Mark>> {
    Memo::new(move |_| {
        let selected = match selected_line.get() {
            Some((Source::Context, line)) => Some(line),
            _ => None,
        };
        let errors: Vec<u32> = inputs
            .pasted
            .read()
            .problems
            .iter()
            .filter_map(|p| p.line)
            .collect();
        inputs
            .cluster
            .committed
            .with(|text| marks::line_marks(text, errors, &context_findings.get(), selected))
    })
}

/// The engine first runs wasm with its baseline compiler and optimizes hot functions later: evaluating
/// the examples once the page is idle gets the parser and rules optimized before a large paste.
fn warm_up() {
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
}
