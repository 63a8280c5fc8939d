//! The node map: nodes grouped by OS and Windows build, each with its taints and its pods as colored
//! marks; a node opens its labels, taints, nodeInfo, declared features, pods and findings.
//!
//! The map reads `/api/nodes`, one light row per node (its pods counted by state, not listed); an opened
//! node reads `/api/nodes/{name}`. At 5,000 nodes the page draws only the first tiles of each group and
//! grows a group on request ("Show more"), with a name filter to jump to a node: the DOM stays small
//! whatever the cluster size.
//!
//! The opened node is the URL's: `/nodes/{name}` opens it (a link to paste into a ticket; back and
//! forward move between the nodes opened), `/nodes` closes it.

use crate::components::finding::FindingItem;
use crate::components::live::Live;
use crate::components::{ErrorNote, Loading, StateBadge, plural};
use leptos::prelude::*;
use leptos_router::NavigateOptions;
use leptos_router::hooks::{use_navigate, use_params_map};
use std::collections::BTreeMap;
use std::sync::Arc;
use winplace_api::NodeRow;
use winplace_rules::audit::{NodeGroupKey, NodeOs, NodeReport, PlacementState};

/// Tiles a group shows before "Show more".
const FIRST_TILES: usize = 60;
/// Tiles one "Show more" adds.
const MORE_TILES: usize = 240;
/// Pod marks a tile draws before summing up the rest as "+N".
const MAX_MARKS: usize = 40;

/// Nodes of one OS and build.
#[derive(Debug, Clone)]
struct Group {
    key: NodeGroupKey,
    /// Sorted by name.
    nodes: Vec<Arc<NodeRow>>,
}

/// The nodes by group, in [`NodeGroupKey`] order (the summary's).
fn group_nodes(nodes: &[Arc<NodeRow>]) -> Vec<Group> {
    let mut groups: BTreeMap<NodeGroupKey, Vec<Arc<NodeRow>>> = BTreeMap::new();
    for node in nodes {
        groups.entry(node.group()).or_default().push(node.clone());
    }
    groups
        .into_iter()
        .map(|(key, mut nodes)| {
            nodes.sort_by(|a, b| a.name.cmp(&b.name));
            Group { key, nodes }
        })
        .collect()
}

fn matches(node: &NodeRow, needle: &str, problems_only: bool) -> bool {
    (needle.is_empty() || node.name.to_lowercase().contains(needle))
        && (!problems_only || node.state != PlacementState::Fine)
}

/// The marks of a tile: one per pod, worst first, at most [`MAX_MARKS`].
fn marks(node: &NodeRow) -> Vec<PlacementState> {
    let c = node.pods;
    std::iter::repeat_n(PlacementState::Misplaced, c.misplaced)
        .chain(std::iter::repeat_n(PlacementState::AtRisk, c.at_risk))
        .chain(std::iter::repeat_n(PlacementState::Fine, c.fine))
        .take(MAX_MARKS)
        .collect()
}

/// The node map view.
#[component]
pub fn NodesPage() -> impl IntoView {
    let live = Live::get();
    let nodes = LocalResource::new(move || {
        live.nodes_rev.track();
        crate::api::nodes()
    });
    let filter = RwSignal::new(String::new());
    let problems_only = RwSignal::new(false);
    let params = use_params_map();
    let selected = Signal::from(Memo::new(move |_| {
        params.with(|p| p.get("name")).filter(|n| !n.is_empty())
    }));
    view! {
        <section aria-labelledby="nodes-title" class="nodes-page">
            <h1 id="nodes-title">"Nodes"</h1>
            <div class="toolbar" role="search">
                <label>
                    "Find a node "
                    <input
                        type="search"
                        placeholder="name contains…"
                        prop:value=filter
                        on:input=move |ev| filter.set(event_target_value(&ev))
                    />
                </label>
                <label class="check">
                    <input
                        type="checkbox"
                        prop:checked=problems_only
                        on:change=move |ev| problems_only.set(event_target_checked(&ev))
                    />
                    " only nodes with misplaced or at-risk pods"
                </label>
                <span class="legend" aria-hidden="true">
                    <span class="mark mark-fine"></span>
                    " fine "
                    <span class="mark mark-at-risk"></span>
                    " at risk "
                    <span class="mark mark-misplaced"></span>
                    " misplaced"
                </span>
            </div>
            <Transition fallback=|| {
                view! { <Loading what="the nodes" /> }
            }>
                {move || {
                    nodes
                        .get()
                        .map(|result| match result {
                            Ok(answer) => {
                                let all: Vec<Arc<NodeRow>> = answer
                                    .nodes
                                    .into_iter()
                                    .map(Arc::new)
                                    .collect();
                                view! {
                                    <NodeMap nodes=Arc::new(all) filter problems_only selected />
                                }
                                    .into_any()
                            }
                            Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                        })
                }}
            </Transition>
            {move || selected.get().map(|name| view! { <NodePanel name selected /> })}
        </section>
    }
}

/// The opened node, fetched on its own (and again when a change touches nodes).
#[component]
fn NodePanel(name: String, selected: Signal<Option<String>>) -> impl IntoView {
    let live = Live::get();
    let node = LocalResource::new(move || {
        live.nodes_rev.track();
        crate::api::node(name.clone())
    });
    view! {
        <Transition fallback=|| {
            view! { <Loading what="the node" /> }
        }>
            {move || {
                node.get()
                    .map(|result| match result {
                        Ok(answer) => {
                            view! { <NodeDetail node=Arc::new(answer.node) selected /> }.into_any()
                        }
                        Err(e) => view! { <ErrorNote message=e /> }.into_any(),
                    })
            }}
        </Transition>
    }
}

#[component]
fn NodeMap(
    nodes: Arc<Vec<Arc<NodeRow>>>,
    filter: RwSignal<String>,
    problems_only: RwSignal<bool>,
    selected: Signal<Option<String>>,
) -> impl IntoView {
    let map = move || {
        let needle = filter.get().trim().to_lowercase();
        let problems = problems_only.get();
        let visible: Vec<Arc<NodeRow>> = nodes
            .iter()
            .filter(|n| matches(n, &needle, problems))
            .cloned()
            .collect();
        let groups = group_nodes(&visible);
        if groups.is_empty() {
            return view! { <p class="muted">"No node matches."</p> }.into_any();
        }
        view! {
            <div class="groups">
                {groups
                    .into_iter()
                    .map(|group| view! { <GroupView group selected /> })
                    .collect_view()}
            </div>
        }
        .into_any()
    };
    // Effects run after the DOM is updated: the mark times the map's render, filters included.
    Effect::new(move |_| {
        filter.track();
        problems_only.track();
        mark_rendered();
    });
    map
}

/// The URL of the nodes view with `name` opened (`/nodes/aks-win22-1`), or with none (`/nodes`).
pub fn node_path(name: Option<&str>) -> String {
    match name {
        Some(name) => format!("/nodes/{}", crate::api::encode(name)),
        None => "/nodes".to_string(),
    }
}

/// Marks the moment the map is in the DOM, for the scale test (`performance.getEntriesByName`).
fn mark_rendered() {
    if let Some(perf) = web_sys::window().and_then(|w| w.performance()) {
        let _ = perf.mark("winplace:node-map-rendered");
    }
}

#[component]
fn GroupView(group: Group, selected: Signal<Option<String>>) -> impl IntoView {
    let total = group.nodes.len();
    let shown = RwSignal::new(FIRST_TILES.min(total));
    let pods: usize = group.nodes.iter().map(|n| n.pods.total()).sum();
    let bad = group
        .nodes
        .iter()
        .filter(|n| n.state != PlacementState::Fine)
        .count();
    let untainted = group.nodes.iter().filter(|n| n.taints.is_empty()).count();
    let build = group.key.build_label().unwrap_or_default();
    let heading_id = format!("group-{}-{}", group.key.os(), build.replace('.', "-"));
    let nodes = Arc::new(group.nodes);
    let tiles_nodes = nodes.clone();
    view! {
        <section
            class="node-group"
            data-os=group.key.os().as_str()
            data-build=build
            aria-labelledby=heading_id.clone()
        >
            <h2 id=heading_id
                .clone()>
                {group.key.title()}" " <span class="count">{plural(total, "node", "nodes")}</span>
            </h2>
            <p class="group-facts">
                {plural(pods, "pod", "pods")}
                {(bad > 0)
                    .then(|| {
                        view! { <span class="warn">{format!(", {bad} with problems")}</span> }
                    })}
                {(group.key.os() == NodeOs::Windows && untainted > 0)
                    .then(|| {
                        view! { <span class="warn">{format!(", {untainted} untainted")}</span> }
                    })}
            </p>
            <ul class="tiles">
                {move || {
                    tiles_nodes
                        .iter()
                        .take(shown.get())
                        .map(|node| view! { <NodeTile node=node.clone() selected /> })
                        .collect_view()
                }}
            </ul>
            {move || {
                (shown.get() < total)
                    .then(|| {
                        let rest = total - shown.get();
                        view! {
                            <p class="more">
                                {format!("Showing {} of {total}. ", shown.get())}
                                <button
                                    type="button"
                                    on:click=move |_| {
                                        shown.update(|s| *s = (*s + MORE_TILES).min(total))
                                    }
                                >
                                    {format!("Show {} more", rest.min(MORE_TILES))}
                                </button>
                            </p>
                        }
                    })
            }}
        </section>
    }
}

#[component]
fn NodeTile(node: Arc<NodeRow>, selected: Signal<Option<String>>) -> impl IntoView {
    let navigate = use_navigate();
    let state = node.state;
    let (total, misplaced, at_risk) = (node.pods.total(), node.pods.misplaced, node.pods.at_risk);
    let label = format!(
        "{}: {}{}{}; taints: {}",
        node.name,
        plural(total, "pod", "pods"),
        if misplaced > 0 {
            format!(", {misplaced} misplaced")
        } else {
            String::new()
        },
        if at_risk > 0 {
            format!(", {at_risk} at risk")
        } else {
            String::new()
        },
        if node.taints.is_empty() {
            "none".to_string()
        } else {
            node.taints.join(", ")
        },
    );
    let extra = total.saturating_sub(MAX_MARKS);
    let name = node.name.clone();
    let pressed_name = name.clone();
    view! {
        <li>
            <button
                type="button"
                class=format!("node tile-{}", state.as_str())
                data-node=name.clone()
                aria-label=label
                aria-expanded=move || {
                    (selected.get().as_deref() == Some(pressed_name.as_str())).to_string()
                }
                on:click=move |_| navigate(
                    &node_path(Some(name.as_str())),
                    NavigateOptions::default(),
                )
            >
                <span class="node-name">{node.name.clone()}</span>
                <span class="taints">
                    {if node.taints.is_empty() {
                        let class = if node.os == NodeOs::Windows {
                            "taint taint-none"
                        } else {
                            "taint taint-empty"
                        };
                        // Only a Windows node without taints is a problem: Linux pods can land on it.
                        view! { <span class=class>"no taints"</span> }
                            .into_any()
                    } else {
                        node.taints
                            .iter()
                            .map(|t| view! { <span class="taint">{t.clone()}</span> })
                            .collect_view()
                            .into_any()
                    }}
                </span>
                <span class="marks" aria-hidden="true">
                    {marks(&node)
                        .into_iter()
                        .map(|s| view! { <span class=format!("mark mark-{}", s.as_str())></span> })
                        .collect_view()}
                    {(extra > 0)
                        .then(|| view! { <span class="more-marks">{format!("+{extra}")}</span> })}
                </span>
            </button>
        </li>
    }
}

#[component]
fn NodeDetail(node: Arc<NodeReport>, selected: Signal<Option<String>>) -> impl IntoView {
    let navigate = use_navigate();
    let close_ref = NodeRef::<leptos::html::Button>::new();
    // Move focus into the panel when it opens, so keyboard users land on it.
    Effect::new(move |_| {
        if let Some(button) = close_ref.get() {
            let _ = button.focus();
        }
    });
    let close = move || {
        let name = selected.get_untracked();
        navigate(&node_path(None), NavigateOptions::default());
        // Give focus back to the tile that opened the panel.
        if let Some(name) = name
            && let Some(doc) = web_sys::window().and_then(|w| w.document())
            && let Ok(Some(el)) = doc.query_selector(&format!("button.node[data-node=\"{name}\"]"))
            && let Ok(el) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el)
        {
            let _ = el.focus();
        }
    };
    let close_on_escape = close.clone();
    let title_id = "node-detail-title";
    view! {
        <aside
            class="node-detail"
            aria-labelledby=title_id
            data-node=node.name.clone()
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    close_on_escape()
                }
            }
        >
            <div class="detail-head">
                <h2 id=title_id>{node.name.clone()}</h2>
                <button
                    type="button"
                    node_ref=close_ref
                    aria-label="Close the node details"
                    on:click=move |_| close()
                >
                    "×"
                </button>
            </div>
            <p>{NodeGroupKey::of(&node).title()}</p>
            <h3>"Taints"</h3>
            {if node.taints.is_empty() {
                let class = if node.os == NodeOs::Windows { "warn" } else { "muted" };
                view! { <p class=class>"No taints"</p> }.into_any()
            } else {
                view! {
                    <ul class="taint-list">
                        {node
                            .taints
                            .iter()
                            .map(|t| {
                                view! {
                                    <li>
                                        <code>{t.clone()}</code>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                    .into_any()
            }}
            <h3>"Node info"</h3>
            <dl class="kv">
                {node
                    .node_info
                    .iter()
                    .map(|(k, v)| {
                        view! {
                            <dt>{k.clone()}</dt>
                            <dd>{v.clone()}</dd>
                        }
                    })
                    .collect_view()}
            </dl>
            <h3>"Declared features"</h3>
            {if node.declared_features.is_empty() {
                view! {
                    <p class="muted declared-features">
                        "None declared (status.declaredFeatures: a kubelet before 1.35, or with the NodeDeclaredFeatures gate off)"
                    </p>
                }
                    .into_any()
            } else {
                view! {
                    <ul class="declared-features">
                        {node
                            .declared_features
                            .iter()
                            .map(|f| {
                                view! {
                                    <li>
                                        <code>{f.clone()}</code>
                                    </li>
                                }
                            })
                            .collect_view()}
                    </ul>
                }
                    .into_any()
            }}
            <h3>"Labels"</h3>
            <dl class="kv labels">
                {node
                    .labels
                    .iter()
                    .map(|(k, v)| {
                        view! {
                            <dt>{k.clone()}</dt>
                            <dd>{v.clone()}</dd>
                        }
                    })
                    .collect_view()}
            </dl>
            <h3>{format!("Pods ({})", node.pods.len())}</h3>
            <table class="pods-table">
                <caption class="sr-only">{format!("Pods on {}", node.name)}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Namespace"</th>
                        <th scope="col">"Pod"</th>
                        <th scope="col">"Phase"</th>
                        <th scope="col">"State"</th>
                    </tr>
                </thead>
                <tbody>
                    {node
                        .pods
                        .iter()
                        .map(|p| {
                            view! {
                                <tr data-pod=p.name.clone() data-state=p.state.as_str()>
                                    <td>{p.namespace.clone()}</td>
                                    <td>{p.name.clone()}</td>
                                    <td>{p.phase.clone()}</td>
                                    <td>
                                        <StateBadge state=p.state />
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <h3>{format!("Findings ({})", node.findings.len())}</h3>
            <ul class="findings">
                {node
                    .findings
                    .iter()
                    .map(|f| view! { <FindingItem finding=(**f).clone() /> })
                    .collect_view()}
            </ul>
        </aside>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_api::StateCounts;

    fn node(
        name: &str,
        os: NodeOs,
        build: Option<&str>,
        states: &[PlacementState],
    ) -> Arc<NodeRow> {
        let pods = StateCounts::of(states.iter().copied());
        Arc::new(NodeRow {
            name: name.into(),
            os,
            build: build.map(String::from),
            taints: vec![],
            pods,
            findings: 0,
            state: pods.worst().unwrap_or_default(),
        })
    }

    #[test]
    fn groups_are_windows_by_build_then_linux_then_others() {
        let nodes = [
            node("l2", NodeOs::Linux, None, &[]),
            node("w25", NodeOs::Windows, Some("10.0.26100"), &[]),
            node("x", NodeOs::Unknown, None, &[]),
            node("w19", NodeOs::Windows, Some("10.0.17763"), &[]),
            node("l1", NodeOs::Linux, None, &[]),
            node("w?", NodeOs::Windows, None, &[]),
        ];
        let groups = group_nodes(&nodes);
        let keys: Vec<(NodeOs, Option<String>, usize)> = groups
            .iter()
            .map(|g| (g.key.os(), g.key.build_label(), g.nodes.len()))
            .collect();
        assert_eq!(
            keys,
            [
                (NodeOs::Windows, Some("10.0.17763".into()), 1),
                (NodeOs::Windows, Some("10.0.26100".into()), 1),
                (NodeOs::Windows, None, 1),
                (NodeOs::Linux, None, 2),
                (NodeOs::Unknown, None, 1)
            ]
        );
        assert_eq!(groups[3].nodes[0].name, "l1", "nodes sorted by name");
        assert_eq!(groups[0].key.title(), "Windows Server 2019 (10.0.17763)");
        assert_eq!(groups[2].key.title(), "Windows (build unknown)");
        assert_eq!(groups[3].key.title(), "Linux");
    }

    #[test]
    fn marks_are_worst_first_and_bounded() {
        use PlacementState::*;
        let n = node("n", NodeOs::Linux, None, &[Fine, AtRisk, Misplaced, Fine]);
        assert_eq!(marks(&n), [Misplaced, AtRisk, Fine, Fine]);
        let crowded = node("n", NodeOs::Linux, None, &[Fine; 100]);
        assert_eq!(marks(&crowded).len(), MAX_MARKS);
    }

    #[test]
    fn the_filter_matches_names_and_problems() {
        use PlacementState::*;
        let n = node(
            "aks-Win22-0",
            NodeOs::Windows,
            Some("10.0.20348"),
            &[AtRisk],
        );
        assert!(matches(&n, "win22", false));
        assert!(!matches(&n, "linux", false));
        assert!(matches(&n, "", true));
        assert!(!matches(
            &node("ok", NodeOs::Linux, None, &[Fine]),
            "",
            true
        ));
    }
}
