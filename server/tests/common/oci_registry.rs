//! What the registry tests share: Debian's `docker-registry` on 127.0.0.1 (with or without token
//! auth), OCI layouts written by the test and pushed with Debian's `skopeo`, a token server, and a
//! listener that never answers. Used by `registry.rs` and `place.rs` (`common` in `integration.rs`).

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";
pub const SKOPEO_BIN: &str = "/usr/bin/skopeo";
pub const TOKEN_USER: &str = "ci";
pub const TOKEN_PASSWORD: &str = "s3cret";
pub const TOKEN_SERVICE: &str = "winplace-test-registry";
pub const TOKEN_ISSUER: &str = "winplace-test-token-issuer";

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/registry")
        .join(name)
}

pub fn require_tools() {
    for bin in [REGISTRY_BIN, SKOPEO_BIN] {
        assert!(
            Path::new(bin).exists(),
            "{bin} is missing: `apt-get install docker-registry skopeo` (cargo xtask test installs them)"
        );
    }
}

/// Runs skopeo with `args` and returns what it printed; a failure fails the test with skopeo's error.
pub fn skopeo(args: &[&str]) -> Vec<u8> {
    let out = Command::new(SKOPEO_BIN)
        .args(args)
        .output()
        .expect("skopeo runs");
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// [`skopeo`] for a command that prints JSON (`inspect` without `--raw`).
pub fn skopeo_json(args: &[&str]) -> Value {
    serde_json::from_slice(&skopeo(args)).expect("skopeo prints JSON")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A `docker-registry` process on 127.0.0.1, storage in a temporary directory; killed on drop.
pub struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Starts a registry; `auth` is the YAML of its `auth:` section, if any.
    pub fn start(auth: Option<String>) -> Registry {
        require_tools();
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let storage = dir.path().join("storage");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n",
            storage.display()
        );
        if let Some(auth) = auth {
            config.push_str(&auth);
        }
        let config_path = dir.path().join("config.yml");
        std::fs::write(&config_path, config).expect("write the registry config");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry starts");
        let registry = Registry {
            child,
            port,
            _dir: dir,
        };
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the registry did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Pushes `tag` of the layout at `dir` to `repo:tag` with skopeo (every platform of an index).
    pub fn push(&self, layout: &Path, tag: &str, repo: &str, creds: Option<&str>) {
        let mut args = vec![
            "--insecure-policy",
            "copy",
            "--all",
            "--dest-tls-verify=false",
        ];
        if let Some(creds) = creds {
            args.extend(["--dest-creds", creds]);
        }
        let from = format!("oci:{}:{tag}", layout.display());
        let to = format!("docker://{}/{repo}:{tag}", self.host());
        args.extend([from.as_str(), to.as_str()]);
        skopeo(&args);
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An OCI image layout being written: blobs by digest, and tags in `index.json`.
pub struct Layout {
    pub dir: PathBuf,
    tags: Vec<Value>,
}

/// A descriptor: media type, digest, size.
pub fn descriptor(media_type: &str, bytes: &[u8], digest: &str) -> Value {
    json!({"mediaType": media_type, "digest": digest, "size": bytes.len()})
}

pub const INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";

impl Layout {
    pub fn new(dir: &Path) -> Layout {
        std::fs::create_dir_all(dir.join("blobs/sha256")).expect("mkdir");
        std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#)
            .expect("write oci-layout");
        Layout {
            dir: dir.to_path_buf(),
            tags: Vec::new(),
        }
    }

    pub fn blob(&self, bytes: &[u8]) -> String {
        let hex = format!("{:x}", Sha256::digest(bytes));
        std::fs::write(self.dir.join("blobs/sha256").join(&hex), bytes).expect("write blob");
        format!("sha256:{hex}")
    }

    /// A single-platform image: one empty layer and a config naming its platform.
    pub fn image(&self, os: &str, os_version: Option<&str>) -> Value {
        let layer = vec![0u8; 1024]; // an empty tar archive
        let layer_digest = self.blob(&layer);
        let mut config = json!({
            "architecture": "amd64",
            "os": os,
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
            "config": {},
        });
        if let Some(v) = os_version {
            config["os.version"] = json!(v);
        }
        let config = serde_json::to_vec(&config).expect("json");
        let config_digest = self.blob(&config);
        let manifest = serde_json::to_vec(&json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST,
            "config": descriptor("application/vnd.oci.image.config.v1+json", &config, &config_digest),
            "layers": [descriptor("application/vnd.oci.image.layer.v1.tar", &layer, &layer_digest)],
        }))
        .expect("json");
        let digest = self.blob(&manifest);
        let mut d = descriptor(MANIFEST, &manifest, &digest);
        d["platform"] = json!({"architecture": "amd64", "os": os});
        if let Some(v) = os_version {
            d["platform"]["os.version"] = json!(v);
        }
        d
    }

    /// An image index over `images` (descriptors with their platforms).
    pub fn index(&self, images: Vec<Value>) -> Value {
        let index = serde_json::to_vec(&json!({
            "schemaVersion": 2, "mediaType": INDEX, "manifests": images,
        }))
        .expect("json");
        let digest = self.blob(&index);
        descriptor(INDEX, &index, &digest)
    }

    /// Tags `target` (an image or an index descriptor) and rewrites `index.json`.
    pub fn tag(&mut self, tag: &str, target: &Value) {
        let mut entry = target.clone();
        if let Some(object) = entry.as_object_mut() {
            object.remove("platform");
        }
        entry["annotations"] = json!({"org.opencontainers.image.ref.name": tag});
        self.tags.push(entry);
        let index = json!({"schemaVersion": 2, "manifests": self.tags});
        std::fs::write(
            self.dir.join("index.json"),
            serde_json::to_vec(&index).expect("json"),
        )
        .expect("write index.json");
    }
}

/// A TCP listener that accepts connections and never answers; the connections are held open.
pub fn hanging_listener() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

/// A token server for the registry's `auth: token:` scheme: `GET /token?service=…&scope=…` with basic
/// credentials answers `{"token": JWT}` granting the scopes asked for; without them, 401.
pub fn token_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let key = std::fs::read(data("token-key.pk8")).expect("token key");
    let cert = std::fs::read(data("token-cert.der")).expect("token cert");
    std::thread::spawn(move || {
        let key = ring::signature::RsaKeyPair::from_pkcs8(&key).expect("RSA key");
        for stream in listener.incoming().flatten() {
            let _ = answer_token_request(stream, &key, &cert);
        }
    });
    port
}

/// [`token_server`], counting the token requests that came without the credentials (anonymous pulls).
pub fn counted_token_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let key = std::fs::read(data("token-key.pk8")).expect("token key");
    let cert = std::fs::read(data("token-cert.der")).expect("token cert");
    let anonymous = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = anonymous.clone();
    std::thread::spawn(move || {
        let key = ring::signature::RsaKeyPair::from_pkcs8(&key).expect("RSA key");
        for stream in listener.incoming().flatten() {
            if let Ok(false) = answer_token_request(stream, &key, &cert) {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    (port, anonymous)
}

/// Answers one token request; `Ok(true)` when it carried the credentials.
pub fn answer_token_request(
    stream: TcpStream,
    key: &ring::signature::RsaKeyPair,
    cert: &[u8],
) -> std::io::Result<bool> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut authorized = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        let expected = base64::engine::general_purpose::STANDARD
            .encode(format!("{TOKEN_USER}:{TOKEN_PASSWORD}"));
        if line.to_ascii_lowercase().starts_with("authorization:")
            && line.trim_end().ends_with(&format!("Basic {expected}"))
        {
            authorized = true;
        }
    }
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let query = target.split_once('?').map(|(_, q)| q).unwrap_or("");
    let scopes: Vec<String> = query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| *k == "scope")
        .map(|(_, v)| percent_decode(v))
        .collect();
    let mut stream = stream;
    if !authorized {
        let body = r#"{"details":"credentials required"}"#;
        write!(
            stream,
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )?;
        return Ok(false);
    }
    let access: Vec<Value> = scopes
        .iter()
        .filter_map(|s| {
            let mut parts = s.splitn(3, ':');
            let (kind, name, actions) = (parts.next()?, parts.next()?, parts.next()?);
            Some(json!({"type": kind, "name": name, "actions": actions.split(',').collect::<Vec<_>>()}))
        })
        .collect();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let header = json!({"typ": "JWT", "alg": "RS256",
        "x5c": [base64::engine::general_purpose::STANDARD.encode(cert)]});
    let claims = json!({"iss": TOKEN_ISSUER, "sub": TOKEN_USER, "aud": TOKEN_SERVICE,
        "exp": now + 300, "nbf": now - 10, "iat": now - 10, "jti": format!("{now}-{}", scopes.len()),
        "access": access});
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| std::io::Error::other("signing failed"))?;
    let token = format!("{signing_input}.{}", b64(&signature));
    let body = json!({"token": token, "access_token": token, "expires_in": 300}).to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(true)
}

pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        out.push(b);
                        i += 3;
                    }
                    Err(_) => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
