//! Static files: the dashboard (with a fallback to index.html for client-side routes) and policy.wasm.

use crate::http::assets::Static;
use crate::state::AppState;
use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// `/`, `/pkg/*`, `/policy.wasm`, `/policy/metadata.yml`, anything else → index.html (client-side
/// routing).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/policy.wasm", get(policy_wasm))
        .route("/policy/metadata.yml", get(policy_metadata))
        .fallback(get(static_file))
}

/// The Kubewarden policy metadata (`static/policy-metadata.yml`).
async fn policy_metadata() -> Response {
    match Static::get("policy-metadata.yml") {
        Some(file) => (
            [(header::CONTENT_TYPE, "application/yaml; charset=utf-8")],
            file.data,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "policy-metadata.yml was not built into this binary",
        )
            .into_response(),
    }
}

async fn policy_wasm() -> Response {
    match Static::get("policy.wasm") {
        Some(file) => (
            [
                (header::CONTENT_TYPE, "application/wasm"),
                (
                    header::CONTENT_DISPOSITION,
                    "attachment; filename=\"policy.wasm\"",
                ),
            ],
            file.data,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "policy.wasm was not built into this binary (run `cargo xtask build`)",
        )
            .into_response(),
    }
}

async fn static_file(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    if let Some(file) = Static::get(path) {
        let mime = mime_guess::from_path(path).first_or_octet_stream();
        return (
            [(header::CONTENT_TYPE, mime.as_ref().to_string())],
            file.data,
        )
            .into_response();
    }
    // Unknown paths with an extension are missing files; others are dashboard routes. A node's or a
    // workload's own URL is a route whatever its last segment holds (`/nodes/ip-10-0-1-5.ec2.internal`).
    let opens_a_row = path.starts_with("nodes/") || path.starts_with("workloads/");
    if !opens_a_row
        && (path
            .rsplit('/')
            .next()
            .is_some_and(|last| last.contains('.'))
            || path.starts_with("api/"))
    {
        return StatusCode::NOT_FOUND.into_response();
    }
    match Static::get("index.html") {
        Some(file) => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            file.data,
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "the dashboard was not built into this binary",
        )
            .into_response(),
    }
}
