//! A live cluster: kube-rs watchers on Nodes, Pods (all namespaces) and RuntimeClasses, resumed after
//! disconnects with backoff and relisted after `410 Gone`.
//!
//! The first [`Change::Reset`] waits until all three kinds are listed; afterwards every watch event
//! becomes one change, and a relist of a kind (the watcher's `Init` … `InitDone`) upserts what it lists
//! and deletes what it no longer lists. The source keeps only the keys of what it has seen: the audit
//! holds the objects.

use super::{ClusterSource, SourceEvent};
use anyhow::Context;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Config};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;
use winplace_api::{SourceInfo, SourceKind};
use winplace_rules::audit::Change;
use winplace_rules::model::RuntimeClassEntry;
use winplace_rules::model::cluster_objects::{
    RuntimeClassVersion, trim_node, trim_pod, trim_runtime_class,
};

/// How long the start-up probe waits for the API server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// A cluster reached through the Kubernetes API.
pub struct LiveSource {
    client: Client,
    description: String,
}

impl LiveSource {
    /// A source for `config` (a hand-built config in tests, a kubeconfig or in-cluster config otherwise).
    pub fn from_config(config: Config, description: String) -> anyhow::Result<Self> {
        let client = Client::try_from(config).context("cannot build the Kubernetes client")?;
        Ok(LiveSource {
            client,
            description,
        })
    }

    /// The cluster of kubeconfig `path` (default: $KUBECONFIG or ~/.kube/config), context `context`
    /// (default: the current context).
    pub async fn from_kubeconfig(
        path: Option<&Path>,
        context: Option<&str>,
    ) -> anyhow::Result<Self> {
        let options = kube::config::KubeConfigOptions {
            context: context.map(str::to_string),
            ..Default::default()
        };
        let config = match path {
            Some(path) => {
                let kubeconfig = kube::config::Kubeconfig::read_from(path)
                    .with_context(|| format!("cannot read kubeconfig {}", path.display()))?;
                Config::from_custom_kubeconfig(kubeconfig, &options).await
            }
            None => Config::from_kubeconfig(&options).await,
        }
        .context("cannot load the kubeconfig")?;
        let description = match context {
            Some(name) => format!("Live cluster: context {name} ({})", config.cluster_url),
            None => format!("Live cluster {}", config.cluster_url),
        };
        Self::from_config(config, description)
    }

    /// The default kubeconfig's cluster, else the in-cluster service account; `true` when in-cluster.
    pub async fn infer() -> anyhow::Result<(Self, bool)> {
        match Self::from_kubeconfig(None, None).await {
            Ok(source) => Ok((source, false)),
            Err(kubeconfig_error) => {
                let config = Config::incluster().map_err(|e| {
                    anyhow::anyhow!("{kubeconfig_error:#}; not in a cluster either: {e}")
                })?;
                let description = format!("Live cluster (in-cluster) {}", config.cluster_url);
                Ok((Self::from_config(config, description)?, true))
            }
        }
    }

    /// Asks the API server for its version: fails fast when nothing answers.
    pub async fn probe(&self) -> anyhow::Result<()> {
        match tokio::time::timeout(PROBE_TIMEOUT, self.client.apiserver_version()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                Err(anyhow::Error::new(e).context("the Kubernetes API server did not answer"))
            }
            Err(_) => anyhow::bail!(
                "the Kubernetes API server did not answer within {} s",
                PROBE_TIMEOUT.as_secs()
            ),
        }
    }
}

impl ClusterSource for LiveSource {
    fn info(&self) -> SourceInfo {
        SourceInfo {
            kind: SourceKind::Live,
            description: self.description.clone(),
        }
    }

    fn events(self: Box<Self>) -> BoxStream<'static, SourceEvent> {
        let config = watcher::Config::default();
        let nodes = watcher(Api::<Node>::all(self.client.clone()), config.clone())
            .default_backoff()
            .map(|r| {
                r.map(Watched::Node)
                    .map_err(|e| format!("watching nodes: {e}"))
            });
        let pods = watcher(Api::<Pod>::all(self.client.clone()), config.clone())
            .default_backoff()
            .map(|r| {
                r.map(Watched::Pod)
                    .map_err(|e| format!("watching pods: {e}"))
            });
        let rcs = watcher(Api::<RuntimeClass>::all(self.client), config)
            .default_backoff()
            .map(|r| {
                r.map(Watched::RuntimeClass)
                    .map_err(|e| format!("watching runtimeclasses: {e}"))
            });
        let mut merger = Merger::default();
        stream::select_all([nodes.boxed(), pods.boxed(), rcs.boxed()])
            .flat_map(move |item| stream::iter(merger.step(item)))
            .boxed()
    }
}

/// One watcher event of one of the three kinds.
#[allow(clippy::large_enum_variant)] // short-lived, moved once: boxing would cost an allocation per event
pub enum Watched {
    /// Nodes.
    Node(watcher::Event<Node>),
    /// Pods.
    Pod(watcher::Event<Pod>),
    /// RuntimeClasses.
    RuntimeClass(watcher::Event<RuntimeClass>),
}

/// A kind the source watches: its key and how it becomes a change.
trait Kind: Sized {
    fn key(&self) -> String;
    fn upsert(self) -> Change;
    fn deleted(key: &str) -> Change;
}

impl Kind for Node {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self) -> Change {
        Change::Node(Box::new(trim_node(&self)))
    }
    fn deleted(key: &str) -> Change {
        Change::NodeDeleted(key.to_string())
    }
}

impl Kind for Pod {
    fn key(&self) -> String {
        let ns = self.metadata.namespace.as_deref().unwrap_or("default");
        format!("{ns}/{}", self.metadata.name.as_deref().unwrap_or(""))
    }
    fn upsert(self) -> Change {
        Change::Pod(Box::new(trim_pod(self)))
    }
    fn deleted(key: &str) -> Change {
        let (ns, name) = key.split_once('/').unwrap_or(("default", key));
        Change::PodDeleted(ns.to_string(), name.to_string())
    }
}

impl Kind for RuntimeClass {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self) -> Change {
        Change::RuntimeClass(Box::new(entry(self)))
    }
    fn deleted(key: &str) -> Change {
        Change::RuntimeClassDeleted(key.to_string())
    }
}

/// The watched RuntimeClass (`node.k8s.io/v1`), trimmed.
fn entry(object: RuntimeClass) -> RuntimeClassEntry {
    RuntimeClassEntry {
        api_version: RuntimeClassVersion::V1.api_version().into(),
        object: trim_runtime_class(object),
    }
}

/// The watch state of one kind.
struct Tracker<K> {
    /// Before the first sync: what has been listed so far.
    initial: HashMap<String, K>,
    /// Before the first sync: the list is complete.
    listed: bool,
    /// After the first sync: the keys the audit holds.
    known: HashSet<String>,
    /// During a relist: the keys listed so far.
    relist: Option<HashSet<String>>,
}

impl<K> Default for Tracker<K> {
    fn default() -> Self {
        Tracker {
            initial: HashMap::new(),
            listed: false,
            known: HashSet::new(),
            relist: None,
        }
    }
}

impl<K: Kind> Tracker<K> {
    /// Before the first sync: collects; nothing is emitted.
    fn collect(&mut self, event: watcher::Event<K>) {
        match event {
            watcher::Event::Init => {
                self.initial.clear();
                self.listed = false;
            }
            watcher::Event::InitApply(k) | watcher::Event::Apply(k) => {
                self.initial.insert(k.key(), k);
            }
            watcher::Event::Delete(k) => {
                self.initial.remove(&k.key());
            }
            watcher::Event::InitDone => self.listed = true,
        }
    }

    /// The initial objects, once every kind is listed.
    fn take_initial(&mut self) -> Vec<K> {
        let initial = std::mem::take(&mut self.initial);
        self.known = initial.keys().cloned().collect();
        initial.into_values().collect()
    }

    /// After the first sync: one change per event; a finished relist deletes what it did not list.
    fn changes(&mut self, event: watcher::Event<K>) -> Vec<Change> {
        match event {
            watcher::Event::Init => {
                self.relist = Some(HashSet::new());
                Vec::new()
            }
            watcher::Event::InitApply(k) | watcher::Event::Apply(k) => {
                let key = k.key();
                if let Some(seen) = self.relist.as_mut() {
                    seen.insert(key.clone());
                }
                self.known.insert(key);
                vec![k.upsert()]
            }
            watcher::Event::Delete(k) => {
                let key = k.key();
                if let Some(seen) = self.relist.as_mut() {
                    seen.remove(&key);
                }
                self.known.remove(&key);
                vec![K::deleted(&key)]
            }
            watcher::Event::InitDone => {
                let Some(seen) = self.relist.take() else {
                    return Vec::new();
                };
                let gone: Vec<Change> = self
                    .known
                    .difference(&seen)
                    .map(|key| K::deleted(key))
                    .collect();
                self.known = seen;
                gone
            }
        }
    }
}

/// Turns the three watchers' events into source events.
#[derive(Default)]
pub struct Merger {
    nodes: Tracker<Node>,
    pods: Tracker<Pod>,
    runtime_classes: Tracker<RuntimeClass>,
    synced: bool,
}

impl Merger {
    /// The source events for one watcher item.
    pub fn step(&mut self, item: Result<Watched, String>) -> Vec<SourceEvent> {
        let watched = match item {
            Ok(w) => w,
            Err(e) => return vec![SourceEvent::WatchError(e)],
        };
        if self.synced {
            let changes = match watched {
                Watched::Node(e) => self.nodes.changes(e),
                Watched::Pod(e) => self.pods.changes(e),
                Watched::RuntimeClass(e) => self.runtime_classes.changes(e),
            };
            return changes.into_iter().map(SourceEvent::Change).collect();
        }
        match watched {
            Watched::Node(e) => self.nodes.collect(e),
            Watched::Pod(e) => self.pods.collect(e),
            Watched::RuntimeClass(e) => self.runtime_classes.collect(e),
        }
        if !(self.nodes.listed && self.pods.listed && self.runtime_classes.listed) {
            return Vec::new();
        }
        self.synced = true;
        let reset = Change::Reset {
            nodes: self.nodes.take_initial().iter().map(trim_node).collect(),
            pods: self.pods.take_initial().into_iter().map(trim_pod).collect(),
            runtime_classes: self
                .runtime_classes
                .take_initial()
                .into_iter()
                .map(entry)
                .collect(),
        };
        vec![SourceEvent::Change(reset), SourceEvent::Synced]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use watcher::Event;

    fn node(name: &str) -> Node {
        let mut n = Node::default();
        n.metadata.name = Some(name.into());
        n
    }

    fn pod(ns: &str, name: &str) -> Pod {
        let mut p = Pod::default();
        p.metadata.namespace = Some(ns.into());
        p.metadata.name = Some(name.into());
        p
    }

    /// A compact description of the events, for table assertions.
    fn describe(events: &[SourceEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| match e {
                SourceEvent::Change(Change::Reset {
                    nodes,
                    pods,
                    runtime_classes,
                }) => format!(
                    "reset {}/{}/{}",
                    nodes.len(),
                    pods.len(),
                    runtime_classes.len()
                ),
                SourceEvent::Change(Change::Node(n)) => {
                    format!("node {}", n.metadata.name.as_deref().unwrap_or(""))
                }
                SourceEvent::Change(Change::NodeDeleted(n)) => format!("-node {n}"),
                SourceEvent::Change(Change::Pod(p)) => format!("pod {}", p.key()),
                SourceEvent::Change(Change::PodDeleted(ns, n)) => format!("-pod {ns}/{n}"),
                SourceEvent::Change(Change::RuntimeClass(_)) => "rc".into(),
                SourceEvent::Change(Change::RuntimeClassDeleted(n)) => format!("-rc {n}"),
                SourceEvent::Synced => "synced".into(),
                SourceEvent::WatchError(e) => format!("error {e}"),
                SourceEvent::ImageFacts(_) => "images".into(),
            })
            .collect()
    }

    #[test]
    fn first_reset_waits_for_every_kind_then_relists_delete_what_is_gone() {
        let mut m = Merger::default();
        let steps: Vec<(Result<Watched, String>, Vec<&str>)> = vec![
            (Ok(Watched::Node(Event::Init)), vec![]),
            (Ok(Watched::Node(Event::InitApply(node("a")))), vec![]),
            (Ok(Watched::Node(Event::InitApply(node("b")))), vec![]),
            (Ok(Watched::Node(Event::InitDone)), vec![]),
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (Ok(Watched::Pod(Event::InitApply(pod("x", "p1")))), vec![]),
            (Ok(Watched::Pod(Event::InitDone)), vec![]),
            // A node event before RuntimeClasses are listed is folded into the reset.
            (Ok(Watched::Node(Event::Delete(node("b")))), vec![]),
            (
                Err("watching runtimeclasses: boom".into()),
                vec!["error watching runtimeclasses: boom"],
            ),
            (Ok(Watched::RuntimeClass(Event::Init)), vec![]),
            (
                Ok(Watched::RuntimeClass(Event::InitDone)),
                vec!["reset 1/1/0", "synced"],
            ),
            (
                Ok(Watched::Pod(Event::Apply(pod("x", "p2")))),
                vec!["pod x/p2"],
            ),
            (
                Ok(Watched::Pod(Event::Delete(pod("x", "p2")))),
                vec!["-pod x/p2"],
            ),
            // A relist after 410 Gone: p1 is gone, p3 is new.
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (
                Ok(Watched::Pod(Event::InitApply(pod("x", "p3")))),
                vec!["pod x/p3"],
            ),
            (Ok(Watched::Pod(Event::InitDone)), vec!["-pod x/p1"]),
            (Ok(Watched::Node(Event::Apply(node("c")))), vec!["node c"]),
        ];
        for (i, (item, want)) in steps.into_iter().enumerate() {
            assert_eq!(describe(&m.step(item)), want, "step {i}");
        }
    }
}
