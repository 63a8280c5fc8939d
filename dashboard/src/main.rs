//! The winplace dashboard: a Leptos client-side app served by `winplace serve`.
//!
//! It links the rules crate, so the playground evaluates manifests in the browser with no server round trip;
//! the playground, the planner and the policy view are lazy routes, loaded from chunks of their own
//! (`pages/mod.rs`).

mod api;
mod components;
mod pages;
mod policy_host;

use components::header::{ConnectionBanner, DataStatus, SummaryData};
use components::live::{self, Live};
use leptos::prelude::*;
use leptos_router::components::{A, Route, Router, Routes};
use leptos_router::{Lazy, path};

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// The shell: header with navigation and data status, then the current view.
#[component]
fn App() -> impl IntoView {
    let live = Live::new();
    provide_context(live);
    let summary = LocalResource::new(move || {
        live.summary_rev.track();
        api::summary()
    });
    provide_context(SummaryData(summary));
    live::connect(live);
    view! {
        <Router>
            <a class="skip" href="#main">"Skip to content"</a>
            <header class="topbar">
                <a class="brand" href="/">"winplace"</a>
                <nav aria-label="Views">
                    <A href="/">"Overview"</A>
                    <A href="/nodes">"Nodes"</A>
                    <A href="/workloads">"Workloads"</A>
                    <A href="/placements">"Placements"</A>
                    <A href="/planner">"Planner"</A>
                    <A href="/playground">"Playground"</A>
                    <A href="/rules">"Rules"</A>
                    <A href="/policy">"Policy"</A>
                </nav>
                <DataStatus/>
            </header>
            <ConnectionBanner/>
            <main id="main" tabindex="-1">
                <Routes fallback=|| view! { <h1>"Not found"</h1> }>
                    <Route path=path!("/") view=pages::overview::OverviewPage/>
                    // `/nodes/{name}` and `/workloads/{namespace}/{kind}/{name}` open that node or row: one
                    // route each, so that opening another keeps the page (its filters) in place.
                    <Route path=path!("/nodes/:name?") view=pages::nodes::NodesPage/>
                    <Route path=path!("/workloads/:namespace?/:kind?/:name?") view=pages::workloads::WorkloadsPage/>
                    <Route path=path!("/placements") view=pages::placements::PlacementsPage/>
                    <Route path=path!("/planner") view={Lazy::<pages::PlannerRoute>::new()}/>
                    <Route path=path!("/playground") view={Lazy::<pages::PlaygroundRoute>::new()}/>
                    <Route path=path!("/rules") view=pages::rules::RulesPage/>
                    <Route path=path!("/policy") view={Lazy::<pages::PolicyRoute>::new()}/>
                </Routes>
            </main>
        </Router>
    }
}
