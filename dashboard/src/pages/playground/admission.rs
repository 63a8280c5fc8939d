//! The Admission view: what `policy.wasm` itself — the artifact the cluster runs, not the rules linked
//! into this page — answers for each pasted object, hosted in the browser as policy-server hosts it.
//!
//! For each object the policy's rules select (API group, version and resource, as the API server matches
//! them: docs/reference/kubewarden-hosting.md §3; the others are listed as not sent), the page builds the
//! AdmissionRequest the API server would send on CREATE (`winplace_policy_wasm::request`, shared with the
//! wasmtime host), calls the module's
//! `validate` with the playground's settings (checked first by the module's own `validate_settings`),
//! answers its host calls from the playground's cluster context, and shows the answer as policy-server
//! turns it into an AdmissionResponse: allowed or denied with the message, warnings, and for a mutating
//! ClusterAdmissionPolicy the JSONPatch and the patched object.
//!
//! Everything but the module calls is plain functions over JSON, tested natively.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde_json::{Value, json};
use winplace_policy_wasm::admission::EVALUATED_KINDS;
use winplace_policy_wasm::request::{create_request, resource_of, review, validate_payload};
use winplace_rules::ClusterContext;
use winplace_rules::input::{Limits, parse};
use winplace_rules::model;

use crate::components::yaml::to_yaml;
use crate::policy_host::{Identity, Policy};

use super::dom;
use super::eval::INPUT_FILE;

/// Where the server serves the module it embeds.
pub const SERVER_MODULE: &str = "/policy.wasm";

/// What policy-server answers when a policy that may not mutate returns a mutated object
/// (policy-evaluator's AdmissionResponse handling; see docs/reference/kubewarden-hosting.md).
pub const MUTATION_NOT_ALLOWED: &str = "The policy attempted to mutate the request, but it is currently configured to not allow mutations.";

/// One object the API server would send the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    /// `Kind/namespace/name` (cluster-scoped: `Kind/name`), as findings name objects.
    pub label: String,
    /// The object as pasted.
    pub object: Value,
    /// The AdmissionRequest.
    pub request: Value,
}

/// One object of the pasted text, parsed once and shared by what reads it (the images asked of the
/// server, the requests sent to the module).
#[derive(Debug, Clone, PartialEq)]
pub struct Pasted {
    /// `Kind/namespace/name` (cluster-scoped: `Kind/name`), as findings name objects.
    pub label: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version within the group (`v1`, `v1beta1`).
    pub version: String,
    /// The kind.
    pub kind: String,
    /// The object as pasted.
    pub object: Value,
}

impl Pasted {
    /// `apps/v1 Deployment`, as the view names what the policy's rules do not match.
    pub fn gvk(&self) -> String {
        if self.group.is_empty() {
            format!("{} {}", self.version, self.kind)
        } else {
            format!("{}/{} {}", self.group, self.version, self.kind)
        }
    }
}

/// The objects of `text`, in order.
pub fn pasted(text: &str) -> Vec<Pasted> {
    let parsed = parse(INPUT_FILE, text, &Limits::default());
    model::objects(&parsed.documents)
        .into_iter()
        .map(|o| {
            let (group, version) = match o.api_version.rsplit_once('/') {
                Some((g, v)) => (g.to_string(), v.to_string()),
                None => (String::new(), o.api_version.clone()),
            };
            let label = match &o.namespace {
                Some(ns) => format!("{}/{ns}/{}", o.kind, o.name),
                None => format!("{}/{}", o.kind, o.name),
            };
            Pasted {
                label,
                group,
                version,
                kind: o.kind,
                object: o.value,
            }
        })
        .collect()
}

/// Whether an admission rule of the policy (metadata `rules`) selects CREATE of `kind` in
/// `group`/`version`: every one of `apiGroups`, `apiVersions`, `resources` and `operations` must match
/// (`*` matches anything), as the API server matches a webhook's rules.
fn rule_selects(rule: &Value, object: &Pasted) -> bool {
    let has = |field: &str, want: &str| {
        rule[field]
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x == "*" || x == want))
    };
    let Some(resource) = resource_of(&object.kind) else {
        return false;
    };
    has("apiGroups", &object.group)
        && has("apiVersions", &object.version)
        && has("resources", resource)
        && has("operations", "CREATE")
}

/// Whether the policy sees CREATE of `object`: by its embedded metadata `rules` when it has them (what a
/// ClusterAdmissionPolicy copied from them would send), else the kinds winplace evaluates.
pub fn selects(rules: &[Value], object: &Pasted) -> bool {
    if rules.is_empty() {
        EVALUATED_KINDS.contains(&(object.group.as_str(), object.kind.as_str()))
    } else {
        rules.iter().any(|r| rule_selects(r, object))
    }
}

/// What the API server would do with the pasted objects on CREATE: the objects it sends the policy, in
/// order, with their requests (namespace `default` where the object names none, as `kubectl apply`
/// without `-n`), and those the policy's rules do not select, which it never sends.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Selection {
    /// Sent to the policy.
    pub sent: Vec<Sent>,
    /// Not sent: the policy's rules do not match their group, version and kind.
    pub skipped: Vec<Pasted>,
}

/// Splits `objects` by what `rules` select (see [`Selection`]).
pub fn requests(objects: &[Pasted], rules: &[Value]) -> Selection {
    let mut selection = Selection::default();
    for o in objects {
        if selects(rules, o) {
            selection.sent.push(Sent {
                label: o.label.clone(),
                request: create_request(&o.object, "default"),
                object: o.object.clone(),
            });
        } else {
            selection.skipped.push(o.clone());
        }
    }
    selection
}

/// The container images of `object` (containers, init and ephemeral containers at any depth), each once.
pub fn images_of(object: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if matches!(
                        k.as_str(),
                        "containers" | "initContainers" | "ephemeralContainers"
                    ) {
                        for c in child.as_array().into_iter().flatten() {
                            if let Some(i) = c["image"].as_str()
                                && !out.iter().any(|o| o == i)
                            {
                                out.push(i.to_string());
                            }
                        }
                    } else {
                        walk(child, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(object, &mut out);
    out
}

/// At most this many images are asked of the server per evaluation.
const MAX_RESOLVED_IMAGES: usize = 32;

/// What the server's registry client says about each image (`GET /api/images/resolve`); images it could
/// not resolve are left out. `Err` when the server does not resolve images (or cannot be reached).
async fn resolve_images(images: Vec<String>) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for image in images.into_iter().take(MAX_RESOLVED_IMAGES) {
        let url = format!(
            "/api/images/resolve?ref={}",
            String::from(js_sys::encode_uri_component(&image))
        );
        let response = gloo_net::http::Request::get(&url)
            .send()
            .await
            .map_err(|e| format!("cannot reach the server: {e}"))?;
        let body: Value = response.json().await.unwrap_or_default();
        if response.ok() {
            out.insert(image, body);
        } else if body["reason"] == "off" {
            return Err(
                "the server does not resolve images (start it with --resolve-images)".into(),
            );
        }
    }
    Ok(out)
}

/// The settings text (YAML or JSON) as the JSON policy-server hands the policy (`{}` when empty or
/// unreadable: the settings panel shows the problem).
pub fn settings_json(text: &str) -> Value {
    parse("settings.yaml", text, &Limits::default())
        .documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or_else(|| json!({}))
}

/// What the page answers the guest's host calls with: the chosen cluster's Nodes and RuntimeClasses as
/// the Kubernetes capability lists them; image manifests are not available offline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostAnswers {
    /// List answers by `apiVersion/kind` (`v1/Node`, `node.k8s.io/v1/RuntimeClass`).
    pub lists: BTreeMap<String, String>,
    /// `oci/v1/oci_manifest` answers by image, from what the server resolved.
    pub manifests: BTreeMap<String, String>,
    /// `oci/v1/oci_manifest_config` answers by image (single-platform images).
    pub configs: BTreeMap<String, String>,
}

impl HostAnswers {
    /// The answers for `context` (`None`: the capability is not granted, as without
    /// `contextAwareResources`).
    pub fn for_context(context: Option<&ClusterContext>) -> HostAnswers {
        let Some(context) = context else {
            return HostAnswers::default();
        };
        let nodes =
            json!({"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": context.nodes});
        let classes: Vec<&_> = context.runtime_classes.iter().map(|e| &e.object).collect();
        let runtime_classes = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClassList",
            "metadata": {}, "items": classes});
        HostAnswers {
            lists: BTreeMap::from([
                ("v1/Node".to_string(), nodes.to_string()),
                (
                    "node.k8s.io/v1/RuntimeClass".to_string(),
                    runtime_classes.to_string(),
                ),
            ]),
            ..HostAnswers::default()
        }
    }

    /// Adds the OCI capability's answers for the images the server resolved (`GET /api/images/resolve`):
    /// an image index for images whose platforms came from an index; for a single manifest, an image
    /// manifest (which carries no platform) and its configuration.
    pub fn with_images(mut self, resolved: &BTreeMap<String, Value>) -> HostAnswers {
        for (image, answer) in resolved {
            let digest = answer["digest"].as_str().unwrap_or("");
            let platform = |p: &Value| {
                let mut out = json!({"os": p["os"], "architecture": p["architecture"]});
                if let Some(v) = p["osVersion"].as_str() {
                    out["os.version"] = json!(v);
                }
                if let Some(features) = p["osFeatures"].as_array().filter(|f| !f.is_empty()) {
                    out["os.features"] = json!(features);
                }
                out
            };
            let platforms: Vec<Value> = answer["platforms"].as_array().cloned().unwrap_or_default();
            if answer["platformsFrom"] == "index" {
                let entries: Vec<Value> = platforms
                    .iter()
                    .map(|p| {
                        json!({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                        "digest": digest, "size": 0, "platform": platform(p)})
                    })
                    .collect();
                let index = json!({"schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": entries});
                self.manifests.insert(image.clone(), index.to_string());
            } else if let Some(p) = platforms.first() {
                let manifest = json!({"schemaVersion": 2,
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest, "size": 0},
                    "layers": []});
                let config = json!({"manifest": manifest, "digest": digest, "config": platform(p)});
                self.manifests.insert(image.clone(), manifest.to_string());
                self.configs.insert(image.clone(), config.to_string());
            }
        }
        self
    }

    /// Answers one host call, or refuses it with the reason.
    pub fn answer(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &str,
    ) -> Result<String, String> {
        match (binding, namespace, operation) {
            // The SDK's log lines: policy-server prints them; nothing to answer.
            ("kubewarden", "tracing", "log") => Ok(String::new()),
            ("kubewarden", "kubernetes", "list_resources_all") => {
                let request: Value = serde_json::from_str(payload).map_err(|e| e.to_string())?;
                let key = format!(
                    "{}/{}",
                    request["api_version"].as_str().unwrap_or(""),
                    request["kind"].as_str().unwrap_or("")
                );
                self.lists.get(&key).cloned().ok_or_else(|| {
                    format!("no cluster context is chosen: {key} is not available to the policy")
                })
            }
            ("kubewarden", "oci", "v1/oci_manifest" | "v1/oci_manifest_config") => {
                let image: String = serde_json::from_str(payload).map_err(|e| e.to_string())?;
                let table = if operation == "v1/oci_manifest" {
                    &self.manifests
                } else {
                    &self.configs
                };
                table.get(&image).cloned().ok_or_else(|| {
                    format!("the server could not resolve {image} (or does not resolve images)")
                })
            }
            _ => Err(format!(
                "this page does not provide the host capability {binding}/{namespace}/{operation}"
            )),
        }
    }
}

/// What policy-server makes of the module's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accepted as is.
    Allowed,
    /// Rejected, with the message the user sees.
    Denied(String),
    /// Accepted with changes: the JSONPatch policy-server sends and the object after it.
    Mutated {
        /// RFC 6902 operations (policy-server diffs the request's object and the mutated one).
        patch: Value,
        /// The patched object.
        object: Value,
    },
}

/// The module's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The decision.
    pub verdict: Verdict,
    /// Admission warnings.
    pub warnings: Vec<String>,
    /// The AdmissionResponse policy-server sends the API server.
    pub response: Value,
}

/// Reads the module's ValidationResponse `raw` for a request about `object`, as policy-server does for a
/// ClusterAdmissionPolicy with `mutating: mutating`.
pub fn read_answer(raw: &str, object: &Value, mutating: bool) -> Result<Answer, String> {
    let v: Value =
        serde_json::from_str(raw).map_err(|e| format!("the module answered non-JSON: {e}"))?;
    let accepted = v["accepted"]
        .as_bool()
        .ok_or("the module's answer has no boolean `accepted`")?;
    let warnings: Vec<String> = v["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let message = v["message"].as_str().map(str::to_string);
    let patch = match v.get("mutated_object") {
        Some(m) if !m.is_null() => {
            let patch = json_patch::diff(object, m);
            (!patch.0.is_empty())
                .then(|| (serde_json::to_value(&patch).unwrap_or_default(), m.clone()))
        }
        _ => None,
    };
    let (verdict, allowed) = match (accepted, patch) {
        (false, _) => (Verdict::Denied(message.clone().unwrap_or_default()), false),
        (true, Some(_)) if !mutating => (Verdict::Denied(MUTATION_NOT_ALLOWED.to_string()), false),
        (true, Some((patch, object))) => (Verdict::Mutated { patch, object }, true),
        (true, None) => (Verdict::Allowed, true),
    };
    let mut response =
        json!({"uid": winplace_policy_wasm::request::REQUEST_UID, "allowed": allowed});
    if !warnings.is_empty() {
        response["warnings"] = json!(warnings);
    }
    match &verdict {
        Verdict::Denied(m) => response["status"] = json!({"message": m}),
        Verdict::Mutated { patch, .. } => {
            response["patchType"] = json!("JSONPatch");
            response["patch"] =
                json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
        }
        Verdict::Allowed => {}
    }
    Ok(Answer {
        verdict,
        warnings,
        response: json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    })
}

/// One request through the module.
#[derive(Debug, Clone, PartialEq)]
struct Exchange {
    sent: Sent,
    /// The payload given to `validate`, byte for byte.
    payload: String,
    /// The module's answer byte for byte, or its error.
    raw: Result<String, String>,
    /// Milliseconds for the call.
    ms: f64,
}

/// The module in use.
#[derive(Clone)]
enum Module {
    Loading,
    Ready(Policy, Result<String, String>),
    Failed(String),
}

/// Loads the server's module or a dropped-in one into `module`, asking its protocol version first (as
/// policy-server does when it loads a policy).
fn load(module: RwSignal<Module, LocalStorage>, file: Option<web_sys::File>) {
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
                let protocol = policy.call("protocol_version", "", &|b, n, o, p| {
                    HostAnswers::default().answer(b, n, o, p)
                });
                Module::Ready(policy, protocol)
            }
            Err(e) => Module::Failed(e),
        });
    });
}

/// The Admission view. `input` and `settings` are the playground's committed texts; `context` its chosen
/// cluster.
#[component]
pub fn AdmissionPanel(
    input: Signal<String>,
    settings: Signal<String>,
    context: Signal<Option<Arc<ClusterContext>>>,
) -> impl IntoView {
    let module: RwSignal<Module, LocalStorage> = RwSignal::new_local(Module::Loading);
    let mutating = RwSignal::new(true);
    load(module, None);

    let settings_text = Memo::new(move |_| settings_json(&settings.get()).to_string());
    // The pasted objects, parsed once for the images and the requests.
    let objects = Memo::new(move |_| pasted(&input.get()));
    // Asked only when the user opts in: the playground stays offline otherwise, and the images are not
    // even read.
    let ask_server = RwSignal::new(false);
    // Image manifests, as the server's registry client reads them, for the OCI host capability.
    let images = Memo::new(move |_| {
        if !ask_server.get() {
            return Vec::new();
        }
        objects.with(|objects| {
            let mut all: Vec<String> = Vec::new();
            for o in objects.iter().filter(|o| selects(&[], o)) {
                for i in images_of(&o.object) {
                    if !all.contains(&i) {
                        all.push(i);
                    }
                }
            }
            all
        })
    });
    let resolved = LocalResource::new(move || {
        let (asked, images) = (ask_server.get(), images.get());
        async move {
            if asked {
                resolve_images(images).await
            } else {
                Err("not asked".to_string())
            }
        }
    });
    // The cluster's lists, serialized once per chosen context (not on every edit of the input).
    let context_answers = Memo::new(move |_| HostAnswers::for_context(context.get().as_deref()));
    let results = Memo::new(move |_| {
        let Module::Ready(policy, _) = module.get() else {
            return None;
        };
        let settings_text = settings_text.get();
        let manifests = resolved.get().and_then(Result::ok).unwrap_or_default();
        let host = context_answers.get().with_images(&manifests);
        let answer = |b: &str, n: &str, o: &str, p: &str| host.answer(b, n, o, p);
        let validity = policy
            .call("validate_settings", &settings_text, &answer)
            .and_then(|raw| serde_json::from_str::<Value>(&raw).map_err(|e| e.to_string()));
        let valid = matches!(&validity, Ok(v) if v["valid"] == true);
        let settings_value: Value =
            serde_json::from_str(&settings_text).unwrap_or_else(|_| json!({}));
        // What the ClusterAdmissionPolicy would select: the module's own metadata rules when it has them.
        let rules = if policy.identity.annotated {
            policy.identity.rules.clone()
        } else {
            Vec::new()
        };
        let selection = objects.with(|o| requests(o, &rules));
        let skipped = selection.skipped;
        let exchanges: Vec<Exchange> = if valid {
            selection
                .sent
                .into_iter()
                .map(|sent| {
                    let payload = validate_payload(&sent.request, &settings_value).to_string();
                    let t0 = dom::now_ms();
                    let raw = policy.call("validate", &payload, &answer);
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
        Some((validity, exchanges, host, skipped))
    });

    let on_file = move |ev: leptos::ev::Event| {
        if let Some(file) = dom::chosen_file(&ev) {
            load(module, Some(file));
        }
    };

    view! {
        <section class="admission" aria-label="Admission">
            <p class="muted">"What the policy module itself answers — the artifact policy-server runs, hosted in this page through waPC — for each pasted object the API server would send it on CREATE."</p>
            <div class="module-row">
                {move || match module.get() {
                    Module::Loading => view! { <p class="module-identity muted">"Loading the policy module…"</p> }.into_any(),
                    Module::Failed(e) => view! { <p class="module-identity error" role="alert">{e}</p> }.into_any(),
                    Module::Ready(policy, protocol) => view! { <ModuleIdentity identity=policy.identity.clone() protocol/> }.into_any(),
                }}
                <label class="module-file">"Use another policy.wasm "
                    <input type="file" id="policy-file" accept=".wasm,application/wasm" on:change=on_file/>
                </label>
                <button class="module-server" on:click=move |_| load(module, None)>"Use the server's module"</button>
            </div>
            <label class="mutating">
                <input type="checkbox" id="admission-mutating" prop:checked=move || mutating.get()
                    on:change=move |ev| mutating.set(event_target_checked(&ev))/>
                " The ClusterAdmissionPolicy is mutating (" <code>"mutating: true"</code> ")"
            </label>
            {move || results.get().map(|(validity, exchanges, host, skipped)| {
                let settings_line = match validity {
                    Ok(v) if v["valid"] == true => view! { <p class="settings-check" data-valid="true">"validate_settings: the module accepts these settings."</p> }.into_any(),
                    Ok(v) => view! { <p class="settings-check error" data-valid="false" role="alert">
                        "validate_settings: the module refuses these settings, so policy-server would not start it: "
                        {v["message"].as_str().unwrap_or("").to_string()}</p> }.into_any(),
                    Err(e) => view! { <p class="settings-check error" data-valid="false" role="alert">"validate_settings failed: "{e}</p> }.into_any(),
                };
                let lists = host.lists.clone();
                let rows = exchanges.into_iter().map(|x| view! { <ExchangeRow exchange=x mutating/> }).collect_view();
                view! {
                    {settings_line}
                    <p class="host-context muted" data-lists=lists.len().to_string()>
                        {if lists.is_empty() { "Cluster context: none granted (the policy uses its settings)." } else { "Cluster context: the playground's cluster, answered to list_resources_all (the policy asks for it only with contextAware: true in its settings)." }}
                    </p>
                    <label class="ask-images">
                        <input type="checkbox" id="admission-resolve" prop:checked=move || ask_server.get()
                            on:change=move |ev| ask_server.set(event_target_checked(&ev))/>
                        " Ask the server for the images' manifests (" <code>"serve --resolve-images"</code> ")"
                    </label>
                    <p class="image-resolution muted">
                        {move || match resolved.get() {
                            None => "Image manifests: asking the server…".to_string(),
                            Some(Err(e)) => format!("Image manifests: none ({e}); the policy keeps what image names say."),
                            Some(Ok(m)) => format!("Image manifests: {} image(s) resolved by the server, answered to the OCI capability.", m.len()),
                        }}
                    </p>
                    <HostLists lists manifests=host.manifests.clone() configs=host.configs.clone()/>
                    <ol class="admission-results">{rows}</ol>
                    <NotSent skipped/>
                }
            })}
        </section>
    }
}

/// The pasted objects the policy's rules do not select: the API server never calls the policy for them.
#[component]
fn NotSent(skipped: Vec<Pasted>) -> impl IntoView {
    (!skipped.is_empty()).then(|| view! {
        <div class="not-sent">
            <p class="muted">"Not sent to the policy: its rules ("<code>"rules[]"</code>" of its metadata: apiGroups, apiVersions, resources) do not match these objects' group, version and kind, so the API server would never call it for them, as policy-server would never see them."</p>
            <ul>
                {skipped.into_iter().map(|o| view! {
                    <li class="not-sent-object" data-object=o.label.clone() data-gvk=o.gvk()>
                        {o.label.clone()}" ("<code>{o.gvk()}</code>")"
                    </li>
                }).collect_view()}
            </ul>
        </div>
    })
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
        <dl class="module-identity" data-sha256=identity.sha256.clone() data-size=identity.size.to_string()
            data-version=identity.version.clone()>
            <dt>"Module"</dt><dd>{identity.source.clone()}</dd>
            <dt>"Size"</dt><dd>{format!("{} bytes", identity.size)}</dd>
            <dt>"SHA-256"</dt><dd><code class="sha256">{if identity.sha256.is_empty() { "(needs https or localhost)".to_string() } else { identity.sha256.clone() }}</code></dd>
            <dt>"Version"</dt><dd class="version">{version}</dd>
            <dt>"Protocol"</dt><dd class="protocol">{protocol}</dd>
        </dl>
    }
}

/// The lists the page answers the guest's `list_resources_all` with (for the record and the parity test).
#[component]
fn HostLists(
    lists: BTreeMap<String, String>,
    manifests: BTreeMap<String, String>,
    configs: BTreeMap<String, String>,
) -> impl IntoView {
    view! {
        <details class="host-lists">
            <summary>"Host answers"</summary>
            {lists.into_iter().map(|(key, text)| view! {
                <pre class="host-list" data-list=key.clone()>{text}</pre>
            }).collect_view()}
            {manifests.into_iter().map(|(image, text)| view! {
                <pre class="host-manifest" data-image=image.clone()>{text}</pre>
            }).collect_view()}
            {configs.into_iter().map(|(image, text)| view! {
                <pre class="host-config" data-image=image.clone()>{text}</pre>
            }).collect_view()}
        </details>
    }
}

/// One object: verdict, message, warnings, patch and patched object, and the raw exchange.
#[component]
fn ExchangeRow(exchange: Exchange, mutating: RwSignal<bool>) -> impl IntoView {
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
    let body = move || {
        match &raw {
        Err(e) => view! { <p class="verdict error" data-verdict="error">"The module failed: "{e.clone()}</p> }.into_any(),
        Ok(text) => match read_answer(text, &object, mutating.get()) {
            Err(e) => view! { <p class="verdict error" data-verdict="error">{e}</p> }.into_any(),
            Ok(answer) => {
                let response = serde_json::to_string_pretty(&answer.response).unwrap_or_default();
                let warnings = answer.warnings.clone();
                let (class, head, detail) = match &answer.verdict {
                    Verdict::Allowed => ("allowed", "Allowed".to_string(), None),
                    Verdict::Denied(m) => ("denied", "Denied".to_string(), Some(m.clone())),
                    Verdict::Mutated { .. } => ("mutated", "Allowed with changes".to_string(), None),
                };
                let mutation = match answer.verdict {
                    Verdict::Mutated { patch, object } => Some(view! {
                        <h4>"JSONPatch"</h4>
                        <pre class="patch">{serde_json::to_string_pretty(&patch).unwrap_or_default()}</pre>
                        <h4>"Patched object"</h4>
                        <pre class="patched">{to_yaml(&object)}</pre>
                    }),
                    _ => None,
                };
                view! {
                    <p class=format!("verdict {class}") data-verdict=class>{head}</p>
                    {detail.map(|m| view! { <p class="admission-message">{m}</p> })}
                    {(!warnings.is_empty()).then(|| view! {
                        <ul class="admission-warnings">{warnings.into_iter().map(|w| view! { <li class="admission-warning">{w}</li> }).collect_view()}</ul>
                    })}
                    {mutation}
                    <details class="response"><summary>"AdmissionResponse"</summary><pre>{response}</pre></details>
                }.into_any()
            }
        },
    }
    };
    view! {
        <li class="admission-result" data-object=sent.label data-ms=format!("{ms:.3}")>
            <h3>{label}</h3>
            {body}
            <details class="exchange">
                <summary>"AdmissionReview sent, raw exchange"</summary>
                <pre class="review">{review_text}</pre>
                <pre class="payload" data-raw="payload">{payload}</pre>
                <pre class="raw-answer" data-raw="answer">{raw_text}</pre>
            </details>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: nginx\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: w\nhandler: runhcs-wcow-process\n";

    #[test]
    fn only_what_the_policy_selects_is_sent() {
        let objects = pasted(DEPLOYMENT);
        let sent = requests(&objects, &[]).sent;
        let labels: Vec<&str> = sent.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["Deployment/default/web", "RuntimeClass/w"]);
        assert_eq!(sent[0].request["namespace"], "default");
        assert_eq!(sent[0].request["resource"]["resource"], "deployments");
        // Metadata rules that name only pods select nothing here: all three are said not sent.
        let pods = json!({"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]});
        let selection = requests(&objects, &[pods]);
        assert!(selection.sent.is_empty());
        assert_eq!(selection.skipped.len(), 3);
        let all = json!({"apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "operations": ["*"]});
        assert_eq!(requests(&objects, &[all]).sent.len(), 2);
    }

    #[test]
    fn an_api_version_the_rules_do_not_name_is_not_sent() {
        let text = "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: old}\nspec: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: new}\nspec: {}\n";
        let apps_v1 = json!({"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"], "operations": ["CREATE", "UPDATE"]});
        let selection = requests(&pasted(text), &[apps_v1]);
        let sent: Vec<&str> = selection.sent.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(sent, ["Deployment/default/new"]);
        assert_eq!(selection.skipped.len(), 1);
        assert_eq!(selection.skipped[0].label, "Deployment/default/old");
        assert_eq!(selection.skipped[0].gvk(), "apps/v1beta1 Deployment");
        // A rule without apiVersions matches no version (the API server requires the field).
        let unversioned =
            json!({"apiGroups": ["apps"], "resources": ["deployments"], "operations": ["CREATE"]});
        assert!(requests(&pasted(text), &[unversioned]).sent.is_empty());
        // The core group's objects are `v1 Kind`.
        let pod = pasted("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n");
        assert_eq!(pod[0].gvk(), "v1 Pod");
        assert_eq!((pod[0].group.as_str(), pod[0].version.as_str()), ("", "v1"));
    }

    #[test]
    fn settings_text_becomes_json() {
        assert_eq!(settings_json(""), json!({}));
        assert_eq!(
            settings_json("mutate: true\nsupportedBuilds: [\"20348\"]\n"),
            json!({"mutate": true, "supportedBuilds": ["20348"]})
        );
    }

    #[test]
    fn host_answers_lists_only_with_a_context() {
        let none = HostAnswers::for_context(None);
        let ask = r#"{"api_version":"v1","kind":"Node"}"#;
        assert!(
            none.answer("kubewarden", "kubernetes", "list_resources_all", ask)
                .is_err()
        );
        assert_eq!(
            none.answer("kubewarden", "tracing", "log", "{}"),
            Ok(String::new())
        );
        let some = HostAnswers::for_context(Some(&ClusterContext::default()));
        let list: Value = serde_json::from_str(
            &some
                .answer("kubewarden", "kubernetes", "list_resources_all", ask)
                .unwrap(),
        )
        .unwrap();
        assert_eq!(list["items"], json!([]));
        assert!(
            some.answer("kubewarden", "oci", "v1/oci_manifest", "\"nginx\"")
                .is_err()
        );
    }

    #[test]
    fn resolved_images_answer_the_oci_capability_as_the_policy_reads_it() {
        use winplace_policy_wasm::admission::class_from_manifest;
        use winplace_rules::windows::ImageOs;
        let resolved = BTreeMap::from([
            (
                "reg/app:1".to_string(),
                json!({"digest": "sha256:1", "platformsFrom": "index", "platforms": [
                {"os": "linux", "architecture": "amd64"},
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.17763.6414"},
                // os.features are carried: containerd 2.3+ ignores win32k and skips any other.
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.1", "osFeatures": ["sse4"]},
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.26100.1", "osFeatures": ["win32k"]}]}),
            ),
            (
                "reg/one:2".to_string(),
                json!({"digest": "sha256:2", "platformsFrom": "config", "platforms": [
                {"os": "windows", "architecture": "amd64", "osVersion": "10.0.20348.1"}]}),
            ),
        ]);
        let host = HostAnswers::default().with_images(&resolved);
        let ask =
            |op: &str, image: &str| host.answer("kubewarden", "oci", op, &json!(image).to_string());
        let index: Value =
            serde_json::from_str(&ask("v1/oci_manifest", "reg/app:1").unwrap()).unwrap();
        let class = class_from_manifest("reg/app:1", &index, None).unwrap();
        assert_eq!(
            class.os,
            ImageOs::Windows {
                builds: vec![17763, 26100]
            }
        );
        // A single manifest has no platform: the policy then asks for its configuration.
        let manifest: Value =
            serde_json::from_str(&ask("v1/oci_manifest", "reg/one:2").unwrap()).unwrap();
        assert!(manifest.get("manifests").is_none());
        let both: Value =
            serde_json::from_str(&ask("v1/oci_manifest_config", "reg/one:2").unwrap()).unwrap();
        let class = class_from_manifest("reg/one:2", &manifest, both.get("config")).unwrap();
        assert_eq!(
            class.os,
            ImageOs::Windows {
                builds: vec![20348]
            }
        );
        assert!(ask("v1/oci_manifest", "reg/unknown:3").is_err());
    }

    #[test]
    fn images_are_found_at_any_depth() {
        let cron = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"image": "busybox"}], "containers": [{"image": "app"}, {"image": "busybox"}]}}}}}});
        assert_eq!(images_of(&cron), ["app", "busybox"]);
    }

    #[test]
    fn answers_read_as_policy_server_reads_them() {
        let object = json!({"kind": "Pod", "spec": {}});
        let denied = read_answer(
            r#"{"accepted":false,"message":"no","warnings":["w"]}"#,
            &object,
            true,
        )
        .unwrap();
        assert_eq!(denied.verdict, Verdict::Denied("no".into()));
        assert_eq!(denied.response["response"]["status"]["message"], "no");
        assert_eq!(denied.warnings, ["w"]);

        let mutated = r#"{"accepted":true,"mutated_object":{"kind":"Pod","spec":{"nodeSelector":{"kubernetes.io/os":"windows"}}}}"#;
        let answer = read_answer(mutated, &object, true).unwrap();
        let Verdict::Mutated { patch, .. } = &answer.verdict else {
            panic!("{answer:?}")
        };
        assert_eq!(patch[0]["op"], "add");
        assert_eq!(answer.response["response"]["patchType"], "JSONPatch");
        // A validating (non-mutating) policy may not mutate: policy-server rejects.
        let refused = read_answer(mutated, &object, false).unwrap();
        assert_eq!(
            refused.verdict,
            Verdict::Denied(MUTATION_NOT_ALLOWED.into())
        );
        // An unchanged "mutated" object is no mutation.
        let same = read_answer(
            r#"{"accepted":true,"mutated_object":{"kind":"Pod","spec":{}}}"#,
            &object,
            false,
        )
        .unwrap();
        assert_eq!(same.verdict, Verdict::Allowed);
        assert!(read_answer("[]", &object, true).is_err());
    }
}
