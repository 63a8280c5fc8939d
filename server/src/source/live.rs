//! A live cluster: kube-rs watchers on Nodes, Pods (all namespaces) and RuntimeClasses, resumed after
//! disconnects with backoff and relisted after `410 Gone`.
//!
//! What goes wrong is said, and bounded: a list or the start of a watch that gets no answer fails after
//! a time limit ([`call_timeout`](super::call_timeout)); failures are retried after waits that double up
//! to a minute ([`backoff`](super::backoff)) and reported in words ([`watch_error`](super::watch_error))
//! as [`SourceEvent::WatchError`], and a kind that makes progress again as [`SourceEvent::WatchResumed`];
//! an object that does not decode is skipped with one warning instead of failing its whole list
//! ([`lenient`](super::lenient)).
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

use super::backoff::{Progress, Steps, WatchBackoff};
use super::call_timeout::CallTimeoutLayer;
use super::lenient::Decoded;
use super::watch_error::{Watch, describe};
use super::{ClusterSource, SourceEvent, WatchFailure};
use anyhow::Context;
use futures::stream::BoxStream;
use futures::{StreamExt, stream};
use k8s_openapi::api::core::v1::{Event as CoreEvent, Node, Pod};
use k8s_openapi::api::events::v1::Event as EventsEvent;
use k8s_openapi::api::node::v1::RuntimeClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Config, Resource};
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;
use winplace_api::{SourceInfo, SourceKind};
use winplace_rules::audit::{Change, pod_key, split_key};
use winplace_rules::model::RuntimeClassEntry;
use winplace_rules::model::cluster_objects::{
    ClusterObject, RuntimeClassVersion, trim_node, trim_pod, trim_runtime_class,
};
use winplace_rules::model::events::{PodEvent, decode_event_value};

/// How long the start-up probe waits for the API server.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The default time limit of a list and of a watch's start: the API server's own limit on requests
/// that are not watches (`--request-timeout`, 60 s by default; docs/reference/watches.md §1).
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(60);

/// How the live source talks to the API server (shortened in tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOptions {
    /// The time limit of a list (its whole answer) and of a watch's start.
    pub list_timeout: Duration,
    /// The waits between attempts of a failing watch.
    pub backoff: Steps,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            list_timeout: DEFAULT_LIST_TIMEOUT,
            backoff: Steps::default(),
        }
    }
}

/// The client configuration of kubeconfig `path` (default: $KUBECONFIG or ~/.kube/config), context
/// `context` (default: the current context), with winplace's User-Agent and kubectl's proxy
/// ([`crate::kube_client`]).
pub async fn kube_config(path: Option<&Path>, context: Option<&str>) -> anyhow::Result<Config> {
    crate::kube_client::from_kubeconfig(path, context).await
}

/// A cluster reached through the Kubernetes API.
pub struct LiveSource {
    client: Client,
    description: String,
    options: LiveOptions,
}

impl LiveSource {
    /// A source for `config` (a hand-built config in tests, a kubeconfig or in-cluster config otherwise).
    pub fn from_config(
        config: Config,
        description: String,
        options: LiveOptions,
    ) -> anyhow::Result<Self> {
        let client = kube::client::ClientBuilder::try_from(config)
            .context("cannot build the Kubernetes client")?
            .with_layer(&CallTimeoutLayer {
                limit: options.list_timeout,
            })
            .build();
        Ok(LiveSource {
            client,
            description,
            options,
        })
    }

    /// The cluster of kubeconfig `path` (default: $KUBECONFIG or ~/.kube/config), context `context`
    /// (default: the current context).
    pub async fn from_kubeconfig(
        path: Option<&Path>,
        context: Option<&str>,
        options: LiveOptions,
    ) -> anyhow::Result<Self> {
        let config = kube_config(path, context).await?;
        let description = match context {
            Some(name) => format!("Live cluster: context {name} ({})", config.cluster_url),
            None => format!("Live cluster {}", config.cluster_url),
        };
        Self::from_config(config, description, options)
    }

    /// The default kubeconfig's cluster, else the in-cluster service account; `true` when in-cluster.
    pub async fn infer(options: LiveOptions) -> anyhow::Result<(Self, bool)> {
        let (config, in_cluster) = crate::kube_client::infer().await?;
        let description = if in_cluster {
            format!("Live cluster (in-cluster) {}", config.cluster_url)
        } else {
            format!("Live cluster {}", config.cluster_url)
        };
        Ok((Self::from_config(config, description, options)?, in_cluster))
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
        let steps = self.options.backoff;
        let nodes = watch_kind(&self.client, steps, Watch::Nodes, |n: Node| trim_node(&n))
            .map(|r| r.map(Watched::Node));
        let pods =
            watch_kind(&self.client, steps, Watch::Pods, trim_pod).map(|r| r.map(Watched::Pod));
        let rcs = watch_kind(
            &self.client,
            steps,
            Watch::RuntimeClasses,
            trim_runtime_class,
        )
        .map(|r| r.map(Watched::RuntimeClass));
        let core_events = events_of(
            Api::<CoreEvent>::all(self.client.clone()),
            Watch::CoreEvents,
            steps,
        );
        let new_events = events_of(
            Api::<EventsEvent>::all(self.client.clone()),
            Watch::Events,
            steps,
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

/// The watcher of one kind: objects decoded one by one, trimmed on the stream (`.modify()`, as
/// kube-rs's `pod_reflector` example does), errors said in words and retried after [`WatchBackoff`].
fn watch_kind<K>(
    client: &Client,
    steps: Steps,
    which: Watch,
    trim: fn(K) -> K,
) -> impl futures::Stream<Item = Result<watcher::Event<Decoded<K>>, WatchFailure>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Default + serde::de::DeserializeOwned + std::fmt::Debug,
    K: Send + Sync + 'static,
{
    let progress = Progress::default();
    let seen = progress.clone();
    watcher(
        Api::<Decoded<K>>::all(client.clone()),
        watcher::Config::default(),
    )
    .inspect(move |item| seen.observe(item))
    .backoff(WatchBackoff::new(steps, progress))
    .modify(move |decoded| {
        if let Decoded::Ok(object) = decoded {
            *object = trim(std::mem::take(object));
        }
    })
    .map(move |r| {
        r.map_err(|e| WatchFailure {
            watch: which.resource(),
            message: describe(which, &e),
        })
    })
}

/// One watcher event of one of the kinds watched.
#[allow(clippy::large_enum_variant)] // short-lived, moved once: boxing would cost an allocation per event
pub enum Watched {
    /// Nodes.
    Node(watcher::Event<Decoded<Node>>),
    /// Pods.
    Pod(watcher::Event<Decoded<Pod>>),
    /// RuntimeClasses.
    RuntimeClass(watcher::Event<Decoded<RuntimeClass>>),
    /// An Event about a pod that a signature explains, added or changed (of either API).
    Event(Box<PodEvent>),
    /// An Event deleted: its key and its pod's.
    EventDeleted(PodEvent),
}

impl Watched {
    /// The kind this is about, and whether it shows the kind's watch working (anything but the `Init`
    /// kube-rs emits before each list attempt).
    fn progress(&self) -> Option<Watch> {
        let listed = |init: bool, which| (!init).then_some(which);
        match self {
            Watched::Node(e) => listed(matches!(e, watcher::Event::Init), Watch::Nodes),
            Watched::Pod(e) => listed(matches!(e, watcher::Event::Init), Watch::Pods),
            Watched::RuntimeClass(e) => {
                listed(matches!(e, watcher::Event::Init), Watch::RuntimeClasses)
            }
            Watched::Event(_) | Watched::EventDeleted(_) => None,
        }
    }
}

/// The explained pod events of `api` (`which` names it in logs): each reduced to a [`PodEvent`] or
/// dropped; watch errors logged (in words, once per backoff step) and swallowed (see the module's doc).
fn events_of<K>(
    api: Api<K>,
    which: Watch,
    steps: Steps,
) -> impl futures::Stream<Item = Result<Watched, WatchFailure>> + Send + 'static
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
    K: Send + Sync + 'static,
{
    let reduce = |event: &K| -> Option<PodEvent> {
        let value = serde_json::to_value(event).ok()?;
        decode_event_value(&value).ok().flatten()
    };
    let progress = Progress::default();
    let seen = progress.clone();
    watcher(api, watcher::Config::default())
        .inspect(move |item| seen.observe(item))
        .backoff(WatchBackoff::new(steps, progress))
        .filter_map(move |item| {
            let out = match item {
                Ok(watcher::Event::Apply(e) | watcher::Event::InitApply(e)) => {
                    reduce(&e).map(|e| Ok(Watched::Event(Box::new(e))))
                }
                Ok(watcher::Event::Delete(e)) => reduce(&e).map(|e| Ok(Watched::EventDeleted(e))),
                Ok(watcher::Event::Init | watcher::Event::InitDone) => None,
                Err(e) => {
                    tracing::warn!(
                        "{} (incidents only; retrying with backoff)",
                        describe(which, &e)
                    );
                    None
                }
            };
            futures::future::ready(out)
        })
}

/// A kind the source watches (trimmed on the stream): its key and how it becomes a change or an object of
/// a list.
trait Kind: Sized {
    /// Its key, from its metadata (a malformed object has its metadata too).
    fn key_of(meta: &ObjectMeta) -> String;
    fn upsert(self) -> Change;
    fn listed(self) -> ClusterObject;
    fn deleted(key: &str) -> Change;
}

impl Kind for Node {
    fn key_of(meta: &ObjectMeta) -> String {
        meta.name.clone().unwrap_or_default()
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
    fn key_of(meta: &ObjectMeta) -> String {
        // The audit's own key, so that a deletion names the pod the audit holds.
        pod_key(
            meta.namespace.as_deref().unwrap_or("default"),
            meta.name.as_deref().unwrap_or(""),
        )
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
    fn key_of(meta: &ObjectMeta) -> String {
        meta.name.clone().unwrap_or_default()
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
    /// Malformed objects already warned about (warned again only after they decoded or went).
    warned: HashSet<String>,
    _kind: std::marker::PhantomData<K>,
}

impl<K> Default for Tracker<K> {
    fn default() -> Self {
        Tracker {
            listed: false,
            known: HashSet::new(),
            relist: None,
            warned: HashSet::new(),
            _kind: std::marker::PhantomData,
        }
    }
}

impl<K: Kind + Resource<DynamicType = ()>> Tracker<K> {
    /// The object, or `None` (after one warning) when it did not decode.
    fn decoded(&mut self, object: Decoded<K>) -> Option<K> {
        match object {
            Decoded::Ok(object) => {
                if !self.warned.is_empty() {
                    self.warned.remove(&K::key_of(object.meta()));
                }
                Some(object)
            }
            Decoded::Malformed { meta, error } => {
                let key = K::key_of(&meta);
                if self.warned.insert(key.clone()) {
                    tracing::warn!(
                        "skipping {} {key}: it does not decode ({error}); its last good version, if any, is kept",
                        K::kind(&())
                    );
                }
                None
            }
        }
    }

    /// A listed object: kept as seen by the list under way, even when it did not decode (its last good
    /// version stays).
    fn list_item(&mut self, object: Decoded<K>) -> Option<K> {
        let key = K::key_of(object.meta());
        if let Some(seen) = self.relist.as_mut() {
            seen.insert(key.clone());
        }
        let object = self.decoded(object)?;
        self.known.insert(key);
        Some(object)
    }

    /// Before the first sync: objects of the initial list go into the list under way (`out`); changes
    /// after this kind's list are held until every kind is listed (`held`).
    fn initial(
        &mut self,
        event: watcher::Event<Decoded<K>>,
        out: &mut Vec<SourceEvent>,
        held: &mut Vec<Change>,
    ) {
        match event {
            watcher::Event::Init => self.relist = Some(HashSet::new()),
            watcher::Event::InitApply(k) => {
                if let Some(k) = self.list_item(k) {
                    out.push(SourceEvent::Listed(k.listed()));
                }
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
        self.known.retain(|key| seen.contains(key));
        gone
    }

    /// After the first sync: one change per event; a finished relist deletes what it did not list.
    fn changes(&mut self, event: watcher::Event<Decoded<K>>) -> Vec<Change> {
        match event {
            watcher::Event::Init => {
                self.relist = Some(HashSet::new());
                Vec::new()
            }
            watcher::Event::InitApply(k) => self.list_item(k).map(K::upsert).into_iter().collect(),
            watcher::Event::Apply(k) => match self.decoded(k) {
                Some(k) => {
                    self.known.insert(K::key_of(k.meta()));
                    vec![k.upsert()]
                }
                None => Vec::new(),
            },
            watcher::Event::Delete(k) => {
                let key = K::key_of(k.meta());
                if let Some(seen) = self.relist.as_mut() {
                    seen.remove(&key);
                }
                self.warned.remove(&key);
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
    /// The kinds whose last item was an error.
    failing: HashSet<&'static str>,
}

impl Merger {
    /// The source events for one watcher item.
    pub fn step(&mut self, item: Result<Watched, WatchFailure>) -> Vec<SourceEvent> {
        let watched = match item {
            Ok(w) => w,
            Err(failure) => {
                self.failing.insert(failure.watch);
                return vec![SourceEvent::WatchError(failure)];
            }
        };
        let mut out = Vec::new();
        if let Some(which) = watched.progress()
            && self.failing.remove(which.resource())
        {
            out.push(SourceEvent::WatchResumed(which.resource()));
        }
        if let Watched::EventDeleted(e) = watched {
            let deleted = Change::EventDeleted {
                key: e.key,
                pod: e.pod,
            };
            if self.synced {
                out.push(SourceEvent::Change(deleted));
            } else {
                self.held.push(deleted);
            }
            return out;
        }
        if self.synced {
            let changes = match watched {
                Watched::Node(e) => self.nodes.changes(e),
                Watched::Pod(e) => self.pods.changes(e),
                Watched::RuntimeClass(e) => self.runtime_classes.changes(e),
                Watched::Event(e) => vec![Change::Event(e)],
                Watched::EventDeleted(_) => Vec::new(),
            };
            out.extend(changes.into_iter().map(SourceEvent::Change));
            return out;
        }
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

    fn node(name: &str) -> Decoded<Node> {
        let mut n = Node::default();
        n.metadata.name = Some(name.into());
        Decoded::Ok(n)
    }

    fn pod(ns: &str, name: &str) -> Decoded<Pod> {
        let mut p = Pod::default();
        p.metadata.namespace = Some(ns.into());
        p.metadata.name = Some(name.into());
        Decoded::Ok(p)
    }

    /// A pod whose newest version does not decode.
    fn bad_pod(ns: &str, name: &str) -> Decoded<Pod> {
        Decoded::Malformed {
            meta: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            error: "invalid type: string \"x\", expected a sequence".into(),
        }
    }

    fn failure(watch: Watch, message: &str) -> Result<Watched, WatchFailure> {
        Err(WatchFailure {
            watch: watch.resource(),
            message: message.into(),
        })
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
                SourceEvent::Listed(ClusterObject::Pod(p)) => {
                    format!("+pod {}", Pod::key_of(&p.metadata))
                }
                SourceEvent::Listed(ClusterObject::ListedPod(p)) => {
                    format!("+pod {}", Pod::key_of(&p.pod.metadata))
                }
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
                SourceEvent::Change(Change::Pod(p)) => format!("pod {}", Pod::key_of(&p.metadata)),
                SourceEvent::Change(Change::PodDeleted(ns, n)) => format!("-pod {ns}/{n}"),
                SourceEvent::Change(Change::RuntimeClass(_)) => "rc".into(),
                SourceEvent::Change(Change::RuntimeClassDeleted(n)) => format!("-rc {n}"),
                SourceEvent::Synced => "synced".into(),
                SourceEvent::WatchError(e) => format!("error {}: {}", e.watch, e.message),
                SourceEvent::WatchResumed(w) => format!("resumed {w}"),
                SourceEvent::ImageFacts(_) => "images".into(),
                SourceEvent::Today(d) => format!("today {d}"),
            })
            .collect()
    }

    #[test]
    fn the_first_list_streams_and_completes_with_every_kind_then_relists_delete_what_is_gone() {
        let mut m = Merger::default();
        let steps: Vec<(Result<Watched, WatchFailure>, Vec<&str>)> = vec![
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
            // A pod that does not decode is skipped; the list goes on.
            (
                Ok(Watched::Pod(Event::InitApply(bad_pod("x", "px")))),
                vec![],
            ),
            (Ok(Watched::Pod(Event::InitDone)), vec![]),
            // A node event before RuntimeClasses are listed is held until the list is done.
            (Ok(Watched::Node(Event::Delete(node("b")))), vec![]),
            (
                failure(Watch::RuntimeClasses, "boom"),
                vec!["error runtimeclasses.node.k8s.io: boom"],
            ),
            // The `Init` before the next attempt is no sign that the watch works again; its end is.
            (Ok(Watched::RuntimeClass(Event::Init)), vec![]),
            (
                Ok(Watched::RuntimeClass(Event::InitDone)),
                vec![
                    "resumed runtimeclasses.node.k8s.io",
                    "listed",
                    "-pod x/p1",
                    "-node b",
                    "synced",
                ],
            ),
            (
                Ok(Watched::Pod(Event::Apply(pod("x", "p2")))),
                vec!["pod x/p2"],
            ),
            // Its newest version does not decode: the one the audit has stays.
            (Ok(Watched::Pod(Event::Apply(bad_pod("x", "p2")))), vec![]),
            (
                Ok(Watched::Pod(Event::Delete(pod("x", "p2")))),
                vec!["-pod x/p2"],
            ),
            // A relist after 410 Gone: p0 is gone, p3 is new, p4 is listed but malformed (and stays).
            (
                Ok(Watched::Pod(Event::Apply(pod("x", "p4")))),
                vec!["pod x/p4"],
            ),
            (Ok(Watched::Pod(Event::Init)), vec![]),
            (
                Ok(Watched::Pod(Event::InitApply(pod("x", "p3")))),
                vec!["pod x/p3"],
            ),
            (
                Ok(Watched::Pod(Event::InitApply(bad_pod("x", "p4")))),
                vec![],
            ),
            (Ok(Watched::Pod(Event::InitDone)), vec!["-pod x/p0"]),
            (Ok(Watched::Node(Event::Apply(node("c")))), vec!["node c"]),
        ];
        for (i, (item, want)) in steps.into_iter().enumerate() {
            assert_eq!(describe(&m.step(item)), want, "step {i}");
        }
    }
}
