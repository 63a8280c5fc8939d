//! `winplace completion SHELL`: the shell's completion script for every command and flag, written by
//! clap_complete from the same definitions the parser uses.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

/// Arguments of `winplace completion`.
#[derive(Debug, Clone, Args)]
pub struct CompletionArgs {
    /// The shell: bash, zsh, fish, powershell or elvish.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the completion script of `cli` (the whole command line) for `args.shell` to `out`.
pub fn write(args: &CompletionArgs, mut cli: clap::Command, out: &mut dyn std::io::Write) {
    let name = cli.get_name().to_string();
    clap_complete::generate(args.shell, &mut cli, name, out);
}

/// Runs `winplace completion`: the script on standard output.
pub fn run(args: CompletionArgs, cli: clap::Command) -> anyhow::Result<ExitCode> {
    write(&args, cli, &mut std::io::stdout().lock());
    Ok(ExitCode::SUCCESS)
}
