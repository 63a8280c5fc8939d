//! A button that copies text to the clipboard.

use leptos::prelude::*;
use leptos::task::spawn_local;

/// What the button says after a click.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Idle,
    Copied,
    Failed,
}

/// Copies `text` with `navigator.clipboard.writeText`; `label` names what is copied for screen readers.
#[component]
pub fn CopyButton(text: String, label: String) -> impl IntoView {
    let outcome = RwSignal::new(Outcome::Idle);
    let on_click = move |_| {
        let text = text.clone();
        spawn_local(async move {
            let Some(window) = web_sys::window() else {
                return;
            };
            let promise = window.navigator().clipboard().write_text(&text);
            let result = wasm_bindgen_futures::JsFuture::from(promise).await;
            outcome.set(if result.is_ok() {
                Outcome::Copied
            } else {
                Outcome::Failed
            });
        });
    };
    view! {
        <button type="button" class="copy" aria-label=label on:click=on_click>
            {move || match outcome.get() {
                Outcome::Idle => "Copy",
                Outcome::Copied => "Copied",
                Outcome::Failed => "Copy failed: select the text",
            }}
        </button>
    }
}
