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
use winplace_rules::catalog;
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

/// A finding's result category: its rule's family (`winplace` for a rule outside the catalogue).
fn category(f: &Finding) -> &'static str {
    catalog::RULES
        .iter()
        .find(|r| r.id == f.rule)
        .map(|r| r.family.as_str())
        .unwrap_or("winplace")
}

/// One result for a finding.
fn finding_result(f: &Finding, timestamp: &Value) -> Value {
    let (result, severity) = result_and_severity(f.severity);
    let category = category(f);
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
pub fn summary(results: &[Value]) -> Value {
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

/// Writes the reports of [`reports_in`] to `out` as they are produced, pretty-printed: the same bytes as
/// `serde_json::to_writer_pretty(out, &reports_in(api, workloads, nodes, now))`, without building the
/// list's JSON tree (at 150,000 pods that tree is hundreds of megabytes: a result per finding, each a
/// map of maps). The keys are written in the order serde_json's maps keep them (sorted).
pub fn write_reports(
    api: ReportApi,
    workloads: &[&WorkloadReport],
    nodes: &[&NodeReport],
    now: i64,
    out: impl std::io::Write,
) -> serde_json::Result<()> {
    let list = stream::List::new(api, workloads, nodes, now);
    serde_json::to_writer_pretty(out, &list)
}

/// The borrowed views [`write_reports`] serializes: each names its fields in sorted order, as a
/// `serde_json::Map` writes them.
mod stream {
    use super::*;
    use serde::Serialize;
    use serde::ser::{SerializeMap, SerializeStruct, Serializer};

    /// The `v1` `List`.
    pub(super) struct List<'a> {
        api: ReportApi,
        now: i64,
        /// Workloads by namespace, in name order.
        namespaces: BTreeMap<&'a str, Vec<&'a WorkloadReport>>,
        /// Workloads without a namespace (cluster-scoped owners).
        cluster: Vec<&'a WorkloadReport>,
        nodes: &'a [&'a NodeReport],
    }

    impl<'a> List<'a> {
        pub(super) fn new(
            api: ReportApi,
            workloads: &[&'a WorkloadReport],
            nodes: &'a [&'a NodeReport],
            now: i64,
        ) -> Self {
            let mut namespaces: BTreeMap<&'a str, Vec<&'a WorkloadReport>> = BTreeMap::new();
            let mut cluster = Vec::new();
            for w in workloads {
                match w.owner.namespace.as_deref() {
                    Some(ns) => namespaces.entry(ns).or_default().push(w),
                    None => cluster.push(*w),
                }
            }
            List {
                api,
                now,
                namespaces,
                cluster,
                nodes,
            }
        }
    }

    impl Serialize for List<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_struct("List", 3)?;
            m.serialize_field("apiVersion", "v1")?;
            m.serialize_field("items", &Items(self))?;
            m.serialize_field("kind", "List")?;
            m.end()
        }
    }

    struct Items<'l, 'a>(&'l List<'a>);

    impl Serialize for Items<'_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let list = self.0;
            let (namespaced, cluster_kind) = list.api.kinds();
            let reports = list
                .namespaces
                .iter()
                .map(|(ns, workloads)| Report {
                    list,
                    kind: namespaced,
                    namespace: Some(ns),
                    workloads,
                    nodes: &[],
                })
                .chain(std::iter::once(Report {
                    list,
                    kind: cluster_kind,
                    namespace: None,
                    workloads: &list.cluster,
                    nodes: list.nodes,
                }));
            s.collect_seq(reports)
        }
    }

    /// One report: the results of its workloads (each finding, or a pass), then its nodes' findings.
    struct Report<'l, 'a> {
        list: &'l List<'a>,
        kind: &'static str,
        namespace: Option<&'a str>,
        workloads: &'l [&'a WorkloadReport],
        nodes: &'a [&'a NodeReport],
    }

    /// A result: a finding's, or the pass of a workload without an error or warning.
    enum Entry<'a> {
        Finding(&'a Finding),
        Pass(&'a ObjectRef),
    }

    impl<'a> Report<'_, 'a> {
        fn results(&self) -> impl Iterator<Item = Entry<'a>> + '_ {
            self.workloads
                .iter()
                .flat_map(|w| {
                    let pass = (!w.findings.iter().any(|f| f.severity != Severity::Info))
                        .then_some(Entry::Pass(&w.owner));
                    w.findings.iter().map(|f| Entry::Finding(f)).chain(pass)
                })
                .chain(
                    self.nodes
                        .iter()
                        .flat_map(|n| &n.findings)
                        .filter(|f| f.object.kind == "Node")
                        .map(|f| Entry::Finding(f)),
                )
        }
    }

    impl Serialize for Report<'_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let open = self.list.api == ReportApi::OpenReports;
            let mut m = s.serialize_map(Some(if open { 6 } else { 5 }))?;
            m.serialize_entry("apiVersion", self.list.api.api_version())?;
            m.serialize_entry("kind", self.kind)?;
            m.serialize_entry("metadata", &Metadata(self.namespace))?;
            m.serialize_entry(
                "results",
                &Results {
                    report: self,
                    now: self.list.now,
                },
            )?;
            if open {
                // One engine wrote every result (openreports.md: the report-level `source`).
                m.serialize_entry("source", SOURCE)?;
            }
            let mut counts = [0usize; 5];
            for r in self.results() {
                let result = match r {
                    Entry::Finding(f) => result_and_severity(f.severity).0,
                    Entry::Pass(_) => "pass",
                };
                if let Some(i) = SUMMARY.iter().position(|k| *k == result) {
                    counts[i] += 1;
                }
            }
            m.serialize_entry("summary", &Summary(counts))?;
            m.end()
        }
    }

    /// The summary's keys, sorted.
    const SUMMARY: [&str; 5] = ["error", "fail", "pass", "skip", "warn"];

    struct Summary([usize; 5]);

    impl Serialize for Summary {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(SUMMARY.len()))?;
            for (k, n) in SUMMARY.iter().zip(self.0) {
                m.serialize_entry(k, &n)?;
            }
            m.end()
        }
    }

    struct Metadata<'a>(Option<&'a str>);

    impl Serialize for Metadata<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("labels", &Labels)?;
            m.serialize_entry("name", SOURCE)?;
            if let Some(ns) = self.0 {
                m.serialize_entry("namespace", ns)?;
            }
            m.end()
        }
    }

    struct Labels;

    impl Serialize for Labels {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry("app.kubernetes.io/managed-by", SOURCE)?;
            m.end()
        }
    }

    struct Results<'r, 'l, 'a> {
        report: &'r Report<'l, 'a>,
        now: i64,
    }

    impl Serialize for Results<'_, '_, '_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let now = self.now;
            s.collect_seq(self.report.results().map(|r| Item { result: r, now }))
        }
    }

    struct Item<'a> {
        result: Entry<'a>,
        now: i64,
    }

    impl Serialize for Item<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(None)?;
            match self.result {
                Entry::Finding(f) => {
                    let (result, severity) = result_and_severity(f.severity);
                    let category = category(f);
                    m.serialize_entry("category", category)?;
                    m.serialize_entry("message", &f.message)?;
                    m.serialize_entry("policy", &f.rule)?;
                    if !f.path.is_empty() || f.fix.is_some() {
                        m.serialize_entry("properties", &Properties(f))?;
                    }
                    m.serialize_entry("resources", &[Resource(&f.object)])?;
                    m.serialize_entry("result", result)?;
                    m.serialize_entry("rule", &f.rule)?;
                    m.serialize_entry("scored", &true)?;
                    m.serialize_entry("severity", severity)?;
                }
                Entry::Pass(owner) => {
                    m.serialize_entry("category", "Placement")?;
                    m.serialize_entry("message", "no placement problem found")?;
                    m.serialize_entry("policy", SOURCE)?;
                    m.serialize_entry("resources", &[Resource(owner)])?;
                    m.serialize_entry("result", "pass")?;
                    m.serialize_entry("rule", "placement")?;
                    m.serialize_entry("scored", &true)?;
                    m.serialize_entry("severity", "info")?;
                }
            }
            m.serialize_entry("source", SOURCE)?;
            m.serialize_entry("timestamp", &Timestamp(self.now))?;
            m.end()
        }
    }

    struct Properties<'a>(&'a Finding);

    impl Serialize for Properties<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(None)?;
            if let Some(fix) = &self.0.fix {
                m.serialize_entry("fix", &fix.description)?;
            }
            if !self.0.path.is_empty() {
                m.serialize_entry("path", &self.0.path)?;
            }
            m.end()
        }
    }

    struct Resource<'a>(&'a ObjectRef);

    impl Serialize for Resource<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let o = self.0;
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("apiVersion", &o.api_version)?;
            m.serialize_entry("kind", &o.kind)?;
            m.serialize_entry("name", &o.name)?;
            if let Some(ns) = &o.namespace {
                m.serialize_entry("namespace", ns)?;
            }
            m.end()
        }
    }

    struct Timestamp(i64);

    impl Serialize for Timestamp {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(2))?;
            m.serialize_entry("nanos", &0)?;
            m.serialize_entry("seconds", &self.0)?;
            m.end()
        }
    }
}
