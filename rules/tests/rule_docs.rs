//! Every rule's docs page shows a manifest that triggers the rule and one that does not, and this test
//! runs both through the rules crate, so the docs and the code cannot drift apart.
//!
//! The blocks are the fenced blocks of a page's `## Example` section, tagged by their info string
//! (docs/rules/README.md, "Examples"): `yaml failing` must trigger the rule (and, for a fixable rule,
//! carry a fix that `--fix` applies); `yaml fixed` must not trigger it, nor give an error of any other
//! rule; optional `yaml cluster` (Nodes, RuntimeClasses) and `yaml settings` serve both as cluster
//! context and settings. Rules no manifest can trigger (their declaration's `needs`: live state, which
//! comes from the server's audit of running pods, and a registry's answer, which `server/tests/registry.rs`
//! checks end to end) are skipped here.

use winplace_rules::catalog::{RULES, RuleMeta};
use winplace_rules::fix::repair_text;
use winplace_rules::input::{self, Limits};
use winplace_rules::{Checker, ClusterContext, Finding, Report, Settings, Severity, model};

/// The tagged blocks of one page's `## Example` section.
#[derive(Debug, Default, PartialEq)]
struct Example {
    failing: Option<String>,
    fixed: Option<String>,
    cluster: Option<String>,
    settings: Option<String>,
}

/// Extracts the tagged blocks of the `## Example` section of `page`.
///
/// Every fenced block in the section must be `yaml` with one of the four tags, each tag at most once, so
/// that no untested YAML hides among the tested examples.
fn example(page: &str) -> Result<Example, String> {
    let mut out = Example::default();
    let mut in_section = false;
    let mut open: Option<(String, usize, String)> = None;
    for (n, line) in page.lines().enumerate() {
        let lineno = n + 1;
        if let Some((tag, start, body)) = open.as_mut() {
            if line.trim_start().starts_with("```") {
                let slot = match tag.as_str() {
                    "failing" => &mut out.failing,
                    "fixed" => &mut out.fixed,
                    "cluster" => &mut out.cluster,
                    "settings" => &mut out.settings,
                    other => {
                        return Err(format!(
                            "line {start}: unknown example tag {other:?} (failing, fixed, cluster, settings)"
                        ));
                    }
                };
                if slot.is_some() {
                    return Err(format!("line {start}: a second `yaml {tag}` block"));
                }
                *slot = Some(std::mem::take(body));
                open = None;
            } else {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if line.starts_with("## ") {
            in_section = line == "## Example";
            continue;
        }
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        if !in_section {
            continue;
        }
        let mut words = info.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("yaml"), Some(tag), None) => {
                open = Some((tag.to_string(), lineno, String::new()))
            }
            _ => {
                return Err(format!(
                    "line {lineno}: block ```{info} in ## Example is not `yaml failing|fixed|cluster|settings`"
                ));
            }
        }
    }
    if let Some((_, start, _)) = open {
        return Err(format!("line {start}: the block is never closed"));
    }
    Ok(out)
}

fn settings_of(text: Option<&str>) -> Result<Settings, String> {
    let Some(text) = text else {
        return Ok(Settings::default());
    };
    let parsed = input::parse("settings.yaml", text, &Limits::default());
    if let Some(e) = parsed.errors.first() {
        return Err(format!("settings block: {e}"));
    }
    let value = parsed
        .documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .ok_or("the settings block is empty")?;
    let settings: Settings =
        serde_json::from_value(value).map_err(|e| format!("settings block: {e}"))?;
    settings
        .validate()
        .map_err(|e| format!("settings block: {e}"))?;
    Ok(settings)
}

fn context_of(text: Option<&str>) -> Result<Option<ClusterContext>, String> {
    let Some(text) = text else {
        return Ok(None);
    };
    let parsed = input::parse("cluster.yaml", text, &Limits::default());
    if let Some(e) = parsed.errors.first() {
        return Err(format!("cluster block: {e}"));
    }
    let objects = model::objects(&parsed.documents);
    if objects.is_empty() {
        return Err("the cluster block holds no object".into());
    }
    let (ctx, errors) = ClusterContext::from_objects(&objects);
    match errors.first() {
        Some(e) => Err(format!("cluster block: {e}")),
        None => Ok(Some(ctx)),
    }
}

fn of_rule<'a>(report: &'a Report, rule: &str) -> Vec<&'a Finding> {
    report.findings.iter().filter(|f| f.rule == rule).collect()
}

fn clean_parse(report: &Report, block: &str) -> Result<(), String> {
    match report.parse_errors.first() {
        Some(e) => Err(format!("the {block} block does not parse: {e}")),
        None => Ok(()),
    }
}

fn describe(findings: &[&Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("{} at {}: {}", f.severity.as_str(), f.path, f.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks one rule's page; every problem found is returned.
fn check_rule(meta: &RuleMeta, page: &str) -> Vec<String> {
    let ex = match example(page) {
        Ok(ex) => ex,
        Err(e) => return vec![e],
    };
    let (Some(failing), Some(fixed)) = (&ex.failing, &ex.fixed) else {
        return vec!["## Example needs a `yaml failing` and a `yaml fixed` block".into()];
    };
    let (settings, ctx) = match (
        settings_of(ex.settings.as_deref()),
        context_of(ex.cluster.as_deref()),
    ) {
        (Ok(s), Ok(c)) => (s, c),
        (Err(e), _) | (_, Err(e)) => return vec![e],
    };
    let mut problems = Vec::new();
    let id = meta.id;

    let checker = Checker::builder()
        .settings(&settings)
        .cluster(ctx.as_ref())
        .build();
    let report = checker.report("failing.yaml", failing);
    if let Err(e) = clean_parse(&report, "failing") {
        problems.push(e);
    }
    let fired = of_rule(&report, id);
    if fired.is_empty() {
        let others: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
        problems.push(format!(
            "the failing block does not trigger {id} (it gives {others:?})"
        ));
    } else if meta.fixable {
        if fired.iter().all(|f| f.fix.is_none()) {
            problems.push(format!(
                "{id} is fixable but its finding carries no fix: {}",
                describe(&fired)
            ));
        }
        let repair = repair_text(&checker, "failing.yaml", failing);
        let left = of_rule(&repair.remaining, id);
        if !left.is_empty() {
            problems.push(format!(
                "repairing the failing block leaves {id}: {}",
                describe(&left)
            ));
        }
    }

    let report = checker.report("fixed.yaml", fixed);
    if let Err(e) = clean_parse(&report, "fixed") {
        problems.push(e);
    }
    let left = of_rule(&report, id);
    if !left.is_empty() {
        problems.push(format!(
            "the fixed block still triggers {id}: {}",
            describe(&left)
        ));
    }
    // A "fixed" manifest that `winplace check` still fails would teach the wrong thing.
    let errors: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.rule != id && f.severity == Severity::Error)
        .collect();
    if !errors.is_empty() {
        problems.push(format!(
            "the fixed block has errors of other rules: {}",
            describe(&errors)
        ));
    }
    problems
}

#[test]
fn every_rule_page_has_a_failing_and_a_fixed_example_that_agree_with_the_rule() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for meta in RULES.iter().filter(|m| m.needs.by_manifest()) {
        let path = format!(
            "{}/../docs/rules/{}.md",
            env!("CARGO_MANIFEST_DIR"),
            meta.id
        );
        let problems = match std::fs::read_to_string(&path) {
            Ok(page) => check_rule(meta, &page),
            Err(e) => vec![format!("cannot read {path}: {e}")],
        };
        checked += 1;
        if !problems.is_empty() {
            failures.push(format!(
                "docs/rules/{}.md:\n  {}",
                meta.id,
                problems.join("\n  ")
            ));
        }
    }
    assert!(checked >= 40, "only {checked} rules checked");
    assert!(
        failures.is_empty(),
        "{} of {checked} rule pages disagree with their rule:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn example_extraction_reads_tagged_blocks_and_rejects_the_rest() {
    let good = "# r\n\n## Fix\n\n```yaml\nnot: extracted\n```\n\n## Example\n\nFails:\n\n```yaml failing\na: 1\n```\n\n```yaml fixed\na: 2\n```\n\n```yaml cluster\nb: 1\n```\n\n## References\n\n```yaml\nc: 1\n```\n";
    assert_eq!(
        example(good),
        Ok(Example {
            failing: Some("a: 1\n".into()),
            fixed: Some("a: 2\n".into()),
            cluster: Some("b: 1\n".into()),
            settings: None,
        })
    );
    // (page, what the error names)
    let bad = [
        ("## Example\n```yaml\na: 1\n```\n", "line 2"),
        (
            "## Example\n```yaml failing\na: 1\n```\n```yaml failing\n```\n",
            "second",
        ),
        (
            "## Example\n```yaml broken\na: 1\n```\n",
            "unknown example tag",
        ),
        ("## Example\n```json failing\n{}\n```\n", "is not"),
        ("## Example\n```yaml fixed\na: 1\n", "never closed"),
    ];
    for (page, want) in bad {
        match example(page) {
            Ok(ex) => panic!("{page:?} accepted: {ex:?}"),
            Err(e) => assert!(e.contains(want), "{page:?}: {e}"),
        }
    }
}
