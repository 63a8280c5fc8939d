//! The reconcile loop of `serve --place` (see [`super`]), top to bottom:
//!
//! 1. [`run`]: the caches ([`super::caches`]); whether they let this replica place, told to the Lease
//!    ([`crate::lease::CanAct`]), to `/readyz` and to `/metrics`; the pod controller while this replica
//!    holds the Lease, at most `--place-concurrency` reconciles at once.
//! 2. [`reconcile`], one gated pod: what was decided for it before (kept across reconciles,
//!    [`super::deadlines`]), else its images read by its deadline ([`super::images`]); then the
//!    decision carried out until the patch lands ([`super::actions`]). The API server's answers are
//!    asked again within one budget per reconcile ([`super::retry`]); when it runs out the pod goes back
//!    to the queue with its decision.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::watcher;
use tokio::sync::watch;
use tokio::task::JoinSet;
use winplace_rules::Settings;
use winplace_rules::placement::gate::gate_index;

use super::caches::{Caches, UNSCHEDULED, probe_pods};
use super::deadlines::PodDeadlines;
use super::placer::{Placer, name_of};
use super::report::PlaceReport;
use super::retry::PlaceError;
use super::{actions, images};
use crate::lease::CanAct;
use crate::source::watch_error::Watch;

/// How long a failed reconcile waits before the next try (the pod keeps its gate and its decision).
pub const RETRY: Duration = Duration::from_secs(5);

/// The default of `--place-concurrency`: reconciles at once. Each mostly waits (on a registry, whose
/// look-ups of one reference are shared, or on the API server), so a burst of gated pods goes through
/// in a few rounds; a bound keeps a burst from opening thousands of requests at once.
pub const DEFAULT_CONCURRENCY: u16 = 32;

/// How often whether the caches let this replica place is judged again (besides at each change).
const JUDGED_EVERY: Duration = Duration::from_millis(500);

/// How often the pods' list is probed while it fails and no pod controller runs.
const PROBE_EVERY: Duration = Duration::from_secs(2);

/// What the controller is asked to do: `--place-deadline`, `--place-concurrency`, and how long a cache
/// may fail to list before this replica stops placing (the lease duration).
#[derive(Debug, Clone, Copy)]
pub struct PlaceOptions {
    /// `--place-deadline`.
    pub deadline: Duration,
    /// `--place-concurrency` (at least 1).
    pub concurrency: u16,
    /// How long a listed cache may keep failing before this replica gives the Lease up.
    pub list_failure_bound: Duration,
}

/// Runs the controller until the process ends (or this task is dropped or panics: its caches and pod
/// controller end with it). `can_act` says whether it can place: every cache listed, none failing past
/// the bound; the pod controller runs while `leading` says this replica holds the Lease.
pub async fn run(
    client: Client,
    report: Arc<PlaceReport>,
    settings: Settings,
    options: PlaceOptions,
    mut leading: watch::Receiver<bool>,
    can_act: Arc<watch::Sender<CanAct>>,
) {
    let mut tasks = JoinSet::new();
    let caches = Caches::start(&client, &mut tasks, report.clone());
    let health = caches.health.clone();
    tasks.spawn(probe_pods(client.clone(), health.clone(), PROBE_EVERY));
    {
        let (health, report, can_act) = (health.clone(), report.clone(), can_act.clone());
        tasks.spawn(async move {
            loop {
                judge(
                    &health.can_act(options.list_failure_bound),
                    &report,
                    &can_act,
                );
                tokio::select! {
                    () = health.changed.notified() => {}
                    () = tokio::time::sleep(JUDGED_EVERY) => {}
                }
            }
        });
    }
    let placer = Arc::new(Placer {
        recorder: Recorder::new(client.clone(), Reporter::from("winplace")),
        client: client.clone(),
        resolver: report.resolver().clone(),
        settings,
        nodes: caches.nodes,
        pull_secrets: caches.pull_secrets,
        deadlines: PodDeadlines::new(options.deadline),
        report: report.clone(),
    });
    loop {
        if leading.wait_for(|held| *held).await.is_err() {
            return;
        }
        report.set_leading(true);
        tokio::select! {
            () = place(client.clone(), placer.clone(), options.concurrency, &health) => return,
            lost = leading.wait_for(|held| !*held) => if lost.is_err() { return },
        }
        report.set_leading(false);
    }
}

/// Tells the Lease, `/readyz` and `/metrics` whether this replica can place; a change is logged.
fn judge(now: &CanAct, report: &PlaceReport, can_act: &watch::Sender<CanAct>) {
    can_act.send_if_modified(|was| {
        if was == now {
            return false;
        }
        match now {
            CanAct::Yes => tracing::info!("the placement controller can place pods"),
            CanAct::No(why) => {
                tracing::warn!("the placement controller cannot place pods: {why}")
            }
        }
        *was = now.clone();
        true
    });
    report.set_blocked(match now {
        CanAct::Yes => None,
        CanAct::No(why) => Some(why.clone()),
    });
}

/// The pod controller, until the process ends (or the caller drops it: the Lease was lost).
async fn place(
    client: Client,
    placer: Arc<Placer>,
    concurrency: u16,
    health: &super::caches::CacheHealth,
) {
    // A gated pod is never bound: unscheduled pods are the only candidates (scheduling-gates.md §4.8).
    let pods = kube::Api::<Pod>::all(client);
    placer.deadlines.restart();
    tracing::info!(deadline = ?placer.deadlines.deadline(), concurrency, "placing pods gated with winplace.io/placement");
    Controller::new(pods, watcher::Config::default().fields(UNSCHEDULED))
        .with_config(controller::Config::default().concurrency(concurrency.max(1)))
        .run(reconcile, error_policy, placer)
        .for_each(|result| {
            match result {
                Err(controller::Error::QueueError(error)) => {
                    health.failed("pods", Watch::Pods, &error)
                }
                Err(error) => tracing::debug!(%error, "placement reconcile"),
                Ok(_) => {}
            }
            futures::future::ready(())
        })
        .await;
}

fn error_policy(pod: Arc<Pod>, error: &PlaceError, _: Arc<Placer>) -> Action {
    tracing::warn!(pod = %name_of(&pod), %error, "placing the pod failed for now; it keeps its gate and is tried again");
    Action::requeue(RETRY)
}

/// One gated pod: decided (its images read by its deadline), then placed or released.
async fn reconcile(pod: Arc<Pod>, placer: Arc<Placer>) -> Result<Action, PlaceError> {
    let value = serde_json::to_value(&*pod)?;
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    if gate_index(&value).is_none() || pod.metadata.deletion_timestamp.is_some() {
        placer.deadlines.forget(&uid);
        return Ok(Action::await_change());
    }
    if placer.deadlines.is_stale(&uid, &pod) {
        // The cache's copy from before this leader's own patch; the watch brings the patched pod next.
        return Ok(Action::await_change());
    }
    fault_injection::panic_on(&pod);
    let open = images::open_images(&value, &placer.settings);
    let budget = placer.deadlines.budget(&uid, &pod);
    let decision = match placer.deadlines.decided(&uid) {
        Some(decision) => decision,
        None => {
            let decision = images::decide(&placer, &pod, &open, budget).await?;
            placer.deadlines.decide(&uid, decision.clone());
            decision
        }
    };
    actions::act(&placer, &pod, &open, decision, budget.api).await
}

/// A panic on purpose, for the test that the Lease is given up when the controller panics: debug
/// builds only, when `WINPLACE_TEST_PANIC_ON_POD` names the pod (`namespace/name`).
mod fault_injection {
    use k8s_openapi::api::core::v1::Pod;

    #[cfg(debug_assertions)]
    pub fn panic_on(pod: &Pod) {
        if let Ok(name) = std::env::var("WINPLACE_TEST_PANIC_ON_POD")
            && name == super::name_of(pod)
        {
            panic!("WINPLACE_TEST_PANIC_ON_POD: a panic on purpose, reconciling {name}");
        }
    }

    #[cfg(not(debug_assertions))]
    pub fn panic_on(_: &Pod) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judging_tells_the_lease_and_readyz_and_only_changes() {
        let report = PlaceReport::new(Arc::new(crate::registry::ImageResolver::new(
            Default::default(),
        )));
        let (tx, mut rx) = watch::channel(CanAct::No("starting".into()));
        judge(&CanAct::Yes, &report, &tx);
        assert!(rx.has_changed().unwrap());
        assert_eq!(*rx.borrow_and_update(), CanAct::Yes);
        assert_eq!(report.blocked(), None);
        judge(&CanAct::Yes, &report, &tx);
        assert!(!rx.has_changed().unwrap(), "no change, no wake-up");
        judge(&CanAct::No("cannot list secrets".into()), &report, &tx);
        assert_eq!(report.blocked().as_deref(), Some("cannot list secrets"));
        assert!(rx.has_changed().unwrap());
    }
}
