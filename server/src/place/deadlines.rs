//! Time, in one place: when each gated pod's deadline ends ([`PodDeadlines`]), what was decided for a
//! pod (kept across reconciles, so that images once read are never read again, nor forgotten when a
//! patch must wait), and the one time budget a reconcile has ([`Budget`]).
//!
//! The deadline bounds waiting on registries, nothing else (docs/placement.md, "Every pod gets its
//! chance"): it counts from when this leader first took the pod up; the registry is asked a last time
//! at the deadline, and never is a pod released before it because the registry did not answer. The
//! API server's answers are waited for by each reconcile's budget ([`API_BUDGET`]), then the pod goes
//! back to the queue, keeping what was decided: a pod whose images were read is always pinned.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use tokio::time::Instant;
use winplace_rules::windows::ImageClass;

use super::report::ReleaseReason;

/// How long one reconcile asks the API server again (a pull secret, a read of the pod, its patch)
/// before it gives the pod back to the queue, to be tried again with what it decided.
pub const API_BUDGET: Duration = Duration::from_secs(30);

/// Pods this many and more are forgotten when they are not seen again (deleted while gated).
const REMEMBERED: usize = 100_000;

/// What a reconcile may spend: the registries until `registry`, the API server until `api`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The pod's deadline: no registry look-up starts after it.
    pub registry: Instant,
    /// When this reconcile stops asking the API server again.
    pub api: Instant,
}

/// What was decided for a pod once its images were asked for: kept until the pod is seen done.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Pin it: the classes of the images the registries answered for (image as written → class).
    Place(BTreeMap<String, ImageClass>),
    /// Remove only its gate.
    Release {
        /// Why, as a reason the Event and the metric name.
        reason: ReleaseReason,
        /// Why, in words: the Event's note.
        why: String,
    },
}

/// What [`PodDeadlines`] knows of one pod.
#[derive(Debug, Clone)]
struct Known {
    /// When this leader's deadline for it ends.
    end: Instant,
    /// What was decided, once decided.
    decision: Option<Decision>,
}

/// When each gated pod's deadline ends, and what was decided for it, for the leader that holds the Lease
/// now (cleared when this replica starts leading: a new leader gives every pod its chance again); and
/// the copies of pods this leader already ungated.
pub struct PodDeadlines {
    deadline: Duration,
    pods: Mutex<HashMap<String, Known>>,
    /// The `resourceVersion` each pod had when this leader's patch removed its gate (placed or released),
    /// by uid, until the pod is seen without the gate: the controller's cache may still hold the pod as it
    /// was, and a reconcile of that copy would only fail its patch's guard (422).
    ungated_at: Mutex<HashMap<String, String>>,
}

impl PodDeadlines {
    /// Deadlines of `deadline` (`--place-deadline`).
    pub fn new(deadline: Duration) -> Self {
        PodDeadlines {
            deadline,
            pods: Mutex::new(HashMap::new()),
            ungated_at: Mutex::new(HashMap::new()),
        }
    }

    /// `--place-deadline`.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The budget of a reconcile of `pod` starting now: its deadline (registered now if this leader had
    /// not seen it, [`deadline_end`]) and [`API_BUDGET`] from now.
    pub fn budget(&self, uid: &str, pod: &Pod) -> Budget {
        let now = Instant::now();
        let mut pods = self.pods.lock().unwrap_or_else(|p| p.into_inner());
        if pods.len() > REMEMBERED {
            // Pods deleted while gated are never reconciled again: forget the long-expired.
            pods.retain(|_, k| k.end + self.deadline * 10 > now);
        }
        let known = pods.entry(uid.to_string()).or_insert_with(|| Known {
            end: deadline_end(now, age(pod), self.deadline),
            decision: None,
        });
        Budget {
            registry: known.end,
            api: now + API_BUDGET,
        }
    }

    /// What was decided for the pod, if anything yet.
    pub fn decided(&self, uid: &str) -> Option<Decision> {
        self.pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(uid)
            .and_then(|k| k.decision.clone())
    }

    /// Keeps `decision` for the pod until it is done.
    pub fn decide(&self, uid: &str, decision: Decision) {
        if let Some(known) = self
            .pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(uid)
        {
            known.decision = Some(decision);
        }
    }

    /// The pod is gone, or seen without winplace's gate.
    pub fn forget(&self, uid: &str) {
        self.pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
        self.ungated_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
    }

    /// This leader's patch removed the gate of `pod` as read (placed or released): done, and a copy of
    /// it as read is stale ([`PodDeadlines::is_stale`]).
    pub fn ungated(&self, pod: &Pod) {
        let uid = pod.metadata.uid.as_deref().unwrap_or("");
        self.pods
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(uid);
        let mut ungated = self.ungated_at.lock().unwrap_or_else(|p| p.into_inner());
        if ungated.len() > REMEMBERED {
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
    pub fn is_stale(&self, uid: &str, pod: &Pod) -> bool {
        let ungated = self.ungated_at.lock().unwrap_or_else(|p| p.into_inner());
        pod.metadata
            .resource_version
            .as_ref()
            .is_some_and(|v| ungated.get(uid) == Some(v))
    }

    /// A new leadership: every pod's deadline counts again from when this leader takes it up.
    pub fn restart(&self) {
        self.pods.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.ungated_at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

/// When a pod's deadline ends, for a leader that first takes it up at `first_seen`, the pod being `age`
/// old then (`None`: no creation time).
///
/// * A pod seen fresh (younger than `deadline`): its creation plus `deadline`, as a pod expects. Its
///   first look-up runs its own time limit even when that passes the deadline, so a pod seen near the
///   end of its deadline is still read once: it ends at most one look-up limit after `creation +
///   deadline`.
/// * A pod seen late (gated while no controller ran, or during a failover; or of unknown age):
///   `deadline` from `first_seen`, so that it is resolved and placed rather than released blind.
pub fn deadline_end(first_seen: Instant, age: Option<Duration>, deadline: Duration) -> Instant {
    match age {
        Some(age) if age < deadline => first_seen + (deadline - age),
        _ => first_seen + deadline,
    }
}

/// How old the pod is by its `creationTimestamp` (`None` without one; zero when it is in the future).
fn age(pod: &Pod) -> Option<Duration> {
    let created = pod.metadata.creation_timestamp.as_ref()?;
    let age = k8s_openapi::jiff::Timestamp::now().duration_since(created.0);
    Some(Duration::try_from(age).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versioned(uid: &str, version: &str) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "uid": uid, "resourceVersion": version}}))
        .expect("pod")
    }

    #[test]
    fn a_copy_of_a_pod_from_before_its_own_ungating_is_stale_and_only_that() {
        let deadlines = PodDeadlines::new(Duration::from_secs(30));
        let read = versioned("u1", "13");
        deadlines.budget("u1", &read);
        assert!(!deadlines.is_stale("u1", &read), "not ungated yet");
        deadlines.ungated(&read);
        assert!(
            deadlines.pods.lock().unwrap().is_empty(),
            "done with its deadline"
        );
        // The cache's copy as it was read: stale. The patched pod, another pod, or the same uid at a
        // version after someone else's edit: not.
        assert!(deadlines.is_stale("u1", &read));
        assert!(!deadlines.is_stale("u1", &versioned("u1", "14")));
        assert!(!deadlines.is_stale("u2", &versioned("u2", "13")));
        // Seen without the gate (or gone): forgotten, so a pod gated again at that version is placed.
        deadlines.forget("u1");
        assert!(!deadlines.is_stale("u1", &read));
        // A new leadership forgets too.
        deadlines.ungated(&read);
        deadlines.restart();
        assert!(!deadlines.is_stale("u1", &read));
    }

    #[test]
    fn a_decision_outlives_its_reconcile_and_the_deadline_does_not_move() {
        let deadlines = PodDeadlines::new(Duration::from_secs(30));
        let pod = versioned("u1", "1");
        let first = deadlines.budget("u1", &pod);
        assert_eq!(deadlines.decided("u1"), None);
        let decision = Decision::Release {
            reason: ReleaseReason::Deadline,
            why: "late".into(),
        };
        deadlines.decide("u1", decision.clone());
        // The next reconcile (a patch that must wait): the same deadline, the same decision, a new
        // API budget.
        let again = deadlines.budget("u1", &pod);
        assert_eq!(again.registry, first.registry);
        assert!(again.api >= first.api);
        assert_eq!(deadlines.decided("u1"), Some(decision));
        // Done: forgotten with its decision.
        deadlines.ungated(&pod);
        assert_eq!(deadlines.decided("u1"), None);
    }

    #[test]
    fn every_pod_gets_its_chance_and_a_fresh_one_no_more() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        // (age when first seen, deadline, the end after t0)
        let rows = [
            // Seen at once: its creation plus the deadline.
            (Some(s(0)), s(30), s(30)),
            (Some(s(12)), s(30), s(18)),
            // Seen near the end of its deadline: what is left (its first look-up still runs its limit).
            (Some(s(29)), s(30), s(1)),
            // Gated while no controller ran (older than the deadline): the whole deadline from now.
            (Some(s(3600)), s(30), s(30)),
            (Some(s(30)), s(30), s(30)),
            // No creation time: from now.
            (None, s(30), s(30)),
        ];
        for (age, deadline, want) in rows {
            let end = deadline_end(t0, age, deadline);
            assert_eq!(end - t0, want, "{age:?} {deadline:?}");
            // Never after creation + deadline for a pod seen fresh.
            if let Some(age) = age.filter(|a| *a < deadline) {
                assert!(end - t0 + age <= deadline);
            }
        }
    }
}
