//! The cluster at a glance: nodes by OS and Windows build, workloads by state, findings by severity, and
//! the build matrix (image builds × node builds).

use crate::components::header::SummaryData;
use crate::components::{ErrorNote, Loading, build_name, plural};
use leptos::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use winplace_rules::audit::{BuildMatrixCell, NodeGroupSummary, NodeOs, PlacementState, Summary};

/// The overview view (uses the app-wide summary, so it updates with every change).
#[component]
pub fn OverviewPage() -> impl IntoView {
    let summary = SummaryData::get().0;
    view! {
        <section aria-labelledby="overview-title">
            <h1 id="overview-title">"Overview"</h1>
            <Transition fallback=|| {
                view! { <Loading what="the cluster summary" /> }
            }>
                {move || {
                    summary
                        .get()
                        .map(|result| match result {
                            Ok(answer) => {
                                view! { <SummaryView summary=answer.summary /> }.into_any()
                            }
                            Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                        })
                }}
            </Transition>
            <FailingNow />
        </section>
    }
}

/// What is failing now (`/api/incidents`), refetched when a change touches workloads.
#[component]
fn FailingNow() -> impl IntoView {
    let live = crate::components::live::Live::get();
    let answer = LocalResource::new(move || {
        live.workloads_rev.track();
        crate::api::incidents()
    });
    view! {
        <section class="failing-now" aria-labelledby="failing-title">
            <h2 id="failing-title">"Failing now"</h2>
            <Transition fallback=|| {
                view! { <Loading what="what is failing now" /> }
            }>
                {move || {
                    answer
                        .get()
                        .map(|result| match result {
                            Ok(a) if a.incidents.is_empty() => {
                                view! {
                                    <p class="muted" data-incidents="0">
                                        "Nothing the cluster reports is a Windows placement failure."
                                    </p>
                                }
                                    .into_any()
                            }
                            Ok(a) => {
                                let more = (a.total > a.incidents.len())
                                    .then(|| {
                                        view! {
                                            <p class="muted">
                                                {format!(
                                                    "{} more not listed.",
                                                    a.total - a.incidents.len(),
                                                )}
                                            </p>
                                        }
                                    });
                                view! {
                                    <p class="muted" data-incidents=a.total.to_string()>
                                        {plural(a.total, "incident", "incidents")}
                                        ", read from pod statuses and Events and explained"
                                    </p>
                                    <crate::components::incidents::IncidentList incidents=a
                                        .incidents />
                                    {more}
                                }
                                    .into_any()
                            }
                            Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                        })
                }}
            </Transition>
        </section>
    }
}

#[component]
fn SummaryView(summary: Summary) -> impl IntoView {
    let windows: Vec<NodeGroupSummary> = summary
        .node_groups
        .iter()
        .filter(|g| g.os == NodeOs::Windows)
        .cloned()
        .collect();
    let others: Vec<NodeGroupSummary> = summary
        .node_groups
        .iter()
        .filter(|g| g.os != NodeOs::Windows)
        .cloned()
        .collect();
    let windows_total: usize = windows.iter().map(|g| g.nodes).sum();
    let state = |s: PlacementState| summary.workload_states.get(&s).copied().unwrap_or(0);
    let (misplaced, at_risk) = (
        state(PlacementState::Misplaced),
        state(PlacementState::AtRisk),
    );
    let f = summary.findings;
    view! {
        <div class="cards">
            <section class="card" aria-labelledby="win-nodes">
                <h2 id="win-nodes">"Windows nodes"</h2>
                <p class="big" data-count="windows-nodes">
                    {windows_total}
                </p>
                <ul class="group-counts">
                    {windows.into_iter().map(|g| view! { <GroupLine group=g /> }).collect_view()}
                </ul>
            </section>
            <section class="card" aria-labelledby="other-nodes">
                <h2 id="other-nodes">"Linux nodes"</h2>
                <p class="big" data-count="linux-nodes">
                    {others
                        .iter()
                        .filter(|g| g.os == NodeOs::Linux)
                        .map(|g| g.nodes)
                        .sum::<usize>()}
                </p>
                <ul class="group-counts">
                    {others.into_iter().map(|g| view! { <GroupLine group=g /> }).collect_view()}
                </ul>
            </section>
            <section class="card" aria-labelledby="wl-states">
                <h2 id="wl-states">"Workloads"</h2>
                <p class="big">{summary.workloads}</p>
                <ul class="group-counts">
                    <li data-state="misplaced">
                        <a href="/workloads?state=misplaced">
                            <span class="state state-misplaced">"misplaced"</span>
                            " "
                            {misplaced}
                        </a>
                    </li>
                    <li data-state="at-risk">
                        <a href="/workloads?state=at-risk">
                            <span class="state state-at-risk">"at risk"</span>
                            " "
                            {at_risk}
                        </a>
                    </li>
                    <li class="muted">{format!("{} pods in all", summary.pods)}</li>
                </ul>
            </section>
            <section class="card" aria-labelledby="by-severity">
                <h2 id="by-severity">"Findings by severity"</h2>
                <ul class="group-counts">
                    <li data-severity="error">
                        <a href="/workloads?severity=error">
                            <span class="sev sev-error">"error"</span>
                            " "
                            {f.errors}
                        </a>
                    </li>
                    <li data-severity="warning">
                        <a href="/workloads?severity=warning">
                            <span class="sev sev-warning">"warning"</span>
                            " "
                            {f.warnings}
                        </a>
                    </li>
                    <li data-severity="info">
                        <span class="sev sev-info">"info"</span>
                        " "
                        {f.infos}
                    </li>
                </ul>
            </section>
        </div>
        <BuildMatrix cells=summary.build_matrix />
    }
}

#[component]
fn GroupLine(group: NodeGroupSummary) -> impl IntoView {
    let untainted = (group.os == NodeOs::Windows && group.untainted > 0)
        .then(|| view! { <span class="warn">{format!(" ({} untainted)", group.untainted)}</span> });
    view! {
        <li
            class="group-count"
            data-os=group.os.as_str()
            data-build=group.build.clone().unwrap_or_default()
        >
            <a href="/nodes">{group.title.clone()}</a>
            ": "
            <span class="count">{plural(group.nodes, "node", "nodes")}</span>
            {untainted}
        </li>
    }
}

/// The rows (image builds) and columns (node builds) of the matrix, in ascending build order.
fn axes(cells: &[BuildMatrixCell]) -> (Vec<String>, Vec<String>) {
    let key = |b: &String| {
        winplace_rules::windows::builds::WindowsVersion::parse(b)
            .map(|v| v.build)
            .unwrap_or(u32::MAX)
    };
    let mut images: Vec<String> = cells
        .iter()
        .map(|c| c.image_build.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut nodes: Vec<String> = cells
        .iter()
        .map(|c| c.node_build.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    images.sort_by_key(key);
    nodes.sort_by_key(key);
    (images, nodes)
}

#[component]
fn BuildMatrix(cells: Vec<BuildMatrixCell>) -> impl IntoView {
    let (images, nodes) = axes(&cells);
    let by_pair: BTreeMap<(String, String), BuildMatrixCell> = cells
        .into_iter()
        .map(|c| ((c.image_build.clone(), c.node_build.clone()), c))
        .collect();
    let body = if images.is_empty() {
        view! { <p class="muted">"No Windows images or Windows nodes in this cluster."</p> }
            .into_any()
    } else {
        view! {
            <table class="matrix">
                <caption>
                    "Windows image builds (rows) × node builds (columns): whether process isolation runs the image on the host, and how many pods do so now"
                </caption>
                <thead>
                    <tr>
                        <th scope="col">"Image build"</th>
                        {nodes
                            .iter()
                            .map(|n| view! { <th scope="col">"Node: "{build_name(n)}</th> })
                            .collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {images
                        .iter()
                        .map(|image| {
                            view! {
                                <tr>
                                    <th scope="row">{build_name(image)}</th>
                                    {nodes
                                        .iter()
                                        .map(|node| {
                                            match by_pair.get(&(image.clone(), node.clone())) {
                                                Some(cell) => {
                                                    view! { <MatrixCell cell=cell.clone() /> }.into_any()
                                                }
                                                None => {
                                                    view! { <td class="cell-none">"—"</td> }.into_any()
                                                }
                                            }
                                        })
                                        .collect_view()}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        }.into_any()
    };
    view! {
        <section aria-labelledby="matrix-title">
            <h2 id="matrix-title">"Build matrix"</h2>
            {body}
        </section>
    }
}

/// What a disputed cell's tooltip says (kubernetes-windows-rules.md §5.5.3).
const DISPUTED: &str = "Runtimes disagree: containerd's main branch (containerd/platforms v1.0.0-rc.5) pulls this image on this host; released containerd 2.1–2.3 and hcsshim do not, so winplace counts it as incompatible.";

#[component]
fn MatrixCell(cell: BuildMatrixCell) -> impl IntoView {
    let (class, mark, word) = match (cell.compatible, cell.disputed, cell.pods > 0) {
        (true, _, _) => ("cell-ok", "✓ ", "compatible"),
        (false, true, true) => ("cell-bad cell-disputed cell-used", "? ", "disputed"),
        (false, true, false) => ("cell-bad cell-disputed", "? ", "disputed"),
        (false, false, true) => ("cell-bad cell-used", "✗ ", "incompatible"),
        (false, false, false) => ("cell-bad", "✗ ", "incompatible"),
    };
    view! {
        <td
            class=class
            data-image=cell.image_build.clone()
            data-node=cell.node_build.clone()
            data-compatible=cell.compatible.to_string()
            data-disputed=cell.disputed.to_string()
            data-pods=cell.pods.to_string()
            title=cell.disputed.then_some(DISPUTED)
        >
            <span class="verdict">{mark}{word}</span>
            <span class="pods">{plural(cell.pods, "pod", "pods")}</span>
        </td>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(image: &str, node: &str) -> BuildMatrixCell {
        BuildMatrixCell {
            image_build: image.into(),
            node_build: node.into(),
            compatible: true,
            disputed: false,
            pods: 0,
        }
    }

    #[test]
    fn axes_are_in_build_order_not_text_order() {
        let cells = [
            cell("10.0.26100", "10.0.9999"),
            cell("10.0.17763", "10.0.20348"),
            cell("10.0.17763", "10.0.9999"),
        ];
        let (images, nodes) = axes(&cells);
        assert_eq!(images, ["10.0.17763", "10.0.26100"]);
        assert_eq!(nodes, ["10.0.9999", "10.0.20348"]);
    }
}
