//! Reading a gated pod's images from their registries and deciding what to do with it ([`decide`]):
//! the images whose names leave their OS or build open, asked for with the pod's pull secrets, again
//! after a transient failure, a last time at the deadline.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use tokio::time::Instant;
use winplace_rules::Settings;
use winplace_rules::windows::{ImageClass, ImageOs, classify_image};

use super::deadlines::{Budget, Decision};
use super::placer::{Placer, name_of};
use super::report::ReleaseReason;
use super::retry::{PlaceError, with_retries};
use crate::registry::{Credentials, ManifestFacts, ResolveError};

/// The first wait before an image whose look-up failed transiently (a server error, no connection, no
/// answer in time: [`ResolveError::is_transient`]) is asked for again; doubled after each try up to
/// [`RESOLVE_RETRY_MAX`]. The last try is at the deadline.
pub const RESOLVE_RETRY_FIRST: Duration = Duration::from_millis(200);

/// The longest wait between two tries of a transiently failing image.
pub const RESOLVE_RETRY_MAX: Duration = Duration::from_secs(2);

/// What to do with a gated pod whose open images are `open`: its pull secrets read (an API error that
/// may pass is asked again within the budget, never taken for a missing secret: `Err` then, and the
/// pod waits for the next reconcile rather than be read anonymously), its images read by
/// [`resolve_until`] the pod's deadline, and the answers turned into a [`Decision`].
pub async fn decide(
    placer: &Placer,
    pod: &Pod,
    open: &[String],
    budget: Budget,
) -> Result<Decision, PlaceError> {
    if open.is_empty() {
        // Every image is named by OS and build: pinned by the names alone.
        return Ok(Decision::Place(BTreeMap::new()));
    }
    let credentials = with_retries(&placer.report, budget.api, || {
        super::pull_secrets::for_pod(&placer.client, &placer.pull_secrets, pod)
    })
    .await
    .map_err(PlaceError::PullSecrets)?;
    let started = Instant::now();
    let results = resolve_until(placer, &name_of(pod), open, &credentials, budget.registry).await;
    placer.report.observe_resolution(started.elapsed());
    Ok(verdict(open, &results, placer.deadlines.deadline()))
}

/// Resolves `images` until `deadline`: each try runs its look-ups to their own time limit (never cut
/// by the deadline, so that one started in time gets its answer); those that failed transiently are
/// asked for again after a doubling wait, and a last time at the deadline. A registry that is down for
/// a while does not cost the pod its placement; one that stays down releases it after the deadline,
/// at most one look-up limit after it.
async fn resolve_until(
    placer: &Placer,
    pod: &str,
    images: &[String],
    credentials: &[Credentials],
    deadline: Instant,
) -> BTreeMap<String, Result<ManifestFacts, ResolveError>> {
    let resolver = &placer.resolver;
    let mut results = BTreeMap::new();
    let mut asking = images.to_vec();
    let mut wait = RESOLVE_RETRY_FIRST;
    loop {
        let limit = Instant::now() + resolver.timeout();
        results.extend(resolver.resolve_all_with(&asking, credentials, limit).await);
        asking = results
            .iter()
            .filter(|(_, r)| r.as_ref().is_err_and(ResolveError::is_transient))
            .map(|(image, _)| image.clone())
            .collect();
        if asking.is_empty() || Instant::now() >= deadline {
            return results;
        }
        // The next try after the wait, or at the deadline if that comes first: the last one.
        let next = (Instant::now() + wait).min(deadline);
        tracing::debug!(pod, images = ?asking, ?next, "image look-ups failed for now; asking again");
        tokio::time::sleep_until(next).await;
        placer.report.resolve_retried(asking.len() as u64);
        wait = (wait * 2).min(RESOLVE_RETRY_MAX);
    }
}

/// The decision the registries' answers for `open` lead to: pinned when every image was read and names
/// a platform; else released, saying for each image what went wrong, for the reason of
/// [`release_reason`].
fn verdict(
    open: &[String],
    results: &BTreeMap<String, Result<ManifestFacts, ResolveError>>,
    deadline: Duration,
) -> Decision {
    let late = format!(
        "not read within --place-deadline {}s of winplace taking the pod up",
        deadline.as_secs_f64()
    );
    let mut manifests: BTreeMap<String, ImageClass> = BTreeMap::new();
    let mut unresolved: Vec<String> = Vec::new();
    for image in open {
        match results.get(image) {
            Some(Ok(facts)) => match facts.class(image) {
                Some(class) => {
                    manifests.insert(image.clone(), class);
                }
                None => unresolved.push(format!(
                    "{image}: its manifest names no platform winplace can read"
                )),
            },
            // The last try at the deadline did not answer in its time either.
            Some(Err(ResolveError::Timeout(_))) | None => {
                unresolved.push(format!("{image}: {late}"))
            }
            Some(Err(error)) if error.is_transient() => {
                unresolved.push(format!("{image}: {late} (the last try: {error})"));
            }
            Some(Err(error)) => unresolved.push(format!("{image}: {error}")),
        }
    }
    if unresolved.is_empty() {
        return Decision::Place(manifests);
    }
    Decision::Release {
        reason: release_reason(open, results),
        why: format!(
            "winplace removed its scheduling gate without placing the pod: {}",
            unresolved.join("; ")
        ),
    }
}

/// Why images not read release the pod: the deadline when one did not answer in time, else the first
/// registry error's kind, else a manifest without a platform.
fn release_reason(
    open: &[String],
    results: &BTreeMap<String, Result<ManifestFacts, ResolveError>>,
) -> ReleaseReason {
    let answers: Vec<_> = open.iter().map(|image| results.get(image)).collect();
    if answers
        .iter()
        .any(|a| matches!(a, None | Some(Err(ResolveError::Timeout(_)))))
    {
        return ReleaseReason::Deadline;
    }
    answers
        .iter()
        .find_map(|a| match a {
            Some(Err(e)) => Some(ReleaseReason::Registry(e.kind())),
            _ => None,
        })
        .unwrap_or(ReleaseReason::NoPlatform)
}

/// The images whose names leave their OS or Windows build open (the ones worth a registry look-up),
/// distinct, in order.
pub fn open_images(pod: &Value, settings: &Settings) -> Vec<String> {
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

    #[test]
    fn the_release_says_what_the_registry_did() {
        let open = vec!["a".to_string(), "b".to_string()];
        let s = Duration::from_secs;
        let down = || {
            Err(ResolveError::Unavailable(
                "500 Internal Server Error".into(),
            ))
        };
        // (answers, the reason, what the note says)
        type Row = (
            Vec<Result<ManifestFacts, ResolveError>>,
            ReleaseReason,
            &'static str,
        );
        let rows: Vec<Row> = vec![
            (
                vec![Err(ResolveError::Timeout(s(10))), down()],
                ReleaseReason::Deadline,
                "a: not read within --place-deadline 30s",
            ),
            (
                vec![down(), Err(ResolveError::NotFound)],
                ReleaseReason::Registry("unavailable"),
                "(the last try: the registry is unavailable (server error): 500",
            ),
            (
                vec![
                    Err(ResolveError::Unauthorized("no".into())),
                    Err(ResolveError::NotFound),
                ],
                ReleaseReason::Registry("unauthorized"),
                "b: the registry does not know this repository or tag",
            ),
        ];
        for (answers, reason, says) in rows {
            let results: BTreeMap<_, _> = open.iter().cloned().zip(answers).collect();
            let Decision::Release { reason: got, why } = verdict(&open, &results, s(30)) else {
                panic!("placed")
            };
            assert_eq!(got, reason);
            assert!(why.contains(says), "{why}");
        }
        // No answer at all for an image: the deadline.
        let results = BTreeMap::new();
        assert!(matches!(
            verdict(&open, &results, s(30)),
            Decision::Release {
                reason: ReleaseReason::Deadline,
                ..
            }
        ));
    }
}
