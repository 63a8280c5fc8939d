//! (to be written)

use leptos::prelude::*;

/// The overview view.
#[component]
pub fn OverviewPage() -> impl IntoView {
    view! { <h2>"Overview"</h2> <super::nodes::NodesPage/> }
}
