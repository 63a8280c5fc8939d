//! The cluster a workload is checked against: its Nodes and RuntimeClasses.

use k8s_openapi::api::core::v1::Node;
use serde::{Deserialize, Serialize};

use super::cluster_objects::{self, ClusterKind, FieldError, RuntimeClassEntry};
use super::{ModelError, Object};
use crate::finding::ObjectRef;

/// Nodes and RuntimeClasses of a cluster, as far as they are known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterContext {
    /// The cluster's Nodes.
    pub nodes: Vec<Node>,
    /// The cluster's RuntimeClasses (`v1` and `v1beta1`).
    pub runtime_classes: Vec<RuntimeClassEntry>,
}

/// An object of the context that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {error}", object.display_name())]
pub struct ObjectError {
    /// The object.
    pub object: ObjectRef,
    /// Its input file.
    pub file: String,
    /// Line of the faulty field.
    pub line: Option<u32>,
    /// The faulty field and what is wrong with it.
    pub error: ModelError,
}

impl ClusterContext {
    /// Collects the `v1` Nodes and `node.k8s.io/v1|v1beta1` RuntimeClasses among `objects` (other
    /// objects are ignored), trimmed to what the rules read (see [`cluster_objects`]); objects that do
    /// not decode are returned as errors and left out.
    pub fn from_objects(objects: &[Object]) -> (ClusterContext, Vec<ObjectError>) {
        let mut ctx = ClusterContext::default();
        let mut errors = Vec::new();
        let mut fail = |obj: &Object, e: FieldError| {
            errors.push(ObjectError {
                object: obj.object_ref(),
                file: obj.file.clone(),
                line: obj.line_of(&e.error.path),
                error: e.error,
            });
        };
        for obj in objects {
            match ClusterKind::of(&obj.kind, &obj.api_version) {
                Some(ClusterKind::Node) => match cluster_objects::decode_node(&obj.value) {
                    Ok(node) => ctx.nodes.push(node),
                    Err(e) => fail(obj, e),
                },
                Some(ClusterKind::RuntimeClass(version)) => {
                    match cluster_objects::decode_runtime_class(version, &obj.value) {
                        Ok(rc) => ctx.runtime_classes.push(rc),
                        Err(e) => fail(obj, e),
                    }
                }
                Some(ClusterKind::Pod) | None => {}
            }
        }
        (ctx, errors)
    }

    /// The RuntimeClass named `name`; a `v1` one wins over a `v1beta1` one of the same name.
    pub fn runtime_class(&self, name: &str) -> Option<&RuntimeClassEntry> {
        let named = |e: &&RuntimeClassEntry| e.object.metadata.name.as_deref() == Some(name);
        self.runtime_classes
            .iter()
            .filter(named)
            .find(|e| e.api_version == "node.k8s.io/v1")
            .or_else(|| self.runtime_classes.iter().find(named))
    }

    /// The distinct Windows builds (`10.0.20348`) of the cluster's Windows nodes, sorted.
    pub fn windows_builds(&self) -> Vec<String> {
        // Borrowed until the few distinct ones are known: an admission request reads 5,000 nodes.
        let builds: std::collections::BTreeSet<&str> = self
            .nodes
            .iter()
            .filter(|n| node_os(n) == Some("windows"))
            .filter_map(windows_build_of)
            .collect();
        builds.into_iter().map(str::to_string).collect()
    }
}

/// A node's OS: its `kubernetes.io/os` label, else `status.nodeInfo.operatingSystem`.
pub fn node_os(node: &Node) -> Option<&str> {
    let label = node
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("kubernetes.io/os"))
        .map(String::as_str);
    label.or_else(|| {
        node.status
            .as_ref()?
            .node_info
            .as_ref()
            .map(|i| i.operating_system.as_str())
            .filter(|os| !os.is_empty())
    })
}

/// A Windows node's build (`10.0.20348`): the first three numbers of `status.nodeInfo.kernelVersion`
/// (`10.0.20348.2762` on Windows: major.minor.build.UBR) when present, else the
/// `node.kubernetes.io/windows-build` label.
pub fn node_windows_build(node: &Node) -> Option<String> {
    windows_build_of(node).map(str::to_string)
}

/// [`node_windows_build`], borrowed from the node (the build is a prefix of the kernel version).
fn windows_build_of(node: &Node) -> Option<&str> {
    let kernel = node
        .status
        .as_ref()
        .and_then(|s| s.node_info.as_ref())
        .map(|i| i.kernel_version.as_str())
        .unwrap_or("");
    // The end of the third dot-separated part, when the first three are all digits.
    let mut end = 0;
    let mut parts = 0;
    for part in kernel.split('.').take(3) {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        end += part.len() + usize::from(parts > 0);
        parts += 1;
    }
    if parts == 3 {
        return Some(&kernel[..end]);
    }
    node.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("node.kubernetes.io/windows-build"))
        .map(String::as_str)
}

/// A node's taints (`spec.taints`; empty when the node has no spec or no taints).
pub fn node_taints(node: &Node) -> &[k8s_openapi::api::core::v1::Taint] {
    node.spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or_default()
}

/// A node's OS as a typed value and, for Windows nodes, its build number (`20348`): what placement and the
/// audit index nodes by.
pub fn node_os_build(node: &Node) -> (Option<crate::windows::Os>, Option<u32>) {
    use crate::windows::Os;
    let os = node_os(node).and_then(|o| o.parse::<Os>().ok());
    let build = if os == Some(Os::Windows) {
        node_windows_build(node)
            .and_then(|b| crate::windows::builds::WindowsVersion::parse(&b))
            .map(|v| v.build)
    } else {
        None
    };
    (os, build)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Limits, parse};
    use crate::model::objects;
    use crate::test_kit::{node, node_list};

    fn context(text: &str) -> (ClusterContext, Vec<ObjectError>) {
        let parsed = parse("c.yaml", text, &Limits::default());
        assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
        ClusterContext::from_objects(&objects(&parsed.documents))
    }

    type Pairs = &'static [(&'static str, &'static str)];

    /// A node `n1` with these labels and `nodeInfo` fields (both present, even when empty).
    fn node_with(labels: Pairs, info: Pairs) -> String {
        node_list(&[node("n1").labels(labels).node_info(info)])
    }

    /// A node's labels and `nodeInfo`, and the OS and build read from them.
    struct OsCase {
        labels: Pairs,
        info: Pairs,
        os: Option<&'static str>,
        build: Option<&'static str>,
    }

    #[test]
    fn node_os_and_build() {
        // kubernetes-windows-rules.md §5.4: the build label is major.minor.build; kernelVersion is major.minor.build.UBR.
        let cases = [
            OsCase {
                labels: &[("kubernetes.io/os", "windows")],
                info: &[("kernelVersion", "10.0.20348.2762")],
                os: Some("windows"),
                build: Some("10.0.20348"),
            },
            OsCase {
                labels: &[
                    ("kubernetes.io/os", "windows"),
                    ("node.kubernetes.io/windows-build", "10.0.17763"),
                ],
                info: &[("operatingSystem", "windows")],
                os: Some("windows"),
                build: Some("10.0.17763"),
            },
            OsCase {
                labels: &[("node.kubernetes.io/windows-build", "10.0.17763")],
                info: &[
                    ("operatingSystem", "windows"),
                    ("kernelVersion", "10.0.26100.1"),
                ],
                os: Some("windows"),
                build: Some("10.0.26100"),
            },
            OsCase {
                labels: &[("kubernetes.io/os", "linux")],
                info: &[
                    ("operatingSystem", "linux"),
                    ("kernelVersion", "6.1.0-27-amd64"),
                ],
                os: Some("linux"),
                build: None,
            },
            OsCase {
                labels: &[],
                info: &[],
                os: None,
                build: None,
            },
        ];
        for case in cases {
            let (ctx, errors) = context(&node_with(case.labels, case.info));
            assert!(errors.is_empty());
            let n = &ctx.nodes[0];
            let (labels, info) = (case.labels, case.info);
            assert_eq!(node_os(n), case.os, "{labels:?} {info:?}");
            assert_eq!(
                node_windows_build(n).as_deref(),
                case.build,
                "{labels:?} {info:?}"
            );
        }
    }

    /// The Kubewarden policy asks for the nodes labelled Linux without `nodeInfo`
    /// (`cluster_objects::LINUX_NODE_FIELDS`): of such a node, whatever its `nodeInfo` says (even Windows
    /// and a Windows kernel), the OS, the build and the cluster's builds read the same without it.
    #[test]
    fn a_node_labelled_linux_is_read_without_its_node_info() {
        let infos: [Pairs; 4] = [
            &[
                ("operatingSystem", "linux"),
                ("kernelVersion", "6.1.0-27-amd64"),
            ],
            &[
                ("operatingSystem", "windows"),
                ("kernelVersion", "10.0.20348.2762"),
            ],
            &[("kernelVersion", "10.0.26100.1")],
            &[("operatingSystem", "")],
        ];
        let labelled: [Pairs; 2] = [
            &[("kubernetes.io/os", "linux")],
            &[
                ("kubernetes.io/os", "linux"),
                ("node.kubernetes.io/windows-build", "10.0.17763"),
            ],
        ];
        for labels in labelled {
            let (bare, _) = context(&node_list(&[node("n1").labels(labels)]));
            let bare_node = &bare.nodes[0];
            assert!(bare_node.status.is_none());
            for info in infos {
                let (ctx, _) = context(&node_with(labels, info));
                let n = &ctx.nodes[0];
                assert_eq!(node_os(n), Some("linux"), "{labels:?} {info:?}");
                assert_eq!(
                    node_os_build(n),
                    node_os_build(bare_node),
                    "{labels:?} {info:?}"
                );
                assert_eq!(
                    ctx.windows_builds(),
                    bare.windows_builds(),
                    "{labels:?} {info:?}"
                );
                assert!(ctx.windows_builds().is_empty());
            }
        }
    }

    #[test]
    fn windows_builds_are_distinct_and_sorted() {
        let windows = |kernel: &str| node("n1").os("windows").kernel(kernel);
        let text = node_list(&[
            windows("10.0.26100.3"),
            windows("10.0.20348.2762"),
            windows("10.0.20348.1"),
            node("n1").os("linux").kernel("10.0.1.1"),
        ]);
        let (ctx, _) = context(&text);
        assert_eq!(ctx.windows_builds(), ["10.0.20348", "10.0.26100"]);
    }

    #[test]
    fn runtime_classes_of_both_versions() {
        let text = "apiVersion: node.k8s.io/v1beta1\nkind: RuntimeClass\nmetadata: {name: old}\nhandler: docker\nscheduling:\n  nodeSelector: {kubernetes.io/os: windows}\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: new}\nhandler: runhcs-wcow-process\n---\napiVersion: node.k8s.io/v1beta1\nkind: RuntimeClass\nmetadata: {name: new}\nhandler: other\n---\napiVersion: node.k8s.io/v1alpha1\nkind: RuntimeClass\nmetadata: {name: ignored}\n";
        let (ctx, errors) = context(text);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(ctx.runtime_classes.len(), 3);
        let old = ctx.runtime_class("old").expect("v1beta1 is read");
        assert_eq!(old.api_version, "node.k8s.io/v1beta1");
        assert_eq!(old.object.handler, "docker");
        let sel = old
            .object
            .scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref());
        assert_eq!(
            sel.and_then(|s| s.get("kubernetes.io/os"))
                .map(String::as_str),
            Some("windows")
        );
        assert_eq!(
            ctx.runtime_class("new").map(|e| e.object.handler.as_str()),
            Some("runhcs-wcow-process")
        );
        assert!(ctx.runtime_class("ignored").is_none());
    }

    #[test]
    fn undecodable_context_objects_are_errors_with_lines() {
        let text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nspec:\n  taints:\n  - key: os\n    effect: 7\n";
        let (ctx, errors) = context(text);
        assert!(ctx.nodes.is_empty());
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].error.path.to_string(), "spec.taints[0].effect");
        assert_eq!(errors[0].line, Some(8));
        assert_eq!(errors[0].object.display_name(), "Node/n1");
    }

    #[test]
    fn corpus_cluster_files_decode() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus");
        let mut nodes = 0;
        for entry in std::fs::read_dir(dir).expect("corpus").flatten() {
            let Ok(text) = std::fs::read_to_string(entry.path().join("cluster.yaml")) else {
                continue;
            };
            let (ctx, errors) = context(&text);
            assert!(errors.is_empty(), "{errors:?}");
            nodes += ctx.nodes.len();
        }
        assert!(nodes > 0);
    }
}
