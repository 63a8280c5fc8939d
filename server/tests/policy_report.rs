//! `winplace audit --format policyreport` against the published PolicyReport CRDs
//! (`tests/data/policy-report-crd/`, kubernetes-sigs/wg-policy-prototypes, `v1alpha2`), and `--format
//! openreports` against the OpenReports CRDs (`tests/data/openreports-crd/`, openreports/reports-api,
//! `v1alpha1`): every report validates against its CRD's `openAPIV3Schema`, and the results say what the
//! audit found.

use crate::common::report as fixture;

use serde_json::Value;
use std::path::Path;
use winplace::commands::policy_report::{ReportApi, reports, reports_in};
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
    let workloads: Vec<&WorkloadReport> = report.workloads.iter().map(|w| &**w).collect();
    let nodes: Vec<&NodeReport> = report.nodes.iter().map(|n| &**n).collect();
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

/// The `v1alpha1` `openAPIV3Schema` of the OpenReports CRD of `kind` (the install file holds both CRDs).
fn openreports_validator(kind: &str) -> jsonschema::Validator {
    let file = "openreports.io_install.yaml";
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/openreports-crd")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let parsed = parse(file, &text, &Limits::default());
    assert!(parsed.errors.is_empty(), "{file}: {:?}", parsed.errors);
    let crd = parsed
        .documents
        .iter()
        .map(|d| &d.value)
        .find(|v| v["spec"]["names"]["kind"] == kind)
        .unwrap_or_else(|| panic!("{file}: no CRD of kind {kind}"));
    assert_eq!(crd["spec"]["group"], "openreports.io");
    let schema = crd["spec"]["versions"]
        .as_array()
        .and_then(|v| v.iter().find(|v| v["name"] == "v1alpha1"))
        .map(|v| v["schema"]["openAPIV3Schema"].clone())
        .unwrap_or_else(|| panic!("{kind}: no v1alpha1 schema"));
    jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{kind}: {e}"))
}

#[test]
fn openreports_validate_against_the_crds_and_hold_the_same_results() {
    let report = fixture::report();
    let workloads: Vec<&WorkloadReport> = report.workloads.iter().map(|w| &**w).collect();
    let nodes: Vec<&NodeReport> = report.nodes.iter().map(|n| &**n).collect();
    let open = reports_in(ReportApi::OpenReports, &workloads, &nodes, 1_763_900_000);
    let wg = reports(&workloads, &nodes, 1_763_900_000);
    let namespaced = openreports_validator("Report");
    let cluster = openreports_validator("ClusterReport");
    let items = open["items"].as_array().expect("items");
    let wg_items = wg["items"].as_array().expect("items");
    assert_eq!(items.len(), wg_items.len());
    assert_eq!(items.last().unwrap()["kind"], "ClusterReport");
    for (item, wg_item) in items.iter().zip(wg_items) {
        assert_eq!(item["apiVersion"], "openreports.io/v1alpha1");
        let v = match item["kind"].as_str() {
            Some("Report") => {
                assert!(item["metadata"]["namespace"].is_string());
                &namespaced
            }
            Some("ClusterReport") => {
                assert!(item["metadata"].get("namespace").is_none());
                &cluster
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(problems(v, item), Vec::<String>::new(), "{item}");
        assert_eq!(item["source"], "winplace");
        // The same results and summary as the wgpolicyk8s.io reports: only the envelope differs.
        assert_eq!(item["metadata"], wg_item["metadata"]);
        assert_eq!(item["results"], wg_item["results"]);
        assert_eq!(item["summary"], wg_item["summary"]);
    }
    // The OpenReports schema can fail too: a result without its required `policy`, a bad enum.
    let bad = serde_json::json!({
        "apiVersion": "openreports.io/v1alpha1", "kind": "Report",
        "metadata": {"name": "x", "namespace": "y"},
        "results": [{"result": "failed"}],
    });
    assert_eq!(
        problems(&namespaced, &bad).len(),
        2,
        "{:?}",
        problems(&namespaced, &bad)
    );
}

/// Through the binary: `audit --demo --format openreports --on 2026-03-02` prints a List of Reports and
/// a ClusterReport that validate, and the ClusterReport carries the demo's AKS Windows Server 2019 nodes
/// as retired (lifecycle.md A1); a day before the retirement it does not.
#[test]
fn audit_prints_openreports_with_the_calendar_read_at_the_date_given() {
    let run = |on: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_winplace"))
            .args(["audit", "--demo", "--format", "openreports", "--on", on])
            .env_remove("KUBECONFIG")
            .output()
            .expect("the winplace binary runs");
        let list: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        list
    };
    let cluster_validator = openreports_validator("ClusterReport");
    let namespaced = openreports_validator("Report");
    let list = run("2026-03-02");
    let items = list["items"].as_array().expect("items");
    for item in items {
        let v = if item["kind"] == "ClusterReport" {
            &cluster_validator
        } else {
            &namespaced
        };
        assert_eq!(problems(v, item), Vec::<String>::new(), "{item}");
    }
    let retired = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["kind"] == "ClusterReport")
            .flat_map(|i| i["results"].as_array().cloned().unwrap_or_default())
            .filter(|r| r["policy"] == "windows-node-build-retired")
            .map(|r| r["resources"][0]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(retired(&list), ["aks-win19-0", "aks-win19-1"]);
    assert!(retired(&run("2026-02-28")).is_empty());
}

/// `audit --format policyreport|openreports` writes the reports as it produces them
/// (`write_reports`): byte for byte what the whole tree (`reports_in`) prints, on the fixture and on a
/// synthetic cluster (every kind of finding, workloads in many namespaces, node findings).
#[test]
fn the_streamed_reports_are_the_tree_byte_for_byte() {
    use winplace::commands::policy_report::write_reports;
    use winplace_rules::audit::{Audit, Change};
    let fixture = fixture::report();
    let (nodes, pods, rcs) = winplace_synthetic::synthetic_cluster(60, 1_500, 11);
    let mut audit = Audit::default();
    audit.apply(Change::Reset {
        nodes,
        pods,
        runtime_classes: rcs,
    });
    let synthetic = audit.report();
    for report in [&fixture, &synthetic] {
        let workloads: Vec<&WorkloadReport> = report.workloads.iter().map(|w| &**w).collect();
        let nodes: Vec<&NodeReport> = report.nodes.iter().map(|n| &**n).collect();
        for api in [ReportApi::PolicyReport, ReportApi::OpenReports] {
            let tree = serde_json::to_string_pretty(&reports_in(api, &workloads, &nodes, 42))
                .expect("tree");
            let mut streamed = Vec::new();
            write_reports(api, &workloads, &nodes, 42, &mut streamed).expect("streamed");
            let streamed = String::from_utf8(streamed).expect("UTF-8");
            assert!(tree.len() > 1_000, "{api:?}: {tree}");
            if streamed != tree {
                let at = tree
                    .bytes()
                    .zip(streamed.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(tree.len().min(streamed.len()));
                panic!(
                    "{api:?}: differs at byte {at}: tree …{}… streamed …{}…",
                    &tree[at.saturating_sub(200)..(at + 100).min(tree.len())],
                    &streamed[at.saturating_sub(200)..(at + 100).min(streamed.len())]
                );
            }
        }
    }
}
