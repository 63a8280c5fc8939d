//! Nodes grouped by OS and Windows build.

use leptos::prelude::*;
use winplace_policy::view::{ClusterView, NodeGroup, NodeView};

/// Fetches the cluster and lists its node groups.
#[component]
pub fn NodesPage() -> impl IntoView {
    let cluster = LocalResource::new(crate::api::fetch_cluster);
    view! {
        <section aria-labelledby="nodes-title">
            <h2 id="nodes-title">"Nodes"</h2>
            <Suspense fallback=|| view! { <p class="muted">"Loading the cluster…"</p> }>
                {move || cluster.get().map(|result| match result {
                    Ok(view) => view! { <Cluster view/> }.into_any(),
                    Err(e) => view! { <p class="error" role="alert">{e}</p> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn Cluster(view: ClusterView) -> impl IntoView {
    let source = view.source.clone();
    let groups = view.node_groups();
    view! {
        <p class="source" data-source=source.kind.clone()>
            <span class="badge">{source.kind.clone()}</span>" "{source.description.clone()}
        </p>
        <div class="groups">
            {groups.into_iter().map(|group| view! { <Group group/> }).collect_view()}
        </div>
    }
}

#[component]
fn Group(group: NodeGroup) -> impl IntoView {
    let count = group.nodes.len();
    view! {
        <article class="node-group" data-os=group.os.clone() data-build=group.build.clone().unwrap_or_default()>
            <h3>{group.title.clone()}" "<span class="count">{format!("{count} node{}", if count == 1 { "" } else { "s" })}</span></h3>
            <ul>
                {group.nodes.into_iter().map(|node| view! { <Node node/> }).collect_view()}
            </ul>
        </article>
    }
}

#[component]
fn Node(node: NodeView) -> impl IntoView {
    let pods = node.pods.len();
    view! {
        <li class="node" data-node=node.name.clone()>
            <span class="node-name">{node.name.clone()}</span>
            {node.taints.into_iter().map(|t| view! { <span class="taint" title="taint">{t}</span> }).collect_view()}
            <span class="pods">{format!("{pods} pod{}", if pods == 1 { "" } else { "s" })}</span>
        </li>
    }
}
