//! Settings shared by the policy, the CLI, the server and the playground: one schema and one reader.
//! [`Settings::from_text`] reads YAML or JSON text (CLI, server, playground; [`Settings::from_text_on`]
//! with `--platform` over it); [`Settings::from_json`] and [`Settings::from_json_value`] are the same
//! decoding and validation for the JSON an admission host hands over, without linking the YAML parser
//! into `policy.wasm`. All of them end in one function that decodes, fills the platform's presets
//! (`windowsTaints`, `supportedBuilds` where not given) and validates, so that a setting means the same
//! to every reader.

use crate::finding::Severity;
use crate::input::{Limits, ParseError, parse};
pub use crate::invalid_setting::InvalidSetting;
use crate::path::FieldPath;
/// How a fix pins the Windows build (setting `buildPinning`); it lives beside [`crate::platform::Platform`],
/// whose presets choose it.
pub use crate::platform::BuildPinning;
use crate::windows::ImageRule;
use crate::windows::builds::WindowsVersion;
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
    /// Admission: ask the host for the cluster's Nodes and RuntimeClasses. Only set it where the
    /// ClusterAdmissionPolicy grants them in `contextAwareResources`: a policy-server logs an error for
    /// every request whose policy asks for resources it was not granted. Off (the default), the settings
    /// stand in for the cluster and the policy makes no such host call.
    pub context_aware: bool,
    /// Admission: ask the host for image manifests (`oci/v1/oci_manifest`, `oci/v1/oci_manifest_config`)
    /// of images whose Windows build their name does not tell. Only set it where the policy is granted
    /// those capabilities (a ClusterAdmissionPolicy always is; a namespaced AdmissionPolicy has what its
    /// PolicyServer's `namespacedPoliciesCapabilities` lists): a policy cannot tell what it was granted,
    /// and a policy-server logs an error for every denied call. Off (the default), the policy makes no
    /// such host call and such images keep what their names say (`windows-image-build-unknown`).
    pub registry_aware: bool,
    /// Namespaces whose workloads are not checked.
    pub exempt_namespaces: Vec<String>,
    /// Rule ids that are not evaluated.
    pub disabled_rules: Vec<String>,
    /// Severity overrides by rule id.
    pub severity: BTreeMap<String, Severity>,
    /// The platform whose conventions (Windows taints, supported builds, build pinning) fill
    /// `windowsTaints`, `supportedBuilds` and `buildPinning` when those are not given (see
    /// [`crate::platform`]); default `generic`.
    pub platform: crate::platform::Platform,
    /// The retirement calendar: the date it is read at (`lifecycle.date`; the CLI fills in today),
    /// whose calendar every node is on, and overrides of its rows (see [`crate::lifecycle`]).
    #[serde(skip_serializing_if = "crate::lifecycle::LifecycleSettings::is_empty")]
    pub lifecycle: crate::lifecycle::LifecycleSettings,
    /// How fixes pin a Windows pod's build: `range` (default) or `exact` (the OpenShift preset).
    pub build_pinning: BuildPinning,
    /// Admission (needs `mutate`): a Pod CREATE whose images leave its OS or Windows build open by name
    /// gets the scheduling gate `winplace.io/placement`, for `winplace serve --place` to place and lift
    /// ([`crate::placement::gate`]).
    pub placement_gate: bool,
    /// The namespaces `placementGate` applies to; empty (the default) means every namespace that is not
    /// exempt.
    pub placement_gate_namespaces: Vec<String>,
    /// The namespace of the placement controller's `coordination.k8s.io/v1` Lease
    /// (`--place-lease-namespace`): with `placementGate`, admission gates a pod only while a controller
    /// holds that Lease fresh ([`crate::placement::gate::controller_is_live`]). Default `winplace`.
    pub placement_lease_namespace: String,
    /// The name of that Lease (`--place-lease-name`). Default `winplace-placer`.
    pub placement_lease_name: String,
    /// Offer (and apply, with `--fix` or `mutate`) the `kubernetes.io/os: linux` fix on pods that are
    /// Linux only by presumption: nothing names their OS and an image is unrecognized (`--presume-linux`).
    /// Off (the default), such a pod's finding asks which OS it needs and carries no fix: an
    /// unrecognized image may be a Windows one, and pinning it to Linux would make it certain to fail.
    pub presume_linux: bool,
}

/// The default of `placementLeaseNamespace`: the namespace the chart is installed in by its docs.
pub const DEFAULT_PLACEMENT_LEASE_NAMESPACE: &str = "winplace";
/// The default of `placementLeaseName`: the controller's default `--place-lease-name`.
pub const DEFAULT_PLACEMENT_LEASE_NAME: &str = "winplace-placer";

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
            context_aware: false,
            registry_aware: false,
            exempt_namespaces: Vec::new(),
            disabled_rules: Vec::new(),
            severity: BTreeMap::new(),
            platform: crate::platform::Platform::Generic,
            lifecycle: crate::lifecycle::LifecycleSettings::default(),
            build_pinning: BuildPinning::Range,
            placement_gate: false,
            placement_gate_namespaces: Vec::new(),
            placement_lease_namespace: DEFAULT_PLACEMENT_LEASE_NAMESPACE.into(),
            placement_lease_name: DEFAULT_PLACEMENT_LEASE_NAME.into(),
            presume_linux: false,
        }
    }
}

/// Settings text that cannot be used: where (file, line, column), which setting when one is at fault,
/// and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct SettingsError {
    /// The name the text was given.
    pub file: String,
    /// 1-based line of the fault (of the setting when one is at fault).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The setting at fault (`supportedBuilds[1]`), when the text parsed but a value is wrong.
    pub setting: Option<String>,
    /// A sentence: `invalid setting supportedBuilds[1]: "ltsc2022" is not a Windows build ...`.
    pub message: String,
}

impl From<SettingsError> for ParseError {
    fn from(e: SettingsError) -> Self {
        ParseError {
            file: e.file,
            line: e.line,
            column: e.column,
            message: e.message,
        }
    }
}

impl Settings {
    /// Reads settings written as YAML or JSON (one document; empty text or `null` is the defaults),
    /// decodes and validates them. The error names the file, the line and the setting.
    ///
    /// ```
    /// use winplace_rules::Settings;
    /// let s = Settings::from_text("settings.yaml", "supportedBuilds: [10.0.20348]\n").unwrap();
    /// assert_eq!(s.supported_build_numbers(), [20348]);
    /// let err = Settings::from_text("settings.yaml", "mutate: true\nsupportedBuilds: [ltsc2022]\n").unwrap_err();
    /// assert_eq!((err.line, err.setting.as_deref()), (2, Some("supportedBuilds[0]")));
    /// ```
    pub fn from_text(file: &str, text: &str) -> Result<Settings, SettingsError> {
        Self::from_text_on(file, text, None)
    }

    /// [`Settings::from_text`] with `platform` (when given) in place of the text's own `platform`
    /// setting: what `--platform` does on the command line. The platform's presets fill only what the
    /// text does not give, exactly as a `platform:` line in the text would.
    ///
    /// ```
    /// use winplace_rules::{Settings, platform::Platform};
    /// let s = Settings::from_text_on("s.yaml", "platform: gke\n", Some(Platform::Eks)).unwrap();
    /// assert_eq!((s.platform, s.windows_taints.len()), (Platform::Eks, 0));
    /// let s = Settings::from_text_on("s.yaml", "windowsTaints: []\n", Some(Platform::Gke)).unwrap();
    /// assert!(s.windows_taints.is_empty()); // given: the preset does not replace it
    /// ```
    pub fn from_text_on(
        file: &str,
        text: &str,
        platform: Option<crate::platform::Platform>,
    ) -> Result<Settings, SettingsError> {
        let parsed = parse(file, text, &Limits::default());
        if let Some(e) = parsed.errors.into_iter().next() {
            return Err(SettingsError {
                file: e.file,
                line: e.line,
                column: e.column,
                setting: None,
                message: e.message,
            });
        }
        let mut documents = parsed.documents.into_iter();
        let Some(doc) = documents.next() else {
            return Self::from_value(file, &serde_json::Value::Null, |_| 1, platform);
        };
        if let Some(second) = documents.next() {
            return Err(SettingsError {
                file: file.to_string(),
                line: second.line,
                column: 1,
                setting: None,
                message: "settings are one document; remove the `---`".into(),
            });
        }
        Self::from_value(
            file,
            &doc.value,
            |setting| doc.lines.line_of(setting).unwrap_or(doc.line),
            platform,
        )
    }

    /// The defaults of `platform`: its Windows taints and supported builds (settings `platform: eks`).
    ///
    /// ```
    /// use winplace_rules::{Settings, platform::Platform};
    /// assert!(Settings::for_platform(Platform::Eks).windows_taints.is_empty());
    /// assert_eq!(Settings::for_platform(Platform::Generic), Settings::default());
    /// ```
    pub fn for_platform(platform: crate::platform::Platform) -> Settings {
        let mut settings = Settings {
            platform,
            ..Settings::default()
        };
        settings.fill_presets(&serde_json::Value::Null);
        settings
    }

    /// Reads settings given as JSON (empty or `null` is the defaults), as an admission host hands them
    /// over: the same decoding and validation as [`Settings::from_text`], without the YAML parser, so that
    /// `policy.wasm` does not carry it. Errors name the setting; their line is the JSON text's.
    ///
    /// ```
    /// use winplace_rules::Settings;
    /// let err = Settings::from_json("settings", br#"{"supportedBuilds": ["ltsc2022"]}"#).unwrap_err();
    /// assert_eq!(err.setting.as_deref(), Some("supportedBuilds[0]"));
    /// assert_eq!(Settings::from_json("settings", b"null"), Ok(Settings::default()));
    /// ```
    pub fn from_json(file: &str, json: &[u8]) -> Result<Settings, SettingsError> {
        if json.trim_ascii().is_empty() {
            return Ok(Settings::default());
        }
        let value: serde_json::Value = serde_json::from_slice(json).map_err(|e| SettingsError {
            file: file.to_string(),
            line: u32::try_from(e.line()).unwrap_or(u32::MAX),
            column: u32::try_from(e.column()).unwrap_or(u32::MAX),
            setting: None,
            message: e.to_string(),
        })?;
        Self::from_json_value(file, &value)
    }

    /// Reads settings that arrived as a JSON value inside a larger payload (Kubewarden's `validate`
    /// payload carries them beside the request): the same decoding, presets and validation as
    /// [`Settings::from_json`].
    ///
    /// ```
    /// use winplace_rules::Settings;
    /// let s = Settings::from_json_value("settings", &serde_json::json!({"platform": "aks"})).unwrap();
    /// assert!(s.windows_taints.is_empty()); // AKS taints no Windows node
    /// ```
    pub fn from_json_value(
        file: &str,
        value: &serde_json::Value,
    ) -> Result<Settings, SettingsError> {
        Self::from_value(file, value, |_| 1, None)
    }

    /// Decodes and validates a settings object (`null` is the defaults); `line_of` places a setting in
    /// the text the value came from; `platform`, when given, replaces the object's `platform` setting.
    /// The one path every reader shares.
    fn from_value(
        file: &str,
        value: &serde_json::Value,
        line_of: impl Fn(&FieldPath) -> u32,
        platform: Option<crate::platform::Platform>,
    ) -> Result<Settings, SettingsError> {
        if !value.is_null() && !value.is_object() {
            // serde would read a list as the struct's fields in order (`[]` as the defaults).
            return Err(SettingsError {
                file: file.to_string(),
                line: line_of(&FieldPath::root()),
                column: 1,
                setting: None,
                message: "invalid settings: the settings are a mapping of setting names to values"
                    .into(),
            });
        }
        let decoded: Result<Settings, _> = if value.is_null() {
            Ok(Settings::default())
        } else {
            crate::model::decode(value, &FieldPath::root())
        };
        let mut settings = decoded.map_err(|e| {
            let root = e.path.segments().is_empty();
            SettingsError {
                file: file.to_string(),
                line: line_of(&e.path),
                column: 1,
                setting: (!root).then(|| e.path.to_string()),
                message: if root {
                    format!("invalid settings: {}", e.message)
                } else {
                    format!("invalid setting {}: {}", e.path, e.message)
                },
            }
        })?;
        if let Some(platform) = platform {
            settings.platform = platform;
        }
        settings.fill_presets(value);
        settings.validate().map_err(|e| SettingsError {
            file: file.to_string(),
            line: line_of(&FieldPath::parse(&e.setting)),
            column: 1,
            message: format!("invalid setting {e}"),
            setting: Some(e.setting),
        })?;
        Ok(settings)
    }

    /// Checks the values; the error names the bad setting (`supportedBuilds[1]`).
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        for (i, taint) in self.windows_taints.iter().enumerate() {
            if taint.key.is_empty() {
                return Err(InvalidSetting::new(
                    format!("windowsTaints[{i}].key"),
                    "a taint needs a key",
                ));
            }
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&taint.effect.as_str()) {
                return Err(InvalidSetting::new(
                    format!("windowsTaints[{i}].effect"),
                    format!(
                        "{:?} is not one of NoSchedule, PreferNoSchedule, NoExecute",
                        taint.effect
                    ),
                ));
            }
        }
        for (i, build) in self.supported_builds.iter().enumerate() {
            check_build(build, format!("supportedBuilds[{i}]"))?;
        }
        for (i, rule) in self.image_rules.iter().enumerate() {
            rule.validate()
                .map_err(|e| e.within(&format!("imageRules[{i}]")))?;
        }
        for (build, class) in &self.runtime_classes {
            check_build(build, format!("runtimeClasses[{build}]"))?;
            if class.is_empty() {
                return Err(InvalidSetting::new(
                    format!("runtimeClasses[{build}]"),
                    "the RuntimeClass name is empty",
                ));
            }
        }
        for (i, ns) in self.exempt_namespaces.iter().enumerate() {
            if ns.is_empty() {
                return Err(InvalidSetting::new(
                    format!("exemptNamespaces[{i}]"),
                    "a namespace name cannot be empty",
                ));
            }
        }
        if self.placement_gate && !self.mutate {
            return Err(InvalidSetting::new(
                "placementGate",
                "the gate is added by mutating the Pod: it needs `mutate: true`",
            ));
        }
        for (i, ns) in self.placement_gate_namespaces.iter().enumerate() {
            if ns.is_empty() {
                return Err(InvalidSetting::new(
                    format!("placementGateNamespaces[{i}]"),
                    "a namespace name cannot be empty",
                ));
            }
        }
        if !is_dns_label(&self.placement_lease_namespace) {
            return Err(InvalidSetting::new(
                "placementLeaseNamespace",
                format!(
                    "{:?} is not a namespace name (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)",
                    self.placement_lease_namespace
                ),
            ));
        }
        if !is_dns_subdomain(&self.placement_lease_name) {
            return Err(InvalidSetting::new(
                "placementLeaseName",
                format!(
                    "{:?} is not a Lease name (at most 253 lowercase letters, digits, '-' and '.', each dot-separated part starting and ending with a letter or digit)",
                    self.placement_lease_name
                ),
            ));
        }
        for (i, id) in self.disabled_rules.iter().enumerate() {
            if crate::catalog::rule(id).is_none() {
                return Err(InvalidSetting::new(
                    format!("disabledRules[{i}]"),
                    format!("unknown rule {id:?}"),
                ));
            }
        }
        for id in self.severity.keys() {
            if crate::catalog::rule(id).is_none() {
                return Err(InvalidSetting::new(
                    format!("severity[{id}]"),
                    format!("unknown rule {id:?}"),
                ));
            }
        }
        self.lifecycle.validate()
    }

    /// Fills `windowsTaints` and `supportedBuilds` from `platform` where the settings object `given`
    /// (as written) does not set them: a setting written out wins, even when it equals a default.
    fn fill_presets(&mut self, given: &serde_json::Value) {
        let written = |key: &str| given.get(key).is_some_and(|v| !v.is_null());
        if !written("windowsTaints") {
            self.windows_taints = self.platform.windows_taints();
        }
        if !written("supportedBuilds") {
            self.supported_builds = self.platform.supported_builds();
        }
        if !written("buildPinning") {
            self.build_pinning = self.platform.build_pinning();
        }
    }

    /// Whether objects of `namespace` are exempt (`exemptNamespaces`); cluster-scoped objects never are.
    ///
    /// ```
    /// let s = winplace_rules::Settings { exempt_namespaces: vec!["kube-system".into()], ..Default::default() };
    /// assert!(s.exempts(Some("kube-system")));
    /// assert!(!s.exempts(Some("shop")) && !s.exempts(None));
    /// ```
    pub fn exempts(&self, namespace: Option<&str>) -> bool {
        namespace.is_some_and(|ns| self.exempt_namespaces.iter().any(|e| e == ns))
    }

    /// Whether `placementGate` applies to pods of `namespace` (`placementGateNamespaces`, empty: all).
    ///
    /// ```
    /// let s = winplace_rules::Settings::from_text("s.yaml", "mutate: true\nplacementGate: true\nplacementGateNamespaces: [shop]\n").unwrap();
    /// assert!(s.gates_namespace("shop") && !s.gates_namespace("web"));
    /// assert!(!winplace_rules::Settings::default().gates_namespace("shop"));
    /// ```
    pub fn gates_namespace(&self, namespace: &str) -> bool {
        self.placement_gate
            && (self.placement_gate_namespaces.is_empty()
                || self
                    .placement_gate_namespaces
                    .iter()
                    .any(|n| n == namespace))
    }

    /// Supported builds as numbers (`10.0.20348` → 20348); bad entries are skipped (validate reports them).
    pub fn supported_build_numbers(&self) -> Vec<u32> {
        self.supported_builds
            .iter()
            .filter_map(|b| WindowsVersion::parse(b).map(|v| v.build))
            .collect()
    }
}

fn check_build(build: &str, setting: String) -> Result<(), InvalidSetting> {
    match WindowsVersion::parse(build) {
        Some(v) if v.revision.is_none() => Ok(()),
        _ => Err(InvalidSetting::new(
            setting,
            format!("{build:?} is not a Windows build such as 10.0.20348"),
        )),
    }
}

/// A DNS-1123 label, as kube-apiserver checks namespace names: 1–63 of `a-z`, `0-9`, `-`, starting and
/// ending with a letter or digit.
fn is_dns_label(name: &str) -> bool {
    name.len() <= 63 && is_dns_part(name)
}

/// A DNS-1123 subdomain, as kube-apiserver checks the names of most objects (Leases among them): at most
/// 253 characters, dot-separated parts of `a-z`, `0-9`, `-`, each starting and ending with a letter or
/// digit.
fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253 && name.split('.').all(is_dns_part)
}

fn is_dns_part(part: &str) -> bool {
    let b = part.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
        && b.iter().all(|c| alnum(c) || *c == b'-')
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
            // The gate is a mutation: without `mutate` it would never be added.
            (r#"{"placementGate": true}"#, "placementGate"),
            (
                r#"{"mutate": true, "placementGate": true, "placementGateNamespaces": ["shop", ""]}"#,
                "placementGateNamespaces[1]",
            ),
            (
                r#"{"placementLeaseNamespace": ""}"#,
                "placementLeaseNamespace",
            ),
            (
                r#"{"placementLeaseNamespace": "Winplace"}"#,
                "placementLeaseNamespace",
            ),
            (
                r#"{"placementLeaseNamespace": "a.b"}"#,
                "placementLeaseNamespace",
            ),
            (r#"{"placementLeaseName": "placer-"}"#, "placementLeaseName"),
            (r#"{"placementLeaseName": "a..b"}"#, "placementLeaseName"),
            (r#"{"placementLeaseName": "a_b"}"#, "placementLeaseName"),
        ];
        for (json, setting) in cases {
            let s: Settings = serde_json::from_str(json).unwrap();
            let err = s.validate().unwrap_err();
            assert_eq!(err.setting, setting, "{json}: {err}");
        }
    }

    #[test]
    fn the_placement_lease_is_named_by_settings_with_defaults() {
        let d = Settings::default();
        assert_eq!(
            (
                d.placement_lease_namespace.as_str(),
                d.placement_lease_name.as_str()
            ),
            ("winplace", "winplace-placer")
        );
        let s = Settings::from_text(
            "s.yaml",
            "mutate: true\nplacementGate: true\nplacementLeaseNamespace: ops\nplacementLeaseName: placer.v2\n",
        )
        .unwrap();
        assert_eq!(
            (
                s.placement_lease_namespace.as_str(),
                s.placement_lease_name.as_str()
            ),
            ("ops", "placer.v2")
        );
        let err = Settings::from_text("s.yaml", "placementLeaseName: Placer\n").unwrap_err();
        assert_eq!(err.setting.as_deref(), Some("placementLeaseName"), "{err}");
    }

    #[test]
    fn the_placement_gate_reads_the_same_from_yaml_and_json() {
        let yaml = Settings::from_text(
            "s.yaml",
            "mutate: true\nplacementGate: true\nplacementGateNamespaces: [shop]\n",
        )
        .unwrap();
        let json = Settings::from_json(
            "s.json",
            br#"{"mutate": true, "placementGate": true, "placementGateNamespaces": ["shop"]}"#,
        )
        .unwrap();
        assert_eq!(yaml, json);
        assert!(yaml.placement_gate && yaml.gates_namespace("shop"));
        assert!(!yaml.gates_namespace("kube-system"));
        let err =
            Settings::from_text("s.yaml", "mutate: false\nplacementGate: true\n").unwrap_err();
        assert_eq!(
            (err.line, err.setting.as_deref()),
            (2, Some("placementGate"))
        );
        assert!(err.message.contains("needs `mutate: true`"), "{err}");
    }

    #[test]
    fn text_errors_name_file_line_and_setting() {
        // (text, line, setting, message part)
        let rows: [(&str, u32, Option<&str>, &str); 8] = [
            (
                "mutate: true\nbuildPinning: loose\n",
                2,
                Some("buildPinning"),
                "unknown variant `loose`, expected `range` or `exact`",
            ),
            (
                "mutate: true\nsupportedBuilds: [10.0.20348, ltsc2022]\n",
                2,
                Some("supportedBuilds[1]"),
                "ltsc2022",
            ),
            (
                "mutate: true\nwindowsTaint: []\n",
                2,
                Some("windowsTaint"),
                "unknown field",
            ),
            (
                "mutate: yes please\n",
                1,
                Some("mutate"),
                "invalid setting mutate",
            ),
            ("mutate: [\n", 1, None, ""),
            ("- mutate\n", 1, None, "a mapping"),
            (
                "mutate: true\n---\nmutate: false\n",
                3,
                None,
                "one document",
            ),
            (
                "imageRules:\n- pattern: ' '\n  os: windows\n",
                2,
                Some("imageRules[0].pattern"),
                "empty",
            ),
        ];
        for (text, line, setting, part) in rows {
            let err = Settings::from_text("s.yaml", text).unwrap_err();
            assert_eq!(
                (err.line, err.setting.as_deref()),
                (line, setting),
                "{text}: {err}"
            );
            assert!(err.message.contains(part), "{text}: {err}");
            assert!(err.to_string().starts_with("s.yaml:"), "{err}");
        }
        for empty in ["", "  \n", "null", "{}"] {
            assert_eq!(
                Settings::from_text("s.yaml", empty),
                Ok(Settings::default()),
                "{empty:?}"
            );
        }
    }

    #[test]
    fn unknown_settings_are_rejected_by_name() {
        let err = serde_json::from_str::<Settings>(r#"{"windowsTaint": []}"#).unwrap_err();
        assert!(err.to_string().contains("windowsTaint"), "{err}");
    }
}
