//! The API's one error type, [`ApiError`]: every error under `/api/` is `{"error": "<message>"}` with
//! its status, whoever produced it (a handler, an extractor's rejection, the router's 404 and 405, the
//! timeout and body-limit layers).

use axum::Json;
use axum::extract::Request;
use axum::http::{StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An API error: a status and a message a client can show.
///
/// ```
/// use axum::response::IntoResponse;
/// let response = winplace::http::error::ApiError::not_found("no node named \"x\"").into_response();
/// assert_eq!(response.status(), axum::http::StatusCode::NOT_FOUND);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for a person.
    pub message: String,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 400: the request cannot be answered as asked.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: what was asked for does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

/// The answer to an `/api/` path no route has.
pub async fn unknown_endpoint(uri: Uri) -> ApiError {
    ApiError::not_found(format!(
        "no API endpoint {} (docs/api.md lists them)",
        uri.path()
    ))
}

/// Refuses any query string: for endpoints that take no parameters (a typo must not pass silently).
pub async fn no_query(request: Request, next: Next) -> Response {
    match request.uri().query() {
        Some(q) if !q.is_empty() => {
            let names: Vec<&str> = q
                .split('&')
                .filter_map(|pair| pair.split('=').next())
                .filter(|n| !n.is_empty())
                .collect();
            ApiError::bad_request(format!(
                "{} takes no query parameters (got {})",
                request.uri().path(),
                names.join(", ")
            ))
            .into_response()
        }
        _ => next.run(request).await,
    }
}

/// Largest error body read back to be wrapped as JSON (rejection messages are short).
const MAX_ERROR_BODY: usize = 16 * 1024;

/// Turns every non-JSON error answer under `/api/` into an [`ApiError`] body: the text it had as the
/// message, or the status's reason when it had none (the router's 404 and 405, the timeout's 408).
pub async fn json_errors(request: Request, next: Next) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !api || !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let allow = response.headers().get(header::ALLOW).cloned();
    let text = match axum::body::to_bytes(response.into_body(), MAX_ERROR_BODY).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let reason = status.canonical_reason().unwrap_or("error").to_lowercase();
    let message = if text.is_empty() {
        format!("{reason}: {method} {path}")
    } else {
        text
    };
    let mut out = ApiError::new(status, message).into_response();
    // Keep what a client needs to retry correctly (405's Allow).
    if let Some(allow) = allow {
        out.headers_mut().insert(header::ALLOW, allow);
    }
    out
}
