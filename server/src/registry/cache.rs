//! Caches of what registries said: in memory for the process's life, by reference and by digest
//! ([`MemoryCache`]); and on disk for the CLI, with an expiry ([`DiskCache`], under the XDG cache
//! directory), so that repeated `winplace check --resolve-images` runs do not ask again.
//!
//! Only answers are cached, never failures: a registry that was down is asked again next time.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::facts::ManifestFacts;

/// Answers by reference (`127.0.0.1:5000/app:1`) and by digest (`sha256:…`), for the process's life.
#[derive(Debug, Default)]
pub(crate) struct MemoryCache {
    by_reference: Mutex<HashMap<String, ManifestFacts>>,
    by_digest: Mutex<HashMap<String, ManifestFacts>>,
}

impl MemoryCache {
    /// The answer for `reference`, or for `digest` (a reference pinned by digest names the same
    /// document whatever its tag or repository path).
    pub(crate) fn get(&self, reference: &str, digest: Option<&str>) -> Option<ManifestFacts> {
        if let Some(found) = lock(&self.by_reference).get(reference) {
            return Some(found.clone());
        }
        digest.and_then(|d| lock(&self.by_digest).get(d).cloned())
    }

    /// Remembers an answer under its reference and its digest.
    pub(crate) fn put(&self, reference: &str, facts: &ManifestFacts) {
        lock(&self.by_reference).insert(reference.to_string(), facts.clone());
        lock(&self.by_digest).insert(facts.digest.clone(), facts.clone());
    }

    /// Number of references remembered.
    pub(crate) fn len(&self) -> usize {
        lock(&self.by_reference).len()
    }
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

    /// Opens the cache at `path`, dropping expired entries.
    pub fn open(path: &Path, ttl: Duration) -> DiskCache {
        let mut file: DiskFile = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
                tracing::warn!(path = %path.display(), %error, "ignoring an unreadable image cache");
                DiskFile::default()
            }),
            Err(_) => DiskFile::default(),
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

    /// Remembers an answer read now.
    pub fn put(&self, reference: &str, facts: &ManifestFacts) {
        lock(&self.file).entries.insert(
            reference.to_string(),
            DiskEntry {
                fetched_at: now_secs(),
                facts: facts.clone(),
            },
        );
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
                os_features: Vec::new(),
            }],
        }
    }

    #[test]
    fn memory_finds_by_reference_then_by_digest() {
        let cache = MemoryCache::default();
        cache.put("r.example/app:1", &facts("sha256:aa"));
        assert_eq!(cache.get("r.example/app:1", None), Some(facts("sha256:aa")));
        assert_eq!(
            cache.get("r.example/app@sha256:aa", Some("sha256:aa")),
            Some(facts("sha256:aa"))
        );
        assert_eq!(cache.get("r.example/app:2", Some("sha256:bb")), None);
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
