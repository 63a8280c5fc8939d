//! The heavy answers (`/api/summary`, `/api/nodes`, `/api/workloads`, `/api/context`), serialized and
//! compressed once per published state and shared by every request that asks the same question.
//!
//! Under load (200 connections on `/api/nodes` and `/api/workloads` at 1,000 nodes / 30,000 pods) every
//! request used to copy and serialize the whole report on the async workers: ~55 requests/s, 1.3 GB, and
//! `/healthz` waited up to 1.7 s behind them. Now:
//!
//! * an answer is keyed by the question (route and query) and the [`Meta`] it carries, so it is built once
//!   per published revision (and per freshness change) and then served as shared [`Bytes`];
//! * builds run on the blocking pool, at most [`Answers::build_permits`] at a time, so the async workers
//!   that answer `/healthz` and `/readyz` never serialize anything;
//! * the gzip body is built with the JSON, so a hit costs no compression either; the response is marked
//!   [`Precompressed`] so that the router's compression layer leaves it alone;
//! * at most [`MAX_ENTRIES`] answers are kept per state; further questions are built (under the same
//!   bound) without being kept, so memory stays bounded whatever the queries.

use crate::state::published::Published;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{OnceCell, Semaphore};
use winplace_api::{Meta, worst_first};

/// Most answers kept for one published state.
pub const MAX_ENTRIES: usize = 64;

/// Why an answer could not be built (a bug, never the client's fault: answered 500).
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The answer did not serialize.
    #[error("cannot serialize the answer: {0}")]
    Serialize(#[from] serde_json::Error),
    /// The build panicked or was cancelled.
    #[error("building the answer failed: {0}")]
    Build(#[from] tokio::task::JoinError),
    /// The build gate was closed (the server is shutting down).
    #[error("the server is shutting down")]
    Closed,
}

/// One serialized answer: its JSON and the same JSON gzipped.
#[derive(Debug)]
pub struct Answer {
    /// The JSON body.
    pub json: Bytes,
    /// The JSON body, gzipped.
    pub gzip: Bytes,
}

/// A response extension: the body is already compressed, or deliberately sent as it is (the router's
/// compression layer skips responses that carry it).
#[derive(Debug, Clone, Copy)]
pub struct Precompressed;

impl Answer {
    fn new(json: Vec<u8>) -> std::io::Result<Self> {
        let mut gz = flate2::write::GzEncoder::new(
            Vec::with_capacity(json.len() / 8),
            flate2::Compression::default(),
        );
        gz.write_all(&json)?;
        Ok(Answer {
            gzip: Bytes::from(gz.finish()?),
            json: Bytes::from(json),
        })
    }

    /// The response for a request with these headers: gzip when the client accepts it.
    pub fn respond(&self, request: &HeaderMap) -> Response {
        let gzip = accepts_gzip(request);
        let body = if gzip { &self.gzip } else { &self.json };
        let mut response = body.clone().into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if gzip {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response.extensions_mut().insert(Precompressed);
        response
    }
}

/// Whether `Accept-Encoding` accepts gzip (`gzip` or `*`, without `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

/// What the pages of `/api/workloads` read, computed once per revision.
#[derive(Debug)]
pub struct WorkloadIndex {
    /// Indexes into the report's workloads, in [`worst_first`] order.
    pub order: Vec<usize>,
    /// Namespaces of all workloads, sorted.
    pub namespaces: Vec<String>,
    /// Rules some workload has a finding of, sorted.
    pub rules: Vec<String>,
}

impl WorkloadIndex {
    fn of(published: &Published) -> Self {
        let workloads = &published.report.workloads;
        let mut order: Vec<usize> = (0..workloads.len()).collect();
        order.sort_by(|&a, &b| worst_first(&workloads[a], &workloads[b]));
        let namespaces: BTreeSet<&str> = workloads
            .iter()
            .filter_map(|w| w.owner.namespace.as_deref())
            .collect();
        let rules: BTreeSet<&str> = workloads
            .iter()
            .flat_map(|w| w.findings.iter().map(|f| f.rule.as_str()))
            .collect();
        WorkloadIndex {
            order,
            namespaces: namespaces.into_iter().map(String::from).collect(),
            rules: rules.into_iter().map(String::from).collect(),
        }
    }
}

/// Views of one revision that several answers share.
#[derive(Debug)]
pub struct Views {
    revision: u64,
    workloads: OnceLock<WorkloadIndex>,
}

impl Views {
    fn new(revision: u64) -> Self {
        Views {
            revision,
            workloads: OnceLock::new(),
        }
    }

    /// The workload order and the filter choices of `published` (which must be of this revision).
    pub fn workloads(&self, published: &Published) -> &WorkloadIndex {
        debug_assert_eq!(published.revision, self.revision);
        self.workloads.get_or_init(|| WorkloadIndex::of(published))
    }
}

type Slot = Arc<OnceCell<Arc<Answer>>>;

#[derive(Debug, Default)]
struct Cache {
    /// The state the entries answer for.
    meta: Option<Meta>,
    entries: HashMap<String, Slot>,
    views: Option<Arc<Views>>,
}

/// The answer cache and the bound on concurrent builds; one per server.
#[derive(Debug)]
pub struct Answers {
    cache: Mutex<Cache>,
    gate: Arc<Semaphore>,
    permits: usize,
    builds: AtomicU64,
}

impl Default for Answers {
    fn default() -> Self {
        // Half the cores, at least one: the other half keeps serving (probes, cached answers, assets).
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_permits(cores.div_ceil(2).max(1))
    }
}

impl Answers {
    /// A cache that builds at most `permits` answers at a time.
    pub fn with_permits(permits: usize) -> Self {
        Answers {
            cache: Mutex::new(Cache::default()),
            gate: Arc::new(Semaphore::new(permits)),
            permits,
            builds: AtomicU64::new(0),
        }
    }

    /// How many answers may be built at the same time.
    pub fn build_permits(&self) -> usize {
        self.permits
    }

    /// Answers built so far (a hit builds nothing).
    pub fn builds(&self) -> u64 {
        self.builds.load(Ordering::Relaxed)
    }

    /// The gate every build passes: holding its permits holds every build (tests use it to keep heavy
    /// requests in flight).
    pub fn gate(&self) -> Arc<Semaphore> {
        self.gate.clone()
    }

    /// The answer to the question `key` for the published state `published`, whose [`Meta`] is `meta`:
    /// shared when it was built already, else built by `build` (on the blocking pool, under the gate)
    /// from that state and its meta.
    pub async fn get<F>(
        &self,
        published: Arc<Published>,
        meta: Meta,
        key: String,
        build: F,
    ) -> Result<Arc<Answer>, AnswerError>
    where
        F: FnOnce(&Published, Meta, &Views) -> serde_json::Result<Vec<u8>> + Send + 'static,
    {
        let (slot, views) = self.slot(&published, &meta, key);
        let gate = self.gate.clone();
        let builds = &self.builds;
        let answer = slot
            .get_or_try_init(|| async move {
                let _permit = gate
                    .acquire_owned()
                    .await
                    .map_err(|_| AnswerError::Closed)?;
                builds.fetch_add(1, Ordering::Relaxed);
                tokio::task::spawn_blocking(move || {
                    let json = build(&published, meta, &views)?;
                    Answer::new(json)
                        .map(Arc::new)
                        .map_err(|e| AnswerError::Serialize(serde_json::Error::io(e)))
                })
                .await?
            })
            .await?;
        Ok(answer.clone())
    }

    /// The slot of `key` for this state (a fresh, unkept one when the state is older than the cache's or
    /// the cache is full) and the views of its revision.
    fn slot(&self, published: &Published, meta: &Meta, key: String) -> (Slot, Arc<Views>) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let cached_revision = cache.meta.as_ref().map(|m| m.freshness.revision);
        if cached_revision.is_some_and(|r| r > published.revision) {
            // A request that read the state just before a newer one was published.
            return (Slot::default(), Arc::new(Views::new(published.revision)));
        }
        if cache.meta.as_ref() != Some(meta) {
            cache.meta = Some(meta.clone());
            cache.entries.clear();
            if cache
                .views
                .as_ref()
                .is_none_or(|v| v.revision != published.revision)
            {
                cache.views = Some(Arc::new(Views::new(published.revision)));
            }
        }
        let views = cache
            .views
            .clone()
            .unwrap_or_else(|| Arc::new(Views::new(published.revision)));
        let full = cache.entries.len() >= MAX_ENTRIES;
        let slot = match cache.entries.get(&key) {
            Some(slot) => slot.clone(),
            None if full => Slot::default(),
            None => cache.entries.entry(key).or_default().clone(),
        };
        (slot, views)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_sent_only_when_accepted() {
        let rows = [
            ("gzip, deflate, br, zstd", true),
            ("br;q=1.0, gzip;q=0.8", true),
            ("GZIP", true),
            ("*", true),
            ("gzip;q=0", false),
            ("br", false),
            ("", false),
        ];
        for (accept, gzip) in rows {
            let mut headers = HeaderMap::new();
            headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(accept));
            assert_eq!(accepts_gzip(&headers), gzip, "{accept:?}");
        }
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn the_gzip_body_is_the_json() {
        let json = br#"{"nodes":[]}"#.repeat(100);
        let answer = Answer::new(json.clone()).unwrap();
        let mut back = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&answer.gzip[..]),
            &mut back,
        )
        .unwrap();
        assert_eq!(back, json);
        assert!(answer.gzip.len() < json.len());
    }
}
