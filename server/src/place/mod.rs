//! `winplace serve --place`: the controller that places pods gated with `winplace.io/placement` (issue 30,
//! docs/placement.md).
//!
//! The policy (setting `placementGate`) gates a Pod CREATE whose images leave its OS or Windows build open
//! by name. This controller, built on kube-rs's runtime `Controller` over pods:
//! * reads the gated pod's open images from their registries ([`crate::registry::ImageResolver`]), with
//!   the pod's and its service account's image pull secrets first ([`pull_secrets`]), then the Docker
//!   config as everywhere else;
//! * computes the pins with the rules crate and sends the JSON patch
//!   [`winplace_rules::placement::gated_patch::placement_patch`] builds: only what kube-apiserver allows on
//!   a gated pod, removing only winplace's gate;
//! * releases the pod (removes its gate, nothing else) with a Warning Event when an image cannot be read
//!   within `--place-deadline` (counted from when the leader takes the pod up, after one full resolution
//!   attempt), or when the API server refuses the patch on its merits (a conflict is retried);
//! * pins a pod whose images no node runs where they run anyway, and says what to add or rebuild.
//!
//! Two replicas do not fight: only the holder of a `coordination.k8s.io/v1` Lease places pods
//! ([`lease`]); the other waits and takes over when the Lease expires.
//!
//! Idempotent: the gate's absence is the mark of a pod already done, and every patch is guarded by
//! `test`s on the pod's uid and the gate's index, so a restart or a second run places nothing twice.

pub mod controller;
pub mod lease;
pub mod pull_secrets;
pub mod report;

use std::time::Duration;

use clap::Args;

/// The default of `--place-deadline`.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// The flags of `winplace serve --place`.
#[derive(Debug, Clone, Args)]
pub struct PlaceArgs {
    /// Place the pods the policy gated with `winplace.io/placement` (setting `placementGate`): read their
    /// images from the registries, pin OS, Windows build and toleration, and remove the gate. Needs the
    /// RBAC of the chart's placement controller (`placement.enabled`, docs/deploy.md).
    #[arg(long, env = "WINPLACE_PLACE")]
    pub place: bool,
    /// A gated pod whose images are not read within this many seconds is released (its gate removed,
    /// nothing else) with a Warning Event saying why. Counted from when the leader first takes the pod
    /// up, never before one full resolution attempt: a pod older than this when the controller starts
    /// (gated while none ran) gets the whole deadline; a pod seen fresh ends by its creation plus this,
    /// plus at most one registry look-up limit.
    #[arg(long, value_name = "SECONDS", default_value = "30",
          value_parser = crate::inputs::parse_seconds)]
    pub place_deadline: Duration,
    /// Gated pods placed at once (reconciles in flight); more wait their turn. The deadline of a pod
    /// that waits counts from when it is taken up.
    #[arg(long, value_name = "N", default_value_t = controller::DEFAULT_CONCURRENCY,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub place_concurrency: u16,
    /// The `coordination.k8s.io/v1` Lease that elects the one replica that places pods.
    #[arg(long, value_name = "NAME", default_value = lease::DEFAULT_NAME)]
    pub place_lease_name: String,
    /// The Lease's namespace (default: `$POD_NAMESPACE`, else `default`).
    #[arg(long, value_name = "NAMESPACE")]
    pub place_lease_namespace: Option<String>,
    /// How long a replica that stopped renewing keeps the Lease; the others take over after it.
    /// Renewals every 2/15 of it; the holder stops placing when it has not renewed within 2/3 of it.
    #[arg(long, value_name = "SECONDS", default_value = "15",
          value_parser = crate::inputs::parse_seconds)]
    pub place_lease_duration: Duration,
    /// This replica's holder identity in the Lease (default: `$POD_NAME`, else the host name, `_` and
    /// the process id). A restart with the same identity renews the Lease at once; with another, it
    /// waits for the old holder's Lease to expire.
    #[arg(long, value_name = "ID")]
    pub place_identity: Option<String>,
}

impl PlaceArgs {
    /// What the controller is asked to do.
    pub fn options(&self) -> controller::PlaceOptions {
        controller::PlaceOptions {
            deadline: self.place_deadline,
            concurrency: self.place_concurrency,
        }
    }

    /// The Lease these flags name.
    pub fn lease(&self) -> lease::LeaseConfig {
        lease::LeaseConfig {
            namespace: self
                .place_lease_namespace
                .clone()
                .unwrap_or_else(lease::default_namespace),
            name: self.place_lease_name.clone(),
            identity: self
                .place_identity
                .clone()
                .unwrap_or_else(lease::default_identity),
            duration: self.place_lease_duration,
        }
    }
}
