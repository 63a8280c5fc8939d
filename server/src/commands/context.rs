//! The cluster context a one-shot command reads before it works (`what-if` with manifests, `explain`):
//! the `--cluster` files, or a source listed once through the audit.

/// The cluster's Nodes and RuntimeClasses as context (`what-if` with manifests, `explain`): the
/// `--cluster` files alone when no source is named, else the source's (with the files' nodes added).
pub async fn cluster_context(
    args: &crate::source::SourceArgs,
    settings: &winplace_rules::Settings,
) -> anyhow::Result<winplace_rules::ClusterContext> {
    let files_only = !args.cluster.is_empty()
        && args.snapshot.is_none()
        && !args.demo
        && args.kubeconfig.is_none()
        && args.context.is_none();
    if files_only {
        return crate::inputs::cluster_or_errors(&args.cluster, settings);
    }
    let source = crate::source::select(args).await?;
    let audit = crate::state::audit_once(
        winplace_rules::audit::Audit::new(settings.clone()),
        source.events(),
    )
    .await?;
    Ok(audit.context().clone())
}
