//! `not-checked`: a checked file that holds nothing the rules read, so that a clean file and an
//! unchecked one do not look alike.
//!
//! The rules read workloads (Pods and the objects with a pod template) and cluster context (Nodes,
//! RuntimeClasses, the node pools of infrastructure files). A file with only a ConfigMap, a Service or a
//! CRD gets one info finding on its first object. Files given as cluster context (`--cluster`, the
//! playground's pasted cluster) are not checked inputs and never get it; the policy sees objects, not
//! files, so it never applies there.

use std::collections::BTreeSet;

use super::{Emitter, RuleId};
use crate::Finding;
use crate::model::{Object, WorkloadKind};
use crate::path::FieldPath;
use crate::settings::Settings;

/// How many kinds the message names.
const KINDS_SHOWN: usize = 4;

/// What the documents of one file held, seen one document at a time.
#[derive(Default)]
pub(crate) struct Coverage {
    /// The file's first object: the finding is reported on it.
    first: Option<Object>,
    objects: usize,
    kinds: BTreeSet<String>,
    /// Workloads in `exemptNamespaces`: present, but skipped on purpose.
    exempt: usize,
    /// Something the rules read: a workload outside the exempt namespaces, a Node, a RuntimeClass or a
    /// node pool.
    checked: bool,
}

impl Coverage {
    /// Records one document's objects.
    pub(crate) fn see(&mut self, objects: &[Object], settings: &Settings) {
        for object in objects {
            if self.first.is_none() {
                self.first = Some(object.clone());
            }
            self.objects += 1;
            self.kinds.insert(object.kind.clone());
            let exempt = settings.exempts(object.namespace.as_deref());
            let workload = WorkloadKind::of(&object.api_version, &object.kind).is_some();
            let context = matches!(object.kind.as_str(), "Node" | "RuntimeClass");
            if workload && exempt {
                self.exempt += 1;
            } else if workload || context {
                self.checked = true;
            }
        }
    }

    /// Records that the file held node pools (an infrastructure file): checked as the nodes they make.
    pub(crate) fn saw_node_pools(&mut self) {
        self.checked = true;
    }

    /// The `not-checked` finding, when the file held objects and none the rules read.
    pub(crate) fn finish(self, settings: &Settings, findings: &mut Vec<Finding>) {
        let Some(first) = self.first.filter(|_| !self.checked) else {
            return;
        };
        let mut kinds: Vec<&str> = self
            .kinds
            .iter()
            .map(String::as_str)
            .filter(|k| !k.is_empty())
            .take(KINDS_SHOWN)
            .collect();
        if self.kinds.len() > KINDS_SHOWN {
            kinds.push("…");
        }
        let held = format!(
            "{} object{}{}",
            self.objects,
            if self.objects == 1 { "" } else { "s" },
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            }
        );
        let why = if self.exempt > 0 {
            format!(
                "its workloads are all in exemptNamespaces and the rest ({held} in all) is no workload, Node, RuntimeClass or node pool"
            )
        } else {
            format!("it holds no workload, Node, RuntimeClass or node pool, only {held}")
        };
        let message = format!(
            "Nothing in this file was checked: {why}. winplace checks Pods and the objects with a pod template (Deployment, Job, …) and cluster context; a clean result here says nothing about the workloads, so check that the file is the one meant"
        );
        Emitter::new(&first, settings, findings).emit(
            RuleId::NotChecked,
            &FieldPath::root(),
            message,
            None,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::test_kit::findings;
    use crate::settings::Settings;

    const CONFIG_MAP: &str =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\ndata: {a: b}\n";
    const SERVICE: &str =
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n";
    const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: kube-system}\nspec:\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: c, image: nginx}]\n";
    const NODE: &str =
        "apiVersion: v1\nkind: Node\nmetadata: {name: l1, labels: {kubernetes.io/os: linux}}\n";
    const RUNTIME_CLASS: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\n";
    const EKSCTL: &str = "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: c, region: eu-west-1}\nnodeGroups:\n- name: linux\n  amiFamily: AmazonLinux2023\n";

    fn not_checked(text: &str, settings: &Settings) -> Vec<(String, Option<u32>, String)> {
        findings(text, None, settings, &["not-checked"])
            .into_iter()
            .map(|f| (f.object.display_name(), f.line, f.message))
            .collect()
    }

    #[test]
    fn files_without_anything_the_rules_read_are_not_checked() {
        let d = Settings::default();
        let both = format!("{CONFIG_MAP}---\n{SERVICE}");
        let got = not_checked(&both, &d);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, "ConfigMap/shop/cfg");
        assert_eq!(got[0].1, Some(1));
        assert!(
            got[0].2.starts_with("Nothing in this file was checked: it holds no workload, Node, RuntimeClass or node pool, only 2 objects (ConfigMap, Service)."),
            "{}",
            got[0].2
        );
        // A List of them too.
        let list = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n";
        assert_eq!(not_checked(list, &d).len(), 1);
        // Anything the rules read makes the file checked: a workload (even a clean one), Nodes,
        // RuntimeClasses (cluster context, checked by the node and RuntimeClass rules), node pools.
        for checked in [
            format!("{CONFIG_MAP}---\n{POD}"),
            NODE.to_string(),
            RUNTIME_CLASS.to_string(),
            EKSCTL.to_string(),
        ] {
            assert_eq!(not_checked(&checked, &d), vec![], "{checked}");
        }
        // No object at all (an empty file, or only a parse error): nothing to say here.
        assert_eq!(not_checked("", &d), vec![]);
        assert_eq!(not_checked("kind: [\n", &d), vec![]);
    }

    #[test]
    fn exempt_workloads_and_settings() {
        let exempt = Settings {
            exempt_namespaces: vec!["kube-system".into()],
            ..Settings::default()
        };
        let got = not_checked(POD, &exempt);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0]
                .2
                .contains("its workloads are all in exemptNamespaces"),
            "{}",
            got[0].2
        );
        let off = Settings {
            disabled_rules: vec!["not-checked".into()],
            ..Settings::default()
        };
        assert_eq!(not_checked(CONFIG_MAP, &off), vec![]);
    }
}
