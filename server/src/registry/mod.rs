//! The registry client: what images' manifests say about their OS and Windows builds.
//!
//! The rules crate never fetches anything; this module reads the manifests and hands the answers in as
//! [`winplace_rules::rules::ImageFacts`], exactly as the Kubewarden policy hands in what its host's OCI
//! capability read. Used by `winplace check --resolve-images` ([`BlockingResolver`]) and by the server
//! (background resolution of live workloads' images, `GET /api/images/resolve`).
//!
//! * [`credentials`]: the Docker config file (`~/.docker/config.json`, `--registry-config FILE`);
//! * [`auth`]: the token challenge, and where the Docker config's credentials may be sent (the
//!   registry itself, a token realm over HTTPS or one named with `--insecure-registry`);
//! * `client` and `body`: our own HTTP client on reqwest (plain HTTP only for `--insecure-registry`
//!   hosts), every answer read with the cap of [`limits`];
//! * [`fetch`](mod@fetch): index → manifest → config blob, each checked against its [`digest`];
//! * [`facts`]: the platforms read, and what they mean for placement;
//! * [`cache`]: by reference and by digest for the process's life (bounded by bytes); on disk with an
//!   expiry for the CLI;
//! * [`error`]: why an image could not be resolved (unauthorized, not found, timeout, …);
//! * [`blocking`]: the CLI's synchronous front, on a runtime of its own.
//!
//! Limits: at most [`RegistryOptions::concurrency`] look-ups at once, and every look-up (connection,
//! token, manifest, config) within [`RegistryOptions::timeout`]; a batch ([`ImageResolver::resolve_all`])
//! finishes by its deadline whatever the registries do.

pub mod auth;
pub mod blocking;
mod body;
pub mod cache;
mod client;
pub mod credentials;
pub mod digest;
pub mod error;
pub mod facts;
mod fetch;
pub mod limits;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::registry::Registry;
use serde::Serialize;
use winplace_rules::rules::ImageFacts;
use winplace_rules::windows::{ImageRef, parse_image_ref};

pub use blocking::BlockingResolver;
pub use cache::DiskCache;
pub use credentials::{Auth, Credentials};
pub use error::{ResolveError, SetupError};
pub use facts::{ManifestFacts, Platform, PlatformSource};

use crate::metrics::{self, Series};
use cache::MemoryCache;
use client::RegistryClient;

/// The default time limit of a look-up (and of the CLI's whole resolution step).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default number of look-ups in flight at once.
pub const DEFAULT_CONCURRENCY: usize = 8;

/// How the client reaches registries.
#[derive(Debug)]
pub struct RegistryOptions {
    /// Registries (`HOST:PORT`) spoken to over plain HTTP, as containerd's and kwctl's insecure
    /// registries.
    pub insecure: Vec<String>,
    /// Credentials by registry.
    pub credentials: Credentials,
    /// Time limit of one look-up (every request it makes), and of a [`ImageResolver::resolve_all`] batch.
    pub timeout: Duration,
    /// Look-ups in flight at once.
    pub concurrency: usize,
    /// Answers kept on disk between runs (the CLI), if any.
    pub disk_cache: Option<DiskCache>,
    /// Bytes of answers kept in memory ([`cache::DEFAULT_MEMORY_BUDGET`]); the oldest go first.
    pub memory_budget: usize,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            insecure: Vec::new(),
            credentials: Credentials::anonymous(),
            timeout: DEFAULT_TIMEOUT,
            concurrency: DEFAULT_CONCURRENCY,
            disk_cache: None,
            memory_budget: cache::DEFAULT_MEMORY_BUDGET,
        }
    }
}

/// Counters for `/metrics` and the API.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolverStats {
    /// Look-ups asked for.
    pub lookups: u64,
    /// Look-ups answered from a cache.
    pub cache_hits: u64,
    /// Look-ups that failed.
    pub failures: u64,
    /// Bytes the answers kept in memory cost (within [`RegistryOptions::memory_budget`]).
    pub cache_bytes: u64,
}

impl ResolverStats {
    /// Adds the counters to a scrape's registry (`/metrics` shows them when the server resolves images).
    pub fn register(&self, registry: &mut Registry) {
        for (name, help, value) in [
            (
                "winplace_image_lookups_total",
                "Image manifest look-ups asked for (background resolution and /api/images/resolve).",
                self.lookups,
            ),
            (
                "winplace_image_cache_hits_total",
                "Image manifest look-ups answered from the cache.",
                self.cache_hits,
            ),
            (
                "winplace_image_lookup_failures_total",
                "Image manifest look-ups that failed (unauthorized, not found, timeout, unreachable).",
                self.failures,
            ),
        ] {
            metrics::add(registry, name, help, Series::counter_value(value));
        }
        metrics::add(
            registry,
            "winplace_image_cache_bytes",
            "Bytes the image answers kept in memory cost (bounded).",
            Series::gauge_value(self.cache_bytes),
        );
    }

    /// The counters alone in the Prometheus text format.
    ///
    /// ```
    /// let stats = winplace::registry::ResolverStats { lookups: 3, cache_hits: 1, failures: 1, cache_bytes: 900 };
    /// assert!(stats.exposition().contains("winplace_image_lookups_total 3\n"));
    /// assert!(stats.exposition().contains("winplace_image_cache_bytes 900\n"));
    /// ```
    pub fn exposition(&self) -> String {
        metrics::encode_with(|r| self.register(r))
    }
}

/// Resolves image references to what their registries say (see the module docs).
pub struct ImageResolver {
    client: RegistryClient,
    credentials: Credentials,
    timeout: Duration,
    permits: tokio::sync::Semaphore,
    memory: MemoryCache,
    disk: Option<DiskCache>,
    lookups: AtomicU64,
    cache_hits: AtomicU64,
    failures: AtomicU64,
    /// One turn per reference being fetched: concurrent look-ups of one reference wait for the first
    /// and take its answer from the cache (one registry look-up per distinct reference).
    in_flight:
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<tokio::sync::Mutex<()>>>>,
    /// Look-ups that went to the registry, by outcome (`ok` or [`ResolveError::kind`]).
    fetches: std::sync::Mutex<BTreeMap<&'static str, u64>>,
}

impl std::fmt::Debug for ImageResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageResolver")
            .field("timeout", &self.timeout)
            .field("cached", &self.memory.len())
            .finish_non_exhaustive()
    }
}

impl ImageResolver {
    /// A resolver with `options`.
    pub fn new(options: RegistryOptions) -> Self {
        ImageResolver {
            client: RegistryClient::new(options.insecure, options.timeout),
            credentials: options.credentials,
            timeout: options.timeout,
            permits: tokio::sync::Semaphore::new(options.concurrency.max(1)),
            memory: MemoryCache::new(options.memory_budget),
            disk: options.disk_cache,
            lookups: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            in_flight: Default::default(),
            fetches: Default::default(),
        }
    }

    /// The time limit of one look-up.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// What the registry says about `image` (a reference as written in a pod), from a cache when it can.
    pub async fn resolve(&self, image: &str) -> Result<ManifestFacts, ResolveError> {
        self.resolve_with(image, &[]).await
    }

    /// [`Self::resolve`] presenting, for the image's registry, the first of `first` that has
    /// credentials for it (a pod's pull secrets), else the resolver's own Docker config. The answers are
    /// cached by reference, whoever asked.
    pub async fn resolve_with(
        &self,
        image: &str,
        first: &[Credentials],
    ) -> Result<ManifestFacts, ResolveError> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let result = self.lookup(image, first).await;
        if result.is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
        result
    }

    async fn lookup(
        &self,
        image: &str,
        first: &[Credentials],
    ) -> Result<ManifestFacts, ResolveError> {
        let reference = oci_reference(image)?;
        let key = reference.to_string();
        if let Some(found) = self.memory.get(&key, reference.digest.as_deref()) {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(found);
        }
        if let Some(found) = self.disk.as_ref().and_then(|d| d.get(&key)) {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
            self.memory.put(&key, &found);
            return Ok(found);
        }
        // Wait for a look-up of the same reference already under way, then read its answer.
        let turn = self
            .in_flight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(key.clone())
            .or_default()
            .clone();
        let result = {
            let _turn = turn.lock().await;
            match self.memory.get(&key, reference.digest.as_deref()) {
                Some(found) => {
                    self.cache_hits.fetch_add(1, Ordering::Relaxed);
                    Ok(found)
                }
                None => self.fetch(&reference, &key, image, first).await,
            }
        };
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        // The map's and this one: nobody else waits.
        if std::sync::Arc::strong_count(&turn) <= 2 {
            in_flight.remove(&key);
        }
        result
    }

    /// One look-up from the registry, counted by outcome, and cached when it succeeds.
    async fn fetch(
        &self,
        reference: &ImageRef,
        key: &str,
        image: &str,
        first: &[Credentials],
    ) -> Result<ManifestFacts, ResolveError> {
        let work = async {
            let _permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| ResolveError::Registry("the resolver is shutting down".into()))?;
            // A credential helper is a process that may hang: off the runtime, and within the limit.
            let mut chain = first.to_vec();
            chain.push(self.credentials.clone());
            let registry = reference.registry.clone();
            let auth = tokio::task::spawn_blocking(move || {
                chain
                    .iter()
                    .map(|c| c.auth_for(&registry))
                    .find(|a| *a != Auth::Anonymous)
                    .unwrap_or(Auth::Anonymous)
            })
            .await
            .map_err(|e| ResolveError::Registry(format!("reading the credentials failed: {e}")))?;
            fetch::fetch(&self.client, reference, &auth).await
        };
        let result = tokio::time::timeout(self.timeout, work)
            .await
            .unwrap_or(Err(ResolveError::Timeout(self.timeout)));
        let outcome = result.as_ref().map(|_| "ok").unwrap_or_else(|e| e.kind());
        *self
            .fetches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(outcome)
            .or_default() += 1;
        let facts = result?;
        tracing::debug!(image, digest = %facts.digest, "resolved");
        self.memory.put(key, &facts);
        if let Some(disk) = &self.disk {
            disk.put(key, &facts);
        }
        Ok(facts)
    }

    /// Look-ups that went to the registry (not answered from a cache), by outcome: `ok` or
    /// [`ResolveError::kind`].
    pub fn fetches(&self) -> BTreeMap<&'static str, u64> {
        self.fetches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Adds this resolver's series to a scrape's registry: [`ResolverStats::register`] and the registry
    /// look-ups by outcome (`winplace_image_registry_requests_total`).
    pub fn register(&self, registry: &mut Registry) {
        self.stats().register(registry);
        let mut fetches = self.fetches();
        fetches.entry("ok").or_default();
        metrics::add(
            registry,
            "winplace_image_registry_requests_total",
            "Image look-ups that went to the registry (not answered from a cache), by outcome.",
            Series::counter_by("outcome", fetches),
        );
    }

    /// This resolver's series alone in the Prometheus text format.
    ///
    /// ```
    /// let resolver = winplace::registry::ImageResolver::new(Default::default());
    /// let text = resolver.exposition();
    /// assert!(text.contains("winplace_image_lookups_total 0\n"));
    /// assert!(text.contains("winplace_image_registry_requests_total{outcome=\"ok\"} 0\n"));
    /// ```
    pub fn exposition(&self) -> String {
        metrics::encode_with(|r| self.register(r))
    }

    /// Resolves every distinct image of `images` at once (within the concurrency bound), all finished
    /// by `deadline`: what is still running then is a timeout.
    pub async fn resolve_all_until(
        &self,
        images: &[String],
        deadline: tokio::time::Instant,
    ) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
        self.resolve_all_with(images, &[], deadline).await
    }

    /// [`Self::resolve_all_until`] presenting `first`'s credentials before the resolver's own
    /// ([`Self::resolve_with`]).
    pub async fn resolve_all_with(
        &self,
        images: &[String],
        first: &[Credentials],
        deadline: tokio::time::Instant,
    ) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
        let mut distinct: Vec<&String> = images.iter().collect();
        distinct.sort();
        distinct.dedup();
        let lookups = distinct.into_iter().map(|image| async move {
            let result = tokio::time::timeout_at(deadline, self.resolve_with(image, first))
                .await
                .unwrap_or(Err(ResolveError::Timeout(self.timeout)));
            (image.clone(), result)
        });
        futures::future::join_all(lookups)
            .await
            .into_iter()
            .collect()
    }

    /// [`Self::resolve_all_until`] with a deadline one timeout from now.
    pub async fn resolve_all(
        &self,
        images: &[String],
    ) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        self.resolve_all_until(images, deadline).await
    }

    /// The counters so far.
    pub fn stats(&self) -> ResolverStats {
        ResolverStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            cache_bytes: self.memory.bytes() as u64,
        }
    }

    /// Writes the on-disk cache, if there is one.
    pub fn save_cache(&self) {
        if let Some(disk) = &self.disk {
            disk.save();
        }
    }
}

/// The reference of an image as written in a pod, normalized as the kubelet reads it (the rules crate's
/// grammar): no tag and no digest means `latest`.
pub fn oci_reference(image: &str) -> Result<ImageRef, ResolveError> {
    let mut parsed =
        parse_image_ref(image).ok_or_else(|| ResolveError::InvalidReference(image.to_string()))?;
    if parsed.tag.is_none() && parsed.digest.is_none() {
        parsed.tag = Some("latest".into());
    }
    Ok(parsed)
}

/// The answers of a batch as the rules take them: what each resolved image's manifest says, and why
/// the others could not be read.
pub fn image_facts(results: &BTreeMap<String, Result<ManifestFacts, ResolveError>>) -> ImageFacts {
    let mut facts = ImageFacts::default();
    for (image, result) in results {
        match result {
            Ok(found) => {
                if let Some(class) = found.class(image) {
                    facts.manifests.insert(image.clone(), class);
                    facts.digests.insert(image.clone(), found.digest.clone());
                }
            }
            Err(error) => {
                facts.unresolved.insert(image.clone(), error.to_string());
            }
        }
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_normalized_like_the_kubelet_reads_them() {
        let rows = [
            ("nginx", "docker.io/library/nginx:latest"),
            ("127.0.0.1:5000/team/app:1", "127.0.0.1:5000/team/app:1"),
            (
                "r.example/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "r.example/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            ),
        ];
        for (image, want) in rows {
            assert_eq!(oci_reference(image).expect(image).to_string(), want);
        }
        assert_eq!(
            oci_reference("Not A Reference").map(|r| r.to_string()),
            Err(ResolveError::InvalidReference("Not A Reference".into()))
        );
    }

    #[test]
    fn failures_become_unresolved_and_answers_classes() {
        let windows = ManifestFacts {
            digest: "sha256:aa".into(),
            source: PlatformSource::Index,
            platforms: vec![
                Platform {
                    os: "linux".into(),
                    architecture: "amd64".into(),
                    os_version: None,
                    os_features: Vec::new(),
                },
                Platform {
                    os: "windows".into(),
                    architecture: "amd64".into(),
                    os_version: Some("10.0.20348.2762".into()),
                    os_features: Vec::new(),
                },
            ],
        };
        let results = BTreeMap::from([
            ("a:1".to_string(), Ok(windows)),
            ("b:1".to_string(), Err(ResolveError::NotFound)),
        ]);
        let facts = image_facts(&results);
        assert_eq!(
            facts.manifests["a:1"].os,
            winplace_rules::windows::ImageOs::Windows {
                builds: vec![20348]
            }
        );
        assert_eq!(facts.digests["a:1"], "sha256:aa");
        assert!(facts.unresolved["b:1"].contains("not found"));
        assert!(!facts.digests.contains_key("b:1"));
    }
}
