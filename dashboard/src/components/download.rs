//! Offering text as a file to save: a Blob behind a temporary object URL, clicked through an anchor.

use leptos::prelude::set_timeout;
use std::time::Duration;
use wasm_bindgen::{JsCast, JsValue};

/// Offers `text` as a file named `name` of media type `mime` (`text/csv`); `Err` says why the browser
/// refused.
pub fn download_text(name: &str, mime: &str, text: &str) -> Result<(), String> {
    let fail = |e: JsValue| {
        e.as_string()
            .unwrap_or_else(|| "the browser refused the download".into())
    };
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options).map_err(fail)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(fail)?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document to download from")?;
    let anchor = document
        .create_element("a")
        .map_err(fail)?
        .unchecked_into::<web_sys::HtmlAnchorElement>();
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    // Revoked after the click has been handled, not before.
    set_timeout(
        move || {
            let _ = web_sys::Url::revoke_object_url(&url);
        },
        Duration::from_secs(10),
    );
    Ok(())
}
