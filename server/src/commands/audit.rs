//! `winplace audit`: the dashboard's report, printed once.
//!
//! Exit codes of `audit`: 0 when the report has no error findings, 1 when it has, 2 when the cluster
//! cannot be read.

use crate::inputs::SettingsArgs;
use crate::source::{ClusterSource, SourceArgs};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::io::Write as _;
use std::process::ExitCode;
use winplace_api::SourceInfo;
use winplace_rules::Severity;
use winplace_rules::audit::{
    Audit, Incident, NodeOs, NodeReport, PlacementState, Summary, WorkloadReport,
};

/// Arguments of `winplace audit`.
#[derive(Debug, Clone, Args)]
pub struct AuditArgs {
    /// Where the cluster comes from.
    #[command(flatten)]
    pub source: SourceArgs,
    /// Settings and platform.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// The date the Windows nodes are checked against their platform's retirement calendar
    /// (`YYYY-MM-DD`; docs/reference/lifecycle.md); default: the settings' `lifecycle.date`, else today.
    #[arg(long, value_name = "DATE")]
    pub on: Option<winplace_rules::lifecycle::Date>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = AuditFormat::Text)]
    pub format: AuditFormat,
}

/// How `winplace audit` prints the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AuditFormat {
    /// Summary, then misplaced and at-risk workloads with their findings.
    Text,
    /// The whole report (`AuditReport`, the JSON the API serves).
    Json,
    /// `wgpolicyk8s.io/v1alpha2` PolicyReports (one per namespace) and a ClusterPolicyReport (the
    /// nodes), as a `v1` List for `kubectl apply -f -`.
    Policyreport,
    /// `openreports.io/v1alpha1` Reports (one per namespace) and a ClusterReport (the nodes), the
    /// format Kubewarden writes by default since 1.33, as a `v1` List for `kubectl apply -f -`.
    Openreports,
}

/// Runs `winplace audit`.
pub async fn run(args: AuditArgs) -> anyhow::Result<ExitCode> {
    let mut settings = args.settings.load()?;
    crate::clock::date_settings(&mut settings, args.on);
    let source: Box<dyn ClusterSource> = crate::source::select(&args.source).await?;
    let info = source.info();
    let audit = crate::state::audit_once(Audit::new(settings), source.events()).await?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let errors = write_report(&audit, &info, args.format, now, &mut stdout)?;
    stdout.flush()?;
    // The process exits next, which frees everything at once: dropping 150,000 pods' records one by
    // one first would only cost time (about 50 ms at the envelope).
    std::mem::forget(audit);
    Ok(ExitCode::from(if errors { 1 } else { 0 }))
}

/// Writes the report of `audit` in `format` to `out` as it is produced (no JSON tree, no copy of a row:
/// at 150,000 pods either would cost hundreds of megabytes); `now` is the policy reports' timestamp
/// (seconds since the epoch). Returns whether the report has an error finding (the exit code).
pub fn write_report(
    audit: &Audit,
    info: &SourceInfo,
    format: AuditFormat,
    now: i64,
    mut out: impl std::io::Write,
) -> anyhow::Result<bool> {
    // Read the rows in place: at cluster scale a cloned report would double the peak memory.
    let summary = audit.summary();
    let nodes: Vec<&NodeReport> = audit.nodes().collect();
    let workloads: Vec<&WorkloadReport> = audit.workloads().collect();
    let errors = has_errors(&summary, &nodes, &workloads);
    match format {
        AuditFormat::Json => {
            let view = ReportView {
                summary: &summary,
                nodes,
                workloads,
                incidents: audit.incidents().collect(),
            };
            serde_json::to_writer_pretty(&mut out, &view)?;
            out.write_all(b"\n")?;
        }
        AuditFormat::Policyreport | AuditFormat::Openreports => {
            use crate::commands::policy_report::{ReportApi, write_reports};
            let api = match format {
                AuditFormat::Openreports => ReportApi::OpenReports,
                _ => ReportApi::PolicyReport,
            };
            write_reports(api, &workloads, &nodes, now, &mut out)?;
            out.write_all(b"\n")?;
        }
        AuditFormat::Text => {
            // Written as it is rendered: the text of 20,000 misplaced workloads is some 60 MB.
            let mut fmt_out = FmtToIo {
                inner: &mut out,
                error: None,
            };
            if write_text(&mut fmt_out, info, &summary, &workloads).is_err() {
                return Err(fmt_out
                    .error
                    .map_or_else(|| anyhow::anyhow!("cannot write the report"), Into::into));
            }
        }
    }
    Ok(errors)
}

/// An [`AuditReport`](winplace_rules::audit::AuditReport) made of borrowed rows: serializes to the
/// same JSON.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportView<'a> {
    summary: &'a Summary,
    nodes: Vec<&'a NodeReport>,
    workloads: Vec<&'a WorkloadReport>,
    incidents: Vec<&'a Incident>,
}

/// Whether the report has an error finding.
pub fn has_errors(summary: &Summary, nodes: &[&NodeReport], workloads: &[&WorkloadReport]) -> bool {
    summary.findings.errors > 0
        || workloads
            .iter()
            .flat_map(|w| &w.findings)
            .chain(nodes.iter().flat_map(|n| &n.findings))
            .any(|f| f.severity == Severity::Error)
}

/// `fmt::Write` onto an `io::Write`, keeping the I/O error that `fmt::Error` cannot carry.
struct FmtToIo<'a, W: std::io::Write> {
    inner: &'a mut W,
    error: Option<std::io::Error>,
}

impl<W: std::io::Write> std::fmt::Write for FmtToIo<'_, W> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.inner.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// The text report: the summary, then misplaced and at-risk workloads with their findings.
pub fn render_text(source: &SourceInfo, s: &Summary, workloads: &[&WorkloadReport]) -> String {
    let mut out = String::new();
    let _ = write_text(&mut out, source, s, workloads);
    out
}

/// [`render_text`] written to `out` as it is rendered.
fn write_text(
    out: &mut impl std::fmt::Write,
    source: &SourceInfo,
    s: &Summary,
    workloads: &[&WorkloadReport],
) -> std::fmt::Result {
    writeln!(
        out,
        "winplace audit: {} ({})",
        source.description, source.kind
    )?;
    writeln!(
        out,
        "{} nodes, {} pods, {} workloads",
        s.nodes, s.pods, s.workloads
    )?;
    for g in &s.node_groups {
        let taints = if g.common_taints.is_empty() {
            "no common taint".to_string()
        } else {
            g.common_taints.join(", ")
        };
        writeln!(
            out,
            "  {:<36} {:>5} nodes  {taints}{}",
            g.title,
            g.nodes,
            if g.untainted > 0 && g.os == NodeOs::Windows {
                format!(" ({} untainted)", g.untainted)
            } else {
                String::new()
            }
        )?;
    }
    let count = |state: PlacementState| workloads.iter().filter(|w| w.state == state).count();
    writeln!(
        out,
        "workloads: {} misplaced, {} at risk, {} fine",
        count(PlacementState::Misplaced),
        count(PlacementState::AtRisk),
        count(PlacementState::Fine)
    )?;
    writeln!(
        out,
        "findings: {} errors, {} warnings, {} infos",
        s.findings.errors, s.findings.warnings, s.findings.infos
    )?;
    let incidents: Vec<&Incident> = workloads
        .iter()
        .flat_map(|w| w.incidents.iter().map(|i| &**i))
        .collect();
    if !incidents.is_empty() {
        writeln!(out, "\nFAILING NOW: {} incident(s)", incidents.len())?;
        for i in incidents {
            let since = i
                .since
                .as_deref()
                .map(|s| format!(", since {s}"))
                .unwrap_or_default();
            let sandbox = if i.sandbox { " [pod sandbox]" } else { "" };
            writeln!(
                out,
                "  {} ({}): {}{sandbox} ×{}{since}",
                i.object, i.workload, i.cause, i.count
            )?;
            writeln!(out, "    says: {}", i.message)?;
            if let Some(rule) = &i.rule {
                writeln!(out, "    rule: {rule}")?;
            }
            writeln!(out, "    fix: {}", i.fix)?;
        }
    }
    for state in [PlacementState::Misplaced, PlacementState::AtRisk] {
        let mut rows: Vec<&WorkloadReport> = workloads
            .iter()
            .copied()
            .filter(|w| w.state == state)
            .collect();
        rows.sort_by_key(|w| w.owner.display_name());
        for w in rows {
            writeln!(
                out,
                "\n{}: {} (needs {}, {} pods)",
                state.label().to_uppercase(),
                w.owner.display_name(),
                w.os,
                w.pods.len()
            )?;
            for f in &w.findings {
                let path = if f.path.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", f.path)
                };
                writeln!(
                    out,
                    "  {:<7} {}{path}: {}",
                    f.severity.as_str(),
                    f.rule,
                    f.message
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "../../tests/common/report.rs"]
mod fixture;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_lists_misplaced_then_at_risk_workloads_and_errors_set_the_exit_code() {
        let report = fixture::report();
        let rows: Vec<&WorkloadReport> = report.workloads.iter().map(|w| &**w).collect();
        let nodes: Vec<&NodeReport> = report.nodes.iter().map(|n| &**n).collect();
        let text = render_text(&crate::source::demo::info(), &report.summary, &rows);
        let misplaced = text
            .find("MISPLACED: Deployment/payments/payment-gateway (needs windows, 1 pods)")
            .expect("misplaced workload listed");
        let at_risk = text
            .find("AT RISK: Deployment/shop/cart-api")
            .expect("at-risk workload listed");
        assert!(misplaced < at_risk);
        assert!(text.contains("  error   pod-pending-placement at spec.template.spec: "));
        assert!(text.contains("workloads: 1 misplaced, 1 at risk, 1 fine"));
        assert!(
            !text.contains("kube-proxy"),
            "fine workloads are not listed"
        );
        assert!(has_errors(&report.summary, &nodes, &rows));
        let mut clean = report.clone();
        clean.summary.findings.errors = 0;
        clean
            .workloads
            .retain(|w| w.state != PlacementState::Misplaced);
        let clean_rows: Vec<&WorkloadReport> = clean.workloads.iter().map(|w| &**w).collect();
        assert!(!has_errors(&clean.summary, &nodes, &clean_rows));
        // The borrowed view serializes exactly like the report.
        let view = ReportView {
            summary: &report.summary,
            nodes: nodes.clone(),
            workloads: rows.clone(),
            incidents: report.incidents.iter().map(|i| &**i).collect(),
        };
        assert_eq!(
            serde_json::to_value(&view).expect("view"),
            serde_json::to_value(&report).expect("report")
        );
    }
}
