//! The policy module in use: the server's `/policy.wasm` or one the user drops in, loaded and asked its
//! protocol version (as policy-server does when it loads a policy), and which artifact it is.

use leptos::prelude::*;
use leptos::task::spawn_local;
use winplace_policy_wasm::host_answers::HostAnswers;

use super::super::dom;
use crate::policy_host::{Identity, Policy};

/// Where the server serves the module it embeds.
pub const SERVER_MODULE: &str = "/policy.wasm";

/// The module in use.
#[derive(Clone)]
pub enum Module {
    /// Being fetched and compiled.
    Loading,
    /// Ready, with its answer to `protocol_version`.
    Ready(Policy, Result<String, String>),
    /// It could not be loaded: why.
    Failed(String),
}

/// Loads the server's module or a dropped-in one into `module`, asking its protocol version first (as
/// policy-server does when it loads a policy).
pub fn load(module: RwSignal<Module, LocalStorage>, file: Option<web_sys::File>) {
    module.set(Module::Loading);
    spawn_local(async move {
        let loaded = match file {
            None => Policy::load_url(SERVER_MODULE).await,
            Some(file) => match dom::file_bytes(&file).await {
                Ok(bytes) => Policy::load_bytes(&bytes, &file.name()).await,
                Err(e) => Err(e),
            },
        };
        module.set(match loaded {
            Ok(policy) => {
                // No capability is granted for this call.
                let protocol = policy.call("protocol_version", "", &HostAnswers::default());
                Module::Ready(policy, protocol)
            }
            Err(e) => Module::Failed(e),
        });
    });
}

/// The module's identity (or why there is none), and the choice of another module.
#[component]
pub fn ModuleRow(module: RwSignal<Module, LocalStorage>) -> impl IntoView {
    let on_file = move |ev: leptos::ev::Event| {
        if let Some(file) = dom::chosen_file(&ev) {
            load(module, Some(file));
        }
    };
    view! {
        <div class="module-row">
            {move || match module.get() {
                Module::Loading => {
                    view! { <p class="module-identity muted">"Loading the policy module…"</p> }
                        .into_any()
                }
                Module::Failed(e) => {
                    view! {
                        <p class="module-identity error" role="alert">
                            {e}
                        </p>
                    }
                        .into_any()
                }
                Module::Ready(policy, protocol) => {
                    view! { <ModuleIdentity identity=policy.identity.clone() protocol /> }
                        .into_any()
                }
            }}
            <label class="module-file">
                "Use another policy.wasm "
                <input
                    type="file"
                    id="policy-file"
                    accept=".wasm,application/wasm"
                    on:change=on_file
                />
            </label> <button class="module-server" on:click=move |_| load(module, None)>
                "Use the server's module"
            </button>
        </div>
    }
}

/// Which artifact answers: source, size, digest, version.
#[component]
fn ModuleIdentity(identity: Identity, protocol: Result<String, String>) -> impl IntoView {
    let version = if identity.annotated {
        format!("{} {}", identity.title, identity.version)
    } else {
        "not annotated (no io.kubewarden.metadata section)".to_string()
    };
    let protocol = match protocol {
        Ok(p) => p.trim_matches('"').to_string(),
        Err(e) => format!("unknown ({e})"),
    };
    view! {
        <dl
            class="module-identity"
            data-sha256=identity.sha256.clone()
            data-size=identity.size.to_string()
            data-version=identity.version.clone()
        >
            <dt>"Module"</dt>
            <dd>{identity.source.clone()}</dd>
            <dt>"Size"</dt>
            <dd>{format!("{} bytes", identity.size)}</dd>
            <dt>"SHA-256"</dt>
            <dd>
                <code class="sha256">
                    {if identity.sha256.is_empty() {
                        "(needs https or localhost)".to_string()
                    } else {
                        identity.sha256.clone()
                    }}
                </code>
            </dd>
            <dt>"Version"</dt>
            <dd class="version">{version}</dd>
            <dt>"Protocol"</dt>
            <dd class="protocol">{protocol}</dd>
        </dl>
    }
}
