//! `winplace export`: the rules as admission policies the API server runs itself
//! (docs/reference/admission-policies.md). The documents come from the rules crate
//! ([`winplace_rules::export`]); this module reads the settings and writes them out.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use winplace_rules::export::{self, Document, Naming, Status};

use crate::inputs::SettingsArgs;

/// Arguments of `winplace export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// What to write: `vap` (ValidatingAdmissionPolicies and their bindings) or `map`
    /// (MutatingAdmissionPolicies that apply the fixes needing no network, and their bindings).
    #[arg(long, value_enum, default_value_t = ExportFormat::Vap)]
    pub format: ExportFormat,
    /// Write one file per object into DIR, named for kube-apiserver's static manifests directory
    /// (KEP-5793: object names end in `.static.k8s.io`), instead of a YAML stream on standard output.
    #[arg(long = "static", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,
    /// List every rule: exported (with the binding's action) or not, and why; write nothing else.
    #[arg(long)]
    pub list: bool,
    /// Settings and platform, as `winplace check` takes them.
    #[command(flatten)]
    pub settings: SettingsArgs,
}

/// What `winplace export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// ValidatingAdmissionPolicies and ValidatingAdmissionPolicyBindings.
    Vap,
    /// MutatingAdmissionPolicies and MutatingAdmissionPolicyBindings.
    Map,
}

/// The `--list` table: rule, whether exported (and the binding's action), or why not.
pub fn list_text(statuses: &[(winplace_rules::catalog::RuleId, Status)]) -> String {
    let width = statuses
        .iter()
        .map(|(r, _)| r.as_str().len())
        .max()
        .unwrap_or(0);
    let mut out = format!("{:width$}  EXPORTED  WHY NOT\n", "RULE");
    for (rule, status) in statuses {
        let _ = match status {
            Status::Exported(action) => writeln!(out, "{:width$}  {action}", rule.as_str()),
            Status::Disabled => writeln!(
                out,
                "{:width$}  {:8}  disabled by the settings (disabledRules)",
                rule.as_str(),
                "no"
            ),
            Status::NotExported(why) => {
                writeln!(out, "{:width$}  {:8}  {why}", rule.as_str(), "no")
            }
        };
    }
    out
}

/// The `--list` line about `--format map`: the rules whose fixes are exported as MutatingAdmissionPolicies
/// under these settings, and how they pin the build (`buildPinning`, `runtimeClasses`).
pub fn fixes_text(settings: &winplace_rules::Settings) -> String {
    let docs = export::mutating(settings, Naming::Cluster);
    let mut rules: Vec<&str> = docs.iter().map(|d| d.rule.as_str()).collect();
    rules.dedup();
    if rules.is_empty() {
        return "\nFixes (--format map): none (every fix's rule is disabled)\n".to_string();
    }
    let mut pin = match settings.build_pinning {
        winplace_rules::settings::BuildPinning::Range => {
            "the build pin is the range of supported builds that run the images (buildPinning: range)"
                .to_string()
        }
        winplace_rules::settings::BuildPinning::Exact => {
            "the build pin is the nodeSelector of the newest supported build the images were built for (buildPinning: exact)"
                .to_string()
        }
    };
    if !settings.runtime_classes.is_empty() {
        pin.push_str(
            ", or the runtimeClassName the settings' runtimeClasses map that build to (runtimeClasses)",
        );
    }
    format!(
        "\nFixes (--format map, MutatingAdmissionPolicies): {}; {pin}\n",
        rules.join(", ")
    )
}

/// The file of one rule in a static manifests directory: `<rule-id>.winplace.static.k8s.io.yaml`, its
/// policy and its binding (loaded together; kube-apiserver reads every `.yaml`, `.yml` and `.json` file
/// directly in the directory, several documents per file).
pub fn static_file_name(rule: winplace_rules::catalog::RuleId) -> String {
    format!("{}.yaml", Naming::Static.name(rule))
}

/// The suffix of the files [`write_static`] writes (and removes when their rule is no longer exported).
const STATIC_SUFFIX: &str = ".winplace.static.k8s.io.yaml";

/// Writes every rule's documents into `dir` (created when missing), one file per rule, each written to
/// a temporary file and renamed into place (the API server reloads the directory when it changes, and
/// must never read a half-written file); removes the files of rules no longer exported. Returns the
/// files written.
pub fn write_static(dir: &Path, documents: &[Document]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    let mut files: Vec<(String, String)> = Vec::new();
    for doc in documents {
        let name = static_file_name(doc.rule);
        let text = format!("---\n{}", export::yaml::to_yaml(&doc.value));
        match files.iter_mut().find(|(n, _)| *n == name) {
            Some((_, body)) => body.push_str(&text),
            None => files.push((
                name,
                format!("# Generated by `winplace export --static`: do not edit; regenerate instead.\n{text}"),
            )),
        }
    }
    let mut written = Vec::new();
    for (name, text) in &files {
        let path = dir.join(name);
        let temporary = dir.join(format!(".{name}.tmp"));
        std::fs::write(&temporary, text)
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, &path).with_context(|| {
            format!(
                "cannot rename {} to {}",
                temporary.display(),
                path.display()
            )
        })?;
        written.push(path);
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(STATIC_SUFFIX) && !files.iter().any(|(n, _)| n == name) {
            std::fs::remove_file(&path)
                .with_context(|| format!("cannot remove the stale {}", path.display()))?;
        }
    }
    Ok(written)
}

/// Runs `winplace export`.
pub fn run(args: ExportArgs) -> anyhow::Result<ExitCode> {
    let settings = match args.settings.load() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("winplace export: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut stdout = std::io::stdout().lock();
    if args.list {
        stdout.write_all(list_text(&export::listing(&settings)).as_bytes())?;
        stdout.write_all(fixes_text(&settings).as_bytes())?;
        stdout.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let naming = if args.static_dir.is_some() {
        Naming::Static
    } else {
        Naming::Cluster
    };
    let documents = match args.format {
        ExportFormat::Vap => export::validating(&settings, naming),
        ExportFormat::Map => export::mutating(&settings, naming),
    };
    match &args.static_dir {
        Some(dir) => {
            for path in write_static(dir, &documents)? {
                writeln!(stdout, "{}", path.display())?;
            }
        }
        None => stdout.write_all(export::to_yaml_stream(&documents).as_bytes())?,
    }
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::Settings;

    #[test]
    fn the_list_names_every_rule_and_why_not() {
        let text = list_text(&export::listing(&Settings::default()));
        assert_eq!(
            text.lines().count(),
            winplace_rules::catalog::RuleId::ALL.len() + 1
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("windows-pod-without-os-selector ") && l.ends_with(" Deny")),
            "{text}"
        );
        assert!(text.contains("needs a registry"), "{text}");
    }

    #[test]
    fn the_list_says_which_fixes_are_exported_and_how_they_pin() {
        let text = fixes_text(&Settings::default());
        assert!(
            text.contains("windows-pod-without-build-selector"),
            "{text}"
        );
        let exact = Settings {
            build_pinning: winplace_rules::settings::BuildPinning::Exact,
            ..Settings::default()
        };
        let text = fixes_text(&exact);
        assert!(
            text.contains("windows-pod-without-build-selector")
                && text.contains("(buildPinning: exact)"),
            "{text}"
        );
        let classes = Settings {
            runtime_classes: [("10.0.20348".to_string(), "windows-2022".to_string())].into(),
            ..Settings::default()
        };
        let text = fixes_text(&classes);
        assert!(
            text.contains("windows-pod-without-os-selector") && text.contains("(runtimeClasses)"),
            "{text}"
        );
        let none = Settings {
            disabled_rules: [
                "windows-pod-without-os-selector",
                "windows-pod-without-toleration",
                "windows-pod-without-build-selector",
                "linux-pod-without-os-selector",
            ]
            .map(String::from)
            .to_vec(),
            ..Settings::default()
        };
        let text = fixes_text(&none);
        assert!(
            text.contains("none (every fix's rule is disabled)"),
            "{text}"
        );
    }

    #[test]
    fn static_files_are_one_per_object() {
        let dir = std::env::temp_dir().join(format!("winplace-export-{}", std::process::id()));
        let docs = export::validating(&Settings::default(), Naming::Static);
        let written = write_static(&dir, &docs).expect("written");
        assert_eq!(written.len() * 2, docs.len());
        let file = dir.join("os-conflict.winplace.static.k8s.io.yaml");
        let text = std::fs::read_to_string(&file).expect("os-conflict's file");
        assert!(
            text.contains("kind: \"ValidatingAdmissionPolicy\"\n"),
            "{text}"
        );
        assert!(
            text.contains("policyName: \"os-conflict.winplace.static.k8s.io\""),
            "{text}"
        );
        // A rule the settings now disable loses its file; other files in the directory stay.
        std::fs::write(dir.join("other.yaml"), "kept").expect("write");
        let settings = Settings {
            disabled_rules: vec!["os-conflict".into()],
            ..Settings::default()
        };
        write_static(&dir, &export::validating(&settings, Naming::Static)).expect("written");
        assert!(!file.exists());
        assert!(dir.join("other.yaml").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
