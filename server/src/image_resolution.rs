//! The server's background image resolution: after every published revision, the workloads' images
//! whose name says too little ([`crate::state::published::Published::images`]) and that have not been asked about
//! yet are resolved (bounded and cached by the [`ImageResolver`]); what the registries said goes back to
//! the audit thread as [`SourceEvent::ImageFacts`], which re-audits only the workloads running a changed
//! image. Failed look-ups are retried after [`RETRY_AFTER`]. What is kept is bounded by the cluster: the
//! answers and failures of images no workload runs any more are dropped (the resolver's cache, bounded by
//! bytes, may still hold them).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use winplace_rules::rules::ImageFacts;

use crate::registry::{self, ImageResolver};
use crate::source::SourceEvent;
use crate::state::AppState;

/// How long a failed look-up is left alone before it is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(300);

/// Starts the resolution task; returns the stream of its answers, to be merged into the audit's events.
pub fn spawn(state: AppState, resolver: Arc<ImageResolver>) -> BoxStream<'static, SourceEvent> {
    let (tx, rx) = tokio::sync::mpsc::channel::<SourceEvent>(16);
    let mut changes = state.subscribe();
    let shutdown = state.shutdown_signal();
    tokio::spawn(async move {
        tokio::pin!(shutdown);
        let mut facts = ImageFacts::default();
        // When each failed image may be tried again.
        let mut failed: BTreeMap<String, Instant> = BTreeMap::new();
        loop {
            let images = state.published().images.clone();
            let running: std::collections::BTreeSet<&str> =
                images.iter().map(String::as_str).collect();
            let before = facts.manifests.len() + facts.unresolved.len();
            facts
                .manifests
                .retain(|image, _| running.contains(image.as_str()));
            facts
                .digests
                .retain(|image, _| running.contains(image.as_str()));
            facts
                .unresolved
                .retain(|image, _| running.contains(image.as_str()));
            failed.retain(|image, _| running.contains(image.as_str()));
            let dropped = before != facts.manifests.len() + facts.unresolved.len();
            drop(running);
            let now = Instant::now();
            let todo: Vec<String> = images
                .into_iter()
                .filter(|i| !facts.manifests.contains_key(i))
                .filter(|i| failed.get(i).is_none_or(|retry| *retry <= now))
                .collect();
            if todo.is_empty() && dropped {
                // Only forgetting: the audit no longer needs what it held about those images.
                if tx
                    .send(SourceEvent::ImageFacts(facts.clone()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            if !todo.is_empty() {
                tracing::debug!(images = todo.len(), "resolving images");
                let results = resolver.resolve_all(&todo).await;
                let answers = registry::image_facts(&results);
                for image in answers.manifests.keys() {
                    failed.remove(image);
                    facts.unresolved.remove(image);
                }
                for (image, why) in &answers.unresolved {
                    tracing::info!(image, why, "cannot resolve an image");
                    failed.insert(image.clone(), Instant::now() + RETRY_AFTER);
                }
                facts.manifests.extend(answers.manifests);
                facts.digests.extend(answers.digests);
                facts.unresolved.extend(answers.unresolved);
                if tx
                    .send(SourceEvent::ImageFacts(facts.clone()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            // Wait for the next revision, or for the earliest retry.
            let next_retry = failed.values().min().copied();
            let retry = async {
                match next_retry {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = &mut shutdown => return,
                _ = retry => {}
                received = changes.recv() => match received {
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return,
                },
            }
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}
