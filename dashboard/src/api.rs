//! Calls to the server's JSON API (types from `winplace_rules::api`, shared with the server).

use serde::de::DeserializeOwned;
use winplace_api::{
    IncidentsResponse, NodeResponse, NodesResponse, PlacementsResponse, SummaryResponse,
    WorkloadFilter, WorkloadResponse, WorkloadsResponse,
};
use winplace_rules::ObjectRef;

/// What a failed call says to the user.
pub type ApiResult<T> = Result<T, String>;

/// `GET url` and decode its JSON body.
async fn get_json<T: DeserializeOwned>(url: &str) -> ApiResult<T> {
    let response = gloo_net::http::Request::get(url)
        .send()
        .await
        .map_err(|e| format!("cannot reach the server: {e}"))?;
    if !response.ok() {
        return Err(format!(
            "the server answered {} for {url}",
            response.status()
        ));
    }
    response
        .json::<T>()
        .await
        .map_err(|e| format!("unexpected answer from the server for {url}: {e}"))
}

/// `GET /api/summary`.
pub async fn summary() -> ApiResult<SummaryResponse> {
    get_json("/api/summary").await
}

/// `GET /api/incidents`: what is failing now, explained.
pub async fn incidents() -> ApiResult<IncidentsResponse> {
    get_json("/api/incidents").await
}

/// `GET /api/nodes`: every node as a light row (its pods counted by state).
pub async fn nodes() -> ApiResult<NodesResponse> {
    get_json("/api/nodes").await
}

/// `GET /api/nodes/{name}`: one node with its labels, nodeInfo, pods and findings.
pub async fn node(name: String) -> ApiResult<NodeResponse> {
    get_json(&format!("/api/nodes/{}", encode(&name))).await
}

/// `GET /api/workloads?…`: the page of workloads the filter asks for, filtered and ordered by the server.
pub async fn workloads(filter: WorkloadFilter) -> ApiResult<WorkloadsResponse> {
    let query: Vec<String> = filter
        .query_pairs()
        .into_iter()
        .map(|(k, v)| format!("{k}={}", encode(&v)))
        .collect();
    get_json(&format!("/api/workloads?{}", query.join("&"))).await
}

/// `GET /api/workloads/{namespace}/{kind}/{name}`: one workload opened, with its findings (the first
/// page), images and incidents.
pub async fn workload(owner: ObjectRef) -> ApiResult<WorkloadResponse> {
    let namespace = owner.namespace.unwrap_or_default();
    get_json(&format!(
        "/api/workloads/{}/{}/{}",
        encode(&namespace),
        encode(&owner.kind),
        encode(&owner.name)
    ))
    .await
}

/// `GET /api/placements`: what `serve --place` placed and how.
pub async fn placements() -> ApiResult<PlacementsResponse> {
    get_json("/api/placements").await
}

/// Percent-encodes a path segment or query value.
pub fn encode(text: &str) -> String {
    String::from(js_sys::encode_uri_component(text))
}
