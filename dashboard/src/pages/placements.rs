//! What `winplace serve --place` placed and how (`GET /api/placements`): each gated pod, its images,
//! and what was pinned, or why its gate was released without placing it (docs/placement.md).

use leptos::prelude::*;
use winplace_api::{PlacementOutcome, PlacementRow, PlacementsResponse};

/// The placements view.
#[component]
pub fn PlacementsPage() -> impl IntoView {
    let answer = LocalResource::new(crate::api::placements);
    view! {
        <section aria-labelledby="placements-title">
            <h1 id="placements-title">"Placements"</h1>
            {move || match answer.get() {
                None => view! { <p class="muted">"Loading…"</p> }.into_any(),
                Some(Err(error)) => view! { <p role="alert">{error}</p> }.into_any(),
                Some(Ok(r)) => view! { <Placements answer=r /> }.into_any(),
            }}
        </section>
    }
}

/// The answer: a sentence on the controller's state, then the table (or why there is none).
#[component]
fn Placements(answer: PlacementsResponse) -> impl IntoView {
    if !answer.enabled {
        return view! {
            <p class="empty" data-placements="off">
                "This server does not place pods: start it with "
                <code>"winplace serve --place"</code>
                " (and the policy setting "
                <code>"placementGate: true"</code>
                ") to have gated pods placed from their images' registries."
            </p>
        }
        .into_any();
    }
    let status = if answer.leading {
        "This replica holds the placement Lease and places gated pods."
    } else {
        "Another replica holds the placement Lease; this one waits to take over."
    };
    let rows = answer.placements;
    view! {
        <p data-leading=answer.leading.to_string()>{status}</p>
        {if rows.is_empty() {
            view! { <p class="empty">"No gated pod placed yet."</p> }.into_any()
        } else {
            view! { <PlacementTable rows=rows /> }.into_any()
        }}
    }
    .into_any()
}

/// One row per pod, newest first.
#[component]
fn PlacementTable(rows: Vec<PlacementRow>) -> impl IntoView {
    view! {
        <table class="placements">
            <caption class="sr-only">"Recent placements, newest first"</caption>
            <thead>
                <tr>
                    <th scope="col">"Pod"</th>
                    <th scope="col">"Images"</th>
                    <th scope="col">"Outcome"</th>
                    <th scope="col">"How"</th>
                    <th scope="col">"When"</th>
                </tr>
            </thead>
            <tbody>
                {rows.into_iter().map(|row| view! { <PlacementLine row=row /> }).collect_view()}
            </tbody>
        </table>
    }
}

#[component]
fn PlacementLine(row: PlacementRow) -> impl IntoView {
    let (outcome, how) = match row.outcome {
        PlacementOutcome::Placed => ("placed", row.pins.join("; ")),
        PlacementOutcome::Released => (
            "released",
            format!(
                "gate released ({}): {}",
                row.reason.as_deref().unwrap_or("unknown"),
                row.note.as_deref().unwrap_or("")
            ),
        ),
    };
    // The view takes its attribute and its text by value: one copy each.
    let data_pod = row.pod.clone();
    view! {
        <tr data-pod=data_pod data-outcome=outcome>
            <th scope="row">
                <code>{row.pod}</code>
            </th>
            <td>
                {row
                    .images
                    .into_iter()
                    .map(|i| {
                        view! {
                            <div>
                                <code>{i}</code>
                            </div>
                        }
                    })
                    .collect_view()}
            </td>
            <td>{outcome}</td>
            <td>{how}</td>
            <td>
                <time>{row.at}</time>
            </td>
        </tr>
    }
}
