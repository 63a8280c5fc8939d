//! Infrastructure files as cluster context: node pools read from the files that define a cluster
//! before any Node exists, each pool becoming the Nodes its platform would create.
//!
//! One file per format: [`eksctl`] (`ClusterConfig`), [`karpenter`] (`NodePool` + `EC2NodeClass`),
//! [`aks`] (`az aks nodepool list -o json`), [`gke`] (`gcloud container node-pools list --format=json`),
//! [`openshift`] (`MachineSet`). Every platform fact they apply (the labels and taints a platform puts on
//! its nodes, the Windows build of an image family) is written, with its source, in
//! `docs/reference/platforms.md`; the comments cite it as `platforms.md §N`.
//!
//! A pool whose Windows build (or OS) cannot be told from the file is never guessed: its nodes carry no
//! build label and [`NodePool::unknown`] says why. This module only reads: the rules judge the pools
//! (`node-pool-build-unknown`, info, and the node rules on their Nodes: `rules/src/rules/node_pools.rs`).
//!
//! ```
//! use winplace_rules::infra;
//! use winplace_rules::input::{parse, Limits};
//! let text = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: us-west-2}\nnodeGroups:\n- name: win\n  amiFamily: WindowsServer2022FullContainer\n  desiredCapacity: 2\n";
//! let read = infra::read(&parse("c.yaml", text, &Limits::default()).documents);
//! let nodes = read.pools[0].nodes();
//! assert_eq!(nodes.len(), 2);
//! let labels = nodes[0].metadata.labels.as_ref().expect("labels");
//! assert_eq!(labels["kubernetes.io/os"], "windows");
//! assert_eq!(labels["node.kubernetes.io/windows-build"], "10.0.20348");
//! assert!(nodes[0].spec.as_ref().and_then(|s| s.taints.as_ref()).is_none()); // EKS adds no taint
//! ```

pub mod aks;
pub mod eksctl;
pub mod gke;
pub mod karpenter;
mod load;
pub mod openshift;
mod value;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeSpec, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;
use value::{FieldError, Reader};

pub use load::{ContextFiles, read_context};

/// The file format a pool was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// eksctl `ClusterConfig` (`eksctl.io/v1alpha5`): `nodeGroups`, `managedNodeGroups`.
    Eksctl,
    /// Karpenter `NodePool` with its `EC2NodeClass` (`karpenter.sh/v1|v1beta1`).
    Karpenter,
    /// An AKS agent pool as `az aks nodepool list -o json` prints it.
    Aks,
    /// A GKE node pool as `gcloud container node-pools list --format=json` prints it.
    Gke,
    /// An OpenShift `MachineSet` (`machine.openshift.io/v1beta1`).
    OpenShift,
}

impl Format {
    /// A short name for messages (`eksctl`, `AKS`).
    pub fn label(self) -> &'static str {
        match self {
            Format::Eksctl => "eksctl",
            Format::Karpenter => "Karpenter",
            Format::Aks => "AKS",
            Format::Gke => "GKE",
            Format::OpenShift => "OpenShift",
        }
    }

    /// What the format calls a pool (`node group`, `agent pool`), for messages.
    pub fn pool_noun(self) -> &'static str {
        match self {
            Format::Eksctl => "node group",
            Format::Karpenter => "NodePool",
            Format::Aks => "agent pool",
            Format::Gke => "node pool",
            Format::OpenShift => "MachineSet",
        }
    }

    /// Where the format writes a pool's taints, from the pool's own path (`taints` of an eksctl node
    /// group, `nodeTaints` of an AKS agent pool).
    pub fn taints_field(self) -> &'static str {
        match self {
            Format::Eksctl => "taints",
            Format::Karpenter | Format::OpenShift => "spec.template.spec.taints",
            Format::Aks => "nodeTaints",
            Format::Gke => "config.taints",
        }
    }
}

// The annotations that tie a Node to the pool it stands for are read by the model (a node of a pool file
// is told apart there), so they live with it.
pub use crate::model::{POOL_ANNOTATION, POOL_TAINTS_ANNOTATION};

/// At most this many Nodes are made for one pool: verdicts depend on the kinds of nodes, not on their
/// number, and a typo (`count: 100000`) must not cost memory.
pub const MAX_NODES_PER_POOL: u32 = 100;

/// A node pool: a group of identical nodes as an infrastructure file defines it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// The pool's name in its file (node group, NodePool, agent pool, MachineSet).
    pub name: String,
    /// The format it was read from.
    pub format: Format,
    /// The object findings about the pool name (`NodePool/windows2022`, `AgentPool/win22`).
    pub object: ObjectRef,
    /// The input file.
    pub file: String,
    /// Line of the pool in the file.
    pub line: Option<u32>,
    /// Path of the pool in its document (`nodeGroups[1]`; empty for a whole document).
    pub path: String,
    /// The nodes' OS; `None` when the file does not tell it (then the pool makes no nodes).
    pub os: Option<Os>,
    /// `kubernetes.io/arch` when known (`amd64`, `arm64`).
    pub arch: Option<String>,
    /// The Windows build (`10.0.20348`) of a Windows pool, when the file tells it.
    pub build: Option<String>,
    /// Why the OS or the Windows build cannot be told, when it cannot.
    pub unknown: Option<String>,
    /// Labels on every node of the pool (the file's and the platform's own), without the OS, arch and
    /// build labels, which [`NodePool::nodes`] adds.
    pub labels: BTreeMap<String, String>,
    /// Taints on every node of the pool (the file's and the platform's own).
    pub taints: Vec<Taint>,
    /// Number of nodes (desired, initial or minimum size; at least 1).
    pub count: u32,
}

impl NodePool {
    /// The pool as messages name it: `node group windows-ng of eksctl.yaml`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} of {}",
            self.format.pool_noun(),
            self.object.name,
            self.file
        )
    }

    /// The Nodes the platform would create for this pool: `count` nodes (at most
    /// [`MAX_NODES_PER_POOL`]) named `<pool>-1`, `<pool>-2`, … (the pool's name alone for one node),
    /// with the kubelet's well-known labels (`kubernetes.io/os`, `kubernetes.io/arch`,
    /// `kubernetes.io/hostname`, `node.kubernetes.io/windows-build`), the pool's labels and taints,
    /// and the annotations [`POOL_ANNOTATION`] and [`POOL_TAINTS_ANNOTATION`] that say which pool
    /// they stand for. No nodes when the OS is unknown.
    pub fn nodes(&self) -> Vec<Node> {
        let Some(os) = self.os else {
            return Vec::new();
        };
        let count = self.count.clamp(1, MAX_NODES_PER_POOL);
        (1..=count)
            .map(|i| {
                let name = if count == 1 {
                    self.name.clone()
                } else {
                    format!("{}-{i}", self.name)
                };
                let mut labels = self.labels.clone();
                labels.insert("kubernetes.io/os".into(), os.as_str().into());
                labels.insert("kubernetes.io/hostname".into(), name.clone());
                if let Some(arch) = &self.arch {
                    labels.insert("kubernetes.io/arch".into(), arch.clone());
                }
                if let (Os::Windows, Some(build)) = (os, &self.build) {
                    labels.insert("node.kubernetes.io/windows-build".into(), build.clone());
                }
                let annotations = BTreeMap::from([
                    (POOL_ANNOTATION.to_string(), self.describe()),
                    (
                        POOL_TAINTS_ANNOTATION.to_string(),
                        self.format.taints_field().to_string(),
                    ),
                ]);
                Node {
                    metadata: ObjectMeta {
                        name: Some(name),
                        labels: Some(labels),
                        annotations: Some(annotations),
                        ..ObjectMeta::default()
                    },
                    spec: (!self.taints.is_empty()).then(|| NodeSpec {
                        taints: Some(self.taints.clone()),
                        ..NodeSpec::default()
                    }),
                    status: None,
                }
            })
            .collect()
    }
}

impl NodePool {
    /// A pool of `format` named `name`, reported as `object`, that `r` reads at `path` (the root for a
    /// pool that is a whole document): where it is, and nothing yet about its nodes (no OS, one node).
    /// Each format's reader fills in what its file tells (`NodePool { os, taints, ..NodePool::at(…) }`).
    pub(crate) fn at(
        r: &Reader<'_>,
        path: &FieldPath,
        format: Format,
        object: ObjectRef,
        name: &str,
    ) -> NodePool {
        let root = path.to_string().is_empty();
        NodePool {
            name: name.to_string(),
            format,
            object,
            file: r.doc.file.clone(),
            line: Some(if root { r.doc.line } else { r.line(path) }),
            path: path.to_string(),
            os: None,
            arch: None,
            build: None,
            unknown: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            count: 1,
        }
    }
}

/// Reads the pools of one document whose name is at `name_pointer` (`/name`, `/metadata/name`):
/// `pools` gets a reader that names the object `Kind/name` in errors, and the name; its pools go to
/// `out`, or its error does.
pub(crate) fn read_document<P: IntoIterator<Item = NodePool>>(
    doc: &Document,
    out: &mut InfraRead,
    kind: &str,
    name_pointer: &str,
    pools: impl FnOnce(&Reader<'_>, &str) -> Result<P, FieldError>,
) {
    let name = doc
        .value
        .pointer(name_pointer)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("");
    let reader = Reader::new(doc, format!("{kind}/{name}"));
    collect(out, &reader, pools(&reader, name));
}

/// Adds what a reader made of a pool to `out`: the pools, or the error.
pub(crate) fn collect<P: IntoIterator<Item = NodePool>>(
    out: &mut InfraRead,
    reader: &Reader<'_>,
    read: Result<P, FieldError>,
) {
    match read {
        Ok(pools) => out.pools.extend(pools),
        Err(e) => out.errors.push(reader.error(e)),
    }
}

/// A pool as the readers' tests compare it: name, OS, build, arch, node count.
#[cfg(test)]
pub(crate) type PoolSummary<'a> = (&'a str, Option<Os>, Option<&'a str>, Option<&'a str>, u32);

/// Each pool's [`PoolSummary`].
#[cfg(test)]
pub(crate) fn pool_summary(read: &InfraRead) -> Vec<PoolSummary<'_>> {
    read.pools
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.os,
                p.build.as_deref(),
                p.arch.as_deref(),
                p.count,
            )
        })
        .collect()
}

/// A field of an infrastructure file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {object}: {path}: {message}")]
pub struct InfraError {
    /// The input file.
    pub file: String,
    /// Line of the field (or of its nearest present parent).
    pub line: u32,
    /// `Kind/name` of the object or pool.
    pub object: String,
    /// The field, from the object's root (`nodeGroups[1].taints[0].effect`).
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// What the infrastructure documents of some files hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InfraRead {
    /// Every pool, in file order.
    pub pools: Vec<NodePool>,
    /// Fields that cannot be read (the pool they belong to is left out).
    pub errors: Vec<InfraError>,
}

/// The documents' node pools, in every format this module reads; other documents are ignored.
///
/// Karpenter `NodePool`s find their `EC2NodeClass` among all `documents`, so pass the documents of
/// every file at once.
pub fn read(documents: &[Document]) -> InfraRead {
    let mut out = InfraRead::default();
    let node_classes = karpenter::node_classes(documents);
    for doc in documents {
        let kind = doc.value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        let api = doc
            .value
            .get("apiVersion")
            .and_then(|k| k.as_str())
            .unwrap_or("");
        if eksctl::is_cluster_config(kind, api) {
            eksctl::read(doc, &mut out);
        } else if karpenter::is_node_pool(kind, api) {
            karpenter::read(doc, &node_classes, &mut out);
        } else if openshift::is_machine_set(kind, api) {
            openshift::read(doc, &mut out);
        } else if kind.is_empty() && aks::is_agent_pool(&doc.value) {
            aks::read(doc, &mut out);
        } else if kind.is_empty() && gke::is_node_pool(&doc.value) {
            gke::read(doc, &mut out);
        }
    }
    out
}

/// A taint as Kubernetes writes it.
pub(crate) fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.to_string(),
        value: (!value.is_empty()).then(|| value.to_string()),
        effect: effect.to_string(),
        time_added: None,
    }
}

/// The taint effects Kubernetes accepts (`kubernetes-windows-rules.md §3.2`).
pub(crate) const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// Parses `key=value:Effect` or `key:Effect` (the form of `--node-taints`, AKS's `nodeTaints` and
/// `kubectl taint`).
pub fn parse_taint(text: &str) -> Result<Taint, String> {
    parse_taint_text(text)
}

/// Parses `key=value:Effect` or `key:Effect` (the form of `--node-taints` and AKS's `nodeTaints`).
pub(crate) fn parse_taint_text(text: &str) -> Result<Taint, String> {
    let (kv, effect) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("`{text}` is not key=value:Effect"))?;
    if !EFFECTS.contains(&effect) {
        return Err(format!(
            "`{text}`: effect `{effect}` is not one of NoSchedule, PreferNoSchedule, NoExecute"
        ));
    }
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    if key.is_empty() {
        return Err(format!("`{text}` has no key"));
    }
    Ok(taint(key, value, effect))
}

/// The Windows build of a Windows Server release named by its year (`2019`, `2022`, `2025`), from the
/// build table of `kubernetes-windows-rules.md §5.1`.
pub(crate) fn ltsc_build(year: &str) -> Option<&'static str> {
    match year {
        "2019" => Some("10.0.17763"),
        "2022" => Some("10.0.20348"),
        "2025" => Some("10.0.26100"),
        _ => None,
    }
}

/// The one Windows Server year (`2019`, `2022`, `2025`) named in `text`, when exactly one is
/// (`2022-datacenter-smalldisk`, `windows-server-2019-template`); `None` for none or several.
pub(crate) fn single_year(text: &str) -> Option<&'static str> {
    let found: Vec<&'static str> = ["2019", "2022", "2025"]
        .into_iter()
        .filter(|y| text.contains(y))
        .collect();
    match found.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// `arm64` for an AWS Graviton instance type (`m6g.large`, `c7gn.xlarge`: a `g` right after the
/// generation digit, `platforms.md §1.4`), else `amd64`.
pub(crate) fn aws_arch(instance_type: &str) -> &'static str {
    let family = instance_type.split('.').next().unwrap_or("");
    let after_digits = family
        .trim_start_matches(|c: char| c.is_ascii_lowercase())
        .trim_start_matches(|c: char| c.is_ascii_digit());
    let generation_present = family
        .trim_start_matches(|c: char| c.is_ascii_lowercase())
        .starts_with(|c: char| c.is_ascii_digit());
    arch_name(generation_present && after_digits.starts_with('g'))
}

/// `arm64` for an Azure VM size whose additive features include `p` (`Standard_D4ps_v5`,
/// `platforms.md §3.4`), else `amd64`.
pub(crate) fn azure_arch(vm_size: &str) -> &'static str {
    let size = vm_size.strip_prefix("Standard_").unwrap_or(vm_size);
    let head = size.split('_').next().unwrap_or("");
    let features = head
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    arch_name(features.contains('p'))
}

/// `kubernetes.io/arch` of a machine type: `arm64` for an Arm one, else `amd64`.
pub(crate) fn arch_name(arm: bool) -> &'static str {
    if arm { "arm64" } else { "amd64" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taint_text() {
        let t = parse_taint_text("sku=gpu:NoSchedule").expect("valid");
        assert_eq!(
            (t.key.as_str(), t.value.as_deref(), t.effect.as_str()),
            ("sku", Some("gpu"), "NoSchedule")
        );
        let t = parse_taint_text("dedicated:NoExecute").expect("valid");
        assert_eq!((t.key.as_str(), t.value.as_deref()), ("dedicated", None));
        assert!(parse_taint_text("os=windows:noschedule").is_err());
        assert!(parse_taint_text("os=windows").is_err());
        assert!(parse_taint_text("=x:NoSchedule").is_err());
    }

    #[test]
    fn years_and_arches() {
        assert_eq!(single_year("2022-datacenter-smalldisk"), Some("2022"));
        assert_eq!(single_year("win-2019-to-2022"), None);
        assert_eq!(single_year("ami-0123"), None);
        assert_eq!(ltsc_build("2025"), Some("10.0.26100"));
        for (t, arch) in [
            ("m5.large", "amd64"),
            ("m6g.large", "arm64"),
            ("c7gn.xlarge", "arm64"),
            ("t4g.micro", "arm64"),
            ("g5.xlarge", "amd64"),
            ("m6a.large", "amd64"),
        ] {
            assert_eq!(aws_arch(t), arch, "{t}");
        }
        for (s, arch) in [
            ("Standard_D2s_v3", "amd64"),
            ("Standard_D4ps_v5", "arm64"),
            ("Standard_E8pds_v5", "arm64"),
            ("Standard_DS2_v2", "amd64"),
        ] {
            assert_eq!(azure_arch(s), arch, "{s}");
        }
    }

    #[test]
    fn nodes_of_a_pool() {
        let pool = NodePool {
            name: "win".into(),
            format: Format::Aks,
            object: ObjectRef::new("v1", "AgentPool", None, "win"),
            file: "f".into(),
            line: Some(1),
            path: String::new(),
            os: Some(Os::Windows),
            arch: Some("amd64".into()),
            build: None,
            unknown: Some("x".into()),
            labels: BTreeMap::from([("agentpool".to_string(), "win".to_string())]),
            taints: vec![taint("os", "windows", "NoSchedule")],
            count: 3,
        };
        let nodes = pool.nodes();
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes[2].metadata.name.as_deref(), Some("win-3"));
        let labels = nodes[0].metadata.labels.as_ref().expect("labels");
        assert!(!labels.contains_key("node.kubernetes.io/windows-build"));
        assert_eq!(labels["agentpool"], "win");
        let unknown_os = NodePool { os: None, ..pool };
        assert!(unknown_os.nodes().is_empty());
    }
}
