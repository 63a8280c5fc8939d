//! Image facts in the audit: what a registry client learnt about the images of the live workloads
//! ([`ImageFacts`]), handed in by the server's background resolution ([`Audit::set_image_facts`]); only
//! the templates running an image whose answer changed are re-audited.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{Audit, Dirty, Touched};
use crate::rules::ImageFacts;
use crate::rules::add_images_to_resolve;

impl Audit {
    /// The images of the live workloads whose name tells neither their OS nor their Windows build: what
    /// the server asks registries about ([`images_to_resolve`] over every pod template).
    pub fn images_to_resolve(&self) -> Vec<String> {
        // From the images each template's last evaluation listed (every template is evaluated before a
        // change returns): decoding every template's spec again on each publish would cost a flood as
        // much as the audit.
        let mut out = Vec::new();
        for workload in self.workloads.values() {
            if self
                .settings
                .exempts(workload.owner.object.namespace.as_deref())
            {
                continue;
            }
            for template in workload.templates.values() {
                add_images_to_resolve(
                    template.images.iter().map(|i| i.image.as_str()),
                    &self.settings,
                    &mut out,
                );
            }
        }
        out
    }

    /// The image facts the templates are evaluated with.
    pub fn image_facts(&self) -> &ImageFacts {
        &self.image_facts
    }

    /// Replaces the image facts and re-audits the templates running an image whose answer changed (a
    /// manifest read, a digest, or a look-up that failed: its `image-manifest-unresolved` finding);
    /// returns what that touched.
    pub fn set_image_facts(&mut self, facts: ImageFacts) -> Touched {
        let changed: BTreeSet<&str> = facts.changed_images(&self.image_facts);
        let mut dirty = Dirty::default();
        for (wk, workload) in &self.workloads {
            for (rev, template) in &workload.templates {
                let runs_changed = template
                    .images
                    .iter()
                    .any(|i| changed.contains(i.image.as_str()));
                if runs_changed {
                    dirty.templates.insert((Arc::clone(wk), Arc::clone(rev)));
                }
            }
        }
        self.image_facts = facts;
        self.flush(dirty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::Change;
    use crate::settings::Settings;
    use crate::windows::{ImageClass, ImageOs, ImageSource};
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    fn windows_node(name: &str, build: &str) -> Node {
        serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": build}},
            "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
            "status": {"nodeInfo": {"operatingSystem": "windows", "kernelVersion": format!("{build}.100"),
                "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "", "kubeProxyVersion": "",
                "kubeletVersion": "v1.31.0", "machineID": "", "osImage": "x", "systemUUID": ""},
                "conditions": [{"type": "Ready", "status": "True"}]}
        }))
        .expect("node")
    }

    fn pod(name: &str, image: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"nodeSelector": {"kubernetes.io/os": "windows",
                    "node.kubernetes.io/windows-build": "10.0.20348"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                "containers": [{"name": "app", "image": image}]},
            "status": {"phase": "Pending"}
        }))
        .expect("pod")
    }

    fn rules_of(audit: &Audit, key: &str) -> Vec<String> {
        audit
            .workload(key)
            .map(|w| w.findings.iter().map(|f| f.rule.clone()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn facts_reaudit_only_the_workloads_running_the_changed_images() {
        let mut audit = Audit::new(Settings::default());
        audit.apply(Change::Reset {
            nodes: vec![windows_node("win22", "10.0.20348")],
            pods: vec![
                pod("billing", "contoso.azurecr.io/billing:4.2"),
                pod("other", "contoso.azurecr.io/other:1"),
            ],
            runtime_classes: vec![],
        });
        assert_eq!(
            audit.images_to_resolve(),
            vec![
                "contoso.azurecr.io/billing:4.2",
                "contoso.azurecr.io/other:1"
            ]
        );
        assert!(!rules_of(&audit, "Pod/shop/billing").contains(&"windows-build-mismatch".into()));
        let evaluations = audit.evaluations();
        let mut facts = ImageFacts::default();
        facts.manifests.insert(
            "contoso.azurecr.io/billing:4.2".into(),
            ImageClass {
                os: ImageOs::Windows {
                    builds: vec![17763],
                },
                source: ImageSource::Manifest,
                reason: "the manifest says Windows Server 2019".into(),
            },
        );
        let touched = audit.set_image_facts(facts.clone());
        assert_eq!(touched.workloads, vec!["Pod/shop/billing".to_string()]);
        assert_eq!(audit.evaluations(), evaluations + 1);
        assert!(rules_of(&audit, "Pod/shop/billing").contains(&"windows-build-mismatch".into()));
        // The same facts again change nothing.
        assert_eq!(audit.set_image_facts(facts), Touched::default());
        // The facts survive a reset (they are about images, not about the cluster's objects).
        audit.apply(Change::Reset {
            nodes: vec![windows_node("win22", "10.0.20348")],
            pods: vec![pod("billing", "contoso.azurecr.io/billing:4.2")],
            runtime_classes: vec![],
        });
        assert!(rules_of(&audit, "Pod/shop/billing").contains(&"windows-build-mismatch".into()));
    }

    fn images_of(audit: &Audit, key: &str) -> Vec<crate::windows::ImageProvenance> {
        audit
            .workload(key)
            .map(|w| w.images.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_failed_lookup_is_an_info_finding_and_the_image_keeps_its_name() {
        use crate::windows::Provenance;
        let mut audit = Audit::new(Settings::default());
        audit.apply(Change::Reset {
            nodes: vec![windows_node("win22", "10.0.20348")],
            pods: vec![
                pod("billing", "contoso.azurecr.io/billing:4.2"),
                pod("web", "mcr.microsoft.com/windows/servercore:ltsc2022"),
            ],
            runtime_classes: vec![],
        });
        let before = images_of(&audit, "Pod/shop/billing");
        assert_eq!(before.len(), 1);
        assert_eq!(before[0].from, Provenance::Name);
        assert_eq!(before[0].unresolved, None);
        let mut facts = ImageFacts::default();
        facts.unresolved.insert(
            "contoso.azurecr.io/billing:4.2".into(),
            "the registry does not know this repository or tag (not found)".into(),
        );
        let touched = audit.set_image_facts(facts.clone());
        assert_eq!(touched.workloads, vec!["Pod/shop/billing".to_string()]);
        let rules = rules_of(&audit, "Pod/shop/billing");
        assert!(
            rules.contains(&"image-manifest-unresolved".into()),
            "{rules:?}"
        );
        // Still judged by its name: a Windows image of unknown build on a Windows pod.
        assert!(
            rules.contains(&"windows-image-build-unknown".into()),
            "{rules:?}"
        );
        let after = images_of(&audit, "Pod/shop/billing");
        assert_eq!(after[0].from, Provenance::Name);
        assert_eq!(
            after[0].unresolved.as_deref(),
            Some("the registry does not know this repository or tag (not found)")
        );
        // The next answer reads the manifest: the finding goes, the provenance is the manifest's.
        let mut facts = ImageFacts::default();
        facts.manifests.insert(
            "contoso.azurecr.io/billing:4.2".into(),
            ImageClass {
                os: ImageOs::Windows {
                    builds: vec![20348],
                },
                source: ImageSource::Manifest,
                reason: "the manifest says Windows Server 2022".into(),
            },
        );
        facts
            .digests
            .insert("contoso.azurecr.io/billing:4.2".into(), "sha256:ab".into());
        audit.set_image_facts(facts);
        assert!(
            !rules_of(&audit, "Pod/shop/billing").contains(&"image-manifest-unresolved".into())
        );
        let resolved = images_of(&audit, "Pod/shop/billing");
        assert_eq!(resolved[0].from, Provenance::Manifest);
        assert_eq!(resolved[0].digest.as_deref(), Some("sha256:ab"));
        assert_eq!(
            resolved[0].os,
            ImageOs::Windows {
                builds: vec![20348]
            }
        );
        // An image its name describes says so.
        assert_eq!(images_of(&audit, "Pod/shop/web")[0].from, Provenance::Name);
        assert_eq!(
            images_of(&audit, "Pod/shop/web")[0].os,
            ImageOs::Windows {
                builds: vec![20348]
            }
        );
    }

    #[test]
    fn an_image_rule_of_the_settings_is_the_settings_provenance() {
        use crate::windows::Provenance;
        let settings = Settings::from_text(
            "s.yaml",
            "imageRules:\n- {pattern: \"contoso.azurecr.io/*\", os: windows, builds: [\"10.0.20348\"]}\n",
        )
        .expect("settings");
        let mut audit = Audit::new(settings);
        audit.apply(Change::Reset {
            nodes: vec![windows_node("win22", "10.0.20348")],
            pods: vec![pod("billing", "contoso.azurecr.io/billing:4.2")],
            runtime_classes: vec![],
        });
        let images = images_of(&audit, "Pod/shop/billing");
        assert_eq!(images[0].from, Provenance::Settings);
        assert_eq!(
            images[0].os,
            ImageOs::Windows {
                builds: vec![20348]
            }
        );
    }
}
