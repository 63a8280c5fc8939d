//! One published state of the audit: what every handler reads, immutable once published (the audit
//! thread in [`crate::state`] publishes a new one after each batch of changes; [`crate::state::answers`] builds
//! its answers from one).

use std::collections::BTreeMap;

use winplace_rules::audit::{AuditReport, GatedPods};
use winplace_rules::model::ClusterContext;

/// One published state of the audit: immutable, shared by every handler that reads it.
///
/// ```
/// let empty = winplace::state::published::Published::default();
/// assert_eq!(empty.revision, 0);
/// ```
#[derive(Debug, Default)]
pub struct Published {
    /// Increases with every published change.
    pub revision: u64,
    /// The audit report.
    pub report: AuditReport,
    /// Nodes and RuntimeClasses, for the playground.
    pub context: ClusterContext,
    /// Objects held, by kind (`node`, `pod`, `runtimeclass`).
    pub objects: BTreeMap<&'static str, usize>,
    /// The workloads' images whose name tells neither their OS nor their Windows build: what the
    /// background resolution asks registries about.
    pub images: Vec<String>,
    /// The pods that carry winplace's scheduling gate, and the creation time of the oldest.
    pub gated: GatedPods,
}
