//! The Kubewarden entry point: a thin waPC adapter over the rules.
//!
//! `validate` receives `{"request": AdmissionRequest, "settings": Settings}` and answers a
//! ValidationResponse: rejected when an error-severity finding exists, the findings listed in the message,
//! warnings returned as admission warnings.

use crate::{Settings, Severity};
use kubewarden_policy_sdk::request::ValidationRequest;
use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::Validatable;
use kubewarden_policy_sdk::wapc_guest as guest;
use kubewarden_policy_sdk::{
    accept_request, protocol_version_guest, reject_request, validate_settings,
};

#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", validate);
    guest::register_function("validate_settings", validate_settings::<Settings>);
    guest::register_function("protocol_version", protocol_version_guest);
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        Settings::validate(self)
    }
}

fn validate(payload: &[u8]) -> guest::CallResult {
    let request: ValidationRequest<Settings> = ValidationRequest::new(payload)?;
    let object = request.request.object;
    if object.is_null() {
        return accept_request();
    }
    let findings = crate::check_value(object, None, &request.settings);
    let (errors, others): (Vec<_>, Vec<_>) =
        findings.iter().partition(|f| f.severity == Severity::Error);
    let warnings: Vec<String> = others
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .map(|f| format!("{}: {} ({})", f.rule, f.message, f.path))
        .collect();
    let warnings = (!warnings.is_empty()).then_some(warnings);
    if errors.is_empty() {
        return match warnings {
            None => accept_request(),
            Some(w) => Ok(serde_json::to_vec(&ValidationResponse {
                accepted: true,
                message: None,
                code: None,
                mutated_object: None,
                audit_annotations: None,
                warnings: Some(w),
            })?),
        };
    }
    let message = errors
        .iter()
        .map(|f| format!("[{}] {}: {}", f.rule, f.path, f.message))
        .collect::<Vec<_>>()
        .join("; ");
    reject_request(Some(message), None, None, warnings)
}
