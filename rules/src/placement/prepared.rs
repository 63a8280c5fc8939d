//! [`PreparedCluster`]: the cluster one evaluation reads, prepared once for every pod template of it.

use super::{NodeIndex, Resolver};
use crate::model::ClusterContext;

/// The cluster the rules read, prepared once and shared by every pod template of an evaluation: the
/// context (given, plus the Nodes and RuntimeClasses of the input), the [`Resolver`] built for it, and
/// the context's nodes indexed for [`super::fit`].
///
/// It borrows what the caller prepared: the checker ([`crate::Checker`]) per checked text or object, the
/// audit per change of the cluster. The audit reads the RuntimeClasses through one resolver and, for
/// templates that select single nodes, the whole context beside it; hence three parts rather than one
/// owner.
///
/// ```
/// use winplace_rules::placement::{NodeIndex, PreparedCluster, Resolver};
/// use winplace_rules::{ClusterContext, Settings};
/// let context = ClusterContext::default();
/// let settings = Settings::default();
/// let resolver = Resolver::new(Some(&context), &settings);
/// let index = NodeIndex::from_context(&context);
/// let cluster = PreparedCluster { context: Some(&context), resolver: &resolver, nodes: Some(&index) };
/// assert!(cluster.nodes.is_some_and(|n| n.is_empty()));
/// ```
#[derive(Clone, Copy)]
pub struct PreparedCluster<'p> {
    /// The cluster, when known.
    pub context: Option<&'p ClusterContext>,
    /// Resolves each pod template's effective placement against the cluster and the settings.
    pub resolver: &'p Resolver<'p>,
    /// The cluster's nodes, indexed; `None` without nodes.
    pub nodes: Option<&'p NodeIndex>,
}
