//! `deploy/server/`: read-only RBAC (exactly get/list/watch on nodes, pods, runtimeclasses, events), a locked-down
//! Deployment with probes, and manifests that pass winplace's own check.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use winplace_rules::input::{Limits, parse};
use winplace_rules::model::objects;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/server")
}

/// Every object of every manifest file, by kind.
fn manifests() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir())
        .expect("deploy/server exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let parsed = parse(&path.display().to_string(), &text, &Limits::default());
        assert!(
            parsed.errors.is_empty(),
            "{}: {:?}",
            path.display(),
            parsed.errors
        );
        for o in objects(&parsed.documents) {
            out.push((o.kind.clone(), o.value));
        }
    }
    out
}

fn one<T: serde::de::DeserializeOwned>(kind: &str) -> T {
    let all: Vec<_> = manifests().into_iter().filter(|(k, _)| k == kind).collect();
    assert_eq!(all.len(), 1, "exactly one {kind}");
    serde_json::from_value(all[0].1.clone()).unwrap_or_else(|e| panic!("{kind}: {e}"))
}

#[test]
fn the_cluster_role_reads_nodes_pods_runtimeclasses_and_events_and_nothing_else() {
    let role: ClusterRole = one("ClusterRole");
    let mut grants = BTreeSet::new();
    for rule in role.rules.iter().flatten() {
        assert!(rule.resource_names.is_none() && rule.non_resource_urls.is_none());
        for group in rule.api_groups.iter().flatten() {
            for resource in &rule.resources.clone().unwrap_or_default() {
                for verb in &rule.verbs {
                    grants.insert((group.clone(), resource.clone(), verb.clone()));
                }
            }
        }
    }
    let mut want = BTreeSet::new();
    for (group, resource) in [
        ("", "nodes"),
        ("", "pods"),
        ("node.k8s.io", "runtimeclasses"),
        ("", "events"),
        ("events.k8s.io", "events"),
    ] {
        for verb in ["get", "list", "watch"] {
            want.insert((group.to_string(), resource.to_string(), verb.to_string()));
        }
    }
    assert_eq!(grants, want);
    assert!(role.aggregation_rule.is_none());

    let binding: ClusterRoleBinding = one("ClusterRoleBinding");
    assert_eq!(binding.role_ref.kind, "ClusterRole");
    assert_eq!(
        Some(binding.role_ref.name.as_str()),
        role.metadata.name.as_deref()
    );
    let subjects = binding.subjects.unwrap_or_default();
    assert_eq!(subjects.len(), 1);
    assert_eq!(
        (subjects[0].kind.as_str(), subjects[0].name.as_str()),
        ("ServiceAccount", "winplace")
    );
    assert_eq!(subjects[0].namespace.as_deref(), Some("winplace"));
}

/// Peak resident memory of the release server at 5,000 nodes / 150,000 pods under the load script
/// (docs/benchmarks.md: `python3 server/load/load.py --nodes 5000 --pods 150000 --seconds 60`).
const ENVELOPE_PEAK_MIB: u64 = 646;

/// Peak resident memory of the release server with 20,000 misplaced, unowned Windows pods beside the demo's
/// (docs/benchmarks.md: `bash server/bench/misplaced_memory.sh 20000`): the audit's worst case per pod.
const MISPLACED_PEAK_MIB: u64 = 399;

/// A memory quantity (`Ki`, `Mi`, `Gi`, or plain bytes) in MiB, rounded down.
fn mebibytes(quantity: &str) -> u64 {
    let (number, unit) = quantity.split_at(
        quantity
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(quantity.len()),
    );
    let n: u64 = number
        .parse()
        .unwrap_or_else(|_| panic!("quantity {quantity:?}"));
    match unit {
        "" => n >> 20,
        "Ki" => n >> 10,
        "Mi" => n,
        "Gi" => n << 10,
        other => panic!("unit {other:?} in {quantity:?}"),
    }
}

#[test]
fn the_deployment_runs_locked_down_with_probes() {
    let d: Deployment = one("Deployment");
    let pod = d.spec.template.spec.expect("pod spec");
    assert_eq!(pod.service_account_name.as_deref(), Some("winplace"));
    assert_eq!(
        pod.node_selector
            .as_ref()
            .and_then(|s| s.get("kubernetes.io/os"))
            .map(String::as_str),
        Some("linux")
    );
    let psc = pod.security_context.expect("pod securityContext");
    assert_eq!(psc.run_as_non_root, Some(true));
    assert!(psc.run_as_user.is_some_and(|u| u != 0));
    assert_eq!(
        psc.seccomp_profile.map(|s| s.type_),
        Some("RuntimeDefault".into())
    );
    assert_eq!(pod.containers.len(), 1);
    let c = &pod.containers[0];
    assert_eq!(
        c.args.as_deref(),
        Some(
            [
                "serve",
                "--listen",
                "0.0.0.0:8080",
                "--probe-listen",
                "0.0.0.0:8081"
            ]
            .map(String::from)
            .as_slice()
        )
    );
    let sc = c
        .security_context
        .clone()
        .expect("container securityContext");
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    assert_eq!(sc.run_as_non_root, Some(true));
    assert_eq!(sc.privileged, None);
    assert_eq!(
        sc.capabilities.and_then(|c| c.drop),
        Some(vec!["ALL".to_string()])
    );
    let resources = c.resources.clone().expect("resources");
    for key in ["cpu", "memory"] {
        assert!(
            resources
                .requests
                .as_ref()
                .is_some_and(|r| r.contains_key(key)),
            "request {key}"
        );
        assert!(
            resources
                .limits
                .as_ref()
                .is_some_and(|r| r.contains_key(key)),
            "limit {key}"
        );
    }
    // Memory request and limit from the measured envelope (issue 17.6: they were 256Mi and 4Gi, 16x
    // apart): the request at least the worse of the measured peaks (5,000 nodes / 150,000 pods under
    // load; 20,000 misplaced bare pods, issue 29.4), the limit above it by less than 2x.
    let mib = |map: &Option<
        std::collections::BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>,
    >| {
        mebibytes(
            &map.as_ref()
                .and_then(|m| m.get("memory"))
                .expect("memory")
                .0,
        )
    };
    let (request, limit) = (mib(&resources.requests), mib(&resources.limits));
    let worse = ENVELOPE_PEAK_MIB.max(MISPLACED_PEAK_MIB);
    assert!(
        request >= worse,
        "request {request} MiB < the worse measured peak {worse} MiB"
    );
    assert!(
        limit > request && limit < 2 * request,
        "limit {limit} MiB vs request {request} MiB"
    );
    let path = |p: &Option<k8s_openapi::api::core::v1::Probe>| {
        p.as_ref()
            .and_then(|p| p.http_get.as_ref())
            .and_then(|h| h.path.clone())
    };
    assert_eq!(path(&c.liveness_probe).as_deref(), Some("/healthz"));
    assert_eq!(path(&c.readiness_probe).as_deref(), Some("/readyz"));
    // Every probe says how long it waits: the default (1 s) failed under load (issue 17).
    for (name, probe) in [
        ("liveness", &c.liveness_probe),
        ("readiness", &c.readiness_probe),
        ("startup", &c.startup_probe),
    ] {
        let timeout = probe.as_ref().and_then(|p| p.timeout_seconds);
        assert!(
            timeout.is_some_and(|t| t >= 2),
            "{name}: timeoutSeconds {timeout:?}"
        );
    }
    let port = |name: &str| {
        c.ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref() == Some(name))
            .map(|p| p.container_port)
    };
    assert_eq!(port("http"), Some(8080));
    // Every probe asks the probe listener (issue 17.1: a path no load on 8080 can starve).
    assert_eq!(port("probes"), Some(8081));
    for (name, probe) in [
        ("liveness", &c.liveness_probe),
        ("readiness", &c.readiness_probe),
        ("startup", &c.startup_probe),
    ] {
        let target = probe
            .as_ref()
            .and_then(|p| p.http_get.as_ref())
            .map(|h| h.port.clone());
        assert_eq!(
            target,
            Some(IntOrString::String("probes".into())),
            "{name} probe's port"
        );
    }

    let service: Service = one("Service");
    let spec = service.spec.expect("service spec");
    let selector = spec.selector.unwrap_or_default();
    let labels = d.metadata.labels.unwrap_or_default();
    assert!(selector.iter().all(|(k, v)| labels.get(k) == Some(v)));
    // The probe listener is not a service: clients cannot queue on it.
    for p in spec.ports.iter().flatten() {
        assert_eq!(
            p.target_port,
            Some(IntOrString::String("http".into())),
            "{p:?}"
        );
    }
}

/// The NetworkPolicy selects the server's pods, isolates them both ways, lets in only the server's
/// port from named peers, and lets out only DNS and the API server's ports.
#[test]
fn the_network_policy_isolates_the_server() {
    let policy: NetworkPolicy = one("NetworkPolicy");
    let d: Deployment = one("Deployment");
    let spec = policy.spec.expect("spec");
    let pod_labels = d
        .spec
        .template
        .metadata
        .and_then(|m| m.labels)
        .unwrap_or_default();
    let selector = spec
        .pod_selector
        .and_then(|s| s.match_labels)
        .unwrap_or_default();
    assert!(!selector.is_empty(), "the policy selects pods by label");
    assert!(
        selector.iter().all(|(k, v)| pod_labels.get(k) == Some(v)),
        "the policy selects the Deployment's pods"
    );
    assert_eq!(
        spec.policy_types.unwrap_or_default(),
        ["Ingress", "Egress"].map(String::from)
    );
    let ports = |ports: &Option<Vec<k8s_openapi::api::networking::v1::NetworkPolicyPort>>| {
        let mut out: Vec<(String, i32)> = ports
            .iter()
            .flatten()
            .map(|p| {
                let port = match &p.port {
                    Some(IntOrString::Int(n)) => *n,
                    other => panic!("ports are numbers: {other:?}"),
                };
                (p.protocol.clone().unwrap_or_else(|| "TCP".into()), port)
            })
            .collect();
        out.sort();
        out
    };
    let ingress = spec.ingress.unwrap_or_default();
    assert!(!ingress.is_empty());
    for rule in &ingress {
        assert!(
            rule.from.as_ref().is_some_and(|f| !f.is_empty()),
            "every ingress rule names its peers (an empty `from` admits everyone)"
        );
        assert_eq!(ports(&rule.ports), [("TCP".to_string(), 8080)]);
    }
    let mut egress: Vec<(String, i32)> = spec
        .egress
        .unwrap_or_default()
        .iter()
        .flat_map(|r| ports(&r.ports))
        .collect();
    egress.sort();
    assert_eq!(
        egress,
        [("TCP", 53), ("TCP", 443), ("TCP", 6443), ("UDP", 53)].map(|(p, n)| (p.to_string(), n))
    );
    let kustomization =
        std::fs::read_to_string(dir().join("kustomization.yaml")).expect("kustomization");
    assert!(kustomization.contains("- networkpolicy.yaml"));
}

#[test]
fn the_manifests_pass_winplaces_own_check() {
    for entry in std::fs::read_dir(dir()).expect("dir").flatten() {
        let path = entry.path();
        let text = std::fs::read_to_string(&path).expect("readable");
        let report = winplace_rules::Checker::builder()
            .build()
            .report(&path.display().to_string(), &text);
        assert!(report.parse_errors.is_empty(), "{:?}", report.parse_errors);
        let errors: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.severity != winplace_rules::Severity::Info)
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
    }
}
