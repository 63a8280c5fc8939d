//! Command-line interface.

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// Keeps Windows and Linux workloads on the right nodes of mixed Kubernetes clusters.
#[derive(Debug, Parser)]
#[command(name = "winplace", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Log format on standard error: `text` (coloured only on a terminal) or `json` (one object per
    /// line, for log collectors).
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t,
        env = "WINPLACE_LOG_FORMAT"
    )]
    pub log_format: crate::logging::LogFormat,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the dashboard, the JSON API, the live event stream and policy.wasm.
    ///
    /// The cluster comes from --snapshot, --kubeconfig/--context, the in-cluster service account or the
    /// default kubeconfig; when none is reachable, the embedded demo cluster is served (marked as demo
    /// data in every API answer).
    // Boxed: its flags outweigh every other command's.
    Serve(Box<crate::commands::serve::ServeArgs>),
    /// Audit a cluster once and print the report (exit 1 when it has errors).
    Audit(crate::commands::audit::AuditArgs),
    /// Check manifests (files, directories, `-` for standard input); `--fix` repairs them.
    Check(crate::commands::check::CheckArgs),
    /// Explain an error message (describe output, events, kubelet or containerd logs, apply errors;
    /// files or standard input): its cause, the objects it names, the rule that would have caught it,
    /// and the fix (concrete with --cluster, --snapshot or the live cluster). Exit 1 when nothing is
    /// explained.
    Explain(crate::commands::explain::ExplainArgs),
    /// Write the rules that need neither the cluster nor a registry as admission policies the API
    /// server runs itself (ValidatingAdmissionPolicies; docs/reference/admission-policies.md).
    Export(crate::commands::export::ExportArgs),
    /// List the rules.
    Rules(crate::commands::rules::RulesArgs),
    /// Plan a change to the cluster (remove Windows builds or pools, add pools) and report which
    /// workloads break or get fixed, and what makes them fit (exit 1 when something breaks).
    WhatIf(crate::commands::what_if::WhatIfArgs),
    /// Write a synthetic cluster as `kubectl get -o json` would (for demos and scale tests).
    DemoSnapshot(crate::commands::demo_snapshot::DemoSnapshotArgs),
    /// Print the shell completion script (bash, zsh, fish, powershell, elvish): for example
    /// `winplace completion bash > /etc/bash_completion.d/winplace`.
    Completion(crate::commands::completion::CompletionArgs),
    /// Print the man page (`winplace man | man -l -`), or write every page into a directory.
    Man(crate::commands::man::ManArgs),
}

impl Cli {
    /// Whether the command is `serve`: it runs until stopped (the others run once and exit).
    pub fn serves(&self) -> bool {
        matches!(self.command, Command::Serve(_))
    }

    /// Runs the chosen command.
    pub async fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Serve(args) => crate::commands::serve::run(*args).await,
            Command::Audit(args) => crate::commands::audit::run(args).await,
            Command::Check(args) => crate::commands::check::run(args),
            Command::Rules(args) => crate::commands::rules::run(args),
            Command::Export(args) => crate::commands::export::run(args),
            Command::Explain(args) => crate::commands::explain::run(args).await,
            Command::WhatIf(args) => crate::commands::what_if::run(args).await,
            Command::DemoSnapshot(args) => crate::commands::demo_snapshot::run(args),
            Command::Completion(args) => crate::commands::completion::run(args, Cli::command()),
            Command::Man(args) => crate::commands::man::run(args, Cli::command()),
        }
    }
}
