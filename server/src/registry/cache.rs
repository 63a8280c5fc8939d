//! Caches of what registries said: in memory for the process's life, by reference and by digest, within
//! a byte budget ([`MemoryCache`]); and on disk for the CLI, with an expiry ([`DiskCache`], under the XDG
//! cache directory), so that repeated `winplace check --resolve-images` runs do not ask again.
//!
//! Only answers are cached, never failures: a registry that was down is asked again next time.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::facts::ManifestFacts;

/// The default byte budget of the memory cache: 16 MiB, about 50,000 answers of a few platforms (an
/// answer of one platform costs about 300 bytes with its keys; one of the largest index read, 1,000
/// platforms, about 100 KB).
pub const DEFAULT_MEMORY_BUDGET: usize = 16 * 1024 * 1024;

/// Answers by reference (`127.0.0.1:5000/app:1`) and by digest (`sha256:…`), for the process's life,
/// costing at most a byte budget: when an answer would pass it, the oldest answers are forgotten first
/// (they are asked again when needed).
#[derive(Debug)]
pub(crate) struct MemoryCache {
    inner: Mutex<Budgeted>,
}

/// The two maps and the order answers came in, with what they cost.
#[derive(Debug)]
struct Budgeted {
    by_reference: HashMap<String, Arc<ManifestFacts>>,
    by_digest: HashMap<String, Arc<ManifestFacts>>,
    /// (reference, digest, cost), oldest first.
    order: VecDeque<(String, String, usize)>,
    bytes: usize,
    budget: usize,
}

impl MemoryCache {
    /// An empty cache that keeps at most `budget` bytes of answers.
    pub(crate) fn new(budget: usize) -> Self {
        MemoryCache {
            inner: Mutex::new(Budgeted {
                by_reference: HashMap::new(),
                by_digest: HashMap::new(),
                order: VecDeque::new(),
                bytes: 0,
                budget,
            }),
        }
    }

    /// The answer for `reference`, or for `digest` (a reference pinned by digest names the same
    /// document whatever its tag or repository path).
    pub(crate) fn get(&self, reference: &str, digest: Option<&str>) -> Option<ManifestFacts> {
        let inner = lock(&self.inner);
        inner
            .by_reference
            .get(reference)
            .or_else(|| digest.and_then(|d| inner.by_digest.get(d)))
            .map(|found| (**found).clone())
    }

    /// Remembers an answer under its reference and its digest, forgetting the oldest answers while
    /// the budget would be passed; an answer larger than the whole budget is not kept.
    pub(crate) fn put(&self, reference: &str, facts: &ManifestFacts) {
        let cost = cost(reference, facts);
        let mut inner = lock(&self.inner);
        if cost > inner.budget {
            return;
        }
        if inner.by_reference.contains_key(reference) {
            inner.forget(reference);
        }
        while inner.bytes + cost > inner.budget {
            let Some((oldest, _, _)) = inner.order.front().cloned() else {
                break;
            };
            inner.forget(&oldest);
        }
        let shared = Arc::new(facts.clone());
        inner
            .by_reference
            .insert(reference.to_string(), shared.clone());
        inner.by_digest.insert(facts.digest.clone(), shared);
        inner
            .order
            .push_back((reference.to_string(), facts.digest.clone(), cost));
        inner.bytes += cost;
    }

    /// Number of references remembered.
    pub(crate) fn len(&self) -> usize {
        lock(&self.inner).by_reference.len()
    }

    /// Bytes the remembered answers cost (as [`cost`] counts them).
    pub(crate) fn bytes(&self) -> usize {
        lock(&self.inner).bytes
    }
}

impl Budgeted {
    /// Drops `reference`'s answer (and its digest's, when no newer answer shares it).
    fn forget(&mut self, reference: &str) {
        let Some(at) = self.order.iter().position(|(r, _, _)| r == reference) else {
            return;
        };
        let Some((reference, digest, cost)) = self.order.remove(at) else {
            return;
        };
        self.by_reference.remove(&reference);
        if !self.order.iter().any(|(_, d, _)| *d == digest) {
            self.by_digest.remove(&digest);
        }
        self.bytes -= cost;
    }
}

/// What an answer costs in memory, roughly: its strings (twice the keys: both maps hold one) and a
/// fixed overhead per map entry and per platform.
fn cost(reference: &str, facts: &ManifestFacts) -> usize {
    const ENTRY: usize = 128;
    const PLATFORM: usize = 3 * std::mem::size_of::<String>();
    let platforms: usize = facts
        .platforms
        .iter()
        .map(|p| {
            PLATFORM
                + p.os.len()
                + p.architecture.len()
                + p.os_version.as_ref().map_or(0, String::len)
        })
        .sum();
    2 * ENTRY + reference.len() + 2 * facts.digest.len() + platforms
}

/// A poisoned lock only means another thread panicked while holding it; the map is still usable.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One cached answer with the time it was read (seconds since the Unix epoch).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiskEntry {
    fetched_at: u64,
    facts: ManifestFacts,
}

/// The on-disk cache file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct DiskFile {
    entries: BTreeMap<String, DiskEntry>,
}

/// The largest cache file read (and about the most written: the oldest entries are dropped first when
/// there are more than [`MAX_DISK_ENTRIES`]).
pub const MAX_DISK_BYTES: u64 = 64 * 1024 * 1024;

/// The most answers kept on disk.
pub const MAX_DISK_ENTRIES: usize = 20_000;

/// Answers by reference in a JSON file, each valid for `ttl` after it was read. A file that cannot be read
/// or written costs a warning, never the command.
#[derive(Debug)]
pub struct DiskCache {
    path: PathBuf,
    ttl: Duration,
    file: Mutex<DiskFile>,
}

impl DiskCache {
    /// `$XDG_CACHE_HOME/winplace/images.json`, else `$HOME/.cache/winplace/images.json`.
    pub fn default_path() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(base.join("winplace").join("images.json"))
    }

    /// Opens the cache at `path`, dropping expired entries. A file over [`MAX_DISK_BYTES`] is ignored
    /// (and replaced when the cache is saved).
    pub fn open(path: &Path, ttl: Duration) -> DiskCache {
        let mut file: DiskFile = match crate::bounded_read::read_path(path, MAX_DISK_BYTES) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                tracing::warn!(path = %path.display(), %error, "ignoring an unreadable image cache");
                DiskFile::default()
            }),
            Err(crate::bounded_read::ReadError::Io(_)) => DiskFile::default(),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "ignoring the image cache");
                DiskFile::default()
            }
        };
        let now = now_secs();
        file.entries
            .retain(|_, e| now.saturating_sub(e.fetched_at) < ttl.as_secs());
        DiskCache {
            path: path.to_path_buf(),
            ttl,
            file: Mutex::new(file),
        }
    }

    /// The answer for `reference`, if read less than the expiry ago.
    pub fn get(&self, reference: &str) -> Option<ManifestFacts> {
        let file = lock(&self.file);
        let entry = file.entries.get(reference)?;
        (now_secs().saturating_sub(entry.fetched_at) < self.ttl.as_secs())
            .then(|| entry.facts.clone())
    }

    /// Remembers an answer read now; past [`MAX_DISK_ENTRIES`], the oldest answer is dropped.
    pub fn put(&self, reference: &str, facts: &ManifestFacts) {
        let mut file = lock(&self.file);
        file.entries.insert(
            reference.to_string(),
            DiskEntry {
                fetched_at: now_secs(),
                facts: facts.clone(),
            },
        );
        while file.entries.len() > MAX_DISK_ENTRIES {
            let oldest = file
                .entries
                .iter()
                .min_by_key(|(_, e)| e.fetched_at)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(key) => file.entries.remove(&key),
                None => break,
            };
        }
    }

    /// Writes the file (atomically: a temporary file renamed over it).
    pub fn save(&self) {
        let result = (|| -> std::io::Result<()> {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)?;
            let bytes = serde_json::to_vec_pretty(&*lock(&self.file))?;
            let mut temp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut temp, &bytes)?;
            temp.persist(&self.path).map_err(|e| e.error)?;
            Ok(())
        })();
        if let Err(error) = result {
            tracing::warn!(path = %self.path.display(), %error, "cannot write the image cache");
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::facts::{Platform, PlatformSource};

    fn facts(digest: &str) -> ManifestFacts {
        ManifestFacts {
            digest: digest.into(),
            source: PlatformSource::Config,
            platforms: vec![Platform {
                os: "windows".into(),
                architecture: "amd64".into(),
                os_version: Some("10.0.20348.1".into()),
            }],
        }
    }

    #[test]
    fn memory_finds_by_reference_then_by_digest() {
        let cache = MemoryCache::new(DEFAULT_MEMORY_BUDGET);
        cache.put("r.example/app:1", &facts("sha256:aa"));
        assert_eq!(cache.get("r.example/app:1", None), Some(facts("sha256:aa")));
        assert_eq!(
            cache.get("r.example/app@sha256:aa", Some("sha256:aa")),
            Some(facts("sha256:aa"))
        );
        assert_eq!(cache.get("r.example/app:2", Some("sha256:bb")), None);
    }

    #[test]
    fn memory_stays_within_its_byte_budget_forgetting_the_oldest() {
        let one = cost("r.example/app:0", &facts("sha256:00"));
        let cache = MemoryCache::new(3 * one);
        for i in 0..10 {
            cache.put(
                &format!("r.example/app:{i}"),
                &facts(&format!("sha256:{i:02}")),
            );
            assert!(cache.bytes() <= 3 * one, "{} > {}", cache.bytes(), 3 * one);
        }
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get("r.example/app:0", Some("sha256:00")), None);
        assert_eq!(cache.get("r.example/app:9", None), Some(facts("sha256:09")));
        // The same reference again replaces its answer instead of counting twice.
        cache.put("r.example/app:9", &facts("sha256:09"));
        assert_eq!((cache.len(), cache.bytes()), (3, 3 * one));
        // An answer bigger than the whole budget is not kept, and evicts nothing.
        let mut huge = facts("sha256:ff");
        huge.platforms = vec![huge.platforms[0].clone(); 100];
        cache.put("r.example/huge:1", &huge);
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get("r.example/huge:1", None), None);
    }

    #[test]
    fn disk_entries_survive_a_reopen_and_expire() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("images.json");
        let cache = DiskCache::open(&path, Duration::from_secs(3600));
        cache.put("r.example/app:1", &facts("sha256:aa"));
        cache.save();
        let reopened = DiskCache::open(&path, Duration::from_secs(3600));
        assert_eq!(reopened.get("r.example/app:1"), Some(facts("sha256:aa")));
        // A zero expiry: everything read is already stale.
        let expired = DiskCache::open(&path, Duration::ZERO);
        assert_eq!(expired.get("r.example/app:1"), None);
        // A broken file is ignored, not fatal.
        std::fs::write(&path, "{not json").expect("write");
        assert_eq!(
            DiskCache::open(&path, Duration::from_secs(60)).get("x"),
            None
        );
    }
}
