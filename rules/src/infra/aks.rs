//! AKS agent pools as `az aks nodepool list -o json` (or `az aks nodepool show`) prints them
//! (`platforms.md §3`).
//!
//! The OS comes from `osType`, the Windows build from `osSku` (`Windows2019`, `Windows2022`,
//! `Windows2025`; when it is absent, AKS's documented default for the pool's `orchestratorVersion`);
//! labels are `nodeLabels` plus the ones AKS reserves (`kubernetes.azure.com/agentpool`, `agentpool`,
//! `kubernetes.azure.com/mode`, `kubernetes.azure.com/os-sku`); taints are `nodeTaints` only: AKS adds
//! no Windows taint.

use serde_json::Value;

use super::value::{FieldError, Reader};
use super::{Format, InfraRead, NodePool, azure_arch, parse_taint_text, read_document};
use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;

/// Whether a document without `kind` is an AKS agent pool (`osType` beside `vmSize` or `count`).
pub fn is_agent_pool(value: &Value) -> bool {
    value.get("osType").is_some_and(Value::is_string)
        && (value.get("vmSize").is_some() || value.get("count").is_some())
}

/// The build of a Windows `osSku` (`platforms.md §3.2`); `None` for `WindowsAnnual` and unknown SKUs.
pub fn os_sku_build(sku: &str) -> Option<&'static str> {
    match sku {
        "Windows2019" => Some("10.0.17763"),
        "Windows2022" => Some("10.0.20348"),
        "Windows2025" => Some("10.0.26100"),
        _ => None,
    }
}

/// Reads one agent pool.
pub fn read(doc: &Document, out: &mut InfraRead) {
    read_document(doc, out, "AgentPool", "/name", |r, name| {
        agent_pool(r, name).map(std::iter::once)
    });
}

fn agent_pool(r: &Reader<'_>, name: &str) -> Result<NodePool, FieldError> {
    let root = FieldPath::root();
    if name.is_empty() {
        return Err((root.field("name"), "an agent pool needs a name".into()));
    }
    let os_type = r.str(&root.field("osType"))?.unwrap_or("");
    let sku = r.str(&root.field("osSku"))?;
    let (os, build, unknown) = match os_type {
        "Linux" => (Some(Os::Linux), None, None),
        "Windows" => match sku {
            Some(sku) => match os_sku_build(sku) {
                Some(b) => (Some(Os::Windows), Some(b.to_string()), None),
                None => (
                    Some(Os::Windows),
                    None,
                    Some(format!(
                        "osSku `{sku}` does not name one Windows Server build"
                    )),
                ),
            },
            None => {
                let version = r.str(&root.field("orchestratorVersion"))?.unwrap_or("");
                match default_windows_sku(version) {
                    Some(sku) => (
                        Some(Os::Windows),
                        os_sku_build(sku).map(str::to_string),
                        None,
                    ),
                    None => (
                        Some(Os::Windows),
                        None,
                        Some(
                            "neither osSku nor orchestratorVersion says which Windows Server it runs"
                                .to_string(),
                        ),
                    ),
                }
            }
        },
        other => (
            None,
            None,
            Some(format!("osType `{other}` is neither Linux nor Windows")),
        ),
    };
    let mut labels = r.labels(&root.field("nodeLabels"))?;
    labels.insert("kubernetes.azure.com/agentpool".into(), name.to_string());
    labels.insert("agentpool".into(), name.to_string());
    if let Some(mode) = r.str(&root.field("mode"))? {
        labels.insert(
            "kubernetes.azure.com/mode".into(),
            mode.to_ascii_lowercase(),
        );
    }
    if let Some(sku) = sku {
        labels.insert("kubernetes.azure.com/os-sku".into(), sku.to_string());
    }
    let mut taints = Vec::new();
    if let Some(list) = r.get(&root.field("nodeTaints")) {
        let Value::Array(items) = list else {
            return Err((
                root.field("nodeTaints"),
                "expected a list of `key=value:Effect`".into(),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let at = root.field("nodeTaints").index(i);
            let text = item
                .as_str()
                .ok_or_else(|| (at.clone(), "expected a string".to_string()))?;
            taints.push(parse_taint_text(text).map_err(|e| (at, e))?);
        }
    }
    let vm_size = r.str(&root.field("vmSize"))?.unwrap_or("");
    let count = r.count(&root.field("count"))?.unwrap_or(1);
    Ok(NodePool {
        os,
        arch: Some(azure_arch(vm_size).to_string()),
        build,
        unknown,
        labels,
        taints,
        count: count.max(1),
        ..NodePool::at(
            r,
            &root,
            Format::Aks,
            ObjectRef::new("", "AgentPool", None, name),
            name,
        )
    })
}

/// AKS's default Windows `osSku` for a Kubernetes version: `Windows2019` up to 1.24, `Windows2022` from
/// 1.25 (`platforms.md §3.2`).
fn default_windows_sku(version: &str) -> Option<&'static str> {
    let mut parts = version.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    if major != 1 {
        return None;
    }
    Some(if minor <= 24 {
        "Windows2019"
    } else {
        "Windows2022"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read;
    use crate::input::{Limits, parse};

    #[test]
    fn skus_defaults_taints_and_labels() {
        let text = r#"[
  {"name": "nodepool1", "osType": "Linux", "osSku": "Ubuntu", "mode": "System", "count": 2, "vmSize": "Standard_D4ps_v5", "nodeTaints": null, "nodeLabels": null},
  {"name": "win22", "osType": "Windows", "osSku": "Windows2022", "mode": "User", "count": 1, "vmSize": "Standard_D2s_v3", "nodeTaints": ["os=windows:NoSchedule"], "nodeLabels": {"team": "a"}},
  {"name": "wold", "osType": "Windows", "orchestratorVersion": "1.24.9", "count": 1, "vmSize": "Standard_D2s_v3"},
  {"name": "wann", "osType": "Windows", "osSku": "WindowsAnnual", "count": 1, "vmSize": "Standard_D2s_v3"},
  {"name": "bad", "osType": "Windows", "osSku": "Windows2022", "count": 1, "vmSize": "x", "nodeTaints": ["os=windows:noschedule"]}
]"#;
        let docs = crate::infra::load::documents("aks.json", text).0;
        let read = read(&docs);
        let got = crate::infra::pool_summary(&read);
        assert_eq!(
            got,
            [
                ("nodepool1", Some(Os::Linux), None, Some("arm64"), 2),
                (
                    "win22",
                    Some(Os::Windows),
                    Some("10.0.20348"),
                    Some("amd64"),
                    1
                ),
                (
                    "wold",
                    Some(Os::Windows),
                    Some("10.0.17763"),
                    Some("amd64"),
                    1
                ),
                ("wann", Some(Os::Windows), None, Some("amd64"), 1),
            ]
        );
        assert_eq!(read.pools[1].taints[0].value.as_deref(), Some("windows"));
        assert_eq!(read.pools[1].labels["team"], "a");
        assert_eq!(
            read.pools[1].labels["kubernetes.azure.com/agentpool"],
            "win22"
        );
        assert!(read.pools[3].unknown.is_some());
        assert_eq!(read.errors.len(), 1);
        assert_eq!(read.errors[0].path, "nodeTaints[0]");
        assert_eq!(read.errors[0].line, 6);
        let _ = parse("x", "", &Limits::default());
    }
}
