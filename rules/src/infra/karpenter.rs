//! Karpenter `NodePool` (`karpenter.sh/v1`, `v1beta1`) with the `EC2NodeClass` it references
//! (`karpenter.k8s.aws/v1`, `v1beta1`) (`platforms.md §2`).
//!
//! The OS and build come from the node class's AMI family (`amiSelectorTerms[].alias` such as
//! `windows2022@latest`, else `amiFamily`): a Windows family brings the requirements
//! `kubernetes.io/os In [windows]` and `node.kubernetes.io/windows-build In [<build>]`. For a `Custom`
//! family or a missing node class they come from the NodePool's own requirements, when they name one
//! value. Labels: `karpenter.sh/nodepool`, the template's labels and every single-valued `In`
//! requirement; taints: the template's (Karpenter adds none for Windows).

use std::collections::BTreeMap;

use serde_json::Value;

use super::value::{FieldError, Reader, kubernetes_effect};
use super::{Format, InfraRead, NodePool, read_document};
use crate::finding::ObjectRef;
use crate::input::Document;
use crate::path::FieldPath;
use crate::windows::Os;

/// Whether a document is a Karpenter `NodePool`.
pub fn is_node_pool(kind: &str, api_version: &str) -> bool {
    kind == "NodePool" && matches!(api_version, "karpenter.sh/v1" | "karpenter.sh/v1beta1")
}

/// What an `EC2NodeClass` tells about its nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeClass {
    /// The AMI family (`Windows2022`, `AL2023`, `Custom`), from the alias or `amiFamily`.
    pub family: Option<String>,
}

/// The `EC2NodeClass`es among `documents`, by name.
pub fn node_classes(documents: &[Document]) -> BTreeMap<String, NodeClass> {
    let mut out = BTreeMap::new();
    for doc in documents {
        let v = &doc.value;
        let is_class = v.get("kind").and_then(Value::as_str) == Some("EC2NodeClass")
            && matches!(
                v.get("apiVersion").and_then(Value::as_str),
                Some("karpenter.k8s.aws/v1" | "karpenter.k8s.aws/v1beta1")
            );
        let Some(name) = v.pointer("/metadata/name").and_then(Value::as_str) else {
            continue;
        };
        if !is_class {
            continue;
        }
        let alias = v
            .pointer("/spec/amiSelectorTerms")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find_map(|t| t.get("alias").and_then(Value::as_str));
        let family = match alias.and_then(|a| a.split_once('@')).map(|(f, _)| f) {
            Some(f) => alias_family(f).map(str::to_string),
            None => v
                .pointer("/spec/amiFamily")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        out.insert(name.to_string(), NodeClass { family });
    }
    out
}

/// The `amiFamily` an alias family names (`windows2022` → `Windows2022`).
fn alias_family(alias: &str) -> Option<&'static str> {
    match alias {
        "al2" => Some("AL2"),
        "al2023" => Some("AL2023"),
        "bottlerocket" => Some("Bottlerocket"),
        "windows2019" => Some("Windows2019"),
        "windows2022" => Some("Windows2022"),
        "windows2025" => Some("Windows2025"),
        _ => None,
    }
}

/// The OS and Windows build of an AMI family (`platforms.md §2.2`); `None` for `Custom` and unknown
/// families.
pub fn ami_family(family: &str) -> Option<(Os, Option<&'static str>)> {
    match family {
        "Windows2019" => Some((Os::Windows, Some("10.0.17763"))),
        "Windows2022" => Some((Os::Windows, Some("10.0.20348"))),
        "Windows2025" => Some((Os::Windows, Some("10.0.26100"))),
        "AL2" | "AL2023" | "Bottlerocket" | "Ubuntu" => Some((Os::Linux, None)),
        _ => None,
    }
}

/// Reads one `NodePool`.
pub fn read(doc: &Document, classes: &BTreeMap<String, NodeClass>, out: &mut InfraRead) {
    read_document(doc, out, "NodePool", "/metadata/name", |r, name| {
        node_pool(r, name, classes)
    });
}

/// A requirement's single `In` value, or all its values.
struct Requirement {
    operator: String,
    values: Vec<String>,
}

fn node_pool(
    r: &Reader<'_>,
    name: &str,
    classes: &BTreeMap<String, NodeClass>,
) -> Result<Vec<NodePool>, FieldError> {
    let api_version = r
        .doc
        .value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let spec = FieldPath::parse("spec.template.spec");
    let mut requirements: BTreeMap<String, Requirement> = BTreeMap::new();
    let count = r
        .get(&spec.field("requirements"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    for i in 0..count {
        let at = spec.field("requirements").index(i);
        let key = r.str(&at.field("key"))?.unwrap_or("").to_string();
        let operator = r.str(&at.field("operator"))?.unwrap_or("").to_string();
        let values = match r.get(&at.field("values")) {
            None => Vec::new(),
            Some(Value::Array(vs)) => vs
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        (at.field("values").index(j), "expected a string".to_string())
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err((at.field("values"), "expected a list of strings".into())),
        };
        requirements.insert(key, Requirement { operator, values });
    }
    let single = |key: &str| {
        requirements
            .get(key)
            .filter(|q| q.operator == "In" && q.values.len() == 1)
            .map(|q| q.values[0].clone())
    };
    let class_name = r
        .str(&spec.field("nodeClassRef").field("name"))?
        .unwrap_or("");
    let class = classes.get(class_name);
    let family = class.and_then(|c| c.family.clone());
    let from_family = family.as_deref().and_then(ami_family);
    let required_os = single("kubernetes.io/os").and_then(|o| o.parse::<Os>().ok());
    let (os, build, unknown) = match from_family {
        Some((os, build)) => (Some(os), build.map(str::to_string), None),
        None => {
            let why = match (class, family.as_deref()) {
                (None, _) => {
                    format!("its EC2NodeClass `{class_name}` is not among the given files")
                }
                (Some(_), Some(f)) => format!("its EC2NodeClass has AMI family `{f}`"),
                (Some(_), None) => "its EC2NodeClass names no AMI family".to_string(),
            };
            match required_os {
                Some(Os::Windows) => match single("node.kubernetes.io/windows-build") {
                    Some(b) => (Some(Os::Windows), Some(b), None),
                    None => (
                        Some(Os::Windows),
                        None,
                        Some(format!(
                            "{why}, and no single node.kubernetes.io/windows-build requirement names the build"
                        )),
                    ),
                },
                Some(Os::Linux) => (Some(Os::Linux), None, None),
                None => (
                    None,
                    None,
                    Some(format!(
                        "{why}, and no single kubernetes.io/os requirement names the OS"
                    )),
                ),
            }
        }
    };
    let mut labels = r.labels(&FieldPath::parse("spec.template.metadata.labels"))?;
    for (key, q) in &requirements {
        if q.operator == "In"
            && q.values.len() == 1
            && !matches!(
                key.as_str(),
                "kubernetes.io/os" | "kubernetes.io/arch" | "node.kubernetes.io/windows-build"
            )
        {
            labels.insert(key.clone(), q.values[0].clone());
        }
    }
    labels.insert("karpenter.sh/nodepool".into(), name.to_string());
    if !class_name.is_empty() {
        labels.insert(
            "karpenter.k8s.aws/ec2nodeclass".into(),
            class_name.to_string(),
        );
    }
    let taints = r.taints(&spec.field("taints"), kubernetes_effect)?;
    // Karpenter launches any arch the requirement allows: one pool per arch; Windows AMIs are amd64.
    let arches: Vec<String> = match requirements.get("kubernetes.io/arch") {
        Some(q) if q.operator == "In" && !q.values.is_empty() => q.values.clone(),
        _ if os == Some(Os::Windows) => vec!["amd64".into()],
        _ => vec!["amd64".into(), "arm64".into()],
    };
    let several = arches.len() > 1;
    Ok(arches
        .into_iter()
        .map(|arch| {
            let pool_name = if several {
                format!("{name}-{arch}")
            } else {
                name.to_string()
            };
            let object = ObjectRef::new(api_version, "NodePool", None, name);
            NodePool {
                os,
                arch: Some(arch),
                build: build.clone(),
                unknown: unknown.clone(),
                labels: labels.clone(),
                taints: taints.clone(),
                ..NodePool::at(r, &FieldPath::root(), Format::Karpenter, object, &pool_name)
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infra::read;
    use crate::input::{Limits, parse};

    fn pools(text: &str) -> InfraRead {
        read(&parse("k.yaml", text, &Limits::default()).documents)
    }

    const POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: win}\nspec:\n  template:\n    spec:\n      requirements:\n      - {key: kubernetes.io/os, operator: In, values: [windows]}\n      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: win}\n      taints:\n      - {key: os, value: windows, effect: NoSchedule}\n";

    #[test]
    fn alias_and_family_give_the_build() {
        for (class, build) in [
            (
                "amiSelectorTerms:\n  - alias: windows2022@latest\n",
                "10.0.20348",
            ),
            ("amiFamily: Windows2019\n", "10.0.17763"),
            (
                "amiSelectorTerms:\n  - alias: windows2025@latest\n",
                "10.0.26100",
            ),
        ] {
            let text = format!(
                "{POOL}---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: win}}\nspec:\n  {class}"
            );
            let read = pools(&text);
            assert!(read.errors.is_empty(), "{:?}", read.errors);
            let p = &read.pools[0];
            assert_eq!(p.build.as_deref(), Some(build), "{class}");
            assert_eq!(p.os, Some(Os::Windows));
            assert_eq!(p.labels["karpenter.sh/capacity-type"], "on-demand");
            assert_eq!(p.labels["karpenter.sh/nodepool"], "win");
            assert_eq!(p.taints.len(), 1);
        }
    }

    #[test]
    fn custom_family_without_build_requirement_is_unknown() {
        let text = format!(
            "{POOL}---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: win}}\nspec:\n  amiFamily: Custom\n  amiSelectorTerms:\n  - id: ami-0123456789abcdef0\n"
        );
        let read = pools(&text);
        let p = &read.pools[0];
        assert_eq!((p.os, p.build.as_deref()), (Some(Os::Windows), None));
        assert!(p.unknown.as_deref().is_some_and(|u| u.contains("Custom")));
        // Without the node class at all, the same.
        let alone = pools(POOL);
        assert!(
            alone.pools[0]
                .unknown
                .as_deref()
                .is_some_and(|u| u.contains("not among"))
        );
    }

    #[test]
    fn linux_pool_of_two_arches() {
        let read = pools(
            "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      requirements:\n      - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}\n      nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: default}\n---\napiVersion: karpenter.k8s.aws/v1beta1\nkind: EC2NodeClass\nmetadata: {name: default}\nspec: {amiFamily: AL2023}\n",
        );
        let names: Vec<_> = read
            .pools
            .iter()
            .map(|p| (p.name.as_str(), p.arch.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("default-amd64", Some("amd64")),
                ("default-arm64", Some("arm64"))
            ]
        );
        assert!(read.pools.iter().all(|p| p.os == Some(Os::Linux)));
    }
}
