//! (to be written)

use leptos::prelude::*;

/// The rules view.
#[component]
pub fn RulesPage() -> impl IntoView {
    view! { <h2>"Rules"</h2> }
}
