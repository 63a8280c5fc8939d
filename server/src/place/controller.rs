//! The reconcile loop of `serve --place` (see [`super`]): one gated pod at a time per object, at most
//! `--place-concurrency` at once across pods; registry answers shared through the resolver's cache (one
//! look-up per distinct reference); pull secrets read from watched caches.
//!
//! Every pod gets its chance ([`Clock`]): the deadline counts from when this leader first took the pod
//! up, its first resolution is never cut short, and a patch refused because the pod changed meanwhile
//! (409, or a failed `test`: 422) is computed again from a fresh read, until the deadline. API errors
//! that pass (429, 5xx, no answer) are asked again, never turned into a release or an anonymous pull.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod, Secret, ServiceAccount};
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource};
use serde_json::Value;
use winplace_rules::Settings;
use winplace_rules::model::ClusterContext;
use winplace_rules::placement::gate::gate_index;
use winplace_rules::placement::gated_patch::{placement_patch, release_ops};
use winplace_rules::windows::{ImageClass, ImageOs, classify_image};

use super::pull_secrets::{PULL_SECRET_TYPE, PullSecretCaches, is_transient};
use super::report::{PlaceReport, reason};
use crate::registry::{Credentials, ImageResolver, ManifestFacts, ResolveError};

/// Why a reconcile failed (it is retried after [`RETRY`]).
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// The API server's answer, other than the ones handled (404, 422).
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    /// A pod or patch that does not serialize (never expected).
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The request could not be built (never expected).
    #[error("request: {0}")]
    Request(#[from] http::Error),
}

/// How long a failed reconcile waits before the next try.
pub const RETRY: Duration = Duration::from_secs(5);

/// The first wait before an image whose look-up failed transiently (a server error, no connection, no
/// answer in time: [`ResolveError::is_transient`]) is asked for again; doubled after each try up to
/// [`RESOLVE_RETRY_MAX`], always within the pod's deadline.
pub const RESOLVE_RETRY_FIRST: Duration = Duration::from_millis(200);

/// The longest wait between two tries of a transiently failing image.
pub const RESOLVE_RETRY_MAX: Duration = Duration::from_secs(2);

/// The default of `--place-concurrency`: reconciles at once. Each mostly waits (on a registry, whose
/// look-ups of one reference are shared, or on the API server), so a burst of gated pods goes through
/// in a few rounds; a bound keeps a burst from opening thousands of requests at once.
pub const DEFAULT_CONCURRENCY: u16 = 32;

/// The first wait before an API request that failed transiently (429, 5xx, no answer) is asked again;
/// doubled after each try up to [`API_RETRY_MAX`].
pub const API_RETRY_FIRST: Duration = Duration::from_millis(100);

/// The longest wait between two tries of an API request.
pub const API_RETRY_MAX: Duration = Duration::from_secs(2);

/// How long one API request (a read or a patch) may take before it counts as unanswered (transient).
pub const API_TIMEOUT: Duration = Duration::from_secs(10);

/// How long, past the deadline, a release whose patch keeps meeting a conflict is tried again: the
/// gate must come off, but never by overwriting what someone else wrote.
pub const RELEASE_GRACE: Duration = Duration::from_secs(5);

/// What the controller is asked to do: `--place-deadline`, `--place-concurrency`.
#[derive(Debug, Clone, Copy)]
pub struct PlaceOptions {
    /// `--place-deadline`.
    pub deadline: Duration,
    /// `--place-concurrency` (at least 1).
    pub concurrency: u16,
}

/// What every reconcile shares.
pub struct Placer {
    client: Client,
    resolver: Arc<ImageResolver>,
    settings: Settings,
    deadline: Duration,
    nodes: NodeContext,
    caches: PullSecretCaches,
    recorder: Recorder,
    clock: Clock,
    /// The counters and the recent placements (`/metrics`, `/api/placements`).
    pub report: Arc<PlaceReport>,
}

/// When each gated pod's deadline ends, for the leader that holds the Lease now (cleared when this
/// replica starts leading: a new leader gives every pod its chance again).
///
/// The deadline counts from when this leader first took the pod up ([`deadline_end`]), and a pod's
/// first resolution by this leader is never cut short by it: a pod gated while no controller ran, or
/// while the Lease changed hands, is resolved before anything releases it.
struct Clock {
    deadline: Duration,
    /// One full resolution attempt: the registry look-up limit, at most the deadline.
    attempt: Duration,
    seen: Mutex<HashMap<String, Seen>>,
    /// The `resourceVersion` each pod had when this leader's patch removed its gate (placed or released),
    /// by uid, until the pod is seen without the gate: the controller's cache may still hold the pod as it
    /// was, and a reconcile of that copy would only fail its patch's guard (422).
    ungated_at: Mutex<HashMap<String, String>>,
}

/// What [`Clock`] knows of one pod.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// When this leader's deadline for it ends.
    end: tokio::time::Instant,
    /// Whether one resolution ran to its end.
    attempted: bool,
}

impl Clock {
    /// The pod's deadline (registered now if this leader had not seen it) and whether a resolution
    /// already ran to its end.
    fn take_up(&self, uid: &str, pod: &Pod) -> Seen {
        let now = tokio::time::Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() > 100_000 {
            // Pods deleted while gated are never reconciled again: forget the long-expired.
            seen.retain(|_, s| s.end + self.deadline * 10 > now);
        }
        *seen.entry(uid.to_string()).or_insert_with(|| Seen {
            end: deadline_end(now, age(pod), self.deadline, self.attempt),
            attempted: false,
        })
    }

    /// One resolution ran to its end.
    fn attempted(&self, uid: &str) {
        if let Some(s) = self
            .seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(uid)
        {
            s.attempted = true;
        }
    }

    /// The pod is gone, or seen without winplace's gate.
    fn forget(&self, uid: &str) {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
        self.ungated_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
    }

    /// This leader's patch removed the gate of `pod` as read (placed or released): done, and a copy of
    /// it as read is stale ([`Clock::is_stale`]).
    fn ungated(&self, pod: &Pod) {
        let uid = pod.metadata.uid.as_deref().unwrap_or("");
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
        let mut ungated = self.ungated_at.lock().unwrap_or_else(|p| p.into_inner());
        if ungated.len() > 100_000 {
            // Pods deleted before they were seen ungated are never reconciled again; a stale copy of
            // one forgotten here costs one guarded patch that fails.
            ungated.clear();
        }
        if let Some(version) = &pod.metadata.resource_version {
            ungated.insert(uid.to_string(), version.clone());
        }
    }

    /// Whether `pod` is a copy of one this leader already ungated, as it was before (its
    /// `resourceVersion` the one the patch was made from: compared for equality only, as Kubernetes
    /// asks of an opaque version).
    fn is_stale(&self, uid: &str, pod: &Pod) -> bool {
        let ungated = self.ungated_at.lock().unwrap_or_else(|p| p.into_inner());
        pod.metadata
            .resource_version
            .as_ref()
            .is_some_and(|v| ungated.get(uid) == Some(v))
    }

    /// A new leadership: every pod's deadline counts again from when this leader takes it up.
    fn restart(&self) {
        self.seen.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.ungated_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// When a pod's deadline ends, for a leader that first takes it up at `first_seen`, the pod being `age`
/// old then (`None`: no creation time).
///
/// * A pod seen fresh (younger than `deadline`): its creation plus `deadline`, as a pod expects, but
///   never before one full resolution `attempt` (≤ `deadline`) from `first_seen`. So it ends at most
///   `creation + deadline + attempt`.
/// * A pod seen late (gated while no controller ran, or during a failover; or of unknown age):
///   `deadline` from `first_seen`, so that it is resolved and placed rather than released blind.
pub fn deadline_end(
    first_seen: tokio::time::Instant,
    age: Option<Duration>,
    deadline: Duration,
    attempt: Duration,
) -> tokio::time::Instant {
    let attempt = attempt.min(deadline);
    match age {
        Some(age) if age < deadline => (first_seen + (deadline - age)).max(first_seen + attempt),
        _ => first_seen + deadline,
    }
}

/// How old the pod is by its `creationTimestamp` (`None` without one; zero when it is in the future).
fn age(pod: &Pod) -> Option<Duration> {
    let created = pod.metadata.creation_timestamp.as_ref()?;
    let age = k8s_openapi::jiff::Timestamp::now().duration_since(created.0);
    Some(Duration::try_from(age).unwrap_or(Duration::ZERO))
}

/// The cluster's Nodes as the rules take them, built once per change of the Node store (not per
/// reconcile: a thousand pods gated at once share one copy).
struct NodeContext {
    store: Store<Node>,
    /// Bumped by the Node watch after each event it applied to the store.
    changes: Arc<AtomicU64>,
    /// The context and the change count it was built at.
    built: Mutex<Option<(u64, Arc<ClusterContext>)>>,
}

impl NodeContext {
    fn get(&self) -> Arc<ClusterContext> {
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

/// A reflector over `api` (with `config`), spawned; its store.
fn watched<K>(api: kube::Api<K>, config: watcher::Config) -> Store<K>
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (store, writer) = reflector::store::<K>();
    let stream = reflector::reflector(writer, watcher(api, config))
        .default_backoff()
        .for_each(|_| futures::future::ready(()));
    tokio::spawn(stream);
    store
}

/// Runs the controller until the process ends: reflectors over Nodes (the cluster's Windows builds and
/// taints), ServiceAccounts and pull Secrets, and the pod controller while `leading` says this replica
/// holds the Lease ([`super::lease`]).
pub async fn run(
    client: Client,
    report: Arc<PlaceReport>,
    settings: Settings,
    options: PlaceOptions,
    mut leading: tokio::sync::watch::Receiver<bool>,
) {
    let (nodes, writer) = reflector::store::<Node>();
    let changes = Arc::new(AtomicU64::new(0));
    let counted = changes.clone();
    let node_watch = reflector::reflector(
        writer,
        watcher(
            kube::Api::<Node>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .for_each(move |_| {
        counted.fetch_add(1, Ordering::Release);
        futures::future::ready(())
    });
    tokio::spawn(node_watch);
    let caches = PullSecretCaches {
        accounts: watched(
            kube::Api::<ServiceAccount>::all(client.clone()),
            watcher::Config::default(),
        ),
        secrets: watched(
            kube::Api::<Secret>::all(client.clone()),
            watcher::Config::default().fields(&format!("type={PULL_SECRET_TYPE}")),
        ),
    };
    // No pod is placed before the caches hold what the API server has: a pull secret missing from a
    // cache that is still listing would otherwise be a GET per pod.
    let ready = futures::future::join3(
        nodes.wait_until_ready(),
        caches.accounts.wait_until_ready(),
        caches.secrets.wait_until_ready(),
    )
    .await;
    if ready.0.is_err() || ready.1.is_err() || ready.2.is_err() {
        tracing::error!(
            "a watch (Nodes, ServiceAccounts, pull Secrets) ended before its first list; placement stops"
        );
        return;
    }
    let resolver = report.resolver().clone();
    let placer = Arc::new(Placer {
        recorder: Recorder::new(client.clone(), Reporter::from("winplace")),
        client: client.clone(),
        clock: Clock {
            deadline: options.deadline,
            attempt: resolver.timeout(),
            seen: Mutex::new(HashMap::new()),
            ungated_at: Mutex::new(HashMap::new()),
        },
        resolver,
        settings,
        deadline: options.deadline,
        nodes: NodeContext {
            store: nodes,
            changes,
            built: Mutex::new(None),
        },
        caches,
        report: report.clone(),
    });
    loop {
        if leading.wait_for(|held| *held).await.is_err() {
            return;
        }
        report.set_leading(true);
        tokio::select! {
            () = place(client.clone(), placer.clone(), options.concurrency) => return,
            lost = leading.wait_for(|held| !*held) => if lost.is_err() { return },
        }
        report.set_leading(false);
    }
}

/// The pod controller, until the process ends (or the caller drops it: the Lease was lost).
async fn place(client: Client, placer: Arc<Placer>, concurrency: u16) {
    // A gated pod is never bound: unscheduled pods are the only candidates (scheduling-gates.md §4.8).
    let pods = kube::Api::<Pod>::all(client);
    placer.clock.restart();
    tracing::info!(deadline = ?placer.deadline, concurrency, "placing pods gated with winplace.io/placement");
    Controller::new(pods, watcher::Config::default().fields("spec.nodeName="))
        .with_config(controller::Config::default().concurrency(concurrency.max(1)))
        .run(reconcile, error_policy, placer)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "placement reconcile");
            }
        })
        .await;
}

fn error_policy(pod: Arc<Pod>, error: &PlaceError, _: Arc<Placer>) -> Action {
    tracing::warn!(pod = %name_of(&pod), %error, "placing the pod failed; retrying");
    Action::requeue(RETRY)
}

fn name_of(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// `request`, asked again after a transient failure (429, 5xx, no answer within [`API_TIMEOUT`]) with a
/// doubling wait while `until` allows; the last error otherwise.
async fn with_retries<T, F, Fut>(
    placer: &Placer,
    until: tokio::time::Instant,
    mut request: F,
) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut wait = API_RETRY_FIRST;
    loop {
        let answer = match tokio::time::timeout(API_TIMEOUT, request()).await {
            Ok(answer) => answer,
            Err(elapsed) => Err(kube::Error::Service(Box::new(elapsed))),
        };
        match answer {
            Err(error) if is_transient(&error) && tokio::time::Instant::now() + wait < until => {
                placer.report.api_retried();
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(API_RETRY_MAX);
            }
            other => return other,
        }
    }
}

/// The pod as the API server has it now (`None`: deleted), read with [`with_retries`].
async fn read_pod(
    placer: &Placer,
    pod: &Pod,
    until: tokio::time::Instant,
) -> Result<Option<Pod>, kube::Error> {
    let api = kube::Api::<Pod>::namespaced(
        placer.client.clone(),
        pod.metadata.namespace.as_deref().unwrap_or("default"),
    );
    let name = pod.metadata.name.clone().unwrap_or_default();
    with_retries(placer, until, || api.get_opt(&name)).await
}

/// One gated pod: resolve, pin, ungate (or release).
async fn reconcile(pod: Arc<Pod>, placer: Arc<Placer>) -> Result<Action, PlaceError> {
    let value = serde_json::to_value(&*pod)?;
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    if gate_index(&value).is_none() || pod.metadata.deletion_timestamp.is_some() {
        placer.clock.forget(&uid);
        return Ok(Action::await_change());
    }
    if placer.clock.is_stale(&uid, &pod) {
        // The cache's copy from before this leader's own patch; the watch brings the patched pod next.
        return Ok(Action::await_change());
    }
    let name = name_of(&pod);
    let open = open_images(&value, &placer.settings);
    let seen = placer.clock.take_up(&uid, &pod);
    let credentials = if open.is_empty() {
        Vec::new()
    } else {
        // A pull secret the API server cannot give now is not a missing one: try again, never anonymously.
        let until = seen.end.max(tokio::time::Instant::now() + RELEASE_GRACE);
        with_retries(&placer, until, || {
            super::pull_secrets::for_pod(&placer.client, &placer.caches, &pod)
        })
        .await?
    };
    // The first resolution runs to its end even past the deadline (one full attempt); later ones stop
    // at it.
    let now = tokio::time::Instant::now();
    let deadline = if seen.attempted {
        seen.end
    } else {
        seen.end
            .max(now + placer.clock.attempt.min(placer.deadline))
    };
    let results = if open.is_empty() || now >= deadline {
        BTreeMap::new()
    } else {
        let started = tokio::time::Instant::now();
        let results = resolve_until(placer.as_ref(), &name, &open, &credentials, deadline).await;
        placer.report.observe_resolution(started.elapsed());
        placer.clock.attempted(&uid);
        results
    };
    let past_deadline = tokio::time::Instant::now() >= deadline;
    let late = || {
        format!(
            "not read within --place-deadline {}s of winplace taking the pod up",
            placer.deadline.as_secs_f64()
        )
    };
    let mut manifests: BTreeMap<String, ImageClass> = BTreeMap::new();
    let mut unresolved: Vec<String> = Vec::new();
    for image in &open {
        match results.get(image) {
            Some(Ok(facts)) => match facts.class(image) {
                Some(class) => {
                    manifests.insert(image.clone(), class);
                }
                None => unresolved.push(format!(
                    "{image}: its manifest names no platform winplace can read"
                )),
            },
            // The deadline cut the look-up short: that is what the Event says, not the look-up's limit.
            Some(Err(ResolveError::Timeout(_))) if past_deadline => {
                unresolved.push(format!("{image}: {}", late()));
            }
            Some(Err(error)) if error.is_transient() => {
                unresolved.push(format!("{image}: {} (the last try: {error})", late()));
            }
            Some(Err(error)) => unresolved.push(format!("{image}: {error}")),
            None => unresolved.push(format!("{image}: {}", late())),
        }
    }
    if !unresolved.is_empty() {
        let why = format!(
            "winplace removed its scheduling gate without placing the pod: {}",
            unresolved.join("; ")
        );
        let because = unresolved_reason(&open, &results);
        let released = Released {
            event: "ImagesUnresolved",
            label: because,
            images: &open,
        };
        return release(&placer, &pod, released, why).await;
    }
    place_pod(&placer, &pod, &open, &manifests, seen.end).await
}

/// Pins the pod and removes its gate: the patch is computed from the pod read, and computed again from
/// a fresh read whenever the API server answers that the pod changed since (409, or a failed `test`:
/// 422), until `end`. A 422 on a pod that did not change is a refusal on the merits: the pod is released.
async fn place_pod(
    placer: &Placer,
    pod: &Pod,
    open: &[String],
    manifests: &BTreeMap<String, ImageClass>,
    end: tokio::time::Instant,
) -> Result<Action, PlaceError> {
    let name = name_of(pod);
    let mut current = pod.clone();
    loop {
        let value = serde_json::to_value(&current)?;
        if gate_index(&value).is_none() {
            // Someone else removed winplace's gate meanwhile: nothing left to do.
            placer
                .clock
                .forget(current.metadata.uid.as_deref().unwrap_or(""));
            return Ok(Action::await_change());
        }
        let context = placer.nodes.get();
        let Some(patch) = placement_patch(&value, &placer.settings, Some(&context), manifests)
        else {
            return Ok(Action::await_change());
        };
        if patch.pins.is_empty() {
            let why = format!(
                "winplace removed its scheduling gate without pinning the pod: {}",
                patch
                    .unpinned_because
                    .as_deref()
                    .unwrap_or("nothing to pin")
            );
            let released = Released {
                event: "NothingToPin",
                label: reason::NOTHING_TO_PIN,
                images: open,
            };
            return release(placer, &current, released, why).await;
        }
        let until = end.max(tokio::time::Instant::now() + RELEASE_GRACE);
        match with_retries(placer, until, || send(&placer.client, &current, &patch.ops)).await {
            Ok(()) => {
                placer.clock.ungated(&current);
                let pins = patch.pins.join(", ");
                let (type_, reason, note) = match &patch.warning {
                    Some(warning) => {
                        placer.report.unrunnable();
                        (
                            EventType::Warning,
                            "ImagesNotRunnable",
                            format!(
                                "winplace pinned the pod where its images run ({pins}), and it stays Pending: {warning}"
                            ),
                        )
                    }
                    None => (
                        EventType::Normal,
                        "Placed",
                        format!("winplace placed the pod: {pins}"),
                    ),
                };
                match type_ {
                    EventType::Warning => tracing::warn!(pod = %name, "{note}"),
                    EventType::Normal => tracing::info!(pod = %name, "{note}"),
                }
                placer.report.placed(
                    name.clone(),
                    open.to_vec(),
                    patch.pins.clone(),
                    note.clone(),
                );
                publish(placer, &current, type_, reason, note).await;
                return Ok(Action::await_change());
            }
            Err(kube::Error::Api(status)) if status.code == 404 => {
                return Ok(deleted(placer, &current));
            }
            Err(kube::Error::Api(status)) if status.code == 409 || status.code == 422 => {
                let Some(fresh) = read_pod(placer, &current, until).await? else {
                    return Ok(deleted(placer, &current));
                };
                let changed = fresh.metadata.resource_version != current.metadata.resource_version;
                if changed && tokio::time::Instant::now() < end {
                    // A race, not a refusal: the pins again, from what the pod is now.
                    placer.report.conflicted();
                    tracing::debug!(pod = %name, code = status.code, "the pod changed since it was read; placing it again from a fresh read");
                    current = fresh;
                    continue;
                }
                let why = if changed {
                    format!(
                        "the pod kept changing until --place-deadline ({}); winplace removed its scheduling gate without placing the pod",
                        status.message
                    )
                } else {
                    format!(
                        "the API server refused winplace's placement ({}); winplace removed its scheduling gate without placing the pod",
                        status.message
                    )
                };
                let released = Released {
                    event: "PlacementRefused",
                    label: reason::REFUSED,
                    images: open,
                };
                return release(placer, &fresh, released, why).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Resolves `images` by `deadline`, asking again for those whose look-up failed transiently (a server
/// error, no connection, no answer within the look-up's limit) after a doubling wait, while the deadline
/// allows: a registry that is down for a moment does not release the pod unplaced, and one that stays
/// down releases it at the deadline, never later.
async fn resolve_until(
    placer: &Placer,
    pod: &str,
    images: &[String],
    credentials: &[Credentials],
    deadline: tokio::time::Instant,
) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
    let mut results = placer
        .resolver
        .resolve_all_with(images, credentials, deadline)
        .await;
    let mut wait = RESOLVE_RETRY_FIRST;
    loop {
        let again: Vec<String> = results
            .iter()
            .filter(|(_, r)| r.as_ref().is_err_and(ResolveError::is_transient))
            .map(|(image, _)| image.clone())
            .collect();
        if again.is_empty() || tokio::time::Instant::now() + wait >= deadline {
            return results;
        }
        tracing::debug!(pod, images = ?again, ?wait, "image look-ups failed for now; asking again");
        tokio::time::sleep(wait).await;
        placer.report.resolve_retried(again.len() as u64);
        results.extend(
            placer
                .resolver
                .resolve_all_with(&again, credentials, deadline)
                .await,
        );
        wait = (wait * 2).min(RESOLVE_RETRY_MAX);
    }
}

/// The pod was deleted before winplace's patch reached it: said once, counted, and nothing more to do
/// (the controller does not reconcile a pod that is gone).
fn deleted(placer: &Placer, pod: &Pod) -> Action {
    placer.report.deleted();
    placer
        .clock
        .forget(pod.metadata.uid.as_deref().unwrap_or(""));
    tracing::info!(
        pod = %name_of(pod),
        "the pod was deleted before winplace placed it; nothing to do"
    );
    Action::await_change()
}

/// The `reason` label of a release for images not read: `deadline` when one was not read in time,
/// else the first registry error's kind, else `no-platform`.
fn unresolved_reason(
    open: &[String],
    results: &BTreeMap<String, Result<ManifestFacts, ResolveError>>,
) -> &'static str {
    let answers: Vec<_> = open.iter().map(|image| results.get(image)).collect();
    if answers
        .iter()
        .any(|a| matches!(a, None | Some(Err(ResolveError::Timeout(_)))))
    {
        return reason::DEADLINE;
    }
    answers
        .iter()
        .find_map(|a| match a {
            Some(Err(e)) => Some(e.kind()),
            _ => None,
        })
        .unwrap_or(reason::NO_PLATFORM)
}

/// How a release is told: the Event's reason, the `reason` label on `/metrics` and
/// `/api/placements`, and the images the pod names.
struct Released<'a> {
    event: &'static str,
    label: &'static str,
    images: &'a [String],
}

/// Removes winplace's gate and nothing else, says why in a Warning Event, and records the release
/// ([`PlaceReport::released`]) once the gate is gone. The removal is guarded by the gate's index: when
/// the gates moved meanwhile (another controller removed its own), the pod is read again and the
/// removal computed anew, for [`RELEASE_GRACE`].
async fn release(
    placer: &Placer,
    pod: &Pod,
    released: Released<'_>,
    why: String,
) -> Result<Action, PlaceError> {
    let until = tokio::time::Instant::now() + RELEASE_GRACE;
    let mut current = pod.clone();
    loop {
        let Some(ops) = release_ops(&serde_json::to_value(&current)?) else {
            placer
                .clock
                .forget(current.metadata.uid.as_deref().unwrap_or(""));
            return Ok(Action::await_change());
        };
        match with_retries(placer, until, || send(&placer.client, &current, &ops)).await {
            Ok(()) => break,
            Err(kube::Error::Api(status)) if status.code == 404 => {
                return Ok(deleted(placer, &current));
            }
            Err(kube::Error::Api(status))
                if (status.code == 409 || status.code == 422)
                    && tokio::time::Instant::now() < until =>
            {
                let Some(fresh) = read_pod(placer, &current, until).await? else {
                    return Ok(deleted(placer, &current));
                };
                placer.report.conflicted();
                current = fresh;
            }
            Err(e) => return Err(e.into()),
        }
    }
    tracing::warn!(pod = %name_of(&current), "{why}");
    placer.clock.ungated(&current);
    placer.report.released(
        name_of(&current),
        released.images.to_vec(),
        released.label,
        why.clone(),
    );
    publish(placer, &current, EventType::Warning, released.event, why).await;
    Ok(Action::await_change())
}

/// `PATCH` with `application/json-patch+json` (never a strategic merge patch, which would replace the
/// tolerations: scheduling-gates.md §4.3).
async fn send(client: &Client, pod: &Pod, ops: &[Value]) -> Result<(), kube::Error> {
    let url = format!(
        "/api/v1/namespaces/{}/pods/{}?fieldManager=winplace",
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or("")
    );
    let body = serde_json::to_vec(ops).map_err(kube::Error::SerdeError)?;
    let request = http::Request::patch(url)
        .header(http::header::CONTENT_TYPE, "application/json-patch+json")
        .body(body)
        .map_err(kube::Error::HttpError)?;
    client.request::<Pod>(request).await.map(|_| ())
}

async fn publish(placer: &Placer, pod: &Pod, type_: EventType, reason: &str, note: String) {
    let mut note = note;
    if note.len() > 1000 {
        // events.k8s.io refuses a note over 1 kB (events-and-leases.md §1.3).
        let cut = (0..=1000)
            .rev()
            .find(|&i| note.is_char_boundary(i))
            .unwrap_or(0);
        note.truncate(cut);
    }
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Place".into(),
        secondary: None,
    };
    if let Err(error) = placer.recorder.publish(&event, &pod.object_ref(&())).await {
        tracing::warn!(pod = %name_of(pod), %error, "cannot post the Event");
    }
}

/// The images whose names leave their OS or Windows build open (the ones worth a registry look-up),
/// distinct, in order.
fn open_images(pod: &Value, settings: &Settings) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let containers = pod
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array);
        for image in containers
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("image").and_then(Value::as_str))
        {
            let open = match classify_image(image, &settings.image_rules).os {
                ImageOs::Unrecognized => true,
                ImageOs::Windows { builds } => builds.is_empty(),
                ImageOs::Linux | ImageOs::MultiOs => false,
            };
            if open && !out.iter().any(|o| o == image) {
                out.push(image.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Node {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("node")
    }

    fn versioned(uid: &str, version: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "uid": uid, "resourceVersion": version}}))
        .expect("pod")
    }

    #[test]
    fn a_copy_of_a_pod_from_before_its_own_ungating_is_stale_and_only_that() {
        let clock = Clock {
            deadline: Duration::from_secs(30),
            attempt: Duration::from_secs(10),
            seen: Mutex::new(HashMap::new()),
            ungated_at: Mutex::new(HashMap::new()),
        };
        let read = versioned("u1", "13");
        clock.take_up("u1", &read);
        assert!(!clock.is_stale("u1", &read), "not ungated yet");
        clock.ungated(&read);
        assert!(
            clock.seen.lock().unwrap().is_empty(),
            "done with its deadline"
        );
        // The cache's copy as it was read: stale. The patched pod, another pod, or the same uid at a
        // version after someone else's edit: not.
        assert!(clock.is_stale("u1", &read));
        assert!(!clock.is_stale("u1", &versioned("u1", "14")));
        assert!(!clock.is_stale("u2", &versioned("u2", "13")));
        // Seen without the gate (or gone): forgotten, so a pod gated again at that version is placed.
        clock.forget("u1");
        assert!(!clock.is_stale("u1", &read));
        // A new leadership forgets too.
        clock.ungated(&read);
        clock.restart();
        assert!(!clock.is_stale("u1", &read));
    }

    #[test]
    fn every_pod_gets_its_chance_and_a_fresh_one_no_more() {
        let t0 = tokio::time::Instant::now();
        let s = Duration::from_secs;
        // (age when first seen, deadline, one attempt, the end after t0)
        let rows = [
            // Seen at once: its creation plus the deadline, as before.
            (Some(s(0)), s(30), s(10), s(30)),
            (Some(s(12)), s(30), s(10), s(18)),
            // Seen near the end of its deadline: one full attempt, and no more.
            (Some(s(29)), s(30), s(10), s(10)),
            // The attempt is never longer than the deadline.
            (Some(s(4)), s(5), s(10), s(5)),
            // Gated while no controller ran (older than the deadline): the whole deadline from now.
            (Some(s(3600)), s(30), s(10), s(30)),
            (Some(s(30)), s(30), s(10), s(30)),
            // No creation time: from now.
            (None, s(30), s(10), s(30)),
        ];
        for (age, deadline, attempt, want) in rows {
            let end = deadline_end(t0, age, deadline, attempt);
            assert_eq!(end - t0, want, "{age:?} {deadline:?} {attempt:?}");
            // Never before one full attempt, never after creation + deadline + one attempt for a pod
            // seen fresh.
            assert!(end - t0 >= attempt.min(deadline));
            if let Some(age) = age.filter(|a| *a < deadline) {
                assert!(end - t0 + age <= deadline + attempt);
            }
        }
    }

    #[test]
    fn the_node_context_is_rebuilt_only_when_the_nodes_change() {
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
}
