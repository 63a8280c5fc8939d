//! The Admission view: what `policy.wasm` itself — the artifact the cluster runs, not the rules linked
//! into this page — answers for each pasted object, hosted in the browser as policy-server hosts it.
//!
//! For each object the policy's rules select (API group, version and resource, as the API server matches
//! them: docs/reference/kubewarden-hosting.md §3; the others are listed as not sent), the page builds the
//! AdmissionRequest the API server would send on CREATE (`winplace_policy_wasm::request`, shared with the
//! wasmtime host), calls the module's
//! `validate` with the playground's settings (checked first by the module's own `validate_settings`),
//! answers its host calls from the playground's cluster context, and shows the answer as policy-server
//! turns it into an AdmissionResponse: allowed or denied with the message, warnings, and for a mutating
//! ClusterAdmissionPolicy the JSONPatch and the patched object.
//!
//! Everything but the module calls is plain functions over JSON, tested natively.
//!
//! One file per job under `admission/`: `selection.rs` (what the API server sends), `module.rs` (the
//! module and its identity), `images.rs` (manifests from the server), `exchange.rs` (the module's reviews),
//! `answer.rs` (what policy-server makes of an answer), `report.rs` (what surrounds the reviews),
//! `context_note.rs` (when the Findings tab sees a cluster the policy is not granted). The host
//! calls are answered by `winplace_policy_wasm::host_answers`, as in the wasmtime host.

mod answer;
mod context_note;
mod exchange;
mod images;
mod module;
mod report;
mod selection;

use std::sync::Arc;

use leptos::prelude::*;
use winplace_policy_wasm::host_answers::HostAnswers;
use winplace_rules::ClusterContext;

use context_note::{ContextNotGranted, ungranted};
use exchange::{Evaluation, ExchangeRow, evaluate};
use images::{ImageResolution, resolved_images};
use module::{Module, ModuleRow, load};
use report::{HostContext, HostLists, NotSent, SettingsCheck};
use selection::{pasted, settings_json};

/// The Admission view. `input` and `settings` are the playground's committed texts; `context` its chosen
/// cluster.
#[component]
pub fn AdmissionPanel(
    input: Signal<String>,
    settings: Signal<String>,
    context: Signal<Option<Arc<ClusterContext>>>,
) -> impl IntoView {
    let module: RwSignal<Module, LocalStorage> = RwSignal::new_local(Module::Loading);
    let mutating = RwSignal::new(true);
    load(module, None);

    let settings_text = Memo::new(move |_| settings_json(&settings.get()).to_string());
    // The pasted objects, parsed once for the images and the requests.
    let objects = Memo::new(move |_| pasted(&input.get()));
    // Asked only when the user opts in: the playground stays offline otherwise, and the images are not
    // even read.
    let ask_server = RwSignal::new(false);
    let resolved = resolved_images(objects, ask_server);
    // The cluster's lists, built once per chosen context (not on every edit of the input).
    let context_answers = Memo::new(move |_| HostAnswers::for_context(context.get().as_deref()));
    let evaluation = Memo::new(move |_| {
        let Module::Ready(policy, _) = module.get() else {
            return None;
        };
        let manifests = resolved.get().and_then(Result::ok).unwrap_or_default();
        let host = context_answers.get().with_resolved_images(&manifests);
        Some(objects.with(|objects| evaluate(&policy, &settings_text.get(), objects, host)))
    });

    // Checked by the rules linked into the page, as the Findings tab checks: only for a chosen cluster.
    let not_granted = Memo::new(move |_| {
        input.with(|i| settings.with(|s| context.with(|c| ungranted(i, s, c.as_deref()))))
    });

    view! {
        <section class="admission" aria-label="Admission">
            <p class="muted">
                "What the policy module itself answers — the artifact policy-server runs, hosted in this page through waPC — for each pasted object the API server would send it on CREATE."
            </p>
            <ContextNotGranted ungranted=not_granted />
            <ModuleRow module />
            <label class="mutating">
                <input
                    type="checkbox"
                    id="admission-mutating"
                    prop:checked=move || mutating.get()
                    on:change=move |ev| mutating.set(event_target_checked(&ev))
                />
                " The ClusterAdmissionPolicy is mutating ("
                <code>"mutating: true"</code>
                ")"
            </label>
            {move || {
                evaluation
                    .get()
                    .map(|evaluation| view! { <Results evaluation mutating ask_server resolved /> })
            }}
        </section>
    }
}

/// One evaluation: the settings check, what the host was granted, each object's review, what was not sent.
#[component]
fn Results(
    evaluation: Evaluation,
    mutating: RwSignal<bool>,
    ask_server: RwSignal<bool>,
    resolved: LocalResource<Result<std::collections::BTreeMap<String, serde_json::Value>, String>>,
) -> impl IntoView {
    let Evaluation {
        validity,
        exchanges,
        host,
        skipped,
    } = evaluation;
    view! {
        <SettingsCheck validity />
        <HostContext lists=host.lists.len() />
        <ImageResolution ask=ask_server resolved />
        <HostLists host />
        <ol class="admission-results">
            {exchanges
                .into_iter()
                .map(|exchange| view! { <ExchangeRow exchange mutating /> })
                .collect_view()}
        </ol>
        <NotSent skipped />
    }
}
