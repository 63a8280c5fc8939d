//! A live cluster: kube-rs watchers on Nodes, Pods (all namespaces) and RuntimeClasses, resumed after
//! disconnects with backoff and relisted after `410 Gone`.
//!
//! Objects are trimmed on the watch stream (`.modify()`, as kube-rs's `pod_reflector` example does) to
//! what the audit reads. The initial lists of the three kinds (the watchers' `Init`, `InitApply`…,
//! `InitDone`) stream into the audit as one list ([`SourceEvent::ListBegin`], [`SourceEvent::Listed`]…,
//! [`SourceEvent::ListDone`] once every kind is listed); afterwards every watch event becomes one change,
//! and a relist of a kind upserts what it lists and deletes what it no longer lists. The source keeps
//! only the keys of what it has seen: the audit holds the objects.
//!
//! Events (`v1` and `events.k8s.io/v1`) are watched too, for the audit's incidents, and kept bounded:
//! each is reduced on the stream to a [`PodEvent`] when an error signature explains its message and
//! dropped otherwise; the source keeps no key of them (the audit keeps the latest few per pod and drops
//! them with the pod). They do not hold back the first sync, and their watch errors (a service account
//! without read access to events, say) are logged, not counted as the cluster's watch failing.

use super::{ClusterSource, SourceEvent};
use anyhow::Context;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, Pod};
use k8s_openapi::api::events::v1::Event as EventsEvent;
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Config};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;
use winplace_api::{SourceInfo, SourceKind};
use winplace_rules::audit::{Change, pod_key_of, split_key};
use winplace_rules::model::RuntimeClassEntry;
use winplace_rules::model::cluster_objects::{
    ClusterObject, RuntimeClassVersion, trim_node, trim_pod, trim_runtime_class,
};
use winplace_rules::model::events::{PodEvent, decode_event_value};

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
            .modify(|n| *n = trim_node(n))
            .map(|r| {
                r.map(Watched::Node)
                    .map_err(|e| format!("watching nodes: {e}"))
            });
        let pods = watcher(Api::<Pod>::all(self.client.clone()), config.clone())
            .default_backoff()
            .modify(|p| *p = trim_pod(std::mem::take(p)))
            .map(|r| {
                r.map(Watched::Pod)
                    .map_err(|e| format!("watching pods: {e}"))
            });
        let rcs = watcher(Api::<RuntimeClass>::all(self.client.clone()), config)
            .default_backoff()
            .modify(|rc| *rc = trim_runtime_class(std::mem::take(rc)))
            .map(|r| {
                r.map(Watched::RuntimeClass)
                    .map_err(|e| format!("watching runtimeclasses: {e}"))
            });
        let core_events = events_of(Api::<CoreEvent>::all(self.client.clone()), "v1");
        let new_events = events_of(
            Api::<EventsEvent>::all(self.client.clone()),
            "events.k8s.io/v1",
        );
        let mut merger = Merger::default();
        stream::select_all([
            nodes.boxed(),
            pods.boxed(),
            rcs.boxed(),
            core_events.boxed(),
            new_events.boxed(),
        ])
        .flat_map(move |item| stream::iter(merger.step(item)))
        .boxed()
    }
}

/// One watcher event of one of the kinds watched.
#[allow(clippy::large_enum_variant)] // short-lived, moved once: boxing would cost an allocation per event
pub enum Watched {
    /// Nodes.
    Node(watcher::Event<Node>),
    /// Pods.
    Pod(watcher::Event<Pod>),
    /// RuntimeClasses.
    RuntimeClass(watcher::Event<RuntimeClass>),
    /// An Event about a pod that a signature explains, added or changed (of either API).
    Event(Box<PodEvent>),
    /// An Event deleted: its key and its pod's.
    EventDeleted(PodEvent),
}

/// The explained pod events of `api` (`version` names it in logs): each reduced to a [`PodEvent`] or
/// dropped; watch errors logged and swallowed (see the module's doc).
fn events_of<K>(
    api: Api<K>,
    version: &'static str,
) -> impl futures::Stream<Item = Result<Watched, String>> + Send + 'static
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
    K: Send + Sync + 'static,
{
    let reduce = |event: &K| -> Option<PodEvent> {
        let value = serde_json::to_value(event).ok()?;
        decode_event_value(&value).ok().flatten()
    };
    watcher(api, watcher::Config::default())
        .default_backoff()
        .filter_map(move |item| {
            let out = match item {
                Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => {
                    reduce(&e).map(|e| Ok(Watched::Event(Box::new(e))))
                }
                Ok(watcher::Event::Delete(e)) => reduce(&e).map(|e| Ok(Watched::EventDeleted(e))),
                Ok(watcher::Event::Init | watcher::Event::InitDone) => None,
                Err(e) => {
                    tracing::warn!("watching {version} events (incidents only): {e}");
                    None
                }
            };
            futures::future::ready(out)
        })
}

/// A kind the source watches (trimmed on the stream): its key and how it becomes a change or an object of
/// a list.
trait Kind: Sized {
    fn key(&self) -> String;
    fn upsert(self) -> Change;
    fn listed(self) -> ClusterObject;
    fn deleted(key: &str) -> Change;
}

impl Kind for Node {
    fn key(&self) -> String {
        self.metadata.name.clone().unwrap_or_default()
    }
    fn upsert(self) -> Change {
        Change::Node(Box::new(self))
    }
    fn listed(self) -> ClusterObject {
        ClusterObject::Node(Box::new(self))
    }
    fn deleted(key: &str) -> Change {
        Change::NodeDeleted(key.to_string())
    }
}

impl Kind for Pod {
    fn key(&self) -> String {
        // The audit's own key, so that a deletion names the pod the audit holds.
        pod_key_of(self)
    }
    fn upsert(self) -> Change {
        Change::Pod(Box::new(self))
    }
    fn listed(self) -> ClusterObject {
        ClusterObject::Pod(Box::new(self))
    }
    fn deleted(key: &str) -> Change {
        let (ns, name) = split_key(key);
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
    fn listed(self) -> ClusterObject {
        ClusterObject::RuntimeClass(Box::new(entry(self)))
    }
    fn deleted(key: &str) -> Change {
        Change::RuntimeClassDeleted(key.to_string())
    }
}

/// The watched RuntimeClass (`node.k8s.io/v1`).
fn entry(object: RuntimeClass) -> RuntimeClassEntry {
    RuntimeClassEntry {
        api_version: RuntimeClassVersion::V1.api_version().into(),
        object,
    }
}

/// The watch state of one kind: keys only (the audit holds the objects).
struct Tracker<K> {
    /// The initial list is complete.
    listed: bool,
    /// The keys the audit holds (or will hold once the initial list is done).
    known: HashSet<String>,
    /// During a list: the keys listed so far.
    relist: Option<HashSet<String>>,
    _kind: std::marker::PhantomData<K>,
}

impl<K> Default for Tracker<K> {
    fn default() -> Self {
        Tracker {
            listed: false,
            known: HashSet::new(),
            relist: None,
            _kind: std::marker::PhantomData,
        }
    }
}

impl<K: Kind> Tracker<K> {
    /// Before the first sync: objects of the initial list go into the list under way (`out`); changes
    /// after this kind's list are held until every kind is listed (`held`).
    fn initial(
        &mut self,
        event: watcher::Event<K>,
        out: &mut Vec<SourceEvent>,
        held: &mut Vec<Change>,
    ) {
        match event {
            watcher::Event::Init => self.relist = Some(HashSet::new()),
            watcher::Event::InitApply(k) => {
                let key = k.key();
                if let Some(seen) = self.relist.as_mut() {
                    seen.insert(key.clone());
                }
                self.known.insert(key);
                out.push(SourceEvent::Listed(k.listed()));
            }
            watcher::Event::InitDone => {
                self.listed = true;
                held.extend(self.finish_relist());
            }
            event => held.extend(self.changes(event)),
        }
    }

    /// The end of a list: deletes what it did not list.
    fn finish_relist(&mut self) -> Vec<Change> {
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
            watcher::Event::InitDone => self.finish_relist(),
        }
    }
}

/// Turns the three watchers' events into source events.
#[derive(Default)]
pub struct Merger {
    nodes: Tracker<Node>,
    pods: Tracker<Pod>,
    runtime_classes: Tracker<RuntimeClass>,
    /// The initial list has begun.
    begun: bool,
    /// Changes of kinds already listed, held until every kind is.
    held: Vec<Change>,
    synced: bool,
}

impl Merger {
    /// The source events for one watcher item.
    pub fn step(&mut self, item: Result<Watched, String>) -> Vec<SourceEvent> {
        let watched = match item {
            Ok(w) => w,
            Err(e) => return vec![SourceEvent::WatchError(e)],
        };
        if let Watched::EventDeleted(e) = watched {
            let deleted = Change::EventDeleted {
                key: e.key,
                pod: e.pod,
            };
            if self.synced {
                return vec![SourceEvent::Change(deleted)];
            }
            self.held.push(deleted);
            return Vec::new();
        }
        if self.synced {
            let changes = match watched {
                Watched::Node(e) => self.nodes.changes(e),
                Watched::Pod(e) => self.pods.changes(e),
                Watched::RuntimeClass(e) => self.runtime_classes.changes(e),
                Watched::Event(e) => vec![Change::Event(e)],
                Watched::EventDeleted(_) => Vec::new(),
            };
            return changes.into_iter().map(SourceEvent::Change).collect();
        }
        let mut out = Vec::new();
        if !self.begun {
            self.begun = true;
            out.push(SourceEvent::ListBegin);
        }
        let held = &mut self.held;
        match watched {
            Watched::Node(e) => self.nodes.initial(e, &mut out, held),
            Watched::Pod(e) => self.pods.initial(e, &mut out, held),
            Watched::RuntimeClass(e) => self.runtime_classes.initial(e, &mut out, held),
            Watched::Event(e) => out.push(SourceEvent::Listed(ClusterObject::Event(e))),
            Watched::EventDeleted(_) => {}
        }
        if self.nodes.listed && self.pods.listed && self.runtime_classes.listed {
            self.synced = true;
            out.push(SourceEvent::ListDone);
            out.extend(self.held.drain(..).map(SourceEvent::Change));
            out.push(SourceEvent::Synced);
        }
        out
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
                SourceEvent::Change(Change::Reset { .. }) => "reset".into(),
                SourceEvent::ListBegin => "list".into(),
                SourceEvent::Listed(ClusterObject::Node(n)) => {
                    format!("+node {}", n.metadata.name.as_deref().unwrap_or(""))
                }
                SourceEvent::Listed(ClusterObject::Pod(p)) => format!("+pod {}", p.key()),
                SourceEvent::Listed(ClusterObject::RuntimeClass(_)) => "+rc".into(),
                SourceEvent::Listed(ClusterObject::Event(e)) => format!("+event {}", e.key),
                SourceEvent::Change(Change::Event(e)) => format!("event {}", e.key),
                SourceEvent::Change(Change::EventDeleted { key, .. }) => format!("-event {key}"),
                SourceEvent::ListDone => "listed".into(),
                SourceEvent::ListFailed(e) => format!("list failed {e}"),
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
    fn the_first_list_streams_and_completes_with_every_kind_then_relists_delete_what_is_gone() {
        let mut m = Merger::default();
        let steps: Vec<(Result<Watched, String>, Vec<&str>)> = vec![
            // The initial lists stream object by object, as they come.
            (Ok(Watched::Node(Event::Init)), vec!["list"]),
            (
                Ok(Watched::Node(Event::InitApply(node("a")))),
                vec!["+node a"],
            ),
            (
                Ok(Watched::Node(Event::InitApply(node("b")))),
                vec!["+node b"],
            ),
            (Ok(Watched::Node(Event::InitDone)), vec![]),
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (
                Ok(Watched::Pod(Event::InitApply(pod("x", "p1")))),
                vec!["+pod x/p1"],
            ),
            // The pod list restarts (a watch error mid-list): p1 is not listed again.
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (
                Ok(Watched::Pod(Event::InitApply(pod("x", "p0")))),
                vec!["+pod x/p0"],
            ),
            (Ok(Watched::Pod(Event::InitDone)), vec![]),
            // A node event before RuntimeClasses are listed is held until the list is done.
            (Ok(Watched::Node(Event::Delete(node("b")))), vec![]),
            (
                Err("watching runtimeclasses: boom".into()),
                vec!["error watching runtimeclasses: boom"],
            ),
            (Ok(Watched::RuntimeClass(Event::Init)), vec![]),
            (
                Ok(Watched::RuntimeClass(Event::InitDone)),
                vec!["listed", "-pod x/p1", "-node b", "synced"],
            ),
            (
                Ok(Watched::Pod(Event::Apply(pod("x", "p2")))),
                vec!["pod x/p2"],
            ),
            (
                Ok(Watched::Pod(Event::Delete(pod("x", "p2")))),
                vec!["-pod x/p2"],
            ),
            // A relist after 410 Gone: p0 is gone, p3 is new.
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (
                Ok(Watched::Pod(Event::InitApply(pod("x", "p3")))),
                vec!["pod x/p3"],
            ),
            (Ok(Watched::Pod(Event::InitDone)), vec!["-pod x/p0"]),
            (Ok(Watched::Node(Event::Apply(node("c")))), vec!["node c"]),
        ];
        for (i, (item, want)) in steps.into_iter().enumerate() {
            assert_eq!(describe(&m.step(item)), want, "step {i}");
        }
    }
}
