//! `windows-pod-undeclared-feature`: a Windows-bound pod whose spec needs a node declared feature
//! (Kubernetes 1.37, `kubernetes-windows-rules.md` §11) that Windows nodes never declare, or that no
//! Windows node of the cluster context declares. The scheduler's `NodeDeclaredFeatures` filter then
//! rejects every Windows node (`node declared features check failed - unsatisfied requirements: …`) and
//! the pod stays Pending.
//!
//! Without a cluster context only the features Windows never declares count. With one, a feature counts
//! too when some node of the context publishes `status.declaredFeatures` (so the cluster runs the
//! feature) and no Windows node lists it.

use super::{Emitter, RuleId, TemplateCx};
use crate::model::node_os;
use crate::placement::PodOs;
use crate::schedule::declared_features::{
    FILTER_MESSAGE, Requirement, USER_NAMESPACES_HOST_NETWORK, declared, required,
};

/// Runs the rule on a Windows pod.
pub(crate) fn check(cx: &TemplateCx<'_>, out: &mut Emitter<'_>) {
    if cx.placement.os != PodOs::Windows || cx.placement.host_process {
        return;
    }
    // With `spec.os.name: windows` the API server refuses `hostUsers` before any scheduling
    // (`windows-forbidden-field`, §1.2): the pod never reaches the filter.
    let os_windows = cx.placement.os_name.as_deref() == Some("windows");
    let windows_nodes: Vec<_> = cx
        .context
        .map(|c| {
            c.nodes
                .iter()
                .filter(|n| node_os(n) == Some("windows"))
                .collect()
        })
        .unwrap_or_default();
    let cluster_declares = cx
        .context
        .is_some_and(|c| c.nodes.iter().any(|n| declared(n).is_some()));
    for need in required(cx.template.raw) {
        if os_windows && need.feature == USER_NAMESPACES_HOST_NETWORK {
            continue;
        }
        let why = match need.feature.windows_never {
            Some(why) => format!("Windows nodes never declare it ({why})"),
            None if cluster_declares && !windows_nodes.is_empty() => {
                let any = windows_nodes.iter().any(|n| {
                    declared(n).is_some_and(|list| list.iter().any(|f| f == need.feature.name))
                });
                if any {
                    continue;
                }
                format!(
                    "none of the cluster's {} Windows node(s) lists it in status.declaredFeatures",
                    windows_nodes.len()
                )
            }
            None => continue,
        };
        emit(cx, &need, &why, out);
    }
}

fn emit(cx: &TemplateCx<'_>, need: &Requirement, why: &str, out: &mut Emitter<'_>) {
    let path = cx.template.prefix.join(&need.path);
    let name = need.feature.name;
    // No fix of its own: `windows-unsupported-field` (or `windows-forbidden-field`) already removes
    // `hostUsers`, and two removals of one field cannot both apply.
    let todo = if need.feature == USER_NAMESPACES_HOST_NETWORK {
        "remove `hostUsers: false` (Windows has no user namespaces), or run the pod on Linux nodes"
    } else {
        "remove the field, or enable the feature on the Windows nodes' kubelets so that they declare it"
    };
    let message = format!(
        "this pod is bound to Windows nodes and uses {}, which needs the node declared feature {name}; {why}, so the scheduler's NodeDeclaredFeatures filter rejects every Windows node and the pod stays Pending with `{FILTER_MESSAGE}{name}`; {todo}",
        need.feature.uses
    );
    out.emit(RuleId::WindowsPodUndeclaredFeature, &path, message, None);
}

#[cfg(test)]
mod tests {
    use crate::rules::test_kit::findings;
    use crate::settings::Settings;
    use crate::test_kit::node;

    const RULE: &str = "windows-pod-undeclared-feature";

    fn pod(spec_extra: &str, os: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n{os}  nodeSelector: {{kubernetes.io/os: windows}}\n{spec_extra}  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n"
        )
    }

    /// A Windows node publishing `declaredFeatures` as a 1.37 kubelet does (status.declaredFeatures is a
    /// list of names, core/v1 `NodeStatus.DeclaredFeatures`).
    fn node_declaring(feature: &str) -> String {
        node("win-0")
            .os("windows")
            .declared_features(&[feature])
            .info("operatingSystem", "windows")
            .kernel("10.0.20348.2762")
            .yaml()
    }

    #[test]
    fn user_namespaces_with_host_network_never_schedules_on_windows() {
        let text = pod("  hostNetwork: true\n  hostUsers: false\n", "");
        let found = findings(&text, None, &Settings::default(), &[RULE]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "spec.hostUsers");
        assert!(
            found[0].message.contains(
                "`node declared features check failed - unsatisfied requirements: UserNamespacesHostNetworkSupport`"
            ),
            "{}",
            found[0].message
        );
        // The removal is windows-unsupported-field's fix, not a second one of the same field.
        assert!(found[0].fix.is_none());
        // hostUsers true, or no hostNetwork: nothing needed.
        for extra in [
            "  hostNetwork: true\n  hostUsers: true\n",
            "  hostUsers: false\n",
        ] {
            assert!(findings(&pod(extra, ""), None, &Settings::default(), &[RULE]).is_empty());
        }
        // spec.os.name windows: refused by the API server first (windows-forbidden-field).
        let declared_os = pod(
            "  hostNetwork: true\n  hostUsers: false\n",
            "  os: {name: windows}\n",
        );
        assert!(findings(&declared_os, None, &Settings::default(), &[RULE]).is_empty());
    }

    #[test]
    fn other_features_count_against_the_clusters_windows_nodes() {
        let rule = "  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n    restartPolicyRules: [{action: RestartAllContainers, exitCodes: {operator: In, values: [42]}}]\n";
        let text = pod("", "").replace(
            "  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n",
            rule,
        );
        // No context: a Windows kubelet may declare it (feature gate only).
        assert!(findings(&text, None, &Settings::default(), &[RULE]).is_empty());
        // The Windows node declares other features only.
        let with = |n: &str| format!("{text}---\n{n}");
        let found = findings(
            &with(&node_declaring("VolumeBindMountOptions")),
            None,
            &Settings::default(),
            &[RULE],
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].path,
            "spec.containers[0].restartPolicyRules[0].action"
        );
        assert!(
            found[0]
                .message
                .contains("none of the cluster's 1 Windows node(s) lists it")
        );
        // It declares it: nothing.
        assert!(
            findings(
                &with(&node_declaring("RestartAllContainersOnContainerExits")),
                None,
                &Settings::default(),
                &[RULE]
            )
            .is_empty()
        );
        // No node publishes declaredFeatures (a cluster before 1.35): nothing is assumed.
        let old = "apiVersion: v1\nkind: Node\nmetadata: {name: win-0, labels: {kubernetes.io/os: windows}}\n";
        assert!(findings(&with(old), None, &Settings::default(), &[RULE]).is_empty());
    }
}
