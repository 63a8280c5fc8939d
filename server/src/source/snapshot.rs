//! `--snapshot FILE`: the output of `kubectl get nodes,pods,runtimeclasses -A -o json` (or `-o yaml`).

use super::objects::ClusterObjects;
use super::{ClusterSource, SourceEvent};
use anyhow::Context;
use futures::StreamExt;
use futures::stream::{self, BoxStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use winplace_api::{SourceInfo, SourceKind};

/// How often `--watch-snapshot` looks at the file.
const POLL: Duration = Duration::from_millis(500);

/// A cluster read from a file: once, or again whenever the file changes (`--watch-snapshot`).
pub struct SnapshotSource {
    name: String,
    path: PathBuf,
    objects: ClusterObjects,
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
    /// Reads and parses `path` (JSON or YAML; `-` reads standard input).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let name = path.display().to_string();
        let text = if name == "-" {
            std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
        } else {
            std::fs::read_to_string(path).with_context(|| format!("cannot read {name}"))?
        };
        let stamp = stamp(path);
        let objects = ClusterObjects::parse(&name, &text)?;
        if objects.skipped > 0 {
            tracing::info!(
                "{name}: skipped {} objects that are not Nodes, Pods or RuntimeClasses",
                objects.skipped
            );
        }
        Ok(SnapshotSource {
            name,
            path: path.to_path_buf(),
            objects,
            watch: false,
            stamp,
        })
    }

    /// Reloads the file whenever it changes (polled every 500 ms): each reload is a
    /// [`Change::Reset`](winplace_rules::audit::Change::Reset) announced like a watch event; a file
    /// that does not parse is a watch error and the last good state stays.
    pub fn watching(mut self, watch: bool) -> Self {
        self.watch = watch && self.name != "-";
        self
    }
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
        let first = super::once(self.objects.into_reset());
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
                    let read = tokio::fs::read_to_string(&path)
                        .await
                        .with_context(|| format!("cannot read {name}"))
                        .and_then(|text| ClusterObjects::parse(&name, &text));
                    let event = match read {
                        Ok(objects) => {
                            tracing::info!("{name} changed: reloaded");
                            SourceEvent::Change(objects.into_reset())
                        }
                        Err(e) => SourceEvent::WatchError(format!("{e:#}")),
                    };
                    return Some((event, (name, path, last)));
                }
            },
        );
        first.chain(reloads).boxed()
    }
}
