//! A small audit report with one misplaced, one at-risk and one fine workload, shared by the router
//! tests and the `winplace audit` unit test (included with `#[path]`).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;
use winplace_rules::audit::{
    AuditReport, NodeOs, NodeReport, PlacementState, PodRef, WorkloadReport,
};
use winplace_rules::placement::PodOs;
use winplace_rules::{Finding, ObjectRef, Severity};

pub fn finding(rule: &str, severity: Severity, kind: &str, ns: &str, name: &str) -> Finding {
    Finding {
        path: "spec.template.spec".into(),
        message: format!("{rule} on {name}"),
        ..Finding::new(
            rule,
            severity,
            ObjectRef::new("apps/v1", kind, Some(ns), name),
        )
    }
}

fn node(name: &str, os: NodeOs, build: Option<&str>) -> Arc<NodeReport> {
    Arc::new(NodeReport {
        name: name.into(),
        os,
        build: build.map(str::to_string),
        labels: BTreeMap::from([("kubernetes.io/os".into(), os.as_str().into())]),
        taints: if os == NodeOs::Windows {
            vec!["os=windows:NoSchedule".into()]
        } else {
            vec![]
        },
        node_info: BTreeMap::new(),
        declared_features: Vec::new(),
        pods: vec![],
        findings: vec![],
    })
}

fn workload(
    kind: &str,
    ns: &str,
    name: &str,
    os: PodOs,
    state: PlacementState,
    findings: Vec<Finding>,
) -> Arc<WorkloadReport> {
    Arc::new(WorkloadReport {
        owner: ObjectRef {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            namespace: Some(ns.into()),
            name: name.into(),
        },
        os,
        state,
        pods: vec![PodRef {
            namespace: ns.into(),
            name: format!("{name}-abc"),
            node: None,
            phase: "Pending".into(),
            state,
        }],
        findings: findings.into_iter().map(Arc::new).collect(),
        images: vec![],
        incidents: vec![],
    })
}

/// A small report: three nodes, three workloads (misplaced, at risk, fine).
pub fn report() -> AuditReport {
    let mut r = AuditReport {
        nodes: vec![
            node("aks-win22-0", NodeOs::Windows, Some("10.0.20348")),
            node("aks-win19-0", NodeOs::Windows, Some("10.0.17763")),
            node("aks-linux-0", NodeOs::Linux, None),
        ],
        workloads: vec![
            workload(
                "Deployment",
                "payments",
                "payment-gateway",
                PodOs::Windows,
                PlacementState::Misplaced,
                vec![finding(
                    "pod-pending-placement",
                    Severity::Error,
                    "Deployment",
                    "payments",
                    "payment-gateway",
                )],
            ),
            workload(
                "Deployment",
                "shop",
                "cart-api",
                PodOs::Any,
                PlacementState::AtRisk,
                vec![finding(
                    "linux-pod-without-os-selector",
                    Severity::Warning,
                    "Deployment",
                    "shop",
                    "cart-api",
                )],
            ),
            workload(
                "DaemonSet",
                "kube-system",
                "kube-proxy",
                PodOs::Linux,
                PlacementState::Fine,
                vec![],
            ),
        ],
        ..AuditReport::default()
    };
    r.summary.nodes = 3;
    r.summary.workloads = 3;
    r.summary.findings.errors = 1;
    r.summary.findings.warnings = 1;
    r.summary.findings_by_rule = BTreeMap::from([
        ("pod-pending-placement".into(), 1),
        ("linux-pod-without-os-selector".into(), 1),
    ]);
    r
}
