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
    /// Another `Host` name to answer (repeatable; comma-separated in the environment variable). On
    /// a loopback address only loopback names (`localhost`, `*.localhost`, 127.0.0.0/8, `[::1]`)
    /// are answered by default, which stops DNS-rebinding pages; other requests get 421.
    #[arg(
        long = "allowed-host",
        value_name = "NAME",
        env = "WINPLACE_ALLOWED_HOSTS",
        value_delimiter = ','
    )]
    pub allowed_hosts: Vec<String>,
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
    let allowed = crate::hosts::AllowedHosts::for_listen(&args.listen, &args.allowed_hosts);
    crate::app::serve(args.listen, state, allowed).await?;
    Ok(ExitCode::SUCCESS)
}
