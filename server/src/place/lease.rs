//! Leader election over a `coordination.k8s.io/v1` Lease, so that two `serve --place` replicas do not
//! fight: only the holder places pods (docs/placement.md, "Two replicas").
//!
//! client-go's `LeaderElector` rules (docs/reference/events-and-leases.md §2.3), on `Api<Lease>`: no
//! crate fits kube 4 and takes the Lease with optimistic concurrency (§2.6).
//! * Every `retry` the candidate GETs the Lease (404: it CREATEs it and leads; 409 AlreadyExists:
//!   another won). A Lease held by another is valid while `leaseDurationSeconds` have not passed since
//!   THIS process saw its record change (its own clock, never the holder's `renewTime`).
//! * An expired (or empty) Lease is taken with a PUT carrying the resourceVersion read: of two
//!   candidates, the API server answers the second 409 Conflict (§2.5). `leaseTransitions` counts the
//!   changes of holder; `acquireTime` is kept while the holder stays.
//! * The leader renews every `retry`, and stops leading when it has not renewed within
//!   `renew_deadline` (< the lease duration), so that it stops before anyone else can take over.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

/// The default Lease name (`--place-lease-name`).
pub const DEFAULT_NAME: &str = "winplace-placer";
/// The default lease duration (`--place-lease-duration`): controller-runtime's (§2.3).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(15);

/// Which Lease, who asks, and how long it lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// The Lease's name.
    pub name: String,
    /// This replica's `holderIdentity` (unique per replica).
    pub identity: String,
    /// `leaseDurationSeconds`: how long a silent holder keeps the Lease.
    pub duration: Duration,
}

impl LeaseConfig {
    /// How long the leader may fail to renew before it stops leading: two thirds of the duration
    /// (controller-runtime's 10 s of 15 s).
    ///
    /// ```
    /// # use winplace::place::lease::LeaseConfig;
    /// let c = LeaseConfig { namespace: "ns".into(), name: "l".into(), identity: "a".into(),
    ///                       duration: std::time::Duration::from_secs(15) };
    /// assert_eq!(c.renew_deadline().as_secs(), 10);
    /// assert_eq!(c.retry().as_secs(), 2);
    /// ```
    pub fn renew_deadline(&self) -> Duration {
        self.duration * 2 / 3
    }

    /// How often a candidate tries and a leader renews: 2/15 of the duration (controller-runtime's
    /// 2 s of 15 s), so that `duration > renew_deadline > 1.2 × retry` as client-go requires.
    pub fn retry(&self) -> Duration {
        self.duration * 2 / 15
    }
}

/// This replica's identity: `$POD_NAME` (the Downward API: a restarted container keeps it, and renews
/// its Lease at once), else the host name and the process id (two processes on one host are two
/// candidates).
pub fn default_identity() -> String {
    if let Some(pod) = std::env::var("POD_NAME").ok().filter(|n| !n.is_empty()) {
        return pod;
    }
    let host = hostname::get()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "winplace".into());
    format!("{host}_{}", std::process::id())
}

/// The namespace of the Lease when `--place-lease-namespace` is not given: `$POD_NAMESPACE` (the
/// Downward API), else `default`.
pub fn default_namespace() -> String {
    std::env::var("POD_NAMESPACE")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "default".into())
}

/// What the candidate last saw of the Lease: its spec, resourceVersion, and when (on this process's
/// clock) the spec last changed.
struct Observed {
    spec: LeaseSpec,
    resource_version: Option<String>,
    at: Instant,
}

/// One candidate (see the module docs).
pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
    observed: Option<Observed>,
    /// The API server answered that it serves no Leases (said once).
    no_lease_resource: bool,
}

impl Elector {
    /// A candidate for `config`'s Lease.
    pub fn new(client: Client, config: LeaseConfig) -> Self {
        Elector {
            api: Api::namespaced(client, &config.namespace),
            config,
            observed: None,
            no_lease_resource: false,
        }
    }

    fn record(&self, acquired: Option<MicroTime>, transitions: i32) -> LeaseSpec {
        let now = MicroTime(Timestamp::now());
        LeaseSpec {
            holder_identity: Some(self.config.identity.clone()),
            lease_duration_seconds: Some(self.config.duration.as_secs().max(1) as i32),
            acquire_time: Some(acquired.unwrap_or_else(|| now.clone())),
            renew_time: Some(now),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    fn remember(&mut self, lease: Lease) {
        let spec = lease.spec.unwrap_or_default();
        let at = match &self.observed {
            Some(o) if o.spec == spec => o.at,
            _ => Instant::now(),
        };
        self.observed = Some(Observed {
            spec,
            resource_version: lease.metadata.resource_version,
            at,
        });
    }

    fn lease(&self, spec: LeaseSpec, resource_version: Option<String>) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                resource_version,
                ..ObjectMeta::default()
            },
            spec: Some(spec),
        }
    }

    /// One round of client-go's `tryAcquireOrRenew`: `true` when this replica holds the Lease after it.
    /// Errors of the API server count as "not held this round" (logged).
    pub async fn try_acquire_or_renew(&mut self) -> bool {
        let me = self.config.identity.clone();
        // 1. The holder renews with what it last wrote (no GET while nobody else writes).
        if let Some(o) = &self.observed
            && o.spec.holder_identity.as_deref() == Some(&me)
        {
            let spec = self.record(
                o.spec.acquire_time.clone(),
                o.spec.lease_transitions.unwrap_or(0),
            );
            let lease = self.lease(spec, o.resource_version.clone());
            if let Ok(lease) = self
                .api
                .replace(&self.config.name, &PostParams::default(), &lease)
                .await
            {
                self.remember(lease);
                return true;
            }
        }
        // 2. Read it; create it when there is none.
        let current = match self.api.get_opt(&self.config.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                let lease = self.lease(self.record(None, 0), None);
                return match self.api.create(&PostParams::default(), &lease).await {
                    Ok(lease) => {
                        self.remember(lease);
                        true
                    }
                    Err(kube::Error::Api(status))
                        if is_no_lease_resource(status.code, &status.message) =>
                    {
                        self.without_leases(&status.message)
                    }
                    Err(error) => {
                        tracing::debug!(%error, "creating the placement Lease");
                        false
                    }
                };
            }
            Err(kube::Error::Api(status)) if is_no_lease_resource(status.code, &status.message) => {
                return self.without_leases(&status.message);
            }
            Err(error) => {
                tracing::warn!(%error, lease = %self.config.name, "cannot read the placement Lease");
                return false;
            }
        };
        // 3. Held by another and not expired on this process's clock: wait.
        self.remember(current);
        let Some(o) = &self.observed else {
            return false;
        };
        let holder = o.spec.holder_identity.clone().unwrap_or_default();
        let lasts = Duration::from_secs(o.spec.lease_duration_seconds.unwrap_or(0).max(0) as u64);
        if !holder.is_empty() && holder != me && o.at + lasts > Instant::now() {
            return false;
        }
        // 4. Take (or keep) it, guarded by the resourceVersion read.
        let transitions = o.spec.lease_transitions.unwrap_or(0);
        let spec = if holder == me {
            self.record(o.spec.acquire_time.clone(), transitions)
        } else {
            self.record(None, transitions + 1)
        };
        let lease = self.lease(spec, o.resource_version.clone());
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(lease) => {
                self.remember(lease);
                true
            }
            Err(error) => {
                tracing::debug!(%error, "taking the placement Lease");
                false
            }
        }
    }

    /// An API server that serves no Lease resource: this replica places, as the one replica there can
    /// be, rather than leave every gated pod to its deadline (said once).
    fn without_leases(&mut self, message: &str) -> bool {
        if !self.no_lease_resource {
            tracing::warn!(lease = %self.config.name, message,
                "the API server serves no coordination.k8s.io/v1 Leases: placing without leader \
                 election (run one replica)");
            self.no_lease_resource = true;
        }
        true
    }

    /// Gives the Lease up (holder empty, 1 s), as client-go's `ReleaseOnCancel`, so that another
    /// replica takes over at once. Only when this replica holds it.
    pub async fn release(&mut self) {
        let Some(o) = &self.observed else { return };
        if o.spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return;
        }
        let spec = LeaseSpec {
            holder_identity: None,
            lease_duration_seconds: Some(1),
            ..o.spec.clone()
        };
        let lease = self.lease(spec, o.resource_version.clone());
        if let Err(error) = self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            tracing::warn!(%error, "cannot release the placement Lease");
        }
        self.observed = None;
    }
}

/// Runs the election for ever: the returned receiver says whether this replica leads now.
pub fn spawn(client: Client, config: LeaseConfig) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(run(Elector::new(client, config), tx));
    rx
}

async fn run(mut elector: Elector, leading: watch::Sender<bool>) {
    let retry = elector.config.retry().max(Duration::from_millis(10));
    let deadline = elector.config.renew_deadline();
    let mut renewed: Option<Instant> = None;
    loop {
        let held = elector.try_acquire_or_renew().await;
        let now = Instant::now();
        if held {
            if renewed.is_none() {
                tracing::info!(lease = %elector.config.name, identity = %elector.config.identity,
                    "this replica holds the placement Lease: placing pods");
            }
            renewed = Some(now);
            leading.send_replace(true);
        } else if let Some(at) = renewed
            && now.duration_since(at) > deadline
        {
            tracing::warn!(lease = %elector.config.name,
                "the placement Lease was not renewed in time: this replica stops placing pods");
            renewed = None;
            leading.send_replace(false);
        }
        if leading.is_closed() {
            elector.release().await;
            return;
        }
        // client-go jitters the candidates' retries by up to 1.2× so that they do not ask at once.
        let jitter = if *leading.borrow() {
            Duration::ZERO
        } else {
            retry.mul_f64(0.2 * f64::from(std::process::id() % 100) / 100.0)
        };
        tokio::time::sleep(retry + jitter).await;
    }
}

/// Whether a 404 on a Lease says the API server serves no Lease resource at all. kube-apiserver always
/// serves `coordination.k8s.io/v1`; its only 404 on a Lease's GET is the Lease's own NotFound (which
/// `get_opt` turns into `None`), and on its create a missing namespace, whose message names
/// `namespaces`. Anything else that answers 404 has no Leases.
fn is_no_lease_resource(code: u16, message: &str) -> bool {
    code == 404 && !message.contains("namespaces")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_404_without_a_namespace_says_there_are_no_leases() {
        assert!(is_no_lease_resource(404, "404 page not found"));
        assert!(!is_no_lease_resource(
            404,
            "namespaces \"winplace\" not found"
        ));
        assert!(!is_no_lease_resource(409, "already exists"));
        assert!(!is_no_lease_resource(403, "forbidden"));
    }

    #[test]
    fn timings_follow_client_go_constraints() {
        for secs in [1, 2, 15, 60] {
            let c = LeaseConfig {
                namespace: "n".into(),
                name: "l".into(),
                identity: "i".into(),
                duration: Duration::from_secs(secs),
            };
            // LeaseDuration > RenewDeadline > 1.2 × RetryPeriod (events-and-leases.md §2.3).
            assert!(c.duration > c.renew_deadline());
            assert!(c.renew_deadline() > c.retry().mul_f64(1.2));
        }
    }
}
