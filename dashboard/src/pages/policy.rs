//! (to be written)

use leptos::prelude::*;

/// The policy view.
#[component]
pub fn PolicyPage() -> impl IntoView {
    view! { <h2>"Policy"</h2> }
}
