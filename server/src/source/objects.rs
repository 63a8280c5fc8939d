//! Nodes, Pods and RuntimeClasses read from `kubectl get -o json` / `-o yaml` text, trimmed of what the
//! audit never reads.

use anyhow::{Context, anyhow};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::node::v1::RuntimeClass;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use winplace_rules::audit::Change;
use winplace_rules::model::{Object, RuntimeClassEntry};

/// The objects of a cluster that the audit reads.
#[derive(Debug, Default, Clone)]
pub struct ClusterObjects {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods of every namespace.
    pub pods: Vec<Pod>,
    /// RuntimeClasses (`node.k8s.io/v1` and `v1beta1`).
    pub runtime_classes: Vec<RuntimeClassEntry>,
    /// Objects of other kinds that were skipped.
    pub skipped: usize,
}

impl ClusterObjects {
    /// The objects as one [`Change::Reset`].
    pub fn into_reset(self) -> Change {
        Change::Reset {
            nodes: self.nodes,
            pods: self.pods,
            runtime_classes: self.runtime_classes,
        }
    }

    /// Reads `text`: JSON when it starts with `{` (parsed straight into the Kubernetes types, fast),
    /// else YAML (through the rules crate's parser, which names lines in errors).
    pub fn parse(file: &str, text: &str) -> anyhow::Result<Self> {
        if text.trim_start().starts_with('{') {
            Self::from_json(file, text)
        } else {
            Self::from_yaml(file, text)
        }
    }

    /// Reads a `List` (or a single object) in JSON.
    pub fn from_json(file: &str, text: &str) -> anyhow::Result<Self> {
        #[derive(Deserialize)]
        struct Top<'a> {
            #[serde(borrow, default)]
            items: Option<Vec<&'a RawValue>>,
        }
        let top: Top =
            serde_json::from_str(text).with_context(|| format!("{file}: not valid JSON"))?;
        let mut out = ClusterObjects::default();
        match top.items {
            Some(items) => {
                for (i, raw) in items.into_iter().enumerate() {
                    out.add_json(raw.get()).with_context(|| {
                        format!("{file}:{}: items[{i}]", line_of(text, raw.get()))
                    })?;
                }
            }
            None => out.add_json(text).with_context(|| file.to_string())?,
        }
        Ok(out)
    }

    fn add_json(&mut self, raw: &str) -> anyhow::Result<()> {
        #[derive(Deserialize)]
        struct Head<'a> {
            #[serde(borrow, default)]
            kind: Option<Cow<'a, str>>,
            #[serde(borrow, default, rename = "apiVersion")]
            api_version: Option<Cow<'a, str>>,
        }
        let head: Head = serde_json::from_str(raw)?;
        let kind = head.kind.as_deref().unwrap_or("");
        let version = head.api_version.as_deref().unwrap_or("");
        match (kind, version) {
            ("Node", "v1") => self.nodes.push(trim_node(serde_json::from_str(raw)?)),
            ("Pod", "v1") => self.pods.push(trim_pod(serde_json::from_str(raw)?)),
            ("RuntimeClass", "node.k8s.io/v1") => self.runtime_classes.push(RuntimeClassEntry {
                api_version: version.to_string(),
                object: serde_json::from_str(raw)?,
            }),
            ("RuntimeClass", "node.k8s.io/v1beta1") => {
                // Same shape as v1, but k8s-openapi refuses any apiVersion but its own.
                let mut value: serde_json::Value = serde_json::from_str(raw)?;
                if let Some(map) = value.as_object_mut() {
                    map.remove("apiVersion");
                }
                self.runtime_classes.push(RuntimeClassEntry {
                    api_version: version.to_string(),
                    object: serde_json::from_value(value)?,
                });
            }
            ("", _) => return Err(anyhow!("an object without kind")),
            _ => self.skipped += 1,
        }
        Ok(())
    }

    /// Reads YAML (several documents, `List`s) with the rules crate's parser; limits are raised for
    /// cluster-sized lists.
    pub fn from_yaml(file: &str, text: &str) -> anyhow::Result<Self> {
        let limits = winplace_rules::input::Limits {
            max_bytes: 4 * 1024 * 1024 * 1024,
            max_documents: 1_000_000,
            max_depth: 100,
            max_nodes: usize::MAX,
        };
        let parsed = winplace_rules::input::parse(file, text, &limits);
        if let Some(e) = parsed.errors.first() {
            return Err(anyhow!("{e}"));
        }
        let mut out = ClusterObjects::default();
        for object in winplace_rules::model::objects(&parsed.documents) {
            out.add_object(object)?;
        }
        Ok(out)
    }

    fn add_object(&mut self, object: Object) -> anyhow::Result<()> {
        let place = format!(
            "{}:{}: {}",
            object.file,
            object
                .line_of(&winplace_rules::FieldPath::root())
                .unwrap_or(1),
            object.object_ref().display_name()
        );
        let mut value = object.value;
        if let Some(map) = value.as_object_mut() {
            map.remove("apiVersion");
            map.remove("kind");
        }
        match (object.kind.as_str(), object.api_version.as_str()) {
            ("Node", "v1") => self
                .nodes
                .push(trim_node(serde_json::from_value(value).context(place)?)),
            ("Pod", "v1") => self
                .pods
                .push(trim_pod(serde_json::from_value(value).context(place)?)),
            ("RuntimeClass", v @ ("node.k8s.io/v1" | "node.k8s.io/v1beta1")) => {
                let object: RuntimeClass = serde_json::from_value(value).context(place)?;
                self.runtime_classes.push(RuntimeClassEntry {
                    api_version: v.to_string(),
                    object,
                });
            }
            _ => self.skipped += 1,
        }
        Ok(())
    }
}

/// The 1-based line of `inner` (a slice of `text`) in `text`.
fn line_of(text: &str, inner: &str) -> usize {
    let offset = (inner.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    text.get(..offset)
        .map(|before| before.bytes().filter(|&b| b == b'\n').count() + 1)
        .unwrap_or(1)
}

/// Drops what the audit never reads and what makes nodes big (managed fields, the image list).
pub fn trim_node(mut node: Node) -> Node {
    node.metadata.managed_fields = None;
    if let Some(status) = node.status.as_mut() {
        status.images = None;
    }
    node
}

/// Drops what the audit never reads (managed fields).
pub fn trim_pod(mut pod: Pod) -> Pod {
    pod.metadata.managed_fields = None;
    pod
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_newlines_before_the_slice() {
        let text = "a\nb\nc";
        assert_eq!(line_of(text, &text[4..]), 3);
        assert_eq!(line_of(text, text), 1);
    }
}
