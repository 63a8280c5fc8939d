//! `winplace`: parses the command line, sets up logging and runs the command (see the library crate).

use clap::Parser;

/// mimalloc instead of glibc's malloc: the snapshot reader decodes objects on one thread and the audit
/// drops them on another, and glibc's arenas serialize those frees on a lock (a third of `audit
/// --snapshot`'s time at 150,000 pods went to malloc, free and their futexes).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
