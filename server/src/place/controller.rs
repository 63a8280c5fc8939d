//! The reconcile loop of `serve --place` (see [`super`]): one gated pod at a time per object, many at
//! once across pods; registry answers shared through the resolver's cache (one look-up per distinct
//! reference).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
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

/// What every reconcile shares.
pub struct Placer {
    client: Client,
    resolver: Arc<ImageResolver>,
    settings: Settings,
    deadline: Duration,
    nodes: NodeContext,
    recorder: Recorder,
    /// The counters and the recent placements (`/metrics`, `/api/placements`).
    pub report: Arc<PlaceReport>,
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

/// Runs the controller until the process ends: a reflector over Nodes (the cluster's Windows builds and
/// taints), and the pod controller while `leading` says this replica holds the Lease
/// ([`super::lease`]).
pub async fn run(
    client: Client,
    report: Arc<PlaceReport>,
    settings: Settings,
    deadline: Duration,
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
    if nodes.wait_until_ready().await.is_err() {
        tracing::error!("the Node watch ended before its first list; placement stops");
        return;
    }
    let placer = Arc::new(Placer {
        recorder: Recorder::new(client.clone(), Reporter::from("winplace")),
        client: client.clone(),
        resolver: report.resolver().clone(),
        settings,
        deadline,
        nodes: NodeContext {
            store: nodes,
            changes,
            built: Mutex::new(None),
        },
        report: report.clone(),
    });
    loop {
        if leading.wait_for(|held| *held).await.is_err() {
            return;
        }
        report.set_leading(true);
        tokio::select! {
            () = place(client.clone(), placer.clone()) => return,
            lost = leading.wait_for(|held| !*held) => if lost.is_err() { return },
        }
        report.set_leading(false);
    }
}

/// The pod controller, until the process ends (or the caller drops it: the Lease was lost).
async fn place(client: Client, placer: Arc<Placer>) {
    // A gated pod is never bound: unscheduled pods are the only candidates (scheduling-gates.md §4.8).
    let pods = kube::Api::<Pod>::all(client);
    tracing::info!(deadline = ?placer.deadline, "placing pods gated with winplace.io/placement");
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
            let started = tokio::time::Instant::now();
            let results =
                resolve_until(placer.as_ref(), &name, &open, &credentials, deadline).await;
            placer.report.observe_resolution(started.elapsed());
            results
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
        let because = unresolved_reason(&open, &results);
        let released = Released {
            event: "ImagesUnresolved",
            label: because,
            images: &open,
        };
        return release(&placer, &pod, &value, released, why).await;
    }
    let context = placer.nodes.get();
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
        let released = Released {
            event: "NothingToPin",
            label: reason::NOTHING_TO_PIN,
            images: &open,
        };
        return release(&placer, &pod, &value, released, why).await;
    }
    match send(&placer.client, &pod, &patch.ops).await {
        Ok(()) => {
            let note = format!("winplace placed the pod: {}", patch.pins.join(", "));
            tracing::info!(pod = %name, "{note}");
            let pins = patch.pins.clone();
            placer
                .report
                .placed(name.clone(), open.clone(), pins, note.clone());
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
            let released = Released {
                event: "PlacementRefused",
                label: reason::REFUSED,
                images: &open,
            };
            release(&placer, &fresh, &fresh_value, released, why).await
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
fn deleted(placer: &Placer, pod: &str) -> Action {
    placer.report.deleted();
    tracing::info!(
        pod,
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
/// ([`PlaceReport::released`]) once the gate is gone.
async fn release(
    placer: &Placer,
    pod: &Pod,
    value: &Value,
    released: Released<'_>,
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
    placer.report.released(
        name_of(pod),
        released.images.to_vec(),
        released.label,
        why.clone(),
    );
    publish(placer, pod, EventType::Warning, released.event, why).await;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Node {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).expect("node")
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
