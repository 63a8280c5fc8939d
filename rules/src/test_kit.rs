//! The crate's test kit: the one Node builder every module's tests use, whether they want a typed
//! [`Node`] or the YAML text a user would give (the rule families' kit, which runs rules over YAML and reads
//! their findings back, is `rules/test_kit.rs`).
//!
//! ```text
//! node("w22").os("windows").build("10.0.20348").windows_taint().typed()
//! ```

use k8s_openapi::api::core::v1::Node;
use serde_json::{Map, Value, json};

/// The fields of `status.nodeInfo` the API requires (`NodeSystemInfo`): a typed Node needs them all.
const NODE_INFO_FIELDS: [&str; 10] = [
    "architecture",
    "bootID",
    "containerRuntimeVersion",
    "kernelVersion",
    "kubeProxyVersion",
    "kubeletVersion",
    "machineID",
    "operatingSystem",
    "osImage",
    "systemUUID",
];

/// A Node named `name`, with nothing else yet.
pub(crate) fn node(name: &str) -> NodeBuilder {
    NodeBuilder(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}))
}

/// A Windows node of `build` (label) with the Windows taint, as most tests' clusters have.
pub(crate) fn windows_node(name: &str, build: &str) -> NodeBuilder {
    node(name).os("windows").build(build).windows_taint()
}

/// A Linux node (the OS label only).
pub(crate) fn linux_node(name: &str) -> NodeBuilder {
    node(name).os("linux")
}

/// A Node of a test, built field by field (only the fields a builder method sets are there).
#[derive(Debug, Clone)]
pub(crate) struct NodeBuilder(Value);

impl NodeBuilder {
    /// The object at `path` (made on the way), as a map.
    fn map(&mut self, path: &[&str]) -> &mut Map<String, Value> {
        let mut v = &mut self.0;
        for key in path {
            v = v
                .as_object_mut()
                .expect("an object")
                .entry(*key)
                .or_insert_with(|| json!({}));
        }
        v.as_object_mut().expect("an object")
    }

    /// Sets `key` to `value` in the object at `path`.
    pub(crate) fn set(mut self, path: &[&str], key: &str, value: Value) -> Self {
        self.map(path).insert(key.into(), value);
        self
    }

    /// A label.
    pub(crate) fn label(self, key: &str, value: &str) -> Self {
        self.set(&["metadata", "labels"], key, json!(value))
    }

    /// Labels, in order (`metadata.labels`, present even when `labels` is empty).
    pub(crate) fn labels(mut self, labels: &[(&str, &str)]) -> Self {
        let map = self.map(&["metadata", "labels"]);
        for (key, value) in labels {
            map.insert(key.to_string(), json!(value));
        }
        self
    }

    /// `metadata.labels` as given (a JSON map).
    pub(crate) fn label_map(self, labels: Value) -> Self {
        self.set(&["metadata"], "labels", labels)
    }

    /// The `kubernetes.io/os` label.
    pub(crate) fn os(self, os: &str) -> Self {
        self.label("kubernetes.io/os", os)
    }

    /// The `node.kubernetes.io/windows-build` label.
    pub(crate) fn build(self, build: &str) -> Self {
        self.label("node.kubernetes.io/windows-build", build)
    }

    /// A taint (`spec.taints`, added after the ones before); an empty `value` is left out.
    pub(crate) fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        let mut taint = json!({"key": key, "effect": effect});
        if !value.is_empty() {
            taint["value"] = json!(value);
        }
        let spec = self.map(&["spec"]);
        let taints = spec.entry("taints").or_insert_with(|| json!([]));
        taints.as_array_mut().expect("a list").push(taint);
        self
    }

    /// The Windows taint most platforms put on Windows nodes, `os=windows:NoSchedule`.
    pub(crate) fn windows_taint(self) -> Self {
        self.taint("os", "windows", "NoSchedule")
    }

    /// `spec.taints` as given (`[]`: the field present and empty).
    pub(crate) fn taints(self, taints: Value) -> Self {
        self.set(&["spec"], "taints", taints)
    }

    /// A field of `status.nodeInfo`.
    pub(crate) fn info(self, key: &str, value: &str) -> Self {
        self.set(&["status", "nodeInfo"], key, json!(value))
    }

    /// Fields of `status.nodeInfo`, in order (present even when `fields` is empty).
    pub(crate) fn node_info(mut self, fields: &[(&str, &str)]) -> Self {
        let map = self.map(&["status", "nodeInfo"]);
        for (key, value) in fields {
            map.insert(key.to_string(), json!(value));
        }
        self
    }

    /// `status.nodeInfo.kernelVersion`.
    pub(crate) fn kernel(self, version: &str) -> Self {
        self.info("kernelVersion", version)
    }

    /// `status.declaredFeatures`, as a kubelet publishes them (core/v1 `NodeStatus.DeclaredFeatures`).
    pub(crate) fn declared_features(self, features: &[&str]) -> Self {
        self.set(&["status"], "declaredFeatures", json!(features))
    }

    /// The `Ready` condition, true.
    pub(crate) fn ready(self) -> Self {
        self.set(
            &["status"],
            "conditions",
            json!([{"type": "Ready", "status": "True"}]),
        )
    }

    /// The typed Node; the `status.nodeInfo` fields the API requires and the builder did not set are
    /// empty strings.
    pub(crate) fn typed(mut self) -> Node {
        if let Some(info) = self
            .0
            .pointer_mut("/status/nodeInfo")
            .and_then(Value::as_object_mut)
        {
            for field in NODE_INFO_FIELDS {
                info.entry(field).or_insert_with(|| json!(""));
            }
        }
        serde_json::from_value(self.0).expect("a Node")
    }

    /// The Node as a YAML document (JSON, which YAML reads as it is).
    pub(crate) fn yaml(&self) -> String {
        format!("{}\n", self.0)
    }
}

/// The nodes as one YAML text, a `List`.
pub(crate) fn node_list(nodes: &[NodeBuilder]) -> String {
    let items: String = nodes.iter().map(|n| format!("- {}\n", n.0)).collect();
    format!("apiVersion: v1\nkind: List\nitems:\n{items}")
}
