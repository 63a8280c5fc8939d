//! The audit on synthetic clusters: every kind of misplacement the generator makes is found, a reset fed
//! item by item equals one whole reset, and changes applied one by one equal a full recompute.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, Pod};
use proptest::prelude::*;
use winplace_rules::Settings;
use winplace_rules::audit::{Audit, Change, pod_key_of};
use winplace_rules::model::RuntimeClassEntry;
use winplace_synthetic::synthetic_cluster;

fn node_name(node: &Node) -> &str {
    node.metadata.name.as_deref().unwrap_or("")
}

#[test]
fn synthetic_cluster_has_every_kind_of_misplacement() {
    let (nodes, pods, rcs) = synthetic_cluster(60, 1_500, 11);
    let mut a = Audit::new(Settings::default());
    a.apply(Change::Reset {
        nodes,
        pods,
        runtime_classes: rcs,
    });
    let s = a.summary();
    for rule in [
        "pod-on-wrong-os",
        "pod-on-incompatible-build",
        "pod-pending-placement",
        "pod-image-os-error",
        "windows-node-missing-build-label",
        "windows-node-build-label-mismatch",
        "windows-node-untainted",
        "linux-pod-without-os-selector",
        "schedulable-on-wrong-os",
        "runtimeclass-docker-handler",
    ] {
        assert!(
            s.findings_by_rule.contains_key(rule),
            "{rule}: {:?}",
            s.findings_by_rule
        );
    }
    assert!(
        s.workload_states
            .get(&winplace_rules::audit::PlacementState::Fine)
            .copied()
            .unwrap_or(0)
            > 0
    );
    assert!(
        a.template_count() < s.pods / 5,
        "{} templates for {} pods",
        a.template_count(),
        s.pods
    );
    assert!(s.build_matrix.iter().any(|c| !c.compatible && c.pods > 0));
}

#[test]
fn a_reset_fed_item_by_item_equals_one_reset() {
    let (nodes, pods, rcs) = synthetic_cluster(30, 400, 4);
    let mut whole = Audit::new(Settings::default());
    whole.apply(Change::Reset {
        nodes: nodes.clone(),
        pods: pods.clone(),
        runtime_classes: rcs.clone(),
    });
    let mut streamed = Audit::new(Settings::default());
    streamed.apply(Change::Pod(Box::new(pods[0].clone())));
    streamed.begin_reset();
    // Any order: pods before their nodes.
    for pod in &pods {
        streamed.reset_pod(pod);
    }
    for node in nodes.iter().rev() {
        streamed.reset_node(node);
    }
    for rc in &rcs {
        streamed.reset_runtime_class(rc);
    }
    assert_eq!(
        streamed.summary().nodes,
        0,
        "nothing is shown before the reset finishes"
    );
    let touched = streamed.finish_reset();
    assert_eq!(touched.nodes.len(), 30);
    assert_eq!(streamed.report(), whole.report());
    // apply() finishes a reset under way first.
    let mut pending = Audit::new(Settings::default());
    for node in &nodes {
        pending.reset_node(node);
    }
    for pod in &pods {
        pending.reset_pod(pod);
    }
    for rc in &rcs {
        pending.reset_runtime_class(rc);
    }
    let t = pending.apply(Change::PodDeleted("nowhere".into(), "nothing".into()));
    assert_eq!(t.nodes.len(), 30);
    assert_eq!(pending.report(), whole.report());
}

/// One step of the property test.
#[derive(Debug, Clone)]
enum Step {
    /// Re-apply pod `i` of the pool, bound to node `node` (or unbound), in phase `phase`, selecting
    /// `example.com/team: a` when the flag says so (a label the node steps change).
    Pod(usize, Option<usize>, usize, bool),
    DeletePod(usize),
    /// Re-apply node `i` of the pool, changed as `variant` says.
    Node(usize, usize),
    DeleteNode(usize),
    RuntimeClass(usize),
    DeleteRuntimeClass(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..60usize, proptest::option::of(0..14usize), 0..3usize, proptest::bool::ANY).prop_map(|(i, n, p, team)| Step::Pod(i, n, p, team)),
        2 => (0..60usize).prop_map(Step::DeletePod),
        3 => (0..14usize, 0..9usize).prop_map(|(i, v)| Step::Node(i, v)),
        1 => (0..14usize).prop_map(Step::DeleteNode),
        1 => (0..4usize).prop_map(Step::RuntimeClass),
        1 => (0..4usize).prop_map(Step::DeleteRuntimeClass),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Changes applied one by one give the same report as a Reset with the final state.
    #[test]
    fn incremental_equals_full_recompute(steps in proptest::collection::vec(step(), 1..40)) {
        let (nodes, pods, rcs) = synthetic_cluster(14, 60, 5);
        let mut live_nodes: BTreeMap<String, Node> = nodes.iter().take(10).map(|n| (node_name(n).to_string(), n.clone())).collect();
        let mut live_pods: BTreeMap<String, Pod> = pods.iter().take(40).map(|p| (pod_key_of(p), p.clone())).collect();
        let mut live_rcs: BTreeMap<String, RuntimeClassEntry> = rcs.iter().take(2).map(|r| (r.object.metadata.name.clone().unwrap_or_default(), r.clone())).collect();
        let mut a = Audit::new(Settings::default());
        a.apply(Change::Reset {
            nodes: live_nodes.values().cloned().collect(),
            pods: live_pods.values().cloned().collect(),
            runtime_classes: live_rcs.values().cloned().collect(),
        });
        for s in steps {
            match s {
                Step::Pod(i, n, phase, team) => {
                    let mut p = pods[i % pods.len()].clone();
                    if let Some(spec) = p.spec.as_mut() {
                        spec.node_name = n.map(|n| node_name(&nodes[n % nodes.len()]).to_string());
                        // Pods of one revision share their spec (the engine's model): change the selector only
                        // where a new revision label can say so, or of a bare pod (its own template).
                        let labels = p.metadata.labels.as_ref();
                        let revisioned = ["pod-template-hash", "controller-revision-hash"]
                            .iter()
                            .any(|k| labels.is_some_and(|l| l.contains_key(*k)));
                        if team && (revisioned || p.metadata.owner_references.is_none()) {
                            spec.node_selector.get_or_insert_default().insert("example.com/team".into(), "a".into());
                            // Another template of the same workload.
                            if let Some(l) = p.metadata.labels.as_mut() {
                                for key in ["pod-template-hash", "controller-revision-hash"] {
                                    if let Some(v) = l.get_mut(key) { v.push_str("-team"); }
                                }
                            }
                        }
                    }
                    if let Some(status) = p.status.as_mut() {
                        status.phase = Some(["Running", "Pending", "Succeeded"][phase].to_string());
                    }
                    live_pods.insert(pod_key_of(&p), p.clone());
                    a.apply(Change::Pod(Box::new(p)));
                }
                Step::DeletePod(i) => {
                    let p = &pods[i % pods.len()];
                    live_pods.remove(&pod_key_of(p));
                    a.apply(Change::PodDeleted(
                        p.metadata.namespace.clone().unwrap_or_default(),
                        p.metadata.name.clone().unwrap_or_default(),
                    ));
                }
                Step::Node(i, variant) => {
                    let mut n = nodes[i % nodes.len()].clone();
                    match variant {
                        0 => {}
                        1 => { if let Some(spec) = n.spec.as_mut() { spec.taints = None; } }
                        2 => { if let Some(l) = n.metadata.labels.as_mut() { l.insert("node.kubernetes.io/windows-build".into(), "10.0.17763".into()); } }
                        3 => { if let Some(spec) = n.spec.as_mut() { spec.unschedulable = Some(true); } }
                        // Label-only and Linux-taint changes: only the templates whose fit they reach re-run.
                        4 => { n.metadata.labels.get_or_insert_default().insert("example.com/team".into(), "a".into()); }
                        5 => { n.metadata.labels.get_or_insert_default().insert("example.com/team".into(), "b".into()); }
                        6 => { n.metadata.labels.get_or_insert_default().insert("example.com/unread".into(), "x".into()); }
                        7 => { n.metadata.labels.get_or_insert_default().insert("example.com/team".into(), "a".into()); n.spec.get_or_insert_default().unschedulable = Some(true); }
                        _ => { n.spec.get_or_insert_default().taints.get_or_insert_default().push(k8s_openapi::api::core::v1::Taint { key: "dedicated".into(), value: Some("x".into()), effect: "NoSchedule".into(), time_added: None }); }
                    }
                    live_nodes.insert(node_name(&n).to_string(), n.clone());
                    a.apply(Change::Node(Box::new(n)));
                }
                Step::DeleteNode(i) => {
                    let name = node_name(&nodes[i % nodes.len()]).to_string();
                    live_nodes.remove(&name);
                    a.apply(Change::NodeDeleted(name));
                }
                Step::RuntimeClass(i) => {
                    let rc = rcs[i % rcs.len()].clone();
                    live_rcs.insert(rc.object.metadata.name.clone().unwrap_or_default(), rc.clone());
                    a.apply(Change::RuntimeClass(Box::new(rc)));
                }
                Step::DeleteRuntimeClass(i) => {
                    let name = rcs[i % rcs.len()].object.metadata.name.clone().unwrap_or_default();
                    live_rcs.remove(&name);
                    a.apply(Change::RuntimeClassDeleted(name));
                }
            }
        }
        let mut full = Audit::new(Settings::default());
        full.apply(Change::Reset {
            nodes: live_nodes.into_values().collect(),
            pods: live_pods.into_values().collect(),
            runtime_classes: live_rcs.into_values().collect(),
        });
        let (inc, fresh) = (a.report(), full.report());
        prop_assert_eq!(&inc.summary, &fresh.summary);
        prop_assert_eq!(&inc.nodes, &fresh.nodes);
        prop_assert_eq!(&inc.workloads, &fresh.workloads);
    }
}
