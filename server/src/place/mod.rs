//! `winplace serve --place`: the controller that places pods gated with `winplace.io/placement`
//! (docs/placement.md).
//!
//! The policy (setting `placementGate`) gates a Pod CREATE whose images leave its OS or Windows build open
//! by name. This controller, built on kube-rs's runtime `Controller` over pods:
//! * reads the gated pod's open images from their registries ([`crate::registry::ImageResolver`]), with
//!   the pod's and its service account's image pull secrets first ([`pull_secrets`]), then the Docker
//!   config as everywhere else, again after a transient failure and a last time at its deadline
//!   ([`images`], [`deadlines`]);
//! * computes the pins with the rules crate and sends the JSON patch
//!   [`winplace_rules::placement::gated_patch::placement_patch`] builds: only what kube-apiserver allows on
//!   a gated pod, removing only winplace's gate and its label ([`actions`]);
//! * releases the pod (removes its gate, nothing else) with a Warning Event when an image cannot be read
//!   by `--place-deadline`, or when the API server refuses the pins on their merits; an API error that
//!   may pass, or a conflict, never releases a pod whose images were read ([`retry`]);
//! * pins a pod whose images no node runs where they run anyway, and says what to add or rebuild.
//!
//! Two replicas do not fight: only the holder of a `coordination.k8s.io/v1` Lease places pods
//! ([`crate::lease`]), and a replica holds it only while it can place ([`caches`]: every cache listed,
//! none failing past the lease duration; the controller task running: [`run`] gives the Lease up when
//! it ends or panics, then starts it again).
//!
//! Idempotent: the gate's absence is the mark of a pod already done, and every patch is guarded by
//! `test`s on the pod's uid and the gate's index, so a restart or a second run places nothing twice.

pub mod actions;
pub mod caches;
pub mod controller;
pub mod deadlines;
pub mod images;
pub mod placer;
pub mod pull_secrets;
pub mod report;
pub mod retry;

use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::lease::{self, CanAct};

/// The default of `--place-deadline`.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// The default Lease name (`--place-lease-name`).
pub const DEFAULT_LEASE_NAME: &str = "winplace-placer";

/// The first wait before a controller that ended or panicked is started again; doubled each time up to
/// [`RESTART_MAX`]. The Lease is given up at once meanwhile.
pub const RESTART_FIRST: Duration = Duration::from_secs(1);

/// The longest wait before a controller that ended or panicked is started again.
pub const RESTART_MAX: Duration = Duration::from_secs(300);

/// The flags of `winplace serve --place`.
#[derive(Debug, Clone, Args)]
pub struct PlaceArgs {
    /// Place the pods the policy gated with `winplace.io/placement` (setting `placementGate`): read their
    /// images from the registries, pin OS, Windows build and toleration, and remove the gate. Needs the
    /// RBAC of the chart's placement controller (`placement.enabled`, docs/deploy.md).
    #[arg(long, env = "WINPLACE_PLACE")]
    pub place: bool,
    /// A gated pod whose images' registries have not answered after this many seconds is released
    /// (its gate removed, nothing else) with a Warning Event saying why. Counted from when the leader
    /// first takes the pod up; the registries are asked a last time at the deadline, so a pod seen fresh
    /// is released no earlier than its creation plus this, and at most one registry look-up limit
    /// after; a pod older than this when the controller starts (gated while none ran) gets the whole
    /// deadline. It bounds waiting on registries only: a pod whose images were read is pinned whatever
    /// the API server answers meanwhile.
    #[arg(long, value_name = "SECONDS", default_value = "30",
          value_parser = crate::inputs::parse_seconds)]
    pub place_deadline: Duration,
    /// Gated pods placed at once (reconciles in flight); more wait their turn. The deadline of a pod
    /// that waits counts from when it is taken up.
    #[arg(long, value_name = "N", default_value_t = controller::DEFAULT_CONCURRENCY,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub place_concurrency: u16,
    /// The `coordination.k8s.io/v1` Lease that elects the one replica that places pods.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_LEASE_NAME)]
    pub place_lease_name: String,
    /// The Lease's namespace (default: `$POD_NAMESPACE`, else `default`).
    #[arg(long, value_name = "NAMESPACE")]
    pub place_lease_namespace: Option<String>,
    /// How long a replica that stopped renewing keeps the Lease; the others take over after it.
    /// Renewals every 2/15 of it; the holder stops placing when it has not renewed within 2/3 of it.
    /// Also how long one of the controller's caches may fail to list before the replica gives the
    /// Lease up (it cannot place).
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
            list_failure_bound: self.place_lease_duration,
        }
    }

    /// The Lease these flags name.
    pub fn lease(&self) -> lease::LeaseConfig {
        lease::LeaseConfig {
            work: "placing pods",
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

/// Runs the placement controller until the process ends, and what it says of itself to the Lease:
/// whether it can place ([`CanAct`], from its caches), and that it cannot when its task ends or
/// panics. Then it is started again after a doubling wait ([`RESTART_FIRST`] … [`RESTART_MAX`]),
/// while the Lease is not held.
pub async fn run(
    client: kube::Client,
    report: Arc<report::PlaceReport>,
    settings: winplace_rules::Settings,
    options: controller::PlaceOptions,
    leading: tokio::sync::watch::Receiver<bool>,
    can_act: tokio::sync::watch::Sender<CanAct>,
) {
    let can_act = Arc::new(can_act);
    let mut wait = RESTART_FIRST;
    loop {
        let started = tokio::time::Instant::now();
        let task = tokio::spawn(controller::run(
            client.clone(),
            report.clone(),
            settings.clone(),
            options,
            leading.clone(),
            can_act.clone(),
        ));
        let why = match task.await {
            Ok(()) => "the placement controller ended".to_string(),
            Err(error) if error.is_panic() => {
                let payload = error.into_panic();
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                format!("the placement controller panicked: {message}")
            }
            Err(error) => format!("the placement controller was cancelled: {error}"),
        };
        tracing::error!("{why}; it starts again in {} s", wait.as_secs());
        can_act.send_replace(CanAct::No(why.clone()));
        report.set_blocked(Some(why));
        report.set_leading(false);
        if started.elapsed() > RESTART_MAX {
            wait = RESTART_FIRST;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RESTART_MAX);
    }
}
