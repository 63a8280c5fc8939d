//! Every endpoint and header, through the router (`tower::ServiceExt::oneshot`).

use crate::common::report as fixture;
use crate::common::router;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use fixture::report;
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;
use winplace::state::{AppState, Timing};

fn state() -> AppState {
    let s = AppState::new(winplace::source::demo::info(), Timing::default());
    s.publish_report(report());
    s
}

async fn get(state: &AppState, uri: &str) -> (StatusCode, axum::http::HeaderMap, Vec<u8>) {
    router::send(
        state,
        Request::get(uri).body(Body::empty()).expect("request"),
    )
    .await
}

async fn get_json(state: &AppState, uri: &str) -> (StatusCode, Value) {
    let (status, headers, body) = get(state, uri).await;
    assert_eq!(
        headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok()),
        Some("application/json"),
        "{uri}"
    );
    (status, serde_json::from_slice(&body).expect("JSON"))
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|v| {
            v.pointer(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn every_answer_carries_source_and_freshness() {
    let s = state();
    for uri in [
        "/api/summary",
        "/api/nodes",
        "/api/nodes/aks-win22-0",
        "/api/workloads",
        "/api/workloads/shop/Deployment/cart-api",
        "/api/context",
    ] {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(body["meta"]["source"]["kind"], "demo", "{uri}");
        assert_eq!(body["meta"]["freshness"]["synced"], true, "{uri}");
        assert_eq!(body["meta"]["freshness"]["stale"], false, "{uri}");
        assert_eq!(body["meta"]["freshness"]["revision"], 1, "{uri}");
        assert!(
            body["meta"]["freshness"]["lastUpdateMs"].as_u64().is_some(),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn summary_nodes_and_context_have_their_shapes() {
    let s = state();
    let (_, summary) = get_json(&s, "/api/summary").await;
    assert_eq!(summary["summary"]["findings"]["errors"], 1);
    let (_, context) = get_json(&s, "/api/context").await;
    assert!(context["context"]["nodes"].is_array());
    assert!(context["context"]["runtimeClasses"].is_array());
    let (_, node) = get_json(&s, "/api/nodes/aks-win22-0").await;
    assert_eq!(node["node"]["build"], "10.0.20348");
    let (status, missing) = get_json(&s, "/api/nodes/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(
        missing["error"]
            .as_str()
            .is_some_and(|e| e.contains("nope"))
    );
}

#[tokio::test]
async fn node_filters() {
    let s = state();
    let rows: [(&str, &[&str]); 5] = [
        // By name.
        ("/api/nodes", &["aks-linux-0", "aks-win19-0", "aks-win22-0"]),
        ("/api/nodes?os=windows", &["aks-win19-0", "aks-win22-0"]),
        ("/api/nodes?os=linux", &["aks-linux-0"]),
        ("/api/nodes?build=10.0.17763", &["aks-win19-0"]),
        ("/api/nodes?os=linux&build=10.0.17763", &[]),
    ];
    for (uri, want) in rows {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(names(&body["nodes"], "/name"), want, "{uri}");
    }
}

#[tokio::test]
async fn workload_filters() {
    let s = state();
    let rows: [(&str, &[&str]); 10] = [
        (
            "/api/workloads",
            &["payment-gateway", "cart-api", "kube-proxy"],
        ),
        ("/api/workloads?namespace=shop", &["cart-api"]),
        (
            "/api/workloads?rule=pod-pending-placement",
            &["payment-gateway"],
        ),
        ("/api/workloads?severity=warning", &["cart-api"]),
        ("/api/workloads?os=linux", &["kube-proxy"]),
        ("/api/workloads?state=misplaced", &["payment-gateway"]),
        ("/api/workloads?state=at-risk", &["cart-api"]),
        ("/api/workloads?state=fine&os=linux", &["kube-proxy"]),
        (
            "/api/workloads?state=problems",
            &["payment-gateway", "cart-api"],
        ),
        ("/api/workloads?namespace=shop&severity=error", &[]),
    ];
    for (uri, want) in rows {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(names(&body["workloads"], "/owner/name"), want, "{uri}");
    }
}

/// A list row counts what its opened row (`/api/workloads/{namespace}/{kind}/{name}`) lists: findings by
/// severity, their rules, incidents; a huge row's findings come a page at a time.
#[tokio::test]
async fn a_row_counts_what_its_details_list() {
    use std::sync::Arc;
    use winplace_rules::Severity;
    let mut r = report();
    // cart-api: 1,203 findings of three severities and two incidents.
    let mut cart = (*r.workloads[1]).clone();
    for i in 0..1_202 {
        let (rule, severity) = match i % 3 {
            0 => ("windows-build-mismatch", Severity::Error),
            1 => ("linux-pod-without-os-selector", Severity::Warning),
            _ => ("windows-node-untainted", Severity::Info),
        };
        cart.findings.push(Arc::new(fixture::finding(
            rule,
            severity,
            "Deployment",
            "shop",
            "cart-api",
        )));
    }
    for pod in ["cart-api-0", "cart-api-1"] {
        cart.incidents
            .push(Arc::new(winplace_rules::audit::Incident {
                object: format!("Pod/shop/{pod}"),
                workload: "Deployment/shop/cart-api".into(),
                cause: winplace_rules::explain::Cause::BuildMismatch,
                since: None,
                count: 1,
                message: "image build mismatch".into(),
                fix: "use the ltsc2022 tag".into(),
                rule: None,
                sandbox: false,
                meaning: "the image's Windows build is not the node's".into(),
                node: None,
            }));
    }
    r.workloads[1] = Arc::new(cart);
    let s = AppState::new(winplace::source::demo::info(), Timing::default());
    s.publish_report(r);

    let (status, list) = get_json(&s, "/api/workloads?state=all").await;
    assert_eq!(status, StatusCode::OK);
    let rows = list["workloads"].as_array().expect("rows");
    assert_eq!(rows.len(), 3, "{list}");
    for row in rows {
        // The list's rows hold no finding, image or incident, only their counts.
        assert!(row["findings"].is_object(), "{row}");
        assert!(row["incidents"].is_u64(), "{row}");
        assert!(row.get("images").is_none(), "{row}");
        let o = &row["owner"];
        let uri = |offset: usize| {
            format!(
                "/api/workloads/{}/{}/{}?offset={offset}",
                o["namespace"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default(),
                o["name"].as_str().unwrap_or_default()
            )
        };
        // Every page of its findings.
        let mut findings = Vec::new();
        let mut details: Value;
        loop {
            let (status, body) = get_json(&s, &uri(findings.len())).await;
            assert_eq!(status, StatusCode::OK, "{}: {body}", uri(findings.len()));
            assert_eq!(body["meta"]["freshness"]["revision"], 1);
            details = body["workload"].clone();
            assert_eq!(details["findingsOffset"], findings.len());
            let page = details["findings"].as_array().expect("findings").clone();
            assert!(page.len() <= winplace_api::MAX_WORKLOAD_FINDINGS);
            if page.is_empty() {
                break;
            }
            findings.extend(page);
        }
        for key in ["owner", "os", "state", "pods"] {
            assert_eq!(details[key], row[key], "{key}: {row}");
        }
        assert_eq!(details["findingsTotal"], findings.len(), "{row}");
        let count = |severity: &str| {
            findings
                .iter()
                .filter(|f| f["severity"] == severity)
                .count()
        };
        assert_eq!(
            row["findings"],
            serde_json::json!({
                "errors": count("error"),
                "warnings": count("warning"),
                "infos": count("info"),
            }),
            "{row}"
        );
        let mut rules: Vec<&str> = findings.iter().filter_map(|f| f["rule"].as_str()).collect();
        rules.sort();
        rules.dedup();
        assert_eq!(row["rules"], serde_json::json!(rules), "{row}");
        assert_eq!(
            row["incidents"].as_u64(),
            details["incidents"].as_array().map(|i| i.len() as u64),
            "{row}"
        );
    }
    // cart-api's counts, as the fixture made them (its own warning and 1,202 more): three pages.
    let cart = rows
        .iter()
        .find(|r| r["owner"]["name"] == "cart-api")
        .expect("cart-api");
    assert_eq!(
        cart["findings"],
        serde_json::json!({"errors": 401, "warnings": 402, "infos": 400})
    );
    assert_eq!(cart["incidents"], 2);
    let (_, first) = get_json(&s, "/api/workloads/shop/Deployment/cart-api").await;
    assert_eq!(first["workload"]["findingsTotal"], 1_204 - 1);
    assert_eq!(
        first["workload"]["findings"].as_array().map(Vec::len),
        Some(winplace_api::MAX_WORKLOAD_FINDINGS)
    );
    assert_eq!(
        first["workload"]["incidents"][1]["object"],
        "Pod/shop/cart-api-1"
    );
}

#[tokio::test]
async fn bad_filters_are_400_with_a_reason() {
    let s = state();
    for (uri, needle) in [
        ("/api/workloads?severity=fatal", "severity"),
        ("/api/workloads?state=broken", "state"),
        ("/api/workloads?rule=no-such-rule", "rule"),
    ] {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        assert!(
            body["error"].as_str().is_some_and(|e| e.contains(needle)),
            "{uri}: {body}"
        );
    }
    // Unknown query parameters are refused too (a typo must not silently match everything), in JSON.
    let (status, body) = get_json(&s, "/api/workloads?namespce=shop").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("namespce")),
        "{body}"
    );
    let (status, _, _) = get(&s, "/api/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Each error docs/api.md documents, through the router: status, a JSON body and a message naming the
/// cause.
#[tokio::test]
async fn every_documented_error_is_json_with_a_message() {
    let s = state();
    let rows: [(&str, StatusCode, &str); 20] = [
        (
            "/api/workloads?severity=fatal",
            StatusCode::BAD_REQUEST,
            "severity",
        ),
        (
            "/api/workloads?state=broken",
            StatusCode::BAD_REQUEST,
            "state",
        ),
        (
            "/api/workloads?rule=no-such-rule",
            StatusCode::BAD_REQUEST,
            "no-such-rule",
        ),
        ("/api/workloads?os=bogus", StatusCode::BAD_REQUEST, "os"),
        (
            "/api/workloads?namespce=shop",
            StatusCode::BAD_REQUEST,
            "namespce",
        ),
        ("/api/nodes?os=bogus", StatusCode::BAD_REQUEST, "bogus"),
        (
            "/api/nodes?bild=10.0.20348",
            StatusCode::BAD_REQUEST,
            "bild",
        ),
        ("/api/summary?verbose=1", StatusCode::BAD_REQUEST, "verbose"),
        ("/api/context?x", StatusCode::BAD_REQUEST, "x"),
        ("/api/rules?family=os", StatusCode::BAD_REQUEST, "family"),
        (
            "/api/nodes/aks-win22-0?pods=1",
            StatusCode::BAD_REQUEST,
            "pods",
        ),
        ("/api/nodes/nope", StatusCode::NOT_FOUND, "nope"),
        (
            "/api/workloads/shop/Deployment/nope",
            StatusCode::NOT_FOUND,
            "no workload Deployment/shop/nope",
        ),
        (
            "/api/workloads/shop/Deployment",
            StatusCode::NOT_FOUND,
            "/api/workloads/shop/Deployment",
        ),
        (
            "/api/workloads/shop/Deployment/cart-api?ofset=1",
            StatusCode::BAD_REQUEST,
            "ofset",
        ),
        (
            "/api/workloads/shop/Deployment/cart-api?offset=-1",
            StatusCode::BAD_REQUEST,
            "offset",
        ),
        ("/api/nope", StatusCode::NOT_FOUND, "/api/nope"),
        ("/api/nodes/a/b", StatusCode::NOT_FOUND, "/api/nodes/a/b"),
        ("/api/", StatusCode::NOT_FOUND, "/api/"),
        ("/api/cluster", StatusCode::NOT_FOUND, "/api/cluster"),
    ];
    for (uri, want, needle) in rows {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, want, "{uri}: {body}");
        let message = body["error"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{uri}: {body}");
    }
    // A method the endpoint does not have: 405, JSON, with Allow.
    let response = winplace::http::router::router(s.clone())
        .oneshot(
            Request::post("/api/summary")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(response.headers().contains_key(header::ALLOW));
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("POST")),
        "{body}"
    );
    // Outside /api/, the dashboard's client-side routes still get index.html.
    let (status, _, _) = get(&s, "/nodes").await;
    assert_ne!(status, StatusCode::NOT_FOUND);
}

/// A node's and a workload's own URLs are the dashboard's, whatever their last segment holds (a node
/// named like a file), while a missing file is still a 404.
#[tokio::test]
async fn the_dashboards_links_to_a_row_serve_the_dashboard() {
    let s = state();
    for uri in [
        "/nodes/ip-10-0-1-5.ec2.internal",
        "/workloads/shop/Deployment/web.v2",
        "/workloads/shop/Deployment/web?state=all",
    ] {
        let (status, headers, body) = get(&s, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(
            headers
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok()),
            Some("text/html; charset=utf-8"),
            "{uri}"
        );
        assert!(String::from_utf8_lossy(&body).contains("/boot.js"), "{uri}");
    }
    for uri in [
        "/pkg/no-such-chunk.wasm",
        "/api/nodes/x/y/z.json",
        "/missing.css",
    ] {
        let (status, _, _) = get(&s, uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn rules_are_the_catalogue() {
    let s = state();
    let (status, body) = get_json(&s, "/api/rules").await;
    assert_eq!(status, StatusCode::OK);
    let rules = body.as_array().expect("array");
    assert_eq!(rules.len(), winplace_rules::catalog::RULES.len());
    assert_eq!(rules[0]["id"], winplace_rules::catalog::RULES[0].id);
    assert!(
        rules[0]["helpUri"]
            .as_str()
            .is_some_and(|u| u.starts_with("https://"))
    );
}

#[tokio::test]
async fn the_first_dashboards_cluster_view_is_gone() {
    // `/api/nodes` answers what `/api/cluster` did; the old path must not linger as a second source.
    let (status, _, _) = get(&state(), "/api/cluster").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let fresh = AppState::new(winplace::source::demo::info(), Timing::default());
    let (status, _, body) = get(&fresh, "/healthz").await;
    assert_eq!(
        (status, body.as_slice()),
        (StatusCode::OK, b"ok".as_slice())
    );
    let (status, _, body) = get(&fresh, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(String::from_utf8_lossy(&body).contains("first list"));

    let s = state();
    let (status, _, _) = get(&s, "/readyz").await;
    assert_eq!(status, StatusCode::OK);
    let (status, headers, body) = get(&s, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .is_ok_and(|v| v.starts_with("text/plain; version=0.0.4"))
    );
    let text = String::from_utf8(body).expect("utf-8");
    for line in [
        "# TYPE winplace_audit_duration_seconds histogram",
        "winplace_audit_duration_seconds_bucket{le=\"+Inf\"} ",
        "winplace_objects{kind=\"pod\"} ",
        "winplace_findings{rule=\"pod-pending-placement\",severity=\"error\",namespace=\"payments\"} 1",
        "winplace_findings{rule=\"linux-pod-without-os-selector\",severity=\"warning\",namespace=\"shop\"} 1",
        "winplace_workloads{state=\"misplaced\"} 1",
        "winplace_watch_restarts_total 0",
        "winplace_revision 1",
        "winplace_synced 1",
        "winplace_info{source=\"demo\"",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // Every sample line is `name{labels} value` or `name value`.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let value = l.rsplit(' ').next().unwrap_or("");
        assert!(value.parse::<f64>().is_ok(), "bad sample {l:?}");
    }
}

#[tokio::test]
async fn security_headers_on_every_kind_of_answer() {
    let s = state();
    for uri in [
        "/",
        "/api/summary",
        "/healthz",
        "/metrics",
        "/nodes/aks-win22-0",
        "/api/nope",
    ] {
        let (_, headers, _) = get(&s, uri).await;
        let h = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
        };
        assert_eq!(
            h("content-security-policy"),
            winplace::http::security_headers::CONTENT_SECURITY_POLICY,
            "{uri}"
        );
        assert!(h("content-security-policy").contains("script-src 'self' 'wasm-unsafe-eval'"));
        assert!(h("content-security-policy").contains("frame-ancestors 'none'"));
        assert_eq!(h("x-content-type-options"), "nosniff", "{uri}");
        assert_eq!(h("x-frame-options"), "DENY", "{uri}");
        assert_eq!(h("referrer-policy"), "no-referrer", "{uri}");
        // No other site may load an answer, the API's JSON included, as a resource.
        assert_eq!(h("cross-origin-resource-policy"), "same-origin", "{uri}");
    }
}

/// Issue 29.7: the answers produced outside the handlers (the router's 405, the `Host` check's 421 and
/// 400, a refused event stream's 503) carry the same security headers as the others.
#[tokio::test]
async fn errors_from_every_layer_carry_the_security_headers() {
    let s = state();
    let loopback = winplace::http::hosts::AllowedHosts::for_listen(
        &"127.0.0.1:8080".parse().expect("addr"),
        &[],
    );
    let app = winplace::http::router::router_for(s.clone(), loopback);
    let post = |uri: &str| {
        Request::post(uri)
            .header(header::HOST, "localhost")
            .body(Body::empty())
            .expect("request")
    };
    let mut two_hosts = Request::get("/api/summary")
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .expect("request");
    two_hosts
        .headers_mut()
        .append(header::HOST, "rebind.example".parse().expect("value"));
    let foreign = Request::get("/api/summary")
        .header(header::HOST, "rebind.example")
        .body(Body::empty())
        .expect("request");
    s.event_streams().set_limit(0);
    let events = Request::get("/api/events")
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .expect("request");
    let rows = [
        (post("/api/summary"), StatusCode::METHOD_NOT_ALLOWED),
        (post("/healthz"), StatusCode::METHOD_NOT_ALLOWED),
        (post("/"), StatusCode::METHOD_NOT_ALLOWED),
        (two_hosts, StatusCode::BAD_REQUEST),
        (foreign, StatusCode::MISDIRECTED_REQUEST),
        (events, StatusCode::SERVICE_UNAVAILABLE),
    ];
    for (request, want) in rows {
        let what = format!("{} {}", request.method(), request.uri());
        let response = app.clone().oneshot(request).await.expect("response");
        assert_eq!(response.status(), want, "{what}");
        let headers = response.headers();
        for (name, value) in &winplace::http::security_headers::SECURITY_HEADERS {
            assert_eq!(
                headers.get(name).and_then(|v| v.to_str().ok()),
                Some(*value),
                "{what}: {name}"
            );
        }
    }
}

/// Issue 29.7: two `Host` headers are a 400 (RFC 9112 §3.2), whichever of them would be allowed.
#[tokio::test]
async fn two_host_headers_are_a_bad_request() {
    let s = state();
    let loopback = winplace::http::hosts::AllowedHosts::for_listen(
        &"127.0.0.1:8080".parse().expect("addr"),
        &[],
    );
    let mut request = Request::get("/api/summary")
        .header(header::HOST, "localhost")
        .body(Body::empty())
        .expect("request");
    request
        .headers_mut()
        .append(header::HOST, "localhost".parse().expect("value"));
    let response = winplace::http::router::router_for(s, loopback)
        .oneshot(request)
        .await
        .expect("response");
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("more than one Host header")),
        "{body}"
    );
}

/// Issue 29.6: at most `--max-event-streams` streams at once; past it 503 with `Retry-After`; a place
/// comes back when a stream ends.
#[tokio::test]
async fn event_streams_past_the_limit_are_refused_until_one_ends() {
    let s = state();
    s.event_streams().set_limit(2);
    let open = || async {
        winplace::http::router::router(s.clone())
            .oneshot(
                Request::get("/api/events")
                    .body(Body::empty())
                    .expect("request"),
            )
            .await
            .expect("response")
    };
    let first = open().await;
    let second = open().await;
    assert_eq!(
        (first.status(), second.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    assert_eq!(s.event_streams().open(), 2);
    let refused = open().await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()[header::RETRY_AFTER], "5");
    let body = refused
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("--max-event-streams")),
        "{body}"
    );
    // The client of the first stream goes away: its place is free again.
    drop(first);
    assert_eq!(s.event_streams().open(), 1);
    assert_eq!(open().await.status(), StatusCode::OK);
    drop(second);
}

#[tokio::test]
async fn index_html_has_no_inline_script() {
    // The CSP forbids inline scripts: the dashboard starts from /boot.js.
    let s = state();
    let (status, headers, body) = get(&s, "/").await;
    if status == StatusCode::NOT_FOUND {
        return; // static/ not built into this binary
    }
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .is_ok_and(|v| v.starts_with("text/html"))
    );
    let html = String::from_utf8(body).expect("utf-8");
    assert!(html.contains("<script type=\"module\" src=\"/boot.js\"></script>"));
    let inline = html.split("<script").skip(1).any(|s| !s.contains("src="));
    assert!(!inline, "inline script in index.html");
    let (status, headers, _) = get(&s, "/boot.js").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .is_ok_and(|v| v.contains("javascript"))
    );
}

#[tokio::test]
async fn the_dashboards_modules_and_loaders_are_served_typed_and_compressed() {
    // static/pkg/ as `cargo xtask build` left it: wasm-bindgen's JavaScript, the main module, the chunks
    // the lazy routes are loaded from and the loader that fetches them (xtask/src/split.rs).
    let files: Vec<String> = winplace::http::assets::Static::iter()
        .filter(|path| path.starts_with("pkg/"))
        .map(|path| path.into_owned())
        .collect();
    if files.is_empty() {
        return; // the dashboard was not built into this binary
    }
    let has = |wanted: &dyn Fn(&str) -> bool| files.iter().any(|f| wanted(f));
    assert!(has(&|f| f == "pkg/winplace_dashboard_bg.wasm"), "{files:?}");
    assert!(has(&|f| f == "pkg/__wasm_split.js"), "{files:?}");
    assert!(
        has(&|f| f.starts_with("pkg/split_") && f.contains("playground") && f.ends_with(".wasm")),
        "no playground chunk in {files:?}"
    );
    let s = state();
    for file in &files {
        let (status, headers, body) = router::send(
            &s,
            Request::get(format!("/{file}"))
                .header(header::ACCEPT_ENCODING, "gzip")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{file}");
        let content_type = headers[header::CONTENT_TYPE].to_str().unwrap_or("");
        match file.rsplit('.').next() {
            // instantiateStreaming accepts nothing else.
            Some("wasm") => assert_eq!(content_type, "application/wasm", "{file}"),
            // Module scripts must be served as JavaScript.
            Some("js") => assert!(
                content_type.contains("javascript"),
                "{file}: {content_type}"
            ),
            _ => continue,
        }
        assert_eq!(headers[header::CONTENT_ENCODING], "gzip", "{file}");
        assert_eq!(&body[..2], [0x1f, 0x8b], "{file}: not gzip");
    }
}

#[tokio::test]
async fn large_answers_are_compressed_when_asked() {
    let s = state();
    let response = winplace::http::router::router(s)
        .oneshot(
            Request::get("/api/rules")
                .header(header::ACCEPT_ENCODING, "gzip")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(response.headers()[header::CONTENT_ENCODING], "gzip");
}

#[tokio::test]
async fn request_bodies_over_the_limit_are_refused() {
    let s = state();
    let big = vec![b'x'; winplace::http::router::BODY_LIMIT + 1];
    let response = winplace::http::router::router(s)
        .oneshot(
            Request::get("/api/summary")
                .header(header::CONTENT_LENGTH, big.len())
                .body(Body::from(big))
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&body).expect("a JSON error");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{body}"
    );
}

#[tokio::test]
async fn policy_downloads() {
    let s = state();
    let (status, headers, body) = get(&s, "/policy.wasm").await;
    if status == StatusCode::OK {
        assert_eq!(headers[header::CONTENT_TYPE], "application/wasm");
        assert_eq!(&body[..4], b"\0asm");
    }
    let (status, headers, _) = get(&s, "/policy/metadata.yml").await;
    if status == StatusCode::OK {
        assert!(
            headers[header::CONTENT_TYPE]
                .to_str()
                .is_ok_and(|v| v.starts_with("application/yaml"))
        );
    } else {
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn events_stream_hello_then_changes() {
    let s = state();
    let response = winplace::http::router::router(s.clone())
        .oneshot(
            Request::get("/api/events")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("response");
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    // No compression on the stream, even when asked: events must arrive as they happen.
    assert!(response.headers().get(header::CONTENT_ENCODING).is_none());
    let mut body = response.into_body();
    let mut text = String::new();
    let mut next = async |text: &mut String| {
        let frame = tokio::time::timeout(std::time::Duration::from_secs(30), body.frame())
            .await
            .expect("an event in time")
            .expect("a frame")
            .expect("no error");
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
    };
    next(&mut text).await;
    assert!(
        text.contains("event: hello\ndata: {\"revision\":1}"),
        "{text}"
    );
    s.publish_report(report());
    next(&mut text).await;
    assert!(
        text.contains(
            "event: change\ndata: {\"revision\":2,\"touched\":{\"nodes\":[],\"workloads\":[]}}"
        ),
        "{text}"
    );
    // A client that falls behind (more than 256 unread events) gets one catch-up change for the current
    // revision that touches nothing in particular: refetch everything.
    for _ in 0..300 {
        s.publish_report(report());
    }
    text.clear();
    while !text.contains("\n\n") {
        next(&mut text).await;
    }
    let current = s.published().revision;
    assert!(
        text.starts_with(&format!(
            "event: change\ndata: {{\"revision\":{current},\"touched\":{{\"nodes\":[],\"workloads\":[]}}}}"
        )),
        "{text}"
    );
    // Shutting down ends the stream.
    s.shut_down();
    let end = tokio::time::timeout(std::time::Duration::from_secs(30), body.frame())
        .await
        .expect("the stream ends");
    assert!(end.is_none());
}

#[tokio::test]
async fn the_demo_cluster_tells_its_story_through_the_api() {
    let s = AppState::new(winplace::source::demo::info(), Timing::default());
    let mut applier = winplace::state::Applier::new(winplace_rules::audit::Audit::default());
    let demo = winplace::source::demo::DemoSource::load().expect("demo");
    applier.apply_batch(
        &s,
        vec![
            winplace::source::SourceEvent::Change(demo.objects().clone().into_reset()),
            winplace::source::SourceEvent::Synced,
        ],
    );
    // (query, workloads `Kind/namespace/name` it must return)
    let rows: [(&str, &[&str]); 4] = [
        (
            "/api/workloads?state=misplaced",
            &[
                "DaemonSet/logging/log-shipper",
                "Deployment/legacy/ledger",
                "Deployment/payments/payment-gateway",
                "Deployment/web/iis-frontend",
            ],
        ),
        (
            "/api/workloads?rule=pod-pending-placement",
            &["Deployment/payments/payment-gateway"],
        ),
        (
            "/api/workloads?rule=runtimeclass-selector-conflict",
            &["Deployment/analytics/etl-runner"],
        ),
        (
            "/api/workloads?rule=pod-on-incompatible-build",
            &["Deployment/legacy/ledger"],
        ),
    ];
    for (uri, want) in rows {
        let (status, body) = get_json(&s, uri).await;
        assert_eq!(status, StatusCode::OK);
        let mut got: Vec<String> = body["workloads"]
            .as_array()
            .expect("array")
            .iter()
            .map(|w| {
                format!(
                    "{}/{}/{}",
                    w["owner"]["kind"].as_str().unwrap_or(""),
                    w["owner"]["namespace"].as_str().unwrap_or(""),
                    w["owner"]["name"].as_str().unwrap_or("")
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "{uri}");
    }
    let (_, fine) = get_json(&s, "/api/workloads?state=fine").await;
    let fine = names(&fine["workloads"], "/owner/name");
    for healthy in ["storefront", "coredns", "kube-proxy", "report-gen"] {
        assert!(
            fine.iter().any(|n| n == healthy),
            "{healthy} is fine: {fine:?}"
        );
    }
    let (_, summary) = get_json(&s, "/api/summary").await;
    let titles = names(&summary["summary"]["nodeGroups"], "/title");
    assert_eq!(titles.len(), 4);
    assert!(titles[0].starts_with("Windows Server 2019"));
    let (_, windows) = get_json(&s, "/api/nodes?os=windows&build=10.0.20348").await;
    assert_eq!(
        names(&windows["nodes"], "/name"),
        ["aks-win22-0", "aks-win22-1", "aks-win22-2"]
    );
}

#[tokio::test]
async fn placements_are_empty_without_place_and_newest_first_with_it() {
    let s = state();
    let (status, body) = get_json(&s, "/api/placements").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        serde_json::json!({"enabled": false, "leading": false, "placements": []})
    );

    let resolver = winplace::registry::ImageResolver::new(Default::default());
    let report = std::sync::Arc::new(winplace::place::report::PlaceReport::new(
        std::sync::Arc::new(resolver),
    ));
    report.set_leading(true);
    report.placed(
        "shop/web-0".into(),
        vec!["registry.example/web:1".into()],
        vec!["nodeSelector kubernetes.io/os: windows".into()],
        "winplace placed the pod: nodeSelector kubernetes.io/os: windows".into(),
    );
    report.released(
        "shop/web-1".into(),
        vec!["registry.example/web:2".into()],
        winplace::place::report::ReleaseReason::Deadline,
        "not read in time".into(),
    );
    s.set_place_report(report);
    let (_, body) = get_json(&s, "/api/placements").await;
    assert_eq!(body["enabled"], true);
    assert_eq!(body["leading"], true);
    let rows = body["placements"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{body}");
    assert_eq!(rows[0]["pod"], "shop/web-1");
    assert_eq!(rows[0]["outcome"], "released");
    assert_eq!(rows[0]["reason"], "deadline");
    assert!(rows[0].get("pins").is_none(), "{body}");
    assert_eq!(rows[1]["outcome"], "placed");
    assert_eq!(
        rows[1]["pins"],
        serde_json::json!(["nodeSelector kubernetes.io/os: windows"])
    );
    assert_eq!(
        rows[1]["images"],
        serde_json::json!(["registry.example/web:1"])
    );
    // The same counts on /metrics, with the resolver's series (once).
    let (_, _, body) = get(&s, "/metrics").await;
    let text = String::from_utf8(body).expect("utf-8");
    for line in [
        "winplace_place_placed_total 1",
        "winplace_place_released_total{reason=\"deadline\"} 1",
        "winplace_place_released_total{reason=\"refused\"} 0",
        "winplace_place_leading 1",
        "winplace_place_resolution_seconds_count 0",
        "winplace_image_registry_requests_total{outcome=\"ok\"} 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert_eq!(
        text.matches("# TYPE winplace_image_lookups_total").count(),
        1
    );
}
