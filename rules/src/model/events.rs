//! Events about pods, as the audit keeps them: only the ones whose message an error signature explains
//! ([`crate::explain`]), reduced to a [`PodEvent`] as soon as they are decoded, so that a cluster's
//! hundreds of thousands of Events cost a decode each and nothing after.
//!
//! Both APIs are read: `v1` Events (`involvedObject`, `message`, `count`, `firstTimestamp`) and
//! `events.k8s.io/v1` Events (`regarding`, `note`, `series.count` or `deprecatedCount`, `eventTime` or
//! `deprecatedFirstTimestamp`). The same event is visible through both APIs under one name: its key is
//! `namespace/name` either way.

use serde::Deserialize;

use crate::explain::{Cause, Match, explain_line};

/// An event about a pod whose message a signature explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodEvent {
    /// The Event's own `namespace/name`.
    pub key: String,
    /// The pod it is about, `namespace/name`.
    pub pod: String,
    /// The event's reason (`FailedCreatePodSandBox`).
    pub reason: String,
    /// How many times it happened.
    pub count: u64,
    /// When it first happened (the event's timestamp, as written).
    pub since: Option<String>,
    /// What the message means: one match per cause it shows (a scheduler message can name taints and
    /// selectors), never empty.
    pub explained: Vec<Match>,
}

impl PodEvent {
    /// The first cause.
    pub fn cause(&self) -> Cause {
        self.explained
            .first()
            .map_or(Cause::OsMismatch, |m| m.cause)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct RawEvent {
    metadata: RawMeta,
    involved_object: Option<RawRef>,
    regarding: Option<RawRef>,
    reason: Option<String>,
    message: Option<String>,
    note: Option<String>,
    count: Option<i64>,
    deprecated_count: Option<i64>,
    series: Option<RawSeries>,
    first_timestamp: Option<String>,
    deprecated_first_timestamp: Option<String>,
    event_time: Option<String>,
    last_timestamp: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawMeta {
    name: Option<String>,
    namespace: Option<String>,
    #[serde(rename = "creationTimestamp")]
    creation_timestamp: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawRef {
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RawSeries {
    count: Option<i64>,
}

/// Whether (`kind`, `apiVersion`) is an Event of an API that is read.
pub fn is_event(kind: &str, api_version: &str) -> bool {
    kind == "Event" && matches!(api_version, "v1" | "events.k8s.io/v1")
}

/// The event in `raw` (JSON text of one Event of either API) when it is about a pod and a signature
/// explains its message; `Ok(None)` otherwise. Errors are serde's, for an item that is not an object.
pub fn decode_event_json(raw: &str) -> Result<Option<PodEvent>, serde_json::Error> {
    let event: RawEvent = serde_json::from_str(raw)?;
    Ok(reduce(event))
}

/// [`decode_event_json`] for a value (YAML snapshots, the live source's typed Events as JSON).
pub fn decode_event_value(
    value: &serde_json::Value,
) -> Result<Option<PodEvent>, serde_json::Error> {
    let event = RawEvent::deserialize(value)?;
    Ok(reduce(event))
}

fn reduce(event: RawEvent) -> Option<PodEvent> {
    let object = event.involved_object.or(event.regarding)?;
    if object.kind.as_deref() != Some("Pod") {
        return None;
    }
    let message = event.message.or(event.note)?;
    let explained = explain_line(&message);
    if explained.is_empty() {
        return None;
    }
    let namespace = object
        .namespace
        .or_else(|| event.metadata.namespace.clone())
        .unwrap_or_else(|| "default".to_string());
    let pod = format!("{namespace}/{}", object.name?);
    let key = format!(
        "{}/{}",
        event.metadata.namespace.as_deref().unwrap_or(&namespace),
        event.metadata.name.as_deref().unwrap_or("")
    );
    let count = event
        .series
        .and_then(|s| s.count)
        .or(event.count)
        .or(event.deprecated_count)
        .unwrap_or(1)
        .max(1) as u64;
    let since = event
        .first_timestamp
        .or(event.deprecated_first_timestamp)
        .or(event.event_time)
        .or(event.last_timestamp)
        .or(event.metadata.creation_timestamp);
    Some(PodEvent {
        key,
        pod,
        reason: event.reason.unwrap_or_default(),
        count,
        since,
        explained,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_apis_are_read_and_only_explained_pod_events_are_kept() {
        let core = r#"{"apiVersion":"v1","kind":"Event","metadata":{"name":"web-0.1","namespace":"shop"},
            "involvedObject":{"kind":"Pod","name":"web-0","namespace":"shop"},"reason":"Failed","count":7,
            "firstTimestamp":"2026-11-25T10:00:00Z",
            "message":"Error: failed to create containerd container: hcs::CreateComputeSystem w: The container operating system does not match the host operating system."}"#;
        let e = decode_event_json(core).expect("json").expect("kept");
        assert_eq!(
            (e.key.as_str(), e.pod.as_str(), e.count, e.since.as_deref()),
            (
                "shop/web-0.1",
                "shop/web-0",
                7,
                Some("2026-11-25T10:00:00Z")
            )
        );
        assert_eq!(e.cause(), Cause::BuildMismatch);
        let new = r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"web-0.2","namespace":"shop"},
            "regarding":{"kind":"Pod","name":"web-0","namespace":"shop"},"reason":"FailedScheduling",
            "series":{"count":3},"eventTime":"2026-11-25T11:00:00.000000Z",
            "note":"0/3 nodes are available: 3 node(s) had untolerated taint {os: windows}."}"#;
        let e = decode_event_json(new).expect("json").expect("kept");
        assert_eq!((e.count, e.cause()), (3, Cause::UntoleratedTaint));
        // Not about a pod, or nothing explained: not kept.
        let node = core.replace(r#""kind":"Pod""#, r#""kind":"Node""#);
        assert_eq!(decode_event_json(&node).expect("json"), None);
        let pulled = core.replace("Error: failed", "Successfully pulled image");
        let pulled = pulled.replace("does not match the host operating system", "is fine");
        assert_eq!(decode_event_json(&pulled).expect("json"), None);
        assert!(decode_event_json("[1]").is_err());
    }
}
