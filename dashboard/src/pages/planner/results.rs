//! What the plan does: the builds retired by its date, the Windows builds before and after, and the
//! workloads it breaks or fixes.

use leptos::prelude::*;

use super::outcome::Outcome;

/// What the calendar has retired by the plan's date; nothing without a date.
#[component]
pub fn Retirements(outcome: Memo<Outcome>) -> impl IntoView {
    move || {
        let o = outcome.read();
        let Some(retired) = o.report.retirements.as_ref() else {
            return ().into_any();
        };
        view! {
            <h2>"Retired by the date"</h2>
            <ul class="planner-retirements">
                {if retired.is_empty() {
                    view! {
                        <li class="none">"Nothing the calendar says has been retired by then."</li>
                    }
                        .into_any()
                } else {
                    retired
                        .iter()
                        .map(|r| {
                            let f = &r.retirement;
                            view! {
                                <li data-build=f.build.clone() data-platform=f.platform.as_str()>
                                    <strong>{format!("{} {}", f.platform.title(), f.build)}</strong>
                                    {format!(
                                        " {} {}: {} — {} node(s) of {}",
                                        f.kind.as_str(),
                                        f.date.clone().unwrap_or_default(),
                                        f.what,
                                        r.nodes,
                                        r.pools.join(", "),
                                    )}
                                    <div class="source">{format!("source: {}", f.source)}</div>
                                </li>
                            }
                        })
                        .collect_view()
                        .into_any()
                }}
            </ul>
        }
        .into_any()
    }
}

/// Nodes of each Windows build, now and after the plan.
#[component]
pub fn BuildMatrix(outcome: Memo<Outcome>) -> impl IntoView {
    view! {
        <table class="planner-matrix">
            <thead>
                <tr>
                    <th scope="col">"Build"</th>
                    <th scope="col">"Nodes now"</th>
                    <th scope="col">"Nodes after"</th>
                </tr>
            </thead>
            <tbody>
                {move || {
                    let o = outcome.read();
                    let mut builds: Vec<String> = o
                        .report
                        .builds_before
                        .keys()
                        .chain(o.report.builds_after.keys())
                        .cloned()
                        .collect();
                    builds.sort();
                    builds.dedup();
                    builds
                        .into_iter()
                        .map(|b| {
                            let before = o.report.builds_before.get(&b).copied().unwrap_or(0);
                            let after = o.report.builds_after.get(&b).copied().unwrap_or(0);
                            view! {
                                <tr data-build=b.clone()>
                                    <th scope="row">{b.clone()}</th>
                                    <td>{before}</td>
                                    <td class="after">{after}</td>
                                </tr>
                            }
                        })
                        .collect_view()
                }}
            </tbody>
        </table>
    }
}

/// The workloads whose errors the plan changes.
#[component]
pub fn WorkloadChanges(outcome: Memo<Outcome>) -> impl IntoView {
    move || {
        let o = outcome.read();
        if o.report.changes.is_empty() {
            return view! { <p class="planner-none">"No workload's errors change."</p> }.into_any();
        }
        view! {
            <ul class="planner-changes">
                {o
                    .report
                    .changes
                    .iter()
                    .map(|c| {
                        let verdict = if !c.new_errors().is_empty() {
                            "breaks"
                        } else if c.after.is_empty() {
                            "fixed"
                        } else {
                            "changes"
                        };
                        view! {
                            <li
                                class=format!("change {verdict}")
                                data-object=c.object.clone()
                                data-verdict=verdict
                            >
                                <strong>{verdict}</strong>
                                " "
                                <code>{c.object.clone()}</code>
                                ": errors ["
                                {c.before.join(", ")}
                                "] → ["
                                {c.after.join(", ")}
                                "]"
                                <ul class="fixes">
                                    {c
                                        .fixes
                                        .iter()
                                        .map(|f| view! { <li>{f.clone()}</li> })
                                        .collect_view()}
                                </ul>
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        }
        .into_any()
    }
}
