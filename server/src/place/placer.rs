//! What every reconcile shares ([`Placer`]): the client whose writes the Lease guards, the resolver,
//! the settings, the caches, the deadlines, the Event recorder and the report.

use std::sync::Arc;

use kube::Client;
use kube::runtime::events::Recorder;
use winplace_rules::Settings;

use super::caches::NodeContext;
use super::deadlines::PodDeadlines;
use super::pull_secrets::PullSecretCaches;
use super::report::PlaceReport;
use crate::registry::ImageResolver;

/// What every reconcile shares.
pub struct Placer {
    /// The controller's client: every write is sent only while this replica leads
    /// ([`crate::lease::WriteGuard`]).
    pub client: Client,
    /// Reads the images' manifests (shared with `--resolve-images`).
    pub resolver: Arc<ImageResolver>,
    /// The settings the pins follow.
    pub settings: Settings,
    /// The Nodes, as the rules take them.
    pub nodes: NodeContext,
    /// The ServiceAccounts and pull Secrets.
    pub pull_secrets: PullSecretCaches,
    /// Each pod's deadline and what was decided for it.
    pub deadlines: PodDeadlines,
    /// Posts the Events.
    pub recorder: Recorder,
    /// The counters and the recent placements (`/metrics`, `/api/placements`).
    pub report: Arc<PlaceReport>,
}

/// `namespace/name` of a pod, as logs and `/api/placements` name it.
pub fn name_of(pod: &k8s_openapi::api::core::v1::Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}
