//! The reports writer: while this replica holds the reports' Lease, it keeps the cluster's reports equal
//! to what the published audit asks for ([`super::desired`]).
//!
//! * A report is applied (server-side apply, field manager [`super::FIELD_MANAGER`], forced, strict
//!   field validation) only when its [`fingerprint`] differs from what was last written: results,
//!   summary and labels, never the timestamps alone. A report whose namespace has no finding left is
//!   deleted.
//! * Rate bound: a change is written one `--reports-interval` after it arrived, together with every
//!   change of that interval: one round of writes per interval at most, each changed report written
//!   once, one request at a time. Over unchanged state, nothing.
//! * On taking the Lease the writer lists the reports it manages (label
//!   `app.kubernetes.io/managed-by=winplace`), so that a new leader neither rewrites what is current
//!   nor forgets a report left by the previous one.
//! * Nothing is written before the first full list of the cluster is audited, nor while the source is
//!   stale (the watch failing past its grace period): reports are not deleted on a half-known cluster.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::GroupVersionKind;
use prometheus_client::registry::Registry;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::FIELD_MANAGER;
use super::desired::{Key, desired, fingerprint};
use crate::commands::policy_report::{ReportApi, SOURCE};
use crate::metrics::{self, Series};
use crate::state::AppState;

/// What the writer did, for `/metrics`.
#[derive(Debug, Default)]
pub struct ReportsStatus {
    /// Requests by (operation, outcome).
    writes: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    /// Reports the cluster holds as far as the writer knows.
    held: AtomicU64,
    leading: AtomicBool,
}

impl ReportsStatus {
    fn count(&self, operation: &'static str, ok: bool) {
        let outcome = if ok { "ok" } else { "error" };
        let mut writes = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        *writes.entry((operation, outcome)).or_default() += 1;
    }
}

impl metrics::Exported for ReportsStatus {
    fn register(&self, registry: &mut Registry) {
        let writes = self
            .writes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        metrics::add(
            registry,
            "winplace_reports_writes_total",
            "Report writes sent, by operation (apply, delete) and outcome (ok, error).",
            Series::counter(writes.into_iter().map(|((op, outcome), n)| {
                (
                    vec![
                        ("operation", op.to_string()),
                        ("outcome", outcome.to_string()),
                    ],
                    n,
                )
            })),
        );
        metrics::add(
            registry,
            "winplace_reports",
            "Reports winplace keeps in the cluster (namespaced and cluster-scoped).",
            Series::gauge_value(self.held.load(Ordering::Relaxed)),
        );
        metrics::add(
            registry,
            "winplace_reports_leading",
            "1 while this replica holds the reports Lease and writes the reports.",
            Series::gauge_value(u64::from(self.leading.load(Ordering::Relaxed))),
        );
    }
}

/// What the writer is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct WriterOptions {
    /// The report API.
    pub api: ReportApi,
    /// The shortest time between two rounds of writes.
    pub interval: Duration,
}

/// Keeps the reports current while `leading` says this replica leads; returns when the election ends.
pub async fn run(
    client: kube::Client,
    state: AppState,
    options: WriterOptions,
    mut leading: watch::Receiver<bool>,
    status: std::sync::Arc<ReportsStatus>,
) {
    let mut changes = state.subscribe();
    loop {
        if leading.wait_for(|l| *l).await.is_err() {
            return;
        }
        status.leading.store(true, Ordering::Relaxed);
        tracing::info!("this replica holds the reports Lease: writing the reports");
        let mut writer = Writer::new(client.clone(), options.api);
        let mut listed = false;
        // When the first change not yet written arrived (a round is due one interval later, so that
        // the changes of that interval are written together); at the start, a round is due at once.
        let mut due_since = Some(Instant::now() - options.interval);
        while *leading.borrow() {
            let (synced, stale) = state.sync_flags();
            if let Some(since) = due_since
                && synced
                && !stale
            {
                tokio::select! {
                    () = tokio::time::sleep_until(since + options.interval) => {}
                    _ = leading.changed() => continue,
                }
                // Changes that arrived while waiting are in the state this round reads.
                while let Ok(_) | Err(broadcast::error::TryRecvError::Lagged(_)) =
                    changes.try_recv()
                {}
                due_since = None;
                let done = if listed {
                    writer.round(&state, &status).await
                } else {
                    match writer.list_held().await {
                        Ok(()) => {
                            listed = true;
                            writer.round(&state, &status).await
                        }
                        Err(e) => {
                            tracing::warn!(
                                "cannot list the reports winplace manages: {}",
                                explain(&e)
                            );
                            false
                        }
                    }
                };
                if !done {
                    // Tried again one interval later, changes or not.
                    due_since = Some(Instant::now());
                }
                continue;
            }
            tokio::select! {
                change = changes.recv() => match change {
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        due_since.get_or_insert_with(Instant::now);
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                _ = leading.changed() => {}
                // A stale source is checked again each interval.
                () = tokio::time::sleep(options.interval), if due_since.is_some() => {}
            }
        }
        status.leading.store(false, Ordering::Relaxed);
        tracing::info!("this replica no longer holds the reports Lease: it stops writing reports");
    }
}

/// The reports one leader manages, and what it last wrote in each.
struct Writer {
    client: kube::Client,
    api: ReportApi,
    namespaced: ApiResource,
    cluster: ApiResource,
    /// The fingerprint of each report the cluster holds, as last written or listed.
    written: BTreeMap<Key, Value>,
}

/// A report kind's resource: its group, version and plural (the lower-case kind and `s`, as the CRDs
/// name them).
fn resource(api: ReportApi, kind: &str) -> ApiResource {
    let (group, version) = api
        .api_version()
        .split_once('/')
        .unwrap_or(("", api.api_version()));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_lowercase()))
}

impl Writer {
    fn new(client: kube::Client, api: ReportApi) -> Self {
        let (namespaced, cluster) = api.kinds();
        Writer {
            client,
            api,
            namespaced: resource(api, namespaced),
            cluster: resource(api, cluster),
            written: BTreeMap::new(),
        }
    }

    fn api_for(&self, key: &Key) -> Api<DynamicObject> {
        match key {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &self.namespaced),
            None => Api::all_with(self.client.clone(), &self.cluster),
        }
    }

    /// Reads the reports named `winplace` and labelled as winplace's that the cluster holds.
    async fn list_held(&mut self) -> kube::Result<()> {
        let params =
            ListParams::default().labels(&format!("app.kubernetes.io/managed-by={SOURCE}"));
        let mut held = BTreeMap::new();
        for (resource, namespaced) in [(&self.namespaced, true), (&self.cluster, false)] {
            let api: Api<DynamicObject> = Api::all_with(self.client.clone(), resource);
            for object in api.list(&params).await?.items {
                if object.metadata.name.as_deref() != Some(SOURCE) {
                    continue;
                }
                let key: Key = if namespaced {
                    object.metadata.namespace.clone()
                } else {
                    None
                };
                let mut value = serde_json::to_value(&object).unwrap_or(Value::Null);
                // List items may come without their type.
                value["apiVersion"] = json!(resource.api_version);
                value["kind"] = json!(resource.kind);
                held.insert(key, fingerprint(&value));
            }
        }
        self.written = held;
        Ok(())
    }

    /// One round: applies what changed, deletes what is gone. False when a request failed (the round
    /// is tried again after the interval).
    async fn round(&mut self, state: &AppState, status: &ReportsStatus) -> bool {
        let published = state.published();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let wanted = desired(self.api, &published.report, now);
        let mut all_ok = true;
        for (key, report) in &wanted {
            let print = fingerprint(report);
            if self.written.get(key) == Some(&print) {
                continue;
            }
            let params = PatchParams::apply(FIELD_MANAGER)
                .force()
                .validation_strict();
            let answer = self
                .api_for(key)
                .patch(SOURCE, &params, &Patch::Apply(report))
                .await;
            status.count("apply", answer.is_ok());
            match answer {
                Ok(_) => {
                    self.written.insert(key.clone(), print);
                }
                Err(e) => {
                    all_ok = false;
                    tracing::warn!(
                        namespace = key.as_deref().unwrap_or(""),
                        "cannot write the {} report: {}",
                        report["kind"].as_str().unwrap_or(""),
                        explain(&e)
                    );
                }
            }
        }
        let gone: Vec<Key> = self
            .written
            .keys()
            .filter(|k| !wanted.contains_key(*k))
            .cloned()
            .collect();
        for key in gone {
            let answer = self
                .api_for(&key)
                .delete(SOURCE, &DeleteParams::default())
                .await;
            let done = match &answer {
                Ok(_) => true,
                Err(kube::Error::Api(s)) if s.code == 404 => true,
                Err(_) => false,
            };
            status.count("delete", done);
            if done {
                self.written.remove(&key);
            } else if let Err(e) = answer {
                all_ok = false;
                tracing::warn!(
                    namespace = key.as_deref().unwrap_or(""),
                    "cannot delete the report of a namespace without findings: {}",
                    explain(&e)
                );
            }
        }
        status
            .held
            .store(self.written.len() as u64, Ordering::Relaxed);
        all_ok
    }
}

/// An error, with what to do when it is the RBAC or the CRDs that are missing.
fn explain(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => format!(
            "{e} (the service account needs the reports RBAC: the chart's `reports.enabled`, docs/reports.md)"
        ),
        kube::Error::Api(s) if s.code == 404 => {
            format!("{e} (are the report CRDs installed? docs/reports.md)")
        }
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resources_are_the_crds_plurals() {
        let r = resource(ReportApi::OpenReports, "ClusterReport");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.plural.as_str()),
            ("openreports.io", "v1alpha1", "clusterreports")
        );
        let r = resource(ReportApi::PolicyReport, "PolicyReport");
        assert_eq!(r.api_version, "wgpolicyk8s.io/v1alpha2");
        assert_eq!(r.plural, "policyreports");
    }
}
