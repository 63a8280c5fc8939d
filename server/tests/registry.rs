//! Image truth from a real registry: Debian's `docker-registry` (the CNCF distribution registry) on
//! 127.0.0.1, images the test writes as OCI layouts and pushes with Debian's `skopeo`, and
//! `winplace check --resolve-images` through the built binary.
//!
//! `cargo xtask test` installs both packages when they are missing; these tests do not skip without them.
//! The token-auth registry runs with a small token server of the test's own (`auth: token:`), which signs
//! RS256 JWTs with the key in `tests/data/registry/` (its certificate is the registry's root bundle).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::common::oci_registry::*;
use crate::common::router;

use base64::Engine as _;
use serde_json::{Value, json};

/// The images of the "Done when" cases, tagged in one layout.
fn write_images(dir: &Path) -> Layout {
    let mut layout = Layout::new(dir);
    // A Windows-only index: Windows Server 2019.
    let ws2019 = layout.image("windows", Some("10.0.17763.6414"));
    let index = layout.index(vec![ws2019]);
    layout.tag("ws2019", &index);
    // A multi-OS index: Linux and Windows Server 2022.
    let linux = layout.image("linux", None);
    let ws2022 = layout.image("windows", Some("10.0.20348.2762"));
    let index = layout.index(vec![linux, ws2022]);
    layout.tag("multi", &index);
    // A single manifest: the platform is only in its config.
    let single = layout.image("windows", Some("10.0.20348.2762"));
    layout.tag("single", &single);
    layout
}

/// Runs `winplace check --format json` on `manifest` with `extra` arguments, its cache in `cache`.
fn check(dir: &Path, manifest: &str, extra: &[&str]) -> (Output, Value) {
    let file = dir.join("workload.yaml");
    std::fs::write(&file, manifest).expect("write manifest");
    let out = Command::new(env!("CARGO_BIN_EXE_winplace"))
        .arg("check")
        .args(["--format", "json"])
        .args(extra)
        .arg(&file)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("HOME", dir)
        .env_remove("DOCKER_CONFIG")
        .env("NO_COLOR", "1")
        .output()
        .expect("winplace runs");
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

/// `rule → [(severity, message)]` of a report.
fn findings(report: &Value) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for f in report["findings"].as_array().expect("findings") {
        out.entry(f["rule"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push((
                f["severity"].as_str().unwrap_or_default().to_string(),
                f["message"].as_str().unwrap_or_default().to_string(),
            ));
    }
    out
}

/// A Deployment pinned to Windows Server 2022 nodes, running `image`.
fn pinned_to_2022(image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: billing, namespace: shop}}\nspec:\n  selector: {{matchLabels: {{app: billing}}}}\n  template:\n    metadata: {{labels: {{app: billing}}}}\n    spec:\n      os: {{name: windows}}\n      nodeSelector:\n        kubernetes.io/os: windows\n        node.kubernetes.io/windows-build: \"10.0.20348\"\n      tolerations:\n      - {{key: os, operator: Equal, value: windows, effect: NoSchedule}}\n      containers:\n      - {{name: app, image: \"{image}\"}}\n"
    )
}

/// A pod that declares no OS at all, running `image`.
fn no_os(image: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: billing, namespace: shop}}\nspec:\n  containers:\n  - {{name: app, image: \"{image}\"}}\n"
    )
}

#[test]
fn findings_use_the_manifests_truth() {
    let registry = Registry::start(None);
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    for tag in ["ws2019", "multi", "single"] {
        registry.push(&layout.dir, tag, "contoso/billing", None);
    }
    let host = registry.host();
    let image = |tag: &str| format!("{host}/contoso/billing:{tag}");
    let resolve = ["--resolve-images", "--insecure-registry", host.as_str()];

    // A private Windows Server 2019 image pinned to 2022 nodes: a build mismatch, an error.
    let (out, report) = check(work.path(), &pinned_to_2022(&image("ws2019")), &resolve);
    let got = findings(&report);
    let mismatch = got
        .get("windows-build-mismatch")
        .expect("windows-build-mismatch");
    assert_eq!(mismatch[0].0, "error", "{got:?}");
    assert!(
        mismatch[0].1.contains("Windows Server 2019"),
        "{}",
        mismatch[0].1
    );
    assert_eq!(out.status.code(), Some(1));
    // Offline, the name says nothing: no mismatch, only "build unknown".
    let (_, offline) = check(work.path(), &pinned_to_2022(&image("ws2019")), &[]);
    let offline = findings(&offline);
    assert!(
        !offline.contains_key("windows-build-mismatch"),
        "{offline:?}"
    );
    assert!(
        offline.contains_key("windows-image-build-unknown"),
        "{offline:?}"
    );

    // A private Windows image (platform only in its config) in a pod with no OS selector.
    let (_, report) = check(work.path(), &no_os(&image("single")), &resolve);
    let got = findings(&report);
    assert_eq!(
        got.get("windows-pod-without-os-selector")
            .map(|f| f[0].0.as_str()),
        Some("error"),
        "{got:?}"
    );
    let (_, offline) = check(work.path(), &no_os(&image("single")), &[]);
    assert!(!findings(&offline).contains_key("windows-pod-without-os-selector"));

    // A multi-OS image with a 2022 entry, pinned to 2022: clean.
    let (out, report) = check(work.path(), &pinned_to_2022(&image("multi")), &resolve);
    let got = findings(&report);
    assert!(
        got.values()
            .flatten()
            .all(|(severity, _)| severity == "info"),
        "{got:?}"
    );
    assert!(!got.contains_key("image-manifest-unresolved"), "{got:?}");
    assert_eq!(out.status.code(), Some(0));

    // A missing tag keeps its name-based classification and says why.
    let (_, report) = check(work.path(), &pinned_to_2022(&image("missing")), &resolve);
    let got = findings(&report);
    let unresolved = got.get("image-manifest-unresolved").expect("unresolved");
    assert_eq!(unresolved[0].0, "info");
    assert!(unresolved[0].1.contains("not found"), "{}", unresolved[0].1);
    assert!(got.contains_key("windows-image-build-unknown"), "{got:?}");
}

#[test]
fn answers_are_cached_on_disk_until_they_expire() {
    let registry = Registry::start(None);
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    registry.push(&layout.dir, "ws2019", "team/app", None);
    let host = registry.host();
    let manifest = pinned_to_2022(&format!("{host}/team/app:ws2019"));
    let resolve = ["--resolve-images", "--insecure-registry", host.as_str()];
    let (_, first) = check(work.path(), &manifest, &resolve);
    assert!(findings(&first).contains_key("windows-build-mismatch"));
    let cache = work.path().join("cache/winplace/images.json");
    let cached: Value =
        serde_json::from_slice(&std::fs::read(&cache).expect("the cache file")).expect("json");
    assert!(
        cached["entries"]
            .as_object()
            .is_some_and(|e| e.contains_key(&format!("{host}/team/app:ws2019"))),
        "{cached}"
    );
    // The registry is gone: the cached answer still decides.
    drop(registry);
    let (_, second) = check(work.path(), &manifest, &resolve);
    assert!(findings(&second).contains_key("windows-build-mismatch"));
    // With the disk cache off, the registry is asked, and is not there.
    let mut off = resolve.to_vec();
    off.extend(["--image-cache-ttl", "0", "--registry-timeout", "3"]);
    let (_, third) = check(work.path(), &manifest, &off);
    let got = findings(&third);
    assert!(got.contains_key("image-manifest-unresolved"), "{got:?}");
}

#[test]
fn a_registry_that_hangs_costs_at_most_the_timeout() {
    let port = hanging_listener();
    let host = format!("127.0.0.1:{port}");
    let work = tempfile::tempdir().expect("tempdir");
    // Two images of the hanging registry in two files: one deadline for the whole run.
    let started = Instant::now();
    let (out, report) = check(
        work.path(),
        &format!(
            "{}---\n{}",
            pinned_to_2022(&format!("{host}/a:1")),
            no_os(&format!("{host}/b:1"))
        ),
        &[
            "--resolve-images",
            "--insecure-registry",
            &host,
            "--registry-timeout",
            "2",
        ],
    );
    let elapsed = started.elapsed();
    let got = findings(&report);
    let unresolved = got.get("image-manifest-unresolved").expect("unresolved");
    assert_eq!(unresolved.len(), 2, "{got:?}");
    assert!(
        unresolved.iter().all(|(_, m)| m.contains("timeout")),
        "{unresolved:?}"
    );
    // A bound, not a benchmark: the run ends by its deadline (2 s) plus process start-up, never hangs.
    assert!(
        elapsed < Duration::from_secs(15),
        "took {elapsed:?}; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_registry_that_demands_a_token_is_read_with_the_docker_config_credentials() {
    let token_port = token_server();
    let auth = format!(
        "auth:\n  token:\n    realm: http://127.0.0.1:{token_port}/token\n    service: {TOKEN_SERVICE}\n    issuer: {TOKEN_ISSUER}\n    rootcertbundle: {}\n",
        data("token-cert.pem").display()
    );
    let registry = Registry::start(Some(auth));
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    let creds = format!("{TOKEN_USER}:{TOKEN_PASSWORD}");
    registry.push(&layout.dir, "single", "private/app", Some(&creds));
    let host = registry.host();
    let manifest = no_os(&format!("{host}/private/app:single"));
    let resolve = [
        "--resolve-images",
        "--insecure-registry",
        host.as_str(),
        "--image-cache-ttl",
        "0",
    ];

    // Anonymous: the token server refuses, the image is unresolved (unauthorized).
    let (_, report) = check(work.path(), &manifest, &resolve);
    let got = findings(&report);
    let unresolved = got.get("image-manifest-unresolved").expect("unresolved");
    assert!(
        unresolved[0].1.contains("unauthorized"),
        "{}",
        unresolved[0].1
    );
    assert!(
        !got.contains_key("windows-pod-without-os-selector"),
        "{got:?}"
    );

    // The credentials in a Docker config file, but the token service is plain HTTP on a port not named
    // with --insecure-registry: they stay home, the token is asked for anonymously and refused.
    let config = work.path().join("docker-config.json");
    let auth = base64::engine::general_purpose::STANDARD.encode(&creds);
    std::fs::write(
        &config,
        json!({"auths": {host.clone(): {"auth": auth}}}).to_string(),
    )
    .expect("write config");
    let mut with_config = resolve.to_vec();
    let config_arg = config.display().to_string();
    with_config.extend(["--registry-config", config_arg.as_str()]);
    let (_, report) = check(work.path(), &manifest, &with_config);
    let got = findings(&report);
    let unresolved = got.get("image-manifest-unresolved").expect("unresolved");
    assert!(
        unresolved[0].1.contains("token service answered 401"),
        "{}",
        unresolved[0].1
    );

    // The token service's HOST:PORT named too: the credentials go, the token is granted, the manifest
    // read.
    let token_host = format!("127.0.0.1:{token_port}");
    with_config.extend(["--insecure-registry", token_host.as_str()]);
    let (_, report) = check(work.path(), &manifest, &with_config);
    let got = findings(&report);
    assert!(!got.contains_key("image-manifest-unresolved"), "{got:?}");
    assert!(
        got.contains_key("windows-pod-without-os-selector"),
        "{got:?}"
    );
}

/// `GET uri` through the router: status and JSON (or text) body.
async fn get(state: &winplace::state::AppState, uri: &str) -> (u16, String) {
    let request = axum::http::Request::get(uri)
        .body(axum::body::Body::empty())
        .expect("request");
    let (status, _, body) = router::send(state, request).await;
    (status.as_u16(), String::from_utf8_lossy(&body).into_owned())
}

fn resolver_for(host: &str) -> std::sync::Arc<winplace::registry::ImageResolver> {
    std::sync::Arc::new(winplace::registry::ImageResolver::new(
        winplace::registry::RegistryOptions {
            insecure: vec![host.to_string()],
            timeout: Duration::from_secs(5),
            ..Default::default()
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_answers_image_resolve_and_counts_lookups() {
    let registry = Registry::start(None);
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    registry.push(&layout.dir, "multi", "contoso/web", None);
    let host = registry.host();
    let state = winplace::state::AppState::new(
        winplace::source::demo::info(),
        winplace::state::Timing::default(),
    );
    // Off: a clear 404, nothing asked.
    let (status, body) = get(&state, "/api/images/resolve?ref=nginx").await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("--resolve-images"), "{body}");

    state.set_image_resolver(resolver_for(&host));
    let uri = format!("/api/images/resolve?ref={host}/contoso/web:multi");
    let (status, body) = get(&state, &uri).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(answer["platformsFrom"], "index");
    assert_eq!(
        answer["platforms"].as_array().map(Vec::len),
        Some(2),
        "{answer}"
    );
    assert_eq!(answer["manifest"]["os"]["os"], "windows", "{answer}");
    assert_eq!(
        answer["manifest"]["os"]["builds"],
        json!([20348]),
        "{answer}"
    );
    assert_eq!(answer["manifest"]["source"], "manifest");
    assert_eq!(answer["byName"]["os"]["os"], "unrecognized");
    // Asked again: from the cache.
    let (status, _) = get(&state, &uri).await;
    assert_eq!(status, 200);
    let (status, body) = get(
        &state,
        &format!("/api/images/resolve?ref={host}/contoso/web:missing"),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("\"reason\":\"not-found\""), "{body}");
    let (status, body) = get(&state, "/api/images/resolve").await;
    assert_eq!(status, 400, "{body}");

    let (_, metrics) = get(&state, "/metrics").await;
    assert!(
        metrics.contains("winplace_image_lookups_total 3\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("winplace_image_cache_hits_total 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("winplace_image_lookup_failures_total 1\n"),
        "{metrics}"
    );
}

/// A Windows Server 2022 node, tainted for Windows pods.
fn win22_node() -> k8s_openapi::api::core::v1::Node {
    serde_json::from_value(json!({
        "metadata": {"name": "win22", "labels": {"kubernetes.io/os": "windows",
            "node.kubernetes.io/windows-build": "10.0.20348"}},
        "spec": {"taints": [{"key": "os", "value": "windows", "effect": "NoSchedule"}]},
        "status": {"nodeInfo": {"operatingSystem": "windows", "kernelVersion": "10.0.20348.100",
            "architecture": "amd64", "bootID": "", "containerRuntimeVersion": "", "kubeProxyVersion": "",
            "kubeletVersion": "v1.31.0", "machineID": "", "osImage": "x", "systemUUID": ""},
            "conditions": [{"type": "Ready", "status": "True"}]}
    }))
    .expect("node")
}

/// A pending pod of namespace `shop` pinned to Windows Server 2022 nodes, running `image`.
fn pod_on_2022(name: &str, image: &str) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"nodeSelector": {"kubernetes.io/os": "windows",
                "node.kubernetes.io/windows-build": "10.0.20348"},
            "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
            "containers": [{"name": "app", "image": image}]},
        "status": {"phase": "Pending"}
    }))
    .expect("pod")
}

/// A pending pod of namespace `shop` that declares no OS at all, running `image`.
fn pod_without_os(name: &str, image: &str) -> k8s_openapi::api::core::v1::Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "image": image}]},
        "status": {"phase": "Pending"}
    }))
    .expect("pod")
}

/// A server state fed `pods` on one Windows Server 2022 node, resolving their images in the background
/// with `resolver` (as `serve --resolve-images` wires it).
fn serve_with_resolution(
    pods: Vec<k8s_openapi::api::core::v1::Pod>,
    resolver: std::sync::Arc<winplace::registry::ImageResolver>,
) -> winplace::state::AppState {
    use futures::StreamExt as _;
    use winplace::source::SourceEvent;
    use winplace_rules::audit::{Audit, Change};
    let state = winplace::state::AppState::new(
        winplace::source::demo::info(),
        winplace::state::Timing::default(),
    );
    state.set_image_resolver(resolver.clone());
    let cluster = futures::stream::iter(vec![
        SourceEvent::Change(Change::Reset {
            nodes: vec![win22_node()],
            pods,
            runtime_classes: vec![],
        }),
        SourceEvent::Synced,
    ])
    .chain(futures::stream::pending());
    let answers = winplace::image_resolution::spawn(state.clone(), resolver);
    let events = Box::pin(futures::stream::select(cluster, answers));
    let _applier = winplace::state::spawn_applier(state.clone(), Audit::default(), events);
    state
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_resolves_live_images_in_the_background_and_reaudits() {
    let registry = Registry::start(None);
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    registry.push(&layout.dir, "ws2019", "contoso/billing", None);
    let host = registry.host();
    let resolver = resolver_for(&host);
    let state = serve_with_resolution(
        vec![pod_on_2022(
            "billing",
            &format!("{host}/contoso/billing:ws2019"),
        )],
        resolver.clone(),
    );
    let rules = |state: &winplace::state::AppState| -> Vec<String> {
        state
            .published()
            .report
            .workloads
            .iter()
            .flat_map(|w| w.findings.iter().map(|f| f.rule.clone()))
            .collect()
    };
    let started = Instant::now();
    while !rules(&state).contains(&"windows-build-mismatch".to_string()) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no re-audit with the manifest's build: {:?}, resolver {:?}",
            rules(&state),
            resolver.stats()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        resolver.stats().lookups,
        1,
        "one look-up per distinct image"
    );
    state.shut_down();
}

/// The workloads of `GET /api/workloads?state=all`, by `Kind/namespace/name`, each as its opened row
/// (`GET /api/workloads/{namespace}/{kind}/{name}`: findings, images, incidents) answers it.
async fn api_workloads(state: &winplace::state::AppState) -> BTreeMap<String, Value> {
    let (status, body) = get(state, "/api/workloads?state=all").await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("json");
    let mut workloads = BTreeMap::new();
    for w in answer["workloads"].as_array().expect("workloads") {
        let o = &w["owner"];
        let (kind, namespace, name) = (
            o["kind"].as_str().unwrap_or_default(),
            o["namespace"].as_str().unwrap_or_default(),
            o["name"].as_str().unwrap_or_default(),
        );
        let (status, body) = get(state, &format!("/api/workloads/{namespace}/{kind}/{name}")).await;
        assert_eq!(status, 200, "{body}");
        let details: Value = serde_json::from_str(&body).expect("json");
        workloads.insert(
            format!("{kind}/{namespace}/{name}"),
            details["workload"].clone(),
        );
    }
    workloads
}

/// The findings of rule `rule` in a workload of the API answer.
fn api_findings<'a>(workload: &'a Value, rule: &str) -> Vec<&'a Value> {
    workload["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == rule)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_reports_what_it_could_not_resolve_and_where_each_image_os_came_from() {
    let registry = Registry::start(None);
    let work = tempfile::tempdir().expect("tempdir");
    let layout = write_images(&work.path().join("layout"));
    for tag in ["ws2019", "single"] {
        registry.push(&layout.dir, tag, "contoso/billing", None);
    }
    let host = registry.host();
    let hanging = format!("127.0.0.1:{}", hanging_listener());
    let resolver = std::sync::Arc::new(winplace::registry::ImageResolver::new(
        winplace::registry::RegistryOptions {
            insecure: vec![host.clone(), hanging.clone()],
            timeout: Duration::from_secs(2),
            ..Default::default()
        },
    ));
    let resolved = format!("{host}/contoso/billing:ws2019");
    let missing = format!("{host}/contoso/billing:missing");
    let hung = format!("{hanging}/contoso/audit:1");
    let state = serve_with_resolution(
        vec![
            pod_on_2022("billing", &resolved),
            pod_on_2022("missing", &missing),
            pod_on_2022("hung", &hung),
            pod_on_2022(
                "iis",
                "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022",
            ),
            pod_without_os("noos", &format!("{host}/contoso/billing:single")),
        ],
        resolver.clone(),
    );
    // Wait for the three answers to reach the API (the hanging registry costs its 2 s timeout).
    let started = Instant::now();
    let workloads = loop {
        let workloads = api_workloads(&state).await;
        let settled = ["Pod/shop/missing", "Pod/shop/hung"].iter().all(|k| {
            workloads
                .get(*k)
                .is_some_and(|w| !api_findings(w, "image-manifest-unresolved").is_empty())
        }) && workloads
            .get("Pod/shop/billing")
            .is_some_and(|w| !api_findings(w, "windows-build-mismatch").is_empty())
            && workloads
                .get("Pod/shop/noos")
                .is_some_and(|w| !api_findings(w, "windows-pod-without-os-selector").is_empty());
        if settled {
            break workloads;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the answers did not reach the API: {workloads:#?}, resolver {:?}",
            resolver.stats()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let image = |key: &str| workloads[key]["images"][0].clone();

    // A missing tag: an info finding saying why; the image keeps its name-based classification.
    let finding = api_findings(&workloads["Pod/shop/missing"], "image-manifest-unresolved")[0];
    assert_eq!(finding["severity"], "info");
    let message = finding["message"].as_str().unwrap_or_default();
    assert!(message.contains("not found"), "{message}");
    assert!(message.contains(&missing), "{message}");
    assert!(
        !api_findings(
            &workloads["Pod/shop/missing"],
            "windows-image-build-unknown"
        )
        .is_empty(),
        "{:#?}",
        workloads["Pod/shop/missing"]
    );
    let shown = image("Pod/shop/missing");
    assert_eq!(shown["image"], missing.as_str());
    assert_eq!(shown["from"], "name", "{shown}");
    assert_eq!(shown["os"]["os"], "unrecognized", "{shown}");
    assert!(
        shown["unresolved"]
            .as_str()
            .is_some_and(|w| w.contains("not found")),
        "{shown}"
    );
    assert!(shown.get("digest").is_none(), "{shown}");

    // The hanging registry: a timeout, within its bound.
    let finding = api_findings(&workloads["Pod/shop/hung"], "image-manifest-unresolved")[0];
    let message = finding["message"].as_str().unwrap_or_default();
    assert!(message.contains("timeout"), "{message}");
    let shown = image("Pod/shop/hung");
    assert_eq!(shown["from"], "name", "{shown}");
    assert!(
        shown["unresolved"]
            .as_str()
            .is_some_and(|w| w.contains("timeout")),
        "{shown}"
    );

    // The resolved image: the manifest's build, with the digest the registry answered.
    let shown = image("Pod/shop/billing");
    assert_eq!(shown["from"], "manifest", "{shown}");
    assert_eq!(
        shown["os"],
        json!({"os": "windows", "builds": [17763]}),
        "{shown}"
    );
    assert!(
        shown["digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:") && d.len() == 71),
        "{shown}"
    );
    assert!(shown.get("unresolved").is_none(), "{shown}");
    assert!(api_findings(&workloads["Pod/shop/billing"], "image-manifest-unresolved").is_empty());

    // An image its name describes is never asked about, and says so.
    let shown = image("Pod/shop/iis");
    assert_eq!(shown["from"], "name", "{shown}");
    assert_eq!(
        shown["os"],
        json!({"os": "windows", "builds": [20348]}),
        "{shown}"
    );
    // A private Windows image (platform only in its config) in a pod that declares no OS: an error the
    // name alone could not give.
    let finding = api_findings(
        &workloads["Pod/shop/noos"],
        "windows-pod-without-os-selector",
    )[0];
    assert_eq!(finding["severity"], "error");
    assert_eq!(image("Pod/shop/noos")["from"], "manifest");
    assert_eq!(resolver.stats().lookups, 4, "{:?}", resolver.stats());
    state.shut_down();
}

/// `cargo xtask image` (docs/deploy.md) packs a binary into an OCI archive. Packing the dev binary twice
/// gives the same bytes (hence one digest); skopeo reads the archive as an image that runs `winplace` as a
/// numeric non-root user, with the commit as its revision; it pushes to a registry, which then serves the
/// manifest under the digest the build printed (the digest a deployment pins). The xtask binary is the one
/// `cargo xtask` built (it runs this test in `cargo xtask test`).
#[test]
fn the_server_image_is_reproducible_non_root_and_pushes() {
    require_tools();
    let bin = Path::new(env!("CARGO_BIN_EXE_winplace"));
    let xtask = bin.with_file_name("xtask");
    assert!(
        xtask.exists(),
        "{} is missing: run `cargo xtask build` once",
        xtask.display()
    );
    let work = tempfile::tempdir().expect("tempdir");
    let build = |name: &str| {
        let archive = work.path().join(name);
        let out = Command::new(&xtask)
            .args(["image", "--binary"])
            .arg(bin)
            .arg("--output")
            .arg(&archive)
            .output()
            .expect("xtask runs");
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "xtask image failed: {said}");
        let digest = said
            .split("winplace@")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no digest in {said:?}"))
            .to_string();
        (archive, digest)
    };
    let (first, digest) = build("first.tar");
    let (second, again) = build("second.tar");
    assert_eq!(digest, again, "two builds of one commit, two digests");
    assert!(
        std::fs::read(&first).expect("first archive") == std::fs::read(&second).expect("second"),
        "two builds of one commit differ"
    );

    let archive = format!("oci-archive:{}", first.display());
    let config = skopeo_json(&["inspect", "--config", &archive]);
    assert_eq!(config["os"], "linux");
    let user = config["config"]["User"].as_str().expect("a User");
    let (uid, gid) = user.split_once(':').expect("uid:gid");
    let (uid, gid): (u32, u32) = (
        uid.parse().expect("a numeric uid"),
        gid.parse().expect("a numeric gid"),
    );
    assert!(uid != 0 && gid != 0, "the image runs as root: {user}");
    let entrypoint = config["config"]["Entrypoint"]
        .as_array()
        .expect("an Entrypoint");
    assert_eq!(entrypoint.len(), 1);
    assert_eq!(
        Path::new(entrypoint[0].as_str().expect("a path")).file_name(),
        Some(std::ffi::OsStr::new("winplace"))
    );
    let labels = &config["config"]["Labels"];
    let head = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    assert_eq!(
        labels["org.opencontainers.image.revision"],
        String::from_utf8_lossy(&head.stdout).trim()
    );
    assert_eq!(labels["org.opencontainers.image.licenses"], "Apache-2.0");
    for label in ["source", "version", "created"] {
        assert!(
            labels[format!("org.opencontainers.image.{label}")].is_string(),
            "no {label} label: {labels}"
        );
    }

    let registry = Registry::start(None);
    skopeo(&[
        "--insecure-policy",
        "copy",
        "--dest-tls-verify=false",
        &archive,
        &format!("docker://{}/winplace:test", registry.host()),
    ]);
    let pushed = skopeo_json(&[
        "inspect",
        "--tls-verify=false",
        &format!("docker://{}/winplace:test", registry.host()),
    ]);
    assert_eq!(
        pushed["Digest"],
        digest.as_str(),
        "the registry holds another manifest"
    );
    assert_eq!(
        pushed["Labels"]["org.opencontainers.image.title"],
        "winplace"
    );
}

// Faults no real registry produces: fake servers on 127.0.0.1, each request's head recorded.

use crate::common::fake_http;

use fake_http::{FakeServer, Received, Reply};
use winplace::registry::{Credentials, ImageResolver, RegistryOptions, ResolveError};

/// A one-platform Linux index (its entries are not read further).
const LINUX_INDEX: &str = r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":2,"platform":{"os":"linux","architecture":"amd64"}}]}"#;

/// What a `Basic` header carries for the test's user: `Basic base64(ci:s3cret)`.
fn basic_header() -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{TOKEN_USER}:{TOKEN_PASSWORD}"))
    )
}

/// A token service that grants the token `granted` to anyone.
fn token_service() -> FakeServer {
    FakeServer::start(|_| Reply::json(r#"{"token":"granted"}"#))
}

/// A registry that answers `/v2/...` with [`LINUX_INDEX`] when the request carries `Bearer granted`,
/// else 401 with a `Bearer` challenge naming `realm` (`None`: its own `/token`, which it answers).
fn registry_with_realm(realm: Option<String>) -> FakeServer {
    FakeServer::start(move |request: &Received| {
        if request.path().starts_with("/token") {
            return Reply::json(r#"{"token":"granted"}"#);
        }
        if request.header("authorization") == Some("Bearer granted") {
            return Reply::json(LINUX_INDEX);
        }
        let realm = realm.clone().unwrap_or_else(|| {
            format!(
                "http://{}/token",
                request.header("host").unwrap_or_default()
            )
        });
        Reply::Full {
            status: "401 Unauthorized",
            headers: vec![format!(
                "WWW-Authenticate: Bearer realm=\"{realm}\",service=\"fake\""
            )],
            body: br#"{"errors":[{"code":"UNAUTHORIZED","message":"a token is needed"}]}"#.to_vec(),
        }
    })
}

/// Docker config credentials (`ci:s3cret`) for `registry`, in a file under `dir`.
fn credentials_for(dir: &Path, registry: &str) -> Credentials {
    let path = dir.join("config.json");
    let auth =
        base64::engine::general_purpose::STANDARD.encode(format!("{TOKEN_USER}:{TOKEN_PASSWORD}"));
    std::fs::write(
        &path,
        json!({"auths": {registry: {"auth": auth}}}).to_string(),
    )
    .expect("write config");
    Credentials::from_file(&path).expect("valid config")
}

fn resolver(insecure: &[String], credentials: Credentials) -> ImageResolver {
    ImageResolver::new(RegistryOptions {
        insecure: insecure.to_vec(),
        credentials,
        timeout: Duration::from_secs(10),
        ..Default::default()
    })
}

/// Issue 29.1: the registry's credentials go to the registry itself and to a token service over HTTPS
/// or named insecure; a plain-HTTP token service on another port gets an anonymous request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_go_only_to_the_registry_and_to_token_services_it_may_trust() {
    let work = tempfile::tempdir().expect("tempdir");
    let authorization = |r: &Received| r.header("authorization").map(str::to_string);

    // A plain-HTTP token service on another port, not named: asked anonymously, and it still grants.
    let service = token_service();
    let registry = registry_with_realm(Some(format!("http://{}/token", service.host())));
    let image = format!("{}/app:1", registry.host());
    let found = resolver(
        &[registry.host()],
        credentials_for(work.path(), &registry.host()),
    )
    .resolve(&image)
    .await
    .expect("resolved with an anonymous token");
    assert_eq!(found.platforms[0].os, "linux");
    let asked = service.received();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].path().starts_with("/token?"), "{asked:?}");
    assert_eq!(
        authorization(&asked[0]),
        None,
        "credentials sent to {asked:?}"
    );
    // The registry got the token, never the password.
    let got = registry.received();
    assert!(
        got.iter()
            .any(|r| r.header("authorization") == Some("Bearer granted"))
    );
    assert!(
        got.iter().all(|r| authorization(r) != Some(basic_header())),
        "{got:?}"
    );

    // The token service's HOST:PORT named insecure: the credentials go to it.
    let service = token_service();
    let registry = registry_with_realm(Some(format!("http://{}/token", service.host())));
    let image = format!("{}/app:1", registry.host());
    resolver(
        &[registry.host(), service.host()],
        credentials_for(work.path(), &registry.host()),
    )
    .resolve(&image)
    .await
    .expect("resolved");
    assert_eq!(authorization(&service.received()[0]), Some(basic_header()));

    // A token service on the registry's own host and port: the credentials go (the registry is trusted
    // with them already).
    let registry = registry_with_realm(None);
    let image = format!("{}/app:1", registry.host());
    resolver(
        &[registry.host()],
        credentials_for(work.path(), &registry.host()),
    )
    .resolve(&image)
    .await
    .expect("resolved");
    let token_request = registry
        .received()
        .into_iter()
        .find(|r| r.path().starts_with("/token"))
        .expect("asked for a token");
    assert_eq!(authorization(&token_request), Some(basic_header()));

    // Another scheme: an HTTPS token service (this fake speaks plain HTTP, so the TLS handshake fails
    // and the look-up with it): whatever it received, no credentials in the clear.
    let service = token_service();
    let registry = registry_with_realm(Some(format!("https://{}/token", service.host())));
    let image = format!("{}/app:1", registry.host());
    let failed = resolver(
        &[registry.host()],
        credentials_for(work.path(), &registry.host()),
    )
    .resolve(&image)
    .await;
    assert!(failed.is_err(), "{failed:?}");
    for r in service.received() {
        assert!(
            r.line.is_empty(),
            "an HTTP request, not a TLS handshake: {r:?}"
        );
        let raw = String::from_utf8_lossy(&r.raw).to_ascii_lowercase();
        assert!(
            !raw.contains("authorization") && !raw.contains("s3cret"),
            "{raw}"
        );
    }
}

/// A registry that asks for Basic credentials gets them; without any, the look-up is unauthorized.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_basic_challenge_is_answered_with_the_registrys_own_credentials() {
    let work = tempfile::tempdir().expect("tempdir");
    let registry = FakeServer::start(|request: &Received| {
        if request.header("authorization") == Some(basic_header().as_str()) {
            Reply::json(LINUX_INDEX)
        } else {
            Reply::Full {
                status: "401 Unauthorized",
                headers: vec!["WWW-Authenticate: Basic realm=\"fake\"".into()],
                body: Vec::new(),
            }
        }
    });
    let image = format!("{}/app:1", registry.host());
    resolver(
        &[registry.host()],
        credentials_for(work.path(), &registry.host()),
    )
    .resolve(&image)
    .await
    .expect("resolved with basic credentials");
    let anonymous = resolver(&[registry.host()], Credentials::anonymous())
        .resolve(&image)
        .await
        .expect_err("no credentials");
    assert_eq!(anonymous.kind(), "unauthorized", "{anonymous}");
}

/// A registry answering `answer` for `/v2/app/manifests/…` and `/v2/app/blobs/…`.
fn registry_answering(
    answer: impl Fn(&Received) -> Reply + Send + Sync + 'static,
) -> (FakeServer, ImageResolver) {
    let registry = FakeServer::start(answer);
    let resolver = resolver(&[registry.host()], Credentials::anonymous());
    (registry, resolver)
}

/// Issue 29.2: a manifest over the cap is refused from its `Content-Length`, before its body is read;
/// one without a length is cut at the cap; either way the error says "too large".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manifests_over_the_cap_are_refused_without_reading_them() {
    let (registry, resolver) = registry_answering(|r: &Received| {
        if r.path().contains("/announced/") {
            // Says 50 MB; sends 1 KiB and closes (a client that reads the body fails otherwise).
            Reply::Announced {
                announced: 50_000_000,
                sent: vec![b' '; 1024],
            }
        } else {
            Reply::Endless
        }
    });
    let announced = resolver
        .resolve(&format!("{}/announced/app:1", registry.host()))
        .await
        .expect_err("too large");
    assert_eq!(announced.kind(), "too-large", "{announced}");
    let text = announced.to_string();
    assert!(
        text.contains("too large") && text.contains("50,000,000 bytes"),
        "{text}"
    );

    let endless = resolver
        .resolve(&format!("{}/endless/app:1", registry.host()))
        .await
        .expect_err("too large");
    assert_eq!(endless.kind(), "too-large", "{endless}");
    assert!(
        endless.to_string().contains("past 4,194,304 bytes"),
        "{endless}"
    );
    // Cut at the cap: what was sent is the cap plus what the sockets' buffers held, not the stream.
    assert!(registry.sent() < 64 << 20, "{} bytes sent", registry.sent());
}

/// A manifest naming a config blob: `config` is its descriptor's JSON.
fn single_manifest(config: &str) -> String {
    format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{config},"layers":[]}}"#
    )
}

/// Issue 29.2: a config blob whose descriptor says it is over the cap is never asked for; one that
/// says less but goes on is cut at the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_blobs_are_streamed_with_their_cap() {
    let big = r#"{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:1111111111111111111111111111111111111111111111111111111111111111","size":60000000}"#;
    let lying = r#"{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:2222222222222222222222222222222222222222222222222222222222222222","size":100}"#;
    let (big, lying) = (single_manifest(big), single_manifest(lying));
    let (registry, resolver) = registry_answering(move |r: &Received| {
        let path = r.path();
        if path.contains("/blobs/") {
            Reply::Endless
        } else if path.contains("/big/") {
            Reply::json(big.clone())
        } else {
            Reply::json(lying.clone())
        }
    });
    let refused = resolver
        .resolve(&format!("{}/big/app:1", registry.host()))
        .await
        .expect_err("too large");
    assert!(
        refused
            .to_string()
            .contains("config blob is 60,000,000 bytes (too large"),
        "{refused}"
    );
    assert!(
        registry
            .received()
            .iter()
            .all(|r| !r.path().contains("/blobs/")),
        "the blob was asked for"
    );
    let cut = resolver
        .resolve(&format!("{}/lying/app:1", registry.host()))
        .await
        .expect_err("too large");
    assert_eq!(cut.kind(), "too-large", "{cut}");
    assert!(
        cut.to_string().contains("config blob goes on past"),
        "{cut}"
    );
}

/// An index of `entries` Windows Server 2022 entries.
fn index_of(entries: usize) -> String {
    let entry = r#"{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:3333333333333333333333333333333333333333333333333333333333333333","size":2,"platform":{"os":"windows","architecture":"amd64","os.version":"10.0.20348.1"}}"#;
    format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{}]}}"#,
        vec![entry; entries].join(",")
    )
}

/// Issue 29.2: an index lists at most 1,000 manifests; one more is "too large" (and no suggestion is
/// built from it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_with_more_than_a_thousand_entries_is_too_large() {
    let (at_cap, over_cap) = (index_of(1000), index_of(1001));
    let (registry, resolver) = registry_answering(move |r: &Received| {
        Reply::json(if r.path().contains("/over/") {
            over_cap.clone()
        } else {
            at_cap.clone()
        })
    });
    let read = resolver
        .resolve(&format!("{}/at/app:1", registry.host()))
        .await
        .expect("1,000 entries are read");
    assert_eq!(read.platforms.len(), 1000);
    let refused = resolver
        .resolve(&format!("{}/over/app:1", registry.host()))
        .await
        .expect_err("too large");
    assert_eq!(
        refused,
        ResolveError::TooLarge(
            "the index lists 1,001 manifests (too large: winplace reads at most 1,000)".into()
        )
    );
}

/// Issue 29.7: a manifest that does not hash to the digest its reference pins (or the one its registry
/// announced) is refused, and the mismatch is said once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_mismatch_is_said_once() {
    let wrong = format!("sha256:{}", "4".repeat(64));
    let announced_wrong = wrong.clone();
    let (registry, resolver) = registry_answering(move |r: &Received| {
        if r.path().contains("/announced/") {
            Reply::Full {
                status: "200 OK",
                headers: vec![format!("Docker-Content-Digest: {announced_wrong}")],
                body: LINUX_INDEX.into(),
            }
        } else {
            Reply::json(LINUX_INDEX)
        }
    });
    let pinned = resolver
        .resolve(&format!("{}/pinned/app@{wrong}", registry.host()))
        .await
        .expect_err("mismatch");
    let text = pinned.to_string();
    assert!(
        text.contains("digest mismatch") && text.contains("the reference pins"),
        "{text}"
    );
    assert_eq!(text.matches("digest mismatch").count(), 1, "{text}");
    assert_eq!(text.matches(&wrong).count(), 1, "{text}");
    let announced = resolver
        .resolve(&format!("{}/announced/app:1", registry.host()))
        .await
        .expect_err("mismatch");
    assert!(
        announced.to_string().contains("the registry announced"),
        "{announced}"
    );
}

/// Issue 29.2 through the CLI: `image-manifest-unresolved` says "too large".
#[test]
fn check_says_too_large_in_the_unresolved_finding() {
    let registry = FakeServer::start(|_| Reply::Announced {
        announced: 50_000_000,
        sent: Vec::new(),
    });
    let work = tempfile::tempdir().expect("tempdir");
    let host = registry.host();
    let (_, report) = check(
        work.path(),
        &no_os(&format!("{host}/big:1")),
        &[
            "--resolve-images",
            "--insecure-registry",
            &host,
            "--image-cache-ttl",
            "0",
        ],
    );
    let got = findings(&report);
    let unresolved = got.get("image-manifest-unresolved").expect("unresolved");
    assert!(unresolved[0].1.contains("too large"), "{}", unresolved[0].1);
    assert_eq!(
        unresolved[0].1.matches("too large").count(),
        1,
        "{}",
        unresolved[0].1
    );
}
