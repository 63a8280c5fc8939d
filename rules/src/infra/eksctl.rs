//! eksctl `ClusterConfig` (`eksctl.io/v1alpha5`): `nodeGroups` and `managedNodeGroups`
//! (`platforms.md §1`).
//!
//! The OS and build come from `amiFamily` (default `AmazonLinux2023`); the labels are the file's plus
//! the ones eksctl and EKS add (`alpha.eksctl.io/cluster-name`, `alpha.eksctl.io/nodegroup-name`, and
//! `eks.amazonaws.com/nodegroup` on managed groups); the taints are the file's only: neither eksctl nor
//! EKS taints Windows nodes.

use serde_json::Value;

use super::value::{FieldError, Reader, kubernetes_effect};
use super::{Format, InfraRead, NodePool, aws_arch, collect, parse_taint_text};
use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;

/// `apiVersion` of the format.
pub const API_VERSION: &str = "eksctl.io/v1alpha5";

/// Whether a document is an eksctl `ClusterConfig`.
pub fn is_cluster_config(kind: &str, api_version: &str) -> bool {
    kind == "ClusterConfig" && api_version == API_VERSION
}

/// eksctl's default `amiFamily` (`DefaultNodeImageFamily`).
const DEFAULT_AMI_FAMILY: &str = "AmazonLinux2023";
/// eksctl's default instance type (`DefaultNodeType`).
const DEFAULT_INSTANCE_TYPE: &str = "m5.large";
/// eksctl's default node count (`DefaultNodeCount`).
const DEFAULT_COUNT: u32 = 2;

/// The OS and, for Windows, the build of an eksctl `amiFamily` (`platforms.md §1.2`); `None` for a
/// family eksctl does not know.
pub fn ami_family(family: &str) -> Option<(Os, Option<&'static str>)> {
    let windows = |build| Some((Os::Windows, Some(build)));
    match family {
        "WindowsServer2019CoreContainer" | "WindowsServer2019FullContainer" => {
            windows("10.0.17763")
        }
        "WindowsServer2022CoreContainer" | "WindowsServer2022FullContainer" => {
            windows("10.0.20348")
        }
        "WindowsServer2025CoreContainer" | "WindowsServer2025FullContainer" => {
            windows("10.0.26100")
        }
        // Deprecated Semi-Annual Channel families, still accepted by eksctl.
        "WindowsServer2004CoreContainer" => windows("10.0.19041"),
        "WindowsServer20H2CoreContainer" => windows("10.0.19042"),
        "AmazonLinux2023" | "AmazonLinux2" | "Bottlerocket" | "BottlerocketFips" | "Ubuntu2004"
        | "UbuntuPro2004" | "Ubuntu2204" | "UbuntuPro2204" | "Ubuntu2404" | "UbuntuPro2404"
        | "Ubuntu2604" | "UbuntuPro2604" => Some((Os::Linux, None)),
        _ => None,
    }
}

/// Reads the node groups of one `ClusterConfig`.
pub fn read(doc: &Document, out: &mut InfraRead) {
    let cluster = doc
        .value
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    for (list, managed) in [("nodeGroups", false), ("managedNodeGroups", true)] {
        let count = doc
            .value
            .get(list)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        for i in 0..count {
            let path = FieldPath::root().field(list).index(i);
            let name = doc
                .value
                .pointer(&format!("/{list}/{i}/name"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let reader = Reader::new(doc, format!("ClusterConfig/{cluster}: {list}/{name}"));
            let pool = group(&reader, &path, &cluster, &name, managed);
            collect(out, &reader, pool.map(std::iter::once));
        }
    }
}

fn group(
    r: &Reader<'_>,
    path: &FieldPath,
    cluster: &str,
    name: &str,
    managed: bool,
) -> Result<NodePool, FieldError> {
    if name.is_empty() {
        return Err((path.field("name"), "a node group needs a name".into()));
    }
    let family = r
        .str(&path.field("amiFamily"))?
        .unwrap_or(DEFAULT_AMI_FAMILY);
    let (os, build, unknown) = match ami_family(family) {
        Some((os, build)) => (Some(os), build.map(str::to_string), None),
        None => (
            None,
            None,
            Some(format!(
                "amiFamily `{family}` is not one eksctl knows, so neither the OS nor the Windows build can be told"
            )),
        ),
    };
    let instance_type = match r.str(&path.field("instanceType"))? {
        Some(t) => t,
        None => r
            .str(&path.field("instanceTypes").index(0))?
            .unwrap_or(DEFAULT_INSTANCE_TYPE),
    };
    let mut labels = r.labels(&path.field("labels"))?;
    labels.insert("alpha.eksctl.io/cluster-name".into(), cluster.to_string());
    labels.insert("alpha.eksctl.io/nodegroup-name".into(), name.to_string());
    if managed {
        labels.insert("eks.amazonaws.com/nodegroup".into(), name.to_string());
    }
    let taints = taints(r, &path.field("taints"))?;
    let count = match r.count(&path.field("desiredCapacity"))? {
        Some(n) => n,
        None => r.count(&path.field("minSize"))?.unwrap_or(DEFAULT_COUNT),
    };
    let object = ObjectRef::new(API_VERSION, "NodeGroup", None, name);
    Ok(NodePool {
        os,
        arch: Some(aws_arch(instance_type).to_string()),
        build,
        unknown,
        labels,
        taints,
        count: count.max(1),
        ..NodePool::at(r, path, Format::Eksctl, object, name)
    })
}

/// `taints` as a list of `{key, value, effect}`, or the older map form `key: value:Effect`.
fn taints(
    r: &Reader<'_>,
    path: &FieldPath,
) -> Result<Vec<k8s_openapi::api::core::v1::Taint>, FieldError> {
    match r.get(path) {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(key, v)| {
                let text = v.as_str().unwrap_or("");
                parse_taint_text(&format!("{key}={text}"))
                    .map_err(|e| (path.key(key.to_string()), e))
            })
            .collect(),
        _ => r.taints(path, kubernetes_effect),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read;
    use crate::input::{Limits, parse};

    fn pools(text: &str) -> InfraRead {
        read(&parse("c.yaml", text, &Limits::default()).documents)
    }

    #[test]
    fn families_core_and_full_and_linux() {
        let read = pools(
            "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\nnodeGroups:\n- {name: core19, amiFamily: WindowsServer2019CoreContainer}\n- {name: full22, amiFamily: WindowsServer2022FullContainer, instanceType: m6i.large}\n- {name: al, instanceType: m7g.large}\nmanagedNodeGroups:\n- {name: w25, amiFamily: WindowsServer2025CoreContainer, desiredCapacity: 3}\n",
        );
        assert!(read.errors.is_empty(), "{:?}", read.errors);
        let got = crate::infra::pool_summary(&read);
        assert_eq!(
            got,
            [
                (
                    "core19",
                    Some(Os::Windows),
                    Some("10.0.17763"),
                    Some("amd64"),
                    2
                ),
                (
                    "full22",
                    Some(Os::Windows),
                    Some("10.0.20348"),
                    Some("amd64"),
                    2
                ),
                ("al", Some(Os::Linux), None, Some("arm64"), 2),
                (
                    "w25",
                    Some(Os::Windows),
                    Some("10.0.26100"),
                    Some("amd64"),
                    3
                ),
            ]
        );
        assert!(read.pools.iter().all(|p| p.taints.is_empty()));
        assert_eq!(read.pools[3].labels["eks.amazonaws.com/nodegroup"], "w25");
        assert!(
            !read.pools[0]
                .labels
                .contains_key("eks.amazonaws.com/nodegroup")
        );
    }

    #[test]
    fn taints_in_both_forms_and_bad_fields() {
        let read = pools(
            "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c}\nnodeGroups:\n- name: a\n  amiFamily: WindowsServer2022CoreContainer\n  taints:\n  - {key: os, value: windows, effect: NoSchedule}\n- name: b\n  taints:\n    dedicated: \"gpu:NoExecute\"\n- name: c\n  taints:\n  - {key: os, value: windows, effect: Noschedule}\n- name: d\n  amiFamily: WindowsServer2030\n",
        );
        assert_eq!(read.pools.len(), 3);
        assert_eq!(read.pools[0].taints[0].effect, "NoSchedule");
        assert_eq!(read.pools[1].taints[0].key, "dedicated");
        assert_eq!(read.pools[1].taints[0].effect, "NoExecute");
        assert_eq!(read.errors.len(), 1);
        assert_eq!(read.errors[0].path, "nodeGroups[2].taints[0].effect");
        assert_eq!(read.errors[0].line, 14);
        let unknown = &read.pools[2];
        assert_eq!(unknown.os, None);
        assert!(
            unknown
                .unknown
                .as_deref()
                .is_some_and(|u| u.contains("WindowsServer2030"))
        );
    }
}
