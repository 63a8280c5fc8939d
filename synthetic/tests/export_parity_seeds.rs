//! Parity of the exported admission policies with `winplace check` over the demo's seeded clusters
//! (`winplace demo-snapshot --seed N`: every kind of placement, right, at risk and misplaced): each pod,
//! as the API server would admit it, is denied or warned about by exactly the exported rules `check`
//! reports on it, and the mutating policies repair it as `check --fix` does. The harness is the rules
//! crate's (`rules/tests/common/admission.rs`), shared with its corpus parity test.

#[path = "../../rules/tests/common/admission.rs"]
mod admission;

use admission::{
    Compiled, Outcome, admitted_objects, classes, compare, compare_fixes, exact, with_stack,
};
use winplace_rules::Settings;
use winplace_synthetic::{misplaced_unowned_pods, synthetic_cluster};

/// The seeds tried: the demo's default (1) and the ones the server's tests use (3, 7).
const SEEDS: [u64; 3] = [1, 3, 7];

/// The pods of the demo's cluster of `seed` (with its misplaced bare pods) as one YAML stream.
fn seeded_pods(seed: u64) -> String {
    let (nodes, mut pods, _) = synthetic_cluster(30, 200, seed);
    pods.extend(misplaced_unowned_pods(&nodes, 10, seed));
    pods.iter()
        .map(|p| {
            let mut value = serde_json::to_value(p).expect("pod as JSON");
            value["apiVersion"] = "v1".into();
            value["kind"] = "Pod".into();
            value.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// The validating and the mutating policies of `settings` over every seed's pods, compared with
/// `check` and `check --fix` (`what` names the settings in the differences); the differences are none.
fn parity_on_seeds(what: &str, settings: &Settings) -> (Outcome, Outcome) {
    let policies = Compiled::new(settings, false).expect("policies");
    let mutations = Compiled::new(settings, true).expect("fixes");
    let mut out = Outcome::default();
    let mut fixes = Outcome::default();
    for seed in SEEDS {
        let objects = admitted_objects(&seeded_pods(seed));
        assert_eq!(objects.len(), 210, "seed {seed}");
        let source = format!("demo seed {seed}, {what}");
        compare(&source, &objects, settings, &policies, &mut out);
        compare_fixes(&source, &objects, settings, &mutations, &mut fixes);
    }
    assert!(out.differences.is_empty(), "{}", out.differences.join("\n"));
    assert!(
        fixes.differences.is_empty(),
        "{}",
        fixes.differences.join("\n")
    );
    (out, fixes)
}

#[test]
fn the_policies_report_what_check_reports_on_the_demo_seeds() {
    with_stack(|| {
        let (out, fixes) = parity_on_seeds("default settings", &Settings::default());
        // The seeds hold pods the policies deny and pods they repair: the parity is not that of
        // policies that never fire.
        println!(
            "compared {} pods; fired {:?}; repaired {}",
            out.compared, out.fired, fixes.mutated
        );
        assert!(out.fired.len() >= 4, "only {:?} fired", out.fired);
        assert!(fixes.mutated > 10, "only {} pods repaired", fixes.mutated);
    });
}

/// The same with `buildPinning: exact`, then with `runtimeClasses` (Windows Server 2022 mapped): the
/// validating policies report what `check` reports, and the mutating policies pin the build nodeSelector
/// or set the runtimeClassName `check --fix` does.
#[test]
fn the_exact_and_runtime_class_policies_report_and_pin_what_check_does_on_the_demo_seeds() {
    with_stack(|| {
        let exact = exact(&Settings::default());
        let classes = classes(&exact);
        for (what, settings) in [("buildPinning: exact", exact), ("runtimeClasses", classes)] {
            let (out, fixes) = parity_on_seeds(what, &settings);
            println!(
                "{what}: compared {} pods; repaired {}; build nodeSelectors added {}; runtimeClassNames set {}",
                out.compared, fixes.mutated, fixes.build_selectors, fixes.runtime_classes
            );
            assert!(fixes.mutated > 10, "only {} pods repaired", fixes.mutated);
            if settings.runtime_classes.is_empty() {
                assert!(fixes.build_selectors > 50, "{}", fixes.build_selectors);
            } else {
                assert!(fixes.runtime_classes > 10, "{}", fixes.runtime_classes);
            }
        }
    });
}
