//! Node Declared Features (KEP-5328, GA in Kubernetes 1.37): which declared features a pod's spec needs,
//! as the shared library `k8s.io/component-helpers/nodedeclaredfeatures` infers them for the scheduler's
//! `NodeDeclaredFeatures` filter and the `NodeDeclaredFeatureValidator` admission plugin, and which of them
//! Windows nodes never declare (`kubernetes-windows-rules.md` §11).
//!
//! A node lists the features it has in `status.declaredFeatures`; the filter keeps a pod off every node
//! whose list lacks one the pod needs, with [`FILTER_MESSAGE`] (`UnschedulableAndUnresolvable`).
//!
//! ```
//! use winplace_rules::schedule::declared_features::{required, Requirement};
//! let spec = serde_json::json!({"hostNetwork": true, "hostUsers": false, "containers": []});
//! let needs = required(&spec);
//! assert_eq!(needs[0].feature.name, "UserNamespacesHostNetworkSupport");
//! assert!(needs[0].feature.windows_never.is_some());
//! assert_eq!(needs[0].path.to_string(), "hostUsers");
//! ```

use k8s_openapi::api::core::v1::Node;
use serde_json::Value;

use crate::path::FieldPath;

/// The scheduler's filter message without the feature list
/// (`pkg/scheduler/framework/plugins/nodedeclaredfeatures`, `Filter`): `node declared features check
/// failed - unsatisfied requirements: A, B`.
pub const FILTER_MESSAGE: &str = "node declared features check failed - unsatisfied requirements: ";

/// A declared feature a pod spec can need at scheduling (`InferForScheduling` returns true for some spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeclaredFeature {
    /// The name nodes declare (`UserNamespacesHostNetworkSupport`).
    pub name: &'static str,
    /// What in the pod spec needs it, for messages.
    pub uses: &'static str,
    /// Why Windows nodes never declare it, when they never do; `None` when a Windows node may.
    pub windows_never: Option<&'static str>,
}

/// `UserNamespacesHostNetworkSupport`: `hostNetwork: true` with `hostUsers: false`. Declared only when the
/// runtime reports `UserNamespacesHostNetwork`, which containerd sets on Linux only.
pub const USER_NAMESPACES_HOST_NETWORK: DeclaredFeature = DeclaredFeature {
    name: "UserNamespacesHostNetworkSupport",
    uses: "`hostNetwork: true` with `hostUsers: false`",
    windows_never: Some(
        "a node declares it only when its runtime reports user namespaces with host network, and containerd reports that on Linux only (Windows has no user namespaces)",
    ),
};

/// `RestartAllContainersOnContainerExits`: a container restart rule with action `RestartAllContainers`.
/// Declared from the kubelet's feature gate alone, so a Windows kubelet with the gate declares it.
pub const RESTART_ALL_CONTAINERS: DeclaredFeature = DeclaredFeature {
    name: "RestartAllContainersOnContainerExits",
    uses: "a restart rule with action `RestartAllContainers`",
    windows_never: None,
};

/// `VolumeBindMountOptions`: a volume mount with `bindMountOptions` (1.37 alpha). Declared when the
/// kubelet's gate is on and the runtime reports mount options.
pub const VOLUME_BIND_MOUNT_OPTIONS: DeclaredFeature = DeclaredFeature {
    name: "VolumeBindMountOptions",
    uses: "`bindMountOptions` on a volume mount",
    windows_never: None,
};

/// Every feature the 1.37 registry (`features.AllFeatures`) can infer for scheduling. The others of the
/// registry (the in-place resize ones, `ExtendWebSocketsToKubelet`, the DRA ones) infer nothing at
/// scheduling and are not listed.
pub const SCHEDULING_FEATURES: [DeclaredFeature; 3] = [
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
    VOLUME_BIND_MOUNT_OPTIONS,
];

/// A feature a pod spec needs, and the field (relative to the pod spec) that needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// The feature.
    pub feature: DeclaredFeature,
    /// Where the spec uses it (relative to the pod spec: `hostUsers`, `containers[0].volumeMounts[1].bindMountOptions`).
    pub path: FieldPath,
}

/// The container lists as `InferForScheduling` visits them: `containers` and `initContainers` for restart
/// rules, and `ephemeralContainers` too for mount options.
fn containers<'a>(
    spec: &'a Value,
    lists: &'a [&'a str],
) -> impl Iterator<Item = (FieldPath, &'a Value)> + 'a {
    lists.iter().flat_map(move |list| {
        spec.get(*list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, c)| (FieldPath::root().field(list.to_string()).index(i), c))
    })
}

/// The declared features `spec` (a pod spec as written) needs at scheduling, each once, at the first field
/// that needs it, in [`SCHEDULING_FEATURES`] order.
pub fn required(spec: &Value) -> Vec<Requirement> {
    let mut out = Vec::new();
    // restartallcontainers: containers and initContainers, any rule whose action is RestartAllContainers.
    let restart = containers(spec, &["containers", "initContainers"]).find_map(|(at, c)| {
        let rules = c.get("restartPolicyRules")?.as_array()?;
        let k = rules.iter().position(|r| {
            r.get("action").and_then(Value::as_str) == Some("RestartAllContainers")
        })?;
        Some(at.field("restartPolicyRules").index(k).field("action"))
    });
    if let Some(path) = restart {
        out.push(Requirement {
            feature: RESTART_ALL_CONTAINERS,
            path,
        });
    }
    // usernamespaceshostnetwork: HostNetwork && HostUsers != nil && !*HostUsers.
    let host_network = spec.get("hostNetwork").and_then(Value::as_bool) == Some(true);
    let host_users = spec.get("hostUsers").and_then(Value::as_bool);
    if host_network && host_users == Some(false) {
        out.push(Requirement {
            feature: USER_NAMESPACES_HOST_NETWORK,
            path: FieldPath::root().field("hostUsers"),
        });
    }
    // volumebindmountoptions: any container list, any mount with a non-empty bindMountOptions.
    let bind = containers(
        spec,
        &["containers", "initContainers", "ephemeralContainers"],
    )
    .find_map(|(at, c)| {
        let mounts = c.get("volumeMounts")?.as_array()?;
        let j = mounts.iter().position(|m| {
            m.get("bindMountOptions")
                .and_then(Value::as_array)
                .is_some_and(|o| !o.is_empty())
        })?;
        Some(at.field("volumeMounts").index(j).field("bindMountOptions"))
    });
    if let Some(path) = bind {
        out.push(Requirement {
            feature: VOLUME_BIND_MOUNT_OPTIONS,
            path,
        });
    }
    out
}

/// A node's `status.declaredFeatures`; `None` when the field is absent (a kubelet before 1.35, or with the
/// `NodeDeclaredFeatures` gate off), which the filter reads as declaring nothing.
pub fn declared(node: &Node) -> Option<&[String]> {
    node.status.as_ref()?.declared_features.as_deref()
}

/// The feature names of the scheduler's filter message (`node declared features check failed -
/// unsatisfied requirements: A, B`), read from any text that contains it; `None` without it.
///
/// ```
/// use winplace_rules::schedule::declared_features::unsatisfied;
/// let m = "0/3 nodes are available: 3 node declared features check failed - unsatisfied requirements: UserNamespacesHostNetworkSupport. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.";
/// assert_eq!(unsatisfied(m), Some(vec!["UserNamespacesHostNetworkSupport".to_string()]));
/// ```
pub fn unsatisfied(text: &str) -> Option<Vec<String>> {
    let at = text.find(FILTER_MESSAGE)? + FILTER_MESSAGE.len();
    let rest = &text[at..];
    // The list ends at the sentence's end (", " separates names; a name has no space or dot).
    let names = rest
        .split(", ")
        .map_while(|part| {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            let whole = name.len() == part.len();
            (!name.is_empty()).then_some((name, whole))
        })
        .scan(true, |go_on, (name, whole)| {
            let keep = *go_on;
            *go_on = whole;
            keep.then_some(name)
        })
        .collect::<Vec<_>>();
    (!names.is_empty()).then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (spec, expected (feature, path)) — component-helpers `nodedeclaredfeatures/features` @1961876b,
    /// each feature's `InferForScheduling`.
    #[test]
    fn inference_matches_the_registry() {
        let rows: Vec<(Value, Vec<(&str, &str)>)> = vec![
            (json!({"containers": [{"name": "a"}]}), vec![]),
            // hostUsers nil or true, or no hostNetwork: nothing.
            (json!({"hostNetwork": true}), vec![]),
            (json!({"hostNetwork": true, "hostUsers": true}), vec![]),
            (json!({"hostUsers": false}), vec![]),
            (
                json!({"hostNetwork": true, "hostUsers": false}),
                vec![("UserNamespacesHostNetworkSupport", "hostUsers")],
            ),
            // Restart rules: containers and initContainers, only the RestartAllContainers action.
            (
                json!({"containers": [{"restartPolicyRules": [{"action": "Restart"}]}]}),
                vec![],
            ),
            (
                json!({"initContainers": [{"restartPolicyRules": [{"action": "Restart"}, {"action": "RestartAllContainers"}]}]}),
                vec![(
                    "RestartAllContainersOnContainerExits",
                    "initContainers[0].restartPolicyRules[1].action",
                )],
            ),
            // Bind mount options: any list, ephemeral containers too; an empty list needs nothing.
            (
                json!({"containers": [{"volumeMounts": [{"name": "v", "bindMountOptions": []}]}]}),
                vec![],
            ),
            (
                json!({"ephemeralContainers": [{"volumeMounts": [{"name": "a"}, {"name": "v", "bindMountOptions": ["noexec"]}]}]}),
                vec![(
                    "VolumeBindMountOptions",
                    "ephemeralContainers[0].volumeMounts[1].bindMountOptions",
                )],
            ),
        ];
        for (spec, want) in rows {
            let got: Vec<(&str, String)> = required(&spec)
                .into_iter()
                .map(|r| (r.feature.name, r.path.to_string()))
                .collect();
            let want: Vec<(&str, String)> =
                want.into_iter().map(|(f, p)| (f, p.to_string())).collect();
            assert_eq!(got, want, "{spec}");
        }
    }

    #[test]
    fn only_user_namespaces_with_host_network_is_never_on_windows() {
        let never: Vec<&str> = SCHEDULING_FEATURES
            .iter()
            .filter(|f| f.windows_never.is_some())
            .map(|f| f.name)
            .collect();
        assert_eq!(never, ["UserNamespacesHostNetworkSupport"]);
    }

    #[test]
    fn the_filter_message_is_read_back() {
        // The scheduler's message (Filter, as its unit test expects it) inside a FailedScheduling event.
        let one = "0/2 nodes are available: 2 node declared features check failed - unsatisfied requirements: TestFeature.";
        assert_eq!(unsatisfied(one), Some(vec!["TestFeature".to_string()]));
        let two =
            "node declared features check failed - unsatisfied requirements: FeatureA, FeatureB";
        assert_eq!(
            unsatisfied(two),
            Some(vec!["FeatureA".to_string(), "FeatureB".to_string()])
        );
        assert_eq!(
            unsatisfied("0/2 nodes are available: 2 Insufficient cpu."),
            None
        );
    }
}
