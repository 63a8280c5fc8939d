//! The JSON API: every answer carries [`Meta`] (source and freshness) next to its data.

pub use crate::http::error::ApiError;
use crate::state::AppState;
use crate::state::answers::Views;
use crate::state::published::Published;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::{any, get};
use axum::{Json, Router};
use winplace_api::{
    ContextResponse, IncidentsResponse, MAX_INCIDENTS, Meta, NodeFilter, NodeResponse, NodeRow,
    NodesResponse, SummaryResponse, WorkloadDetails, WorkloadFilter, WorkloadResponse, WorkloadRow,
    WorkloadsResponse,
};
use winplace_rules::catalog::{self, RULES};

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
        .route("/api/incidents", get(incidents))
        .route_layer(axum::middleware::from_fn(crate::http::error::no_query));
    Router::new()
        .route("/api/nodes", get(nodes))
        .route("/api/workloads", get(workloads))
        .route("/api/workloads/{namespace}/{kind}/{name}", get(workload))
        .merge(without_parameters)
        .route("/api/{*rest}", any(crate::http::error::unknown_endpoint))
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

/// The shared answer to `key`, built by `build` when this state has not answered it yet.
async fn answer<F>(
    state: &AppState,
    headers: &HeaderMap,
    key: String,
    build: F,
) -> Result<Response, ApiError>
where
    F: FnOnce(&Published, Meta, &Views) -> serde_json::Result<Vec<u8>> + Send + 'static,
{
    let published = state.published();
    let meta = state.meta(&published);
    let answer = state
        .answers()
        .get(published, meta, key, build)
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    Ok(answer.respond(headers))
}

async fn summary(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    answer(&state, &headers, "summary".into(), |p, meta, _| {
        serde_json::to_vec(&SummaryResponse {
            meta,
            summary: p.report.summary.clone(),
        })
    })
    .await
}

async fn nodes(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<NodeFilter>, QueryRejection>,
) -> Result<Response, ApiError> {
    let filter = filter(query)?;
    let key = format!("nodes {filter:?}");
    answer(&state, &headers, key, move |p, meta, _| {
        let mut nodes: Vec<NodeRow> = p
            .report
            .nodes
            .iter()
            .filter(|n| filter.accepts(n))
            .map(|n| NodeRow::of(n))
            .collect();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        serde_json::to_vec(&NodesResponse { meta, nodes })
    })
    .await
}

/// One node in full: small, so built per request.
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
        .map(|n| (**n).clone())
        .ok_or_else(|| ApiError::not_found(format!("no node named {name:?}")))?;
    Ok(Json(NodeResponse {
        meta: state.meta(&p),
        node,
    }))
}

async fn workloads(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<WorkloadFilter>, QueryRejection>,
) -> Result<Response, ApiError> {
    let filter = filter(query)?;
    filter.validate().map_err(|e| bad_request(e.to_string()))?;
    let key = format!("workloads {filter:?}");
    answer(&state, &headers, key, move |p, meta, views| {
        let index = views.workloads(p);
        let (offset, limit) = filter.page();
        let mut total = 0;
        let mut page = Vec::new();
        for w in index.order.iter().map(|&i| &p.report.workloads[i]) {
            if !filter.accepts(w) {
                continue;
            }
            if total >= offset && page.len() < limit {
                page.push(WorkloadRow::of(w));
            }
            total += 1;
        }
        serde_json::to_vec(&WorkloadsResponse {
            meta,
            total,
            offset,
            workloads: page,
            namespaces: index.namespaces.clone(),
            rules: index.rules.clone(),
        })
    })
    .await
}

/// The query of `GET /api/workloads/{namespace}/{kind}/{name}`: where its page of findings starts.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingsPage {
    /// Findings to skip (default 0).
    offset: Option<usize>,
}

/// One workload in full (its findings a page at a time, its images and incidents): what an opened row of
/// the workloads page shows. Built per request: one workload's worth.
async fn workload(
    State(state): State<AppState>,
    Path((namespace, kind, name)): Path<(String, String, String)>,
    query: Result<Query<FindingsPage>, QueryRejection>,
) -> Result<Json<WorkloadResponse>, ApiError> {
    let offset = filter(query)?.offset.unwrap_or(0);
    let p = state.published();
    let workload = p
        .report
        .workloads
        .iter()
        .find(|w| {
            w.owner.kind == kind
                && w.owner.name == name
                && w.owner.namespace.as_deref() == Some(namespace.as_str())
        })
        .map(|w| WorkloadDetails::of(w, offset))
        .ok_or_else(|| {
            ApiError::not_found(format!(
                "no workload {kind}/{namespace}/{name} (kind, namespace and name as a row's owner has them)"
            ))
        })?;
    Ok(Json(WorkloadResponse {
        meta: state.meta(&p),
        workload,
    }))
}

/// What is failing now: the report's incidents (the first [`MAX_INCIDENTS`]), with their total.
async fn incidents(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    answer(&state, &headers, "incidents".into(), |p, meta, _| {
        serde_json::to_vec(&IncidentsResponse {
            meta,
            total: p.report.incidents.len(),
            incidents: p
                .report
                .incidents
                .iter()
                .take(MAX_INCIDENTS)
                .cloned()
                .collect(),
        })
    })
    .await
}

async fn context(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    answer(&state, &headers, "context".into(), |p, meta, _| {
        serde_json::to_vec(&ContextResponse {
            meta,
            context: p.context.clone(),
        })
    })
    .await
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
