//! `--snapshot FILE`: the output of `kubectl get nodes,pods,runtimeclasses -A -o json` (or `-o yaml`),
//! streamed into the audit object by object ([`objects::read`]) on a blocking thread, in chunks.
//!
//! A file is published only when it is complete and plausible ([`objects::Tally::plausible`]): a file
//! cut short, empty, or without nodes ends its list with [`SourceEvent::ListFailed`], and the last good
//! state stays.

pub use super::objects::MAX_SNAPSHOT_BYTES;
use super::objects::{self, SnapshotError};
use super::{ClusterSource, SourceEvent};
use anyhow::Context;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};
use winplace_api::{SourceInfo, SourceKind};

/// How often `--watch-snapshot` looks at the file.
const POLL: Duration = Duration::from_millis(500);

/// Objects handed over per message: the audit thread wakes once per chunk, not once per object.
const CHUNK: usize = 512;

/// A cluster read from a file: once, or again whenever the file changes (`--watch-snapshot`).
pub struct SnapshotSource {
    name: String,
    path: PathBuf,
    /// Standard input, read at [`SnapshotSource::load`] (it cannot be read twice).
    stdin: Option<String>,
    watch: bool,
    stamp: Option<Stamp>,
}

/// What tells that the file changed: modification time and length.
type Stamp = (Option<SystemTime>, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok(), meta.len()))
}

impl SnapshotSource {
    /// Checks that `path` can be read (`-` reads standard input now); the objects are read by
    /// [`ClusterSource::events`], one at a time.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let name = path.display().to_string();
        let stdin = if name == "-" {
            let bytes = crate::bounded_read::read_from(std::io::stdin(), MAX_SNAPSHOT_BYTES)
                .and_then(crate::bounded_read::text)
                .context("standard input")?;
            Some(bytes)
        } else {
            // Only a regular file is opened now: opening a FIFO would wait for its writer here.
            let meta = std::fs::metadata(path).with_context(|| format!("cannot read {name}"))?;
            if meta.is_file() {
                std::fs::File::open(path).with_context(|| format!("cannot read {name}"))?;
            }
            None
        };
        Ok(SnapshotSource {
            stamp: stamp(path),
            name,
            path: path.to_path_buf(),
            stdin,
            watch: false,
        })
    }

    /// Reloads the file whenever it changes (polled every 500 ms): each reload is a list announced like
    /// a watch event; a file that does not parse, or is not a cluster, ends its list with
    /// [`SourceEvent::ListFailed`] and the last good state stays.
    pub fn watching(mut self, watch: bool) -> Self {
        self.watch = watch && self.name != "-";
        self
    }
}

/// The events of one reading of the file: `ListBegin`, the objects, then `ListDone` (and `Synced` when
/// `first`) or `ListFailed`. A JSON file that goes wrong after its first objects were sent is read again
/// whole behind a second `ListBegin`, which replaces what was sent of the list.
fn read_file(
    name: String,
    path: PathBuf,
    text: Option<String>,
    first: bool,
) -> BoxStream<'static, SourceEvent> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<SourceEvent>>(4);
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let _ = tx.blocking_send(vec![SourceEvent::ListBegin]);
        if text.is_none() {
            // A JSON list in a regular file is read a window at a time, never held whole.
            let mut chunk = Vec::with_capacity(CHUNK);
            let mut sent = false;
            // How long the reader waited for the audit to take its chunks: the audit's share.
            let mut waited = Duration::ZERO;
            let streamed = super::json_stream::read(&path, &mut |object| {
                chunk.push(SourceEvent::Listed(object));
                if chunk.len() == CHUNK {
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                    let at = Instant::now();
                    let _ = tx.blocking_send(full);
                    waited += at.elapsed();
                    sent = true;
                }
            });
            if let super::json_stream::Streamed::Read(tally) = streamed {
                tracing::debug!(
                    "{name}: read a window at a time in {:.2} s ({} nodes, {} pods), of which {:.2} s \
                     waiting for the audit to take them",
                    started.elapsed().as_secs_f64(),
                    tally.nodes,
                    tally.pods,
                    waited.as_secs_f64()
                );
                let _ = tx.blocking_send(finish(&name, Ok(tally), chunk, first));
                return;
            }
            tracing::debug!(
                "{name}: not read a window at a time (after {:.2} s): reading it whole",
                started.elapsed().as_secs_f64()
            );
            // Read whole below, which says what is wrong: a new list replaces what was sent of it
            // (nothing was, unless the file went wrong after its first objects).
            drop(chunk);
            if sent {
                let _ = tx.blocking_send(vec![SourceEvent::ListBegin]);
            }
        }
        let text = match text {
            Some(text) => Ok(text),
            None => crate::bounded_read::read_text(&path, MAX_SNAPSHOT_BYTES)
                .map_err(|e| format!("{name}: {e}")),
        };
        let text = match text {
            Ok(text) => text,
            Err(e) => {
                let _ = tx.blocking_send(vec![SourceEvent::ListFailed(e)]);
                return;
            }
        };
        let mut chunk = Vec::with_capacity(CHUNK);
        let read = objects::read(&name, &text, &mut |object| {
            chunk.push(SourceEvent::Listed(object));
            if chunk.len() == CHUNK {
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                let _ = tx.blocking_send(full);
            }
        });
        drop(text);
        tracing::debug!(
            "{name}: read whole in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        let _ = tx.blocking_send(finish(&name, read, chunk, first));
    });
    stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|v| (v, rx)) })
        .flat_map(stream::iter)
        .boxed()
}

/// The last events of a reading: `chunk`, then `ListDone` (and `Synced` when `first`) when `read` made a
/// plausible cluster, else `ListFailed`.
fn finish(
    name: &str,
    read: Result<objects::Tally, SnapshotError>,
    mut chunk: Vec<SourceEvent>,
    first: bool,
) -> Vec<SourceEvent> {
    let last = match read.and_then(|tally| tally.plausible(name).map(|()| tally)) {
        Ok(tally) => {
            if tally.skipped > 0 {
                tracing::info!(
                    "{name}: skipped {} objects that are not Nodes, Pods, RuntimeClasses or Events about pods that winplace explains",
                    tally.skipped
                );
            }
            SourceEvent::ListDone
        }
        Err(e) => SourceEvent::ListFailed(not_published(&e)),
    };
    let done = matches!(last, SourceEvent::ListDone);
    chunk.push(last);
    if first && done {
        chunk.push(SourceEvent::Synced);
    }
    chunk
}

/// The reason shown for a file that was not published.
fn not_published(e: &SnapshotError) -> String {
    format!("{e} (not published)")
}

impl ClusterSource for SnapshotSource {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            kind: SourceKind::Snapshot,
            description: format!(
                "Snapshot {}: the cluster as it was when the file was written",
                self.name
            ),
        }
    }

    fn events(self: Box<Self>) -> BoxStream<'static, SourceEvent> {
        let first = read_file(self.name.clone(), self.path.clone(), self.stdin, true);
        if !self.watch {
            return first;
        }
        let (name, path, first_stamp) = (self.name, self.path, self.stamp);
        let reloads = stream::unfold(
            (name, path, first_stamp),
            |(name, path, mut last)| async move {
                loop {
                    tokio::time::sleep(POLL).await;
                    let now = stamp(&path);
                    if now.is_none() || now == last {
                        continue;
                    }
                    last = now;
                    tracing::info!("{name} changed: reloading");
                    let reading = read_file(name.clone(), path.clone(), None, false);
                    return Some((reading, (name, path, last)));
                }
            },
        )
        .flatten();
        first.chain(reloads).boxed()
    }
}
