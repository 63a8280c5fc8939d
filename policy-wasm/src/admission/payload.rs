//! Decoding what the host sends: the `validate` payload (the AdmissionRequest and the settings) and the
//! `validate_settings` payload.

use serde::Deserialize;
use serde_json::Value;
use winplace_rules::settings::Settings;

use super::InputError;

/// `group`, `version` and `kind` of an AdmissionRequest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct GroupVersionKind {
    /// API group (`""` for the core group).
    pub group: String,
    /// API version (`v1`).
    pub version: String,
    /// Kind (`Deployment`).
    pub kind: String,
}

/// The fields of an AdmissionRequest the review reads (the rest is ignored).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Request uid.
    pub uid: String,
    /// The object's group, version and kind.
    pub kind: GroupVersionKind,
    /// Subresource (`status`, `scale`), empty for the object itself.
    #[serde(alias = "sub_resource")]
    pub sub_resource: String,
    /// The request's namespace (empty for cluster-scoped objects); the object may omit it on CREATE.
    pub namespace: String,
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// The new object (`null` on DELETE).
    pub object: Value,
    /// The object before the request (UPDATE, DELETE).
    #[serde(alias = "old_object")]
    pub old_object: Value,
}

/// The `validate` payload Kubewarden sends: the request and the policy's settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ValidationPayload {
    /// The AdmissionRequest.
    pub request: AdmissionRequest,
    /// The settings as sent (`null` or absent: the defaults), read by [`Settings::from_json_value`]:
    /// the one reader every host shares, which fills the `platform`'s presets where the settings do not
    /// give them (decoding them with serde alone once ignored `platform`).
    #[serde(default)]
    pub settings: Value,
}

/// Reads the `validate` payload; settings are read as `validate_settings` reads them, and the error
/// names the setting.
pub fn parse_payload(bytes: &[u8]) -> Result<(AdmissionRequest, Settings), InputError> {
    let payload: ValidationPayload = serde_json::from_slice(bytes).map_err(InputError::Payload)?;
    let settings =
        Settings::from_json_value("settings", &payload.settings).map_err(InputError::Settings)?;
    Ok((payload.request, settings))
}

/// Reads and validates settings JSON (the `validate_settings` payload); the error names the setting,
/// e.g. `supportedBuilds[1]: ...` or `unknown field `windowsTaint``.
pub fn parse_settings(bytes: &[u8]) -> Result<Settings, InputError> {
    std::str::from_utf8(bytes).map_err(InputError::SettingsEncoding)?;
    Settings::from_json("settings", bytes).map_err(InputError::Settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::fixtures::fixture;
    use serde_json::json;

    #[test]
    fn settings_errors_name_the_setting() {
        let rows = [
            ("", Ok(())),
            ("null", Ok(())),
            ("{\"mutate\": true}", Ok(())),
            ("{\"windowsTaint\": []}", Err("windowsTaint")),
            (
                "{\"supportedBuilds\": [\"ltsc2022\"]}",
                Err("supportedBuilds[0]"),
            ),
            ("{\"mutate\": \"yes\"}", Err("mutate: invalid type")),
        ];
        for (json, want) in rows {
            match (parse_settings(json.as_bytes()), want) {
                (Ok(_), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{json}: {e}"),
                (got, want) => panic!("{json}: {got:?}, wanted {want:?}"),
            }
        }
        // What the host is told: the setting first, or `settings:` when no one setting is at fault.
        let err = parse_settings(b"{\"supportedBuilds\": [\"ltsc2022\"]}").unwrap_err();
        assert!(err.to_string().starts_with("supportedBuilds[0]: "), "{err}");
        let err = parse_settings(b"[1").unwrap_err();
        assert!(err.to_string().starts_with("settings: "), "{err}");
        let err = parse_settings(b"\xff").unwrap_err();
        assert!(matches!(err, InputError::SettingsEncoding(_)), "{err:?}");
    }

    #[test]
    fn the_platform_setting_fills_its_presets_in_both_payloads() {
        // `validate` and `validate_settings` read the same settings: EKS and AKS taint no Windows node,
        // GKE and OpenShift taint them their own way; settings written out win over the preset.
        let request = fixture("pod-windows-pinned.json")["request"].clone();
        let rows = [
            (json!({"platform": "eks"}), vec![]),
            (json!({"platform": "aks"}), vec![]),
            (json!({"platform": "gke"}), vec!["node.kubernetes.io/os"]),
            (json!({"platform": "openshift"}), vec!["os"]),
            (json!({}), vec!["os"]),
            (
                json!({"platform": "eks", "windowsTaints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]}),
                vec!["os"],
            ),
        ];
        for (settings, keys) in rows {
            let bytes =
                serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
            let (_, from_payload) = parse_payload(&bytes).unwrap();
            let alone = parse_settings(settings.to_string().as_bytes()).unwrap();
            assert_eq!(from_payload, alone, "{settings}");
            let got: Vec<&str> = alone
                .windows_taints
                .iter()
                .map(|t| t.key.as_str())
                .collect();
            assert_eq!(got, keys, "{settings}");
        }
        let bytes =
            serde_json::to_vec(&json!({"request": request, "settings": {"platform": "k3s"}}))
                .unwrap();
        let err = parse_payload(&bytes).unwrap_err();
        assert!(err.to_string().starts_with("platform: "), "{err}");
    }

    #[test]
    fn payloads_parse_with_or_without_settings() {
        let request = fixture("pod-windows-pinned.json")["request"].clone();
        let rows = [
            (json!({"request": request, "settings": null}), true),
            (json!({"request": request}), true),
            (
                json!({"request": request, "settings": {"mutate": true}}),
                true,
            ),
            (
                json!({"request": request, "settings": {"exemptNamespaces": [""]}}),
                false,
            ),
            (json!({"settings": {}}), false),
            (json!({"request": request, "settings": []}), false),
        ];
        let err = parse_payload(b"{").unwrap_err();
        assert!(err.to_string().starts_with("validate payload: "), "{err}");
        for (payload, ok) in rows {
            let bytes = serde_json::to_vec(&payload).unwrap();
            let got = parse_payload(&bytes);
            assert_eq!(got.is_ok(), ok, "{payload}: {got:?}");
            if let Ok((r, _)) = got {
                assert_eq!(r.kind.kind, "Pod");
                assert_eq!(r.uid.len(), 36);
            }
        }
    }
}
