//! `--cluster FILE` beside any source: the Nodes of infrastructure files (or Node files) added to the
//! cluster the source reports, so `serve` and `audit` show a snapshot together with the pools about to
//! be created.

use winplace_rules::model::cluster_objects::ClusterObject;

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::core::v1::Node;
use winplace_api::SourceInfo;
use winplace_rules::audit::Change;

use super::{ClusterSource, SourceEvent};

/// A source whose every [`Change::Reset`] is followed by the extra nodes.
pub struct WithNodes {
    inner: Box<dyn ClusterSource>,
    nodes: Vec<Node>,
}

impl WithNodes {
    /// `inner`, with `nodes` added.
    pub fn new(inner: Box<dyn ClusterSource>, nodes: Vec<Node>) -> Self {
        WithNodes { inner, nodes }
    }
}

impl ClusterSource for WithNodes {
    fn info(&self) -> SourceInfo {
        let mut info = self.inner.info();
        info.description = format!(
            "{} (with {} node(s) from --cluster files)",
            info.description,
            self.nodes.len()
        );
        info
    }

    fn events(self: Box<Self>) -> BoxStream<'static, SourceEvent> {
        let nodes = self.nodes;
        self.inner
            .events()
            .flat_map(move |event| {
                let events: Vec<SourceEvent> =
                    match event {
                        // A whole state at once: the extra nodes follow it.
                        SourceEvent::Change(reset @ Change::Reset { .. }) => {
                            std::iter::once(SourceEvent::Change(reset))
                                .chain(nodes.iter().map(|n| {
                                    SourceEvent::Change(Change::Node(Box::new(n.clone())))
                                }))
                                .collect()
                        }
                        // A streamed list: the extra nodes are part of it, listed before it ends.
                        SourceEvent::ListDone => nodes
                            .iter()
                            .map(|n| SourceEvent::Listed(ClusterObject::Node(Box::new(n.clone()))))
                            .chain(std::iter::once(SourceEvent::ListDone))
                            .collect(),
                        other => vec![other],
                    };
                futures::stream::iter(events)
            })
            .boxed()
    }
}
