//! `winplace audit --format policyreport|openreports`: the audit as policy reports, the formats Policy
//! Reporter and `kubectl get` read, as Kyverno and Kubewarden's audit scanner write them:
//! `wgpolicyk8s.io/v1alpha2` `PolicyReport`/`ClusterPolicyReport` (`docs/reference/policy-report.md`), or
//! `openreports.io/v1alpha1` `Report`/`ClusterReport`, which Kubewarden writes by default since 1.33 and
//! Kyverno ≥ 1.15 on request (`docs/reference/openreports.md`). The two share their results' schema; an
//! OpenReports report also names its `source` (the engine) at the top.
//!
//! One namespaced report per namespace (its workloads) and one cluster report (the nodes), each named
//! `winplace`. Every finding is a result (`policy` and `rule`: the rule id, `category`: its family); a
//! workload without an error or warning gets one `pass` result, so the summary counts checked workloads
//! too. Severity and result follow the finding's severity: error → `fail`/`high`, warning →
//! `warn`/`medium`, info → `skip`/`info` (infos say what could not be checked). The printed document is a
//! `v1` `List`, so `kubectl apply -f -` takes it as it is.
//!
//! The shape is the CRDs' (the reference pages name their sources); `server/tests/policy_report.rs`
//! validates the output of both against the published schemas.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use winplace_rules::audit::{NodeReport, WorkloadReport};
use winplace_rules::rules::catalog;
use winplace_rules::{Finding, ObjectRef, Severity};

/// The API version of the `wgpolicyk8s.io` reports.
pub const API_VERSION: &str = "wgpolicyk8s.io/v1alpha2";

/// Which report API to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportApi {
    /// `wgpolicyk8s.io/v1alpha2` `PolicyReport` and `ClusterPolicyReport`.
    PolicyReport,
    /// `openreports.io/v1alpha1` `Report` and `ClusterReport`.
    OpenReports,
}

impl ReportApi {
    /// The reports' `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            ReportApi::PolicyReport => API_VERSION,
            ReportApi::OpenReports => "openreports.io/v1alpha1",
        }
    }

    /// The kinds of the namespaced and the cluster-scoped report.
    pub fn kinds(self) -> (&'static str, &'static str) {
        match self {
            ReportApi::PolicyReport => ("PolicyReport", "ClusterPolicyReport"),
            ReportApi::OpenReports => ("Report", "ClusterReport"),
        }
    }
}
/// The `source` of every result and the name of every report.
pub const SOURCE: &str = "winplace";

/// A result's `result` and `severity` for a finding's severity.
fn result_and_severity(s: Severity) -> (&'static str, &'static str) {
    match s {
        Severity::Error => ("fail", "high"),
        Severity::Warning => ("warn", "medium"),
        Severity::Info => ("skip", "info"),
    }
}

/// An ObjectReference of the report's `resources`.
fn resource(o: &ObjectRef) -> Value {
    let mut r = json!({"apiVersion": o.api_version, "kind": o.kind, "name": o.name});
    if let Some(ns) = &o.namespace {
        r["namespace"] = json!(ns);
    }
    r
}

/// One result for a finding.
fn finding_result(f: &Finding, timestamp: &Value) -> Value {
    let (result, severity) = result_and_severity(f.severity);
    let category = catalog::RULES
        .iter()
        .find(|r| r.id == f.rule)
        .map(|r| r.family.as_str())
        .unwrap_or("winplace");
    let mut properties = serde_json::Map::new();
    if !f.path.is_empty() {
        properties.insert("path".into(), json!(f.path));
    }
    if let Some(fix) = &f.fix {
        properties.insert("fix".into(), json!(fix.description));
    }
    let mut r = json!({
        "source": SOURCE,
        "policy": f.rule,
        "rule": f.rule,
        "category": category,
        "severity": severity,
        "result": result,
        "message": f.message,
        "scored": true,
        "resources": [resource(&f.object)],
        "timestamp": timestamp,
    });
    if !properties.is_empty() {
        r["properties"] = Value::Object(properties);
    }
    r
}

/// The pass result of a workload with no error or warning.
fn pass_result(owner: &ObjectRef, timestamp: &Value) -> Value {
    json!({
        "source": SOURCE,
        "policy": SOURCE,
        "rule": "placement",
        "category": "Placement",
        "severity": "info",
        "result": "pass",
        "message": "no placement problem found",
        "scored": true,
        "resources": [resource(owner)],
        "timestamp": timestamp,
    })
}

/// The summary of a report's results.
fn summary(results: &[Value]) -> Value {
    let count = |what: &str| results.iter().filter(|r| r["result"] == what).count();
    json!({
        "pass": count("pass"),
        "fail": count("fail"),
        "warn": count("warn"),
        "error": count("error"),
        "skip": count("skip"),
    })
}

/// The `wgpolicyk8s.io` reports of an audit ([`reports_in`] with [`ReportApi::PolicyReport`]).
pub fn reports(workloads: &[&WorkloadReport], nodes: &[&NodeReport], now: i64) -> Value {
    reports_in(ReportApi::PolicyReport, workloads, nodes, now)
}

/// The reports of an audit in `api`, as a `v1` `List`: a namespaced report per namespace that has
/// workloads, in name order, then the cluster report. `now` is the results' timestamp (seconds since
/// the epoch).
pub fn reports_in(
    api: ReportApi,
    workloads: &[&WorkloadReport],
    nodes: &[&NodeReport],
    now: i64,
) -> Value {
    let timestamp = json!({"seconds": now, "nanos": 0});
    let mut by_namespace: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut cluster: Vec<Value> = Vec::new();
    for w in workloads {
        let mut results: Vec<Value> = w
            .findings
            .iter()
            .map(|f| finding_result(f, &timestamp))
            .collect();
        if !w.findings.iter().any(|f| f.severity != Severity::Info) {
            results.push(pass_result(&w.owner, &timestamp));
        }
        match &w.owner.namespace {
            Some(ns) => by_namespace.entry(ns.clone()).or_default().extend(results),
            None => cluster.extend(results),
        }
    }
    for n in nodes {
        cluster.extend(
            n.findings
                .iter()
                .filter(|f| f.object.kind == "Node")
                .map(|f| finding_result(f, &timestamp)),
        );
    }
    let labels = json!({"app.kubernetes.io/managed-by": SOURCE});
    let (namespaced, cluster_kind) = api.kinds();
    let report = |kind: &str, metadata: Value, results: Vec<Value>| {
        let mut r = json!({
            "apiVersion": api.api_version(),
            "kind": kind,
            "metadata": metadata,
            "summary": summary(&results),
            "results": results,
        });
        if api == ReportApi::OpenReports {
            // One engine wrote every result (openreports.md: the report-level `source`).
            r["source"] = json!(SOURCE);
        }
        r
    };
    let mut items: Vec<Value> = by_namespace
        .into_iter()
        .map(|(namespace, results)| {
            let metadata = json!({"name": SOURCE, "namespace": namespace, "labels": labels});
            report(namespaced, metadata, results)
        })
        .collect();
    items.push(report(
        cluster_kind,
        json!({"name": SOURCE, "labels": labels}),
        cluster,
    ));
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}
