//! Command-line interface.

use clap::{Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Keeps Windows and Linux workloads on the right nodes of mixed Kubernetes clusters.
#[derive(Debug, Parser)]
#[command(name = "winplace", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the dashboard, the JSON API, the live event stream and policy.wasm.
    ///
    /// The cluster comes from --snapshot, --kubeconfig/--context, the in-cluster service account or the
    /// default kubeconfig; when none is reachable, the embedded demo cluster is served (marked as demo
    /// data in every API answer).
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080", env = "WINPLACE_LISTEN")]
        listen: SocketAddr,
        /// Where the cluster comes from.
        #[command(flatten)]
        source: crate::source::SourceArgs,
        /// Settings (YAML or JSON, the policy's settings schema).
        #[arg(long, value_name = "FILE", env = "WINPLACE_SETTINGS")]
        settings: Option<PathBuf>,
    },
    /// Audit a cluster once and print the report (exit 1 when it has errors).
    Audit(crate::audit_cmd::AuditArgs),
    /// Check manifests (files, directories, `-` for standard input); `--fix` repairs them.
    Check(crate::check::CheckArgs),
    /// List the rules.
    Rules(crate::check::RulesArgs),
    /// Write a synthetic cluster as `kubectl get -o json` would (for demos and scale tests).
    DemoSnapshot(crate::demo_snapshot::DemoSnapshotArgs),
}

impl Cli {
    /// Runs the chosen command.
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Serve {
                listen,
                source,
                settings,
            } => {
                let settings = match &settings {
                    Some(path) => {
                        crate::check::load_settings(path).map_err(|e| anyhow::anyhow!("{e}"))?
                    }
                    None => winplace_policy::Settings::default(),
                };
                let source = crate::source::select(&source).await?;
                let state = crate::state::AppState::new(source.info(), Default::default());
                tracing::info!("source: {}", state.source().description);
                // The audit thread runs until the source ends (static sources: after the first sync).
                let _applier = crate::state::spawn_applier(
                    state.clone(),
                    winplace_policy::audit::Audit::new(settings),
                    source.events(),
                );
                crate::app::serve(listen, state).await?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Audit(args) => crate::audit_cmd::run(args).await,
            Command::Check(args) => crate::check::run(args),
            Command::Rules(args) => crate::check::rules_command(args),
            Command::DemoSnapshot(args) => crate::demo_snapshot::run(args),
        }
    }
}
