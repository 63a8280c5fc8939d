//! The pods that carry winplace's scheduling gate ([`PLACEMENT_GATE`]) and when they were created: what
//! `/metrics` says of the pods waiting for the placement controller, whether or not one runs
//! (docs/monitoring.md). A gate is set only when a pod is created, by its client or at admission, and only
//! removed after (docs/reference/scheduling-gates.md §1, §2.1), so a gated pod has been gated since its
//! `creationTimestamp`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::Audit;
use crate::placement::gate::PLACEMENT_GATE;

/// The gated pods at one moment: how many, and the creation time of the oldest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GatedPods {
    /// Pods whose `spec.schedulingGates` names [`PLACEMENT_GATE`].
    pub pods: usize,
    /// The earliest `creationTimestamp` among them (`None`: no gated pod says when it was created).
    pub oldest_created: Option<Timestamp>,
}

impl GatedPods {
    /// How long the oldest gated pod has been gated at `now`, in whole seconds (0 when none is, and
    /// when its creation time is later than `now`: a clock behind the API server's).
    ///
    /// ```
    /// use winplace_rules::audit::GatedPods;
    /// let created: k8s_openapi::jiff::Timestamp = "2026-12-08T10:00:00Z".parse().unwrap();
    /// let gated = GatedPods { pods: 2, oldest_created: Some(created) };
    /// assert_eq!(gated.oldest_age_seconds("2026-12-08T10:01:30Z".parse().unwrap()), 90);
    /// assert_eq!(gated.oldest_age_seconds("2026-12-08T09:59:00Z".parse().unwrap()), 0);
    /// assert_eq!(GatedPods::default().oldest_age_seconds(created), 0);
    /// ```
    pub fn oldest_age_seconds(&self, now: Timestamp) -> u64 {
        self.oldest_created
            .map(|t| u64::try_from(now.as_second() - t.as_second()).unwrap_or(0))
            .unwrap_or(0)
    }
}

/// Whether `pod` carries the placement gate, and if so its creation time (in seconds since the epoch,
/// `None` when it has none).
pub(super) fn gated_since(pod: &Pod) -> Option<Option<i64>> {
    let gated = pod
        .spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.name == PLACEMENT_GATE));
    gated.then(|| {
        pod.metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.as_second())
    })
}

impl Audit {
    /// Keeps pod `key`'s gate as `pod` has it (added or changed).
    pub(super) fn note_gate(&mut self, key: &Arc<str>, pod: &Pod) {
        match gated_since(pod) {
            Some(created) => {
                self.gated.insert(key.clone(), created);
            }
            None => {
                self.gated.remove(key);
            }
        }
    }

    /// The pods that carry the placement gate now, and the creation time of the oldest.
    ///
    /// ```
    /// use winplace_rules::audit::{Audit, Change};
    /// let pod = |name: &str, created: &str, gates: serde_json::Value| serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": name, "namespace": "shop", "creationTimestamp": created},
    ///     "spec": {"schedulingGates": gates, "containers": [{"name": "c", "image": "app:1"}]}})).unwrap();
    /// let mut audit = Audit::new(winplace_rules::Settings::default());
    /// audit.apply(Change::Reset { nodes: vec![], runtime_classes: vec![], pods: vec![
    ///     pod("a", "2026-12-08T10:00:00Z", serde_json::json!([{"name": "winplace.io/placement"}])),
    ///     pod("b", "2026-12-08T09:00:00Z", serde_json::json!([{"name": "example.com/quota"}])),
    ///     pod("c", "2026-12-08T10:05:00Z", serde_json::json!([{"name": "example.com/quota"}, {"name": "winplace.io/placement"}])),
    /// ]});
    /// let gated = audit.gated_pods();
    /// assert_eq!(gated.pods, 2, "b is gated, but not by winplace");
    /// assert_eq!(gated.oldest_created, Some("2026-12-08T10:00:00Z".parse().unwrap()));
    /// // The controller removes a's gate: c is the oldest left.
    /// audit.apply(Change::Pod(Box::new(pod("a", "2026-12-08T10:00:00Z", serde_json::json!([])))));
    /// assert_eq!(audit.gated_pods().pods, 1);
    /// assert_eq!(audit.gated_pods().oldest_created, Some("2026-12-08T10:05:00Z".parse().unwrap()));
    /// audit.apply(Change::PodDeleted("shop".into(), "c".into()));
    /// assert_eq!(audit.gated_pods(), Default::default());
    /// ```
    pub fn gated_pods(&self) -> GatedPods {
        let oldest = self.gated.values().flatten().min().copied();
        GatedPods {
            pods: self.gated.len(),
            oldest_created: oldest.and_then(|s| Timestamp::from_second(s).ok()),
        }
    }
}
