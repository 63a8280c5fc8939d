//! The exported policies and policy.wasm together, in the API server's admission chain
//! (docs/reference/admission-policies.md §9): MutatingAdmissionPolicies in every order, then policy.wasm
//! (in wasmtime through waPC, as policy-server runs it), then the ValidatingAdmissionPolicies; and each
//! on its own. The combinations docs/policy.md calls supported, each
//! held here: the same verdicts on the UPDATEs of every day, and one story with the placement gate.
//! The chain and the policies' evaluation (kube-cel) are the rules crate's parity harness.

#[path = "../../rules/tests/common/admission.rs"]
mod admission;

use std::collections::BTreeMap;

use admission::{Compiled, Request, every_order, fired_on, mutating_chain, with_stack};
use serde_json::{Value, json};
use winplace_policy_host::{PolicyHost, built_policy, capability};
use winplace_policy_wasm::host_answers::HostAnswers;
use winplace_rules::Settings;
use winplace_rules::catalog::RuleId;

/// What policy.wasm answers through waPC, as the chain reads it.
enum Verdict {
    Accept,
    Mutate(Value),
    Reject(String),
}

/// policy.wasm in wasmtime, its host answering `get_resource` of a placement controller's Lease renewed
/// now when `controller` (so that `placementGate` gates), and nothing else. The Lease lasts an hour, not
/// the controller's 15 s: the chain in every order outlasts 15 s in a debug build.
fn policy_host(controller: bool) -> PolicyHost {
    let module = built_policy().unwrap_or_else(|e| panic!("{e}"));
    let mut answers = HostAnswers::default();
    if controller {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("a clock after 1970");
        let renewed = k8s_openapi::jiff::Timestamp::new(now.as_secs() as i64, 0)
            .expect("a timestamp")
            .strftime("%Y-%m-%dT%H:%M:%S%.6fZ")
            .to_string();
        answers.insert_object(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "winplace-placer", "namespace": "winplace", "resourceVersion": "7"},
            "spec": {"holderIdentity": "placer-0", "leaseDurationSeconds": 3600, "leaseTransitions": 0,
                     "acquireTime": renewed, "renewTime": renewed}}));
    }
    PolicyHost::new(&module, Some(capability(answers))).unwrap_or_else(|e| panic!("{e}"))
}

/// policy.wasm's answer to `request` under `settings` (its settings as policy-server hands them over).
fn policy_wasm(host: &PolicyHost, request: &Request, settings: &Value) -> Verdict {
    let mut json = winplace_policy_wasm::request::request(
        request.operation,
        &request.object,
        &request.namespace,
    );
    if let Some(old) = &request.old_object {
        json["oldObject"] = old.clone();
    }
    if !request.sub_resource.is_empty() {
        json["subResource"] = request.sub_resource.into();
    }
    let response = host
        .validate(&json, settings)
        .unwrap_or_else(|e| panic!("policy.wasm: {e}"));
    if response["accepted"] != json!(true) {
        return Verdict::Reject(response["message"].as_str().unwrap_or_default().to_string());
    }
    match &response["mutated_object"] {
        Value::Null => Verdict::Accept,
        object => Verdict::Mutate(object.clone()),
    }
}

/// The rules whose validating policies deny `request` (binding action Deny: error severity).
fn denied_by_vaps(vaps: &Compiled, settings: &Settings, request: &Request) -> Vec<String> {
    fired_on(vaps, request)
        .expect("the policies evaluate")
        .into_keys()
        .filter(|r| {
            winplace_rules::export::action(winplace_rules::export::severity(settings, *r)) == "Deny"
        })
        .map(|r| r.to_string())
        .collect()
}

/// The rules policy.wasm's rejection names (`[rule] path: message`), empty when it does not reject.
fn denied_by_policy_wasm(verdict: &Verdict) -> Vec<String> {
    let Verdict::Reject(message) = verdict else {
        return Vec::new();
    };
    let mut rules: Vec<String> = RuleId::ALL
        .into_iter()
        .filter(|r| message.contains(&format!("[{r}]")))
        .map(|r| r.to_string())
        .collect();
    rules.sort();
    rules
}

/// The UPDATEs of every day: the exported policies deny exactly what policy.wasm rejects, and where
/// policy.wasm (`mutate`) repairs, the mutating policies repair the same way.
#[test]
fn updates_get_the_same_verdicts_from_the_exported_policies_and_policy_wasm() {
    with_stack(|| {
        let settings = Settings::default();
        let vaps = Compiled::new(&settings, false).expect("policies");
        let maps = Compiled::new(&settings, true).expect("fixes");
        let host = policy_host(false);
        for case in admission::update_cases() {
            let what = case.what;
            let mut vap = denied_by_vaps(&vaps, &settings, &case.request);
            vap.sort();
            let wasm = denied_by_policy_wasm(&policy_wasm(&host, &case.request, &json!({})));
            assert_eq!(vap, wasm, "{what}: the policies and policy.wasm");
            // Repaired: the mutating policies' result is policy.wasm's (`mutate`), or both leave it.
            let by_maps = admission::repaired_on(&maps, &case.request).expect("the fixes evaluate");
            let by_wasm = match policy_wasm(&host, &case.request, &json!({"mutate": true})) {
                Verdict::Mutate(object) => object,
                _ => case.request.object.clone(),
            };
            assert_eq!(by_maps, by_wasm, "{what}: the repairs");
        }
    });
}

/// The objects of the gate's story: a bare pod of a private image (its OS open), the same with the
/// Windows toleration (presumed Linux, it would break linux-pod-tolerates-windows-taint), and a
/// Deployment of the latter.
fn private(kind: &str) -> Value {
    let spec = json!({"tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
                      "containers": [{"name": "api", "image": "registry.example.com/shop/api:2.3"}]});
    match kind {
        "Pod" => {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "shop"}, "spec": spec})
        }
        _ => {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
                    "spec": {"selector": {"matchLabels": {"app": "api"}},
                             "template": {"metadata": {"labels": {"app": "api"}}, "spec": spec}}})
        }
    }
}

/// With `placementGate` in every piece's settings: the chain (MAPs in every order, policy.wasm, VAPs)
/// admits the private-image pod gated and labelled, with no OS pinned (the MAPs pin no presumed OS, the
/// VAPs skip it), and the Deployment unpinned (its pods will be gated when created); without a controller
/// (policy.wasm not gating), the pod is judged in full, as without the setting.
#[test]
fn the_placement_gate_tells_one_story() {
    with_stack(|| {
        let gating =
            Settings::from_text("s.yaml", "mutate: true\nplacementGate: true\n").expect("settings");
        let gating_json = json!({"mutate": true, "placementGate": true});
        let host = policy_host(true);
        let vaps = Compiled::new(&gating, false).expect("policies");
        let maps = Compiled::new(&gating, true).expect("fixes");
        let none = BTreeMap::new();
        let orders = every_order(maps.policies.len());
        for kind in ["Pod", "Deployment"] {
            let object = private(kind);
            for order in &orders {
                let request = Request::create(&object, "shop");
                let webhook = |r: &Request| match policy_wasm(&host, r, &gating_json) {
                    Verdict::Mutate(o) => Ok(Some(o)),
                    Verdict::Accept => Ok(None),
                    Verdict::Reject(m) => Err(format!("policy.wasm rejects: {m}")),
                };
                let admitted = mutating_chain(&maps, order, &none, &webhook, &request)
                    .unwrap_or_else(|e| panic!("{kind} {order:?}: {e}"));
                let spec = winplace_rules::model::pod_spec_value(&admitted).expect("a pod spec");
                assert!(
                    spec.get("nodeSelector").is_none(),
                    "{kind} {order:?}: pinned {admitted}"
                );
                if kind == "Pod" {
                    assert_eq!(
                        spec["schedulingGates"],
                        json!([{"name": "winplace.io/placement"}]),
                        "{order:?}"
                    );
                    assert_eq!(
                        admitted["metadata"]["labels"]["winplace.io/placement"],
                        "gated"
                    );
                }
                let denied = denied_by_vaps(&vaps, &gating, &request.with_object(&admitted));
                assert!(
                    denied.is_empty(),
                    "{kind} {order:?}: the VAPs deny {denied:?}"
                );
            }
        }
        // No controller: policy.wasm does not gate (its host finds no Lease) and judges the pod in full.
        // The OS it would pin is only presumed, so neither policy.wasm nor the MAPs pin it: the pod is
        // refused with the question of which OS it needs. With `presumeLinux` in every piece's settings,
        // the presumption is taken: the pod is pinned to Linux and the VAPs pass it.
        let no_controller = policy_host(false);
        let object = private("Pod");
        let request = Request::create(&object, "shop");
        let chain = |maps: &Compiled, settings: &Value| {
            let webhook = |r: &Request| match policy_wasm(&no_controller, r, settings) {
                Verdict::Mutate(o) => Ok(Some(o)),
                Verdict::Accept => Ok(None),
                Verdict::Reject(m) => Err(format!("policy.wasm rejects: {m}")),
            };
            mutating_chain(maps, &orders[0], &none, &webhook, &request)
        };
        let refused = chain(&maps, &gating_json).expect_err("refused without a controller");
        assert!(
            refused.contains("[linux-pod-tolerates-windows-taint]")
                && refused.contains("Which OS does it need?"),
            "{refused}"
        );
        let presuming = Settings::from_text(
            "s.yaml",
            "mutate: true\nplacementGate: true\npresumeLinux: true\n",
        )
        .expect("settings");
        let presuming_maps = Compiled::new(&presuming, true).expect("fixes");
        let presuming_vaps = Compiled::new(&presuming, false).expect("policies");
        let admitted = chain(
            &presuming_maps,
            &json!({"mutate": true, "placementGate": true, "presumeLinux": true}),
        )
        .expect("admitted");
        assert_eq!(
            admitted["spec"]["nodeSelector"],
            json!({"kubernetes.io/os": "linux"}),
            "{admitted}"
        );
        assert!(admitted["spec"].get("schedulingGates").is_none());
        assert!(
            denied_by_vaps(&presuming_vaps, &presuming, &request.with_object(&admitted)).is_empty()
        );
    });
}
