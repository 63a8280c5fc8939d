//! What the playground computes, apart from the page: settings and pasted context read from text,
//! findings, repairs. Plain functions over the rules crate, so they are tested natively.

use serde::{Deserialize, Serialize};
use winplace_rules::fix::{self, is_fixable_error};
use winplace_rules::{Checker, ClusterContext, Finding, Settings, Severity};

use super::diff::{self, Row};

/// The name findings of the manifests carry.
pub const INPUT_FILE: &str = "input.yaml";
/// The name findings of the pasted context carry.
pub const CONTEXT_FILE: &str = "cluster.yaml";

/// Which cluster the manifests are checked against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextChoice {
    /// No cluster: settings only.
    #[default]
    None,
    /// The cluster the server watches (`GET /api/context`).
    Server,
    /// Nodes and RuntimeClasses pasted into the page.
    Pasted,
}

impl ContextChoice {
    /// The value of the radio button.
    pub fn as_str(self) -> &'static str {
        match self {
            ContextChoice::None => "none",
            ContextChoice::Server => "server",
            ContextChoice::Pasted => "pasted",
        }
    }
}

/// Something wrong in a pasted text, at a line when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: Option<u32>,
    /// What is wrong.
    pub message: String,
}

/// Settings written as YAML or JSON; empty text is the defaults. The error names the line or the
/// setting (`supportedBuilds[1]: …`).
pub fn parse_settings(text: &str) -> Result<Settings, String> {
    Settings::from_text("settings.yaml", text).map_err(|e| match e.setting {
        Some(_) => e.message.trim_start_matches("invalid setting ").to_string(),
        None => format!("line {}:{}: {}", e.line, e.column, e.message),
    })
}

/// The cluster read from pasted Nodes and RuntimeClasses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PastedContext {
    /// `None` when nothing is pasted.
    pub context: Option<ClusterContext>,
    /// Documents that did not parse and objects that did not decode (left out of the context).
    pub problems: Vec<Problem>,
}

/// Reads pasted Nodes and RuntimeClasses, or infrastructure files (eksctl, Karpenter, `az aks nodepool
/// list -o json`, `gcloud container node-pools list --format=json`, OpenShift MachineSets) whose node pools
/// become the Nodes the platform would create; text holding none of these is a problem that names what
/// it held.
pub fn parse_context(text: &str) -> PastedContext {
    if text.trim().is_empty() {
        return PastedContext::default();
    }
    let read = winplace_rules::infra::read_context(&[(CONTEXT_FILE, text)]);
    PastedContext {
        context: Some(read.context),
        problems: read
            .errors
            .into_iter()
            .map(|e| Problem {
                line: Some(e.line),
                message: e.message,
            })
            .collect(),
    }
}

/// Findings of the pasted context's own objects (node rules, on its Nodes and its pools' Nodes; pools
/// whose build cannot be told), shown beside the manifests' findings.
pub fn context_findings(text: &str, settings: &Settings) -> Vec<Finding> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let read = winplace_rules::infra::read_context(&[(CONTEXT_FILE, text)]);
    Checker::builder()
        .settings(settings)
        .build()
        .check_context_files(&read)
}

/// Whether two findings are the same problem (rule, object and field), whatever their line.
pub fn same_problem(a: &Finding, b: &Finding) -> bool {
    a.rule == b.rule && a.object == b.object && a.path == b.path
}

/// A repair ready to show: the repaired text, what was done, and the diff against the input.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairView {
    /// `All fixes` or the finding's rule.
    pub title: String,
    /// The repaired manifests.
    pub text: String,
    /// One line per applied fix.
    pub applied: Vec<String>,
    /// One line per fix that did not apply.
    pub skipped: Vec<String>,
    /// Errors left after the repair.
    pub remaining_errors: usize,
    /// Of those, errors a fix could still remove.
    pub remaining_fixable: usize,
    /// Unified diff of the input against the repaired text.
    pub rows: Vec<Row>,
}

/// Repairs `input`: every fix, or only the fix of `only`.
pub fn repair(
    input: &str,
    context: Option<&ClusterContext>,
    settings: &Settings,
    only: Option<&Finding>,
) -> RepairView {
    let checker = Checker::builder()
        .settings(settings)
        .cluster(context)
        .build();
    let result = match only {
        None => fix::repair_text(&checker, INPUT_FILE, input),
        Some(target) => {
            fix::repair_text_with(&checker, INPUT_FILE, input, |f| same_problem(f, target))
        }
    };
    let describe = |f: &Finding| {
        let what = f
            .fix
            .as_ref()
            .map_or(f.rule.as_str(), |x| x.description.as_str());
        format!("{}: {what}", f.object.display_name())
    };
    RepairView {
        title: only.map_or_else(|| "All fixes".to_string(), |f| f.rule.clone()),
        rows: diff::unified(input, &result.text),
        applied: result.applied.iter().map(describe).collect(),
        skipped: result
            .skipped
            .iter()
            .map(|s| format!("{} — {}", describe(&s.finding), s.reason))
            .collect(),
        remaining_errors: result.remaining.count(Severity::Error),
        remaining_fixable: result
            .remaining
            .findings
            .iter()
            .filter(|f| is_fixable_error(f))
            .count(),
        text: result.text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNPINNED: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: mcr.microsoft.com/windows/servercore:ltsc2022\n";

    #[test]
    fn settings_text_is_read_and_validated() {
        // (text, Ok(supported build count) or Err(part of the message)); schema: settings.rs.
        let rows: [(&str, Result<usize, &str>); 7] = [
            ("", Ok(2)),
            ("  \n", Ok(2)),
            ("supportedBuilds: [10.0.17763]\n", Ok(1)),
            ("{\"mutate\": true}", Ok(2)),
            ("supportedBuilds: [ltsc2022]\n", Err("supportedBuilds[0]")),
            ("nope: 1\n", Err("nope")),
            ("mutate: [\n", Err("line ")),
        ];
        for (text, want) in rows {
            match (parse_settings(text), want) {
                (Ok(s), Ok(n)) => assert_eq!(s.supported_builds.len(), n, "{text:?}"),
                (Err(e), Err(needle)) => assert!(e.contains(needle), "{text:?}: {e}"),
                (got, want) => panic!("{text:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn pasted_context_collects_nodes_and_reports_bad_objects() {
        let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: w1\n  labels: {kubernetes.io/os: windows}\n";
        let rc = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: win}\nhandler: runhcs-wcow-process\n";
        let bad = "apiVersion: v1\nkind: Node\nmetadata:\n  name: w2\nspec:\n  taints: 3\n";
        // (text, (nodes, runtime classes), number of problems; each problem must carry its line)
        type Counts = Option<(usize, usize)>;
        let rows: [(String, Counts, usize); 4] = [
            (String::new(), None, 0),
            (format!("{node}---\n{rc}"), Some((1, 1)), 0),
            (format!("{node}---\n{bad}"), Some((1, 0)), 1),
            (format!("{node}---\nkind: [\n"), Some((1, 0)), 1),
        ];
        for (text, counts, problems) in rows {
            let got = parse_context(&text);
            assert_eq!(
                got.context
                    .as_ref()
                    .map(|c| (c.nodes.len(), c.runtime_classes.len())),
                counts,
                "{text}"
            );
            let got_lines: Vec<Option<u32>> = got.problems.iter().map(|p| p.line).collect();
            assert_eq!(got_lines.len(), problems, "{text}: {:?}", got.problems);
            assert!(got_lines.iter().all(Option::is_some), "{:?}", got.problems);
        }
    }

    #[test]
    fn repair_one_fix_or_all() {
        let settings = Settings::default();
        let report = Checker::builder()
            .settings(&settings)
            .build()
            .report(INPUT_FILE, UNPINNED);
        let os = report
            .findings
            .iter()
            .find(|f| f.rule == "windows-pod-without-os-selector")
            .expect("an OS selector finding");
        let one = repair(UNPINNED, None, &settings, Some(os));
        assert_eq!(one.applied.len(), 1, "{:?}", one.applied);
        assert!(one.remaining_fixable > 0, "the toleration is still missing");
        assert!(
            one.text.contains("kubernetes.io/os: windows"),
            "{}",
            one.text
        );
        assert!(
            one.rows
                .iter()
                .any(|r| r.change == Some(diff::Change::Added))
        );

        let all = repair(UNPINNED, None, &settings, None);
        assert_eq!(all.remaining_fixable, 0, "{}", all.text);
        assert!(all.applied.len() >= 2, "{:?}", all.applied);
        assert_eq!(all.title, "All fixes");
    }

    #[test]
    fn context_findings_come_from_the_pasted_objects() {
        let untainted = "apiVersion: v1\nkind: Node\nmetadata:\n  name: w1\n  labels: {kubernetes.io/os: windows}\nstatus:\n  nodeInfo: {operatingSystem: windows, kernelVersion: 10.0.20348.1}\n";
        let findings = context_findings(untainted, &Settings::default());
        assert!(
            findings
                .iter()
                .all(|f| f.file.as_deref() == Some(CONTEXT_FILE)),
            "{findings:?}"
        );
        assert!(context_findings(" ", &Settings::default()).is_empty());
    }

    #[test]
    fn pasted_infrastructure_files_are_context() {
        let aks = r#"[{"name": "win", "osType": "Windows", "osSku": "Windows2019", "count": 1, "vmSize": "Standard_D2s_v3"}]"#;
        let pasted = parse_context(aks);
        assert!(pasted.problems.is_empty(), "{:?}", pasted.problems);
        let ctx = pasted.context.expect("context");
        assert_eq!(ctx.windows_builds(), ["10.0.17763"]);
        let wrong = parse_context("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n");
        assert!(
            wrong.problems[0].message.contains("apps/v1 Deployment"),
            "{:?}",
            wrong.problems
        );
    }
}
