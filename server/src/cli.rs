//! Command-line interface.

use clap::{Parser, Subcommand};
use std::net::SocketAddr;
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
    /// Serve the dashboard, the JSON API and policy.wasm.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080", env = "WINPLACE_LISTEN")]
        listen: SocketAddr,
    },
    /// Check manifests (files, directories, `-` for standard input); `--fix` repairs them.
    Check(crate::check::CheckArgs),
    /// List the rules.
    Rules(crate::check::RulesArgs),
}

impl Cli {
    /// Runs the chosen command.
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Serve { listen } => {
                let state = crate::state::AppState::new(crate::source::demo::load()?);
                crate::app::serve(listen, state).await?;
                Ok(ExitCode::SUCCESS)
            }
            Command::Check(args) => crate::check::run(args),
            Command::Rules(args) => crate::check::rules_command(args),
        }
    }
}
