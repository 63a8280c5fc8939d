//! `winplace man`: the man pages, rendered by clap_mangen from the same definitions the parser uses:
//! `winplace.1` on standard output, or with `--dir DIR` one page per command (`winplace.1`,
//! `winplace-check.1`, …), which `cargo xtask man` writes for packaging.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

/// Arguments of `winplace man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write every page (`winplace.1` and one per command) into this directory instead of printing
    /// `winplace.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `winplace man`.
pub fn run(args: ManArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cli, &dir)
                .with_context(|| format!("cannot write the man pages to {}", dir.display()))?;
        }
        None => clap_mangen::Man::new(cli).render(&mut std::io::stdout().lock())?,
    }
    Ok(ExitCode::SUCCESS)
}
