//! `--format F [--output FILE]`, repeatable: the reports one run of `winplace check` writes, and where.
//!
//! Each `--output` names the file of the `--format` just before it (`--format sarif --output out.sarif
//! --format text`: SARIF to the file, text to standard output), so that a pipeline gets its SARIF, JUnit
//! or Code Quality file and readable text in the log from one run. At most one report goes to standard
//! output. The pairing needs the arguments' positions, which clap keeps in its matches
//! (`ArgMatches::indices_of`): hence an `Args` implementation of its own.

use std::path::{Path, PathBuf};

use clap::builder::PathBufValueParser;
use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};

use super::output::Format;

/// One report: its format and its file (`None`: standard output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportTarget {
    /// The format.
    pub format: Format,
    /// Where it goes; `None` (or `-`) is standard output.
    pub output: Option<PathBuf>,
}

/// The reports of a run, in the order given (text to standard output when none is asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reports(pub Vec<ReportTarget>);

impl Default for Reports {
    fn default() -> Self {
        Reports(vec![ReportTarget {
            format: Format::Text,
            output: None,
        }])
    }
}

impl Reports {
    /// One report of `format` to standard output.
    pub fn to_stdout(format: Format) -> Self {
        Reports(vec![ReportTarget {
            format,
            output: None,
        }])
    }

    /// Pairs formats and outputs by position: an output belongs to the nearest format before it.
    /// `formats` and `outputs` are (position, value) in any order.
    pub fn pair(
        mut formats: Vec<(usize, Format)>,
        mut outputs: Vec<(usize, PathBuf)>,
    ) -> Result<Self, String> {
        if formats.is_empty() {
            if let Some((_, path)) = outputs.first() {
                // `--output FILE` alone: the default text report, to that file.
                if outputs.len() > 1 {
                    return Err("--output is given more than once for one report: give a --format before each --output".into());
                }
                formats.push((0, Format::Text));
                outputs = vec![(1, path.clone())];
            } else {
                return Ok(Reports::default());
            }
        }
        formats.sort_by_key(|f| f.0);
        outputs.sort_by_key(|o| o.0);
        let mut reports: Vec<ReportTarget> = formats
            .iter()
            .map(|(_, format)| ReportTarget {
                format: *format,
                output: None,
            })
            .collect();
        for (at, path) in outputs {
            let Some(owner) = formats.iter().rposition(|(f, _)| *f < at) else {
                return Err(format!(
                    "--output {} comes before any --format: write --format FORMAT --output FILE",
                    path.display()
                ));
            };
            let report = &mut reports[owner];
            if report.output.is_some() {
                return Err(format!(
                    "two --output files for one --format {}: give each --output its own --format",
                    report.format.name()
                ));
            }
            report.output = Some(path);
        }
        let to_stdout = reports.iter().filter(|r| r.is_stdout()).count();
        if to_stdout > 1 {
            return Err(format!(
                "{to_stdout} reports would go to standard output: give all of them but one an --output FILE"
            ));
        }
        let files: Vec<&Path> = reports.iter().filter_map(|r| r.file()).collect();
        for (i, file) in files.iter().enumerate() {
            if files[..i].contains(file) {
                return Err(format!(
                    "--output {} is given for two reports",
                    file.display()
                ));
            }
        }
        Ok(Reports(reports))
    }
}

impl ReportTarget {
    /// Whether it goes to standard output (no `--output`, or `--output -`).
    pub fn is_stdout(&self) -> bool {
        self.file().is_none()
    }

    /// Its file, unless it goes to standard output.
    pub fn file(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| p.as_os_str() != "-")
    }
}

impl Format {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Codequality => "codequality",
        }
    }
}

const FORMAT: &str = "format";
const OUTPUT: &str = "output";

impl FromArgMatches for Reports {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let formats: Vec<(usize, Format)> = match (
            matches.indices_of(FORMAT),
            matches.get_many::<Format>(FORMAT),
        ) {
            (Some(at), Some(values)) => at.zip(values.copied()).collect(),
            _ => Vec::new(),
        };
        let outputs: Vec<(usize, PathBuf)> = match (
            matches.indices_of(OUTPUT),
            matches.get_many::<PathBuf>(OUTPUT),
        ) {
            (Some(at), Some(values)) => at.zip(values.cloned()).collect(),
            _ => Vec::new(),
        };
        Reports::pair(formats, outputs)
            .map_err(|e| clap::Error::raw(ErrorKind::ArgumentConflict, format!("{e}\n")))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for Reports {
    fn augment_args(cmd: Command) -> Command {
        cmd.arg(
            Arg::new(FORMAT)
                .long(FORMAT)
                .value_name("FORMAT")
                .value_parser(clap::value_parser!(Format))
                .action(ArgAction::Append)
                .help("Report format; repeatable, each with its own --output [default: text]")
                .long_help(
                    "Report format: text, json, sarif, junit or codequality. Repeatable: each --format \
                     may be followed by --output FILE, where its report goes; the one without an \
                     --output goes to standard output (at most one may). Default: text.",
                ),
        )
        .arg(
            Arg::new(OUTPUT)
                .long(OUTPUT)
                .short('o')
                .value_name("FILE")
                .value_parser(PathBufValueParser::new())
                .action(ArgAction::Append)
                .help("Write the report of the --format before it to FILE (`-`: standard output)"),
        )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        reports: Reports,
    }

    fn parse(args: &[&str]) -> Result<Vec<(Format, Option<String>)>, String> {
        let cli = Cli::try_parse_from(std::iter::once("check").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        Ok(cli
            .reports
            .0
            .into_iter()
            .map(|r| (r.format, r.output.map(|p| p.display().to_string())))
            .collect())
    }

    #[test]
    fn each_output_belongs_to_the_format_before_it() {
        // The flags given, and the reports they ask for (format, output file).
        type Row<'a> = (&'a [&'a str], Vec<(Format, Option<&'a str>)>);
        let rows: [Row; 5] = [
            (&[], vec![(Format::Text, None)]),
            (&["--format", "json"], vec![(Format::Json, None)]),
            (
                &[
                    "--format",
                    "sarif",
                    "--output",
                    "out.sarif",
                    "--format",
                    "text",
                ],
                vec![(Format::Sarif, Some("out.sarif")), (Format::Text, None)],
            ),
            (
                &[
                    "--format=junit",
                    "-o",
                    "j.xml",
                    "--format",
                    "codequality",
                    "--output",
                    "cq.json",
                    "--format",
                    "text",
                    "--output",
                    "-",
                ],
                vec![
                    (Format::Junit, Some("j.xml")),
                    (Format::Codequality, Some("cq.json")),
                    (Format::Text, Some("-")),
                ],
            ),
            (
                &["--output", "report.txt"],
                vec![(Format::Text, Some("report.txt"))],
            ),
        ];
        for (args, want) in rows {
            let want: Vec<(Format, Option<String>)> = want
                .into_iter()
                .map(|(f, o)| (f, o.map(String::from)))
                .collect();
            assert_eq!(parse(args), Ok(want), "{args:?}");
        }
    }

    #[test]
    fn ambiguous_pairings_are_usage_errors() {
        let rows: [(&[&str], &str); 5] = [
            (&["--format", "json", "--format", "text"], "standard output"),
            (
                &["--output", "a", "--format", "json"],
                "comes before any --format",
            ),
            (
                &["--format", "json", "--output", "a", "--output", "b"],
                "two --output files",
            ),
            (
                &[
                    "--format", "json", "--output", "a", "--format", "sarif", "--output", "a",
                ],
                "given for two reports",
            ),
            (&["--format", "yaml"], "invalid value"),
        ];
        for (args, needle) in rows {
            let err = parse(args).expect_err(needle);
            assert!(err.contains(needle), "{args:?}: {err}");
        }
    }
}
