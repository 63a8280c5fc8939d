//! `winplace`: the server (dashboard, API, policy download) and the command-line checks.

mod app;
mod assets;
mod audit_cmd;
mod check;
mod cli;
mod demo_snapshot;
mod metrics;
mod routes;
mod source;
mod state;
#[cfg(test)]
mod tests;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "winplace=info,tower_http=info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match cli.run().await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("winplace: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}
