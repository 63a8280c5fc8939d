//! Where cluster data comes from: a live cluster (kube-rs watchers), a `kubectl get -o json|yaml` snapshot,
//! or the embedded demo cluster. Every source is a [`ClusterSource`]: it says what it is and produces a
//! stream of [`SourceEvent`]s, starting with the initial state: a [`Change::Reset`] (small, fixed
//! clusters) or a list streamed object by object ([`SourceEvent::ListBegin`], [`SourceEvent::Listed`]…,
//! [`SourceEvent::ListDone`]), so that a cluster at the Kubernetes envelope is never held as typed lists.

pub mod backoff;
pub mod call_timeout;
pub mod demo;
pub mod extra_nodes;
pub mod json_stream;
pub mod lenient;
pub mod live;
pub mod objects;
pub mod snapshot;
pub mod watch_error;

use futures::stream::BoxStream;
use std::path::PathBuf;
use winplace_api::SourceInfo;
use winplace_rules::audit::Change;
use winplace_rules::model::cluster_objects::ClusterObject;

/// What a source reports.
#[derive(Debug)]
pub enum SourceEvent {
    /// The cluster changed.
    Change(Change),
    /// A full list of the cluster begins (replacing everything once it is done): its objects follow one
    /// by one. What was published before stays published until [`SourceEvent::ListDone`].
    ListBegin,
    /// One object of the list under way.
    Listed(ClusterObject),
    /// The list under way is complete: it replaces the cluster.
    ListDone,
    /// The list under way is abandoned (a snapshot cut short or not a cluster): the last complete state
    /// stays, and the reason is shown (`/readyz`, every answer's freshness).
    ListFailed(String),
    /// Every kind has been listed: the audit now covers the whole cluster.
    Synced,
    /// A watch failed; the source retries it with backoff (live sources only).
    WatchError(WatchFailure),
    /// A watch that had failed made progress again (its resource, as in [`WatchFailure::watch`]).
    WatchResumed(&'static str),
    /// What registries said about the workloads' images (the server's background resolution, not the
    /// cluster source): the templates running a changed image are re-audited.
    ImageFacts(winplace_rules::rules::ImageFacts),
    /// The day changed (the server's clock, not the cluster source, `crate::clock::day_changes`): the
    /// retirement calendar is read at this date from now on.
    Today(winplace_rules::lifecycle::Date),
}

/// One failure of one watch, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchFailure {
    /// The resource watched (`pods`, `runtimeclasses.node.k8s.io`).
    pub watch: &'static str,
    /// What went wrong ([`watch_error::describe`]).
    pub message: String,
}

/// A source of cluster state: an initial state and a stream of changes.
pub trait ClusterSource: Send {
    /// Demo, snapshot or live, with a sentence for the user.
    fn info(&self) -> SourceInfo;

    /// The events: the initial state (a [`Change::Reset`], or a streamed list), [`SourceEvent::Synced`],
    /// then changes until the stream ends (static sources end right after `Synced`, or watch their file;
    /// live sources run until dropped).
    fn events(self: Box<Self>) -> BoxStream<'static, SourceEvent>;
}

/// How the user chose the source (shared by `serve` and `audit`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SourceArgs {
    /// Read the cluster from a file: the output of `kubectl get nodes,pods,runtimeclasses,events -A -o json`
    /// (or `-o yaml`; events are optional).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["kubeconfig", "context", "demo"])]
    pub snapshot: Option<PathBuf>,
    /// With --snapshot: reload the file whenever it changes and announce it like a watch event.
    #[arg(long, requires = "snapshot")]
    pub watch_snapshot: bool,
    /// Kubeconfig file of the cluster to watch (default: $KUBECONFIG, ~/.kube/config or in-cluster).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context to use (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Use the embedded demo cluster even if a cluster is reachable.
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub demo: bool,
    /// With a live cluster: the time limit, in seconds, of a list and of the start of a watch (a call
    /// that gets no answer fails, is reported and retried with backoff); default 60, the API server's
    /// own limit.
    #[arg(long, value_name = "SECONDS", value_parser = crate::inputs::parse_seconds)]
    pub list_timeout: Option<std::time::Duration>,
    /// Nodes to add to the source's: Node files or infrastructure files whose node pools become the
    /// Nodes the platform would create (eksctl, Karpenter, AKS, GKE, OpenShift MachineSet); repeatable.
    #[arg(long = "cluster", value_name = "FILE")]
    pub cluster: Vec<PathBuf>,
}

/// Which source the arguments and the environment select.
///
/// `--snapshot` and `--demo` are explicit. `--kubeconfig`/`--context` select that cluster, and failing to
/// reach it is an error. Without any of these, an in-cluster service account is used when present;
/// otherwise the default kubeconfig, if its cluster answers; otherwise the demo cluster (with a warning
/// saying why), so that `winplace serve` always shows something.
pub async fn select(args: &SourceArgs) -> anyhow::Result<Box<dyn ClusterSource>> {
    // Only the files' Nodes are used: the settings (which only shape findings about the files) do not matter.
    let extra =
        crate::inputs::cluster_or_errors(&args.cluster, &winplace_rules::Settings::default())?
            .nodes;
    let source = select_source(args).await?;
    Ok(if extra.is_empty() {
        source
    } else {
        Box::new(extra_nodes::WithNodes::new(source, extra))
    })
}

/// The source itself, without `--cluster` files.
async fn select_source(args: &SourceArgs) -> anyhow::Result<Box<dyn ClusterSource>> {
    if let Some(path) = &args.snapshot {
        return Ok(Box::new(
            snapshot::SnapshotSource::load(path)?.watching(args.watch_snapshot),
        ));
    }
    if args.demo {
        return Ok(Box::new(demo::DemoSource::load()?));
    }
    let options = live::LiveOptions {
        list_timeout: args.list_timeout.unwrap_or(live::DEFAULT_LIST_TIMEOUT),
        ..live::LiveOptions::default()
    };
    if args.kubeconfig.is_some() || args.context.is_some() {
        let source = live::LiveSource::from_kubeconfig(
            args.kubeconfig.as_deref(),
            args.context.as_deref(),
            options,
        )
        .await?;
        source.probe().await?;
        return Ok(Box::new(source));
    }
    match live::LiveSource::infer(options).await {
        Ok((source, true)) => Ok(Box::new(source)),
        Ok((source, false)) => match source.probe().await {
            Ok(()) => Ok(Box::new(source)),
            Err(e) => {
                tracing::warn!("no cluster reachable ({e:#}); serving the embedded demo cluster");
                Ok(Box::new(demo::DemoSource::load()?))
            }
        },
        Err(e) => {
            tracing::info!(
                "no kubeconfig or in-cluster service account ({e:#}); serving the embedded demo cluster"
            );
            Ok(Box::new(demo::DemoSource::load()?))
        }
    }
}

/// A static source's events: the whole cluster once, then `Synced`.
pub(crate) fn once(change: Change) -> BoxStream<'static, SourceEvent> {
    use futures::StreamExt;
    futures::stream::iter([SourceEvent::Change(change), SourceEvent::Synced]).boxed()
}
