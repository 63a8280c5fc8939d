//! The reconcile loop of `serve --place` (see [`super`]): one gated pod at a time per object, many at
//! once across pods; registry answers shared through the resolver's cache (one look-up per distinct
//! reference).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::runtime::controller::{Action, Controller};
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

/// Counters of the controller, kept per process (not yet exported on `/metrics`: issue 30 item 3).
#[derive(Debug, Default)]
pub struct PlaceStats {
    /// Pods pinned and ungated.
    pub placed: AtomicU64,
    /// Pods released because an image could not be read in time (or at all).
    pub released_unresolved: AtomicU64,
    /// Pods released because the API server refused the pins (422).
    pub released_refused: AtomicU64,
    /// Pods released with nothing to pin.
    pub released_unpinned: AtomicU64,
    /// Pods deleted before winplace's patch reached them (the API server answered 404): nothing to do.
    pub deleted: AtomicU64,
    /// Image look-ups asked for again after a transient failure (a server error, no connection, no
    /// answer within the look-up's own limit), within the pod's deadline.
    pub resolve_retries: AtomicU64,
}

/// What every reconcile shares.
pub struct Placer {
    client: Client,
    resolver: Arc<ImageResolver>,
    settings: Settings,
    deadline: Duration,
    nodes: Store<Node>,
    recorder: Recorder,
    /// The counters.
    pub stats: PlaceStats,
}

/// Runs the controller until the process ends: a reflector over Nodes (the cluster's Windows builds and
/// taints), and the pod controller.
pub async fn run(
    client: Client,
    resolver: Arc<ImageResolver>,
    settings: Settings,
    deadline: Duration,
) {
    let (nodes, writer) = reflector::store::<Node>();
    let node_watch = reflector::reflector(
        writer,
        watcher(
            kube::Api::<Node>::all(client.clone()),
            watcher::Config::default(),
        ),
    )
    .default_backoff()
    .for_each(|_| futures::future::ready(()));
    tokio::spawn(node_watch);
    if nodes.wait_until_ready().await.is_err() {
        tracing::error!("the Node watch ended before its first list; placement stops");
        return;
    }
    let placer = Arc::new(Placer {
        recorder: Recorder::new(client.clone(), Reporter::from("winplace")),
        client: client.clone(),
        resolver,
        settings,
        deadline,
        nodes,
        stats: PlaceStats::default(),
    });
    // A gated pod is never bound: unscheduled pods are the only candidates (scheduling-gates.md §4.8).
    let pods = kube::Api::<Pod>::all(client);
    tracing::info!(deadline = ?deadline, "placing pods gated with winplace.io/placement");
    Controller::new(pods, watcher::Config::default().fields("spec.nodeName="))
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

/// One gated pod: resolve, pin, ungate (or release).
async fn reconcile(pod: Arc<Pod>, placer: Arc<Placer>) -> Result<Action, PlaceError> {
    let value = serde_json::to_value(&*pod)?;
    if gate_index(&value).is_none() || pod.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let name = name_of(&pod);
    let open = open_images(&value, &placer.settings);
    let remaining = remaining(&pod, placer.deadline);
    let credentials = if open.is_empty() {
        Vec::new()
    } else {
        super::pull_secrets::for_pod(&placer.client, &pod).await
    };
    let deadline = remaining.map(|left| tokio::time::Instant::now() + left);
    let results = match deadline {
        Some(deadline) if !open.is_empty() => {
            resolve_until(placer.as_ref(), &name, &open, &credentials, deadline).await
        }
        _ => BTreeMap::new(),
    };
    let past_deadline = deadline.is_none_or(|d| tokio::time::Instant::now() >= d);
    let late = || {
        format!(
            "not read within --place-deadline {}s of the pod's creation",
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
        tracing::warn!(pod = %name, "{why}");
        return release(&placer, &pod, &value, "ImagesUnresolved", why)
            .await
            .inspect(|_| {
                placer
                    .stats
                    .released_unresolved
                    .fetch_add(1, Ordering::Relaxed);
            });
    }
    let context = ClusterContext {
        nodes: placer.nodes.state().iter().map(|n| (**n).clone()).collect(),
        runtime_classes: Vec::new(),
    };
    let Some(patch) = placement_patch(&value, &placer.settings, Some(&context), &manifests) else {
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
        tracing::warn!(pod = %name, "{why}");
        return release(&placer, &pod, &value, "NothingToPin", why)
            .await
            .inspect(|_| {
                placer
                    .stats
                    .released_unpinned
                    .fetch_add(1, Ordering::Relaxed);
            });
    }
    match send(&placer.client, &pod, &patch.ops).await {
        Ok(()) => {
            placer.stats.placed.fetch_add(1, Ordering::Relaxed);
            let note = format!("winplace placed the pod: {}", patch.pins.join(", "));
            tracing::info!(pod = %name, "{note}");
            publish(&placer, &pod, EventType::Normal, "Placed", note).await;
            Ok(Action::await_change())
        }
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(deleted(&placer, &name)),
        Err(kube::Error::Api(status)) if status.code == 422 => {
            // The pod changed since it was read (a guard failed) or Kubernetes refuses the pins: read it
            // again and release it, so that it never waits on winplace.
            let why = format!(
                "the API server refused winplace's placement ({}); winplace removed its scheduling gate without placing the pod",
                status.message
            );
            tracing::warn!(pod = %name, "{why}");
            let api = kube::Api::<Pod>::namespaced(
                placer.client.clone(),
                pod.metadata.namespace.as_deref().unwrap_or("default"),
            );
            let Some(fresh) = api
                .get_opt(pod.metadata.name.as_deref().unwrap_or(""))
                .await?
            else {
                return Ok(deleted(&placer, &name));
            };
            let fresh_value = serde_json::to_value(&fresh)?;
            release(&placer, &fresh, &fresh_value, "PlacementRefused", why)
                .await
                .inspect(|_| {
                    placer
                        .stats
                        .released_refused
                        .fetch_add(1, Ordering::Relaxed);
                })
        }
        Err(e) => Err(e.into()),
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
        placer
            .stats
            .resolve_retries
            .fetch_add(again.len() as u64, Ordering::Relaxed);
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
fn deleted(placer: &Placer, pod: &str) -> Action {
    placer.stats.deleted.fetch_add(1, Ordering::Relaxed);
    tracing::info!(
        pod,
        "the pod was deleted before winplace placed it; nothing to do"
    );
    Action::await_change()
}

/// Removes winplace's gate and nothing else, and says why in a Warning Event.
async fn release(
    placer: &Placer,
    pod: &Pod,
    value: &Value,
    reason: &str,
    why: String,
) -> Result<Action, PlaceError> {
    let Some(ops) = release_ops(value) else {
        return Ok(Action::await_change());
    };
    match send(&placer.client, pod, &ops).await {
        Ok(()) => {}
        Err(kube::Error::Api(status)) if status.code == 404 => {
            return Ok(deleted(placer, &name_of(pod)));
        }
        Err(e) => return Err(e.into()),
    }
    publish(placer, pod, EventType::Warning, reason, why).await;
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

/// What is left of the deadline, counted from the pod's creation (a restart or another replica does
/// not start it again: events-and-leases.md §2.4); `None` when it has passed.
fn remaining(pod: &Pod, deadline: Duration) -> Option<Duration> {
    let Some(created) = pod.metadata.creation_timestamp.as_ref() else {
        return Some(deadline);
    };
    let now = k8s_openapi::jiff::Timestamp::now();
    let age = now.duration_since(created.0);
    let age = Duration::try_from(age).unwrap_or(Duration::ZERO);
    deadline.checked_sub(age).filter(|d| !d.is_zero())
}
