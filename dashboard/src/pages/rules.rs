//! The rule catalogue, from `winplace_rules::catalog::RULES`, with this cluster's finding counts.

use crate::components::SeverityBadge;
use crate::components::header::SummaryData;
use leptos::prelude::*;
use winplace_rules::catalog::{self, Family, RULES, RuleMeta};

/// The rules view: one table per family.
#[component]
pub fn RulesPage() -> impl IntoView {
    let summary = SummaryData::get().0;
    let count = move |id: &'static str| {
        summary
            .get()
            .and_then(|r| r.ok())
            .map(|r| r.summary.findings_by_rule.get(id).copied().unwrap_or(0))
    };
    view! {
        <section aria-labelledby="rules-title">
            <h1 id="rules-title">"Rules"</h1>
            <p>
                {format!(
                    "{} rules in {} families. Each links to its documentation page.",
                    RULES.len(),
                    Family::ALL.len(),
                )}
            </p>
            {Family::ALL
                .into_iter()
                .map(|family| {
                    let rules: Vec<&'static RuleMeta> = RULES
                        .iter()
                        .filter(|r| r.family == family)
                        .collect();
                    let id = format!("family-{}", family.as_str());
                    view! {
                        <section
                            class="rule-family"
                            aria-labelledby=id.clone()
                            data-family=family.as_str()
                        >
                            <h2 id=id.clone()>{family.title()}</h2>
                            <table class="rules">
                                <caption class="sr-only">
                                    {format!("Rules of the {} family", family.title())}
                                </caption>
                                <thead>
                                    <tr>
                                        <th scope="col">"Rule"</th>
                                        <th scope="col">"Severity"</th>
                                        <th scope="col">"What it detects"</th>
                                        <th scope="col">"Fix"</th>
                                        <th scope="col">"In this cluster"</th>
                                    </tr>
                                </thead>
                                <tbody>
                                    {rules
                                        .into_iter()
                                        .map(|r| {
                                            view! {
                                                <tr class="rule" data-rule=r.id>
                                                    <th scope="row">
                                                        <a
                                                            href=catalog::doc_url(r.id)
                                                            target="_blank"
                                                            rel="noopener"
                                                        >
                                                            <code>{r.id}</code>
                                                        </a>
                                                        <div class="rule-title">{r.title}</div>
                                                    </th>
                                                    <td>
                                                        <SeverityBadge severity=r.severity />
                                                    </td>
                                                    <td>
                                                        {r.summary}
                                                        {r.needs_context.then_some(" (needs cluster context)")}
                                                    </td>
                                                    <td>{if r.fixable { "automatic" } else { "—" }}</td>
                                                    <td class="rule-count">
                                                        {move || match count(r.id) {
                                                            Some(0) => {
                                                                view! { <span class="muted">"0"</span> }.into_any()
                                                            }
                                                            Some(n) => {
                                                                view! {
                                                                    <a href=format!(
                                                                        "/workloads?rule={}&state=all",
                                                                        r.id,
                                                                    )>{n}</a>
                                                                }
                                                                    .into_any()
                                                            }
                                                            None => {
                                                                view! { <span class="muted">"…"</span> }.into_any()
                                                            }
                                                        }}
                                                    </td>
                                                </tr>
                                            }
                                        })
                                        .collect_view()}
                                </tbody>
                            </table>
                        </section>
                    }
                })
                .collect_view()}
        </section>
    }
}
