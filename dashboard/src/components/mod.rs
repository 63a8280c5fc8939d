//! Pieces several pages share.

pub mod copy;
pub mod download;
pub mod finding;
pub mod header;
pub mod images;
pub mod incidents;
pub mod live;
pub mod yaml;

use leptos::prelude::*;
use winplace_rules::Severity;
use winplace_rules::audit::PlacementState;
use winplace_rules::windows::builds::{WindowsVersion, build_display};

/// A Windows build label (`10.0.20348`) as people say it: `Windows Server 2022 (10.0.20348)`.
pub fn build_name(label: &str) -> String {
    match WindowsVersion::parse(label) {
        Some(v) => build_display(v.build),
        None => label.to_string(),
    }
}

/// `1 node`, `3 nodes`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A colored severity tag.
#[component]
pub fn SeverityBadge(severity: Severity) -> impl IntoView {
    view! { <span class=format!("sev sev-{}", severity.as_str())>{severity.as_str()}</span> }
}

/// A colored placement-state tag.
#[component]
pub fn StateBadge(state: PlacementState) -> impl IntoView {
    view! { <span class=format!("state state-{}", state.as_str())>{state.label()}</span> }
}

/// An error answer from the server, announced to assistive technology.
#[component]
pub fn ErrorNote(message: String) -> impl IntoView {
    view! {
        <p class="error" role="alert">
            {message}
        </p>
    }
}

/// Shown while the first answer is on its way.
#[component]
pub fn Loading(what: &'static str) -> impl IntoView {
    view! {
        <p class="muted" role="status">
            {format!("Loading {what}…")}
        </p>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_are_named_when_known_and_numbered_otherwise() {
        let cases = [
            ("10.0.17763", "2019"),
            ("10.0.20348", "2022"),
            ("10.0.26100", "2025"),
            ("10.0.12345", "10.0.12345"),
            ("not-a-build", "not-a-build"),
        ];
        for (label, want) in cases {
            assert!(
                build_name(label).contains(want),
                "{label} → {}",
                build_name(label)
            );
        }
    }

    #[test]
    fn states_use_the_api_spelling() {
        for (state, want) in [
            (PlacementState::Fine, "\"fine\""),
            (PlacementState::AtRisk, "\"at-risk\""),
            (PlacementState::Misplaced, "\"misplaced\""),
        ] {
            assert_eq!(serde_json::to_string(&state).ok().as_deref(), Some(want));
            assert_eq!(format!("\"{}\"", state.as_str()), want);
        }
    }
}
