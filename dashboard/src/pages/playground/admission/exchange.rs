//! The module's review of each object the API server would send: the payloads given to `validate` with
//! the playground's settings (checked first by the module's own `validate_settings`), the host calls
//! answered from the playground's cluster and the resolved images, and each answer shown as
//! policy-server turns it into an AdmissionResponse.

use leptos::prelude::*;
use serde_json::{Value, json};
use winplace_policy_wasm::host_answers::HostAnswers;
use winplace_policy_wasm::request::{review, validate_payload};

use super::super::dom;
use super::answer::{Verdict, read_answer};
use super::selection::{Pasted, Sent, requests};
use crate::components::yaml::to_yaml;
use crate::policy_host::Policy;

/// One request through the module.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// What was sent.
    pub sent: Sent,
    /// The payload given to `validate`, byte for byte.
    pub payload: String,
    /// The module's answer byte for byte, or its error.
    pub raw: Result<String, String>,
    /// Milliseconds for the call.
    pub ms: f64,
}

/// One evaluation of the pasted objects by the module.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The module's `validate_settings` answer (`{valid, message}`), or its error.
    pub validity: Result<Value, String>,
    /// Each object sent, in order (none when the settings are refused).
    pub exchanges: Vec<Exchange>,
    /// What the host answered the module's calls with.
    pub host: HostAnswers,
    /// The objects the policy's rules do not select.
    pub skipped: Vec<Pasted>,
}

/// Asks `policy` to validate `settings_text`, then to review each of `objects` its rules select, its host
/// calls answered by `host`.
pub fn evaluate(
    policy: &Policy,
    settings_text: &str,
    objects: &[Pasted],
    host: HostAnswers,
) -> Evaluation {
    let validity = policy
        .call("validate_settings", settings_text, &host)
        .and_then(|raw| serde_json::from_str::<Value>(&raw).map_err(|e| e.to_string()));
    let valid = matches!(&validity, Ok(v) if v["valid"] == true);
    let settings_value: Value = serde_json::from_str(settings_text).unwrap_or_else(|_| json!({}));
    // What the ClusterAdmissionPolicy would select: the module's own metadata rules when it has them.
    let rules = if policy.identity.annotated {
        policy.identity.rules.clone()
    } else {
        Vec::new()
    };
    let selection = requests(objects, &rules);
    let exchanges = if valid {
        selection
            .sent
            .into_iter()
            .map(|sent| {
                let payload = validate_payload(&sent.request, &settings_value).to_string();
                let t0 = dom::now_ms();
                let raw = policy.call("validate", &payload, &host);
                let ms = dom::now_ms() - t0;
                Exchange {
                    sent,
                    payload,
                    raw,
                    ms,
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Evaluation {
        validity,
        exchanges,
        host,
        skipped: selection.skipped,
    }
}

/// One object: verdict, message, warnings, patch and patched object, and the raw exchange.
#[component]
pub fn ExchangeRow(exchange: Exchange, mutating: RwSignal<bool>) -> impl IntoView {
    let Exchange {
        sent,
        payload,
        raw,
        ms,
    } = exchange;
    let object = sent.object.clone();
    let review_text = serde_json::to_string_pretty(&review(&sent.request)).unwrap_or_default();
    let label = sent.label.clone();
    let raw_text = raw.clone().unwrap_or_default();
    let body = move || match &raw {
        Err(e) => view! {
            <p class="verdict error" data-verdict="error">
                "The module failed: "
                {e.clone()}
            </p>
        }
        .into_any(),
        Ok(text) => match read_answer(text, &object, mutating.get()) {
            Err(e) => view! {
                <p class="verdict error" data-verdict="error">
                    {e}
                </p>
            }
            .into_any(),
            Ok(answer) => {
                let response = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
                let warnings = answer.warnings.clone();
                let (class, head, detail) = match &answer.verdict {
                    Verdict::Allowed => ("allowed", "Allowed".to_string(), None),
                    Verdict::Denied(m) => ("denied", "Denied".to_string(), Some(m.clone())),
                    Verdict::Mutated { .. } => {
                        ("mutated", "Allowed with changes".to_string(), None)
                    }
                };
                let mutation = match answer.verdict {
                    Verdict::Mutated { patch, object } => Some(view! {
                        <h4>"JSONPatch"</h4>
                        <pre class="patch">
                            {serde_json::to_string_pretty(&patch).unwrap_or_default()}
                        </pre>
                        <h4>"Patched object"</h4>
                        <pre class="patched">{to_yaml(&object)}</pre>
                    }),
                    _ => None,
                };
                view! {
                    <p class=format!("verdict {class}") data-verdict=class>
                        {head}
                    </p>
                    {detail.map(|m| view! { <p class="admission-message">{m}</p> })}
                    {(!warnings.is_empty())
                        .then(|| {
                            view! {
                                <ul class="admission-warnings">
                                    {warnings
                                        .into_iter()
                                        .map(|w| view! { <li class="admission-warning">{w}</li> })
                                        .collect_view()}
                                </ul>
                            }
                        })}
                    {mutation}
                    <details class="response">
                        <summary>"AdmissionResponse"</summary>
                        <pre>{response}</pre>
                    </details>
                }
                .into_any()
            }
        },
    };
    view! {
        <li class="admission-result" data-object=sent.label data-ms=format!("{ms:.3}")>
            <h3>{label}</h3>
            {body}
            <details class="exchange">
                <summary>"AdmissionReview sent, raw exchange"</summary>
                <pre class="review">{review_text}</pre>
                <pre class="payload" data-raw="payload">
                    {payload}
                </pre>
                <pre class="raw-answer" data-raw="answer">
                    {raw_text}
                </pre>
            </details>
        </li>
    }
}
