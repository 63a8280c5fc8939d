//! `winplace explain [FILE…]`: the error a person is looking at (`kubectl describe pod`, `kubectl get
//! events` as a table, JSON or YAML, kubelet and containerd logs, a `kubectl apply` error, one pasted
//! line), explained by the rules crate's error signatures ([`winplace_rules::explain`]).
//!
//! Files are streamed line by line (standard input when none is given, or `-`): memory is one line
//! (at most 64 KiB of it is read) and the matches kept, whatever the size of the log. With context
//! (`--cluster` files, `--snapshot`, or the live cluster with `--kubeconfig`/`--context`) the node's
//! build, the image's, and the concrete fix are named. `--settings FILE` (and `--platform`) shape the fix
//! as `check` would: `buildPinning: exact` pins the node's one build with a nodeSelector, and
//! `supportedBuilds` are the builds a `range` pin lists.
//!
//! Exit codes: 0 when something was explained, 1 when nothing was (said plainly), 2 when an input or
//! the context cannot be read.

use std::io::{BufRead, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use serde::Serialize;
use winplace_rules::explain::{Explainer, Match, clean::MAX_LINE};
use winplace_rules::{ClusterContext, Settings};

use crate::inputs::SettingsArgs;
use crate::source::SourceArgs;

/// Arguments of `winplace explain`.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// Files to read (logs, `kubectl describe pod`, `kubectl get events` in any output format, apply
    /// errors); none, or `-`, reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The cluster as context, for the concrete fix: `--cluster` files (Nodes, infrastructure files),
    /// `--snapshot`, or the live cluster (`--kubeconfig`, `--context`). Without any, no context.
    #[command(flatten)]
    pub source: SourceArgs,
    /// The settings the fixes follow (`buildPinning`, `supportedBuilds`), read and validated as `check`
    /// and `audit` read them; with a cluster source, its node pools and taints too.
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub format: ExplainFormat,
}

/// How `winplace explain` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// One paragraph per match.
    Text,
    /// `{"matches": [{cause, sandbox, meaning, objects, rule, fix, source, …}], "lines", "dropped"}`.
    Json,
}

/// One match with the input it came from.
#[derive(Debug, Serialize)]
struct FileMatch {
    file: String,
    #[serde(flatten)]
    explained: Match,
}

/// The JSON answer.
#[derive(Debug, Serialize)]
struct Answer {
    matches: Vec<FileMatch>,
    /// Lines read.
    lines: u64,
    /// Matches beyond the most kept per input, not listed.
    dropped: u64,
}

/// Reads `reader` line by line into `explainer`: at most [`MAX_LINE`] bytes of a line are kept (the
/// rest is skipped up to its end), so a file without newlines costs no more memory than a short one.
pub fn feed(mut reader: impl BufRead, explainer: &mut Explainer<'_>) -> std::io::Result<()> {
    let mut line: Vec<u8> = Vec::with_capacity(1024);
    let mut skipping = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !line.is_empty() || skipping {
                explainer.line(&line);
            }
            return Ok(());
        }
        let (chunk, newline) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        if !skipping {
            let room = MAX_LINE.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            skipping = line.len() >= MAX_LINE;
        }
        let used = chunk.len() + usize::from(newline);
        reader.consume(used);
        if newline {
            explainer.line(&line);
            line.clear();
            skipping = false;
        }
    }
}

/// Whether any context option was given.
fn wants_context(s: &SourceArgs) -> bool {
    !s.cluster.is_empty()
        || s.snapshot.is_some()
        || s.kubeconfig.is_some()
        || s.context.is_some()
        || s.demo
}

/// Runs `winplace explain`.
pub async fn run(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let settings: Settings = args.settings.load()?;
    let context: Option<ClusterContext> = if wants_context(&args.source) {
        Some(crate::commands::context::cluster_context(&args.source, &settings).await?)
    } else {
        None
    };
    let inputs: Vec<Option<PathBuf>> = if args.files.is_empty() {
        vec![None]
    } else {
        args.files
            .iter()
            .map(|p| (p.as_os_str() != "-").then(|| p.clone()))
            .collect()
    };
    let mut answer = Answer {
        matches: Vec::new(),
        lines: 0,
        dropped: 0,
    };
    for input in inputs {
        let mut explainer = Explainer::new(context.as_ref()).with_settings(&settings);
        let name = match &input {
            Some(path) => {
                let name = path.display().to_string();
                // A FIFO without a writer is an error after a wait, not a hang (bounded_read).
                let file =
                    crate::bounded_read::open(path).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
                feed(
                    std::io::BufReader::with_capacity(1 << 16, file),
                    &mut explainer,
                )
                .map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
                name
            }
            None => {
                let stdin = std::io::stdin().lock();
                feed(
                    std::io::BufReader::with_capacity(1 << 16, stdin),
                    &mut explainer,
                )
                .map_err(|e| anyhow::anyhow!("standard input: cannot read: {e}"))?;
                "-".to_string()
            }
        };
        explainer.flush();
        answer.lines += explainer.lines();
        answer.dropped += explainer.dropped();
        answer
            .matches
            .extend(explainer.finish().into_iter().map(|explained| FileMatch {
                file: name.clone(),
                explained,
            }));
    }
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    match args.format {
        ExplainFormat::Json => {
            serde_json::to_writer_pretty(&mut stdout, &answer)?;
            stdout.write_all(b"\n")?;
        }
        ExplainFormat::Text => {
            stdout.write_all(render_text(&answer, context.is_some()).as_bytes())?
        }
    }
    stdout.flush()?;
    Ok(ExitCode::from(if answer.matches.is_empty() {
        1
    } else {
        0
    }))
}

/// The text output: a paragraph per match, or the plain statement that nothing matched.
fn render_text(answer: &Answer, with_context: bool) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    if answer.matches.is_empty() {
        let _ = writeln!(
            out,
            "No Windows placement cause in {} line(s): {} (an OOMKilled container, say, is not).",
            answer.lines,
            winplace_rules::explain::CAUSES_LOOKED_FOR
        );
        return out;
    }
    for m in &answer.matches {
        let e = &m.explained;
        let at = e.line.map(|l| format!(":{l}")).unwrap_or_default();
        let times = if e.count > 1 {
            format!(" (×{})", e.count)
        } else {
            String::new()
        };
        let what = if e.sandbox {
            " [pod sandbox: the pause image]"
        } else {
            ""
        };
        let _ = writeln!(out, "{}{at}: {}{what}{times}", m.file, e.cause);
        let _ = writeln!(out, "  {}", e.meaning);
        let named = e.objects.named();
        if !named.is_empty() {
            let _ = writeln!(out, "  names: {}", named.join("; "));
        }
        match &e.rule {
            Some(rule) => {
                let _ = writeln!(
                    out,
                    "  caught before deployment by: {rule} (winplace check{})",
                    if with_context { "" } else { " --cluster" }
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  caught before deployment by: no manifest rule (the node's configuration)"
                );
            }
        }
        let _ = writeln!(out, "  fix: {}", e.fix);
        let _ = writeln!(out, "  printed by: {}", e.source);
        let _ = writeln!(out);
    }
    if answer.dropped > 0 {
        let _ = writeln!(out, "{} more distinct matches not listed.", answer.dropped);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeding_splits_lines_caps_them_and_reads_a_last_line_without_newline() {
        let mut text =
            b"0/1 nodes are available: 1 node(s) had untolerated taint {os: windows}.\r\n".to_vec();
        text.extend(vec![b'y'; MAX_LINE * 2]);
        text.extend(b"0xc0370101\n");
        text.extend(
            b"no matching manifest for windows/amd64 10.0.17763 in the manifest list entries",
        );
        let mut explainer = Explainer::new(None);
        // A small buffer: lines span many reads.
        feed(
            std::io::BufReader::with_capacity(7, &text[..]),
            &mut explainer,
        )
        .expect("reads");
        assert_eq!(explainer.lines(), 3);
        let causes: Vec<&str> = explainer
            .finish()
            .iter()
            .map(|m| m.cause.as_str())
            .collect();
        assert_eq!(causes, ["untolerated-taint", "no-platform-in-manifest"]);
    }
}
