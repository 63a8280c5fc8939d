//! In-place pool upgrades: a pool's nodes change Windows build and keep their pool (`platforms.md` §7).
//!
//! AKS documents the Windows Server 2022 → 2025 change of a pool as not supported yet and planned
//! (Azure/AKS#5904, preview CLI only; `platforms.md` §7.1–7.2); where it happens it is a rolling reimage
//! (§7.4): the pool, its labels and taints stay, every node comes back on the new image, and the pods are
//! drained and rescheduled. So the planned nodes keep their name, labels and taints and get the new build
//! label and `status.nodeInfo` (and AKS's `kubernetes.azure.com/os-sku`, §7.4); a pod that pinned the old
//! build cannot come back.

use k8s_openapi::api::core::v1::{Node, NodeStatus, NodeSystemInfo};
use serde::{Deserialize, Serialize};

use crate::windows::builds::{WindowsVersion, build_info};

/// One pool whose nodes move to another Windows build in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolUpgrade {
    /// The pool (as [`super::pool_name`] names it).
    pub pool: String,
    /// The new Windows build (`10.0.26100`).
    pub build: String,
}

/// The label AKS sets from the pool's `osSku` (`platforms.md` §3.3).
const AKS_OS_SKU: &str = "kubernetes.azure.com/os-sku";
const BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// The Windows Server release name of a build (`Windows Server 2025`), when the build table knows it.
fn release_name(build: &str) -> Option<&'static str> {
    build_info(WindowsVersion::parse(build)?.build).map(|i| i.name)
}

/// `node` after an in-place move to `build`: the same name, labels and taints, with the new build label,
/// AKS's `os-sku` label when the node carries one (`Windows2025`), and the `status.nodeInfo` kubelet reports
/// on the new image: `kernelVersion` the build (the patch level, UBR, is not known ahead), `osImage` the
/// release's name with the old edition kept (`Windows Server 2022 Datacenter` → `Windows Server 2025
/// Datacenter`; `kubernetes-windows-rules.md` §5.4).
///
/// ```
/// use winplace_rules::what_if::upgrade::upgrade_node;
/// let node: k8s_openapi::api::core::v1::Node = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "aks-win22-0", "labels": {"kubernetes.io/os": "windows",
///         "node.kubernetes.io/windows-build": "10.0.20348", "kubernetes.azure.com/os-sku": "Windows2022"}},
///     "status": {"nodeInfo": {"operatingSystem": "windows", "architecture": "amd64", "kernelVersion": "10.0.20348.2762",
///         "osImage": "Windows Server 2022 Datacenter", "bootID": "", "containerRuntimeVersion": "", "kubeProxyVersion": "",
///         "kubeletVersion": "", "machineID": "", "systemUUID": ""}}})).unwrap();
/// let up = upgrade_node(&node, "10.0.26100");
/// let labels = up.metadata.labels.as_ref().unwrap();
/// assert_eq!(labels["node.kubernetes.io/windows-build"], "10.0.26100");
/// assert_eq!(labels["kubernetes.azure.com/os-sku"], "Windows2025");
/// let info = up.status.unwrap().node_info.unwrap();
/// assert_eq!((info.kernel_version.as_str(), info.os_image.as_str()), ("10.0.26100", "Windows Server 2025 Datacenter"));
/// ```
pub fn upgrade_node(node: &Node, build: &str) -> Node {
    let mut out = node.clone();
    let labels = out.metadata.labels.get_or_insert_with(Default::default);
    let old_build = labels.get(BUILD_LABEL).cloned();
    labels.insert(BUILD_LABEL.into(), build.to_string());
    let new_name = release_name(build);
    if let (Some(sku), Some(name)) = (labels.get_mut(AKS_OS_SKU), new_name)
        && sku.starts_with("Windows")
        && let Some(year) = name.strip_prefix("Windows Server ")
    {
        *sku = format!("Windows{year}");
    }
    let arch = labels
        .get("kubernetes.io/arch")
        .cloned()
        .unwrap_or_default();
    let status = out.status.get_or_insert_with(NodeStatus::default);
    let info = status.node_info.get_or_insert_with(|| NodeSystemInfo {
        operating_system: "windows".into(),
        architecture: arch,
        ..NodeSystemInfo::default()
    });
    let old_name = WindowsVersion::from_kernel_version(&info.kernel_version)
        .map(|v| v.label())
        .or(old_build)
        .as_deref()
        .and_then(release_name);
    info.kernel_version = build.to_string();
    if let Some(new_name) = new_name {
        let edition = old_name
            .and_then(|old| info.os_image.strip_prefix(old))
            .unwrap_or("")
            .to_string();
        info.os_image = format!("{new_name}{edition}");
    } else {
        info.os_image.clear();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_keep_name_labels_and_taints() {
        // An infrastructure file's node: no status, an AKS pool with a taint.
        let node: Node = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "win22-1", "labels": {"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
                "node.kubernetes.io/windows-build": "10.0.20348", "agentpool": "win22", "team": "a"}},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}
        }))
        .unwrap();
        let up = upgrade_node(&node, "10.0.26100");
        assert_eq!(up.metadata.name, node.metadata.name);
        assert_eq!(up.spec, node.spec);
        let labels = up.metadata.labels.as_ref().unwrap();
        assert_eq!(labels["team"], "a");
        assert_eq!(labels["agentpool"], "win22");
        assert!(!labels.contains_key(AKS_OS_SKU));
        let info = up
            .status
            .as_ref()
            .and_then(|s| s.node_info.as_ref())
            .unwrap();
        assert_eq!(info.operating_system, "windows");
        assert_eq!(info.architecture, "amd64");
        assert_eq!(info.os_image, "Windows Server 2025");
        assert_eq!(
            crate::model::node_windows_build(&up).as_deref(),
            Some("10.0.26100")
        );
    }
}
