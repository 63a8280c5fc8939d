//! `/metrics` in the Prometheus text exposition format (version 0.0.4), written by hand: a handful of
//! series does not need a registry.
//!
//! Two halves: [`Metrics`], the counters and the audit histogram the state holds and the audit thread
//! updates; and [`render`], a pure function of an [`Exposition`] (those values and the published audit's
//! gauges) that the `/metrics` handler gathers from the state.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use winplace_api::SourceKind;
use winplace_rules::Severity;
use winplace_rules::audit::AuditReport;
use winplace_rules::rules::catalog;

/// Upper bounds (seconds) of the audit duration histogram buckets.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// The counters and the audit duration histogram, updated as the server runs (gauges are read from
/// the published audit).
#[derive(Debug, Default)]
pub struct Metrics {
    audit: Mutex<Histogram>,
    watch_errors: AtomicU64,
    changes: AtomicU64,
}

/// The audit duration histogram: cumulative counts per bucket of [`BUCKETS`], sum and count.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    /// Counts one observation.
    pub fn observe(&mut self, took: Duration) {
        let seconds = took.as_secs_f64();
        for (bound, count) in BUCKETS.iter().zip(self.counts.iter_mut()) {
            if seconds <= *bound {
                *count += 1;
            }
        }
        self.sum += seconds;
        self.count += 1;
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The histogram's series, with its HELP and TYPE lines.
    pub fn write(&self, out: &mut String, name: &str, help: &str) -> std::fmt::Result {
        writeln!(out, "# HELP {name} {help}")?;
        writeln!(out, "# TYPE {name} histogram")?;
        for (bound, count) in BUCKETS.iter().zip(self.counts.iter()) {
            writeln!(out, "{name}_bucket{{le=\"{}\"}} {count}", number(*bound))?;
        }
        writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", self.count)?;
        writeln!(out, "{name}_sum {}", number(self.sum))?;
        writeln!(out, "{name}_count {}", self.count)
    }
}

/// The values of [`Metrics`] at one moment.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Counters {
    /// How long batches took.
    pub audit: Histogram,
    /// Watch failures.
    pub watch_errors: u64,
    /// Changes applied.
    pub changes: u64,
}

impl Metrics {
    /// Records how long one batch (apply + report) took.
    pub fn observe_audit(&self, took: Duration) {
        self.audit
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .observe(took);
    }

    /// Counts a watch failure (each is followed by a restart with backoff).
    pub fn watch_error(&self) {
        self.watch_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Watch failures so far.
    pub fn watch_errors(&self) -> u64 {
        self.watch_errors.load(Ordering::Relaxed)
    }

    /// Counts one applied change.
    pub fn change(&self) {
        self.changes(1);
    }

    /// Counts `n` applied changes.
    pub fn changes(&self, n: u64) {
        self.changes.fetch_add(n, Ordering::Relaxed);
    }

    /// The current values.
    pub fn counters(&self) -> Counters {
        Counters {
            audit: self.audit.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            watch_errors: self.watch_errors(),
            changes: self.changes.load(Ordering::Relaxed),
        }
    }
}

/// Everything `/metrics` shows.
#[derive(Debug, Clone, Copy)]
pub struct Exposition<'a> {
    /// Where the data comes from.
    pub source: SourceKind,
    /// The counters and the histogram.
    pub counters: &'a Counters,
    /// The published audit: workloads by state, findings by rule.
    pub report: &'a AuditReport,
    /// Objects held, by kind (`node`, `pod`, `runtimeclass`).
    pub objects: &'a BTreeMap<&'static str, usize>,
    /// Revision of the published audit.
    pub revision: u64,
    /// The first full list has been audited.
    pub synced: bool,
    /// The watch has been failing past the grace period.
    pub stale: bool,
}

/// Escapes a label value (backslash, double quote, newline).
pub fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Formats a float as Prometheus expects (`+Inf`, plain decimals).
fn number(v: f64) -> String {
    if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

/// The whole exposition.
pub fn render(exposition: &Exposition<'_>) -> String {
    let mut out = String::new();
    let _ = write_all(&mut out, exposition);
    out
}

fn write_all(out: &mut String, e: &Exposition<'_>) -> std::fmt::Result {
    let source = escape(e.source.as_str());
    writeln!(
        out,
        "# HELP winplace_info The data source (demo, snapshot or live)."
    )?;
    writeln!(out, "# TYPE winplace_info gauge")?;
    writeln!(
        out,
        "winplace_info{{source=\"{source}\",version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    )?;

    e.counters.audit.write(
        out,
        "winplace_audit_duration_seconds",
        "Time to apply a batch of changes and rebuild the report.",
    )?;

    writeln!(
        out,
        "# HELP winplace_objects Objects the audit holds, by kind."
    )?;
    writeln!(out, "# TYPE winplace_objects gauge")?;
    for kind in ["node", "pod", "runtimeclass"] {
        let n = e.objects.get(kind).copied().unwrap_or(0);
        writeln!(out, "winplace_objects{{kind=\"{kind}\"}} {n}")?;
    }

    writeln!(
        out,
        "# HELP winplace_workloads Workloads by placement state."
    )?;
    writeln!(out, "# TYPE winplace_workloads gauge")?;
    let mut states: BTreeMap<String, usize> = ["fine", "at-risk", "misplaced"]
        .into_iter()
        .map(|s| (s.to_string(), 0))
        .collect();
    for w in &e.report.workloads {
        let name = serde_json::to_value(w.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *states.entry(name).or_default() += 1;
    }
    for (s, n) in &states {
        writeln!(out, "winplace_workloads{{state=\"{}\"}} {n}", escape(s))?;
    }

    writeln!(
        out,
        "# HELP winplace_findings Current findings, by rule and severity."
    )?;
    writeln!(out, "# TYPE winplace_findings gauge")?;
    for (rule, severity, n) in findings(e.report) {
        writeln!(
            out,
            "winplace_findings{{rule=\"{}\",severity=\"{}\"}} {n}",
            escape(&rule),
            severity.as_str()
        )?;
    }

    let counters = &e.counters;
    write_one(
        out,
        "winplace_watch_restarts_total",
        "counter",
        "Watch failures; each is retried with backoff.",
        counters.watch_errors,
    )?;
    write_one(
        out,
        "winplace_changes_total",
        "counter",
        "Changes applied to the audit.",
        counters.changes,
    )?;
    write_one(
        out,
        "winplace_revision",
        "gauge",
        "Revision of the published audit.",
        e.revision,
    )?;
    write_one(
        out,
        "winplace_synced",
        "gauge",
        "1 once the first full list has been audited.",
        u8::from(e.synced),
    )?;
    write_one(
        out,
        "winplace_stale",
        "gauge",
        "1 while the watch has been failing past the grace period.",
        u8::from(e.stale),
    )?;
    Ok(())
}

/// One series without labels: its `# HELP` and `# TYPE` lines, then its value.
pub fn write_one(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    value: impl std::fmt::Display,
) -> std::fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} {kind}")?;
    writeln!(out, "{name} {value}")
}

/// Finding counts by rule (the summary's, which counts each finding once) with each rule's severity
/// as the findings carry it (the catalogue's default when none is at hand).
fn findings(report: &AuditReport) -> Vec<(String, Severity, usize)> {
    let mut severity: BTreeMap<&str, Severity> = BTreeMap::new();
    let all = report
        .workloads
        .iter()
        .flat_map(|w| &w.findings)
        .chain(report.nodes.iter().flat_map(|n| &n.findings));
    for f in all {
        severity.entry(f.rule.as_str()).or_insert(f.severity);
    }
    report
        .summary
        .findings_by_rule
        .iter()
        .map(|(rule, n)| {
            let sev = severity
                .get(rule.as_str())
                .copied()
                .or_else(|| catalog::rule(rule).map(|m| m.severity))
                .unwrap_or(Severity::Warning);
            (rule.clone(), sev, *n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.observe_audit(Duration::from_millis(3));
        m.observe_audit(Duration::from_millis(300));
        let h = m.counters().audit;
        // le=0.001 → 0; le=0.005 → 1; le=0.5 → 2.
        assert_eq!((h.counts[0], h.counts[2], h.counts[8]), (0, 1, 2));
        assert_eq!(h.count, 2);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(0.25), "0.25");
    }

    #[test]
    fn renders_what_it_is_given() {
        let m = Metrics::default();
        m.observe_audit(Duration::from_millis(20));
        m.watch_error();
        m.change();
        m.change();
        let counters = m.counters();
        let report = AuditReport::default();
        let objects = BTreeMap::from([("node", 3), ("pod", 40)]);
        let text = render(&Exposition {
            source: SourceKind::Live,
            counters: &counters,
            report: &report,
            objects: &objects,
            revision: 7,
            synced: true,
            stale: false,
        });
        for line in [
            "winplace_info{source=\"live\",",
            "winplace_audit_duration_seconds_bucket{le=\"0.01\"} 0",
            "winplace_audit_duration_seconds_bucket{le=\"0.025\"} 1",
            "winplace_audit_duration_seconds_count 1",
            "winplace_objects{kind=\"pod\"} 40",
            "winplace_objects{kind=\"runtimeclass\"} 0",
            "winplace_workloads{state=\"fine\"} 0",
            "winplace_watch_restarts_total 1",
            "winplace_changes_total 2",
            "winplace_revision 7",
            "winplace_synced 1",
            "winplace_stale 0",
        ] {
            assert!(
                text.lines().any(|l| l.starts_with(line)),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
