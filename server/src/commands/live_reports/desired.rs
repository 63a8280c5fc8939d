//! What the cluster's reports should hold: the published audit as one report per namespace with
//! findings, and one cluster-scoped report for the nodes' findings (docs/reports.md).
//!
//! The results are those of `winplace audit --format openreports|policyreport`
//! ([`crate::commands::policy_report`]) without the `pass` results (a namespace without findings has
//! no report, so a clean namespace's report is deleted), plus one `fail` result per incident the audit
//! explained from the cluster's Events and pod statuses (`rule: incident/<cause>`).

use std::collections::BTreeMap;

use serde_json::{Value, json};
use winplace_rules::audit::{AuditReport, Incident, NodeReport, WorkloadReport};

use crate::commands::policy_report::{ReportApi, SOURCE, reports_in, summary};

/// Where a report lives: its namespace, `None` for the cluster-scoped report.
pub type Key = Option<String>;

/// The reports `report` asks for, by namespace, each with results timestamped `now` (seconds since the
/// epoch). Namespaces without a finding or an incident are absent.
pub fn desired(api: ReportApi, report: &AuditReport, now: i64) -> BTreeMap<Key, Value> {
    let workloads: Vec<&WorkloadReport> = report.workloads.iter().map(|w| &**w).collect();
    let nodes: Vec<&NodeReport> = report.nodes.iter().map(|n| &**n).collect();
    let list = reports_in(api, &workloads, &nodes, now);
    let timestamp = json!({"seconds": now, "nanos": 0});
    let mut incidents: BTreeMap<Key, Vec<Value>> = BTreeMap::new();
    for incident in &report.incidents {
        let (namespace, result) = incident_result(incident, &timestamp);
        incidents.entry(namespace).or_default().push(result);
    }
    let mut out = BTreeMap::new();
    let Value::Object(mut list) = list else {
        return out;
    };
    let Some(Value::Array(items)) = list.remove("items") else {
        return out;
    };
    for mut item in items {
        let key: Key = item["metadata"]["namespace"].as_str().map(str::to_string);
        let mut results: Vec<Value> = match item.get_mut("results").map(Value::take) {
            Some(Value::Array(results)) => results,
            _ => Vec::new(),
        };
        results.retain(|r| r["result"] != "pass");
        results.extend(incidents.remove(&key).unwrap_or_default());
        if results.is_empty() {
            continue;
        }
        item["summary"] = summary(&results);
        item["results"] = Value::Array(results);
        out.insert(key, item);
    }
    // Incidents of a namespace whose workloads the audit lists under no report of their own.
    let (namespaced, _) = api.kinds();
    for (key, results) in incidents {
        let Some(namespace) = key.clone() else {
            continue;
        };
        let mut item = json!({
            "apiVersion": api.api_version(),
            "kind": namespaced,
            "metadata": {"name": SOURCE, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": SOURCE}},
            "summary": summary(&results),
            "results": results,
        });
        if api == ReportApi::OpenReports {
            item["source"] = json!(SOURCE);
        }
        out.insert(key, item);
    }
    out
}

/// An incident's result: the pod it names, `fail`/`high`, the fix in `properties`.
fn incident_result(incident: &Incident, timestamp: &Value) -> (Key, Value) {
    let mut parts = incident.object.splitn(3, '/');
    let kind = parts.next().unwrap_or("Pod");
    let (namespace, name) = match (parts.next(), parts.next()) {
        (Some(ns), Some(name)) => (Some(ns.to_string()), name),
        (Some(name), None) => (None, name),
        _ => (None, ""),
    };
    let mut resource = json!({"apiVersion": "v1", "kind": kind, "name": name});
    if let Some(ns) = &namespace {
        resource["namespace"] = json!(ns);
    }
    let mut properties = serde_json::Map::new();
    properties.insert("fix".into(), json!(incident.fix));
    properties.insert("cause".into(), json!(incident.cause.as_str()));
    properties.insert("count".into(), json!(incident.count.to_string()));
    properties.insert("workload".into(), json!(incident.workload));
    if let Some(since) = &incident.since {
        properties.insert("since".into(), json!(since));
    }
    let result = json!({
        "source": SOURCE,
        "policy": incident.rule.as_deref().unwrap_or("incident"),
        "rule": format!("incident/{}", incident.cause.as_str()),
        "category": "Incident",
        "severity": "high",
        "result": "fail",
        "message": incident.message,
        "scored": true,
        "resources": [resource],
        "properties": Value::Object(properties),
        "timestamp": timestamp,
    });
    (namespace, result)
}

/// What a report says, whenever it was written: its kind, name, namespace, `source`, summary and results
/// without their timestamps. Two reports with the same fingerprint need no write.
pub fn fingerprint(report: &Value) -> Value {
    let mut results = report["results"].clone();
    if let Value::Array(results) = &mut results {
        for r in results {
            if let Value::Object(r) = r {
                r.remove("timestamp");
            }
        }
    }
    json!({
        "apiVersion": report["apiVersion"],
        "kind": report["kind"],
        "name": report["metadata"]["name"],
        "namespace": report["metadata"]["namespace"],
        "labels": report["metadata"]["labels"],
        "source": report["source"],
        "summary": report["summary"],
        "results": results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timestamp_is_not_part_of_the_fingerprint() {
        let a = json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
            "metadata": {"name": "winplace", "namespace": "shop"},
            "results": [{"policy": "p", "timestamp": {"seconds": 1, "nanos": 0}}]});
        let mut b = a.clone();
        b["results"][0]["timestamp"]["seconds"] = json!(2);
        assert_eq!(fingerprint(&a), fingerprint(&b));
        b["results"][0]["policy"] = json!("q");
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn an_empty_audit_asks_for_no_report() {
        assert!(desired(ReportApi::OpenReports, &AuditReport::default(), 0).is_empty());
    }
}
