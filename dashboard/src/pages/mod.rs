//! One module per view.
//!
//! The playground and the planner are the only views that run the rules engine (the YAML and
//! infrastructure-file readers, every rule, fixes, plans, the Admission view), and the policy view is the
//! only other one that writes Kubernetes objects: they are lazy routes, whose code `cargo xtask build`
//! splits into chunks fetched the first time one of them is opened (`xtask/src/split.rs`). The overview,
//! nodes, workloads, placements and rules views show the server's answers and start without that code.

pub mod nodes;
pub mod overview;
pub mod placements;
pub mod planner;
pub mod playground;
pub mod policy;
pub mod rules;
pub mod workloads;

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};

/// Declares `$route`, whose view, `$page`, is loaded on demand (`view={Lazy::<$route>::new()}`).
macro_rules! lazy_page {
    ($(#[$doc:meta])* $route:ident => $page:path) => {
        $(#[$doc])*
        pub struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                $route
            }

            fn view(_route: Self) -> AnyView {
                untrack($page).into_any()
            }
        }
    };
}

lazy_page!(
    /// `/playground`: the rules engine in the page, and the Admission view.
    PlaygroundRoute => playground::PlaygroundPage
);
lazy_page!(
    /// `/planner`: plans computed in the page.
    PlannerRoute => planner::PlannerPage
);
lazy_page!(
    /// `/policy`: the settings form, whose taints bring k8s-openapi's timestamp formatting.
    PolicyRoute => policy::PolicyPage
);
