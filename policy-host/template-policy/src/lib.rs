//! A benchmark fixture, not part of winplace: the logic of Kubewarden's Rust policy template
//! (github.com/kubewarden/rust-policy-template, `src/lib.rs` and `src/settings.rs`) written again as a
//! waPC policy, so `policy-host`'s admission benchmark can run it beside `policy.wasm` in the same host.
//!
//! What the template does per `validate` call, and so does this: decode the payload into the SDK's
//! `ValidationRequest<Settings>` (empty settings); log "starting validation" through the SDK's slog drain
//! (a `kubewarden/tracing/log` host call); accept any kind but Pod; decode a Pod into k8s-openapi's
//! typed `Pod`; reject the name `invalid-pod-name`, else accept; log the outcome.
//!
//! Built for wasm32-wasip1 in the release profile, as the template's Makefile builds it
//! (`policy-host::template_policy` does it); natively this crate is empty.

#[cfg(target_arch = "wasm32")]
mod guest {
    use std::sync::LazyLock;

    use k8s_openapi::Resource;
    use k8s_openapi::api::core::v1 as apicore;
    use kubewarden::wapc_guest::{self as guest, CallResult};
    use kubewarden::{
        logging, protocol_version_guest, request::ValidationRequest, validate_settings,
    };
    use kubewarden_policy_sdk as kubewarden;
    use serde::{Deserialize, Serialize};
    use slog::{Logger, info, o, warn};

    static LOG_DRAIN: LazyLock<Logger> = LazyLock::new(|| {
        Logger::root(
            logging::KubewardenDrain::new(),
            o!("policy" => "template-policy"),
        )
    });

    /// The template's settings: none.
    #[derive(Serialize, Deserialize, Default, Debug)]
    #[serde(default)]
    struct Settings {}

    impl kubewarden::settings::Validatable for Settings {
        fn validate(&self) -> Result<(), String> {
            Ok(())
        }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn wapc_init() {
        guest::register_function("validate", validate);
        guest::register_function("validate_settings", validate_settings::<Settings>);
        guest::register_function("protocol_version", protocol_version_guest);
    }

    fn validate(payload: &[u8]) -> CallResult {
        let request: ValidationRequest<Settings> = ValidationRequest::new(payload)?;
        info!(LOG_DRAIN, "starting validation");
        if request.request.kind.kind != apicore::Pod::KIND {
            warn!(LOG_DRAIN, "Policy validates Pods only. Accepting resource"; "kind" => &request.request.kind.kind);
            return kubewarden::accept_request();
        }
        match serde_json::from_value::<apicore::Pod>(request.request.object) {
            Ok(pod) if pod.metadata.name.as_deref() == Some("invalid-pod-name") => {
                info!(LOG_DRAIN, "rejecting pod");
                kubewarden::reject_request(
                    Some("pod name invalid-pod-name is not accepted".to_string()),
                    None,
                    None,
                    None,
                )
            }
            Ok(_) => {
                info!(LOG_DRAIN, "accepting resource");
                kubewarden::accept_request()
            }
            Err(_) => {
                warn!(LOG_DRAIN, "cannot unmarshal resource; accept it");
                kubewarden::accept_request()
            }
        }
    }
}
