//! The playground's explain field: paste an error message (an event, `kubectl describe pod`, a kubelet
//! or containerd log line, a `kubectl apply` error) and see it explained in the browser by the rules
//! crate's error signatures, with the playground's chosen cluster as context and its settings field's
//! settings shaping the fixes (`buildPinning`, `supportedBuilds`), as `winplace explain --settings` does.

use std::sync::Arc;

use leptos::prelude::*;
use winplace_rules::explain::{Match, explain_text_with};
use winplace_rules::{ClusterContext, Settings};

/// The field and its explanations.
#[component]
pub fn ExplainPanel(
    /// The cluster the playground evaluates against (none, the server's, pasted).
    context: Signal<Option<Arc<ClusterContext>>>,
    /// The playground's settings (the defaults while the settings field does not parse).
    settings: Signal<Settings>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let found = Memo::new(move |_| {
        text.with(|t| {
            if t.trim().is_empty() {
                return None;
            }
            Some(settings.with(|s| context.with(|c| explain_text_with(t, c.as_deref(), s))))
        })
    });
    view! {
        <section class="pg-explain" aria-labelledby="explain-title">
            <h3 id="explain-title">"Explain an error"</h3>
            <label for="explain-input">
                "Paste what the cluster says: an event, kubectl describe pod, a kubelet or containerd log, a kubectl apply error"
            </label>
            <textarea
                id="explain-input"
                rows="4"
                spellcheck="false"
                on:input=move |ev| text.set(event_target_value(&ev))
                prop:value=move || text.get()
            ></textarea>
            <p
                class="muted explain-settings"
                data-pinning=move || settings.with(|s| s.build_pinning.as_str())
            >
                "Fixes pin Windows builds as the settings below say: buildPinning "
                {move || settings.with(|s| s.build_pinning.as_str())}
            </p>
            <div class="explained" aria-live="polite">
                {move || match found.get() {
                    None => ().into_any(),
                    Some(matches) if matches.is_empty() => {
                        view! {
                            <p class="no-match" data-matches="0">
                                "No Windows placement cause: "
                                {winplace_rules::explain::CAUSES_LOOKED_FOR}
                                "."
                            </p>
                        }
                            .into_any()
                    }
                    Some(matches) => {
                        let count = matches.len().to_string();
                        // Counted first: the list's items take the matches, and the view macro
                        // may build them before the attribute (it does natively).
                        view! {
                            <ul class="explained-list" data-matches=count>
                                {matches
                                    .into_iter()
                                    .map(|m| view! { <Explained m /> })
                                    .collect_view()}
                            </ul>
                        }
                            .into_any()
                    }
                }}
            </div>
        </section>
    }
}

#[component]
fn Explained(m: Match) -> impl IntoView {
    let named = m.objects.named();
    let rule = match m.rule.clone() {
        Some(r) => view! {
            <p>
                "Caught before deployment by "<a href=format!("/rules#{r}")>
                    <code>{r.clone()}</code>
                </a>
            </p>
        }
        .into_any(),
        None => view! { <p>"No manifest rule catches it: it is the node's configuration."</p> }
            .into_any(),
    };
    view! {
        <li
            class="explained-item"
            data-cause=m.cause.as_str()
            data-sandbox=m.sandbox.to_string()
            data-rule=m.rule.clone().unwrap_or_default()
        >
            <p>
                <span class="cause">{m.cause.as_str()}</span>
                {m.sandbox.then_some(" (pod sandbox: the pause image)")}
                {m.line.map(|l| format!(" — line {l}"))}
            </p>
            <p>{m.meaning.clone()}</p>
            {(!named.is_empty())
                .then(|| view! { <p class="muted">"Names: "{named.join("; ")}</p> })}
            {rule}
            <p class="explained-fix">
                <strong>"Fix: "</strong>
                {m.fix.clone()}
            </p>
            <p class="muted">"Printed by "{m.source.clone()}</p>
        </li>
    }
}
