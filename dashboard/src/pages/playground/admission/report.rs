//! What surrounds the reviews: whether the module accepts the settings, what cluster and manifests its
//! host calls were answered with, and the objects never sent.

use leptos::prelude::*;
use serde_json::Value;
use winplace_policy_wasm::host_answers::HostAnswers;

use super::selection::Pasted;

/// The module's `validate_settings` answer: policy-server does not start a policy that refuses its
/// settings.
#[component]
pub fn SettingsCheck(validity: Result<Value, String>) -> impl IntoView {
    match validity {
        Ok(v) if v["valid"] == true => view! {
            <p class="settings-check" data-valid="true">
                "validate_settings: the module accepts these settings."
            </p>
        }.into_any(),
        Ok(v) => view! {
            <p class="settings-check error" data-valid="false" role="alert">
                "validate_settings: the module refuses these settings, so policy-server would not start it: "
                {v["message"].as_str().unwrap_or("").to_string()}
            </p>
        }.into_any(),
        Err(e) => view! {
            <p class="settings-check error" data-valid="false" role="alert">
                "validate_settings failed: "
                {e}
            </p>
        }.into_any(),
    }
}

/// Whether the policy is granted the playground's cluster.
#[component]
pub fn HostContext(lists: usize) -> impl IntoView {
    view! {
        <p class="host-context muted" data-lists=lists.to_string()>
            {if lists == 0 {
                "Cluster context: none granted (the policy uses its settings)."
            } else {
                "Cluster context: the playground's cluster, answered to list_resources_all (the policy asks for it only with contextAware: true in its settings)."
            }}
        </p>
    }
}

/// What the page's host holds for the guest's calls (for the record and the parity test): the whole
/// Lists (each call's answer is pruned to its `field_masks`), the manifests and configurations, and the
/// single objects it answers `get_resource` with.
#[component]
pub fn HostLists(host: HostAnswers) -> impl IntoView {
    // The page's host has no clock of its own to show (`now`: the guest reads its own).
    let HostAnswers {
        lists,
        manifests,
        configs,
        objects,
        now: _,
    } = host;
    view! {
        <details class="host-lists">
            <summary>"Host answers"</summary>
            {lists
                .into_iter()
                .map(|(key, list)| {
                    view! {
                        <pre class="host-list" data-list=key.clone()>
                            {list.to_string()}
                        </pre>
                    }
                })
                .collect_view()}
            {manifests
                .into_iter()
                .map(|(image, manifest)| {
                    view! {
                        <pre class="host-manifest" data-image=image.clone()>
                            {manifest.to_string()}
                        </pre>
                    }
                })
                .collect_view()}
            {configs
                .into_iter()
                .map(|(image, config)| {
                    view! {
                        <pre class="host-config" data-image=image.clone()>
                            {config.to_string()}
                        </pre>
                    }
                })
                .collect_view()}
            {objects
                .into_iter()
                .map(|(key, object)| {
                    view! {
                        <pre class="host-object" data-object=key.clone()>
                            {object.to_string()}
                        </pre>
                    }
                })
                .collect_view()}
        </details>
    }
}

/// The pasted objects the policy's rules do not select: the API server never calls the policy for them.
#[component]
pub fn NotSent(skipped: Vec<Pasted>) -> impl IntoView {
    (!skipped.is_empty()).then(|| view! {
        <div class="not-sent">
            <p class="muted">
                "Not sent to the policy: its rules ("<code>"rules[]"</code>
                " of its metadata: apiGroups, apiVersions, resources) do not match these objects' group, version and kind, so the API server would never call it for them, as policy-server would never see them."
            </p>
            <ul>
                {skipped
                    .into_iter()
                    .map(|o| {
                        view! {
                            <li
                                class="not-sent-object"
                                data-object=o.label.clone()
                                data-gvk=o.gvk()
                            >
                                {o.label.clone()}
                                " ("
                                <code>{o.gvk()}</code>
                                ")"
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        </div>
    })
}
