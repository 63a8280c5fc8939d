//! Incidents: what is failing now, read from what the cluster says about each pod — its status (the
//! kubelet's refusal, the scheduler's condition, its containers' waiting and terminated messages) and
//! the Events about it — and explained by the error signatures ([`crate::explain`]): one incident per
//! pod and cause, with the concrete fix for the pod's node.
//!
//! Memory stays bounded: a pod keeps at most [`EVENTS_PER_POD`] explained events (the latest), dropped
//! with the pod; events that no signature explains are never kept; events about pods not (yet) known
//! wait in a bounded map ([`MAX_WAITING_PODS`]).

use k8s_openapi::api::core::v1::Pod;
use std::sync::Arc;

use super::{Audit, Dirty, Incident, PodRecord};
use crate::explain::{self, Match};
use crate::model::events::PodEvent;

/// The most explained events a pod keeps (the latest).
pub const EVENTS_PER_POD: usize = 4;

/// The most pods whose events wait for the pod itself to be listed.
pub const MAX_WAITING_PODS: usize = 10_000;

/// The most incidents a workload's row lists.
const MAX_PER_WORKLOAD: usize = 50;

/// An explained message of a pod's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StatusIncident {
    pub explained: Match,
    pub since: Option<String>,
}

/// The explained messages of a pod's status, the first of each cause: the pod's own reason and message
/// (the kubelet's admission refusal), the `PodScheduled` condition, and its containers' current and last
/// states.
pub(super) fn from_status(pod: &Pod) -> Vec<StatusIncident> {
    let Some(status) = pod.status.as_ref() else {
        return Vec::new();
    };
    let mut messages: Vec<(String, Option<String>)> = Vec::new();
    if let Some(m) = &status.message {
        let reason = status.reason.as_deref().unwrap_or("");
        messages.push((format!("{reason}: {m}"), None));
    }
    for c in status.conditions.iter().flatten() {
        if c.type_ == "PodScheduled"
            && c.status == "False"
            && let Some(m) = &c.message
        {
            messages.push((
                m.clone(),
                c.last_transition_time.as_ref().map(|t| time_text(&t.0)),
            ));
        }
    }
    let lists = [
        &status.init_container_statuses,
        &status.container_statuses,
        &status.ephemeral_container_statuses,
    ];
    for cs in lists.into_iter().flatten().flatten() {
        let states = [cs.state.as_ref(), cs.last_state.as_ref()];
        for state in states.into_iter().flatten() {
            if let Some(w) = &state.waiting
                && let Some(m) = &w.message
            {
                messages.push((m.clone(), None));
            }
            if let Some(t) = &state.terminated
                && let Some(m) = &t.message
            {
                messages.push((m.clone(), t.finished_at.as_ref().map(|t| time_text(&t.0))));
            }
        }
    }
    let mut out: Vec<StatusIncident> = Vec::new();
    for (message, since) in messages {
        let capped: String = message.chars().take(explain::clean::MAX_LINE).collect();
        for m in explain::explain_line(&capped) {
            if !out.iter().any(|i| i.explained.cause == m.cause) {
                out.push(StatusIncident {
                    explained: m,
                    since: since.clone(),
                });
            }
        }
    }
    // Held with the pod's record: a pushed-to Vec keeps room for four.
    out.shrink_to_fit();
    out
}

/// A Kubernetes time as the API writes it (`2026-11-25T10:00:00Z`).
fn time_text(t: &k8s_openapi::jiff::Timestamp) -> String {
    t.to_string()
}

impl Audit {
    /// An event about a pod: kept with the pod (the latest [`EVENTS_PER_POD`]), or until the pod is
    /// listed.
    pub(super) fn upsert_event(&mut self, event: PodEvent, dirty: &mut Dirty) {
        let Some(record) = self.pods.get_mut(event.pod.as_str()) else {
            if self.waiting_events.len() >= MAX_WAITING_PODS
                && !self.waiting_events.contains_key(&event.pod)
            {
                // Pods that never come: start over rather than grow.
                self.waiting_events.clear();
            }
            let waiting = self.waiting_events.entry(event.pod.clone()).or_default();
            keep_event(waiting, event);
            return;
        };
        keep_event(&mut record.events, event);
        if !dirty.all {
            dirty.workloads.insert(record.workload.clone());
        }
    }

    /// An event deleted (it expired): forgotten.
    pub(super) fn remove_event(&mut self, key: &str, pod: &str, dirty: &mut Dirty) {
        if let Some(record) = self.pods.get_mut(pod) {
            let before = record.events.len();
            record.events.retain(|e| e.key != key);
            if record.events.len() != before && !dirty.all {
                dirty.workloads.insert(record.workload.clone());
            }
        } else if let Some(waiting) = self.waiting_events.get_mut(pod) {
            waiting.retain(|e| e.key != key);
        }
    }

    /// The events that waited for pod `key`, now that it is listed.
    pub(super) fn take_waiting_events(&mut self, key: &str) -> Vec<PodEvent> {
        self.waiting_events.remove(key).unwrap_or_default()
    }

    /// Adds an event to the reset under way (starting one if none is): kept with its pod once the pod
    /// is listed, in any order.
    pub fn reset_event(&mut self, event: &PodEvent) {
        if self.resetting.is_none() {
            self.begin_reset();
        }
        if let Some(mut r) = self.resetting.take() {
            self.upsert_event(event.clone(), &mut r.dirty);
            self.resetting = Some(r);
        }
    }

    /// The incidents of pod `key` (of workload `workload`): one per cause, its status and its events
    /// merged, the fix made concrete for its node.
    pub(super) fn pod_incidents(
        &self,
        key: &str,
        record: &PodRecord,
        workload: &str,
    ) -> Vec<Incident> {
        if record.status_incidents.is_empty() && record.events.is_empty() {
            return Vec::new();
        }
        // A pod of one image: a container's message is about it.
        let only_image = self
            .workloads
            .get(workload)
            .and_then(|w| w.templates.get(&record.revision))
            .and_then(|t| match t.facts.images.as_slice() {
                [one] => Some(one.image.clone()),
                _ => None,
            });
        let mut out: Vec<Incident> = Vec::new();
        let mut merge =
            |explained: &Match, since: Option<&String>, count: u64, counted: bool| match out
                .iter_mut()
                .find(|i| i.cause == explained.cause)
            {
                Some(i) => {
                    i.count = if counted {
                        i.count + count
                    } else {
                        i.count.max(count)
                    };
                    if let Some(s) = since
                        && i.since.as_ref().is_none_or(|old| s < old)
                    {
                        i.since = Some(s.clone());
                    }
                }
                None => {
                    let mut m = explained.clone();
                    if m.objects.node.is_none() {
                        m.objects.node = record.facts.node.clone();
                    }
                    if m.objects.image.is_none() && !m.sandbox {
                        m.objects.image = only_image.clone();
                    }
                    explain::refine_settings(&mut m, &self.context, &self.settings);
                    let (namespace, name) = super::split_key(key);
                    out.push(Incident {
                        object: format!("Pod/{namespace}/{name}"),
                        workload: workload.to_string(),
                        cause: m.cause,
                        since: since.cloned(),
                        count,
                        message: m.message.clone(),
                        fix: m.fix.clone(),
                        rule: m.rule.clone(),
                        sandbox: m.sandbox,
                        meaning: m.meaning.clone(),
                        node: record.facts.node.clone(),
                    });
                }
            };
        for e in &record.events {
            for m in &e.explained {
                merge(m, e.since.as_ref(), e.count, true);
            }
        }
        for s in &record.status_incidents {
            merge(&s.explained, s.since.as_ref(), 1, false);
        }
        out.sort_by_key(|i| i.cause);
        out
    }

    /// The incidents of a workload's pods (at most 50), pods in order, each held once and shared by the
    /// row and the report's list of every incident.
    pub(super) fn workload_incidents(&self, wk: &str) -> Vec<Arc<Incident>> {
        let Some(workload) = self.workloads.get(wk) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for key in &workload.pods {
            if let Some(record) = self.pods.get(key) {
                out.extend(self.pod_incidents(key, record, wk));
                if out.len() >= MAX_PER_WORKLOAD {
                    out.truncate(MAX_PER_WORKLOAD);
                    break;
                }
            }
        }
        // Held in the workload's row.
        out.into_iter().map(Arc::new).collect()
    }

    /// Every incident, workload by workload: the audit's "failing now".
    pub fn incidents(&self) -> impl Iterator<Item = &Incident> + '_ {
        self.shared_incidents().map(|i| &**i)
    }

    /// [`Audit::incidents`] as the rows share them: a report lists them without a copy.
    pub fn shared_incidents(&self) -> impl Iterator<Item = &Arc<Incident>> + '_ {
        self.workloads().flat_map(|w| w.incidents.iter())
    }
}

/// Keeps `event` among `events`: replaces the one of the same key, else appends, dropping the oldest
/// beyond [`EVENTS_PER_POD`].
fn keep_event(events: &mut Vec<PodEvent>, event: PodEvent) {
    if let Some(old) = events.iter_mut().find(|e| e.key == event.key) {
        *old = event;
        return;
    }
    if events.len() >= EVENTS_PER_POD {
        events.remove(0);
    }
    events.push(event);
}
