//! The dashboard and policy.wasm, embedded so that one file deploys.

use rust_embed::RustEmbed;

/// `static/` as the build left it: index.html, CSS, the dashboard's wasm in `pkg/`, `policy.wasm`.
#[derive(RustEmbed)]
#[folder = "../static"]
pub struct Static;
