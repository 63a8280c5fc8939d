//! `winplace_nodes_leaving_support`: how many nodes run a Windows build (`component="windows-build"`) or a
//! containerd line (`component="containerd"`) that is out of support within 30 and 90 days, by the
//! retirement calendar ([`winplace_rules::lifecycle`], docs/reference/lifecycle.md) for each node's
//! platform. A node already past the date counts too: the series says what an operator must have moved
//! by then. Four series, whatever the cluster's size.

use std::sync::Arc;

use prometheus_client::registry::Registry;
use winplace_rules::Settings;
use winplace_rules::audit::NodeReport;
use winplace_rules::lifecycle::containerd::{self, ContainerdVersion, RuntimeKind};
use winplace_rules::lifecycle::{self, Date, LifecyclePlatform};

use crate::metrics::{self, Exported, Series};
use crate::state::AppState;

/// The horizons, in days, of `within_days`.
pub const HORIZONS: [u16; 2] = [30, 90];

/// The series' source: the published audit's nodes, the settings' calendar, today.
pub struct SupportHorizon {
    state: AppState,
    settings: Arc<Settings>,
}

impl SupportHorizon {
    /// Reads `state`'s nodes with `settings`' calendar, at setting `lifecycle.date` when given, else today.
    pub fn new(state: AppState, settings: Settings) -> Self {
        SupportHorizon {
            state,
            settings: Arc::new(settings),
        }
    }
}

/// The calendar that holds for a node: setting `lifecycle.platform`, else its labels', else the preset's.
fn platform(node: &NodeReport, settings: &Settings) -> Option<LifecyclePlatform> {
    settings
        .lifecycle
        .platform
        .or_else(|| lifecycle::platform_from_labels(&node.labels))
        .or_else(|| LifecyclePlatform::of_preset(settings.platform))
}

/// Nodes whose Windows build and whose containerd line are out of support on `on`.
pub fn leaving(nodes: &[Arc<NodeReport>], settings: &Settings, on: Date) -> (u64, u64) {
    let mut builds = 0;
    let mut runtimes = 0;
    for node in nodes {
        if let Some(build) = &node.build
            && lifecycle::retirement(
                &settings.lifecycle,
                platform(node, settings),
                build,
                Some(on),
                None,
            )
            .is_some()
        {
            builds += 1;
        }
        let runtime = node
            .node_info
            .get("containerRuntimeVersion")
            .and_then(|v| ContainerdVersion::parse(v));
        if let Some(v) = runtime
            && containerd::issues(v, Some(on), None)
                .iter()
                .any(|i| i.kind == RuntimeKind::EndOfLife)
        {
            runtimes += 1;
        }
    }
    (builds, runtimes)
}

impl Exported for SupportHorizon {
    fn register(&self, registry: &mut Registry) {
        let published = self.state.published();
        let today = self
            .settings
            .lifecycle
            .date
            .unwrap_or_else(crate::clock::today);
        let mut samples = Vec::new();
        for days in HORIZONS {
            let on = Date::from_unix_days(today.unix_days() + i64::from(days));
            let (builds, runtimes) = leaving(&published.report.nodes, &self.settings, on);
            for (component, n) in [("windows-build", builds), ("containerd", runtimes)] {
                samples.push((
                    vec![
                        ("component", component.to_string()),
                        ("within_days", days.to_string()),
                    ],
                    n,
                ));
            }
        }
        metrics::add(
            registry,
            "winplace_nodes_leaving_support",
            "Nodes whose Windows build or containerd line is out of support within the days given (past it included).",
            Series::gauge(samples),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(labels: serde_json::Value, build: &str, runtime: &str) -> Arc<NodeReport> {
        let node = serde_json::json!({"name": "n", "os": "windows", "build": build, "labels": labels,
            "taints": [], "nodeInfo": {"containerRuntimeVersion": runtime}, "pods": [], "findings": []});
        Arc::new(serde_json::from_value(node).expect("a node report"))
    }

    #[test]
    fn nodes_count_from_the_day_their_build_or_containerd_leaves_support() {
        let settings = Settings::default();
        let aks = serde_json::json!({"kubernetes.azure.com/agentpool": "win19"});
        // AKS retired Windows Server 2019 on 2026-03-01; containerd 1.7's support ends after September
        // 2026 (docs/reference/lifecycle.md A1, C1).
        let nodes = [
            node(aks.clone(), "10.0.17763", "containerd://2.3.4"),
            node(aks, "10.0.20348", "containerd://1.7.20"),
        ];
        let day = |text: &str| text.parse::<Date>().expect("a date");
        assert_eq!(leaving(&nodes, &settings, day("2026-02-28")), (0, 0));
        assert_eq!(leaving(&nodes, &settings, day("2026-03-01")), (1, 0));
        assert_eq!(leaving(&nodes, &settings, day("2026-10-01")), (1, 1));
    }
}
