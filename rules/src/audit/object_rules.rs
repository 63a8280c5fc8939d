//! The object rules on the cluster's own objects: the node rules (Windows nodes only) and the
//! RuntimeClass rules.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Node;
use serde_json::Value;

use super::{Audit, node_name, share_findings, sort_findings};
use crate::finding::Finding;
use crate::input::LineMap;
use crate::model::{Object, node_os};
use crate::rules::evaluate_object;

/// The node as an object the rules read (`apiVersion` and `kind` set).
fn node_object(node: &Node) -> Option<Object> {
    let mut value = serde_json::to_value(node).ok()?;
    if let Some(map) = value.as_object_mut() {
        map.insert("apiVersion".into(), Value::from("v1"));
        map.insert("kind".into(), Value::from("Node"));
    }
    Object::from_value("", 0, value, LineMap::default())
}

impl Audit {
    /// The RuntimeClass rules on every RuntimeClass.
    pub(super) fn evaluate_runtime_classes(&self) -> Vec<Finding> {
        let mut findings = Vec::new();
        for entry in &self.context.runtime_classes {
            let Ok(mut value) = serde_json::to_value(&entry.object) else {
                continue;
            };
            if let Some(map) = value.as_object_mut() {
                map.insert("apiVersion".into(), Value::from(entry.api_version.as_str()));
                map.insert("kind".into(), Value::from("RuntimeClass"));
            }
            if let Some(object) = Object::from_value("", 0, value, LineMap::default()) {
                evaluate_object(&object, &self.settings, &mut findings);
            }
        }
        sort_findings(&mut findings);
        findings
    }

    /// The node rules on the nodes `names` (Windows nodes only: the rules are about them).
    pub(super) fn run_node_rules(&mut self, names: &BTreeSet<String>) {
        for name in names {
            let Ok(i) = self
                .context
                .nodes
                .binary_search_by(|n| node_name(n).cmp(name))
            else {
                continue;
            };
            let mut findings = Vec::new();
            let node = self.context.nodes.get(i);
            // The node rules are about Windows nodes only: skip serializing the others.
            if let Some(object) = node
                .filter(|n| node_os(n) == Some("windows"))
                .and_then(node_object)
            {
                evaluate_object(&object, &self.settings, &mut findings);
            }
            sort_findings(&mut findings);
            if let Some(entry) = self.nodes.get_mut(name) {
                share_findings(&mut entry.findings, findings);
            }
        }
    }
}
