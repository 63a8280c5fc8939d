//! The pools: the cluster's (keep, upgrade in place), those added, and the form that adds one.

use leptos::prelude::*;

use super::outcome::PoolRow;
use super::state::PlannerState;

/// The builds a Windows pool can be upgraded to in place.
const UPGRADE_BUILDS: &[(&str, &str)] = &[
    ("10.0.20348", "Windows Server 2022 (10.0.20348)"),
    ("10.0.26100", "Windows Server 2025 (10.0.26100)"),
];

/// The cluster's pools, then the added ones.
#[component]
pub fn PoolsTable(state: PlannerState) -> impl IntoView {
    view! {
        <table class="planner-pools">
            <thead>
                <tr>
                    <th scope="col">"Keep"</th>
                    <th scope="col">"Pool"</th>
                    <th scope="col">"Nodes"</th>
                    <th scope="col">"OS and build"</th>
                    <th scope="col">"Upgrade in place"</th>
                </tr>
            </thead>
            <tbody>
                {move || {
                    state.outcome.read().pools.iter().map(|p| pool_line(state, p)).collect_view()
                }}
                {move || {
                    state
                        .inputs
                        .read()
                        .added
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let what = if p.os == "windows" {
                                format!("windows {} (added)", p.build)
                            } else {
                                "linux (added)".to_string()
                            };
                            view! {
                                <tr class="added" data-pool=p.name.clone()>
                                    <td>
                                        <button
                                            type="button"
                                            aria-label=format!("remove added pool {}", p.name)
                                            on:click=move |_| state.remove_added(i)
                                        >
                                            "✕"
                                        </button>
                                    </td>
                                    <th scope="row">{p.name.clone()}</th>
                                    <td>{p.count}</td>
                                    <td>{what}</td>
                                    <td></td>
                                </tr>
                            }
                        })
                        .collect_view()
                }}
            </tbody>
        </table>
    }
}

/// One pool of the cluster; a function, not a component, so that the table's closure tracks what it
/// reads of the inputs.
fn pool_line(state: PlannerState, pool: &PoolRow) -> impl IntoView + use<> {
    let checked = state.kept(&pool.name);
    let label = format!("keep pool {}", pool.name);
    let upgrade_cell = if pool.windows {
        let chosen = state.upgrade_of(&pool.name);
        let name = pool.name.clone();
        let current = pool.kind.strip_prefix("windows ").unwrap_or("").to_string();
        view! {
            <select
                aria-label=format!("upgrade pool {} in place", pool.name)
                prop:value=chosen.clone()
                on:change=move |ev| state.upgrade(name.clone(), event_target_value(&ev))
            >
                <option value="">"no"</option>
                {UPGRADE_BUILDS
                    .iter()
                    .filter(|(b, _)| *b != current)
                    .map(|(b, name)| {
                        view! {
                            <option value=*b selected=chosen == *b>
                                {format!("to {name}")}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        }
        .into_any()
    } else {
        view! { <span>"—"</span> }.into_any()
    };
    let name = pool.name.clone();
    view! {
        <tr data-pool=pool.name.clone()>
            <td>
                <input
                    type="checkbox"
                    aria-label=label
                    prop:checked=checked
                    on:change=move |ev| state.keep(name.clone(), event_target_checked(&ev))
                />
            </td>
            <th scope="row">{pool.name.clone()}</th>
            <td>{pool.nodes}</td>
            <td>{pool.kind.clone()}</td>
            <td>{upgrade_cell}</td>
        </tr>
    }
}

/// The form that adds a pool.
#[component]
pub fn AddPoolForm(state: PlannerState) -> impl IntoView {
    let new = state.new_pool;
    view! {
        <fieldset class="planner-add">
            <legend>"Add a pool"</legend>
            <label>
                "Name "
                <input
                    type="text"
                    prop:value=move || new.name.get()
                    on:input=move |ev| new.name.set(event_target_value(&ev))
                />
            </label>
            <label>
                "OS "
                <select
                    prop:value=move || new.os.get()
                    on:change=move |ev| new.os.set(event_target_value(&ev))
                >
                    <option value="windows">"Windows"</option>
                    <option value="linux">"Linux"</option>
                </select>
            </label>
            <label>
                "Build "
                <select
                    prop:value=move || new.build.get()
                    on:change=move |ev| new.build.set(event_target_value(&ev))
                >
                    <option value="10.0.17763">"Windows Server 2019 (10.0.17763)"</option>
                    <option value="10.0.20348">"Windows Server 2022 (10.0.20348)"</option>
                    <option value="10.0.26100">"Windows Server 2025 (10.0.26100)"</option>
                </select>
            </label>
            <label>
                "Taint "
                <input
                    type="text"
                    prop:value=move || new.taint.get()
                    on:input=move |ev| new.taint.set(event_target_value(&ev))
                />
            </label>
            <label>
                "Nodes "
                <input
                    type="number"
                    min="1"
                    prop:value=move || new.count.get()
                    on:input=move |ev| new.count.set(event_target_value(&ev))
                />
            </label>
            <button type="button" on:click=move |_| state.add_pool()>
                "Add pool"
            </button>
        </fieldset>
    }
}
