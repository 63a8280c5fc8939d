//! A waPC host for `policy.wasm`, built the way Kubewarden's policy-server hosts policies: wasmtime through
//! the `wapc` and `wasmtime-provider` crates, answering the guest's host calls (with
//! [`winplace_policy_wasm::host_answers`], as the dashboard's in-page host does).
//!
//! Used by the integration tests and the benchmarks; not shipped.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use wapc::WapcHost;
use wasmtime_provider::WasmtimeEngineProviderBuilder;
use winplace_policy_wasm::host_answers::{HostAnswers, reflector_id};

/// Answers a host-capability call (`binding`, `namespace`, `operation`, payload) for the guest; `None`
/// makes the call fail, as policy-server does for a capability it does not grant.
pub type Capability = dyn Fn(&str, &str, &str, &[u8]) -> Option<Vec<u8>> + Send + Sync;

/// One host call the guest made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCall {
    /// `binding/namespace/operation`, e.g. `kubewarden/oci/v1/oci_manifest`.
    pub call: String,
    /// The request payload (JSON for every Kubewarden capability).
    pub payload: Vec<u8>,
}

/// A loaded policy, ready for `validate` and `validate_settings` calls.
pub struct PolicyHost {
    host: WapcHost,
    calls: Arc<Mutex<Vec<HostCall>>>,
}

/// A host that grants the cluster context of `policy-wasm/test_data/context/` (its Nodes and
/// RuntimeClasses), answered as every host of this repository answers
/// ([`winplace_policy_wasm::host_answers`]: Lists pruned to the asked `field_masks`).
pub fn test_cluster() -> Result<HostAnswers, String> {
    let mut answers = HostAnswers::default();
    answers.insert_list("v1", "Node", test_data("context/nodes.json")?);
    answers.insert_list(
        "node.k8s.io/v1",
        "RuntimeClass",
        test_data("context/runtimeclasses.json")?,
    );
    Ok(answers)
}

/// `answers` as the [`Capability`] of [`PolicyHost::new`]: what they hold is answered, the rest refused.
///
/// `list_resources_all` is answered as policy-server answers it: from a reflector per
/// [`reflector_id`] (the objects its label selector selects, pruned to its field masks), made on the first
/// request of that id and kept; each request then serializes the List anew
/// ([`HostAnswers::stored_list`]; docs/reference/kubewarden-hosting.md §4).
pub fn capability(answers: HostAnswers) -> Box<Capability> {
    let reflectors: Mutex<HashMap<String, Arc<serde_json::Value>>> = Mutex::default();
    Box::new(move |binding, namespace, operation, payload| {
        if (binding, namespace, operation) != ("kubewarden", "kubernetes", "list_resources_all") {
            return answers.answer(binding, namespace, operation, payload).ok();
        }
        let request: serde_json::Value = serde_json::from_slice(payload).ok()?;
        let id = reflector_id(&request);
        let kept = reflectors.lock().ok()?.get(&id).cloned();
        let list = match kept {
            Some(list) => list,
            None => {
                let list = Arc::new(answers.stored_list(&request).ok()?);
                reflectors.lock().ok()?.insert(id, list.clone());
                list
            }
        };
        serde_json::to_vec(&*list).ok()
    })
}

/// Where `cargo xtask build` puts the optimized policy.
pub fn built_policy_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../static/policy.wasm")
}

/// Reads the built policy, with a message that says how to build it when it is missing.
pub fn built_policy() -> Result<Vec<u8>, String> {
    let path = built_policy_path();
    std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e}; build it first with `cargo xtask build`",
            path.display()
        )
    })
}

/// Compiles the benchmark fixture `policy-host/template-policy` (the logic of Kubewarden's Rust policy
/// template) for wasm32-wasip1 in the release profile, as the template's own Makefile builds it, and
/// reads the module. Runs the cargo that runs this process (`$CARGO`), into the same target directory.
pub fn template_policy() -> Result<Vec<u8>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(&cargo)
        .args([
            "build",
            "-p",
            "winplace-template-policy",
            "--lib",
            "--target",
            "wasm32-wasip1",
            "--release",
            "--message-format=json-render-diagnostics",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{cargo} build -p winplace-template-policy: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{cargo} build -p winplace-template-policy failed ({})",
            output.status
        ));
    }
    // The module's path, from cargo's compiler-artifact message for the fixture.
    let wasm = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| m["target"]["name"] == "winplace_template_policy")
        .flat_map(|m| m["filenames"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .find(|f| f.extension().is_some_and(|e| e == "wasm"))
        .ok_or("cargo named no .wasm for winplace-template-policy")?;
    std::fs::read(&wasm).map_err(|e| format!("{}: {e}", wasm.display()))
}

/// A wasmtime engine configured as `WasmtimeEngineProviderBuilder` configures its own (the defaults), with
/// wasmtime's compilation cache in the target directory: `wasmtime-cache/` in the profile's folder of the
/// running executable (`target/debug/` for the tests in `deps/` and `replay` in `examples/`). Compiling
/// policy.wasm takes cranelift 15–20 s in a test build; every host after the first in a test run loads
/// the cached machine code instead (wasmtime keys it by the module's bytes, its own version and the
/// engine's settings).
fn cached_engine() -> Result<wasmtime::Engine, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this executable's path: {e}"))?;
    let mut folder = exe.parent().unwrap_or(std::path::Path::new("."));
    if folder.ends_with("deps") || folder.ends_with("examples") {
        folder = folder.parent().unwrap_or(folder);
    }
    let dir = folder.join("wasmtime-cache");
    let mut cache = wasmtime::CacheConfig::new();
    cache.with_directory(dir);
    let mut config = wasmtime::Config::default();
    config.cache(Some(
        wasmtime::Cache::new(cache).map_err(|e| format!("wasmtime cache: {e}"))?,
    ));
    wasmtime::Engine::new(&config).map_err(|e| format!("wasmtime: {e}"))
}

/// The high-water mark of the guest's linear memory: its greatest size, in bytes, since the host was
/// made (a wasm memory only grows, `memory.grow`, so this is also its size now). What Kubewarden 1.38's
/// policy-server caps per evaluation (256 MiB, `docs/reference/kubewarden-hosting.md` §6).
#[derive(Debug, Clone, Default)]
pub struct GuestMemory(Arc<AtomicUsize>);

impl GuestMemory {
    /// The greatest size the guest's memory reached, in bytes.
    pub fn peak_bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }
}

/// A linear memory on the host's heap that records its greatest size: wasmtime's memory, through
/// [`wasmtime::MemoryCreator`], with no reservation and no guard pages (the engine of
/// [`PolicyHost::new_metered`] says so), so that compiled code checks bounds and the base may move.
struct MeteredMemory {
    bytes: Vec<u8>,
    peak: Arc<AtomicUsize>,
}

// SAFETY: `as_ptr` points at `byte_size()` zeroed, owned bytes; wasmtime re-reads it after `grow_to`
// (the memory may move: the engine has no reservation); nothing else touches the bytes.
unsafe impl wasmtime::LinearMemory for MeteredMemory {
    fn byte_size(&self) -> usize {
        self.bytes.len()
    }

    fn byte_capacity(&self) -> usize {
        self.bytes.capacity()
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        self.bytes.resize(new_size, 0);
        self.peak.fetch_max(new_size, Ordering::Relaxed);
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.bytes.as_ptr().cast_mut()
    }
}

/// Makes [`MeteredMemory`]s that report to one [`GuestMemory`].
struct MeteredMemories(Arc<AtomicUsize>);

// SAFETY: every memory is zero-filled and owned by the instance it is made for; no reservation or
// guard is asked of it (the engine is configured with none, and a request for one is refused).
unsafe impl wasmtime::MemoryCreator for MeteredMemories {
    fn new_memory(
        &self,
        _ty: wasmtime::MemoryType,
        minimum: usize,
        _maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn wasmtime::LinearMemory>, String> {
        if reserved_size_in_bytes.is_some_and(|r| r > 0) || guard_size_in_bytes > 0 {
            return Err(format!(
                "a metered memory has no reservation or guard (asked {reserved_size_in_bytes:?}, {guard_size_in_bytes})"
            ));
        }
        self.0.fetch_max(minimum, Ordering::Relaxed);
        Ok(Box::new(MeteredMemory {
            bytes: vec![0; minimum],
            peak: self.0.clone(),
        }))
    }
}

impl PolicyHost {
    /// Loads `module` with a host that answers logging and the given capabilities.
    pub fn new(module: &[u8], capability: Option<Box<Capability>>) -> Result<Self, String> {
        Self::with_engine(module, capability, cached_engine()?)
    }

    /// [`PolicyHost::new`], with the guest's linear memory on the host's heap and its high-water mark
    /// kept ([`GuestMemory`]): the measurement of `examples/guest_memory.rs`. The engine differs from
    /// [`PolicyHost::new`]'s only in where memories live (no virtual reservation, no guard pages, so
    /// compiled code checks bounds): the guest runs the same code and grows its memory the same way.
    pub fn new_metered(
        module: &[u8],
        capability: Option<Box<Capability>>,
    ) -> Result<(Self, GuestMemory), String> {
        let meter = GuestMemory::default();
        let mut config = wasmtime::Config::default();
        config
            .memory_reservation(0)
            .memory_guard_size(0)
            .memory_reservation_for_growth(0)
            .guard_before_linear_memory(false)
            // Copy-on-write initialization maps the module's data into an mmap'd memory: off, so that
            // the data segments are copied into ours.
            .memory_init_cow(false)
            .with_host_memory(Arc::new(MeteredMemories(meter.0.clone())));
        let engine = wasmtime::Engine::new(&config).map_err(|e| format!("wasmtime: {e}"))?;
        Ok((Self::with_engine(module, capability, engine)?, meter))
    }

    fn with_engine(
        module: &[u8],
        capability: Option<Box<Capability>>,
        engine: wasmtime::Engine,
    ) -> Result<Self, String> {
        let engine = WasmtimeEngineProviderBuilder::new()
            .engine(engine)
            .module_bytes(module)
            .build()
            .map_err(|e| format!("wasmtime: {e}"))?;
        let calls = Arc::new(Mutex::new(Vec::new()));
        let seen = calls.clone();
        let callback =
            move |_id: u64, binding: &str, namespace: &str, operation: &str, payload: &[u8]| {
                if let Ok(mut calls) = seen.lock() {
                    calls.push(HostCall {
                        call: format!("{binding}/{namespace}/{operation}"),
                        payload: payload.to_vec(),
                    });
                }
                // The SDK logs through kubewarden/tracing/log; policy-server prints it, we only accept it.
                if (binding, namespace, operation) == ("kubewarden", "tracing", "log") {
                    return Ok(Vec::new());
                }
                match capability
                    .as_ref()
                    .and_then(|c| c(binding, namespace, operation, payload))
                {
                    Some(answer) => Ok(answer),
                    None => Err(
                        format!("unsupported host call {binding}/{namespace}/{operation}").into(),
                    ),
                }
            };
        let host = WapcHost::new(Box::new(engine), Some(Box::new(callback)))
            .map_err(|e| format!("waPC host: {e}"))?;
        Ok(PolicyHost { host, calls })
    }

    /// Calls a guest function with `payload` as it is and returns the guest's answer as it is (the bytes
    /// compared with the browser host's), or the guest's error.
    pub fn call_raw(&self, operation: &str, payload: &[u8]) -> Result<Vec<u8>, String> {
        self.host
            .call(operation, payload)
            .map_err(|e| format!("{operation}: {e}"))
    }

    /// Calls a guest function with a JSON payload and parses its JSON answer.
    pub fn call(
        &self,
        operation: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        let bytes = serde_json::to_vec(payload).map_err(|e| e.to_string())?;
        let answer = self
            .host
            .call(operation, &bytes)
            .map_err(|e| format!("{operation}: {e}"))?;
        serde_json::from_slice(&answer).map_err(|e| format!("{operation} answered non-JSON: {e}"))
    }

    /// `validate` with `{"request": request, "settings": settings}`: a ValidationResponse.
    pub fn validate(
        &self,
        request: &serde_json::Value,
        settings: &serde_json::Value,
    ) -> Result<serde_json::Value, String> {
        self.call(
            "validate",
            &serde_json::json!({ "request": request, "settings": settings }),
        )
    }

    /// The host calls the guest made so far (`binding/namespace/operation`).
    pub fn host_calls(&self) -> Vec<String> {
        self.calls
            .lock()
            .map(|c| c.iter().map(|h| h.call.clone()).collect())
            .unwrap_or_default()
    }

    /// The host calls the guest made so far, with their payloads; log calls left out.
    pub fn capability_calls(&self) -> Vec<HostCall> {
        self.calls
            .lock()
            .map(|c| {
                c.iter()
                    .filter(|h| h.call != "kubewarden/tracing/log")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Forgets the calls recorded so far (between requests on one warm instance).
    pub fn clear_host_calls(&self) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.clear();
        }
    }
}

/// An AdmissionRequest for `object`, shaped as the API server sends it (every field policy-server reads);
/// the namespace is the object's, else `default`. Built by [`winplace_policy_wasm::request`], as the
/// dashboard's browser host builds its requests.
pub fn admission_request(operation: &str, object: &serde_json::Value) -> serde_json::Value {
    winplace_policy_wasm::request::request(operation, object, "default")
}

/// The directory of the policy's AdmissionReview fixtures (`policy-wasm/test_data`).
pub fn test_data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy-wasm/test_data")
}

/// A JSON fixture of `policy-wasm/test_data` (e.g. `pod-windows-unpinned.json`, `context/nodes.json`).
pub fn test_data(name: &str) -> Result<serde_json::Value, String> {
    let path = test_data_dir().join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
