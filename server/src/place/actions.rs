//! What the controller does to a pod: pin it and remove its gate ([`place`]), remove only its gate
//! ([`release`]), and say so in an Event ([`publish`]).
//!
//! Both patch from the pod as read, guarded by `test`s (its uid, the gate's index, and for the pins its
//! `resourceVersion`), and both run until the patch lands or the pod is gone: an answer that may pass
//! (429, 5xx, none) is asked again; a refusal because the pod changed (409, or a failed `test`: 422) is
//! answered by reading the pod again and computing the patch anew. On that read, a pod that carries
//! exactly what the patch would have made is one whose patch landed while its answer was lost: done,
//! counted and told once. Only a 422 on a pod that did not change (a refusal on the merits) releases a
//! pod that was to be pinned. When the reconcile's API budget runs out, the pod goes back to the queue
//! and keeps what was decided.

use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use serde_json::Value;
use tokio::time::Instant;
use winplace_rules::placement::gate::gate_index;
use winplace_rules::placement::gated_patch::{landed, placement_patch, release_ops};

use super::deadlines::Decision;
use super::placer::{Placer, name_of};
use super::report::ReleaseReason;
use super::retry::{PlaceError, read_pod, with_retries};

/// What a patch meant to do, for the Event and the report once it landed.
enum Done<'a> {
    /// Pinned: the pins, and what the pod's owner must add or rebuild when no node runs its images.
    Placed {
        pins: &'a [String],
        warning: Option<&'a str>,
    },
    /// Released for `reason`, said in `why`.
    Released { reason: ReleaseReason, why: String },
}

/// What came of one patch of a pod.
enum Sent {
    /// It landed (its answer, or the pod read again, says so).
    Landed,
    /// The pod is gone.
    Deleted,
    /// The pod changed since it was read (the patch's guard failed): read again, here it is.
    Changed(Pod),
    /// The API server refused the patch on its merits (a 422 on a pod that did not change).
    Refused(Pod, String),
    /// Someone else removed winplace's gate meanwhile: nothing left to do.
    NotGated,
}

/// Pins `pod` as `decision` says and removes its gate, or releases it (see the module docs).
pub async fn act(
    placer: &Placer,
    pod: &Pod,
    open: &[String],
    decision: Decision,
    api: Instant,
) -> Result<Action, PlaceError> {
    match decision {
        Decision::Place(manifests) => place(placer, pod, open, &manifests, api).await,
        Decision::Release { reason, why } => release(placer, pod, open, reason, why, api).await,
    }
}

/// Pins the pod and removes its gate: the patch is computed from the pod read, and computed again from
/// a fresh read whenever the pod changed since, until it lands. A 422 on a pod that did not change is a
/// refusal on the merits: the pod is released.
async fn place(
    placer: &Placer,
    pod: &Pod,
    open: &[String],
    manifests: &std::collections::BTreeMap<String, winplace_rules::windows::ImageClass>,
    api: Instant,
) -> Result<Action, PlaceError> {
    let mut current = pod.clone();
    loop {
        let value = serde_json::to_value(&current)?;
        let context = placer.nodes.get();
        let Some(patch) = placement_patch(&value, &placer.settings, Some(&context), manifests)
        else {
            // Someone else removed winplace's gate meanwhile: nothing left to do.
            return Ok(not_gated(placer, &current));
        };
        if patch.pins.is_empty() {
            let why = format!(
                "winplace removed its scheduling gate without pinning the pod: {}",
                patch
                    .unpinned_because
                    .as_deref()
                    .unwrap_or("nothing to pin")
            );
            return release(
                placer,
                &current,
                open,
                ReleaseReason::NothingToPin,
                why,
                api,
            )
            .await;
        }
        match send(placer, &current, &patch.ops, "place", api).await? {
            Sent::Landed => {
                let done = Done::Placed {
                    pins: &patch.pins,
                    warning: patch.warning.as_deref(),
                };
                return Ok(finish(placer, &current, open, done).await);
            }
            Sent::Deleted => return Ok(deleted(placer, &current)),
            Sent::NotGated => return Ok(not_gated(placer, &current)),
            Sent::Changed(fresh) => {
                // A race, not a refusal: the pins again, from what the pod is now.
                placer.report.conflicted();
                tracing::debug!(pod = %name_of(&current), "the pod changed since it was read; placing it again from a fresh read");
                current = fresh;
            }
            Sent::Refused(fresh, message) => {
                let why = format!(
                    "the API server refused winplace's placement ({message}); winplace removed its scheduling gate without placing the pod"
                );
                return release(placer, &fresh, open, ReleaseReason::Refused, why, api).await;
            }
        }
    }
}

/// Removes winplace's gate and nothing else, says why in a Warning Event, and records the release once
/// the gate is gone. When the gates moved meanwhile (another controller removed its own), the removal is
/// computed anew from a fresh read.
async fn release(
    placer: &Placer,
    pod: &Pod,
    open: &[String],
    reason: ReleaseReason,
    why: String,
    api: Instant,
) -> Result<Action, PlaceError> {
    let mut current = pod.clone();
    loop {
        let Some(ops) = release_ops(&serde_json::to_value(&current)?) else {
            return Ok(not_gated(placer, &current));
        };
        match send(placer, &current, &ops, "release", api).await? {
            Sent::Landed => {
                let done = Done::Released { reason, why };
                return Ok(finish(placer, &current, open, done).await);
            }
            Sent::Deleted => return Ok(deleted(placer, &current)),
            Sent::NotGated => return Ok(not_gated(placer, &current)),
            Sent::Changed(fresh) | Sent::Refused(fresh, _) => {
                // Removing a gate is never refused on its merits: the pod changed.
                placer.report.conflicted();
                current = fresh;
            }
        }
    }
}

/// Sends `ops` (built from `pod` as read) until they land, the pod is gone, or `api` passes (`Err`).
async fn send(
    placer: &Placer,
    pod: &Pod,
    ops: &[Value],
    action: &'static str,
    api: Instant,
) -> Result<Sent, PlaceError> {
    let answer = with_retries(&placer.report, api, || patch(&placer.client, pod, ops)).await;
    let status = match answer {
        Ok(_) => return Ok(Sent::Landed),
        Err(kube::Error::Api(status)) if status.code == 404 => return Ok(Sent::Deleted),
        Err(kube::Error::Api(status)) if status.code == 409 || status.code == 422 => status,
        Err(source) => return Err(PlaceError::Patch { action, source }),
    };
    let Some(fresh) = read_pod(&placer.client, &placer.report, pod, api).await? else {
        return Ok(Sent::Deleted);
    };
    let (read, now) = (serde_json::to_value(pod)?, serde_json::to_value(&fresh)?);
    if landed(&read, ops, &now) {
        // The patch landed on an earlier try whose answer was lost: this try's guard failed on it.
        placer.report.answer_lost();
        tracing::info!(pod = %name_of(pod), "the answer to winplace's patch was lost; the pod read again shows it landed");
        return Ok(Sent::Landed);
    }
    if gate_index(&now).is_none() {
        return Ok(Sent::NotGated);
    }
    if fresh.metadata.resource_version != pod.metadata.resource_version {
        return Ok(Sent::Changed(fresh));
    }
    Ok(Sent::Refused(fresh, status.message.clone()))
}

/// `PATCH` with `application/json-patch+json` (never a strategic merge patch, which would replace the
/// tolerations: scheduling-gates.md §4.3); the pod as the API server answers it.
async fn patch(client: &kube::Client, pod: &Pod, ops: &[Value]) -> Result<Pod, kube::Error> {
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
    client.request::<Pod>(request).await
}

/// The patch built from `read` landed: remembered (a copy of the pod as read is stale now), counted,
/// logged and told in an Event, once.
async fn finish(placer: &Placer, read: &Pod, open: &[String], done: Done<'_>) -> Action {
    placer.deadlines.ungated(read);
    let name = name_of(read);
    match done {
        Done::Placed { pins, warning } => {
            let listed = pins.join(", ");
            let (type_, reason, note) = match warning {
                Some(warning) => {
                    placer.report.unrunnable();
                    (
                        EventType::Warning,
                        "ImagesNotRunnable",
                        format!(
                            "winplace pinned the pod where its images run ({listed}), and it stays Pending: {warning}"
                        ),
                    )
                }
                None => (
                    EventType::Normal,
                    "Placed",
                    format!("winplace placed the pod: {listed}"),
                ),
            };
            match type_ {
                EventType::Warning => tracing::warn!(pod = %name, "{note}"),
                EventType::Normal => tracing::info!(pod = %name, "{note}"),
            }
            placer
                .report
                .placed(name, open.to_vec(), pins.to_vec(), note.clone());
            publish(placer, read, type_, reason, note).await;
        }
        Done::Released { reason, why } => {
            tracing::warn!(pod = %name, "{why}");
            placer
                .report
                .released(name, open.to_vec(), reason, why.clone());
            publish(placer, read, EventType::Warning, reason.event(), why).await;
        }
    }
    Action::await_change()
}

/// The pod was deleted before winplace's patch reached it: said once, counted, and nothing more to do
/// (the controller does not reconcile a pod that is gone).
fn deleted(placer: &Placer, pod: &Pod) -> Action {
    placer.report.deleted();
    placer
        .deadlines
        .forget(pod.metadata.uid.as_deref().unwrap_or(""));
    tracing::info!(
        pod = %name_of(pod),
        "the pod was deleted before winplace placed it; nothing to do"
    );
    Action::await_change()
}

/// Someone else removed winplace's gate: nothing left to do.
fn not_gated(placer: &Placer, pod: &Pod) -> Action {
    placer
        .deadlines
        .forget(pod.metadata.uid.as_deref().unwrap_or(""));
    Action::await_change()
}

/// Posts an Event about `pod` (`events.k8s.io/v1`, reporting controller `winplace`); a failure is
/// logged, never retried (the patch is what matters).
pub async fn publish(placer: &Placer, pod: &Pod, type_: EventType, reason: &str, note: String) {
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
