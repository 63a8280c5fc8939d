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
//!   within `--place-deadline` of the pod's creation, or when the API server refuses the patch.
//!
//! Idempotent: the gate's absence is the mark of a pod already done, and every patch is guarded by
//! `test`s on the pod's uid and the gate's index, so a restart or a second run places nothing twice.

pub mod controller;
pub mod pull_secrets;

use std::time::Duration;

use clap::Args;

/// The default of `--place-deadline`.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// The flags of `winplace serve --place`.
#[derive(Debug, Clone, Args)]
pub struct PlaceArgs {
    /// Place the pods the policy gated with `winplace.io/placement` (setting `placementGate`): read their
    /// images from the registries, pin OS, Windows build and toleration, and remove the gate. Needs the
    /// RBAC of deploy/place/rbac.yaml.
    #[arg(long, env = "WINPLACE_PLACE")]
    pub place: bool,
    /// A gated pod whose images are not read within this many seconds of its creation is released
    /// (its gate removed, nothing else) with a Warning Event saying why.
    #[arg(long, value_name = "SECONDS", default_value = "30",
          value_parser = crate::commands::check::parse_seconds)]
    pub place_deadline: Duration,
}
