//! Calls to the server's JSON API.

use winplace_policy::view::ClusterView;

/// `GET /api/cluster`.
pub async fn fetch_cluster() -> Result<ClusterView, String> {
    let response = gloo_net::http::Request::get("/api/cluster")
        .send()
        .await
        .map_err(|e| format!("cannot reach the server: {e}"))?;
    if !response.ok() {
        return Err(format!("the server answered {}", response.status()));
    }
    response
        .json::<ClusterView>()
        .await
        .map_err(|e| format!("unexpected answer from the server: {e}"))
}
