//! The corpus through the rules crate: every case's findings must equal its expect.yaml, and repairing
//! every case must leave no fixable error (corpus/README.md). Generated workloads check the repair
//! loop beyond the corpus.

#[path = "common/corpus.rs"]
mod corpus;

use corpus::{Case, Expected, Got, compare, got_from_findings};
use proptest::prelude::*;
use winplace_rules::fix::{is_fixable_error, repair_text};
use winplace_rules::{Checker, ClusterContext, FieldPath, Finding, Settings};

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
    let missing: Vec<&str> = winplace_rules::catalog::RULES
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

/// Every repair (and so every `fixed.yaml`) edits only where the fixes change something: a line of the
/// input survives unless text was only inserted into it, or it holds a field whose value changed or
/// that was removed (several fixes of one document are several in-place edits; flow-style
/// documents are edited inside their brackets).
#[test]
fn repairs_leave_everything_outside_the_edits_byte_for_byte() {
    let mut report = Vec::new();
    for case in corpus::cases().into_iter().flatten() {
        if !case.parse_error_lines.is_empty() {
            continue;
        }
        let (Ok(settings), Ok(context)) = (case.settings(), case.context()) else {
            continue;
        };
        let checker = Checker::builder()
            .settings(&settings)
            .cluster(context.as_ref())
            .build();
        let repair = repair_text(&checker, "input.yaml", &case.input);
        if repair.text == case.input {
            continue;
        }
        let problems = edits_outside_changed_fields(&case.input, &repair.text);
        if !problems.is_empty() {
            report.push(format!("{}:\n{}", case.name, problems.join("\n")));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The confinement check itself, on a rewrite that sorts keys and drops quotes, and on in-place edits.
#[test]
fn the_confinement_check_tells_edits_from_rewrites() {
    let before = "kind: Pod\nmetadata: {name: \"p\"}  # keep\nspec:\n  containers: [{name: c, image: i}]\n  nodeSelector: {beta.kubernetes.io/os: windows}\n";
    let in_place = "kind: Pod\nmetadata: {name: \"p\"}  # keep\nspec:\n  containers: [{name: c, image: i}, {name: d, image: i}]\n  nodeSelector: {kubernetes.io/os: windows}\n  tolerations:\n  - key: os\n";
    assert_eq!(
        edits_outside_changed_fields(before, in_place),
        Vec::<String>::new()
    );
    let rewritten = "kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - image: i\n    name: c\n  - image: i\n    name: d\n  nodeSelector: {kubernetes.io/os: windows}\n";
    let problems = edits_outside_changed_fields(before, rewritten);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("line 2"), "{problems:?}");
}

/// Lines of `before` (1-based) that hold a field whose value is a scalar that changed, or that is gone
/// from `after`.
fn lines_of_changed_fields(before: &str, after: &str) -> std::collections::BTreeSet<u32> {
    use winplace_rules::input::{Limits, parse};
    use winplace_rules::model::get;
    let (old, new) = (
        parse("before", before, &Limits::default()),
        parse("after", after, &Limits::default()),
    );
    let mut lines = std::collections::BTreeSet::new();
    for (o, n) in old.documents.iter().zip(&new.documents) {
        let mut stack = vec![(FieldPath::root(), &o.value)];
        while let Some((path, value)) = stack.pop() {
            // A collection emptied or turned into something else counts as changed itself.
            let changed = match (value, get(&n.value, &path)) {
                // A removed field takes the fields below it along: their lines go too.
                (serde_json::Value::Object(m), None) => {
                    stack.extend(m.iter().map(|(k, v)| (path.key(k.clone()), v)));
                    true
                }
                (serde_json::Value::Array(a), None) => {
                    stack.extend(a.iter().enumerate().map(|(i, v)| (path.index(i), v)));
                    true
                }
                (_, None) => true,
                (serde_json::Value::Object(m), Some(nv)) => {
                    stack.extend(m.iter().map(|(k, v)| (path.key(k.clone()), v)));
                    nv.as_object()
                        .is_none_or(|nm| nm.is_empty() != m.is_empty())
                }
                (serde_json::Value::Array(a), Some(nv)) => {
                    stack.extend(a.iter().enumerate().map(|(i, v)| (path.index(i), v)));
                    nv.as_array().is_none_or(|na| na.is_empty() != a.is_empty())
                }
                (scalar, Some(nv)) => scalar != nv,
            };
            if changed && o.lines.contains(&path) {
                lines.extend(o.lines.line_of(&path));
                lines.extend(o.lines.value_line_of(&path));
            }
        }
    }
    lines
}

/// What `after` changed outside the edits its fields' changes call for: in each run of changed
/// lines, every old line must survive in the new lines, in order, with only insertions (a subsequence
/// of them), unless it holds a field that changed or was removed.
fn edits_outside_changed_fields(before: &str, after: &str) -> Vec<String> {
    let allowed = lines_of_changed_fields(before, after);
    let (old, new): (Vec<&str>, Vec<&str>) =
        (before.split('\n').collect(), after.split('\n').collect());
    let mut problems = Vec::new();
    for (o, n) in line_hunks(&old, &new) {
        let text = new[n].join("\n");
        let mut rest = text.chars();
        for i in o {
            let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if allowed.contains(&line) {
                continue;
            }
            if !old[i].chars().all(|c| rest.any(|b| b == c)) {
                problems.push(format!(
                    "  line {line} ({:?}) was rewritten but holds no field the fixes change",
                    old[i]
                ));
                rest = text.chars();
            }
        }
    }
    problems
}

/// The runs of lines that differ between `old` and `new` (a longest-common-subsequence line diff), as
/// (old range, new range).
fn line_hunks(old: &[&str], new: &[&str]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut hunks = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            if let Some((oi, oj)) = open.take() {
                hunks.push((oi..i, oj..j));
            }
            i += 1;
            j += 1;
            continue;
        }
        open.get_or_insert((i, j));
        if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            j += 1;
        } else {
            i += 1;
        }
    }
    if let Some((oi, oj)) = open {
        hunks.push((oi..n, oj..m));
    }
    hunks
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

/// Generated workloads in the Kubernetes docs' flow layout: a root `{ … }` mapping, unquoted keys, one
/// entry per line, `{ a: b }` padding, with or without trailing commas.
fn flow_workload() -> impl Strategy<Value = String> {
    let image = prop::sample::select(vec![
        "mcr.microsoft.com/windows/servercore:ltsc2022",
        "\"mcr.microsoft.com/windows/nanoserver:ltsc2025\"",
        "nginx:1.27",
    ]);
    let selector = prop::sample::select(vec![
        "",
        "        nodeSelector: { kubernetes.io/os: windows },\n",
        "        nodeSelector: {\n          beta.kubernetes.io/os: windows,  # old label\n        },\n",
        "        nodeSelector: {kubernetes.io/os: linux},\n",
    ]);
    let tolerations = prop::sample::select(vec![
        "",
        "        tolerations: [ { key: os, value: Windows, effect: NoSchedule } ],\n",
        "        tolerations: [\n          { operator: Exists },\n        ],\n",
        "        tolerations: [{key: os, operator: Equal, value: windows, Effect: NoSchedule}],\n",
    ]);
    let os = prop::sample::select(vec!["", "        os: { name: Windows },\n"]);
    (image, selector, tolerations, os, any::<bool>()).prop_map(
        |(image, selector, tolerations, os, trailing_commas)| {
            let text = format!(
                "# generated\n{{\n  apiVersion: apps/v1,\n  kind: Deployment,\n  metadata: {{ name: gen, namespace: t }},\n  spec: {{\n    selector: {{ matchLabels: {{ app: gen }} }},\n    template: {{\n      metadata: {{ labels: {{ app: gen }} }},\n      spec: {{\n{selector}{tolerations}{os}        containers: [\n          {{\n            name: app,  # the app\n            image: {image},\n          }},\n        ],\n      }},\n    }},\n  }},\n}}\n"
            );
            if trailing_commas {
                return text;
            }
            // Without: a comma that only precedes a closing bracket goes.
            let lines: Vec<&str> = text.split('\n').collect();
            let mut out = Vec::new();
            for (i, line) in lines.iter().enumerate() {
                let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
                let closes = next.is_some_and(|n| n.trim_start().starts_with(['}', ']']));
                match line.strip_suffix(',') {
                    Some(kept) if closes => out.push(kept.to_string()),
                    _ => out.push(line.to_string()),
                }
            }
            out.join("\n")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    /// Flow-style documents are repaired inside their brackets: no fixable error left, no key quoted
    /// the JSON way, every line outside the edits kept.
    #[test]
    fn flow_documents_are_repaired_in_their_own_style(text in flow_workload()) {
        let repair = repair_text(&Checker::builder().build(), "gen.yaml", &text);
        prop_assert!(repair.remaining.parse_errors.is_empty(), "{:?}\n{}", repair.remaining.parse_errors, repair.text);
        let left: Vec<String> = repair.remaining.findings.iter().filter(|f| is_fixable_error(f)).map(|f| format!("{} at {}", f.rule, f.path)).collect();
        prop_assert!(left.is_empty(), "{left:?}\n--- input\n{text}--- repaired\n{}", repair.text);
        prop_assert!(!repair.text.contains("\":"), "a JSON-quoted key:\n{}", repair.text);
        let outside = edits_outside_changed_fields(&text, &repair.text);
        prop_assert!(outside.is_empty(), "{outside:?}\n--- input\n{text}--- repaired\n{}", repair.text);
    }

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
        let outside = edits_outside_changed_fields(&text, &repair.text);
        prop_assert!(outside.is_empty(), "{outside:?}\n--- input\n{text}--- repaired\n{}", repair.text);
    }
}
