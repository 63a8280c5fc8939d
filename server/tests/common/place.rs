//! The placement test kit: everything a test or a benchmark of `winplace serve --place` sets up, written
//! once. The cluster (a fake API server with a Linux and a Windows Server 2022 node), gated pods, pull
//! secrets (both types the kubelet reads), images pushed to Debian's registry, the controller process
//! (one replica or several, each with a kubeconfig of its own token so that the fake API server tells
//! their writes apart) and what the tests read back (gates, pins, Events, patches, the Lease, `/metrics`).
//!
//! Used by `tests/place.rs`, `tests/place_faults.rs`, `tests/place_leader.rs` and the benchmark examples
//! `examples/place_flood.rs` and `examples/place_failover.rs`, which include it with `#[path]` beside
//! `fake_api.rs` and `oci_registry.rs` (it names them as its siblings: `super::fake_api`).

#![allow(dead_code)]

use super::fake_api::{self, FakeApi, Write};
use super::fake_http::Reply;
use super::oci_registry::{self, Layout, Registry};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

/// The scheduling gate the policy adds and the controller removes.
pub const GATE: &str = "winplace.io/placement";
/// The label of gated pods (`kubectl get pods -l winplace.io/placement`).
pub const GATED_LABEL: &str = "winplace.io/placement";
/// The kubelet's Windows build label.
pub const BUILD: &str = "node.kubernetes.io/windows-build";
/// The namespace of the tests' pods.
pub const NAMESPACE: &str = "shop";
/// The Lease of a controller started with the defaults.
pub const LEASE: &str = "default/winplace-placer";
/// An image whose name says its OS and build: placed without a registry.
pub const NAMED: &str = "mcr.microsoft.com/windows/servercore:ltsc2022";
/// The Windows nodes' toleration the controller adds.
pub const WINDOWS_TOLERATION: &str =
    r#"{"key":"os","operator":"Equal","value":"windows","effect":"NoSchedule"}"#;

/// `seconds` ago, as a `creationTimestamp`.
pub fn now_minus(seconds: i64) -> String {
    let t =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(seconds);
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A pod the policy gated in `namespace`, created now, with one container of `image`; `extra`'s members
/// are set in its spec.
pub fn gated_pod_in(namespace: &str, name: &str, image: &str, extra: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}"),
                     "creationTimestamp": now_minus(0),
                     "labels": {"app": name, GATED_LABEL: "gated"}},
        "spec": {"schedulingGates": [{"name": GATE}],
                 "containers": [{"name": "app", "image": image}]},
        "status": {"phase": "Pending"}
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        pod["spec"][k] = v.clone();
    }
    pod
}

/// [`gated_pod_in`] the tests' namespace.
pub fn gated_pod(name: &str, image: &str, extra: Value) -> Value {
    gated_pod_in(NAMESPACE, name, image, extra)
}

/// A Windows node of `build` (its kernel version `kernel`), tainted `os=windows:NoSchedule`.
pub fn windows_node(name: &str, kernel: &str, build: &str) -> Value {
    let mut node = fake_api::node(name, "windows");
    node["status"]["nodeInfo"]["kernelVersion"] = json!(kernel);
    node["metadata"]["labels"][BUILD] = json!(build);
    node
}

/// An API server with a Linux node and a Windows Server 2022 node (tainted os=windows:NoSchedule).
pub fn cluster() -> FakeApi {
    let api = FakeApi::default();
    api.lock().version = true;
    api.apply("Node", fake_api::node("linux-1", "linux"));
    api.apply(
        "Node",
        windows_node("win22-1", "10.0.20348.2762", "10.0.20348"),
    );
    api
}

/// The types of pull secret the kubelet reads (kubelet `credentialprovider/secrets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullSecretType {
    /// `kubernetes.io/dockerconfigjson`: `.dockerconfigjson` holds `{"auths": {registry: …}}`.
    DockerConfigJson,
    /// `kubernetes.io/dockercfg`: `.dockercfg` holds the map of registries itself (the older format).
    DockerCfg,
}

/// The pull secret `name` in the tests' namespace for `host` with `creds` (`user:password`).
pub fn pull_secret(name: &str, host: &str, creds: &str, kind: PullSecretType) -> Value {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let entries = json!({host: {"auth": b64(creds.as_bytes())}});
    let (type_, key, config) = match kind {
        PullSecretType::DockerConfigJson => (
            "kubernetes.io/dockerconfigjson",
            ".dockerconfigjson",
            json!({"auths": entries}),
        ),
        PullSecretType::DockerCfg => ("kubernetes.io/dockercfg", ".dockercfg", entries),
    };
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE}, "type": type_,
        "data": {key: b64(config.to_string().as_bytes())}})
}

/// The pull secret `shop/pull` for `host` with `creds` (`user:password`), and the default service
/// account of `shop` naming it.
pub fn apply_pull_secret(api: &FakeApi, host: &str, creds: &str) {
    api.apply(
        "Secret",
        pull_secret("pull", host, creds, PullSecretType::DockerConfigJson),
    );
    api.apply("ServiceAccount", json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "default", "namespace": NAMESPACE}, "imagePullSecrets": [{"name": "pull"}]}));
}

/// Debian's registry with token auth (the credentials `ci:s3cret`), holding a Windows Server 2022 image
/// under each of `tags` and a 2019 index under `2019`, in `private/win`; the namespace has the pull
/// secret `pull` and a default service account naming it. Returns the registry, the hosts to reach over
/// plain HTTP (the registry and its token service), and the count of token requests that came without
/// the credentials (anonymous pulls).
pub fn private_registry(
    dir: &Path,
    api: &FakeApi,
    tags: &[&str],
) -> (
    Registry,
    Vec<String>,
    std::sync::Arc<std::sync::atomic::AtomicU64>,
) {
    let (token_port, anonymous) = oci_registry::counted_token_server();
    let registry = Registry::start(Some(format!(
        "auth:\n  token:\n    realm: http://127.0.0.1:{token_port}/token\n    service: {}\n    issuer: {}\n    rootcertbundle: {}\n",
        oci_registry::TOKEN_SERVICE,
        oci_registry::TOKEN_ISSUER,
        oci_registry::data("token-cert.pem").display()
    )));
    let mut layout = Layout::new(&dir.join("layout"));
    let ws2022 = layout.image("windows", Some("10.0.20348.2762"));
    for tag in tags {
        layout.tag(tag, &ws2022);
    }
    let ws2019 = layout.image("windows", Some("10.0.17763.6414"));
    let index = layout.index(vec![ws2019]);
    layout.tag("2019", &index);
    let creds = private_credentials();
    for tag in tags.iter().chain(&["2019"]) {
        registry.push(&layout.dir, tag, "private/win", Some(&creds));
    }
    let host = registry.host();
    apply_pull_secret(api, &host, &creds);
    let insecure = vec![host, format!("127.0.0.1:{token_port}")];
    (registry, insecure, anonymous)
}

/// The credentials of [`private_registry`] (`user:password`).
pub fn private_credentials() -> String {
    format!(
        "{}:{}",
        oci_registry::TOKEN_USER,
        oci_registry::TOKEN_PASSWORD
    )
}

/// Debian's registry without auth, holding `count` Windows Server 2022 images (each of its own build
/// revision, so each tag is a distinct manifest) as `bench/app:v0` … Returns the registry and the
/// references.
pub fn public_images(dir: &Path, count: usize) -> (Registry, Vec<String>) {
    let registry = Registry::start(None);
    let mut layout = Layout::new(&dir.join("layout"));
    for i in 0..count {
        let image = layout.image("windows", Some(&format!("10.0.20348.{}", 1000 + i)));
        layout.tag(&format!("v{i}"), &image);
    }
    for i in 0..count {
        registry.push(&layout.dir, &format!("v{i}"), "bench/app", None);
    }
    let host = registry.host();
    let images = (0..count)
        .map(|i| format!("{host}/bench/app:v{i}"))
        .collect();
    (registry, images)
}

/// A kubeconfig in `dir` for the API server at `api`, whose user presents the bearer token `token`.
pub fn kubeconfig(dir: &Path, api: &str, token: &str) -> PathBuf {
    let path = dir.join(format!("kubeconfig-{token}"));
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {api}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: {token}\n"
        ),
    )
    .expect("write kubeconfig");
    path
}

/// The `winplace` binary: `$WINPLACE_BIN`, else the one cargo built for these tests, else the release
/// build of the target directory (the benchmark examples).
pub fn winplace_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("WINPLACE_BIN") {
        return PathBuf::from(bin);
    }
    if let Some(bin) = option_env!("CARGO_BIN_EXE_winplace") {
        return PathBuf::from(bin);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    target.join("release").join("winplace")
}

/// Where a controller's log goes.
#[derive(Debug, Clone)]
pub enum Log {
    /// Appended to this file of the work folder (a restarted controller's log follows its first).
    File(String),
    /// The caller's standard error (the benchmarks).
    Inherit,
}

/// How to start one controller: `winplace serve --place` with identity and kubeconfig token `id`
/// (see [`Controller::start`]).
#[derive(Debug, Clone)]
pub struct Launch {
    /// The work folder (kubeconfig, settings, Docker config, logs).
    pub dir: PathBuf,
    /// The API server's URL.
    pub api: String,
    /// The holder identity and the bearer token.
    pub id: String,
    /// `--place-deadline` in seconds.
    pub deadline: String,
    /// Other flags (`--insecure-registry …`, `--place-lease-duration …`).
    pub args: Vec<String>,
    /// Environment variables set (`HTTPS_PROXY`, …).
    pub env: Vec<(String, String)>,
    /// `RUST_LOG`.
    pub rust_log: String,
    /// Where its log goes.
    pub log: Log,
}

impl Launch {
    /// A controller `id` for the API server at `api`, working in `dir`: a 5 s deadline, the default
    /// Lease, logging at `info` to `<id>.log`.
    pub fn new(dir: &Path, api: &str, id: &str) -> Launch {
        Launch {
            dir: dir.to_path_buf(),
            api: api.to_string(),
            id: id.to_string(),
            deadline: "5".into(),
            args: Vec::new(),
            env: Vec::new(),
            rust_log: "winplace=info".into(),
            log: Log::File(format!("{id}.log")),
        }
    }

    /// `--insecure-registry` for each of `hosts`.
    pub fn insecure(mut self, hosts: &[impl AsRef<str>]) -> Launch {
        for host in hosts {
            self.args.push("--insecure-registry".into());
            self.args.push(host.as_ref().to_string());
        }
        self
    }

    /// More flags.
    pub fn args(mut self, args: &[&str]) -> Launch {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// `--place-deadline SECONDS`.
    pub fn deadline(mut self, seconds: &str) -> Launch {
        self.deadline = seconds.to_string();
        self
    }

    /// `--place-lease-duration SECONDS`.
    pub fn lease(self, seconds: &str) -> Launch {
        self.args(&["--place-lease-duration", seconds])
    }

    /// An environment variable.
    pub fn env(mut self, name: &str, value: &str) -> Launch {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Starts it.
    pub fn start(self) -> Controller {
        Controller::start(self)
    }
}

/// One `winplace serve --place` process; killed on drop.
pub struct Controller {
    child: Child,
    /// Its holder identity and token.
    pub id: String,
    /// Where it serves `/metrics`, `/readyz` and the API.
    pub listen: String,
}

impl Controller {
    /// Starts `launch`: a kubeconfig of its own token, settings that support the 2019, 2022 and 2025
    /// builds (2019 is not among the defaults), no Docker config of the machine (the pull secrets are
    /// the only credentials), no kubeconfig or proxy of the environment but what `launch` sets.
    pub fn start(launch: Launch) -> Controller {
        let dir = &launch.dir;
        let kubeconfig = kubeconfig(dir, &launch.api, &launch.id);
        let settings = dir.join("settings.yaml");
        std::fs::write(
            &settings,
            "supportedBuilds: [10.0.17763, 10.0.20348, 10.0.26100]\n",
        )
        .expect("write settings");
        let listen = format!("127.0.0.1:{}", oci_registry::free_port());
        let stderr = match &launch.log {
            Log::File(name) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(dir.join(name))
                    .expect("log file"),
            ),
            Log::Inherit => Stdio::inherit(),
        };
        let bin = winplace_bin();
        let mut command = Command::new(&bin);
        command
            .args(["serve", "--place", "--kubeconfig"])
            .arg(&kubeconfig)
            .arg("--settings")
            .arg(&settings)
            .args(["--place-identity", &launch.id])
            .args(["--place-deadline", &launch.deadline])
            .args(["--listen", &listen])
            .args(&launch.args)
            .env("DOCKER_CONFIG", dir)
            .env("HOME", dir)
            .env("RUST_LOG", &launch.rust_log);
        for name in [
            "KUBECONFIG",
            "HTTPS_PROXY",
            "https_proxy",
            "HTTP_PROXY",
            "http_proxy",
            "NO_PROXY",
            "no_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            command.env_remove(name);
        }
        for (name, value) in &launch.env {
            command.env(name, value);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (cargo build --release -p winplace first, or set WINPLACE_BIN)",
                    bin.display()
                )
            });
        Controller {
            child,
            id: launch.id,
            listen,
        }
    }

    /// SIGTERM, as the kubelet stops a container.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill -TERM");
        assert!(status.success());
    }

    /// SIGKILL: no last words.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `limit` for the process to exit.
    pub fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// The status and body of a `GET` of `path` from this controller's server (`/readyz`, …); `None`
    /// while it does not answer.
    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(&self.listen).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .ok()?;
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).ok()?;
        let raw = String::from_utf8_lossy(&raw).to_string();
        let (head, body) = raw.split_once("\r\n\r\n")?;
        let status = head.split_whitespace().nth(1)?.parse().ok()?;
        let body = if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            dechunk(body)
        } else {
            body.to_string()
        };
        Some((status, body))
    }

    /// The body of `path`, which must answer 200.
    pub fn get_ok(&self, path: &str) -> String {
        match self.get(path) {
            Some((200, body)) => body,
            other => panic!("GET {path}: {other:?}"),
        }
    }

    /// The value of the series `name` (exact, labels included) on its `/metrics`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        metric_in(&self.get_ok("/metrics"), name)
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A chunked HTTP/1.1 body, joined.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The value of the series `name` (exact, labels included) in a `/metrics` text.
pub fn metric_in(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The sum of the `winplace_place_released_total` series in a `/metrics` text.
pub fn released_in(text: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with("winplace_place_released_total{"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// Polls `done` until it holds (the controller works while the test waits); fails after `limit` with
/// the controllers' logs (`*.log` in `dir`).
pub async fn until_within(dir: &Path, what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < limit,
            "timed out: {what}; winplace's logs:\n{}",
            logs(dir)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// [`until_within`] 30 s.
pub async fn until(dir: &Path, what: &str, done: impl FnMut() -> bool) {
    until_within(dir, what, Duration::from_secs(30), done).await
}

/// Every `*.log` of `dir`, each after its name.
pub fn logs(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "log") {
            out.push_str(&format!("== {}\n", path.display()));
            out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    out
}

/// The pod `name` of the tests' namespace as the API server has it.
pub fn pod(api: &FakeApi, name: &str) -> Value {
    api.get("Pod", &format!("{NAMESPACE}/{name}")).expect(name)
}

/// Its scheduling gates.
pub fn gates(api: &FakeApi, name: &str) -> Value {
    pod(api, name)["spec"]
        .get("schedulingGates")
        .cloned()
        .unwrap_or(json!([]))
}

/// Whether winplace's gate is gone from it.
pub fn ungated(api: &FakeApi, name: &str) -> bool {
    !gates(api, name)
        .as_array()
        .is_some_and(|g| g.iter().any(|g| g["name"] == GATE))
}

/// How many pods of any namespace still carry winplace's gate.
pub fn gated(api: &FakeApi) -> usize {
    api.all("Pod")
        .iter()
        .filter(|p| {
            p["spec"]["schedulingGates"]
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g["name"] == GATE))
        })
        .count()
}

/// Placed by the rules' pins (not released): the Windows OS selector and the Windows toleration are
/// there, the gate and its label gone.
pub fn placed(api: &FakeApi, name: &str) -> bool {
    let p = pod(api, name);
    ungated(api, name)
        && p["metadata"]["labels"].get(GATED_LABEL).is_none()
        && p["spec"]["nodeSelector"]["kubernetes.io/os"] == "windows"
        && p["spec"]["tolerations"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["key"] == "os"))
}

/// The values of the build pin (required node affinity on the build label), or null.
pub fn build_values(pod: &Value) -> Value {
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"][0]["matchExpressions"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["key"] == BUILD))
        .map(|e| e["values"].clone())
        .unwrap_or(Value::Null)
}

/// Asserts that the pod `name` is pinned to Windows (the OS nodeSelector) and to builds that include
/// `build` (the build pin), and returns it for the test's further checks.
pub fn assert_pinned_to(api: &FakeApi, name: &str, build: &str) -> Value {
    let p = pod(api, name);
    assert_eq!(
        p["spec"]["nodeSelector"]["kubernetes.io/os"], "windows",
        "{name}: {p}"
    );
    assert!(
        build_values(&p)
            .as_array()
            .is_some_and(|v| v.contains(&json!(build))),
        "{name}: {p}"
    );
    p
}

/// The Events about the pod `name`.
pub fn events_for(api: &FakeApi, name: &str) -> Vec<Value> {
    api.all("EventsEvent")
        .into_iter()
        .filter(|e| e["regarding"]["name"] == name)
        .collect()
}

/// How many patches of the pod `name` were answered `status`.
pub fn patches_of(api: &FakeApi, name: &str, status: u16) -> usize {
    let key = format!("{NAMESPACE}/{name}");
    api.lock()
        .patches
        .iter()
        .filter(|(k, _, s)| *k == key && *s == status)
        .count()
}

/// Every write the fake received, in order.
pub fn writes(api: &FakeApi) -> Vec<Write> {
    api.lock().writes.clone()
}

/// The patches of the pod `name`: (who, status).
pub fn patches_by(api: &FakeApi, name: &str) -> Vec<(String, u16)> {
    let what = format!("PATCH Pod {NAMESPACE}/{name}");
    writes(api)
        .into_iter()
        .filter(|w| w.what == what)
        .map(|w| (w.token, w.status))
        .collect()
}

/// The holder of the Lease `namespace/name`, if any.
pub fn holder(api: &FakeApi, lease: &str) -> Option<String> {
    api.get("Lease", lease)
        .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
        .filter(|h| !h.is_empty())
}

/// When `who` first took (or renewed) a Lease with an accepted write.
pub fn first_lease_write(api: &FakeApi, who: &str) -> Option<Instant> {
    writes(api)
        .iter()
        .find(|w| w.token == who && w.what.contains(" Lease ") && (200..300).contains(&w.status))
        .map(|w| w.at)
}

/// A registry's answer to a manifest request when its storage is down: 500.
pub fn server_error() -> Reply {
    Reply::Full {
        status: "500 Internal Server Error",
        headers: vec!["Content-Type: application/json".into()],
        body: br#"{"errors":[{"code":"UNKNOWN","message":"storage backend down"}]}"#.to_vec(),
    }
}

/// An OCI index with one amd64 entry per `os` (Windows entries are Windows Server 2022), as a
/// registry answers a manifest request.
pub fn index_reply(oses: &[&str]) -> Reply {
    let manifests: Vec<Value> = oses
        .iter()
        .enumerate()
        .map(|(i, os)| {
            let architecture = if i == 0 { "amd64" } else { "arm64" };
            let mut platform = json!({"os": os, "architecture": architecture});
            if *os == "windows" {
                platform["os.version"] = json!("10.0.20348.2762");
            }
            json!({"mediaType": oci_registry::MANIFEST, "size": 500,
                   "digest": format!("sha256:{:064x}", i + 1), "platform": platform})
        })
        .collect();
    let body = serde_json::to_vec(
        &json!({"schemaVersion": 2, "mediaType": oci_registry::INDEX,
        "manifests": manifests}),
    )
    .expect("json");
    Reply::Full {
        status: "200 OK",
        headers: vec![
            format!("Content-Type: {}", oci_registry::INDEX),
            format!("Docker-Content-Digest: sha256:{:x}", Sha256::digest(&body)),
        ],
        body,
    }
}
