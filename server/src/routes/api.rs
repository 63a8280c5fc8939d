//! The JSON API: every answer carries [`Meta`] (source and freshness) next to its data.

pub use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde::Serialize;
use winplace_api::{
    ContextResponse, Meta, NodeFilter, NodesResponse, SummaryResponse, WorkloadFilter,
    WorkloadsResponse,
};
use winplace_rules::audit::NodeReport;
use winplace_rules::rules::catalog::{self, RULES};

/// `/api/...` (except the event stream, which has no request timeout); any other `/api/` path is a
/// JSON 404.
pub fn router() -> Router<AppState> {
    // Endpoints without parameters refuse a query string; the filtered ones refuse unknown
    // parameters through their filter types.
    let without_parameters = Router::new()
        .route("/api/summary", get(summary))
        .route("/api/nodes/{name}", get(node))
        .route("/api/context", get(context))
        .route("/api/rules", get(rules))
        .route_layer(axum::middleware::from_fn(crate::error::no_query));
    Router::new()
        .route("/api/nodes", get(nodes))
        .route("/api/workloads", get(workloads))
        .merge(without_parameters)
        .route("/api/{*rest}", any(crate::error::unknown_endpoint))
}

fn bad_request(message: String) -> ApiError {
    ApiError::bad_request(message)
}

/// The query's filters, or a JSON 400 that names the bad parameter.
fn filter<T>(query: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    query
        .map(|Query(filter)| filter)
        .map_err(|rejection| bad_request(rejection.body_text()))
}

async fn summary(State(state): State<AppState>) -> Json<SummaryResponse> {
    let p = state.published();
    Json(SummaryResponse {
        meta: state.meta(&p),
        summary: p.report.summary.clone(),
    })
}

async fn nodes(
    State(state): State<AppState>,
    query: Result<Query<NodeFilter>, QueryRejection>,
) -> Result<Json<NodesResponse>, ApiError> {
    let filter = filter(query)?;
    let p = state.published();
    let nodes = p
        .report
        .nodes
        .iter()
        .filter(|n| filter.accepts(n))
        .cloned()
        .collect();
    Ok(Json(NodesResponse {
        meta: state.meta(&p),
        nodes,
    }))
}

/// `GET /api/nodes/{name}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeResponse {
    /// Source and freshness.
    pub meta: Meta,
    /// The node with its pods and findings.
    pub node: NodeReport,
}

async fn node(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<NodeResponse>, ApiError> {
    let p = state.published();
    let node = p
        .report
        .nodes
        .iter()
        .find(|n| n.name == name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("no node named {name:?}")))?;
    Ok(Json(NodeResponse {
        meta: state.meta(&p),
        node,
    }))
}

async fn workloads(
    State(state): State<AppState>,
    query: Result<Query<WorkloadFilter>, QueryRejection>,
) -> Result<Json<WorkloadsResponse>, ApiError> {
    let filter = filter(query)?;
    filter.validate().map_err(|e| bad_request(e.to_string()))?;
    let p = state.published();
    let workloads = p
        .report
        .workloads
        .iter()
        .filter(|w| filter.accepts(w))
        .cloned()
        .collect();
    Ok(Json(WorkloadsResponse {
        meta: state.meta(&p),
        workloads,
    }))
}

async fn context(State(state): State<AppState>) -> Json<ContextResponse> {
    let p = state.published();
    Json(ContextResponse {
        meta: state.meta(&p),
        context: p.context.clone(),
    })
}

/// The catalogue, as `winplace rules --format json` prints it.
async fn rules() -> Json<serde_json::Value> {
    let rows: Vec<serde_json::Value> = RULES
        .iter()
        .map(|r| {
            let mut row = catalog::rule_json(r);
            row["familyTitle"] = r.family.title().into();
            row
        })
        .collect();
    Json(serde_json::Value::Array(rows))
}
