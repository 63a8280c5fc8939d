//! GKE node pools as `gcloud container node-pools list --format=json` prints them (`platforms.md §4`).
//!
//! The OS comes from `config.imageType` (`WINDOWS_LTSC_CONTAINERD`, `COS_CONTAINERD`, …), the Windows
//! build from `config.windowsNodeConfig.osVersion` (`OS_VERSION_LTSC2019`, `OS_VERSION_LTSC2022`);
//! labels are `config.labels` plus `cloud.google.com/gke-nodepool`; taints are `config.taints` (GKE's
//! effect names `NO_SCHEDULE`, `PREFER_NO_SCHEDULE`, `NO_EXECUTE`) plus, on Windows pools, the
//! `node.kubernetes.io/os=windows:NoSchedule` taint GKE adds.

use serde_json::Value;

use super::value::{FieldError, Reader};
use super::{Format, InfraRead, NodePool, arch_name, read_document, taint};
use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;

/// Whether a document without `kind` is a GKE node pool (`name` and a `config` map beside
/// `initialNodeCount`, `version` or `selfLink`).
pub fn is_node_pool(value: &Value) -> bool {
    value.get("name").is_some_and(Value::is_string)
        && value.get("config").is_some_and(Value::is_object)
        && ["initialNodeCount", "version", "selfLink"]
            .iter()
            .any(|k| value.get(*k).is_some())
}

/// GKE's taint effect names → Kubernetes' (`platforms.md §4.3`).
pub fn effect(gke: &str) -> Option<&'static str> {
    match gke {
        "NO_SCHEDULE" => Some("NoSchedule"),
        "PREFER_NO_SCHEDULE" => Some("PreferNoSchedule"),
        "NO_EXECUTE" => Some("NoExecute"),
        _ => None,
    }
}

/// The build of a `windowsNodeConfig.osVersion` (`platforms.md §4.2`).
pub fn os_version_build(os_version: &str) -> Option<&'static str> {
    match os_version {
        "OS_VERSION_LTSC2019" => Some("10.0.17763"),
        "OS_VERSION_LTSC2022" => Some("10.0.20348"),
        _ => None,
    }
}

/// Reads one node pool.
pub fn read(doc: &Document, out: &mut InfraRead) {
    read_document(doc, out, "NodePool", "/name", |r, name| {
        node_pool(r, name).map(std::iter::once)
    });
}

fn node_pool(r: &Reader<'_>, name: &str) -> Result<NodePool, FieldError> {
    let config = FieldPath::root().field("config");
    let image = r
        .str(&config.field("imageType"))?
        .unwrap_or("COS_CONTAINERD");
    let os_version = r.str(&config.field("windowsNodeConfig").field("osVersion"))?;
    let (os, build, unknown) = if image.starts_with("WINDOWS_") {
        match os_version.and_then(os_version_build) {
            Some(b) => (Some(Os::Windows), Some(b.to_string()), None),
            None => (
                Some(Os::Windows),
                None,
                Some(match os_version {
                    Some(v) => format!("windowsNodeConfig.osVersion `{v}` names no known build"),
                    None => format!(
                        "imageType `{image}` without windowsNodeConfig.osVersion does not say which Windows Server build"
                    ),
                }),
            ),
        }
    } else if ["COS", "UBUNTU"].iter().any(|p| image.starts_with(p)) {
        (Some(Os::Linux), None, None)
    } else {
        (
            None,
            None,
            Some(format!("imageType `{image}` is not one GKE documents")),
        )
    };
    let mut labels = r.labels(&config.field("labels"))?;
    labels.insert("cloud.google.com/gke-nodepool".into(), name.to_string());
    let mut taints = r.taints(&config.field("taints"), effect)?;
    if os == Some(Os::Windows) {
        taints.push(taint("node.kubernetes.io/os", "windows", "NoSchedule"));
    }
    let machine = r.str(&config.field("machineType"))?.unwrap_or("");
    let count = match r.count(&FieldPath::root().field("initialNodeCount"))? {
        Some(n) => n,
        None => r
            .count(&FieldPath::parse("autoscaling.minNodeCount"))?
            .unwrap_or(1),
    };
    let object = ObjectRef::new("container.googleapis.com/v1", "NodePool", None, name);
    Ok(NodePool {
        os,
        arch: Some(gce_arch(machine).to_string()),
        build,
        unknown,
        labels,
        taints,
        count: count.max(1),
        ..NodePool::at(r, &FieldPath::root(), Format::Gke, object, name)
    })
}

/// `arm64` for the Arm machine series (T2A, C4A, N4A: `platforms.md §4.4`), else `amd64`.
fn gce_arch(machine_type: &str) -> &'static str {
    let series = machine_type.split('-').next().unwrap_or("");
    arch_name(matches!(series, "t2a" | "c4a" | "n4a"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read;

    #[test]
    fn windows_pools_get_gke_taint_and_build() {
        let text = r#"[
  {"name": "default-pool", "config": {"machineType": "e2-medium", "imageType": "COS_CONTAINERD"}, "initialNodeCount": 3, "version": "1.30.5-gke.1"},
  {"name": "win22", "config": {"machineType": "n1-standard-4", "imageType": "WINDOWS_LTSC_CONTAINERD", "windowsNodeConfig": {"osVersion": "OS_VERSION_LTSC2022"}, "taints": [{"key": "team", "value": "a", "effect": "NO_EXECUTE"}]}, "initialNodeCount": 1, "version": "1.30.5-gke.1"},
  {"name": "wsac", "config": {"machineType": "t2a-standard-4", "imageType": "WINDOWS_SAC_CONTAINERD"}, "initialNodeCount": 1},
  {"name": "bad", "config": {"imageType": "COS_CONTAINERD", "taints": [{"key": "a", "effect": "NoSchedule"}]}, "initialNodeCount": 1}
]"#;
        let docs = crate::infra::load::documents("gke.json", text).0;
        let read = read(&docs);
        assert_eq!(read.pools.len(), 3);
        assert_eq!(read.pools[0].os, Some(Os::Linux));
        assert_eq!(read.pools[0].count, 3);
        let win = &read.pools[1];
        assert_eq!(win.build.as_deref(), Some("10.0.20348"));
        let taints: Vec<_> = win
            .taints
            .iter()
            .map(|t| (t.key.as_str(), t.effect.as_str()))
            .collect();
        assert_eq!(
            taints,
            [
                ("team", "NoExecute"),
                ("node.kubernetes.io/os", "NoSchedule")
            ]
        );
        assert_eq!(win.labels["cloud.google.com/gke-nodepool"], "win22");
        assert!(read.pools[2].build.is_none() && read.pools[2].unknown.is_some());
        assert_eq!(read.pools[2].arch.as_deref(), Some("arm64"));
        assert_eq!(read.errors.len(), 1);
        assert_eq!(read.errors[0].path, "config.taints[0].effect");
    }
}
