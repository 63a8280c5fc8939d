//! `winplace check`: lint manifests, optionally repair them.
//!
//! Exit codes: 0 when nothing reaches `--fail-on`, 1 when something does, 2 for usage errors, for
//! input (settings included) that cannot be read or parsed (the other findings are still reported) and
//! for a report that cannot be written.

mod code_quality;
mod findings;
mod junit;
mod output;
mod render;
mod reports;
mod resolve;
mod write;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use winplace_rules::input::HelmSources;
use winplace_rules::{Checker, Finding, ParseError, Report, Severity};

use crate::inputs::{self, SettingsArgs, file_error, load_cluster};

pub use findings::{Entry, FindingLog, Run};
pub use output::{CheckReport, CheckSummary, Format};
pub use reports::{ReportTarget, Reports};
pub use resolve::{ImageLookup, ResolveArgs};

/// The name standard input gets in findings.
pub const STDIN_NAME: &str = "<stdin>";

/// Arguments of `winplace check`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Files or directories to check (`.yaml`, `.yml` and `.json` files under directories); `-` reads
    /// standard input.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Nodes and RuntimeClasses of the cluster (`kubectl get nodes,runtimeclasses -o yaml`), or
    /// infrastructure files whose node pools become the Nodes the platform would create (eksctl
    /// ClusterConfig, Karpenter NodePool + EC2NodeClass, `az aks nodepool list -o json`,
    /// `gcloud container node-pools list --format=json`, OpenShift MachineSet); repeatable. Their Nodes
    /// are checked too; a file with none of these is a usage error.
    #[arg(long, value_name = "FILE")]
    pub cluster: Vec<PathBuf>,
    /// Settings and platform. Without --settings, `.winplace.yaml` (or `.winplace.yml`) is read from
    /// the working directory or the nearest one above it, up to the repository's root.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Report formats and where each goes (`--format F [--output FILE]`, repeatable).
    #[command(flatten)]
    pub reports: Reports,
    /// Say on standard error which settings file was read (or that none was found).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Rewrite files with every fix applied: only what a fix touches is edited, in the document's own
    /// style (comments, layout, flow style, key order and each line's line end kept); symbolic links
    /// are followed, mode and owner kept, read-only files refused; a fix that would have to expand a
    /// YAML anchor or alias is not applied (the report says so). With `-`, print the repaired
    /// manifests to standard output and the report to standard error.
    #[arg(long)]
    pub fix: bool,
    /// Lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// The date the Windows nodes are checked against their platform's retirement calendar
    /// (`YYYY-MM-DD`; docs/reference/lifecycle.md); default: the settings' `lifecycle.date`, else today.
    #[arg(long, value_name = "DATE")]
    pub on: Option<winplace_rules::lifecycle::Date>,
    /// Image resolution from registries (`--resolve-images` and its flags).
    #[command(flatten)]
    pub registry: ResolveArgs,
}

/// The lowest severity that fails a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Errors fail.
    Error,
    /// Errors and warnings fail.
    Warning,
}

impl FailOn {
    fn threshold(self) -> Severity {
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
        }
    }
}

/// Everything one run produced, in input order.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings of every input, held compactly until the report is written.
    pub findings: FindingLog,
    /// Parse errors, unreadable files, bad settings or cluster objects (each makes the exit code 2).
    pub errors: Vec<ParseError>,
    /// Files rewritten by `--fix`, with the number of fixes applied.
    pub fixed: Vec<(String, usize)>,
    /// Fixes `--fix` did not apply: file, number of fixes, why.
    pub not_fixed: Vec<(String, usize, String)>,
    /// Repaired files that could not be written (each is also in `errors`).
    pub unwritten: usize,
    /// Number of inputs checked.
    pub files: usize,
    /// The names of the inputs checked, in order.
    pub checked: Vec<String>,
    /// The settings file read, `None` for the defaults.
    pub settings_file: Option<String>,
}

/// Checks (and with `fix`, repairs) everything `args` names; pure of output, for tests and `run`.
///
/// `stdin` is read when `-` is among the paths; `repaired_stdin` receives the repaired manifests of
/// standard input with `--fix`.
pub fn check(
    args: &CheckArgs,
    stdin: &mut dyn std::io::Read,
    repaired_stdin: &mut Vec<u8>,
) -> Outcome {
    let mut out = Outcome::default();
    let start = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let settings_file = args.settings.file_from(&start);
    out.settings_file = settings_file.as_deref().map(|p| p.display().to_string());
    if args.verbose {
        say_settings(settings_file.as_deref(), &start);
    }
    let named = SettingsArgs {
        settings: settings_file.clone(),
        platform: args.settings.platform,
        presume_linux: args.settings.presume_linux,
    };
    let settings = match named.load() {
        Ok(s) => s,
        Err(e) => {
            out.errors.push(e);
            return out;
        }
    };
    let mut settings = settings;
    crate::clock::date_settings(&mut settings, args.on);
    let lookup = match ImageLookup::start(&args.registry) {
        Ok(lookup) => lookup,
        Err(e) => {
            out.errors.push(e);
            return out;
        }
    };
    let (context, cluster_findings) = load_cluster(&args.cluster, &settings, &mut out.errors);
    for finding in &cluster_findings {
        out.findings.push(finding);
    }
    let checker = Checker::builder()
        .settings(&settings)
        .cluster(context.as_ref())
        .build();
    let (files, walk_errors) = inputs::expand(&args.paths);
    out.errors.extend(walk_errors);
    let mut stdin_used = false;
    for input in files {
        let (name, read) = match &input {
            inputs::Input::Stdin => {
                if stdin_used {
                    continue;
                }
                stdin_used = true;
                (
                    STDIN_NAME.to_string(),
                    inputs::read_stdin(stdin).map(|t| (t, None)),
                )
            }
            inputs::Input::File(path) if args.fix => (
                path.display().to_string(),
                write::read_for_fix(path).map(|(t, f)| (t, Some(f))),
            ),
            inputs::Input::File(path) => (
                path.display().to_string(),
                inputs::read_text(path).map(|t| (t, None)),
            ),
        };
        let (text, fingerprint) = match read {
            Ok(read) => read,
            Err(e) => {
                out.errors.push(file_error(&name, e));
                continue;
            }
        };
        out.files += 1;
        out.checked.push(name.clone());
        // The chart template of each document `helm template` rendered (its `# Source:` comment).
        let sources = HelmSources::of(&text);
        if !args.fix {
            // Each document's findings go to the log as it is evaluated: never all of a file's.
            let findings = &mut out.findings;
            let log = |finding: Finding| {
                let template = finding.line.and_then(|l| sources.template_at(l));
                findings.push_from(&finding, template);
            };
            let errors = match &lookup {
                Some(lookup) => lookup.check_text(&checker, &name, &text, log),
                None => checker.check_text(&name, &text, log),
            };
            out.errors.extend(errors);
            continue;
        }
        let report = match &lookup {
            Some(lookup) => {
                let mut findings = Vec::new();
                let parse_errors = lookup.check_text(&checker, &name, &text, |f| findings.push(f));
                Report {
                    findings,
                    parse_errors,
                }
            }
            None => checker.report(&name, &text),
        };
        if !report.parse_errors.is_empty() {
            if matches!(input, inputs::Input::Stdin) {
                // Still echo the input, so a pipeline does not lose it.
                repaired_stdin.extend_from_slice(text.as_bytes());
            }
            out.add(report, &sources);
            continue;
        }
        let repair = winplace_rules::fix::repair_text(&checker, &name, &text);
        let refused = repair
            .skipped
            .iter()
            .filter(|s| s.reason == winplace_rules::fix::REFUSED_ANCHORS)
            .count();
        if refused > 0 {
            out.not_fixed.push((
                name.clone(),
                refused,
                winplace_rules::fix::REFUSED_ANCHORS.to_string(),
            ));
        }
        match &input {
            inputs::Input::Stdin => {
                repaired_stdin.extend_from_slice(repair.text.as_bytes());
                if !repair.applied.is_empty() {
                    out.fixed.push((name.clone(), repair.applied.len()));
                }
            }
            inputs::Input::File(path) if repair.text != text => {
                let written = match &fingerprint {
                    Some(read) => write::atomic(path, &repair.text, read),
                    None => Err(write::WriteError::Changed(path.clone())),
                };
                if let Err(e) = written {
                    // The file still holds what was read: report that, not the repair.
                    tracing::debug!(file = %name, error = %e, "repaired file not written");
                    out.errors.push(file_error(&name, e.to_string()));
                    out.unwritten += 1;
                    out.not_fixed
                        .push((name.clone(), repair.applied.len(), e.to_string()));
                    out.add(report, &sources);
                    continue;
                }
                out.fixed.push((name.clone(), repair.applied.len()));
            }
            inputs::Input::File(_) => {}
        }
        // The repaired text's documents are the read one's, with the templates above them kept.
        out.add(repair.remaining, &HelmSources::of(&repair.text));
    }
    out
}

/// `--verbose`: which settings file is read, or where none was found.
fn say_settings(file: Option<&Path>, start: &Path) {
    match file {
        Some(file) => eprintln!("winplace: settings from {}", file.display()),
        None => eprintln!(
            "winplace: no settings file ({} in {} or above it, up to the repository's root): the defaults",
            inputs::SETTINGS_FILES.join(" or "),
            start.display()
        ),
    }
}

impl Outcome {
    /// Adds the findings and parse errors of one input, each finding with the chart template of its
    /// document.
    fn add(&mut self, report: winplace_rules::Report, sources: &HelmSources<'_>) {
        for finding in &report.findings {
            let template = finding.line.and_then(|l| sources.template_at(l));
            self.findings.push_from(finding, template);
        }
        self.errors.extend(report.parse_errors);
    }
}

/// The exit code of an outcome: 2 on any error, 1 when a finding reaches `fail_on`, else 0.
pub fn exit_code(outcome: &Outcome, fail_on: FailOn) -> u8 {
    if !outcome.errors.is_empty() {
        2
    } else if [Severity::Error, Severity::Warning, Severity::Info]
        .into_iter()
        .any(|s| s >= fail_on.threshold() && outcome.findings.count(s) > 0)
    {
        1
    } else {
        0
    }
}

/// Runs `winplace check`: every report to its file, the one without a file to standard output (standard
/// error with `--fix -`, whose standard output is the repaired manifests).
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut repaired = Vec::new();
    let outcome = check(&args, &mut std::io::stdin().lock(), &mut repaired);
    let report_to_stderr = args.fix && args.paths.iter().any(|p| p.as_os_str() == "-");
    if report_to_stderr {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(&repaired)?;
        stdout.flush()?;
    }
    let fail_on = args.fail_on.threshold();
    let mut unwritten = false;
    // Each report is written as it is rendered (a report of 100,000 documents is hundreds of MB).
    for report in &args.reports.0 {
        let written = match report.file() {
            Some(path) => std::fs::File::create(path).and_then(|mut file| {
                render::render_to(&outcome, report.format, false, fail_on, &mut file)?;
                file.sync_all()
            }),
            None if report_to_stderr => {
                let color = output::color_wanted(true) && report.format == Format::Text;
                render::render_to(
                    &outcome,
                    report.format,
                    color,
                    fail_on,
                    &mut std::io::stderr().lock(),
                )
            }
            None => {
                let color = output::color_wanted(false) && report.format == Format::Text;
                render::render_to(
                    &outcome,
                    report.format,
                    color,
                    fail_on,
                    &mut std::io::stdout().lock(),
                )
            }
        };
        if let Err(e) = written {
            let target = report
                .file()
                .map_or("standard output".to_string(), |p| p.display().to_string());
            eprintln!(
                "winplace: cannot write the {} report to {target}: {e}",
                report.format.name()
            );
            unwritten = true;
        }
    }
    let code = if unwritten {
        2
    } else {
        exit_code(&outcome, args.fail_on)
    };
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(paths: &[&str]) -> CheckArgs {
        CheckArgs {
            paths: paths.iter().map(PathBuf::from).collect(),
            cluster: Vec::new(),
            settings: SettingsArgs::default(),
            reports: Reports::to_stdout(Format::Json),
            verbose: false,
            fix: false,
            fail_on: FailOn::Error,
            on: None,
            registry: ResolveArgs::default(),
        }
    }

    #[test]
    fn exit_codes() {
        let finding = |severity| {
            winplace_rules::Finding::new(
                "r",
                severity,
                winplace_rules::ObjectRef::new("v1", "Pod", None, "p"),
            )
        };
        let outcome = |severities: &[Severity], errors: usize| Outcome {
            findings: severities.iter().map(|s| finding(*s)).collect(),
            errors: (0..errors).map(|_| file_error("f", "bad".into())).collect(),
            ..Outcome::default()
        };
        let rows = [
            (outcome(&[], 0), FailOn::Error, 0),
            (
                outcome(&[Severity::Warning, Severity::Info], 0),
                FailOn::Error,
                0,
            ),
            (outcome(&[Severity::Warning], 0), FailOn::Warning, 1),
            (outcome(&[Severity::Info], 0), FailOn::Warning, 0),
            (outcome(&[Severity::Error], 0), FailOn::Error, 1),
            (outcome(&[Severity::Error], 1), FailOn::Error, 2),
        ];
        for (i, (o, fail_on, code)) in rows.into_iter().enumerate() {
            assert_eq!(exit_code(&o, fail_on), code, "row {i}");
        }
    }

    /// SARIF fingerprints follow the finding, not its line (docs/reference/sarif.md): the same
    /// manifest with its documents swapped and comments added above them gives the same set of
    /// `partialFingerprints`, although the lines differ.
    #[test]
    fn sarif_fingerprints_survive_moved_lines() {
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - {name: web, image: mcr.microsoft.com/windows/servercore:ltsc2022}\n";
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: tool}\nspec:\n  os: {name: windows}\n  containers:\n  - {name: t, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}\n";
        let before = format!("{deployment}---\n{pod}");
        let after = format!("# moved\n# and commented\n\n{pod}---\n# the web tier\n{deployment}");
        let results = |text: &str| -> Vec<(String, String, u64)> {
            let outcome = check(&args(&["-"]), &mut text.as_bytes(), &mut Vec::new());
            assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
            let log = output::sarif(&outcome, None);
            let mut out: Vec<(String, String, u64)> = log["runs"][0]["results"]
                .as_array()
                .expect("results")
                .iter()
                .map(|r| {
                    assert!(r["properties"]["precision"].is_string(), "{r}");
                    (
                        r["ruleId"].as_str().unwrap_or_default().to_string(),
                        r["partialFingerprints"][output::FINGERPRINT]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        r["locations"][0]["physicalLocation"]["region"]["startLine"]
                            .as_u64()
                            .unwrap_or(0),
                    )
                })
                .collect();
            out.sort();
            out
        };
        let (a, b) = (results(&before), results(&after));
        assert!(a.len() >= 2, "both objects have findings: {a:?}");
        let prints = |rows: &[(String, String, u64)]| -> Vec<(String, String)> {
            rows.iter()
                .map(|(r, f, _)| (r.clone(), f.clone()))
                .collect()
        };
        assert_eq!(prints(&a), prints(&b));
        assert!(a.iter().all(|(_, f, _)| f.len() == 64));
        let lines = |rows: &[(String, String, u64)]| rows.iter().map(|r| r.2).collect::<Vec<_>>();
        assert_ne!(lines(&a), lines(&b), "the lines moved");
        // Distinct findings have distinct fingerprints.
        let mut unique: Vec<&String> = a.iter().map(|(_, f, _)| f).collect();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), a.len(), "{a:?}");
    }

    #[test]
    fn stdin_is_read_once_and_named() {
        let mut stdin = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelector: {kubernetes.io/os: linux}\n  containers: [{name: c, image: nginx}]\n".as_bytes();
        let mut repaired = Vec::new();
        let outcome = check(&args(&["-", "-"]), &mut stdin, &mut repaired);
        assert_eq!(outcome.files, 1);
        assert!(outcome.errors.is_empty(), "{:?}", outcome.errors);
        assert!(
            outcome
                .findings
                .iter()
                .all(|f| f.expect("decodes").file.as_deref() == Some(STDIN_NAME))
        );
    }

    #[test]
    fn missing_files_are_errors_and_the_rest_is_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let good = dir.path().join("a.yaml");
        std::fs::write(
            &good,
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        )
        .expect("write");
        let missing = dir.path().join("nope.yaml");
        let a = args(&[&good.display().to_string(), &missing.display().to_string()]);
        let outcome = check(&a, &mut std::io::empty(), &mut Vec::new());
        assert_eq!(outcome.files, 1);
        assert_eq!(outcome.errors.len(), 1);
        assert!(outcome.errors[0].file.ends_with("nope.yaml"));
        assert_eq!(exit_code(&outcome, FailOn::Error), 2);
    }
}
