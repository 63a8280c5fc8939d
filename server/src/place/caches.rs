//! The controller's watched caches (kube-rs reflectors over the Nodes, the ServiceAccounts and the pull
//! Secrets of each type the kubelet reads) and whether they let it place ([`CacheHealth`]).
//!
//! A list that fails is said loudly, once per failure: a Warning log line with the resource, the verb
//! and the API server's status (`cannot list secrets: 403 Forbidden — …; upgrade the
//! placement ClusterRole (the Helm chart's placement.enabled)`), a count on `/metrics` (`winplace_place_list_failures_total{resource}`),
//! and, while it lasts, the reason `/readyz` gives. The controller can place only once every cache has
//! listed and while none has been failing for longer than the bound (the lease duration): a replica that
//! cannot place does not hold the Lease, so that the policy stops gating (docs/placement.md, "When the
//! controller cannot place").
//!
//! The unscheduled pods are watched by the pod controller, which runs only while this replica leads;
//! their failures are reported here too. A probe lists one of them before the first Lease and, while
//! they fail, now and then ([`probe_pods`]): a replica that cannot list pods never takes the Lease, and
//! one that gave it up for that takes it again once it can.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod, Secret, ServiceAccount};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, api::ListParams};
use tokio::task::JoinSet;
use tokio::time::Instant;
use winplace_rules::model::ClusterContext;

use super::pull_secrets::{PULL_SECRET_TYPES, PullSecretCaches};
use super::report::PlaceReport;
use crate::lease::CanAct;
use crate::source::watch_error::{Watch, describe};

/// The field selector of the unscheduled pods: a gated pod is never bound (scheduling-gates.md §4.8).
pub const UNSCHEDULED: &str = "spec.nodeName=";

/// The cluster's Nodes as the rules take them, built once per change of the Node store (not per
/// reconcile: a thousand pods gated at once share one copy).
pub struct NodeContext {
    store: Store<Node>,
    /// Bumped by the Node watch after each event it applied to the store.
    changes: Arc<AtomicU64>,
    /// The context and the change count it was built at.
    built: Mutex<Option<(u64, Arc<ClusterContext>)>>,
}

impl NodeContext {
    /// The Nodes as the rules take them now.
    pub fn get(&self) -> Arc<ClusterContext> {
        // Read the count before the store: a context is never tagged newer than what it holds.
        let seen = self.changes.load(Ordering::Acquire);
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, context)) = built.as_ref()
            && *at == seen
        {
            return context.clone();
        }
        let context = Arc::new(ClusterContext {
            nodes: self.store.state().iter().map(|n| (**n).clone()).collect(),
            runtime_classes: Vec::new(),
        });
        *built = Some((seen, context.clone()));
        context
    }
}

/// The caches, running in the controller's task set (they end with it).
pub struct Caches {
    /// The Nodes.
    pub nodes: NodeContext,
    /// The ServiceAccounts and pull Secrets.
    pub pull_secrets: PullSecretCaches,
    /// Whether they let the controller place.
    pub health: Arc<CacheHealth>,
}

impl Caches {
    /// Starts the reflectors in `tasks`.
    pub fn start(client: &Client, tasks: &mut JoinSet<()>, report: Arc<PlaceReport>) -> Caches {
        let health = Arc::new(CacheHealth::new(report));
        let changes = Arc::new(AtomicU64::new(0));
        let counted = changes.clone();
        let nodes = watched(
            tasks,
            &health,
            Watch::Nodes,
            "nodes",
            kube::Api::<Node>::all(client.clone()),
            watcher::Config::default(),
            move || {
                counted.fetch_add(1, Ordering::Release);
            },
        );
        let accounts = watched(
            tasks,
            &health,
            Watch::ServiceAccounts,
            "serviceaccounts",
            kube::Api::<ServiceAccount>::all(client.clone()),
            watcher::Config::default(),
            || {},
        );
        let secrets = PULL_SECRET_TYPES
            .iter()
            .map(|(type_, _)| {
                let name = match *type_ {
                    "kubernetes.io/dockercfg" => "secrets (kubernetes.io/dockercfg)",
                    _ => "secrets (kubernetes.io/dockerconfigjson)",
                };
                watched(
                    tasks,
                    &health,
                    Watch::Secrets,
                    name,
                    kube::Api::<Secret>::all(client.clone()),
                    watcher::Config::default().fields(&format!("type={type_}")),
                    || {},
                )
            })
            .collect();
        health.expect("pods");
        Caches {
            nodes: NodeContext {
                store: nodes,
                changes,
                built: Mutex::new(None),
            },
            pull_secrets: PullSecretCaches { accounts, secrets },
            health,
        }
    }
}

/// A reflector over `api` (with `config`) in `tasks`, its list and watch failures told to `health` under
/// `name`; `on_event` runs after each event applied to the store. Returns the store.
fn watched<K>(
    tasks: &mut JoinSet<()>,
    health: &Arc<CacheHealth>,
    watch: Watch,
    name: &'static str,
    api: kube::Api<K>,
    config: watcher::Config,
    on_event: impl Fn() + Send + 'static,
) -> Store<K>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    health.expect(name);
    let (store, writer) = reflector::store::<K>();
    let health = health.clone();
    let stream = reflector::reflector(writer, watcher(api, config))
        .default_backoff()
        .for_each(move |event| {
            match event {
                Ok(watcher::Event::InitDone) => health.listed(name),
                Ok(_) => health.working(name),
                Err(error) => health.failed(name, watch, &error),
            }
            on_event();
            futures::future::ready(())
        });
    tasks.spawn(stream);
    store
}

/// One cache's state.
#[derive(Debug, Clone, Default)]
struct CacheState {
    /// It completed a list.
    listed: bool,
    /// Since when it has been failing, and why (`None`: it works).
    failing: Option<(Instant, String)>,
}

/// Whether the caches let the controller place, and why not.
pub struct CacheHealth {
    states: Mutex<BTreeMap<&'static str, CacheState>>,
    report: Arc<PlaceReport>,
    /// Told at each change, so that the controller judges at once.
    pub changed: tokio::sync::Notify,
}

impl CacheHealth {
    fn new(report: Arc<PlaceReport>) -> Self {
        CacheHealth {
            states: Mutex::new(BTreeMap::new()),
            report,
            changed: tokio::sync::Notify::new(),
        }
    }

    fn states(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, CacheState>> {
        self.states.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A cache that must list before the controller places.
    fn expect(&self, name: &'static str) {
        self.states().entry(name).or_default();
    }

    /// `name` completed a list.
    pub fn listed(&self, name: &'static str) {
        let recovered = {
            let mut states = self.states();
            let state = states.entry(name).or_default();
            state.listed = true;
            state.failing.take().is_some()
        };
        if recovered {
            tracing::info!(cache = name, "listing works again");
        }
        self.changed.notify_one();
    }

    /// `name` delivered an event of a working watch.
    fn working(&self, name: &'static str) {
        let recovered = {
            let mut states = self.states();
            let state = states.entry(name).or_default();
            state.listed && state.failing.take().is_some()
        };
        if recovered {
            tracing::info!(cache = name, "watching works again");
            self.changed.notify_one();
        }
    }

    /// A list or watch of `name` failed with `error`: counted; said at `warn` when it starts failing
    /// or fails otherwise than before.
    pub fn failed(&self, name: &'static str, watch: Watch, error: &watcher::Error) {
        self.report.list_failed(watch.resource());
        let why = advice(describe(watch, error));
        let said = {
            let mut states = self.states();
            let state = states.entry(name).or_default();
            let same = state.failing.as_ref().is_some_and(|(_, w)| *w == why);
            let since = state
                .failing
                .as_ref()
                .map_or_else(Instant::now, |(since, _)| *since);
            state.failing = Some((since, why.clone()));
            !same
        };
        if said {
            tracing::warn!(cache = name, "{why}; no pod is placed while it lasts");
        }
        self.changed.notify_one();
    }

    /// Whether the controller can place: every cache listed, none failing for longer than `bound`.
    pub fn can_act(&self, bound: Duration) -> CanAct {
        let states = self.states();
        let now = Instant::now();
        for (name, state) in states.iter() {
            match (&state.failing, state.listed) {
                (Some((_, why)), false) => return CanAct::No(why.clone()),
                (None, false) => {
                    return CanAct::No(format!("the cache of {name} has not listed yet"));
                }
                (Some((since, why)), true) if now.duration_since(*since) > bound => {
                    return CanAct::No(format!(
                        "{why} (for {} s)",
                        now.duration_since(*since).as_secs()
                    ));
                }
                _ => {}
            }
        }
        CanAct::Yes
    }

    /// Whether the pods must be listed to know whether they can be: not listed yet, or failing.
    fn pods_unknown(&self) -> bool {
        self.states()
            .get("pods")
            .is_none_or(|s| !s.listed || s.failing.is_some())
    }
}

/// A description of a failed list, with what to do for a refusal of RBAC.
fn advice(description: String) -> String {
    if description.contains(" 403 ") {
        format!(
            "{description}; upgrade the placement ClusterRole (the Helm chart's placement.enabled)"
        )
    } else {
        description
    }
}

/// Lists one unscheduled pod at once, then every `every` while the pods' list fails (a pod controller
/// that does not run cannot notice it working again), and says whether that works.
pub async fn probe_pods(client: Client, health: Arc<CacheHealth>, every: Duration) {
    let api = kube::Api::<Pod>::all(client);
    let params = ListParams::default().fields(UNSCHEDULED).limit(1);
    loop {
        if health.pods_unknown() {
            match api.list_metadata(&params).await {
                Ok(_) => health.listed("pods"),
                Err(error) => health.failed(
                    "pods",
                    Watch::Pods,
                    &watcher::Error::InitialListFailed(error),
                ),
            }
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Arc<PlaceReport> {
        Arc::new(PlaceReport::new(Arc::new(
            crate::registry::ImageResolver::new(Default::default()),
        )))
    }

    fn forbidden() -> watcher::Error {
        let status = kube::core::Status::failure(
            r#"secrets is forbidden: User "u" cannot list resource "secrets" in API group "" at the cluster scope"#,
            "Forbidden",
        )
        .with_code(403);
        watcher::Error::InitialListFailed(kube::Error::Api(status.boxed()))
    }

    #[test]
    fn the_node_context_is_rebuilt_only_when_the_nodes_change() {
        let node = |name: &str| -> Node {
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("node")
        };
        let (store, mut writer) = reflector::store::<Node>();
        let changes = Arc::new(AtomicU64::new(0));
        let nodes = NodeContext {
            store,
            changes: changes.clone(),
            built: Mutex::new(None),
        };
        // What the Node watch does: apply to the store, then count.
        let mut watch = |n: Node| {
            writer.apply_watcher_event(&watcher::Event::Apply(n));
            changes.fetch_add(1, Ordering::Release);
        };
        watch(node("a"));
        let first = nodes.get();
        assert_eq!(first.nodes.len(), 1);
        // No change: the same context, not a copy.
        assert!(Arc::ptr_eq(&first, &nodes.get()));
        watch(node("b"));
        let second = nodes.get();
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(second.nodes.len(), 2);
        assert!(Arc::ptr_eq(&second, &nodes.get()));
    }

    #[tokio::test]
    async fn a_cache_that_cannot_list_stops_placement_and_says_what_to_do() {
        let report = report();
        let health = CacheHealth::new(report.clone());
        health.expect("nodes");
        health.expect("serviceaccounts");
        health.expect("pods");
        let bound = Duration::from_secs(60);
        assert_eq!(
            health.can_act(bound),
            CanAct::No("the cache of nodes has not listed yet".into())
        );
        health.listed("nodes");
        health.listed("pods");
        health.failed("serviceaccounts", Watch::ServiceAccounts, &forbidden());
        let CanAct::No(why) = health.can_act(bound) else {
            panic!("placing without service accounts")
        };
        assert!(why.contains("403 Forbidden"), "{why}");
        assert!(
            why.ends_with(
                "; upgrade the placement ClusterRole (the Helm chart's placement.enabled)"
            ),
            "{why}"
        );
        assert!(
            report
                .exposition()
                .contains("winplace_place_list_failures_total{resource=\"serviceaccounts\"} 1\n")
        );
        // Listed: placing.
        health.listed("serviceaccounts");
        assert_eq!(health.can_act(bound), CanAct::Yes);
        // A listed cache failing within the bound: still placing (its last list holds); past it, not.
        health.failed("serviceaccounts", Watch::ServiceAccounts, &forbidden());
        assert_eq!(health.can_act(bound), CanAct::Yes);
        assert!(matches!(health.can_act(Duration::ZERO), CanAct::No(_)));
        // The pods' watch failing past the bound stops it too, until a list works again.
        health.listed("serviceaccounts");
        health.failed("pods", Watch::Pods, &forbidden());
        assert!(health.pods_unknown());
        assert!(matches!(health.can_act(Duration::ZERO), CanAct::No(_)));
        health.listed("pods");
        assert_eq!(health.can_act(Duration::ZERO), CanAct::Yes);
    }
}
