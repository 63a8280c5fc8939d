//! Liveness.

use crate::state::AppState;
use axum::{Router, routing::get};

/// `GET /healthz`.
pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(|| async { "ok" }))
}
