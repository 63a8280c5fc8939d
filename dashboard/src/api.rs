//! Calls to the server's JSON API (types from `winplace_rules::api`, shared with the server).

use serde::de::DeserializeOwned;
use winplace_api::{NodesResponse, SummaryResponse, WorkloadsResponse};

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

/// `GET /api/nodes`.
pub async fn nodes() -> ApiResult<NodesResponse> {
    get_json("/api/nodes").await
}

/// `GET /api/workloads` (every workload; the page filters locally so that filters answer instantly).
pub async fn workloads() -> ApiResult<WorkloadsResponse> {
    get_json("/api/workloads").await
}

/// Percent-encodes a path segment or query value.
pub fn encode(text: &str) -> String {
    String::from(js_sys::encode_uri_component(text))
}
