//! `winplace serve`: the dashboard, the JSON API, the live event stream and policy.wasm.

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `winplace serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "WINPLACE_LISTEN")]
    pub listen: SocketAddr,
    /// Where the cluster comes from.
    #[command(flatten)]
    pub source: crate::source::SourceArgs,
    /// Settings (YAML or JSON, the policy's settings schema).
    #[arg(long, value_name = "FILE", env = "WINPLACE_SETTINGS")]
    pub settings: Option<PathBuf>,
}

/// Serves until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let settings = crate::commands::check::settings_or_default(args.settings.as_deref())?;
    let source = crate::source::select(&args.source).await?;
    let state = crate::state::AppState::new(source.info(), Default::default());
    tracing::info!("source: {}", state.source().description);
    // The audit thread runs until the source ends (static sources: after the first sync).
    let _applier = crate::state::spawn_applier(
        state.clone(),
        winplace_rules::audit::Audit::new(settings),
        source.events(),
    );
    crate::app::serve(args.listen, state).await?;
    Ok(ExitCode::SUCCESS)
}
