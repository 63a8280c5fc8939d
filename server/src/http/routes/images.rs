//! `GET /api/images/resolve?ref=…`: what an image's registry says about its platforms, and what that
//! means for placement (the playground asks it for pasted images when it runs against a server).
//! Answers only when the server resolves images (`winplace serve --resolve-images`).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use winplace_rules::windows::{ImageClass, classify_image};

use crate::registry::{Platform, PlatformSource, ResolveError};
use crate::state::AppState;

/// `/api/images/...`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/images/resolve", get(resolve))
}

/// The query: `ref`, an image reference as written in a pod.
#[derive(Debug, Deserialize)]
pub struct ResolveQuery {
    /// The image reference.
    #[serde(rename = "ref")]
    pub reference: String,
}

/// The answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolveResponse {
    /// The reference asked about.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The digest of the index or manifest the reference names.
    pub digest: String,
    /// Where the platforms were read: `index` or `config`.
    pub platforms_from: PlatformSource,
    /// Every platform the image is built for.
    pub platforms: Vec<Platform>,
    /// What the manifest means for placement (`None` when it names neither Linux nor Windows).
    pub manifest: Option<ImageClass>,
    /// What the name alone says (settings' image rules, the tag tables).
    pub by_name: ImageClass,
}

fn error(status: StatusCode, message: String, reason: &str) -> Response {
    (status, Json(json!({"error": message, "reason": reason}))).into_response()
}

async fn resolve(
    State(state): State<AppState>,
    query: Result<Query<ResolveQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(query)) = query else {
        return error(
            StatusCode::BAD_REQUEST,
            "the query needs `ref`, an image reference".into(),
            "invalid",
        );
    };
    let Some(resolver) = state.image_resolver() else {
        return error(
            StatusCode::NOT_FOUND,
            "image resolution is off: start the server with --resolve-images".into(),
            "off",
        );
    };
    let by_name = classify_image(&query.reference, &[]);
    match resolver.resolve(&query.reference).await {
        Ok(facts) => Json(ResolveResponse {
            manifest: facts.class(&query.reference),
            reference: query.reference,
            digest: facts.digest,
            platforms_from: facts.source,
            platforms: facts.platforms,
            by_name,
        })
        .into_response(),
        Err(e) => {
            let status = match &e {
                ResolveError::InvalidReference(_) => StatusCode::BAD_REQUEST,
                ResolveError::NotFound => StatusCode::NOT_FOUND,
                ResolveError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
                _ => StatusCode::BAD_GATEWAY,
            };
            error(status, format!("{}: {e}", query.reference), e.kind())
        }
    }
}
