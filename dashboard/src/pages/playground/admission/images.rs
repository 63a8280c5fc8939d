//! Image manifests for the OCI host capability, as the server's registry client reads them
//! (`GET /api/images/resolve`, `serve --resolve-images`): asked only when the user opts in, so that the
//! playground stays offline otherwise.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde_json::Value;

use super::selection::{Pasted, images_of, selects};

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

/// The images of the objects the policy evaluates (each once), resolved by the server once `ask` is on;
/// `Err("not asked")` until then.
pub fn resolved_images(
    objects: Memo<Vec<Pasted>>,
    ask: RwSignal<bool>,
) -> LocalResource<Result<BTreeMap<String, Value>, String>> {
    let images = Memo::new(move |_| {
        if !ask.get() {
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
    LocalResource::new(move || {
        let (asked, images) = (ask.get(), images.get());
        async move {
            if asked {
                resolve_images(images).await
            } else {
                Err("not asked".to_string())
            }
        }
    })
}

/// The opt-in to ask the server, and what it answered.
#[component]
pub fn ImageResolution(
    ask: RwSignal<bool>,
    resolved: LocalResource<Result<BTreeMap<String, Value>, String>>,
) -> impl IntoView {
    view! {
        <label class="ask-images">
            <input
                type="checkbox"
                id="admission-resolve"
                prop:checked=move || ask.get()
                on:change=move |ev| ask.set(event_target_checked(&ev))
            />
            " Ask the server for the images' manifests ("
            <code>"serve --resolve-images"</code>
            ")"
        </label>
        <p class="image-resolution muted">
            {move || match resolved.get() {
                None => "Image manifests: asking the server…".to_string(),
                Some(Err(e)) => {
                    format!("Image manifests: none ({e}); the policy keeps what image names say.")
                }
                Some(Ok(m)) => {
                    format!(
                        "Image manifests: {} image(s) resolved by the server, answered to the OCI capability (the policy asks for them only with registryAware: true in its settings).",
                        m.len(),
                    )
                }
            }}
        </p>
    }
}
