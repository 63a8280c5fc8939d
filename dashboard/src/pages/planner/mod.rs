//! The planner: a cluster (Nodes or an infrastructure file) and workloads; toggle pools off, upgrade a
//! Windows pool to another build in place, add pools, pick a date (what the platforms have retired by
//! then goes, `docs/reference/lifecycle.md`), and see which workloads break or get fixed and the Windows
//! builds after. Computed in the browser by the rules crate's `plan` module (the same as `winplace
//! what-if`); the date is the one typed in (the page reads no clock); the state lives in the URL
//! (`#p=…`), so a link reproduces it.
//!
//! `inputs.rs` is what a link holds, `outcome.rs` what it evaluates to, `state.rs` the page's signals and
//! what its controls do; the page is layout over `pools.rs` and `results.rs`.

mod inputs;
mod outcome;
mod pools;
mod results;
mod state;

use leptos::prelude::*;

use pools::{AddPoolForm, PoolsTable};
use results::{BuildMatrix, Retirements, WorkloadChanges};
use state::PlannerState;

/// The planner view.
#[component]
pub fn PlannerPage() -> impl IntoView {
    let state = PlannerState::new();
    let inputs = state.inputs;
    let outcome = state.outcome;
    view! {
        <section class="planner" aria-labelledby="planner-title">
            <h1 id="planner-title">"Planner"</h1>
            <p>
                "What breaks, and what gets fixed, when node pools go away or come. The cluster is Nodes or an infrastructure file (eksctl, Karpenter, "
                <code>"az aks nodepool list -o json"</code>", "
                <code>"gcloud container node-pools list --format=json"</code>
                ", OpenShift MachineSet); the page computes the plan with the same rules as "
                <code>"winplace what-if"</code> ". Its address is the plan: copy it to share."
            </p>
            <div class="planner-inputs">
                <label>
                    "Cluster"
                    <textarea
                        class="planner-cluster"
                        rows="12"
                        spellcheck="false"
                        prop:value=move || inputs.read().cluster.clone()
                        on:input=move |ev| state.set_cluster(event_target_value(&ev))
                    />
                </label>
                <label>
                    "Workloads"
                    <textarea
                        class="planner-manifests"
                        rows="12"
                        spellcheck="false"
                        prop:value=move || inputs.read().manifests.clone()
                        on:input=move |ev| state.set_manifests(event_target_value(&ev))
                    />
                </label>
            </div>
            <ul class="planner-problems">
                {move || {
                    outcome
                        .read()
                        .problems
                        .iter()
                        .map(|p| view! { <li class="problem">{p.clone()}</li> })
                        .collect_view()
                }}
            </ul>
            <p class="planner-date">
                <label>
                    "Date "
                    <input
                        type="date"
                        class="planner-on"
                        prop:value=move || inputs.read().on.clone()
                        on:input=move |ev| state.set_date(event_target_value(&ev))
                    />
                </label>
                " What each node's platform (its labels: AKS, EKS, GKE) or Microsoft has retired by this date goes, as "
                <code>"winplace what-if --on DATE"</code>
                " does ("
                <a href="https://github.com/winplace/winplace/blob/main/docs/reference/lifecycle.md">
                    "the calendar and its sources"
                </a>
                "). Empty: no calendar."
            </p>
            <h2>"Pools"</h2>
            <PoolsTable state />
            <AddPoolForm state />
            <Retirements outcome />
            <h2>"Windows builds after the plan"</h2>
            <BuildMatrix outcome />
            <h2>"Workloads"</h2>
            <WorkloadChanges outcome />
        </section>
    }
}
