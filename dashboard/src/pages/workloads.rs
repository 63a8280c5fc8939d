//! (to be written)

use leptos::prelude::*;

/// The workloads view.
#[component]
pub fn WorkloadsPage() -> impl IntoView {
    view! { <h2>"Workloads"</h2> }
}
