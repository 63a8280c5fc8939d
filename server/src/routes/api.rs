//! The JSON API.

use crate::state::AppState;
use axum::{Json, Router, extract::State, routing::get};
use std::sync::Arc;
use winplace_policy::view::ClusterView;

/// `/api/...`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/cluster", get(cluster))
}

/// The cluster's nodes with their OS, build, taints and pods.
async fn cluster(State(state): State<AppState>) -> Json<Arc<ClusterView>> {
    Json(state.cluster())
}
