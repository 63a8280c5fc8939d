//! The retirement calendar applied to a planned cluster: the Windows nodes whose platform has retired
//! their build by the plan's date (or does not offer it at the plan's Kubernetes version) go, and each
//! retirement is named with its date and source (`docs/reference/lifecycle.md`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use serde::{Deserialize, Serialize};

use crate::lifecycle::{self, Date, KubeMinor, Retirement};
use crate::model::{node_os, node_windows_build};
use crate::settings::Settings;

/// A retirement that took nodes out of the planned cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlannedRetirement {
    /// The fact (platform, build, date, what, source).
    #[serde(flatten)]
    pub retirement: Retirement,
    /// How many nodes it took out.
    pub nodes: usize,
    /// Their pools.
    pub pools: Vec<String>,
}

/// Splits `nodes` into those that stay and the retirements that take the others, at `on` and Kubernetes
/// `kubernetes` (either may be absent). A node's calendar is its platform's
/// ([`lifecycle::node_platform`]) and Microsoft's.
pub fn retire(
    nodes: Vec<Node>,
    on: Option<Date>,
    kubernetes: Option<KubeMinor>,
    settings: &Settings,
) -> (Vec<Node>, Vec<PlannedRetirement>) {
    if on.is_none() && kubernetes.is_none() {
        return (nodes, Vec::new());
    }
    let mut kept = Vec::with_capacity(nodes.len());
    // Keyed by (platform, build, fact), in that order.
    let mut gone: BTreeMap<(String, String, String), PlannedRetirement> = BTreeMap::new();
    for node in nodes {
        let retired = (node_os(&node) == Some("windows"))
            .then(|| node_windows_build(&node))
            .flatten()
            .and_then(|build| {
                let platform =
                    lifecycle::node_platform(&node, &settings.lifecycle, settings.platform);
                lifecycle::retirement(&settings.lifecycle, platform, &build, on, kubernetes)
            });
        let Some(r) = retired else {
            kept.push(node);
            continue;
        };
        let key = (r.platform.to_string(), r.build.clone(), r.fact.clone());
        let entry = gone.entry(key).or_insert_with(|| PlannedRetirement {
            retirement: r,
            nodes: 0,
            pools: Vec::new(),
        });
        entry.nodes += 1;
        let pool = super::pool_name(&node);
        if !entry.pools.contains(&pool) {
            entry.pools.push(pool);
        }
    }
    (kept, gone.into_values().collect())
}
