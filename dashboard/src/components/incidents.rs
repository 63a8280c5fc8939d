//! What is failing now, as the audit explains it: one item per pod and cause, with the cluster's
//! message, what it means, the rule that would have caught it and the fix (the overview's "Failing
//! now", a workload's details).

use leptos::prelude::*;
use std::sync::Arc;
use winplace_rules::audit::Incident;

/// A list of incidents.
#[component]
pub fn IncidentList(incidents: Vec<Arc<Incident>>) -> impl IntoView {
    view! {
        <ul class="incidents">
            {incidents.into_iter().map(|i| view! { <IncidentItem incident=i /> }).collect_view()}
        </ul>
    }
}

#[component]
fn IncidentItem(incident: Arc<Incident>) -> impl IntoView {
    let i = incident;
    let since = i
        .since
        .clone()
        .map(|s| format!(", since {s}"))
        .unwrap_or_default();
    let count = if i.count > 1 {
        format!(" ×{}", i.count)
    } else {
        String::new()
    };
    let rule = i.rule.clone().map(|r| {
        view! {
            <p class="incident-rule">
                "Caught before deployment by " <a href=format!("/rules#{r}")>
                    <code>{r.clone()}</code>
                </a>
            </p>
        }
    });
    view! {
        <li
            class="incident"
            data-object=i.object.clone()
            data-cause=i.cause.as_str()
            data-sandbox=i.sandbox.to_string()
        >
            <p class="incident-head">
                <span class="cause">{i.cause.as_str()}</span>
                " "
                <strong>{i.object.clone()}</strong>
                {i.node.clone().map(|n| format!(" on {n}"))}
                {i.sandbox.then_some(" (pod sandbox: the pause image)")}
                <span class="muted">{count}{since}</span>
            </p>
            <p class="incident-meaning">{i.meaning.clone()}</p>
            <blockquote class="incident-message">{i.message.clone()}</blockquote>
            {rule}
            <p class="incident-fix">
                <strong>"Fix: "</strong>
                {i.fix.clone()}
            </p>
        </li>
    }
}
