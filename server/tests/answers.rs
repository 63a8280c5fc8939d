//! The heavy answers under load: built once per published state and shared byte for byte, built under
//! a bound that leaves the probes free, light (counts, pages) and compressed once.

use crate::common::report as fixture;
use crate::common::router;

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use serde_json::Value;
use std::io::Read;
use std::time::Duration;
use winplace::state::{AppState, Timing};
use winplace_rules::ObjectRef;
use winplace_rules::audit::{AuditReport, PlacementState, PodRef};

fn state_with(report: AuditReport) -> AppState {
    let s = AppState::new(winplace::source::demo::info(), Timing::default());
    s.publish_report(report);
    s
}

/// The fixture's report with `extra` more workloads (`w0000`…), alternately at risk and fine, in
/// namespaces `ns0`…`ns4`, each with three pods; and pods on its first node.
fn big_report(extra: usize) -> AuditReport {
    let mut report = fixture::report();
    let template = (*report.workloads[1]).clone();
    for i in 0..extra {
        let mut w = template.clone();
        let ns = format!("ns{}", i % 5);
        w.owner = ObjectRef::new("apps/v1", "Deployment", Some(&ns), &format!("w{i:04}"));
        w.state = if i % 2 == 0 {
            PlacementState::AtRisk
        } else {
            PlacementState::Fine
        };
        w.pods = (0..3)
            .map(|p| PodRef {
                namespace: ns.clone(),
                name: format!("w{i:04}-{p}"),
                node: Some("aks-linux-0".into()),
                phase: "Running".into(),
                state: w.state,
            })
            .collect();
        report.workloads.push(std::sync::Arc::new(w));
    }
    let node = std::sync::Arc::make_mut(&mut report.nodes[2]);
    node.pods = [
        PlacementState::Fine,
        PlacementState::Fine,
        PlacementState::Misplaced,
    ]
    .into_iter()
    .enumerate()
    .map(|(i, state)| PodRef {
        namespace: "shop".into(),
        name: format!("p{i}"),
        node: Some(node.name.clone()),
        phase: "Running".into(),
        state,
    })
    .collect();
    report
}

async fn get_with(state: &AppState, uri: &str, accept: &str) -> (StatusCode, HeaderMap, Vec<u8>) {
    let mut request = Request::get(uri);
    if !accept.is_empty() {
        request = request.header(header::ACCEPT_ENCODING, accept);
    }
    router::send(state, request.body(Body::empty()).expect("request")).await
}

async fn get_json(state: &AppState, uri: &str) -> (StatusCode, Value) {
    let (status, _, body) = get_with(state, uri, "").await;
    (status, serde_json::from_slice(&body).expect("JSON"))
}

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

#[tokio::test]
async fn an_answer_is_built_once_per_revision_and_shared_byte_for_byte() {
    let s = state_with(big_report(50));
    let answers = s.answers();
    let mut bodies = Vec::new();
    for _ in 0..5 {
        let (status, _, body) = get_with(&s, "/api/nodes", "").await;
        assert_eq!(status, StatusCode::OK);
        bodies.push(body);
    }
    assert!(
        bodies.iter().all(|b| b == &bodies[0]),
        "same revision, same bytes"
    );
    assert_eq!(answers.builds(), 1, "five requests, one build");
    // Gzip is the same answer, built with it.
    let (_, headers, gz) = get_with(&s, "/api/nodes", "gzip, br").await;
    assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
    assert_eq!(headers[header::VARY], "accept-encoding");
    assert_eq!(gunzip(&gz), bodies[0]);
    assert_eq!(answers.builds(), 1);
    // Another question is another build; asking it again is not.
    for _ in 0..3 {
        get_with(&s, "/api/nodes?os=windows", "").await;
    }
    assert_eq!(answers.builds(), 2);
    // A new revision is built again, and says so.
    s.publish_report(big_report(51));
    let (_, _, after) = get_with(&s, "/api/nodes", "").await;
    assert_eq!(answers.builds(), 3);
    let revision = |b: &[u8]| {
        serde_json::from_slice::<Value>(b).expect("JSON")["meta"]["freshness"]["revision"].clone()
    };
    assert_eq!(
        (revision(&bodies[0]), revision(&after)),
        (1.into(), 2.into())
    );
}

#[tokio::test]
async fn a_client_that_refuses_gzip_gets_the_json_uncompressed() {
    let s = state_with(big_report(200));
    let (_, headers, body) = get_with(&s, "/api/workloads?state=all", "br").await;
    // Not re-compressed per request by the router's layer either.
    assert!(headers.get(header::CONTENT_ENCODING).is_none());
    let json: Value = serde_json::from_slice(&body).expect("plain JSON");
    assert_eq!(json["total"], 203);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probes_answer_while_heavy_requests_wait_for_the_build_gate() {
    let s = state_with(big_report(500));
    let gate = s.answers().gate();
    let permits = u32::try_from(s.answers().build_permits()).expect("permits");
    // Hold every build permit: heavy requests that miss the cache now wait, in flight.
    let held = gate.acquire_many(permits).await.expect("gate");
    let heavy: Vec<_> = [
        "/api/nodes",
        "/api/workloads",
        "/api/workloads?state=all&limit=1000",
        "/api/summary",
        "/api/context",
        "/api/nodes?os=linux",
    ]
    .into_iter()
    .flat_map(|uri| std::iter::repeat_n(uri, 4))
    .map(|uri| {
        let s = s.clone();
        tokio::spawn(async move { get_with(&s, uri, "gzip").await.0 })
    })
    .collect();
    tokio::task::yield_now().await;
    // The probes do not wait for them (the timeout only turns a hang into a failure).
    for (uri, want) in [("/healthz", "ok"), ("/readyz", "ready")] {
        let (status, _, body) =
            tokio::time::timeout(Duration::from_secs(20), get_with(&s, uri, "gzip"))
                .await
                .unwrap_or_else(|_| panic!("{uri} waited for the heavy requests"));
        assert_eq!((status, body.as_slice()), (StatusCode::OK, want.as_bytes()));
    }
    assert!(
        heavy.iter().all(|h| !h.is_finished()),
        "the heavy requests are still in flight"
    );
    drop(held);
    for h in heavy {
        assert_eq!(h.await.expect("request"), StatusCode::OK);
    }
    // 24 requests, 6 questions: each built once.
    assert_eq!(s.answers().builds(), 6);
}

#[tokio::test]
async fn node_rows_count_pods_and_the_node_lists_them() {
    let s = state_with(big_report(0));
    let (_, nodes) = get_json(&s, "/api/nodes").await;
    let linux = nodes["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["name"] == "aks-linux-0")
        .expect("aks-linux-0");
    assert_eq!(
        linux["pods"],
        serde_json::json!({"fine": 2, "atRisk": 0, "misplaced": 1})
    );
    assert_eq!(linux["state"], "misplaced");
    assert!(linux.get("labels").is_none(), "labels come with the node");
    let (_, node) = get_json(&s, "/api/nodes/aks-linux-0").await;
    assert_eq!(node["node"]["pods"].as_array().map(Vec::len), Some(3));
    assert_eq!(node["node"]["labels"]["kubernetes.io/os"], "linux");
}

fn owner_names(page: &Value) -> Vec<String> {
    page["workloads"]
        .as_array()
        .expect("workloads")
        .iter()
        .map(|w| w["owner"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn workloads_come_in_pages_worst_first_with_the_filters_choices() {
    let s = state_with(big_report(500));
    // The default: misplaced first, then at risk, by owner; 200 rows.
    let (status, first) = get_json(&s, "/api/workloads?state=problems").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        first["total"], 252,
        "payment-gateway, cart-api and 250 at risk"
    );
    assert_eq!(first["offset"], 0);
    let names = owner_names(&first);
    assert_eq!(names.len(), winplace_api::DEFAULT_PAGE);
    // By owner: namespace ns0 comes before shop.
    assert_eq!(&names[..3], ["payment-gateway", "w0000", "w0010"]);
    assert_eq!(first["workloads"][0]["pods"]["misplaced"], 1);
    assert!(
        first["workloads"][0]["pods"].is_object(),
        "pods counted, not listed"
    );
    // The next page starts where the first ended; the pages cover every match once.
    let (_, second) = get_json(&s, "/api/workloads?state=problems&offset=200&limit=200").await;
    let rest = owner_names(&second);
    assert_eq!(rest.len(), 52);
    assert_eq!(rest.last().map(String::as_str), Some("cart-api"));
    assert_eq!(second["offset"], 200);
    let (_, all) = get_json(&s, "/api/workloads?state=problems&limit=1000").await;
    assert_eq!(owner_names(&all), [names, rest].concat());
    // Filters and pages combine; past the end is an empty page, with the total.
    let (_, ns) = get_json(
        &s,
        "/api/workloads?namespace=ns3&state=all&offset=90&limit=20",
    )
    .await;
    assert_eq!(ns["total"], 100);
    assert_eq!(
        owner_names(&ns),
        [
            "w0403", "w0413", "w0423", "w0433", "w0443", "w0453", "w0463", "w0473", "w0483",
            "w0493"
        ]
    );
    let (_, beyond) = get_json(&s, "/api/workloads?offset=5000").await;
    assert_eq!(
        (beyond["total"].as_u64(), owner_names(&beyond).len()),
        (Some(503), 0)
    );
    // The filter's choices are those of every workload, whatever the filter.
    let (_, narrow) = get_json(&s, "/api/workloads?namespace=ns1").await;
    for page in [&first, &narrow] {
        assert_eq!(
            page["namespaces"],
            serde_json::json!([
                "kube-system",
                "ns0",
                "ns1",
                "ns2",
                "ns3",
                "ns4",
                "payments",
                "shop"
            ])
        );
        assert_eq!(
            page["rules"],
            serde_json::json!(["linux-pod-without-os-selector", "pod-pending-placement"])
        );
    }
}

#[tokio::test]
async fn a_bad_page_is_a_400_that_names_it() {
    let s = state_with(big_report(0));
    for (uri, word) in [
        ("/api/workloads?limit=0", "limit"),
        ("/api/workloads?limit=1001", "limit"),
        ("/api/workloads?limit=ten", "limit"),
        ("/api/workloads?offset=-1", "offset"),
    ] {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(
            body["error"].as_str().is_some_and(|e| e.contains(word)),
            "{uri}: {body}"
        );
    }
}
