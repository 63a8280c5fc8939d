//! Settings shared by the policy, the CLI, the server and the playground: one schema everywhere.

use crate::finding::Severity;
use crate::windows::builds::WindowsVersion;
use crate::windows::images::ImageRule;
use k8s_openapi::api::core::v1::Taint;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Policy settings (Kubewarden settings, `--settings FILE`, the playground's options).
///
/// Every field is optional; absent fields take the defaults shown in [`Settings::default`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Settings {
    /// The taints Windows nodes carry, used when no cluster context says otherwise
    /// (default `os=windows:NoSchedule`).
    pub windows_taints: Vec<Taint>,
    /// Windows builds the cluster supports (`10.0.20348`, `10.0.26100` by default).
    pub supported_builds: Vec<String>,
    /// Report a missing `node.kubernetes.io/windows-build` selector as an error even without cluster
    /// context (by default it is a warning, and an error when the cluster runs several Windows builds).
    pub require_build_selector: bool,
    /// Image rules, checked before the built-in image tables (first match wins).
    pub image_rules: Vec<ImageRule>,
    /// Windows build (`10.0.20348`) → RuntimeClass name that pins it; fixes set `runtimeClassName`
    /// instead of adding selectors when the build is mapped.
    pub runtime_classes: BTreeMap<String, String>,
    /// Admission: accept fixable requests with the repaired object instead of rejecting them.
    pub mutate: bool,
    /// Namespaces whose workloads are not checked.
    pub exempt_namespaces: Vec<String>,
    /// Rule ids that are not evaluated.
    pub disabled_rules: Vec<String>,
    /// Severity overrides by rule id.
    pub severity: BTreeMap<String, Severity>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            windows_taints: vec![Taint {
                key: "os".into(),
                value: Some("windows".into()),
                effect: "NoSchedule".into(),
                time_added: None,
            }],
            supported_builds: vec!["10.0.20348".into(), "10.0.26100".into()],
            require_build_selector: false,
            image_rules: Vec::new(),
            runtime_classes: BTreeMap::new(),
            mutate: false,
            exempt_namespaces: Vec::new(),
            disabled_rules: Vec::new(),
            severity: BTreeMap::new(),
        }
    }
}

impl Settings {
    /// Checks the settings; the error names the bad setting (`supportedBuilds[1]: ...`).
    pub fn validate(&self) -> Result<(), String> {
        for (i, taint) in self.windows_taints.iter().enumerate() {
            if taint.key.is_empty() {
                return Err(format!("windowsTaints[{i}].key: a taint needs a key"));
            }
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&taint.effect.as_str()) {
                return Err(format!(
                    "windowsTaints[{i}].effect: {:?} is not one of NoSchedule, PreferNoSchedule, NoExecute",
                    taint.effect
                ));
            }
        }
        for (i, build) in self.supported_builds.iter().enumerate() {
            check_build(build).map_err(|e| format!("supportedBuilds[{i}]: {e}"))?;
        }
        for (i, rule) in self.image_rules.iter().enumerate() {
            rule.validate()
                .map_err(|e| format!("imageRules[{i}].{e}"))?;
        }
        for (build, class) in &self.runtime_classes {
            check_build(build).map_err(|e| format!("runtimeClasses[{build}]: {e}"))?;
            if class.is_empty() {
                return Err(format!(
                    "runtimeClasses[{build}]: the RuntimeClass name is empty"
                ));
            }
        }
        for (i, ns) in self.exempt_namespaces.iter().enumerate() {
            if ns.is_empty() {
                return Err(format!(
                    "exemptNamespaces[{i}]: a namespace name cannot be empty"
                ));
            }
        }
        for (i, id) in self.disabled_rules.iter().enumerate() {
            if crate::rules::catalog::rule(id).is_none() {
                return Err(format!("disabledRules[{i}]: unknown rule {id:?}"));
            }
        }
        for id in self.severity.keys() {
            if crate::rules::catalog::rule(id).is_none() {
                return Err(format!("severity[{id}]: unknown rule {id:?}"));
            }
        }
        Ok(())
    }

    /// Supported builds as numbers (`10.0.20348` → 20348); bad entries are skipped (validate reports them).
    pub fn supported_build_numbers(&self) -> Vec<u32> {
        self.supported_builds
            .iter()
            .filter_map(|b| WindowsVersion::parse(b).map(|v| v.build))
            .collect()
    }
}

fn check_build(build: &str) -> Result<(), String> {
    match WindowsVersion::parse(build) {
        Some(v) if v.revision.is_none() => Ok(()),
        _ => Err(format!(
            "{build:?} is not a Windows build such as 10.0.20348"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_design() {
        let s = Settings::default();
        assert_eq!(s.supported_build_numbers(), [20348, 26100]);
        assert_eq!(s.windows_taints[0].value.as_deref(), Some("windows"));
        assert!(s.validate().is_ok());
    }

    #[test]
    fn empty_json_is_the_defaults() {
        let s: Settings = serde_json::from_str("{}").unwrap();
        assert_eq!(s, Settings::default());
    }

    #[test]
    fn errors_name_the_setting() {
        let cases = [
            (
                r#"{"supportedBuilds": ["10.0.20348", "ltsc2022"]}"#,
                "supportedBuilds[1]",
            ),
            (
                r#"{"windowsTaints": [{"key": "os", "effect": "Never"}]}"#,
                "windowsTaints[0].effect",
            ),
            (
                r#"{"windowsTaints": [{"key": "", "effect": "NoSchedule"}]}"#,
                "windowsTaints[0].key",
            ),
            (r#"{"disabledRules": ["no-such-rule"]}"#, "disabledRules[0]"),
            (r#"{"severity": {"nope": "error"}}"#, "severity[nope]"),
            (
                r#"{"runtimeClasses": {"10.0.20348": ""}}"#,
                "runtimeClasses[10.0.20348]",
            ),
            (r#"{"exemptNamespaces": [""]}"#, "exemptNamespaces[0]"),
        ];
        for (json, setting) in cases {
            let s: Settings = serde_json::from_str(json).unwrap();
            let err = s.validate().unwrap_err();
            assert!(err.starts_with(setting), "{json}: {err}");
        }
    }

    #[test]
    fn unknown_settings_are_rejected_by_name() {
        let err = serde_json::from_str::<Settings>(r#"{"windowsTaint": []}"#).unwrap_err();
        assert!(err.to_string().contains("windowsTaint"), "{err}");
    }
}
