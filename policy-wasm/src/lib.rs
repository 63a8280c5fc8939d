//! winplace as a Kubewarden policy: `policy.wasm` (this crate built as a cdylib for `wasm32-wasip1`).
//!
//! Shaped like Kubewarden's Rust policy template: this file registers the waPC functions and talks to
//! the host; [`admission`] decides (pure functions over the rules crate, tested natively); the settings
//! are the rules crate's [`winplace_rules::Settings`]; `metadata.yml` and `artifacthub-pkg.yml` describe
//! the policy; `test_data/` holds real AdmissionReview requests. The host glue only exists on WASI:
//! elsewhere (natively, and in the dashboard's wasm) this crate is the admission logic alone, with what
//! a host sends the policy ([`request`]) and answers its host calls with ([`host_answers`]), shared by
//! the wasmtime host of `policy-host/` and the dashboard's in-page host.
//!
//! `validate` receives `{"request": AdmissionRequest, "settings": Settings}` and answers a
//! ValidationResponse (accepted, rejected with every error finding listed, or mutated with `mutate: true`;
//! warning findings as admission warnings). Everything it decides is in `admission`, tested natively; this
//! file only talks to the host.
//!
//! Host capabilities, and how the policy knows whether to use them:
//! * Kubernetes (Nodes, RuntimeClasses): only when settings `contextAware: true` say the
//!   ClusterAdmissionPolicy grants them (`contextAwareResources`). A policy-server logs an error for every
//!   request whose policy asks for resources it was not granted, so the policy does not ask on a hunch.
//!   Should the host refuse all the same (`kwctl run` without `--allow-context-aware`), the settings stand
//!   in for the cluster (no context), as without the setting.
//! * OCI manifests: only when settings `registryAware: true` say the policy is granted
//!   `oci/v1/oci_manifest` and `oci/v1/oci_manifest_config` (a namespaced AdmissionPolicy may not be:
//!   policy-server logs an error for every denied call); a host that does not answer all the same leaves
//!   the image as its name classifies it.
//!
//! The calls:
//! * Kubernetes (`kubewarden/kubernetes/list_resources_all`, the SDK's `list_all_resources` call and
//!   request type): `v1` Nodes and `node.k8s.io/v1` RuntimeClasses, for workloads only. Both lists must
//!   arrive, or neither is used (half a cluster would invent unschedulable pods).
//! * OCI (`kubewarden/oci/v1/oci_manifest`, then `v1/oci_manifest_config` for a single-platform image
//!   manifest, which carries no platform): for the images [`admission::manifest_lookups`] names, once
//!   per distinct image per request. A failed lookup leaves the image as its name classifies it.
//!
//! The answers are read as JSON (not the SDK's typed `List<T>` / `oci-spec` types): hosts differ in
//! whether list items carry `apiVersion`/`kind`, and the oci-spec deserializers would double the module.

#![warn(missing_docs)]

pub mod admission;
pub mod host_answers;
pub mod request;

/// The waPC guest: registrations and host calls (wasm32-wasip1 only: the host's imports exist nowhere else;
/// the dashboard links this crate for wasm32-unknown-unknown without them).
#[cfg(target_os = "wasi")]
mod guest {
    use std::collections::BTreeMap;

    use crate::admission::{self, Decision, Verdict};
    use kubewarden_policy_sdk::host_capabilities::kubernetes::ListAllResourcesRequest;
    use kubewarden_policy_sdk::response::ValidationResponse;
    use kubewarden_policy_sdk::settings::SettingsValidationResponse;
    use kubewarden_policy_sdk::wapc_guest as guest;
    use kubewarden_policy_sdk::{accept_request, protocol_version_guest};
    use serde_json::Value;
    use winplace_rules::model::ClusterContext;
    use winplace_rules::model::cluster_objects::NODE_FIELDS;
    use winplace_rules::windows::ImageClass;

    #[unsafe(no_mangle)]
    pub extern "C" fn wapc_init() {
        guest::register_function("validate", validate);
        guest::register_function("validate_settings", validate_settings);
        guest::register_function("protocol_version", protocol_version_guest);
    }

    /// `validate_settings`: `{valid, message}`, the message naming the setting (also for JSON that does not
    /// deserialize, which the SDK's generic helper turns into a call error instead).
    fn validate_settings(payload: &[u8]) -> guest::CallResult {
        let answer = match admission::parse_settings(payload) {
            Ok(_) => SettingsValidationResponse {
                valid: true,
                message: None,
            },
            Err(error) => SettingsValidationResponse {
                valid: false,
                message: Some(error.to_string()),
            },
        };
        Ok(serde_json::to_vec(&answer)?)
    }

    fn validate(payload: &[u8]) -> guest::CallResult {
        let (request, settings) = admission::parse_payload(payload).map_err(|e| e.to_string())?;
        if !admission::is_evaluated(&request) || admission::is_exempt(&request, &settings) {
            return accept_request();
        }
        let context = if admission::asks_for_context(&request, &settings) {
            cluster_context()
        } else {
            None
        };
        let lookups = admission::manifest_lookups(&request, context.as_ref(), &settings);
        let manifests: BTreeMap<String, ImageClass> = lookups
            .into_iter()
            .filter_map(|image| manifest_class(&image).map(|class| (image, class)))
            .collect();
        let decision = admission::review(request, &settings, context.as_ref(), &manifests);
        respond(decision)
    }

    fn respond(decision: Decision) -> guest::CallResult {
        let warnings = (!decision.warnings.is_empty()).then_some(decision.warnings);
        let (accepted, message, mutated_object) = match decision.verdict {
            Verdict::Accept => (true, None, None),
            Verdict::Mutate(object) => (true, None, Some(object)),
            Verdict::Reject(message) => (false, Some(message), None),
        };
        Ok(serde_json::to_vec(&ValidationResponse {
            accepted,
            message,
            code: None,
            mutated_object,
            audit_annotations: None,
            warnings,
        })?)
    }

    /// Nodes and RuntimeClasses from the host, or `None` when the host does not grant them.
    fn cluster_context() -> Option<ClusterContext> {
        // Only the fields the rules read: a cluster of 5,000 nodes otherwise sends every node's images,
        // conditions and managed fields on every request (hosts that predate field masks ignore them).
        let nodes = list_all("v1", "Node", NODE_FIELDS)?;
        let runtime_classes = list_all("node.k8s.io/v1", "RuntimeClass", &[])?;
        admission::context_from_answers(&nodes, &runtime_classes).ok()
    }

    /// Every object of a kind; with `fields`, only those fields of each (the SDK's `field_masks`).
    fn list_all(api_version: &str, kind: &str, fields: &[&str]) -> Option<Vec<u8>> {
        let request = ListAllResourcesRequest {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            label_selector: None,
            field_selector: None,
            field_masks: (!fields.is_empty())
                .then(|| fields.iter().map(|f| f.to_string()).collect()),
        };
        let payload = serde_json::to_vec(&request).ok()?;
        guest::host_call("kubewarden", "kubernetes", "list_resources_all", &payload).ok()
    }

    /// What the image's manifest says, or `None` when the host cannot read it.
    fn manifest_class(image: &str) -> Option<ImageClass> {
        let payload = serde_json::to_vec(image).ok()?;
        let answer = guest::host_call("kubewarden", "oci", "v1/oci_manifest", &payload).ok()?;
        let manifest: Value = serde_json::from_slice(&answer).ok()?;
        if manifest.get("manifests").is_some() {
            return winplace_rules::windows::class_from_manifest(image, &manifest, None);
        }
        // A single-platform image: the platform is in its configuration.
        let answer =
            guest::host_call("kubewarden", "oci", "v1/oci_manifest_config", &payload).ok()?;
        let both: Value = serde_json::from_slice(&answer).ok()?;
        winplace_rules::windows::class_from_manifest(image, &manifest, both.get("config"))
    }
}
