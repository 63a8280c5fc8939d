//! `/metrics` read as Prometheus reads it: the whole answer parsed by a small parser of the text
//! exposition format (version 0.0.4), every family checked against the names, types, help texts and
//! labels the docs promise (docs/api.md, docs/placement.md), and the values followed as the state changes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::common::router;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use winplace::commands::live_reports::writer::ReportsStatus;
use winplace::commands::support_horizon::SupportHorizon;
use winplace::place::report::{PlaceReport, ReleaseReason};
use winplace::registry::ImageResolver;
use winplace::source::{SourceEvent, WatchFailure};
use winplace::state::{AppState, Applier, Timing};
use winplace_rules::audit::{Audit, Change};

/// One sample line: `name{label="value",…} value`.
#[derive(Debug, Clone, PartialEq)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// One metric family: its `# HELP`, its `# TYPE` and its samples.
#[derive(Debug, Clone, PartialEq)]
struct Family {
    help: String,
    kind: String,
    samples: Vec<Sample>,
}

/// A metric or label name: `[a-zA-Z_:][a-zA-Z0-9_:]*` (no colon in a label name).
fn valid_name(name: &str, colon: bool) -> bool {
    let ok = |c: char, first: bool| {
        c.is_ascii_alphabetic() || c == '_' || (colon && c == ':') || (!first && c.is_ascii_digit())
    };
    let mut chars = name.chars();
    chars.next().is_some_and(|c| ok(c, true)) && chars.all(|c| ok(c, false))
}

/// A sample value: a float, `+Inf`, `-Inf` or `NaN`.
fn value(text: &str) -> Option<f64> {
    match text {
        "+Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ => text.parse().ok(),
    }
}

/// `{label="value",…}` at the start of `text`: the labels and the rest of the line.
fn labels(text: &str) -> Result<(BTreeMap<String, String>, &str), String> {
    let mut out = BTreeMap::new();
    let Some(mut rest) = text.strip_prefix('{') else {
        return Ok((out, text));
    };
    loop {
        if let Some(after) = rest.strip_prefix('}') {
            return Ok((out, after));
        }
        let eq = rest.find('=').ok_or("a label without `=`")?;
        let name = &rest[..eq];
        if !valid_name(name, false) {
            return Err(format!("label name {name:?}"));
        }
        rest = rest[eq + 1..]
            .strip_prefix('"')
            .ok_or("a label value without its opening quote")?;
        let mut value = String::new();
        let mut chars = rest.char_indices();
        let end = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, 'n')) => value.push('\n'),
                    other => return Err(format!("escape {other:?} in a label value")),
                },
                Some((_, c)) => value.push(c),
                None => return Err("a label value without its closing quote".into()),
            }
        };
        if out.insert(name.to_string(), value).is_some() {
            return Err(format!("label {name} twice"));
        }
        rest = &rest[end + 1..];
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

/// The families of an exposition, by name. Every line must be a `# HELP`, a `# TYPE` or a sample of the
/// family the last `# TYPE` named (a histogram's `_bucket`, `_sum` and `_count`), with no timestamp, no
/// other comment (an OpenMetrics `# EOF` included) and no blank line; every series once. A family may
/// have no sample yet (findings before the first audit).
fn parse(text: &str) -> Result<BTreeMap<String, Family>, String> {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    let mut help: Option<(String, String)> = None;
    let mut current: Option<String> = None;
    let mut series = BTreeSet::new();
    if !text.ends_with('\n') {
        return Err("the last line has no newline".into());
    }
    for (n, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", n + 1);
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, text) = rest
                .split_once(' ')
                .ok_or_else(|| at("HELP without text".into()))?;
            if families.contains_key(name) || help.is_some() {
                return Err(at(format!("a second HELP, or HELP of {name} out of place")));
            }
            let text = text.replace("\\n", "\n").replace("\\\\", "\\");
            help = Some((name.to_string(), text));
            current = None;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| at("TYPE without a type".into()))?;
            if !valid_name(name, true) {
                return Err(at(format!("metric name {name:?}")));
            }
            if !["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind) {
                return Err(at(format!("type {kind:?}")));
            }
            let Some((helped, help_text)) = help.take() else {
                return Err(at("TYPE without a HELP before it".into()));
            };
            if helped != name || families.contains_key(name) {
                return Err(at(format!("TYPE of {name} after HELP of {helped}")));
            }
            families.insert(
                name.to_string(),
                Family {
                    help: help_text,
                    kind: kind.to_string(),
                    samples: Vec::new(),
                },
            );
            current = Some(name.to_string());
        } else if line.starts_with('#') || line.is_empty() {
            return Err(at("a comment or blank line".into()));
        } else {
            let family_name = current
                .clone()
                .ok_or_else(|| at("a sample before its TYPE".into()))?;
            let end = line
                .find(['{', ' '])
                .ok_or_else(|| at("a sample without a value".into()))?;
            let name = &line[..end];
            let (labels, rest) = labels(&line[end..]).map_err(at)?;
            let rest = rest
                .strip_prefix(' ')
                .ok_or_else(|| at("no space before the value".into()))?;
            if rest.contains(' ') {
                return Err(at("a timestamp or trailing text".into()));
            }
            let value = value(rest).ok_or_else(|| at(format!("value {rest:?}")))?;
            let family = families.get_mut(&family_name).expect("current family");
            let allowed: Vec<String> = if family.kind == "histogram" {
                ["_bucket", "_sum", "_count"]
                    .iter()
                    .map(|s| format!("{family_name}{s}"))
                    .collect()
            } else {
                vec![family_name.clone()]
            };
            if !allowed.iter().any(|a| a == name) {
                return Err(at(format!("sample {name} in family {family_name}")));
            }
            if !series.insert(format!("{name}{labels:?}")) {
                return Err(at("a series twice".into()));
            }
            family.samples.push(Sample {
                name: name.to_string(),
                labels,
                value,
            });
        }
    }
    if let Some((name, _)) = help {
        return Err(format!("HELP of {name} without a TYPE"));
    }
    for (name, family) in &families {
        if family.kind == "counter" && !name.ends_with("_total") {
            return Err(format!("counter {name} without _total"));
        }
        if family.kind == "histogram" {
            check_histogram(name, family)?;
        }
    }
    Ok(families)
}

/// A histogram's buckets rise with `le`, count cumulatively, and end at `+Inf` with `_count`.
fn check_histogram(name: &str, family: &Family) -> Result<(), String> {
    let buckets: Vec<(f64, f64)> = family
        .samples
        .iter()
        .filter(|s| s.name.ends_with("_bucket"))
        .map(|s| {
            let le = s.labels.get("le").and_then(|v| value(v));
            le.map(|le| (le, s.value))
                .ok_or_else(|| format!("{name}: a bucket without a numeric le"))
        })
        .collect::<Result<_, _>>()?;
    let count = family
        .samples
        .iter()
        .find(|s| s.name.ends_with("_count"))
        .map(|s| s.value);
    let sum = family.samples.iter().any(|s| s.name.ends_with("_sum"));
    if !buckets
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
    {
        return Err(format!("{name}: buckets out of order or not cumulative"));
    }
    match (buckets.last(), count) {
        (Some(&(le, n)), Some(count)) if le == f64::INFINITY && n == count && sum => Ok(()),
        _ => Err(format!(
            "{name}: no +Inf bucket equal to _count, or no _sum"
        )),
    }
}

/// The value of the one sample `name` with exactly `labels`.
fn sample(families: &BTreeMap<String, Family>, name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    families
        .values()
        .flat_map(|f| &f.samples)
        .find(|s| s.name == name && s.labels == want)
        .unwrap_or_else(|| panic!("no sample {name}{want:?} in {families:#?}"))
        .value
}

/// Every family `serve --place` exposes: (name, type, help, label names of its samples but `le`).
const FAMILIES: &[(&str, &str, &str, &[&str])] = &[
    (
        "winplace_info",
        "gauge",
        "The data source (demo, snapshot or live).",
        &["source", "version"],
    ),
    (
        "winplace_audit_duration_seconds",
        "histogram",
        "Time to apply a batch of changes and rebuild the report.",
        &[],
    ),
    (
        "winplace_objects",
        "gauge",
        "Objects the audit holds, by kind.",
        &["kind"],
    ),
    (
        "winplace_workloads",
        "gauge",
        "Workloads by placement state.",
        &["state"],
    ),
    (
        "winplace_findings",
        "gauge",
        "Current findings, by rule, severity and namespace.",
        &["rule", "severity", "namespace"],
    ),
    (
        "winplace_gated_pods",
        "gauge",
        "Pods that carry winplace's scheduling gate (winplace.io/placement), waiting for the placement controller.",
        &[],
    ),
    (
        "winplace_gated_oldest_age_seconds",
        "gauge",
        "Seconds since the oldest pod that carries winplace's scheduling gate was created (0 when none does).",
        &[],
    ),
    (
        "winplace_watch_restarts_total",
        "counter",
        "Watch failures; each is retried with backoff.",
        &[],
    ),
    (
        "winplace_changes_total",
        "counter",
        "Changes applied to the audit.",
        &[],
    ),
    (
        "winplace_revision",
        "gauge",
        "Revision of the published audit.",
        &[],
    ),
    (
        "winplace_synced",
        "gauge",
        "1 once the first full list has been audited.",
        &[],
    ),
    (
        "winplace_stale",
        "gauge",
        "1 while the watch has been failing past the grace period.",
        &[],
    ),
    (
        "winplace_image_lookups_total",
        "counter",
        "Image manifest look-ups asked for (background resolution and /api/images/resolve).",
        &[],
    ),
    (
        "winplace_image_cache_hits_total",
        "counter",
        "Image manifest look-ups answered from the cache.",
        &[],
    ),
    (
        "winplace_image_lookup_failures_total",
        "counter",
        "Image manifest look-ups that failed (unauthorized, not found, timeout, unreachable).",
        &[],
    ),
    (
        "winplace_image_cache_bytes",
        "gauge",
        "Bytes the image answers kept in memory cost (bounded).",
        &[],
    ),
    (
        "winplace_image_registry_requests_total",
        "counter",
        "Image look-ups that went to the registry (not answered from a cache), by outcome.",
        &["outcome"],
    ),
    (
        "winplace_place_placed_total",
        "counter",
        "Gated pods pinned and ungated.",
        &[],
    ),
    (
        "winplace_place_released_total",
        "counter",
        "Gated pods ungated without being placed, by reason (deadline, a registry error's kind, no-platform, refused, nothing-to-pin).",
        &["reason"],
    ),
    (
        "winplace_place_deleted_total",
        "counter",
        "Gated pods deleted before winplace's patch reached them (404).",
        &[],
    ),
    (
        "winplace_place_resolve_retries_total",
        "counter",
        "Image look-ups asked for again after a transient registry failure, within the pod's deadline.",
        &[],
    ),
    (
        "winplace_place_conflicts_total",
        "counter",
        "Patches computed again from a fresh read of the pod after a conflict (409, or a failed test op: 422).",
        &[],
    ),
    (
        "winplace_place_api_retries_total",
        "counter",
        "Kubernetes API requests asked again after a 429, a 5xx or no answer.",
        &[],
    ),
    (
        "winplace_place_unrunnable_total",
        "counter",
        "Pods pinned to Windows builds no node runs (or no single build runs), left Pending with a Warning Event.",
        &[],
    ),
    (
        "winplace_place_answers_lost_total",
        "counter",
        "Patches whose answer was lost on the way, found landed when the pod was read again.",
        &[],
    ),
    (
        "winplace_place_list_failures_total",
        "counter",
        "Failed lists and watches of the controller's caches (nodes, serviceaccounts, pull secrets, unscheduled pods), by resource.",
        &["resource"],
    ),
    (
        "winplace_place_can_place",
        "gauge",
        "1 while this replica can place pods (its caches are listed and the controller runs); only then does it ask for the Lease.",
        &[],
    ),
    (
        "winplace_place_resolution_seconds",
        "histogram",
        "Time to read one gated pod's images from their registries.",
        &[],
    ),
    (
        "winplace_place_deadline_seconds",
        "gauge",
        "The controller's --place-deadline: a gated pod waits for its images' registries this long at most.",
        &[],
    ),
    (
        "winplace_place_leading",
        "gauge",
        "1 while this replica holds the placement Lease (only the holder places).",
        &[],
    ),
    (
        "winplace_reports_writes_total",
        "counter",
        "Report writes sent, by operation (apply, delete) and outcome (ok, error).",
        &["operation", "outcome"],
    ),
    (
        "winplace_reports",
        "gauge",
        "Reports winplace keeps in the cluster (namespaced and cluster-scoped).",
        &[],
    ),
    (
        "winplace_reports_leading",
        "gauge",
        "1 while this replica holds the reports Lease and writes the reports.",
        &[],
    ),
    (
        "winplace_nodes_leaving_support",
        "gauge",
        "Nodes whose Windows build or containerd line is out of support within the days given (past it included).",
        &["component", "within_days"],
    ),
];

async fn scrape(state: &AppState) -> BTreeMap<String, Family> {
    let (status, headers, body) = router::send(
        state,
        Request::get("/metrics")
            .body(Body::empty())
            .expect("request"),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers[header::CONTENT_TYPE],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = String::from_utf8(body).expect("utf-8");
    parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_parser_refuses_what_prometheus_would() {
    let ok = "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"q\\\"\\\\\\n\"} 1\n";
    let parsed = parse(ok).expect("valid");
    assert_eq!(parsed["a_total"].samples[0].labels["x"], "q\"\\\n");
    for bad in [
        "# TYPE a gauge\na 1\n",                                     // no HELP
        "# HELP a A.\n# TYPE a gauge\na 1",                          // no final newline
        "# HELP a A.\n# TYPE a gauge\nb 1\n",                        // a sample of another family
        "# HELP a A.\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"1\"} 2\n", // a series twice
        "# HELP a A.\n# TYPE a gauge\na 1 1700000000\n",             // a timestamp
        "# HELP a A.\n# TYPE a gauge\na one\n",                      // not a number
        "# HELP a A.\n# TYPE a gauge\na{x=1} 1\n",                   // an unquoted label value
        "# HELP a A.\n# TYPE a counter\na 1\n",                      // a counter without _total
        "# HELP a A.\n# TYPE a gauge\na 1\n# EOF\n",                 // OpenMetrics' end marker
        "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
    ] {
        assert!(parse(bad).is_err(), "accepted {bad:?}");
    }
}

#[tokio::test]
async fn the_whole_exposition_parses_and_follows_the_state() {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let resolver = Arc::new(ImageResolver::new(Default::default()));
    let place = Arc::new(PlaceReport::new(resolver.clone()));
    state.set_image_resolver(resolver);
    state.set_place_report(place.clone());
    export_serve_parts(&state);

    // Before the first list: nothing held, not synced, the histograms empty.
    let before = scrape(&state).await;
    let found: BTreeSet<&str> = before.keys().map(String::as_str).collect();
    let want: BTreeSet<&str> = FAMILIES.iter().map(|f| f.0).collect();
    assert_eq!(found, want, "the families /metrics exposes");
    for (name, kind, help, label_names) in FAMILIES {
        let family = &before[*name];
        assert_eq!(
            (family.kind.as_str(), family.help.as_str()),
            (*kind, *help),
            "{name}"
        );
        for s in &family.samples {
            let mut names: Vec<&str> = s.labels.keys().map(String::as_str).collect();
            names.retain(|l| *l != "le");
            let mut expected = label_names.to_vec();
            expected.sort();
            assert_eq!(names, expected, "labels of {}", s.name);
        }
    }
    assert_eq!(before["winplace_info"].samples[0].labels["source"], "demo");
    assert_eq!(sample(&before, "winplace_synced", &[]), 0.0);
    assert_eq!(sample(&before, "winplace_revision", &[]), 0.0);
    assert_eq!(sample(&before, "winplace_objects", &[("kind", "pod")]), 0.0);
    assert_eq!(
        sample(&before, "winplace_audit_duration_seconds_count", &[]),
        0.0
    );
    assert_eq!(sample(&before, "winplace_place_leading", &[]), 0.0);
    assert_eq!(
        sample(
            &before,
            "winplace_place_released_total",
            &[("reason", "refused")]
        ),
        0.0
    );
    assert!(
        before["winplace_findings"].samples.is_empty(),
        "no findings yet"
    );

    // The demo cluster listed and audited.
    let demo = winplace::source::demo::DemoSource::load().expect("demo");
    let objects = demo.objects().clone();
    let nodes = objects.nodes.len() as f64;
    let gone = objects.pods[0].metadata.clone();
    let mut applier = Applier::new(Audit::default());
    applier.apply_batch(
        &state,
        vec![
            SourceEvent::Change(objects.into_reset()),
            SourceEvent::Synced,
        ],
    );
    let listed = scrape(&state).await;
    assert_eq!(sample(&listed, "winplace_synced", &[]), 1.0);
    let revision = sample(&listed, "winplace_revision", &[]);
    assert!(revision >= 1.0);
    let pods = sample(&listed, "winplace_objects", &[("kind", "pod")]);
    assert!(pods > 1.0, "the demo's pods");
    assert_eq!(
        sample(&listed, "winplace_objects", &[("kind", "node")]),
        nodes
    );
    assert_eq!(
        sample(&listed, "winplace_audit_duration_seconds_count", &[]),
        1.0
    );
    let changes = sample(&listed, "winplace_changes_total", &[]);
    assert!(changes >= 1.0);
    let misplaced = sample(&listed, "winplace_workloads", &[("state", "misplaced")]);
    assert!(misplaced >= 4.0, "the demo's misplaced workloads");
    // By namespace, each rule's findings add up to the summary's count of it.
    let by_rule = |rule: &str| -> f64 {
        listed["winplace_findings"]
            .samples
            .iter()
            .filter(|s| s.labels["rule"] == rule)
            .map(|s| s.value)
            .sum()
    };
    let summary = state.published().report.summary.findings_by_rule.clone();
    assert!(
        summary
            .get("pod-pending-placement")
            .is_some_and(|n| *n >= 1)
    );
    for (rule, n) in &summary {
        assert_eq!(by_rule(rule), *n as f64, "{rule}");
    }
    assert!(
        listed["winplace_findings"]
            .samples
            .iter()
            .any(|s| s.labels["rule"] == "pod-pending-placement"
                && s.labels["severity"] == "error"
                && !s.labels["namespace"].is_empty()),
        "a pod's finding under its namespace"
    );

    // A pod deleted, a watch failure, and the placement controller at work.
    applier.apply_batch(
        &state,
        vec![
            SourceEvent::Change(Change::PodDeleted(
                gone.namespace.unwrap_or_default(),
                gone.name.unwrap_or_default(),
            )),
            SourceEvent::WatchError(WatchFailure {
                watch: "pods",
                message: "connection reset".into(),
            }),
        ],
    );
    place.set_leading(true);
    place.placed("shop/a".into(), vec![], vec![], "placed".into());
    place.placed("shop/b".into(), vec![], vec![], "placed".into());
    place.released(
        "shop/c".into(),
        vec![],
        ReleaseReason::Deadline,
        "late".into(),
    );
    place.released(
        "shop/d".into(),
        vec![],
        ReleaseReason::Registry("unauthorized"),
        "denied".into(),
    );
    place.deleted();
    place.resolve_retried(3);
    place.conflicted();
    place.api_retried();
    place.api_retried();
    place.unrunnable();
    place.answer_lost();
    place.list_failed("secrets");
    place.list_failed("secrets");
    place.observe_resolution(std::time::Duration::from_millis(40));
    let after = scrape(&state).await;
    assert_eq!(
        sample(&after, "winplace_objects", &[("kind", "pod")]),
        pods - 1.0
    );
    assert!(sample(&after, "winplace_revision", &[]) > revision);
    assert!(sample(&after, "winplace_changes_total", &[]) > changes);
    assert_eq!(
        sample(&after, "winplace_audit_duration_seconds_count", &[]),
        2.0
    );
    assert_eq!(sample(&after, "winplace_watch_restarts_total", &[]), 1.0);
    assert_eq!(sample(&after, "winplace_place_placed_total", &[]), 2.0);
    for (reason, n) in [
        (ReleaseReason::Deadline.label(), 1.0),
        ("unauthorized", 1.0),
        (ReleaseReason::Refused.label(), 0.0),
        (ReleaseReason::NoPlatform.label(), 0.0),
        (ReleaseReason::NothingToPin.label(), 0.0),
    ] {
        assert_eq!(
            sample(
                &after,
                "winplace_place_released_total",
                &[("reason", reason)]
            ),
            n,
            "{reason}"
        );
    }
    assert_eq!(sample(&after, "winplace_place_deleted_total", &[]), 1.0);
    assert_eq!(
        sample(&after, "winplace_place_resolve_retries_total", &[]),
        3.0
    );
    assert_eq!(sample(&after, "winplace_place_conflicts_total", &[]), 1.0);
    assert_eq!(sample(&after, "winplace_place_api_retries_total", &[]), 2.0);
    assert_eq!(
        sample(&after, "winplace_place_answers_lost_total", &[]),
        1.0
    );
    assert_eq!(
        sample(
            &after,
            "winplace_place_list_failures_total",
            &[("resource", "secrets")]
        ),
        2.0
    );
    // Still starting (nothing told it the caches are listed): it cannot place.
    assert_eq!(sample(&after, "winplace_place_can_place", &[]), 0.0);
    assert_eq!(sample(&after, "winplace_place_unrunnable_total", &[]), 1.0);
    assert_eq!(sample(&after, "winplace_place_leading", &[]), 1.0);
    assert_eq!(
        sample(
            &after,
            "winplace_place_resolution_seconds_bucket",
            &[("le", "0.025")]
        ),
        0.0
    );
    assert_eq!(
        sample(
            &after,
            "winplace_place_resolution_seconds_bucket",
            &[("le", "0.05")]
        ),
        1.0
    );
    let sum = sample(&after, "winplace_place_resolution_seconds_sum", &[]);
    assert!((sum - 0.04).abs() < 1e-9, "{sum}");
}

/// The series `serve --reports` and the support horizon add, as `serve` exports them.
fn export_serve_parts(state: &AppState) {
    state.export(Arc::new(ReportsStatus::default()));
    state.export(Arc::new(SupportHorizon::new(
        state.clone(),
        winplace_rules::Settings::default(),
    )));
}

/// Every series `/metrics` can export: each family's name, and a histogram's `_bucket`, `_sum`, `_count`.
async fn exported_series() -> BTreeSet<String> {
    let state = AppState::new(winplace::source::demo::info(), Timing::default());
    let resolver = Arc::new(ImageResolver::new(Default::default()));
    state.set_image_resolver(resolver.clone());
    state.set_place_report(Arc::new(PlaceReport::new(resolver)));
    export_serve_parts(&state);
    let families = scrape(&state).await;
    let mut names = BTreeSet::new();
    for (name, family) in &families {
        names.insert(name.clone());
        if family.kind == "histogram" {
            for suffix in ["_bucket", "_sum", "_count"] {
                names.insert(format!("{name}{suffix}"));
            }
        }
    }
    names
}

/// The metric names a PromQL expression reads, from the AST of promql-parser (a maintained parser of
/// Prometheus' grammar): every vector selector's name, or its `__name__` matcher.
fn metric_names(expr: &str) -> Result<Vec<String>, String> {
    use promql_parser::parser::{self, Expr};
    fn walk(e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::Aggregate(a) => {
                walk(&a.expr, out);
                if let Some(p) = &a.param {
                    walk(p, out);
                }
            }
            Expr::Unary(u) => walk(&u.expr, out),
            Expr::Binary(b) => {
                walk(&b.lhs, out);
                walk(&b.rhs, out);
            }
            Expr::Paren(p) => walk(&p.expr, out),
            Expr::Subquery(s) => walk(&s.expr, out),
            Expr::VectorSelector(v) => selector(v, out),
            Expr::MatrixSelector(m) => selector(&m.vs, out),
            Expr::Call(c) => c.args.args.iter().for_each(|a| walk(a, out)),
            Expr::NumberLiteral(_) | Expr::StringLiteral(_) | Expr::Extension(_) => {}
        }
    }
    fn selector(v: &parser::VectorSelector, out: &mut Vec<String>) {
        match &v.name {
            Some(name) => out.push(name.clone()),
            None => out.extend(
                v.matchers
                    .matchers
                    .iter()
                    .filter(|m| m.name == "__name__")
                    .map(|m| m.value.clone()),
            ),
        }
    }
    let ast = parser::parse(expr)?;
    let mut out = Vec::new();
    walk(&ast, &mut out);
    Ok(out)
}

fn repo_file(path: &str) -> String {
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// Each expression parses, and names only series `/metrics` exports (a dashboard or an alert on a
/// series that does not exist shows nothing and fires never).
fn check_expressions(what: &str, exprs: &[(String, String)], exported: &BTreeSet<String>) {
    assert!(!exprs.is_empty(), "{what}: no expression");
    for (name, expr) in exprs {
        let names = metric_names(expr).unwrap_or_else(|e| panic!("{what} {name}: {e}\n{expr}"));
        assert!(!names.is_empty(), "{what} {name} reads no series: {expr}");
        for metric in names {
            assert!(
                exported.contains(&metric),
                "{what} {name} reads {metric}, which /metrics does not export"
            );
        }
    }
}

#[test]
fn the_expression_checker_refuses_bad_promql_and_unknown_series() {
    assert!(metric_names("sum(rate(winplace_changes_total[5m])").is_err());
    assert_eq!(
        metric_names("max by (c) (a) or vector(0) < on() b{x=\"1\"}").ok(),
        Some(vec!["a".to_string(), "b".to_string()])
    );
    let exported = BTreeSet::from(["winplace_stale".to_string()]);
    let unknown = vec![("x".to_string(), "winplace_stael == 1".to_string())];
    let result = std::panic::catch_unwind(|| check_expressions("test", &unknown, &exported));
    assert!(result.is_err(), "an unknown series passed");
}

#[tokio::test]
async fn every_alert_parses_reads_exported_series_and_has_a_runbook() {
    let exported = exported_series().await;
    let text = repo_file("deploy/chart/files/alerts.yaml");
    let parsed = winplace_rules::input::parse("alerts.yaml", &text, &Default::default());
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let file = &parsed.documents[0].value;
    let mut exprs = Vec::new();
    for group in file["groups"].as_array().expect("groups") {
        for rule in group["rules"].as_array().expect("rules") {
            let alert = rule["alert"].as_str().expect("an alert name");
            let expr = rule["expr"].as_str().expect("an expression");
            exprs.push((alert.to_string(), expr.to_string()));
            assert!(
                rule["labels"]["severity"].is_string(),
                "{alert}: no severity"
            );
            let url = rule["annotations"]["runbook_url"]
                .as_str()
                .expect("runbook_url");
            let page = url
                .split_once("/blob/main/")
                .map(|(_, p)| p)
                .unwrap_or_else(|| panic!("{alert}: {url}"));
            assert!(page.starts_with("docs/runbooks/"), "{alert}: {url}");
            let runbook = repo_file(page);
            for section in [
                "## Meaning",
                "## Impact",
                "## Diagnosis",
                "## Mitigation",
                "kubectl",
            ] {
                assert!(runbook.contains(section), "{page}: no {section:?}");
            }
            assert!(runbook.contains(alert), "{page} does not name {alert}");
        }
    }
    check_expressions("alert", &exprs, &exported);
}

/// The alerts evaluated by Prometheus' own rule engine (`promtool test rules`, from Debian's
/// `prometheus` package) over series as the chart's ServiceMonitor scrapes them:
/// `tests/data/alerts.test.yaml` says which alert fires when (the controller's target gone while pods are
/// gated, no gated pods, a leader placing in time, a pod gated past the controller's deadline, pods
/// released at the deadline).
#[test]
fn the_alerts_fire_when_and_only_when_their_runbooks_say() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let out = std::process::Command::new("promtool")
        .args(["test", "rules", "alerts.test.yaml"])
        .current_dir(&data)
        .output()
        .unwrap_or_else(|e| {
            panic!("promtool (Debian's prometheus package, which `cargo xtask test` installs): {e}")
        });
    assert!(
        out.status.success(),
        "promtool test rules tests/data/alerts.test.yaml:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn every_dashboard_query_reads_exported_series() {
    let exported = exported_series().await;
    let dashboard: serde_json::Value =
        serde_json::from_str(&repo_file("deploy/chart/files/grafana-dashboard.json"))
            .expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        let title = panel["title"].as_str().unwrap_or("").to_string();
        for target in panel["targets"].as_array().expect("targets") {
            let expr = target["expr"].as_str().expect("expr");
            exprs.push((title.clone(), expr.to_string()));
        }
    }
    check_expressions("panel", &exprs, &exported);
}
