//! One request through the router (`tower::ServiceExt::oneshot`): its status, headers and body. Shared by
//! the router tests (included with `#[path]`).

#![allow(dead_code)]

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;
use winplace::state::AppState;

/// Sends `request` to a router over `state` and reads the whole answer.
pub async fn send(state: &AppState, request: Request<Body>) -> (StatusCode, HeaderMap, Vec<u8>) {
    let response = winplace::http::router::router(state.clone())
        .oneshot(request)
        .await
        .expect("response");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    (status, headers, body)
}
