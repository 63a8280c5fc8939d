//! `winplace audit --format policyreport` against the published PolicyReport CRDs
//! (`tests/data/policy-report-crd/`, kubernetes-sigs/wg-policy-prototypes, `v1alpha2`): every report
//! validates against its CRD's `openAPIV3Schema`, and the results say what the audit found.

#[path = "common/report.rs"]
mod fixture;

use serde_json::Value;
use std::path::Path;
use winplace::commands::policy_report::reports;
use winplace_rules::audit::{NodeReport, WorkloadReport};
use winplace_rules::input::{Limits, parse};

/// The `openAPIV3Schema` of the `v1alpha2` version of a CRD file.
fn schema(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/policy-report-crd")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = parse(file, &text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    let crd = &parsed.documents[0].value;
    crd["spec"]["versions"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["name"] == "v1alpha2"))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap_or_else(|| panic!("{file}: no v1alpha2 schema"))
}

fn validator(file: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&schema(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn problems(v: &jsonschema::Validator, report: &Value) -> Vec<String> {
    v.iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn reports_validate_against_the_crds_and_carry_every_finding() {
    let report = fixture::report();
    let workloads: Vec<&WorkloadReport> = report.workloads.iter().collect();
    let nodes: Vec<&NodeReport> = report.nodes.iter().collect();
    let list = reports(&workloads, &nodes, 1_763_900_000);
    assert_eq!(list["kind"], "List");
    let items = list["items"].as_array().expect("items");
    let namespaced = validator("wgpolicyk8s.io_policyreports.yaml");
    let cluster = validator("wgpolicyk8s.io_clusterpolicyreports.yaml");
    let mut findings = 0;
    for item in items {
        assert_eq!(item["apiVersion"], "wgpolicyk8s.io/v1alpha2");
        let (v, kind) = match item["kind"].as_str() {
            Some("PolicyReport") => (&namespaced, "PolicyReport"),
            Some("ClusterPolicyReport") => (&cluster, "ClusterPolicyReport"),
            other => panic!("{other:?}"),
        };
        assert_eq!(problems(v, item), Vec::<String>::new(), "{kind}: {item}");
        let results = item["results"].as_array().expect("results");
        // The summary counts the results.
        for what in ["pass", "fail", "warn", "error", "skip"] {
            let n = results.iter().filter(|r| r["result"] == what).count();
            assert_eq!(item["summary"][what], n, "{kind} {what}");
        }
        findings += results.iter().filter(|r| r["result"] != "pass").count();
        if kind == "PolicyReport" {
            let ns = item["metadata"]["namespace"].as_str().unwrap();
            for r in results {
                assert_eq!(r["resources"][0]["namespace"], ns, "{r}");
            }
        }
    }
    // One PolicyReport per namespace with workloads, then the ClusterPolicyReport.
    let mut namespaces: Vec<&str> = workloads
        .iter()
        .filter_map(|w| w.owner.namespace.as_deref())
        .collect();
    namespaces.sort();
    namespaces.dedup();
    assert_eq!(items.len(), namespaces.len() + 1);
    assert_eq!(items.last().unwrap()["kind"], "ClusterPolicyReport");
    let want = workloads.iter().map(|w| w.findings.len()).sum::<usize>()
        + nodes
            .iter()
            .flat_map(|n| &n.findings)
            .filter(|f| f.object.kind == "Node")
            .count();
    assert_eq!(findings, want);
    // An error is a failed, high-severity result of its rule.
    let failed = items
        .iter()
        .flat_map(|i| i["results"].as_array().unwrap())
        .find(|r| r["policy"] == "pod-pending-placement")
        .expect("the misplaced workload's finding");
    assert_eq!(failed["result"], "fail");
    assert_eq!(failed["severity"], "high");
    assert_eq!(failed["source"], "winplace");
}

#[test]
fn the_schema_check_can_fail() {
    let v = validator("wgpolicyk8s.io_policyreports.yaml");
    let bad = serde_json::json!({
        "apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "x", "namespace": "y"},
        "results": [{"policy": "p", "result": "failed", "severity": "urgent"}],
        "summary": {"pass": "one"},
    });
    assert_eq!(problems(&v, &bad).len(), 3, "{:?}", problems(&v, &bad));
}
