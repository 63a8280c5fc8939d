//! The planner: a cluster (Nodes or an infrastructure file) and workloads; toggle pools off, upgrade a
//! Windows pool to another build in place, add pools, pick a date (what the platforms have retired by
//! then goes, `docs/reference/lifecycle.md`), and see which workloads break or get fixed and the Windows
//! builds after. Computed in the browser by the rules crate's `plan` module (the same as `winplace
//! what-if`); the date is the one typed in (the page reads no clock); the state lives in the URL
//! (`#p=…`), so a link reproduces it.

use std::collections::BTreeMap;

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use winplace_rules::infra::{Format, NodePool, read_context};
use winplace_rules::input::{Limits, parse};
use winplace_rules::lifecycle::Date;
use winplace_rules::plan::{self, Plan, PlanReport, PoolUpgrade};
use winplace_rules::windows::Os;
use winplace_rules::{ObjectRef, Settings, model};

use super::playground::{dom, share};

/// The fragment key of the planner's links.
const KEY: &str = "p=";

/// A pool added in the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddedPool {
    /// Its name (nodes `<name>-1`, …).
    pub name: String,
    /// `windows` or `linux`.
    pub os: String,
    /// Windows build (`10.0.26100`); empty for Linux.
    pub build: String,
    /// `key=value:Effect`, or empty for none.
    pub taint: String,
    /// Number of nodes.
    pub count: u32,
}

/// Everything a planner link reproduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerState {
    /// The cluster: Nodes or an infrastructure file.
    #[serde(rename = "k", default)]
    pub cluster: String,
    /// The workloads.
    #[serde(rename = "i", default)]
    pub manifests: String,
    /// Pools switched off.
    #[serde(rename = "o", default)]
    pub off: Vec<String>,
    /// Pools added.
    #[serde(rename = "a", default)]
    pub added: Vec<AddedPool>,
    /// Windows pools upgraded in place: (pool, new build).
    #[serde(rename = "u", default)]
    pub upgrades: Vec<(String, String)>,
    /// The plan's date (`YYYY-MM-DD`), empty for none.
    #[serde(rename = "d", default)]
    pub on: String,
}

/// The sample: the demo cluster's pools as `az aks nodepool list -o json` prints them, and workloads
/// pinned to each Windows build.
const SAMPLE_CLUSTER: &str = r#"[
  {"name": "linux", "osType": "Linux", "osSku": "Ubuntu", "mode": "System", "count": 3, "vmSize": "Standard_D4s_v5"},
  {"name": "win19", "osType": "Windows", "osSku": "Windows2019", "mode": "User", "count": 2, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]},
  {"name": "win22", "osType": "Windows", "osSku": "Windows2022", "mode": "User", "count": 3, "vmSize": "Standard_D4s_v5", "nodeTaints": ["os=windows:NoSchedule"]}
]
"#;

const SAMPLE_MANIFESTS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: invoice-api, namespace: billing}
spec:
  selector: {matchLabels: {app: invoice-api}}
  template:
    metadata: {labels: {app: invoice-api}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.17763}
      tolerations: [{key: os, value: windows, effect: NoSchedule}]
      containers:
      - {name: api, image: "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: portal, namespace: web}
spec:
  selector: {matchLabels: {app: portal}}
  template:
    metadata: {labels: {app: portal}}
    spec:
      nodeSelector: {kubernetes.io/os: windows, node.kubernetes.io/windows-build: 10.0.20348}
      tolerations: [{key: os, value: windows, effect: NoSchedule}]
      containers:
      - {name: iis, image: "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022"}
"#;

impl Default for PlannerState {
    fn default() -> Self {
        PlannerState {
            cluster: SAMPLE_CLUSTER.into(),
            manifests: SAMPLE_MANIFESTS.into(),
            off: Vec::new(),
            added: Vec::new(),
            upgrades: Vec::new(),
            on: String::new(),
        }
    }
}

impl PlannerState {
    /// The fragment (with `#`) that reproduces the state.
    pub fn encode(&self) -> String {
        format!(
            "#{KEY}{}",
            share::pack(&serde_json::to_vec(self).unwrap_or_default())
        )
    }

    /// The state in a fragment; `None` when it holds none or is damaged.
    pub fn decode(fragment: &str) -> Option<PlannerState> {
        let payload = fragment.trim_start_matches('#').strip_prefix(KEY)?;
        serde_json::from_slice(&share::unpack(payload).ok()?).ok()
    }
}

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

/// Evaluates a state.
pub fn evaluate(state: &PlannerState) -> Outcome {
    let settings = Settings::default();
    let mut out = Outcome::default();
    let read = read_context(&[("cluster", &state.cluster)]);
    out.problems.extend(
        read.errors
            .iter()
            .map(|e| format!("cluster line {}: {}", e.line, e.message)),
    );
    let ctx = read.context;
    let mut rows: BTreeMap<String, PoolRow> = BTreeMap::new();
    for n in &ctx.nodes {
        let name = plan::pool_name(n);
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
    let parsed = parse("workloads", &state.manifests, &Limits::default());
    out.problems.extend(
        parsed
            .errors
            .iter()
            .map(|e| format!("workloads line {}: {}", e.line, e.message)),
    );
    let objects = model::objects(&parsed.documents);
    let mut the_plan = Plan {
        remove_pools: state.off.clone(),
        ..Plan::default()
    };
    for pool in &state.added {
        match added_nodes(pool) {
            Ok(nodes) => the_plan.add.extend(nodes),
            Err(e) => out.problems.push(e),
        }
    }
    for (pool, build) in &state.upgrades {
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
    if !state.on.trim().is_empty() {
        match state.on.parse::<Date>() {
            Ok(on) => the_plan.on = Some(on),
            Err(e) => out.problems.push(format!("date: {e}")),
        }
    }
    out.report = plan::plan_objects(&objects, &ctx, &the_plan, &settings);
    out
}

/// The builds a Windows pool can be upgraded to in place.
const UPGRADE_BUILDS: &[(&str, &str)] = &[
    ("10.0.20348", "Windows Server 2022 (10.0.20348)"),
    ("10.0.26100", "Windows Server 2025 (10.0.26100)"),
];

/// The planner view.
#[component]
pub fn PlannerPage() -> impl IntoView {
    let initial = PlannerState::decode(&dom::fragment()).unwrap_or_default();
    let state = RwSignal::new(initial);
    let outcome = Memo::new(move |_| evaluate(&state.read()));
    Effect::new(move |_| dom::replace_fragment(&state.read().encode()));
    let (name, os, build, taint, count) = (
        RwSignal::new("win25".to_string()),
        RwSignal::new("windows".to_string()),
        RwSignal::new("10.0.26100".to_string()),
        RwSignal::new("os=windows:NoSchedule".to_string()),
        RwSignal::new("2".to_string()),
    );
    let add = move |_| {
        let pool = AddedPool {
            name: name.get(),
            os: os.get(),
            build: build.get(),
            taint: taint.get(),
            count: count.get().trim().parse().unwrap_or(1),
        };
        state.update(|s| s.added.push(pool));
    };
    let upgrade = move |pool: String, build: String| {
        state.update(|s| {
            s.upgrades.retain(|(p, _)| *p != pool);
            if !build.is_empty() {
                s.upgrades.push((pool, build));
            }
        })
    };
    let toggle = move |pool: String, keep: bool| {
        state.update(|s| {
            s.off.retain(|p| *p != pool);
            if !keep {
                s.off.push(pool);
            }
        })
    };
    view! {
        <section class="planner" aria-labelledby="planner-title">
            <h1 id="planner-title">"Planner"</h1>
            <p>"What breaks, and what gets fixed, when node pools go away or come. The cluster is Nodes or an infrastructure file (eksctl, Karpenter, "
               <code>"az aks nodepool list -o json"</code>", "<code>"gcloud container node-pools list --format=json"</code>
               ", OpenShift MachineSet); the page computes the plan with the same rules as "<code>"winplace what-if"</code>
               ". Its address is the plan: copy it to share."</p>
            <div class="planner-inputs">
                <label>"Cluster"
                    <textarea class="planner-cluster" rows="12" spellcheck="false"
                        prop:value=move || state.read().cluster.clone()
                        on:input=move |ev| { let v = event_target_value(&ev); state.update(|s| { s.cluster = v; s.off.clear(); s.upgrades.clear(); }); }/>
                </label>
                <label>"Workloads"
                    <textarea class="planner-manifests" rows="12" spellcheck="false"
                        prop:value=move || state.read().manifests.clone()
                        on:input=move |ev| { let v = event_target_value(&ev); state.update(|s| s.manifests = v); }/>
                </label>
            </div>
            <ul class="planner-problems">
                {move || outcome.read().problems.iter().map(|p| view! { <li class="problem">{p.clone()}</li> }).collect_view()}
            </ul>
            <p class="planner-date">
                <label>"Date "<input type="date" class="planner-on" prop:value=move || state.read().on.clone()
                    on:input=move |ev| { let v = event_target_value(&ev); state.update(|s| s.on = v); }/></label>
                " What each node's platform (its labels: AKS, EKS, GKE) or Microsoft has retired by this date goes, as "
                <code>"winplace what-if --on DATE"</code>" does ("<a href="https://github.com/winplace/winplace/blob/main/docs/reference/lifecycle.md">"the calendar and its sources"</a>"). Empty: no calendar."
            </p>
            <h2>"Pools"</h2>
            <table class="planner-pools">
                <thead><tr><th scope="col">"Keep"</th><th scope="col">"Pool"</th><th scope="col">"Nodes"</th><th scope="col">"OS and build"</th><th scope="col">"Upgrade in place"</th></tr></thead>
                <tbody>
                    {move || outcome.read().pools.iter().map(|p| {
                        let pool = p.name.clone();
                        let checked = !state.read().off.contains(&pool);
                        let label = format!("keep pool {}", p.name);
                        let chosen = state.read().upgrades.iter().find(|(q, _)| *q == p.name).map(|(_, b)| b.clone()).unwrap_or_default();
                        let upgrade_cell = if p.windows {
                            let pool = p.name.clone();
                            let current = p.kind.strip_prefix("windows ").unwrap_or("").to_string();
                            view! {
                                <select aria-label=format!("upgrade pool {} in place", p.name) prop:value=chosen.clone()
                                    on:change=move |ev| upgrade(pool.clone(), event_target_value(&ev))>
                                    <option value="">"no"</option>
                                    {UPGRADE_BUILDS.iter().filter(|(b, _)| *b != current).map(|(b, name)| view! {
                                        <option value=*b selected=chosen == *b>{format!("to {name}")}</option>
                                    }).collect_view()}
                                </select>
                            }.into_any()
                        } else {
                            view! { <span>"—"</span> }.into_any()
                        };
                        view! {
                            <tr data-pool=p.name.clone()>
                                <td><input type="checkbox" aria-label=label prop:checked=checked
                                    on:change=move |ev| toggle(pool.clone(), event_target_checked(&ev))/></td>
                                <th scope="row">{p.name.clone()}</th>
                                <td>{p.nodes}</td>
                                <td>{p.kind.clone()}</td>
                                <td>{upgrade_cell}</td>
                            </tr>
                        }
                    }).collect_view()}
                    {move || state.read().added.iter().enumerate().map(|(i, p)| {
                        let what = if p.os == "windows" { format!("windows {} (added)", p.build) } else { "linux (added)".to_string() };
                        view! {
                            <tr class="added" data-pool=p.name.clone()>
                                <td><button type="button" aria-label=format!("remove added pool {}", p.name)
                                    on:click=move |_| state.update(|s| { if i < s.added.len() { s.added.remove(i); } })>"✕"</button></td>
                                <th scope="row">{p.name.clone()}</th>
                                <td>{p.count}</td>
                                <td>{what}</td>
                                <td></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
            <fieldset class="planner-add">
                <legend>"Add a pool"</legend>
                <label>"Name "<input type="text" prop:value=move || name.get() on:input=move |ev| name.set(event_target_value(&ev))/></label>
                <label>"OS "<select prop:value=move || os.get() on:change=move |ev| os.set(event_target_value(&ev))>
                    <option value="windows">"Windows"</option><option value="linux">"Linux"</option></select></label>
                <label>"Build "<select prop:value=move || build.get() on:change=move |ev| build.set(event_target_value(&ev))>
                    <option value="10.0.17763">"Windows Server 2019 (10.0.17763)"</option>
                    <option value="10.0.20348">"Windows Server 2022 (10.0.20348)"</option>
                    <option value="10.0.26100">"Windows Server 2025 (10.0.26100)"</option></select></label>
                <label>"Taint "<input type="text" prop:value=move || taint.get() on:input=move |ev| taint.set(event_target_value(&ev))/></label>
                <label>"Nodes "<input type="number" min="1" prop:value=move || count.get() on:input=move |ev| count.set(event_target_value(&ev))/></label>
                <button type="button" on:click=add>"Add pool"</button>
            </fieldset>
            {move || {
                let o = outcome.read();
                let Some(retired) = o.report.retirements.as_ref() else {
                    return ().into_any();
                };
                view! {
                    <h2>"Retired by the date"</h2>
                    <ul class="planner-retirements">
                        {if retired.is_empty() {
                            view! { <li class="none">"Nothing the calendar says has been retired by then."</li> }.into_any()
                        } else {
                            retired.iter().map(|r| {
                                let f = &r.retirement;
                                view! {
                                    <li data-build=f.build.clone() data-platform=f.platform.as_str()>
                                        <strong>{format!("{} {}", f.platform.title(), f.build)}</strong>
                                        {format!(" {} {}: {} — {} node(s) of {}", f.kind.as_str(), f.date.clone().unwrap_or_default(), f.what, r.nodes, r.pools.join(", "))}
                                        <div class="source">{format!("source: {}", f.source)}</div>
                                    </li>
                                }
                            }).collect_view().into_any()
                        }}
                    </ul>
                }.into_any()
            }}
            <h2>"Windows builds after the plan"</h2>
            <table class="planner-matrix">
                <thead><tr><th scope="col">"Build"</th><th scope="col">"Nodes now"</th><th scope="col">"Nodes after"</th></tr></thead>
                <tbody>
                    {move || {
                        let o = outcome.read();
                        let mut builds: Vec<String> = o.report.builds_before.keys().chain(o.report.builds_after.keys()).cloned().collect();
                        builds.sort();
                        builds.dedup();
                        builds.into_iter().map(|b| {
                            let before = o.report.builds_before.get(&b).copied().unwrap_or(0);
                            let after = o.report.builds_after.get(&b).copied().unwrap_or(0);
                            view! { <tr data-build=b.clone()><th scope="row">{b.clone()}</th><td>{before}</td><td class="after">{after}</td></tr> }
                        }).collect_view()
                    }}
                </tbody>
            </table>
            <h2>"Workloads"</h2>
            {move || {
                let o = outcome.read();
                if o.report.changes.is_empty() {
                    return view! { <p class="planner-none">"No workload's errors change."</p> }.into_any();
                }
                view! {
                    <ul class="planner-changes">
                        {o.report.changes.iter().map(|c| {
                            let verdict = if !c.new_errors().is_empty() { "breaks" } else if c.after.is_empty() { "fixed" } else { "changes" };
                            view! {
                                <li class=format!("change {verdict}") data-object=c.object.clone() data-verdict=verdict>
                                    <strong>{verdict}</strong>" "<code>{c.object.clone()}</code>
                                    ": errors ["{c.before.join(", ")}"] → ["{c.after.join(", ")}"]"
                                    <ul class="fixes">{c.fixes.iter().map(|f| view! { <li>{f.clone()}</li> }).collect_view()}</ul>
                                </li>
                            }
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_breaks_the_2019_app_when_its_pool_goes() {
        let mut state = PlannerState::default();
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
        let back = PlannerState::decode(&state.encode()).expect("round trip");
        assert_eq!(back, state);
    }

    #[test]
    fn an_in_place_upgrade_and_a_date() {
        // win22 to 2025 in place: the app pinned to exactly 10.0.20348 breaks, the pool keeps its nodes.
        let mut state = PlannerState::default();
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
        let back = PlannerState::decode(&state.encode()).expect("round trip");
        assert_eq!(back, state);
        // A bad date and an upgrade of a pool that is gone are said, not applied.
        state.on = "2026-02-30".into();
        state.upgrades.push(("win23".into(), "10.0.26100".into()));
        let o = evaluate(&state);
        assert_eq!(o.problems.len(), 2, "{:?}", o.problems);
        assert_eq!(o.report.retirements, None);
    }
}
