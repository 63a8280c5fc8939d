//! What a planner link reproduces: the cluster, the workloads and the changes to the pools.

use serde::{Deserialize, Serialize};

use crate::pages::playground::share;

/// The fragment key of the planner's links.
const KEY: &str = "p=";

/// A pool added in the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedPool {
    /// Its name (nodes `<name>-1`, …).
    pub name: String,
    /// `windows` or `linux`.
    pub os: String,
    /// Windows build (`10.0.26100`); empty for Linux.
    pub build: String,
    /// `key=value:Effect`, or empty for none.
    pub taint: String,
    /// Number of nodes.
    pub count: u32,
}

/// Everything a planner link reproduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanInputs {
    /// The cluster: Nodes or an infrastructure file.
    #[serde(rename = "k", default)]
    pub cluster: String,
    /// The workloads.
    #[serde(rename = "i", default)]
    pub manifests: String,
    /// Pools switched off.
    #[serde(rename = "o", default)]
    pub off: Vec<String>,
    /// Pools added.
    #[serde(rename = "a", default)]
    pub added: Vec<AddedPool>,
    /// Windows pools upgraded in place: (pool, new build).
    #[serde(rename = "u", default)]
    pub upgrades: Vec<(String, String)>,
    /// The plan's date (`YYYY-MM-DD`), empty for none.
    #[serde(rename = "d", default)]
    pub on: String,
}

/// The sample: the demo cluster's pools as `az aks nodepool list -o json` prints them, and workloads
/// pinned to each Windows build.
const SAMPLE_CLUSTER: &str = r#"[
  {"name": "linux", "osType": "Linux", "osSku": "Ubuntu", "mode": "System", "count": 3, "vmSize": "Standard_D4s_v5"},
  {"name": "win19", "osType": "Windows", "osSku": "Windows2019", "mode": "User", "count": 2, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]},
  {"name": "win22", "osType": "Windows", "osSku": "Windows2022", "mode": "User", "count": 3, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]}
]
"#;

const SAMPLE_MANIFESTS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: invoice-api, namespace: billing}
spec:
  selector: {matchLabels: {app: invoice-api}}
  template:
    metadata: {labels: {app: invoice-api}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}
      tolerations: [{key: os, value: windows, effect: NoSchedule}]
      containers:
      - {name: api, image: "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: portal, namespace: web}
spec:
  selector: {matchLabels: {app: portal}}
  template:
    metadata: {labels: {app: portal}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.20348}
      tolerations: [{key: os, value: windows, effect: NoSchedule}]
      containers:
      - {name: iis, image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}
"#;

impl Default for PlanInputs {
    fn default() -> Self {
        PlanInputs {
            cluster: SAMPLE_CLUSTER.into(),
            manifests: SAMPLE_MANIFESTS.into(),
            off: Vec::new(),
            added: Vec::new(),
            upgrades: Vec::new(),
            on: String::new(),
        }
    }
}

impl PlanInputs {
    /// The fragment (with `#`) that reproduces the state.
    pub fn encode(&self) -> String {
        format!(
            "#{KEY}{}",
            share::pack(&serde_json::to_vec(self).unwrap_or_default())
        )
    }

    /// The state in a fragment; `None` when it holds none or is damaged.
    pub fn decode(fragment: &str) -> Option<PlanInputs> {
        let payload = fragment.trim_start_matches('#').strip_prefix(KEY)?;
        serde_json::from_slice(&share::unpack(payload).ok()?).ok()
    }
}
