//! `GET /api/placements`: the gated pods `serve --place` placed or released, newest first, and whether
//! this replica holds the placement Lease (docs/api.md). Without `--place`: `enabled: false` and no
//! placements, so that the dashboard can say so.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use winplace_api::PlacementsResponse;

use crate::state::AppState;

/// `/api/placements`.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/placements", get(placements))
}

async fn placements(State(state): State<AppState>) -> Json<PlacementsResponse> {
    Json(
        state
            .place_report()
            .map(|report| report.response())
            .unwrap_or_default(),
    )
}
