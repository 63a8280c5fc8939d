//! Parity of the exported admission policies with `winplace check` (docs/policy.md: "The API server as a fourth
//! place"): every ValidatingAdmissionPolicy `winplace export` writes is evaluated with kube-cel (the kube-rs
//! project's Kubernetes CEL library: the `cel` interpreter with Kubernetes' extension functions) over every
//! workload of every corpus case, as the API server would admit it (matchConditions, then the variables
//! in order, then the validation), and the rules it denies or warns about must be exactly the exported
//! rules that the rules crate's [`Checker`] reports on that object alone with the case's settings.
//! The harness is `common/admission.rs` (the synthetic crate's seeds test shares it).
//!
//! What the API server never admits is left out, and said: objects of API versions it no longer serves
//! (`workload-api-version-removed`) and objects whose pod template cannot be read (`manifest-invalid`).

#[path = "common/admission.rs"]
mod admission;
#[path = "common/corpus.rs"]
mod corpus;

use admission::{
    Compiled, Outcome, admitted_objects, classes, compare, compare_fixes, exact, with_stack,
};
use winplace_rules::catalog::RuleId;
use winplace_rules::{Checker, Settings};

/// The playground's examples (`dashboard/examples/`), checked with the default settings.
fn playground_examples() -> Vec<(String, String)> {
    let dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../dashboard/examples"
    ));
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("dashboard/examples")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "yaml") && !p.to_string_lossy().contains("cluster")
        })
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("example");
            (p.display().to_string(), text)
        })
        .collect();
    out.sort();
    out
}

/// Pods over the images the classification tables know (one per row, with tags that name a build, a
/// Windows variant, a Linux distribution, nothing, a digest), alone, with a Linux image, pinned to a
/// build and to an OS, pinned to a node by name as a DaemonSet's pod: the image rules of the CEL against
/// `classify_image`.
fn image_pods() -> String {
    let images = [
        "mcr.microsoft.com/windows/servercore:ltsc2019",
        "mcr.microsoft.com/windows/servercore:ltsc2022-amd64",
        "mcr.microsoft.com/windows/nanoserver:10.0.17763.437",
        "mcr.microsoft.com/windows/nanoserver:1809-KB4493509",
        "mcr.microsoft.com/windows:20H2",
        "MCR.Microsoft.com/windows/servercore:ltsc2022",
        "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019",
        "mcr.microsoft.com/windows/servercore:latest",
        "mcr.microsoft.com/windows/servercore@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "microsoft/iis:windowsservercore-ltsc2016",
        "docker.io/microsoft/nanoserver:1803",
        "mcr.microsoft.com/oss/kubernetes/windows-host-process-containers-base-image:v1.0.0",
        "mcr.microsoft.com/dotnet/framework/aspnet:4.8.1",
        "mcr.microsoft.com/dotnet/framework/runtime:4.8",
        "mcr.microsoft.com/dotnet/framework/sdk:4.8-windowsservercore-ltsc2022",
        "mcr.microsoft.com/dotnet/framework/samples:aspnetapp",
        "mcr.microsoft.com/dotnet/aspnet:8.0-nanoserver-ltsc2022",
        "mcr.microsoft.com/dotnet/sdk:5.0-nanoserver-2009",
        "mcr.microsoft.com/dotnet/aspnet:8.0",
        "mcr.microsoft.com/dotnet/aspnet:8.0-alpine3.20",
        "mcr.microsoft.com/dotnet/runtime:9.0-noble-chiseled",
        "mcr.microsoft.com/powershell:lts-nanoserver-ltsc2022",
        "python:3.12-windowsservercore-ltsc2022",
        "golang:1.23",
        "mongo:7.0-windowsservercore-1809",
        "fluent/fluentd:v1.16-windows-ltsc2019-1",
        "fluent/fluentd:v1.16-1",
        "nginx",
        "docker.io/library/nginx:1.27",
        "index.docker.io/library/busybox:1.36",
        "registry.k8s.io/pause:3.10",
        "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
        "mcr.microsoft.com/cbl-mariner/base/core:2.0",
        "ghcr.io/example/shop-api:2.3.1",
        "localhost:5000/team/app:1.2",
        "Not_A/Valid:ref",
    ];
    let mut out = String::new();
    let pod = |name: &str, spec: &str, images: &[&str]| {
        let containers: String = images
            .iter()
            .enumerate()
            .map(|(i, image)| format!("  - {{name: c{i}, image: \"{image}\"}}\n"))
            .collect();
        format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n{spec}  containers:\n{containers}"
        )
    };
    let pinned = "  nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: \"10.0.20348\"}\n  tolerations: [{key: os, operator: Equal, value: windows, effect: NoSchedule}]\n";
    let range = "  nodeSelector: {kubernetes.io/os: windows}\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.17763\", \"10.0.26100\"]}]}]}}}\n";
    let linux = "  nodeSelector: {kubernetes.io/os: linux}\n";
    // A DaemonSet's pod, pinned by its controller to one node by name: a toleration in the wrong case
    // (even rows) or of every taint (odd rows), no OS selector, no build pin.
    let daemon = |tolerations: &str| {
        format!(
            "  tolerations: [{tolerations}]\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{{matchFields: [{{key: metadata.name, operator: In, values: [n1]}}]}}]}}}}}}\n"
        )
    };
    let daemons = [
        daemon("{key: os, operator: Equal, value: Windows, effect: NoSchedule}"),
        daemon("{operator: Exists}"),
    ];
    for (i, image) in images.iter().enumerate() {
        out.push_str(&pod(&format!("daemon-{i}"), &daemons[i % 2], &[image]));
        out.push_str(&pod(&format!("alone-{i}"), "", &[image]));
        out.push_str(&pod(&format!("with-nginx-{i}"), "", &[image, "nginx:1.27"]));
        out.push_str(&pod(&format!("pinned-{i}"), pinned, &[image]));
        out.push_str(&pod(&format!("range-{i}"), range, &[image]));
        out.push_str(&pod(&format!("linux-{i}"), linux, &[image, image]));
    }
    out
}

/// Every corpus case with its objects and settings (the default settings' policies shared).
fn corpus_runs(
    mutating: bool,
    out: &mut Vec<(
        String,
        Vec<winplace_rules::model::Object>,
        Settings,
        Option<Compiled>,
    )>,
) {
    for case in corpus::cases() {
        let case = case.expect("corpus case");
        let settings = case.settings().expect("settings");
        let own = case
            .settings_text
            .as_ref()
            .map(|_| Compiled::new(&settings, mutating));
        out.push((
            case.name.clone(),
            admitted_objects(&case.input),
            settings,
            own.flatten(),
        ));
    }
}

/// [`classes`] with `buildPinning: exact`.
fn exact_classes(settings: &Settings) -> Settings {
    classes(&exact(settings))
}

/// Every case [`fix_parity`] runs (each corpus case with its own settings, the playground's examples and
/// [`image_pods`] with the defaults) with its settings changed by `variant` (`buildPinning: exact`,
/// `runtimeClasses`): the mutating policies pin the build where `check --fix` does, as it does. With
/// `mutating` false, the validating policies of those settings report what `check` reports. With
/// `reversed`, the policies run in the opposite order (Kubernetes promises none between policies).
fn variant_runs(
    variant: fn(&Settings) -> Settings,
    mutating: bool,
    reversed: bool,
    out: &mut Outcome,
) {
    let compile = |settings: &Settings| {
        Compiled::new(settings, mutating).map(|mut c| {
            if reversed {
                c.policies.reverse();
            }
            c
        })
    };
    let defaults = variant(&Settings::default());
    let shared = compile(&defaults).expect("policies exported");
    let mut runs = Vec::new();
    corpus_runs(false, &mut runs);
    let run = |name: &str,
               objects: &[winplace_rules::model::Object],
               settings: &Settings,
               compiled: &Compiled,
               out: &mut Outcome| {
        if mutating {
            compare_fixes(name, objects, settings, compiled, out);
        } else {
            compare(name, objects, settings, compiled, out);
        }
    };
    for (name, objects, settings, own) in &runs {
        let settings = variant(settings);
        let compiled = own.is_some().then(|| compile(&settings)).flatten();
        run(
            name,
            objects,
            &settings,
            compiled.as_ref().unwrap_or(&shared),
            out,
        );
    }
    for (name, text) in playground_examples() {
        run(&name, &admitted_objects(&text), &defaults, &shared, out);
    }
    run(
        "image pods",
        &admitted_objects(&image_pods()),
        &defaults,
        &shared,
        out,
    );
}

#[test]
fn the_exact_mutating_policies_pin_what_check_fix_pins() {
    with_stack(|| {
        for reversed in [false, true] {
            let mut out = Outcome::default();
            variant_runs(exact, true, reversed, &mut out);
            assert!(out.compared > 200, "only {} objects compared", out.compared);
            assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
            assert!(
                out.build_selectors >= 20,
                "the exact policies pinned the build of only {} objects",
                out.build_selectors
            );
        }
    });
}

#[test]
fn the_exact_policies_report_what_check_reports() {
    with_stack(|| {
        let mut out = Outcome::default();
        variant_runs(exact, false, false, &mut out);
        assert!(out.compared > 200, "only {} objects compared", out.compared);
        assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
    });
}

#[test]
fn the_mutating_policies_set_the_runtime_classes_check_fix_sets() {
    with_stack(|| {
        for (variant, reversed) in [
            (classes as fn(&Settings) -> Settings, false),
            (exact_classes, false),
            (classes, true),
            (exact_classes, true),
        ] {
            let mut out = Outcome::default();
            variant_runs(variant, true, reversed, &mut out);
            assert!(out.compared > 200, "only {} objects compared", out.compared);
            assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
            assert!(
                out.runtime_classes >= 10,
                "the policies set the runtimeClassName of only {} objects",
                out.runtime_classes
            );
        }
    });
}

#[test]
fn the_runtime_class_policies_report_what_check_reports() {
    with_stack(|| {
        for variant in [classes, exact_classes] {
            let mut out = Outcome::default();
            variant_runs(variant, false, false, &mut out);
            assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
        }
    });
}

#[test]
fn the_mutating_policies_repair_what_check_fix_repairs() {
    with_stack(fix_parity);
}

/// Every corpus case with its settings, the playground's examples and [`image_pods`].
fn fix_parity() {
    let mut out = Outcome::default();
    let defaults = Settings::default();
    let default_mutations = Compiled::new(&defaults, true).expect("fixes exported");
    let mut runs = Vec::new();
    corpus_runs(true, &mut runs);
    for (name, objects, settings, own) in &runs {
        compare_fixes(
            name,
            objects,
            settings,
            own.as_ref().unwrap_or(&default_mutations),
            &mut out,
        );
    }
    for (name, text) in playground_examples() {
        compare_fixes(
            &name,
            &admitted_objects(&text),
            &defaults,
            &default_mutations,
            &mut out,
        );
    }
    compare_fixes(
        "image pods",
        &admitted_objects(&image_pods()),
        &defaults,
        &default_mutations,
        &mut out,
    );
    assert!(out.compared > 200, "only {} objects compared", out.compared);
    assert!(
        out.mutated > 100,
        "the policies changed only {} objects",
        out.mutated
    );
    assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
}

#[test]
fn the_policies_report_what_check_reports() {
    with_stack(parity);
}

/// Every corpus case with its settings, the playground's examples and [`image_pods`] with the default
/// settings: no difference, and every exported rule fires somewhere (the parity is not that of policies
/// that never fire).
fn parity() {
    let mut out = Outcome::default();
    let defaults = Settings::default();
    let default_policies = Compiled::new(&defaults, false).expect("policies");
    let mut runs = Vec::new();
    corpus_runs(false, &mut runs);
    for (name, objects, settings, own) in &runs {
        compare(
            name,
            objects,
            settings,
            own.as_ref().unwrap_or(&default_policies),
            &mut out,
        );
    }
    let corpus_objects = out.compared;
    for (name, text) in playground_examples() {
        compare(
            &name,
            &admitted_objects(&text),
            &defaults,
            &default_policies,
            &mut out,
        );
    }
    compare(
        "image pods",
        &admitted_objects(&image_pods()),
        &defaults,
        &default_policies,
        &mut out,
    );
    assert!(
        corpus_objects > 50,
        "only {corpus_objects} corpus objects compared"
    );
    assert!(
        out.compared > corpus_objects + 150,
        "only {} objects compared",
        out.compared
    );
    assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
    assert!(out.messages > 20, "only {} messages compared", out.messages);
    let missing: Vec<&RuleId> = winplace_rules::rules::cel::EXPORTED
        .iter()
        .filter(|r| !out.fired.contains(r))
        .collect();
    assert!(missing.is_empty(), "never fired: {missing:?}");
}

/// A pod whose required affinity is beyond the build rules' size guard (`variables.affinityBounded`:
/// more terms than `cel::MAX_TERMS`, or more build requirements per term, …) is not judged by them: the
/// policies admit it where `check` reports it (docs/reference/admission-policies.md §5), and judge it
/// again once it is inside.
#[test]
fn the_build_rules_are_silent_beyond_their_affinity_guard() {
    with_stack(|| {
        let defaults = Settings::default();
        let policies = Compiled::new(&defaults, false).expect("policies");
        let checker = Checker::builder().settings(&defaults).build();
        let pod = |terms: usize| {
            let term = "{matchExpressions: [{key: node.kubernetes.io/windows-build, operator: In, values: [\"10.0.17763\"]}]}";
            let terms = vec![term; terms].join(", ");
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  nodeSelector: {{kubernetes.io/os: windows}}\n  tolerations: [{{key: os, operator: Equal, value: windows, effect: NoSchedule}}]\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{terms}]}}}}}}\n  containers: [{{name: c, image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"}}]\n"
            )
        };
        let inside = winplace_rules::rules::cel::MAX_TERMS;
        for (terms, judged) in [(inside, true), (inside + 1, false)] {
            let objects = admitted_objects(&pod(terms));
            let object = &objects[0];
            let checked = checker
                .check_value(object.value.clone())
                .iter()
                .any(|f| f.rule == RuleId::WindowsBuildMismatch.as_str());
            assert!(checked, "{terms} terms: check reports the mismatch");
            let fired = admission::fired(&policies, &object.value, "default").expect("evaluates");
            assert_eq!(
                fired.contains(&RuleId::WindowsBuildMismatch),
                judged,
                "{terms} terms: {fired:?}"
            );
        }
    });
}

/// With `runtimeClasses`, a Windows pod whose build the settings map but whose required affinity is beyond
/// the size guard: `check --fix` sets the runtimeClassName; the policies cannot read its build pin inside
/// their cost budget, so they leave it alone rather than add a selector `check --fix` would not
/// (docs/reference/admission-policies.md §3). Inside the guard they set it.
#[test]
fn the_runtime_class_fix_leaves_a_pod_beyond_the_guard_alone() {
    with_stack(|| {
        let settings = classes(&Settings::default());
        let mutations = Compiled::new(&settings, true).expect("fixes");
        let pod = |terms: usize| {
            let term = "{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [a]}]}";
            let terms = vec![term; terms].join(", ");
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  tolerations: [{{key: os, operator: Equal, value: windows, effect: NoSchedule}}]\n  affinity: {{nodeAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: {{nodeSelectorTerms: [{terms}]}}}}}}\n  containers: [{{name: c, image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"}}]\n"
            )
        };
        let inside = winplace_rules::rules::cel::MAX_TERMS;
        for (terms, set) in [(inside, true), (inside + 1, false)] {
            let objects = admitted_objects(&pod(terms));
            let object = &objects[0];
            let got = admission::repaired_by_policies(&mutations, &object.value, "default")
                .expect("evaluates");
            assert_eq!(
                got["spec"]["runtimeClassName"] == "windows-2022",
                set,
                "{terms} terms: {got}"
            );
            if set {
                let mut out = Outcome::default();
                compare_fixes(
                    "inside the guard",
                    &objects,
                    &settings,
                    &mutations,
                    &mut out,
                );
                assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
            } else {
                assert_eq!(got, object.value, "{terms} terms: left alone");
                let fixed = Checker::builder()
                    .settings(&settings)
                    .build()
                    .check_value(object.value.clone())
                    .into_iter()
                    .filter_map(|f| f.fix)
                    .any(|f| f.description == "set runtimeClassName: windows-2022");
                assert!(
                    fixed,
                    "{terms} terms: check --fix sets the runtimeClassName"
                );
            }
        }
    });
}

/// The YAML of one object, read as the policies see it.
fn object(yaml: &str) -> serde_json::Value {
    admitted_objects(yaml)
        .into_iter()
        .next()
        .expect("an admitted object")
        .value
}

/// The UPDATEs a cluster makes every day (a label, a finalizer removed, a scale-down, an ephemeral
/// container, a template that fixes or introduces a finding; `admission::update_cases`) through the
/// exported policies: they deny only the rules the update breaks anew, and only when it changes the pod
/// spec (or template); the mutating policies never patch a Pod or a Job on UPDATE, nor a template the
/// update did not change, and repair only what it broke anew. What `check` says of the object before and
/// after is the reference: the rules it reports after and not before, when the spec changed.
#[test]
fn the_policies_judge_only_what_an_update_introduces() {
    with_stack(|| {
        use admission::{fired_on, repaired_on};
        let defaults = Settings::default();
        let vaps = Compiled::new(&defaults, false).expect("policies");
        let maps = Compiled::new(&defaults, true).expect("fixes");
        let checker = Checker::builder().settings(&defaults).build();
        let rules_of = |v: &serde_json::Value| -> std::collections::BTreeSet<RuleId> {
            let exported: Vec<&str> = vaps.policies.iter().map(|p| p.rule.as_str()).collect();
            checker
                .check_value(v.clone())
                .into_iter()
                .filter(|f| exported.contains(&f.rule.as_str()))
                .filter_map(|f| RuleId::ALL.into_iter().find(|r| r.as_str() == f.rule))
                .collect()
        };
        let cases = admission::update_cases();
        assert!(cases.len() >= 9);
        for case in cases {
            let what = case.what;
            let (old, new) = (
                case.request.old_object.clone().expect("an UPDATE"),
                case.request.object.clone(),
            );
            let fired: Vec<RuleId> = fired_on(&vaps, &case.request)
                .unwrap_or_else(|e| panic!("{what}: {e}"))
                .into_keys()
                .collect();
            // The reference: what check reports after and not before, when the spec changed.
            let changed = winplace_rules::model::pod_spec_changed(&old, &new);
            let before = rules_of(&old);
            let reference: Vec<RuleId> = if changed {
                rules_of(&new).difference(&before).copied().collect()
            } else {
                Vec::new()
            };
            assert_eq!(fired, reference, "{what}: the policies and check");
            assert_eq!(fired, case.fired, "{what}");
            // The mutating policies: never a Pod or a Job on UPDATE; else only what the update broke anew.
            let repaired =
                repaired_on(&maps, &case.request).unwrap_or_else(|e| panic!("{what}: {e}"));
            let kind = new["kind"].as_str().unwrap_or_default();
            if matches!(kind, "Pod" | "Job") || !changed {
                assert_eq!(repaired, new, "{what}: patched");
            } else {
                let new_rules: std::collections::BTreeSet<&str> =
                    reference.iter().map(|r| r.as_str()).collect();
                let mut only_new = new.clone();
                for _ in 0..winplace_rules::fix::MAX_ROUNDS {
                    let fixes: Vec<winplace_rules::Fix> = checker
                        .check_value(only_new.clone())
                        .into_iter()
                        .filter(|f| new_rules.contains(f.rule.as_str()))
                        .filter_map(|f| f.fix)
                        .collect();
                    let refs: Vec<&winplace_rules::Fix> = fixes.iter().collect();
                    let (next, _) = winplace_rules::fix::apply_fixes(&only_new, &refs);
                    if next == only_new {
                        break;
                    }
                    only_new = next;
                }
                assert_eq!(repaired, only_new, "{what}: repaired");
                if !reference.is_empty() {
                    assert_ne!(
                        repaired, new,
                        "{what}: the update's new finding is repaired"
                    );
                }
            }
        }
    });
}

/// Issue 45 item 3: with `runtimeClasses`, a bare Windows pod gets its runtimeClassName in the first pass
/// of the mutating policies, whatever their order, so that the RuntimeClass admission plugin (in-tree, it
/// runs before them) merges the class's nodeSelector and tolerations when the chain is reinvoked: run
/// through the admission chain in every order of the policies.
#[test]
fn the_runtime_class_is_set_in_the_first_pass_in_every_order() {
    with_stack(|| {
        use k8s_openapi::api::node::v1::RuntimeClass;
        let settings = classes(&Settings::default());
        let maps = Compiled::new(&settings, true).expect("fixes");
        let class: RuntimeClass = serde_json::from_value(serde_json::json!({
            "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "windows-2022"},
            "handler": "runhcs-wcow-process",
            "scheduling": {
                "nodeSelector": {"kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": "10.0.20348"},
                "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]}
        }))
        .expect("class");
        let classes = std::collections::BTreeMap::from([("windows-2022".to_string(), class)]);
        let pod = object(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\nspec:\n  containers: [{name: c, image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"}]\n",
        );
        let orders = admission::every_order(maps.policies.len());
        assert_eq!(orders.len(), 24, "four policies: every order");
        for order in orders {
            let got = admission::mutating_chain(
                &maps,
                &order,
                &classes,
                &|_| Ok(None),
                &admission::Request::create(&pod, "shop"),
            )
            .unwrap_or_else(|e| panic!("{order:?}: {e}"));
            let spec = &got["spec"];
            assert_eq!(spec["runtimeClassName"], "windows-2022", "{order:?}: {got}");
            assert_eq!(
                spec["nodeSelector"]["node.kubernetes.io/windows-build"], "10.0.20348",
                "{order:?}: the RuntimeClass plugin merged the class: {got}"
            );
            assert_eq!(
                spec["tolerations"],
                serde_json::json!([{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]),
                "{order:?}: {got}"
            );
        }
    });
}
