//! Nodes, Pods and RuntimeClasses read from `kubectl get -o json` / `-o yaml` text: the `List`s and
//! documents here, each object decoded and trimmed by the rules crate's [`cluster_objects`].

use anyhow::{Context, anyhow};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde::Deserialize;
use serde_json::value::RawValue;
use winplace_rules::FieldPath;
use winplace_rules::audit::Change;
use winplace_rules::model::cluster_objects::{self, ClusterKind, ClusterObject, DecodeError};
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

    fn add_json(&mut self, raw: &str) -> Result<(), DecodeError> {
        match cluster_objects::decode_json(raw)? {
            Some(object) => self.add(object),
            None => self.skipped += 1,
        }
        Ok(())
    }

    fn add(&mut self, object: ClusterObject) {
        match object {
            ClusterObject::Node(node) => self.nodes.push(*node),
            ClusterObject::Pod(pod) => self.pods.push(*pod),
            ClusterObject::RuntimeClass(entry) => self.runtime_classes.push(*entry),
        }
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
            out.add_object(&object)?;
        }
        Ok(out)
    }

    fn add_object(&mut self, object: &Object) -> anyhow::Result<()> {
        let Some(kind) = ClusterKind::of(&object.kind, &object.api_version) else {
            self.skipped += 1;
            return Ok(());
        };
        let decoded = cluster_objects::decode_value(kind, &object.value).with_context(|| {
            let line = object.line_of(&FieldPath::root()).unwrap_or(1);
            format!("{}:{line}", object.file)
        })?;
        self.add(decoded);
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
