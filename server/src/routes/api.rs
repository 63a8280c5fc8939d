//! The JSON API: every answer carries [`Meta`] (source and freshness) next to its data.

use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use winplace_policy::Severity;
use winplace_policy::api::{
    ContextResponse, Meta, NodesResponse, SummaryResponse, WorkloadsResponse,
};
use winplace_policy::audit::{NodeReport, PlacementState};
use winplace_policy::rules::catalog::{self, RULES};
use winplace_policy::view::ClusterView;

/// `/api/...` (except the event stream, which has no request timeout).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/summary", get(summary))
        .route("/api/nodes", get(nodes))
        .route("/api/nodes/{name}", get(node))
        .route("/api/workloads", get(workloads))
        .route("/api/context", get(context))
        .route("/api/rules", get(rules))
        .route("/api/cluster", get(cluster))
}

/// An API error: a status and `{"error": "..."}`.
pub struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

fn bad_request(message: String) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, message)
}

async fn summary(State(state): State<AppState>) -> Json<SummaryResponse> {
    let p = state.published();
    Json(SummaryResponse {
        meta: state.meta(&p),
        summary: p.report.summary.clone(),
    })
}

/// Filters of `GET /api/nodes`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeFilter {
    /// `windows`, `linux` or `unknown`.
    os: Option<String>,
    /// A Windows build (`10.0.20348`).
    build: Option<String>,
}

async fn nodes(
    State(state): State<AppState>,
    Query(filter): Query<NodeFilter>,
) -> Json<NodesResponse> {
    let p = state.published();
    let nodes = p
        .report
        .nodes
        .iter()
        .filter(|n| filter.os.as_ref().is_none_or(|os| &n.os == os))
        .filter(|n| filter.build.is_none() || n.build == filter.build)
        .cloned()
        .collect();
    Json(NodesResponse {
        meta: state.meta(&p),
        nodes,
    })
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
        .ok_or_else(|| ApiError(StatusCode::NOT_FOUND, format!("no node named {name:?}")))?;
    Ok(Json(NodeResponse {
        meta: state.meta(&p),
        node,
    }))
}

/// Filters of `GET /api/workloads`; every given filter must match.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadFilter {
    namespace: Option<String>,
    /// A rule id: workloads with a finding of this rule.
    rule: Option<String>,
    /// `error`, `warning` or `info`: workloads with a finding of this severity.
    severity: Option<String>,
    /// `windows`, `linux`, `any` or `conflict`.
    os: Option<String>,
    /// `fine`, `at-risk` or `misplaced`.
    state: Option<String>,
}

async fn workloads(
    State(state): State<AppState>,
    Query(filter): Query<WorkloadFilter>,
) -> Result<Json<WorkloadsResponse>, ApiError> {
    let severity = filter
        .severity
        .as_deref()
        .map(str::parse::<Severity>)
        .transpose()
        .map_err(bad_request)?;
    let wanted_state = filter
        .state
        .as_deref()
        .map(|s| {
            serde_json::from_value::<PlacementState>(json!(s)).map_err(|_| {
                bad_request(format!(
                    "unknown state {s:?} (expected fine, at-risk or misplaced)"
                ))
            })
        })
        .transpose()?;
    if let Some(rule) = &filter.rule
        && catalog::rule(rule).is_none()
    {
        return Err(bad_request(format!(
            "unknown rule {rule:?} (GET /api/rules lists them)"
        )));
    }
    let p = state.published();
    let workloads = p
        .report
        .workloads
        .iter()
        .filter(|w| {
            filter
                .namespace
                .as_ref()
                .is_none_or(|ns| w.owner.namespace.as_ref() == Some(ns))
        })
        .filter(|w| {
            filter
                .rule
                .as_ref()
                .is_none_or(|r| w.findings.iter().any(|f| &f.rule == r))
        })
        .filter(|w| severity.is_none_or(|s| w.findings.iter().any(|f| f.severity == s)))
        .filter(|w| filter.os.as_ref().is_none_or(|os| &w.os == os))
        .filter(|w| wanted_state.is_none_or(|s| w.state == s))
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

/// The cluster's nodes with their OS, build, taints and pods (the dashboard's first API; kept as is).
async fn cluster(State(state): State<AppState>) -> Json<ClusterView> {
    let p = state.published();
    Json(ClusterView {
        source: state.source().clone(),
        nodes: p.cluster_nodes.clone(),
    })
}
