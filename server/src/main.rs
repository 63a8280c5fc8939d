//! `winplace`: parses the command line, sets up logging and runs the command (see the library crate).

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = winplace::cli::Cli::parse();
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
