//! The corpus through the rules crate: every case's findings must equal its expect.yaml, and repairing
//! every case must leave no fixable error (corpus/README.md). Generated workloads check the repair
//! loop beyond the corpus.

#[path = "common/corpus.rs"]
mod corpus;

use corpus::{Case, Expected, Got, compare, got_from_findings};
use proptest::prelude::*;
use winplace_rules::fix::{is_fixable_error, repair_text};
use winplace_rules::{Checker, ClusterContext, Finding, Settings};

/// Findings of a case: its input checked against cluster.yaml, plus cluster.yaml's own objects (its
/// Nodes are evaluated too), and the input's parse error lines.
fn run(case: &Case) -> Result<(Vec<Finding>, Vec<u32>), String> {
    let settings = case.settings()?;
    settings
        .validate()
        .map_err(|e| format!("settings.yaml: {e}"))?;
    let context = case.context()?;
    let checker = Checker::builder()
        .settings(&settings)
        .cluster(context.as_ref())
        .build();
    let report = checker.report("input.yaml", &case.input);
    let mut findings = report.findings;
    if let Some(cluster) = &case.cluster {
        let alone = Checker::builder().settings(&settings).build();
        findings.extend(alone.report("cluster.yaml", cluster).findings);
    }
    let lines = report.parse_errors.iter().map(|e| e.line).collect();
    Ok((findings, lines))
}

#[test]
fn every_case_produces_exactly_its_expected_findings() {
    let cases = corpus::cases();
    assert!(cases.len() >= 29, "only {} corpus cases found", cases.len());
    let mut report = Vec::new();
    let mut failed = 0;
    for case in &cases {
        let diffs = match case {
            Err(e) => vec![format!("  cannot read the case: {e}")],
            Ok(case) => match run(case) {
                Err(e) => vec![format!("  cannot run the case: {e}")],
                Ok((findings, lines)) => compare(case, &got_from_findings(&findings), &lines),
            },
        };
        if !diffs.is_empty() {
            failed += 1;
            let name = case.as_ref().map_or("?", |c| c.name.as_str());
            report.push(format!("{name}:\n{}", diffs.join("\n")));
        }
    }
    assert!(
        report.is_empty(),
        "{failed} of {} corpus cases differ:\n{}",
        cases.len(),
        report.join("\n")
    );
}

/// Adding a rule means adding its corpus case (CONTRIBUTING.md, "Adding a rule"): every rule a manifest
/// can trigger (its declaration's `needs`) is listed in the `expect.yaml` of a case of the repository's
/// corpus, so it runs through the crate, the binary and the playground.
#[test]
fn every_rule_a_manifest_can_trigger_has_a_corpus_case() {
    let listed: std::collections::BTreeSet<String> = corpus::cases_in(&corpus::corpus_dir(), "")
        .into_iter()
        .flatten()
        .flat_map(|case| case.expected.into_iter().map(|e| e.rule))
        .collect();
    let missing: Vec<&str> = winplace_rules::rules::catalog::RULES
        .iter()
        .filter(|m| m.needs.by_manifest() && !listed.contains(m.id))
        .map(|m| m.id)
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a corpus case (a folder in corpus/ whose expect.yaml lists them): {missing:?}"
    );
}

#[test]
fn repairing_every_case_leaves_no_fixable_error() {
    let mut report = Vec::new();
    for case in corpus::cases().into_iter().flatten() {
        if !case.parse_error_lines.is_empty() {
            continue;
        }
        let (settings, context) = match (case.settings(), case.context()) {
            (Ok(s), Ok(c)) => (s, c),
            (Err(e), _) | (_, Err(e)) => {
                report.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let checker = Checker::builder()
            .settings(&settings)
            .cluster(context.as_ref())
            .build();
        let repair = repair_text(&checker, "input.yaml", &case.input);
        let mut problems: Vec<String> = repair
            .remaining
            .findings
            .iter()
            .filter(|f| is_fixable_error(f))
            .map(|f| {
                format!(
                    "  still fixable: {} at {} ({})",
                    f.rule,
                    f.path,
                    f.object.display_name()
                )
            })
            .collect();
        problems.extend(
            repair
                .remaining
                .parse_errors
                .iter()
                .map(|e| format!("  repaired text does not parse: {e}")),
        );
        if let Some(fixed) = case.fixed.as_ref().filter(|f| **f != repair.text) {
            problems.push(format!(
                "  the repaired text differs from fixed.yaml:\n{}",
                first_difference(fixed, &repair.text)
            ));
        }
        for s in &repair.skipped {
            problems.push(format!(
                "  fix of {} at {} did not apply: {}",
                s.finding.rule, s.finding.path, s.reason
            ));
        }
        if !problems.is_empty() {
            report.push(format!(
                "{}:\n{}\n  repaired text:\n{}",
                case.name,
                problems.join("\n"),
                repair.text
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The first line where `want` and `got` differ, both shown, for a readable failure.
fn first_difference(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.split('\n').collect(), got.split('\n').collect());
    let i = w.iter().zip(&g).take_while(|(a, b)| a == b).count();
    format!(
        "  line {}: fixed.yaml has {:?}, the repair wrote {:?}",
        i + 1,
        w.get(i).copied().unwrap_or("<end>"),
        g.get(i).copied().unwrap_or("<end>")
    )
}

/// The comparison itself: multiset semantics, optional fields, info ignored upstream.
#[test]
fn comparison_reports_missing_and_unexpected() {
    let expected = |rule: &str, path: Option<&str>| Expected {
        rule: rule.into(),
        object: "Pod/default/p".into(),
        path: path.map(str::to_string),
        ..Expected::default()
    };
    let got = |rule: &str, path: &str| Got {
        rule: rule.into(),
        object: "Pod/default/p".into(),
        path: path.into(),
        severity: "error".into(),
        message: "The pod stays Pending.".into(),
        place: "f:1".into(),
    };
    let case = |expected: Vec<Expected>, lines: Vec<u32>| Case {
        name: "t".into(),
        dir: Default::default(),
        input: String::new(),
        cluster: None,
        settings_text: None,
        expected,
        parse_error_lines: lines,
        fixed: None,
    };
    // (expected, produced, produced parse error lines, number of differences)
    type Row = (Vec<Expected>, Vec<Got>, Vec<u32>, usize);
    let rows: Vec<Row> = vec![
        (vec![expected("a", None)], vec![got("a", "x")], vec![], 0),
        (
            vec![expected("a", Some("y"))],
            vec![got("a", "x")],
            vec![],
            2,
        ),
        // Multiset: two expectations need two findings.
        (
            vec![expected("a", None), expected("a", None)],
            vec![got("a", "x")],
            vec![],
            1,
        ),
        (vec![], vec![got("a", "x")], vec![], 1),
        // The precise expectation is matched first, whatever the order.
        (
            vec![expected("a", None), expected("a", Some("x"))],
            vec![got("a", "x"), got("a", "z")],
            vec![],
            0,
        ),
        (vec![], vec![], vec![3], 1),
        // A message expectation is a part of the message.
        (
            vec![Expected {
                message: Some("stays Pending".into()),
                ..expected("a", None)
            }],
            vec![got("a", "x")],
            vec![],
            0,
        ),
        (
            vec![Expected {
                message: Some("pin the build".into()),
                ..expected("a", None)
            }],
            vec![got("a", "x")],
            vec![],
            2,
        ),
        // Info findings count when listed, and are never unexpected.
        (
            vec![],
            vec![Got {
                severity: "info".into(),
                ..got("a", "x")
            }],
            vec![],
            0,
        ),
        (
            vec![Expected {
                severity: Some("info".into()),
                ..expected("a", None)
            }],
            vec![],
            vec![],
            1,
        ),
    ];
    for (i, (exp, produced, lines, n)) in rows.into_iter().enumerate() {
        let diffs = compare(&case(exp, vec![]), &produced, &lines);
        assert_eq!(diffs.len(), n, "row {i}: {diffs:?}");
    }
}

/// Building blocks of generated workloads.
fn workload() -> impl Strategy<Value = String> {
    let image = prop::sample::select(vec![
        "mcr.microsoft.com/windows/servercore:ltsc2022",
        "mcr.microsoft.com/windows/nanoserver:ltsc2025",
        "mcr.microsoft.com/dotnet/framework/aspnet:4.8",
        "nginx:1.27",
        "ghcr.io/example/app:1.0",
    ]);
    let selector = prop::sample::select(vec![
        "",
        "      nodeSelector:\n        kubernetes.io/os: windows\n",
        "      nodeSelector:\n        beta.kubernetes.io/os: windows\n",
        "      nodeSelector: {kubernetes.io/os: linux}\n",
        "      nodeSelector:\n        kubernetes.io/os: windows\n        node.kubernetes.io/windows-build: \"10.0.20348\"\n",
    ]);
    let tolerations = prop::sample::select(vec![
        "",
        "      tolerations:\n      - key: os\n        value: windows\n        effect: NoSchedule\n",
        "      tolerations:\n      - key: \"os\"\n        value: \"Windows\"\n        effect: \"NoSchedule\"\n",
        "      tolerations:\n      - key: os\n        operator: Equal\n        value: windows\n        Effect: NoSchedule\n",
        "      tolerations:\n      - operator: Exists\n",
        "      tolerations: [{key: os, value: WINDOWS, effect: NoSchedule}]\n",
    ]);
    let os = prop::sample::select(vec![
        "",
        "      os:\n        name: windows\n",
        "      os: {name: Windows}\n",
    ]);
    let extra = prop::sample::select(vec![
        "",
        "      hostPID: true\n",
        "      securityContext:\n        seLinuxOptions: {level: s0}\n",
        "      securityContext:\n        windowsOptions:\n          runAsUserName: ContainerUser\n",
    ]);
    (image, selector, tolerations, os, extra).prop_map(|(image, selector, tolerations, os, extra)| {
        format!(
            "# generated\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gen\n  namespace: t\nspec:\n  selector:\n    matchLabels: {{app: gen}}\n  template:\n    metadata:\n      labels: {{app: gen}}\n    spec:\n{selector}{tolerations}{os}{extra}      containers:\n      - name: app # the app\n        image: {image}\n"
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    /// After repair no fixable error remains, the text still parses, and repairing again changes nothing
    /// that matters (no fixable error appears).
    #[test]
    fn repair_leaves_no_fixable_error(text in workload(), with_context in any::<bool>()) {
        let settings = Settings::default();
        let context = with_context.then(ClusterContext::default);
        let checker = Checker::builder()
            .settings(&settings)
            .cluster(context.as_ref())
            .build();
        let repair = repair_text(&checker, "gen.yaml", &text);
        prop_assert!(repair.remaining.parse_errors.is_empty(), "{:?}\n{}", repair.remaining.parse_errors, repair.text);
        let left: Vec<String> = repair.remaining.findings.iter().filter(|f| is_fixable_error(f)).map(|f| format!("{} at {}", f.rule, f.path)).collect();
        prop_assert!(left.is_empty(), "{left:?}\n--- input\n{text}--- repaired\n{}", repair.text);
        prop_assert!(repair.text.starts_with("# generated\n"), "{}", repair.text);
    }
}
