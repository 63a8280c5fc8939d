//! Leader election over a `coordination.k8s.io/v1` Lease, for any work of which one replica at a time
//! may write to the cluster: placing pods (`serve --place`, docs/placement.md, "Two replicas") today.
//! The work names its Lease ([`LeaseConfig`]) and says whether it can act ([`CanAct`]); this module
//! holds the Lease only while it can, and every write of the work goes through [`WriteGuard`].
//!
//! client-go's `LeaderElector` rules (docs/reference/events-and-leases.md §2.3), on `Api<Lease>`: no
//! crate passes the tests these rules are held to (docs/dependencies.md, "Leader election").
//! * A replica that cannot act (its caches are not listed, its work ended or panicked) does not ask for
//!   the Lease; a leader that can no longer act gives it up at once (below), so that the Lease says "I
//!   can do the work", not "I am running": whoever reads it (the placement policy) acts on that.
//! * Every `retry` the candidate GETs the Lease (404: it CREATEs it and leads; 409 AlreadyExists:
//!   another won). A Lease held by another is valid while `leaseDurationSeconds` have not passed since
//!   THIS process saw its record change (its own clock, never the holder's `renewTime`).
//! * An expired (or empty) Lease is taken with a PUT carrying the resourceVersion read: of two
//!   candidates, the API server answers the second 409 Conflict (§2.5). `leaseTransitions` counts the
//!   changes of holder; `acquireTime` is kept while the holder stays.
//! * The leader renews every `retry`, each attempt bounded by what is left of its renew deadline (a
//!   request that hangs is dropped there, as client-go's `renew` cancels its context at `RenewDeadline`,
//!   §2.7), and it may act only until `renew_deadline` after the START of its last successful renewal
//!   ([`Leadership`]): before anyone else, who waits `leaseDurationSeconds` from when it SAW that
//!   renewal, can take over.
//! * Every write of the work goes through [`WriteGuard`], which refuses it unless this replica leads at
//!   that instant: a replica that lost the Lease (or whose renewal hangs) writes nothing more, even
//!   before its work has been stopped.
//! * Giving up (on shutdown, SIGTERM; or when the work can no longer act) stops the writes, waits for
//!   those in flight, and releases the Lease as client-go's `ReleaseOnCancel` does (§2.7): the next
//!   replica leads at its next try.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::time::Instant;

/// The default lease duration: controller-runtime's (§2.3).
pub const DEFAULT_DURATION: Duration = Duration::from_secs(15);

/// Which Lease, who asks, and how long it lasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// What the Lease guards, as a log line says it (`placing pods`).
    pub work: &'static str,
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
    /// # use winplace::lease::LeaseConfig;
    /// let c = LeaseConfig { work: "placing pods", namespace: "ns".into(), name: "l".into(),
    ///                       identity: "a".into(), duration: std::time::Duration::from_secs(15) };
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

/// Whether the work a Lease guards can be done now: `No` says why (`cannot list secrets: 403 …`), for
/// the logs and `/readyz`. A replica holds the Lease only while its work says `Yes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanAct {
    /// The work can be done: the replica may hold the Lease.
    Yes,
    /// It cannot, for this reason: the replica does not ask for the Lease, and gives it up if it holds it.
    No(String),
}

impl CanAct {
    /// Whether it is [`CanAct::Yes`].
    pub fn is_yes(&self) -> bool {
        matches!(self, CanAct::Yes)
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
                        tracing::debug!(%error, lease = %self.config.name, "creating the Lease");
                        false
                    }
                };
            }
            Err(kube::Error::Api(status)) if is_no_lease_resource(status.code, &status.message) => {
                return self.without_leases(&status.message);
            }
            Err(error) => {
                tracing::warn!(%error, lease = %self.config.name, "cannot read the Lease");
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
                tracing::debug!(%error, lease = %self.config.name, "taking the Lease");
                false
            }
        }
    }

    /// An API server that serves no Lease resource: this replica does the work, as the one replica
    /// there can be, rather than not at all (said once).
    fn without_leases(&mut self, message: &str) -> bool {
        if !self.no_lease_resource {
            tracing::warn!(lease = %self.config.name, message, work = self.config.work,
                "the API server serves no coordination.k8s.io/v1 Leases: working without leader \
                 election (run one replica)");
            self.no_lease_resource = true;
        }
        true
    }

    /// Gives the Lease up as client-go's `release` does (`ReleaseOnCancel`, events-and-leases.md §2.7):
    /// no holder, `leaseDurationSeconds: 1`, `renewTime` and `acquireTime` now, the transitions kept, so
    /// that another replica takes it at its next try instead of a lease duration later. Only when this
    /// replica holds it; a stale resourceVersion (a renewal whose answer was lost) is read again once.
    /// Returns whether the Lease was given up.
    pub async fn release(&mut self) -> bool {
        let me = self.config.identity.clone();
        let Some(o) = &self.observed else {
            return false;
        };
        if o.spec.holder_identity.as_deref() != Some(me.as_str()) {
            return false;
        }
        let mut resource_version = o.resource_version.clone();
        let mut spec = o.spec.clone();
        for _ in 0..2 {
            let now = MicroTime(Timestamp::now());
            let released = LeaseSpec {
                holder_identity: None,
                lease_duration_seconds: Some(1),
                renew_time: Some(now.clone()),
                acquire_time: Some(now),
                ..spec.clone()
            };
            let lease = self.lease(released, resource_version.clone());
            match self
                .api
                .replace(&self.config.name, &PostParams::default(), &lease)
                .await
            {
                Ok(_) => {
                    self.observed = None;
                    tracing::info!(lease = %self.config.name, identity = %me,
                        "gave the Lease up");
                    return true;
                }
                Err(error) => {
                    tracing::debug!(%error, lease = %self.config.name, "releasing the Lease");
                    // Read it again: still ours (our renewal landed unseen), try once more.
                    match self.api.get_opt(&self.config.name).await {
                        Ok(Some(current))
                            if current
                                .spec
                                .as_ref()
                                .and_then(|s| s.holder_identity.as_deref())
                                == Some(me.as_str()) =>
                        {
                            resource_version = current.metadata.resource_version;
                            spec = current.spec.unwrap_or_default();
                        }
                        _ => break,
                    }
                }
            }
        }
        tracing::warn!(lease = %self.config.name,
            "cannot give the Lease up: the other replicas take it when it expires");
        self.observed = None;
        false
    }
}

/// Whether this replica may act on the cluster, shared by the election loop (which extends it at every
/// renewal) and every write of the controller ([`WriteGuard`]). Judged at the instant of each write on
/// this process's monotonic clock, so that a renewal that hangs cannot keep a replica acting: it may act
/// until `renew_deadline` after the start of its last successful renewal, no longer.
#[derive(Clone, Default)]
pub struct Leadership {
    inner: Arc<LeadershipState>,
}

#[derive(Default)]
struct LeadershipState {
    /// Until when this replica may act (`None`: it does not lead).
    until: Mutex<Option<Instant>>,
    /// Set on shutdown: never act again.
    stopped: AtomicBool,
    /// Writes in flight hold a read permit; shutdown takes the write side to wait for them.
    writes: Arc<tokio::sync::RwLock<()>>,
}

impl Leadership {
    /// A replica that does not lead (yet).
    pub fn new() -> Self {
        Leadership::default()
    }

    /// Whether this replica may act now.
    ///
    /// ```
    /// # use winplace::lease::Leadership;
    /// # use std::time::Duration;
    /// let l = Leadership::new();
    /// assert!(!l.is_leading());
    /// l.renewed(tokio::time::Instant::now(), Duration::from_secs(10));
    /// assert!(l.is_leading());
    /// l.lost();
    /// assert!(!l.is_leading());
    /// ```
    pub fn is_leading(&self) -> bool {
        if self.inner.stopped.load(Ordering::Acquire) {
            return false;
        }
        let until = *self.inner.until.lock().unwrap_or_else(|p| p.into_inner());
        until.is_some_and(|u| Instant::now() < u)
    }

    /// A renewal that started at `started` succeeded: this replica may act until `started + deadline`.
    pub fn renewed(&self, started: Instant, deadline: Duration) {
        *self.inner.until.lock().unwrap_or_else(|p| p.into_inner()) = Some(started + deadline);
    }

    /// This replica no longer leads.
    pub fn lost(&self) {
        *self.inner.until.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// A permit for one write, held until its answer: `None` when this replica may not act now.
    fn write_permit(&self) -> Option<tokio::sync::OwnedRwLockReadGuard<()>> {
        if !self.is_leading() {
            return None;
        }
        self.inner.writes.clone().try_read_owned().ok()
    }

    /// The work can no longer act: refuses writes (until the replica leads again), then waits (up to
    /// `wait`) for the writes in flight. Returns whether they all finished.
    pub async fn pause(&self, wait: Duration) -> bool {
        self.lost();
        let writes = self.inner.writes.clone();
        tokio::time::timeout(wait, writes.write_owned())
            .await
            .is_ok()
    }

    /// Shutdown: refuses every write from now on, then waits (up to `wait`) for the writes in flight.
    /// Returns whether they all finished.
    pub async fn stop(&self, wait: Duration) -> bool {
        self.inner.stopped.store(true, Ordering::Release);
        self.lost();
        let writes = self.inner.writes.clone();
        match tokio::time::timeout(wait, writes.write_owned()).await {
            Ok(guard) => {
                // Held for ever: no permit is handed out again.
                std::mem::forget(guard);
                true
            }
            Err(_) => false,
        }
    }
}

/// The error of a write refused because this replica does not lead (a `kube::Error::Service`).
#[derive(Debug, thiserror::Error)]
#[error("this replica does not hold the Lease: the write was not sent")]
pub struct NotLeading;

/// A `tower` layer for the client of the work a Lease guards: every request but a read (`GET`, `HEAD`,
/// `OPTIONS`) is sent only while [`Leadership::is_leading`], and holds a permit until its answer so
/// that shutdown waits for it before giving the Lease up.
#[derive(Clone)]
pub struct WriteGuard {
    leadership: Leadership,
}

impl WriteGuard {
    /// A guard over `leadership`.
    pub fn new(leadership: Leadership) -> Self {
        WriteGuard { leadership }
    }
}

impl<S> tower::Layer<S> for WriteGuard {
    type Service = Guarded<S>;

    fn layer(&self, inner: S) -> Guarded<S> {
        Guarded {
            inner,
            leadership: self.leadership.clone(),
        }
    }
}

/// The service of [`WriteGuard`].
#[derive(Clone)]
pub struct Guarded<S> {
    inner: S,
    leadership: Leadership,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B, R> tower::Service<http::Request<B>> for Guarded<S>
where
    S: tower::Service<http::Request<B>, Response = R>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
    R: Send + 'static,
{
    type Response = R;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<R, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let read = matches!(
            *request.method(),
            http::Method::GET | http::Method::HEAD | http::Method::OPTIONS
        );
        if read {
            let answer = self.inner.call(request);
            return Box::pin(async move { answer.await.map_err(Into::into) });
        }
        let Some(permit) = self.leadership.write_permit() else {
            tracing::debug!(method = %request.method(), uri = %request.uri(),
                "not leading: the write is not sent");
            return Box::pin(std::future::ready(Err(Box::new(NotLeading) as BoxError)));
        };
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into);
            drop(permit);
            answer
        })
    }
}

/// The election of one replica, running until `shutdown` resolves: `leading` says whether this replica
/// leads (its work runs while it does), and `leadership` is what the work's writes check
/// ([`WriteGuard`]). It asks for the Lease only while `can_act` says [`CanAct::Yes`] (a closed channel
/// says no: the work is gone), and gives the Lease up as soon as it says no. On shutdown it stops the
/// writes, waits for those in flight (up to the renew deadline) and gives the Lease up; the returned
/// handle ends when that is done.
pub fn spawn(
    client: Client,
    config: LeaseConfig,
    leadership: Leadership,
    can_act: watch::Receiver<CanAct>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> (watch::Receiver<bool>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = watch::channel(false);
    let task = tokio::spawn(run(
        Elector::new(client, config),
        leadership,
        tx,
        WorkState::new(can_act),
        shutdown,
    ));
    (rx, task)
}

/// What the work says, as the election reads it: a closed channel is a work that ended.
struct WorkState {
    can_act: watch::Receiver<CanAct>,
    closed: bool,
}

impl WorkState {
    fn new(can_act: watch::Receiver<CanAct>) -> Self {
        WorkState {
            can_act,
            closed: false,
        }
    }

    /// `None` when the work can act, else why not.
    fn blocked(&self) -> Option<String> {
        if self.closed {
            return Some("the work it guards has ended".into());
        }
        match &*self.can_act.borrow() {
            CanAct::Yes => None,
            CanAct::No(why) => Some(why.clone()),
        }
    }

    /// Resolves at the next change of what the work says (never once the channel closed).
    async fn changed(&mut self) {
        if self.closed {
            return std::future::pending().await;
        }
        if self.can_act.changed().await.is_err() {
            self.closed = true;
        }
    }
}

async fn run(
    mut elector: Elector,
    leadership: Leadership,
    leading: watch::Sender<bool>,
    mut work: WorkState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let retry = elector.config.retry().max(Duration::from_millis(10));
    let deadline = elector.config.renew_deadline();
    let name = elector.config.name.clone();
    let what = elector.config.work;
    let mut renewed: Option<Instant> = None;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        // A replica that cannot do the work does not ask for the Lease; one that holds it gives it up.
        if let Some(why) = work.blocked() {
            if renewed.take().is_some() {
                tracing::warn!(lease = %name, work = what, reason = %why,
                    "this replica cannot do the work the Lease guards: giving the Lease up");
                leading.send_replace(false);
                tokio::task::yield_now().await;
                if !leadership.pause(deadline).await {
                    tracing::warn!(lease = %name, "writes still in flight; giving the Lease up anyway");
                }
                if tokio::time::timeout(deadline, elector.release())
                    .await
                    .is_err()
                {
                    tracing::warn!(lease = %name,
                        "giving the Lease up did not answer in time: the others take it when it expires");
                }
            }
            tokio::select! {
                () = work.changed() => continue,
                () = &mut shutdown => break,
            }
        }
        let started = Instant::now();
        // Each attempt ends by the renew deadline: a leader's at what is left of it since its last
        // renewal, a candidate's a whole one (client-go: the renew context's timeout, §2.7).
        let limit = match renewed {
            Some(at) => (at + deadline).saturating_duration_since(started),
            None => deadline,
        };
        let attempt = tokio::time::timeout(limit, elector.try_acquire_or_renew());
        let held = tokio::select! {
            held = attempt => match held {
                Ok(held) => held,
                Err(_) => {
                    tracing::warn!(lease = %name, ?limit,
                        "the Lease request did not answer within the renew deadline");
                    false
                }
            },
            () = &mut shutdown => break,
        };
        let now = Instant::now();
        if held {
            if renewed.is_none() {
                tracing::info!(lease = %name, identity = %elector.config.identity,
                    "this replica holds the Lease: {what}");
            }
            renewed = Some(started);
            leadership.renewed(started, deadline);
            leading.send_replace(true);
        } else if let Some(at) = renewed
            && now.duration_since(at) >= deadline
        {
            tracing::warn!(lease = %name,
                "the Lease was not renewed in time: this replica stops {what}");
            renewed = None;
            leadership.lost();
            leading.send_replace(false);
        }
        // client-go jitters the candidates' retries by up to 1.2× so that they do not ask at once.
        let jitter = if renewed.is_some() {
            Duration::ZERO
        } else {
            retry.mul_f64(0.2 * f64::from(std::process::id() % 100) / 100.0)
        };
        tokio::select! {
            () = tokio::time::sleep(retry + jitter) => {}
            // What the work says changed: judged at once (a leader that can no longer act gives up).
            () = work.changed() => {}
            () = &mut shutdown => break,
        }
    }
    // Shutdown: no write from now on; the writes in flight land before the Lease is given up (client-go:
    // "ensure all code guarded by this lease has successfully completed prior to cancelling").
    // The work first (it drops its reconciles, which then send nothing), then the writes.
    leading.send_replace(false);
    tokio::task::yield_now().await;
    let drained = leadership.stop(deadline).await;
    if !drained {
        tracing::warn!(lease = %name, "writes still in flight at shutdown; giving the Lease up anyway");
    }
    if tokio::time::timeout(deadline, elector.release())
        .await
        .is_err()
    {
        tracing::warn!(lease = %name,
            "giving the Lease up did not answer in time: the others take it when it expires");
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
                work: "testing",
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
