//! Which platform a live Node runs on, from the labels its platform puts on every node
//! (`docs/reference/platforms.md` §10).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;

use super::{LifecyclePlatform, LifecycleSettings};

/// Labels only one platform sets, with the platform (`platforms.md` §1.4, §2.1, §3.3, §4.4). Not
/// `karpenter.sh/nodepool` (Karpenter runs on more than AWS) nor `agentpool` (any cluster may use it).
const PLATFORM_LABELS: &[(&str, LifecyclePlatform)] = &[
    ("kubernetes.azure.com/agentpool", LifecyclePlatform::Aks),
    ("kubernetes.azure.com/mode", LifecyclePlatform::Aks),
    ("kubernetes.azure.com/os-sku", LifecyclePlatform::Aks),
    ("eks.amazonaws.com/nodegroup", LifecyclePlatform::Eks),
    ("alpha.eksctl.io/nodegroup-name", LifecyclePlatform::Eks),
    ("karpenter.k8s.aws/ec2nodeclass", LifecyclePlatform::Eks),
    ("cloud.google.com/gke-nodepool", LifecyclePlatform::Gke),
];

/// The platform whose labels a node carries (`None` when it carries none of [`PLATFORM_LABELS`]).
///
/// ```
/// use std::collections::BTreeMap;
/// use winplace_rules::lifecycle::{LifecyclePlatform, platform_from_labels};
/// let labels = BTreeMap::from([("kubernetes.azure.com/agentpool".to_string(), "win19".to_string())]);
/// assert_eq!(platform_from_labels(&labels), Some(LifecyclePlatform::Aks));
/// assert_eq!(platform_from_labels(&BTreeMap::new()), None);
/// ```
pub fn platform_from_labels(labels: &BTreeMap<String, String>) -> Option<LifecyclePlatform> {
    PLATFORM_LABELS
        .iter()
        .find(|(label, _)| labels.contains_key(*label))
        .map(|(_, p)| *p)
}

/// The calendar that holds for `node`: the `lifecycle.platform` setting when given (every node is on
/// it: the way to say AKS Arc, whose nodes no label tells apart), else the platform its labels name,
/// else the `platform` preset's (`None` for `generic`: Microsoft's calendar only).
pub fn node_platform(
    node: &Node,
    lifecycle: &LifecycleSettings,
    preset: crate::platform::Platform,
) -> Option<LifecyclePlatform> {
    lifecycle
        .platform
        .or_else(|| node.metadata.labels.as_ref().and_then(platform_from_labels))
        .or_else(|| LifecyclePlatform::of_preset(preset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;
    use crate::test_kit::node;

    #[test]
    fn labels_then_setting_then_preset() {
        let none = LifecycleSettings::default();
        let arc = LifecycleSettings {
            platform: Some(LifecyclePlatform::AksArc),
            ..LifecycleSettings::default()
        };
        let aks = node("n")
            .labels(&[
                ("kubernetes.azure.com/agentpool", "win19"),
                ("agentpool", "win19"),
            ])
            .typed();
        let eks = node("n")
            .labels(&[("eks.amazonaws.com/nodegroup", "ng")])
            .typed();
        let gke = node("n")
            .labels(&[("cloud.google.com/gke-nodepool", "win")])
            .typed();
        let karpenter_only = node("n")
            .labels(&[("karpenter.sh/nodepool", "default")])
            .typed();
        let plain = node("n").labels(&[("agentpool", "win19")]).typed();
        // (node, lifecycle settings, preset, expected)
        let rows = [
            (&aks, &none, Platform::Generic, Some(LifecyclePlatform::Aks)),
            (&aks, &none, Platform::Eks, Some(LifecyclePlatform::Aks)),
            (
                &aks,
                &arc,
                Platform::Generic,
                Some(LifecyclePlatform::AksArc),
            ),
            (&eks, &none, Platform::Generic, Some(LifecyclePlatform::Eks)),
            (&gke, &none, Platform::Generic, Some(LifecyclePlatform::Gke)),
            (&karpenter_only, &none, Platform::Generic, None),
            (&plain, &none, Platform::Generic, None),
            (
                &plain,
                &none,
                Platform::Openshift,
                Some(LifecyclePlatform::Openshift),
            ),
        ];
        for (n, s, preset, want) in rows {
            assert_eq!(
                node_platform(n, s, preset),
                want,
                "{:?} {preset:?}",
                n.metadata.labels
            );
        }
    }
}
