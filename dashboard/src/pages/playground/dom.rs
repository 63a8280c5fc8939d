//! Browser calls the playground needs: timers, the clock, the clipboard, downloads, the URL fragment.

use std::time::Duration;

use leptos::prelude::*;
use web_sys::wasm_bindgen::{JsCast, JsValue};

/// Runs the function given to it `delay` after the last call (earlier calls are dropped).
///
/// The pending timer belongs to the calling component (a `StoredValue`), not to a global.
pub fn debouncer(delay: Duration) -> impl Fn(Box<dyn FnOnce()>) + Copy + Send + Sync + 'static {
    let pending: StoredValue<Option<TimeoutHandle>> = StoredValue::new(None);
    move |f: Box<dyn FnOnce()>| {
        if let Some(h) = pending.get_value() {
            h.clear();
        }
        let handle = set_timeout_with_handle(
            move || {
                pending.set_value(None);
                f();
            },
            delay,
        )
        .ok();
        pending.set_value(handle);
    }
}

/// Milliseconds on the page's monotonic clock (`performance.now()`).
pub fn now_ms() -> f64 {
    window().performance().map_or(0.0, |p| p.now())
}

/// The URL fragment, with its `#` (empty when there is none).
pub fn fragment() -> String {
    window().location().hash().unwrap_or_default()
}

/// Replaces the URL fragment without adding a history entry or notifying the router.
pub fn replace_fragment(fragment: &str) {
    let location = window().location();
    let base = format!(
        "{}{}",
        location.pathname().unwrap_or_default(),
        location.search().unwrap_or_default()
    );
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(
            &history.state().unwrap_or(JsValue::NULL),
            "",
            Some(&format!("{base}{fragment}")),
        );
    }
}

/// The page's address (with the fragment).
pub fn href() -> String {
    window().location().href().unwrap_or_default()
}

/// Copies `text` to the clipboard; `Err` says why it could not.
pub async fn copy_text(text: &str) -> Result<(), String> {
    let promise = window().navigator().clipboard().write_text(text);
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| {
            e.as_string()
                .unwrap_or_else(|| "the browser refused the clipboard".into())
        })
}

/// The file chosen in the `<input type="file">` that fired `ev`.
pub fn chosen_file(ev: &leptos::ev::Event) -> Option<web_sys::File> {
    ev.target()?
        .dyn_into::<web_sys::HtmlInputElement>()
        .ok()?
        .files()?
        .get(0)
}

/// The bytes of a file the user chose.
pub async fn file_bytes(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("{}: cannot read the file: {e:?}", file.name()))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}
