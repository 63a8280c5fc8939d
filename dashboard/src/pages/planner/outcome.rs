//! What the page shows for its inputs: the pools, the plan's answer and what could not be read.

use std::collections::BTreeMap;

use winplace_rules::infra::{Format, NodePool, read_context};
use winplace_rules::input::{Limits, parse};
use winplace_rules::lifecycle::Date;
use winplace_rules::what_if::{self, Plan, PlanReport, PoolUpgrade};
use winplace_rules::windows::Os;
use winplace_rules::{ObjectRef, Settings, model};

use super::inputs::{AddedPool, PlanInputs};

/// One pool of the cluster, as the page lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolRow {
    /// Pool name.
    pub name: String,
    /// `windows 10.0.20348`, `linux`.
    pub kind: String,
    /// Nodes.
    pub nodes: usize,
    /// Whether every node of the pool is a Windows node (it can be upgraded in place).
    pub windows: bool,
}

/// What the page shows for a state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The cluster's pools.
    pub pools: Vec<PoolRow>,
    /// The plan's answer.
    pub report: PlanReport,
    /// What could not be read.
    pub problems: Vec<String>,
}

/// The nodes of an added pool (made by the same code as infrastructure files' pools).
fn added_nodes(pool: &AddedPool) -> Result<Vec<k8s_openapi::api::core::v1::Node>, String> {
    let os: Os = pool
        .os
        .parse()
        .map_err(|_| format!("pool {}: OS must be windows or linux", pool.name))?;
    let taints = if pool.taint.trim().is_empty() {
        Vec::new()
    } else {
        vec![
            winplace_rules::infra::parse_taint(pool.taint.trim())
                .map_err(|e| format!("pool {}: {e}", pool.name))?,
        ]
    };
    let p = NodePool {
        name: pool.name.clone(),
        format: Format::Aks,
        object: ObjectRef::new("", "NodePool", None, &pool.name),
        file: "planner".into(),
        line: None,
        path: String::new(),
        os: Some(os),
        arch: Some("amd64".into()),
        build: (os == Os::Windows).then(|| pool.build.clone()),
        unknown: None,
        labels: BTreeMap::from([("agentpool".to_string(), pool.name.clone())]),
        taints,
        count: pool.count,
    };
    Ok(p.nodes())
}

/// Evaluates the inputs.
pub fn evaluate(inputs: &PlanInputs) -> Outcome {
    let settings = Settings::default();
    let mut out = Outcome::default();
    let read = read_context(&[("cluster", &inputs.cluster)]);
    out.problems.extend(
        read.errors
            .iter()
            .map(|e| format!("cluster line {}: {}", e.line, e.message)),
    );
    let ctx = read.context;
    let mut rows: BTreeMap<String, PoolRow> = BTreeMap::new();
    for n in &ctx.nodes {
        let name = what_if::pool_name(n);
        let kind = match (model::node_os(n), model::node_windows_build(n)) {
            (Some("windows"), Some(b)) => format!("windows {b}"),
            (Some(os), _) => os.to_string(),
            (None, _) => "unknown OS".to_string(),
        };
        let windows = model::node_os(n) == Some("windows");
        let row = rows.entry(name.clone()).or_insert(PoolRow {
            name,
            kind,
            nodes: 0,
            windows,
        });
        row.nodes += 1;
        row.windows &= windows;
    }
    out.pools = rows.into_values().collect();
    let parsed = parse("workloads", &inputs.manifests, &Limits::default());
    out.problems.extend(
        parsed
            .errors
            .iter()
            .map(|e| format!("workloads line {}: {}", e.line, e.message)),
    );
    let objects = model::objects(&parsed.documents);
    let mut the_plan = Plan {
        remove_pools: inputs.off.clone(),
        ..Plan::default()
    };
    for pool in &inputs.added {
        match added_nodes(pool) {
            Ok(nodes) => the_plan.add.extend(nodes),
            Err(e) => out.problems.push(e),
        }
    }
    for (pool, build) in &inputs.upgrades {
        let up = Plan {
            upgrade_pools: vec![PoolUpgrade {
                pool: pool.clone(),
                build: build.clone(),
            }],
            ..Plan::default()
        };
        match up.check(&ctx) {
            Ok(()) => the_plan.upgrade_pools.extend(up.upgrade_pools),
            Err(e) => out.problems.push(e.to_string()),
        }
    }
    if !inputs.on.trim().is_empty() {
        match inputs.on.parse::<Date>() {
            Ok(on) => the_plan.on = Some(on),
            Err(e) => out.problems.push(format!("date: {e}")),
        }
    }
    out.report = what_if::plan_objects(&objects, &ctx, &the_plan, &settings);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_breaks_the_2019_app_when_its_pool_goes() {
        let mut state = PlanInputs::default();
        let o = evaluate(&state);
        assert!(o.problems.is_empty(), "{:?}", o.problems);
        let names: Vec<&str> = o.pools.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["linux", "win19", "win22"]);
        assert!(o.report.changes.is_empty());
        state.off.push("win19".into());
        state.added.push(AddedPool {
            name: "win25".into(),
            os: "windows".into(),
            build: "10.0.26100".into(),
            taint: "os=windows:NoSchedule".into(),
            count: 2,
        });
        let o = evaluate(&state);
        let broken: Vec<&str> = o.report.broken().map(|c| c.object.as_str()).collect();
        assert_eq!(broken, ["Deployment/billing/invoice-api"]);
        assert_eq!(o.report.builds_after.get("10.0.26100"), Some(&2));
        assert!(!o.report.builds_after.contains_key("10.0.17763"));
        let back = PlanInputs::decode(&state.encode()).expect("round trip");
        assert_eq!(back, state);
    }

    #[test]
    fn an_in_place_upgrade_and_a_date() {
        // win22 to 2025 in place: the app pinned to exactly 10.0.20348 breaks, the pool keeps its nodes.
        let mut state = PlanInputs::default();
        assert!(
            evaluate(&state)
                .pools
                .iter()
                .any(|p| p.name == "win22" && p.windows)
        );
        assert!(
            !evaluate(&state)
                .pools
                .iter()
                .any(|p| p.name == "linux" && p.windows)
        );
        state.upgrades.push(("win22".into(), "10.0.26100".into()));
        let o = evaluate(&state);
        assert!(o.problems.is_empty(), "{:?}", o.problems);
        let broken: Vec<&str> = o.report.broken().map(|c| c.object.as_str()).collect();
        assert_eq!(broken, ["Deployment/web/portal"]);
        assert_eq!(o.report.builds_after.get("10.0.26100"), Some(&3));
        assert_eq!(o.report.retirements, None);
        // On 2026-03-02 AKS has retired Windows Server 2019 (lifecycle.md A1): the 2019 app breaks too.
        state.on = "2026-03-02".into();
        let o = evaluate(&state);
        let retired = o
            .report
            .retirements
            .as_ref()
            .expect("a date reads the calendar");
        assert_eq!(retired[0].retirement.date.as_deref(), Some("2026-03-01"));
        assert_eq!(o.report.broken().count(), 2);
        let back = PlanInputs::decode(&state.encode()).expect("round trip");
        assert_eq!(back, state);
        // A bad date and an upgrade of a pool that is gone are said, not applied.
        state.on = "2026-02-30".into();
        state.upgrades.push(("win23".into(), "10.0.26100".into()));
        let o = evaluate(&state);
        assert_eq!(o.problems.len(), 2, "{:?}", o.problems);
        assert_eq!(o.report.retirements, None);
    }
}
