//! `/metrics` in the Prometheus text exposition format (version 0.0.4), encoded by the
//! [`prometheus_client`] crate: every scrape builds a [`Registry`] of what the server holds at that
//! moment and [`encode`]s it.
//!
//! Three parts: [`Metrics`], the counters and the audit histogram the state holds and the audit thread
//! updates (prometheus-client's own [`Counter`] and [`Histogram`], which a registry shares); [`Series`],
//! a metric read at scrape time (the published audit's gauges, a map of counts by label); and
//! [`register`], which adds both to a scrape's registry from an [`Exposition`]. Other parts of the
//! server add their own series the same way (`ImageResolver::register`, `PlaceReport::register`).
//!
//! Names and help texts are written here as they are exposed (`winplace_changes_total`, help ending in
//! a full stop): [`add`] gives prometheus-client the name without the suffix its encoder appends
//! (`_total` for a counter, `_info` for an info metric) and the help without the full stop it appends.

use std::collections::BTreeMap;
use std::time::Duration;

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
pub use prometheus_client::metrics::counter::Counter;
pub use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Metric, Registry};
use winplace_api::SourceKind;
use winplace_rules::Severity;
use winplace_rules::audit::{AuditReport, GatedPods};
use winplace_rules::catalog;

/// The `Content-Type` of `/metrics`: the Prometheus text format, version 0.0.4.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Upper bounds (seconds) of the duration histograms' buckets (`+Inf` is added).
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// A duration histogram over [`BUCKETS`].
pub fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The counters and the audit duration histogram, updated as the server runs (gauges are read from
/// the published audit). Cloning the metrics of a scrape's registry shares them (they are `Arc`s).
#[derive(Debug)]
pub struct Metrics {
    audit: Histogram,
    watch_errors: Counter,
    changes: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            audit: histogram(),
            watch_errors: Counter::default(),
            changes: Counter::default(),
        }
    }
}

impl Metrics {
    /// Records how long one batch (apply + report) took.
    pub fn observe_audit(&self, took: Duration) {
        self.audit.observe(took.as_secs_f64());
    }

    /// Counts a watch failure (each is followed by a restart with backoff).
    pub fn watch_error(&self) {
        self.watch_errors.inc();
    }

    /// Watch failures so far.
    pub fn watch_errors(&self) -> u64 {
        self.watch_errors.get()
    }

    /// Counts one applied change.
    pub fn change(&self) {
        self.changes(1);
    }

    /// Counts `n` applied changes.
    pub fn changes(&self, n: u64) {
        self.changes.inc_by(n);
    }
}

/// A part of the server that adds its own series to every scrape (`AppState::export`).
pub trait Exported: Send + Sync {
    /// Adds this part's series to a scrape's registry.
    fn register(&self, registry: &mut Registry);
}

/// Everything the state's own series show, gathered from the state at one scrape.
#[derive(Debug, Clone, Copy)]
pub struct Exposition<'a> {
    /// Where the data comes from.
    pub source: SourceKind,
    /// The counters and the histogram.
    pub metrics: &'a Metrics,
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
    /// The pods that carry winplace's scheduling gate, as the audit holds them.
    pub gated: GatedPods,
    /// The scrape's time, which the gated pods' age is counted to.
    pub now: k8s_openapi::jiff::Timestamp,
}

/// Labels of one sample: `(name, value)` pairs in the order they are written.
pub type Labels = Vec<(&'static str, String)>;

/// A counter or gauge read at scrape time: one sample per label set, written in the order given.
#[derive(Debug)]
pub struct Series {
    kind: MetricType,
    samples: Vec<(Labels, u64)>,
}

impl Series {
    /// A gauge with one sample per label set.
    pub fn gauge(samples: impl IntoIterator<Item = (Labels, u64)>) -> Self {
        Series {
            kind: MetricType::Gauge,
            samples: samples.into_iter().collect(),
        }
    }

    /// A gauge without labels.
    pub fn gauge_value(value: u64) -> Self {
        Self::gauge([(Labels::new(), value)])
    }

    /// A counter with one sample per label set.
    pub fn counter(samples: impl IntoIterator<Item = (Labels, u64)>) -> Self {
        Series {
            kind: MetricType::Counter,
            samples: samples.into_iter().collect(),
        }
    }

    /// A counter without labels.
    pub fn counter_value(value: u64) -> Self {
        Self::counter([(Labels::new(), value)])
    }

    /// A counter of `counts` by one label (`label="key"`), in the map's order.
    pub fn counter_by<K: ToString>(
        label: &'static str,
        counts: impl IntoIterator<Item = (K, u64)>,
    ) -> Self {
        Self::counter(
            counts
                .into_iter()
                .map(|(k, n)| (vec![(label, k.to_string())], n)),
        )
    }
}

impl EncodeMetric for Series {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, value) in &self.samples {
            if labels.is_empty() {
                self.sample(&mut encoder, value)?;
            } else {
                self.sample(&mut encoder.encode_family(labels)?, value)?;
            }
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        self.kind
    }
}

impl Series {
    fn sample(&self, encoder: &mut MetricEncoder, value: &u64) -> Result<(), std::fmt::Error> {
        if self.kind == MetricType::Counter {
            encoder.encode_counter::<NoLabelSet, _, u64>(value, None)
        } else {
            encoder.encode_gauge(value)
        }
    }
}

/// Registers `metric` under its exposed `name` and `help`: prometheus-client appends `_total` to a
/// counter's name, `_info` to an info metric's, and a full stop to every help text, so they are taken
/// off here (a name or help without them is a mistake, caught in debug builds).
pub fn add(registry: &mut Registry, name: &str, help: &str, metric: impl Metric) {
    let suffix = match metric.metric_type() {
        MetricType::Counter => "_total",
        MetricType::Info => "_info",
        _ => "",
    };
    let base = name.strip_suffix(suffix);
    debug_assert!(base.is_some(), "{name} must end with {suffix}");
    let help_base = help.strip_suffix('.');
    debug_assert!(
        help_base.is_some(),
        "the help of {name} must end with a full stop"
    );
    registry.register(base.unwrap_or(name), help_base.unwrap_or(help), metric);
}

/// The text of `registry` in the Prometheus text format (version 0.0.4).
pub fn encode(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail, and every metric here encodes infallibly.
    let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, registry);
    out
}

/// The text of the series `register` adds to an empty registry (for a part's own tests and examples).
pub fn encode_with(register: impl FnOnce(&mut Registry)) -> String {
    let mut registry = Registry::default();
    register(&mut registry);
    encode(&registry)
}

/// Adds the state's series to a scrape's `registry`: the source, the audit histogram, the objects
/// held, the workloads by state, the findings by rule, the gated pods and the age of the oldest, the
/// watch and change counters, the revision and the readiness flags.
pub fn register(registry: &mut Registry, e: &Exposition<'_>) {
    add(
        registry,
        "winplace_info",
        "The data source (demo, snapshot or live).",
        Info::new(vec![
            ("source", e.source.as_str().to_string()),
            ("version", env!("CARGO_PKG_VERSION").to_string()),
        ]),
    );
    add(
        registry,
        "winplace_audit_duration_seconds",
        "Time to apply a batch of changes and rebuild the report.",
        e.metrics.audit.clone(),
    );
    add(
        registry,
        "winplace_objects",
        "Objects the audit holds, by kind.",
        Series::gauge(["node", "pod", "runtimeclass"].map(|kind| {
            let n = e.objects.get(kind).copied().unwrap_or(0);
            (vec![("kind", kind.to_string())], n as u64)
        })),
    );
    add(
        registry,
        "winplace_workloads",
        "Workloads by placement state.",
        Series::gauge(
            workload_states(e.report)
                .into_iter()
                .map(|(state, n)| (vec![("state", state)], n)),
        ),
    );
    add(
        registry,
        "winplace_findings",
        "Current findings, by rule, severity and namespace.",
        Series::gauge(
            findings(e.report)
                .into_iter()
                .map(|(rule, severity, namespace, n)| {
                    (
                        vec![
                            ("rule", rule),
                            ("severity", severity.as_str().to_string()),
                            ("namespace", namespace),
                        ],
                        n as u64,
                    )
                }),
        ),
    );
    add(
        registry,
        "winplace_gated_pods",
        "Pods that carry winplace's scheduling gate (winplace.io/placement), waiting for the placement controller.",
        Series::gauge_value(e.gated.pods as u64),
    );
    add(
        registry,
        "winplace_gated_oldest_age_seconds",
        "Seconds since the oldest pod that carries winplace's scheduling gate was created (0 when none does).",
        Series::gauge_value(e.gated.oldest_age_seconds(e.now)),
    );
    add(
        registry,
        "winplace_watch_restarts_total",
        "Watch failures; each is retried with backoff.",
        e.metrics.watch_errors.clone(),
    );
    add(
        registry,
        "winplace_changes_total",
        "Changes applied to the audit.",
        e.metrics.changes.clone(),
    );
    add(
        registry,
        "winplace_revision",
        "Revision of the published audit.",
        Series::gauge_value(e.revision),
    );
    add(
        registry,
        "winplace_synced",
        "1 once the first full list has been audited.",
        Series::gauge_value(u64::from(e.synced)),
    );
    add(
        registry,
        "winplace_stale",
        "1 while the watch has been failing past the grace period.",
        Series::gauge_value(u64::from(e.stale)),
    );
}

/// Workloads by state (`fine`, `at-risk` and `misplaced` always, then any other state), by name.
fn workload_states(report: &AuditReport) -> BTreeMap<String, u64> {
    let mut states: BTreeMap<String, u64> = ["fine", "at-risk", "misplaced"]
        .into_iter()
        .map(|s| (s.to_string(), 0))
        .collect();
    for w in &report.workloads {
        let name = serde_json::to_value(w.state)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        *states.entry(name).or_default() += 1;
    }
    states
}

/// Namespaces that get a `namespace` label of their own in `winplace_findings`: those with the most
/// findings. The findings of the others are summed under [`OTHER_NAMESPACES`], so that the family holds
/// at most (rules in the catalogue) × (this + 2) series however many namespaces the cluster has
/// (docs/api.md, "Cardinality").
pub const FINDING_NAMESPACES: usize = 100;

/// The `namespace` label of the findings of the namespaces past [`FINDING_NAMESPACES`].
pub const OTHER_NAMESPACES: &str = "_other";

/// Finding counts by rule and namespace: a workload's findings under its namespace (`""` for a
/// cluster-scoped workload), a node's and the rest of the summary's (RuntimeClasses) under `""`; each
/// rule's total is the summary's, which counts each finding once. Each rule carries its severity as
/// the findings do (the catalogue's default when none is at hand).
fn findings(report: &AuditReport) -> Vec<(String, Severity, String, usize)> {
    let mut severity: BTreeMap<&str, Severity> = BTreeMap::new();
    let mut by_namespace: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for w in &report.workloads {
        let namespace = w.owner.namespace.as_deref().unwrap_or("");
        for f in &w.findings {
            severity.entry(f.rule.as_str()).or_insert(f.severity);
            *by_namespace
                .entry(namespace)
                .or_default()
                .entry(f.rule.as_str())
                .or_default() += 1;
        }
    }
    for f in report.nodes.iter().flat_map(|n| &n.findings) {
        severity.entry(f.rule.as_str()).or_insert(f.severity);
    }
    // The namespaces with the most findings keep their name.
    let mut ranked: Vec<(&str, usize)> = by_namespace
        .iter()
        .filter(|(ns, _)| !ns.is_empty())
        .map(|(ns, rules)| (*ns, rules.values().sum()))
        .collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let named: std::collections::BTreeSet<&str> = ranked
        .iter()
        .take(FINDING_NAMESPACES)
        .map(|(ns, _)| *ns)
        .collect();
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (ns, rules) in &by_namespace {
        let label = if ns.is_empty() || named.contains(ns) {
            *ns
        } else {
            OTHER_NAMESPACES
        };
        for (rule, n) in rules {
            *counts.entry((*rule, label)).or_default() += n;
        }
    }
    let mut out = Vec::new();
    for (rule, total) in &report.summary.findings_by_rule {
        let sev = severity
            .get(rule.as_str())
            .copied()
            .or_else(|| catalog::rule(rule).map(|m| m.severity))
            .unwrap_or(Severity::Warning);
        let mut counted = 0;
        for ((_, ns), n) in counts
            .range((rule.as_str(), "")..)
            .take_while(|((r, _), _)| *r == rule)
        {
            counted += n;
            if !ns.is_empty() {
                out.push((rule.clone(), sev, ns.to_string(), *n));
            }
        }
        let cluster =
            counts.get(&(rule.as_str(), "")).copied().unwrap_or(0) + total.saturating_sub(counted);
        if cluster > 0 {
            out.push((rule.clone(), sev, String::new(), cluster));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exposed(metrics: &Metrics, report: &AuditReport) -> String {
        let objects = BTreeMap::from([("node", 3), ("pod", 40)]);
        encode_with(|r| {
            register(
                r,
                &Exposition {
                    source: SourceKind::Live,
                    metrics,
                    report,
                    objects: &objects,
                    revision: 7,
                    synced: true,
                    stale: false,
                    gated: GatedPods {
                        pods: 2,
                        oldest_created: "2026-12-08T10:00:00Z".parse().ok(),
                    },
                    now: "2026-12-08T10:02:05Z".parse().expect("a time"),
                },
            )
        })
    }

    /// A report of `namespaces` namespaces, namespace `ns-i` holding `i + 1` findings of one rule.
    fn report_of(namespaces: usize) -> AuditReport {
        let mut report = AuditReport::default();
        let mut total = 0;
        for i in 0..namespaces {
            let ns = format!("ns-{i:03}");
            let object = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": ns});
            let finding = serde_json::json!({"rule": "pod-on-wrong-os", "severity": "error",
                "object": object, "path": "", "message": "m"});
            let workload = serde_json::json!({"owner": object, "os": "linux", "state": "misplaced",
                "pods": [], "findings": vec![finding; i + 1], "images": [], "incidents": []});
            let workload: winplace_rules::audit::WorkloadReport =
                serde_json::from_value(workload).expect("a workload report");
            report.workloads.push(std::sync::Arc::new(workload));
            total += i + 1;
        }
        report
            .summary
            .findings_by_rule
            .insert("pod-on-wrong-os".into(), total + 2);
        report
    }

    #[test]
    fn findings_by_namespace_are_bounded_and_add_up() {
        let report = report_of(FINDING_NAMESPACES + 30);
        let rows = findings(&report);
        // The most-found namespaces by name, the rest summed, the summary's remainder under "".
        assert_eq!(rows.len(), FINDING_NAMESPACES + 2);
        let named: Vec<&str> = rows.iter().map(|r| r.2.as_str()).collect();
        assert!(named.contains(&"ns-129") && !named.contains(&"ns-000"));
        let other: usize = (1..=30).sum();
        assert!(rows.iter().any(|r| r.2 == OTHER_NAMESPACES && r.3 == other));
        assert!(rows.iter().any(|r| r.2.is_empty() && r.3 == 2));
        let sum: usize = rows.iter().map(|r| r.3).sum();
        assert_eq!(sum, report.summary.findings_by_rule["pod-on-wrong-os"]);
        // Under the bound, every namespace by name.
        assert_eq!(findings(&report_of(3)).len(), 4);
    }

    #[test]
    fn histogram_buckets_are_cumulative() {
        let m = Metrics::default();
        m.observe_audit(Duration::from_millis(3));
        m.observe_audit(Duration::from_millis(300));
        let text = exposed(&m, &AuditReport::default());
        for line in [
            "winplace_audit_duration_seconds_bucket{le=\"0.001\"} 0",
            "winplace_audit_duration_seconds_bucket{le=\"0.005\"} 1",
            "winplace_audit_duration_seconds_bucket{le=\"0.5\"} 2",
            "winplace_audit_duration_seconds_bucket{le=\"10\"} 2",
            "winplace_audit_duration_seconds_bucket{le=\"+Inf\"} 2",
            "winplace_audit_duration_seconds_count 2",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let text = encode_with(|r| {
            add(
                r,
                "winplace_test_total",
                "A test.",
                Series::counter_by("reason", [("a\"b\\c\nd", 1)]),
            )
        });
        assert!(
            text.contains("winplace_test_total{reason=\"a\\\"b\\\\c\\nd\"} 1\n"),
            "{text}"
        );
    }

    #[test]
    fn names_and_help_are_exposed_as_written() {
        let text = encode_with(|r| {
            add(r, "winplace_a_total", "Counted.", Counter::<u64>::default());
            add(r, "winplace_b", "Gauged.", Series::gauge_value(4));
        });
        assert_eq!(
            text,
            "# HELP winplace_a_total Counted.\n# TYPE winplace_a_total counter\nwinplace_a_total 0\n\
             # HELP winplace_b Gauged.\n# TYPE winplace_b gauge\nwinplace_b 4\n"
        );
    }

    #[test]
    fn renders_what_it_is_given() {
        let m = Metrics::default();
        m.observe_audit(Duration::from_millis(20));
        m.watch_error();
        m.change();
        m.change();
        let text = exposed(&m, &AuditReport::default());
        for line in [
            "# TYPE winplace_info gauge",
            "winplace_info{source=\"live\",",
            "winplace_audit_duration_seconds_bucket{le=\"0.01\"} 0",
            "winplace_audit_duration_seconds_bucket{le=\"0.025\"} 1",
            "winplace_audit_duration_seconds_count 1",
            "winplace_objects{kind=\"pod\"} 40",
            "winplace_objects{kind=\"runtimeclass\"} 0",
            "winplace_workloads{state=\"fine\"} 0",
            "winplace_gated_pods 2",
            "winplace_gated_oldest_age_seconds 125",
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
