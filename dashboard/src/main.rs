//! The winplace dashboard: a Leptos client-side app served by `winplace serve`.
//!
//! It links the rules crate, so the playground evaluates manifests in the browser with no server round trip.

mod api;
mod pages;

use leptos::prelude::*;

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// The whole page: header, then the views.
#[component]
fn App() -> impl IntoView {
    view! {
        <header class="topbar">
            <h1>"winplace"</h1>
            <p class="tagline">"Windows and Linux workloads on the right nodes"</p>
        </header>
        <main>
            <pages::nodes::NodesPage/>
            <pages::playground::PlaygroundPage/>
        </main>
    }
}
