//! `winplace`: parses the command line, sets up logging and runs the command (see the library crate).

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = winplace::cli::Cli::parse();
    winplace::logging::init(cli.log_format);
    match cli.run().await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("winplace: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}
