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
//!   request type): `node.k8s.io/v1` RuntimeClasses and `v1` Nodes, for workloads only: the
//!   RuntimeClasses first, then the Nodes not labelled Linux (a label selector), and the whole Node list
//!   only when the rules may read a Linux node for the object, at once when its own selectors let it go
//!   to one ([`admission::review_with_host`]). Both lists must arrive, or neither is used (half a cluster
//!   would invent unschedulable pods).
//! * Kubernetes (`kubewarden/kubernetes/get_resource`): with `placementGate`, for a Pod CREATE it may
//!   gate, the placement controller's `coordination.k8s.io/v1` Lease (settings
//!   `placementLeaseNamespace`, `placementLeaseName`), judged fresh by WASI's wall clock: no live
//!   controller, no gate ([`admission::review_with_host`]).
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
    use crate::admission::{self, Decision, HostCalls, Verdict};
    use kubewarden_policy_sdk::response::ValidationResponse;
    use kubewarden_policy_sdk::settings::SettingsValidationResponse;
    use kubewarden_policy_sdk::wapc_guest as guest;
    use kubewarden_policy_sdk::{accept_request, protocol_version_guest};

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
        respond(admission::review_with_host(request, &settings, &mut Wapc))
    }

    /// The waPC host: every call is `kubewarden/...`.
    struct Wapc;

    impl HostCalls for Wapc {
        fn call(&mut self, namespace: &str, operation: &str, payload: &[u8]) -> Option<Vec<u8>> {
            guest::host_call("kubewarden", namespace, operation, payload).ok()
        }

        /// WASI's wall clock (`clock_time_get`), which policy-server's wasmtime answers with the host's.
        fn now(&mut self) -> Option<k8s_openapi::jiff::Timestamp> {
            let since = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()?;
            k8s_openapi::jiff::Timestamp::new(
                i64::try_from(since.as_secs()).ok()?,
                i32::try_from(since.subsec_nanos()).ok()?,
            )
            .ok()
        }
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
}
