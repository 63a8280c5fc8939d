//! The cluster the manifests are checked against (none, the server's, pasted) and the settings.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;
use winplace_api::ContextResponse;
use winplace_rules::ClusterContext;

use super::editor::{Editor, Jump, Mark};
use super::eval::{ContextChoice, Problem};

/// The server's cluster, as far as it has been fetched.
#[derive(Debug, Clone, Default)]
pub enum ServerContext {
    /// Not asked for yet.
    #[default]
    Idle,
    /// `GET /api/context` is under way.
    Loading,
    /// The answer.
    Ready(Arc<ContextResponse>),
    /// Why there is none.
    Failed(String),
}

impl ServerContext {
    /// The cluster, once fetched.
    pub fn context(&self) -> Option<&ClusterContext> {
        match self {
            ServerContext::Ready(r) => Some(&r.context),
            _ => None,
        }
    }
}

/// `GET /api/context`.
async fn fetch_context() -> Result<ContextResponse, String> {
    let response = gloo_net::http::Request::get("/api/context")
        .send()
        .await
        .map_err(|e| format!("cannot reach the server: {e}"))?;
    if !response.ok() {
        return Err(format!("the server answered {}", response.status()));
    }
    response
        .json::<ContextResponse>()
        .await
        .map_err(|e| format!("unexpected answer from the server: {e}"))
}

/// Fetches the server's cluster into `state`.
pub fn load_server_context(state: RwSignal<ServerContext>) {
    state.set(ServerContext::Loading);
    spawn_local(async move {
        state.set(match fetch_context().await {
            Ok(r) => ServerContext::Ready(Arc::new(r)),
            Err(e) => ServerContext::Failed(e),
        });
    });
}

/// What the server's cluster is (demo, snapshot, live) and how big.
#[component]
fn ServerStatus(server: RwSignal<ServerContext>) -> impl IntoView {
    move || match server.get() {
        ServerContext::Idle | ServerContext::Loading => {
            view! { <p class="server-status muted">"Loading the server's cluster…"</p> }.into_any()
        }
        ServerContext::Ready(r) => {
            let sizes = format!(
                "{} nodes, {} RuntimeClasses",
                r.context.nodes.len(),
                r.context.runtime_classes.len()
            );
            view! {
                <p class="server-status" data-source=r.meta.source.kind.as_str()>
                    <span class="badge">{r.meta.source.kind.as_str()}</span>
                    " "
                    {r.meta.source.description.clone()}
                    " — "
                    {sizes}
                </p>
            }
            .into_any()
        }
        ServerContext::Failed(e) => view! {
            <p class="server-status error">
                {e}" — evaluated without cluster context. "
                <button on:click=move |_| load_server_context(server)>"Retry"</button>
            </p>
        }
        .into_any(),
    }
}

/// Problems of a pasted text, with their lines.
#[component]
pub fn Problems(#[prop(into)] problems: Signal<Vec<Problem>>) -> impl IntoView {
    view! {
        <ul class="problems">
            {move || {
                problems
                    .get()
                    .into_iter()
                    .map(|p| {
                        view! {
                            <li class="problem error" data-line=p.line.map(|l| l.to_string())>
                                {p.line.map(|l| format!("line {l}: ")).unwrap_or_default()}
                                {p.message}
                            </li>
                        }
                    })
                    .collect_view()
            }}
        </ul>
    }
}

/// Radio buttons for the context and, for the pasted one, its editor.
#[component]
pub fn ContextPanel(
    /// The choice.
    choice: RwSignal<ContextChoice>,
    /// The server's cluster.
    server: RwSignal<ServerContext>,
    /// Text put in the pasted-context editor from outside.
    #[prop(into)]
    loaded: Signal<String>,
    /// Called after every edit of the pasted context.
    on_input: impl Fn(String) + Send + Sync + 'static,
    /// Marked lines of the pasted context.
    #[prop(into)]
    marks: Signal<Vec<Mark>>,
    /// Line of the pasted context to show.
    #[prop(into)]
    jump: Signal<Option<Jump>>,
    /// What is wrong in the pasted context.
    #[prop(into)]
    problems: Signal<Vec<Problem>>,
) -> impl IntoView {
    let options = [
        (ContextChoice::None, "None (settings only)"),
        (ContextChoice::Server, "This server's cluster"),
        (ContextChoice::Pasted, "Pasted Nodes and RuntimeClasses"),
    ];
    view! {
        <fieldset class="context-panel">
            <legend>"Cluster context"</legend>
            {options
                .into_iter()
                .map(|(value, text)| {
                    view! {
                        <label class="choice">
                            <input
                                type="radio"
                                name="context"
                                value=value.as_str()
                                prop:checked=move || choice.get() == value
                                on:change=move |_| choice.set(value)
                            />
                            " "
                            {text}
                        </label>
                    }
                })
                .collect_view()}
            <Show when=move || choice.get() == ContextChoice::Server>
                <ServerStatus server />
            </Show>
            <div class="pasted-context" class:hidden=move || choice.get() != ContextChoice::Pasted>
                <Editor
                    id="context"
                    label="Nodes and RuntimeClasses (YAML or JSON)"
                    rows=10
                    loaded
                    on_input
                    marks
                    jump
                />
                <Problems problems />
            </div>
        </fieldset>
    }
}

/// The settings box: YAML or JSON in the policy's settings schema, validated as typed.
#[component]
pub fn SettingsPanel(
    /// Text put in from outside.
    #[prop(into)]
    loaded: Signal<String>,
    /// Called after every edit.
    on_input: impl Fn(String) + Send + Sync + 'static,
    /// Why the settings are not used, when they are not.
    #[prop(into)]
    error: Signal<Option<String>>,
) -> impl IntoView {
    view! {
        <div class="settings-panel">
            <label for="settings">"Settings (YAML or JSON; empty = defaults)"</label>
            <textarea
                id="settings"
                rows="8"
                spellcheck="false"
                wrap="off"
                placeholder="windowsTaints: [{key: os, value: windows, effect: NoSchedule}]\nsupportedBuilds: [10.0.20348, 10.0.26100]\nmutate: false\ndisabledRules: []"
                prop:value=move || loaded.get()
                on:input=move |ev| on_input(event_target_value(&ev))
            ></textarea>
            {move || {
                error
                    .get()
                    .map(|e| {
                        view! {
                            <p class="settings-error error" role="alert">
                                "Settings not applied (defaults used): "
                                {e}
                            </p>
                        }
                    })
            }}
            <p class="muted">
                "Keys: windowsTaints, supportedBuilds, requireBuildSelector, imageRules, runtimeClasses, mutate, exemptNamespaces, disabledRules, severity."
            </p>
        </div>
    }
}
