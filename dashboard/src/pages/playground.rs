//! Paste manifests, get findings: evaluated in the browser by the rules crate.

use leptos::prelude::*;
use winplace_policy::{Settings, check_text};

/// A text area and the findings of what is in it.
#[component]
pub fn PlaygroundPage() -> impl IntoView {
    let (text, set_text) = signal(String::new());
    let report =
        Memo::new(move |_| check_text("input.yaml", &text.get(), None, &Settings::default()));
    view! {
        <section aria-labelledby="playground-title">
            <h2 id="playground-title">"Playground"</h2>
            <label for="manifest">"Paste Kubernetes manifests (YAML or JSON)"</label>
            <textarea id="manifest" rows="14" spellcheck="false"
                on:input=move |ev| set_text.set(event_target_value(&ev))
                prop:value=text></textarea>
            <ul class="findings" aria-live="polite">
                {move || report.get().findings.into_iter().map(|f| view! {
                    <li class="finding" data-rule=f.rule.clone() data-severity=f.severity.as_str()>
                        <span class="severity">{f.severity.as_str()}</span>" "
                        <code>{f.rule.clone()}</code>" "
                        <span class="line">{f.line.map(|l| format!("line {l}")).unwrap_or_default()}</span>" "
                        <span class="message">{f.message.clone()}</span>
                    </li>
                }).collect_view()}
                {move || report.get().parse_errors.into_iter().map(|e| view! {
                    <li class="parse-error">{format!("line {}:{}: {}", e.line, e.column, e.message)}</li>
                }).collect_view()}
            </ul>
        </section>
    }
}
