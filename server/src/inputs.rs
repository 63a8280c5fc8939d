//! What the commands read from disk: the settings (`--settings FILE`, `--platform`), the cluster files
//! (`--cluster FILE`: Nodes, RuntimeClasses, infrastructure files) and the manifests (paths, directories
//! walked in a stable order, `-` for standard input). `check`, `serve`, `audit`, `what-if` and the
//! sources read them here, with the same errors (file, line, field), and within the input limit
//! ([`crate::bounded_read`]: standard input, FIFOs and devices included).
//!
//! Also the flags given in seconds ([`parse_seconds`]), read alike by every command and source.

use std::path::{Path, PathBuf};

use clap::Args;
use winplace_rules::input::Limits;
use winplace_rules::platform::Platform;
use winplace_rules::{ClusterContext, Finding, ParseError, Settings};

/// `--settings` and `--platform`: what every command that runs the rules is configured with.
#[derive(Debug, Clone, Default, Args)]
pub struct SettingsArgs {
    /// Settings (YAML or JSON, the policy's settings schema).
    #[arg(long, value_name = "FILE", env = "WINPLACE_SETTINGS")]
    pub settings: Option<PathBuf>,
    /// The platform whose Windows taints and supported builds are assumed where the settings leave
    /// the defaults: generic, eks, aks, gke, openshift (docs/reference/platforms.md §6).
    #[arg(long, value_name = "PLATFORM")]
    pub platform: Option<Platform>,
    /// Take an unrecognized image's pod for Linux when nothing names its OS: offer (and with --fix
    /// apply) the kubernetes.io/os: linux fix on it (setting presumeLinux; off, the finding asks).
    #[arg(long)]
    pub presume_linux: bool,
}

impl SettingsArgs {
    /// The settings file read (the defaults without one), with the platform's presets applied; the
    /// error names the file, line and setting.
    ///
    /// ```
    /// use winplace::inputs::SettingsArgs;
    /// use winplace_rules::platform::Platform;
    /// let args = SettingsArgs { settings: None, platform: Some(Platform::Eks), presume_linux: false };
    /// assert!(args.load().unwrap().windows_taints.is_empty());
    /// ```
    pub fn load(&self) -> Result<Settings, ParseError> {
        let mut settings = match &self.settings {
            Some(path) => load_settings_on(path, self.platform)?,
            None => self
                .platform
                .map_or_else(Settings::default, Settings::for_platform),
        };
        settings.presume_linux |= self.presume_linux;
        Ok(settings)
    }
}

/// The names of the repository's settings file, in the order looked for (as kube-linter looks for
/// `.kube-linter.yaml`, then `.kube-linter.yml`).
pub const SETTINGS_FILES: [&str; 2] = [".winplace.yaml", ".winplace.yml"];

/// The repository's settings file: `.winplace.yaml` (or `.winplace.yml`) in `start` or the nearest
/// directory above it, up to the repository's root (the first directory, from `start` up, holding
/// `.git`: a directory, or a file in a worktree or submodule). Outside a repository only `start` is
/// looked in, as kube-linter looks only in the working directory: a file in some parent of an
/// unrelated directory is not taken. docs/reference/settings-discovery.md.
///
/// ```
/// let repo = tempfile::tempdir().unwrap();
/// std::fs::create_dir_all(repo.path().join(".git")).unwrap();
/// std::fs::create_dir_all(repo.path().join("deploy/win")).unwrap();
/// std::fs::write(repo.path().join(".winplace.yaml"), "mutate: true\n").unwrap();
/// let found = winplace::inputs::discover_settings(&repo.path().join("deploy/win"));
/// assert_eq!(found, Some(repo.path().join(".winplace.yaml")));
/// ```
pub fn discover_settings(start: &Path) -> Option<PathBuf> {
    let root = start.ancestors().find(|dir| dir.join(".git").exists());
    let dirs = start.ancestors().take(match root {
        Some(root) => start.ancestors().take_while(|d| *d != root).count() + 1,
        None => 1,
    });
    for dir in dirs {
        for name in SETTINGS_FILES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

impl SettingsArgs {
    /// The settings file a command that reads the repository's settings (`check`) uses: `--settings`
    /// (or `WINPLACE_SETTINGS`), else the one [`discover_settings`] finds from `start`.
    pub fn file_from(&self, start: &Path) -> Option<PathBuf> {
        self.settings.clone().or_else(|| discover_settings(start))
    }
}

/// An error about a whole file (no line).
pub fn file_error(file: &str, message: String) -> ParseError {
    ParseError {
        file: file.to_string(),
        line: 1,
        column: 1,
        message,
    }
}

/// Reads the settings file: YAML or JSON, decoded and validated; errors name the file, line and setting.
pub fn load_settings(path: &Path) -> Result<Settings, ParseError> {
    load_settings_on(path, None)
}

/// [`load_settings`] with `--platform` in place of the file's `platform` setting (the rules crate's
/// [`Settings::from_text_on`]: the presets fill what the file does not give, as the policy does).
fn load_settings_on(path: &Path, platform: Option<Platform>) -> Result<Settings, ParseError> {
    let name = path.display().to_string();
    let text = read_text(path).map_err(|e| file_error(&name, format!("the settings file: {e}")))?;
    Ok(Settings::from_text_on(&name, &text, platform)?)
}

/// Reads the `--cluster` files (Nodes, RuntimeClasses, infrastructure files) into one context; also
/// returns the findings about the files themselves (node rules on their Nodes and pools). Files that
/// cannot be read or used go to `errors`.
pub fn load_cluster(
    paths: &[PathBuf],
    settings: &Settings,
    errors: &mut Vec<ParseError>,
) -> (Option<ClusterContext>, Vec<Finding>) {
    if paths.is_empty() {
        return (None, Vec::new());
    }
    let mut texts = Vec::new();
    for path in paths {
        let name = path.display().to_string();
        match read_text(path) {
            Ok(t) => texts.push((name, t)),
            Err(e) => errors.push(file_error(&name, e)),
        }
    }
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let read = winplace_rules::infra::read_context(&files);
    let findings = winplace_rules::Checker::builder()
        .settings(settings)
        .build()
        .check_context_files(&read);
    errors.extend(read.errors);
    (Some(read.context), findings)
}

/// [`load_cluster`] for commands that stop on any error: the context, or every error named.
pub fn cluster_or_errors(paths: &[PathBuf], settings: &Settings) -> anyhow::Result<ClusterContext> {
    let mut errors = Vec::new();
    let (context, _findings) = load_cluster(paths, settings, &mut errors);
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
        anyhow::bail!("cannot use the --cluster files:\n{}", list.join("\n"));
    }
    Ok(context.unwrap_or_default())
}

/// The files `paths` name (directories walked for `.yaml`, `.yml`, `.json`; `-` is skipped), and the
/// paths that could not be read.
pub fn expand_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<ParseError>) {
    let (inputs, errors) = expand(paths);
    let files = inputs
        .into_iter()
        .filter_map(|i| match i {
            Input::File(p) => Some(p),
            Input::Stdin => None,
        })
        .collect();
    (files, errors)
}

/// One input to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input (`-`).
    Stdin,
    /// A file.
    File(PathBuf),
}

/// Extensions of manifest files picked up under directories.
const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// Expands `paths`: `-` is standard input, a file is itself (whatever its extension), a directory is
/// every `.yaml`, `.yml` and `.json` file under it, sorted by path, symbolic links followed (to files
/// and to directories; a link loop is an error). Paths that cannot be read are errors, and so is a
/// directory holding no such file: checking nothing must not pass as a clean check.
pub fn expand(paths: &[PathBuf]) -> (Vec<Input>, Vec<ParseError>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    let error = |path: &Path, message: String| ParseError {
        file: path.display().to_string(),
        line: 1,
        column: 1,
        message,
    };
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        match std::fs::metadata(path) {
            Err(e) => errors.push(error(path, format!("cannot read: {e}"))),
            Ok(meta) if meta.is_dir() => {
                let before = inputs.len();
                let walk = walkdir::WalkDir::new(path)
                    .follow_links(true)
                    .sort_by_file_name();
                for entry in walk {
                    match entry {
                        Ok(entry) if entry.file_type().is_file() && is_manifest(entry.path()) => {
                            inputs.push(Input::File(entry.into_path()));
                        }
                        Ok(_) => {}
                        Err(e) => {
                            let at = e.path().unwrap_or(path).to_path_buf();
                            errors.push(error(&at, format!("cannot read: {e}")));
                        }
                    }
                }
                if inputs.len() == before {
                    errors.push(error(
                        path,
                        format!(
                            "no manifest to check: the directory holds no {} file",
                            EXTENSIONS
                                .iter()
                                .map(|e| format!(".{e}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            Ok(_) => inputs.push(Input::File(path.clone())),
        }
    }
    (inputs, errors)
}

/// The most bytes read from one input: the rules' input limit (64 MiB).
pub fn input_cap() -> u64 {
    Limits::default().max_bytes as u64
}

/// Reads a file (a regular file, FIFO or device) as UTF-8 text, within [`input_cap`]; the error says
/// why not.
pub fn read_text(path: &Path) -> Result<String, String> {
    crate::bounded_read::read_text(path, input_cap()).map_err(|e| e.to_string())
}

/// Reads standard input as UTF-8 text, within [`input_cap`].
pub fn read_stdin(stdin: &mut dyn std::io::Read) -> Result<String, String> {
    crate::bounded_read::read_from(stdin, input_cap())
        .and_then(crate::bounded_read::text)
        .map_err(|e| e.to_string())
}

/// A positive number of seconds (fractions allowed).
pub fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= 3600.0) {
        return Err(format!("`{text}`: between 0 and 3600 seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_errors_name_file_line_and_setting() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rows = [
            (
                "supportedBuilds:\n- 10.0.20348\n- banana\n",
                3,
                "supportedBuilds[1]",
            ),
            ("mutate: true\nfrobnicate: 1\n", 2, "frobnicate"),
            ("requireBuildSelector: maybe\n", 1, "requireBuildSelector"),
            ("disabledRules: [no-such-rule]\n", 1, "disabledRules[0]"),
        ];
        for (text, line, needle) in rows {
            let path = dir.path().join("s.yaml");
            std::fs::write(&path, text).expect("write");
            let err = load_settings(&path).expect_err(text);
            assert_eq!(err.file, path.display().to_string());
            assert_eq!(err.line, line, "{text}: {err}");
            assert!(err.message.contains(needle), "{text}: {err}");
        }
        std::fs::write(dir.path().join("ok.json"), "{\"mutate\": true}").expect("write");
        assert!(
            load_settings(&dir.path().join("ok.json"))
                .expect("valid")
                .mutate
        );
    }

    /// `.winplace.yaml` is found from a subdirectory up to the repository's root, the nearest first,
    /// `.yaml` before `.yml`; never above the root, and outside a repository only where the command runs.
    #[test]
    fn the_settings_file_is_found_up_to_the_repository_root() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outer = dir.path();
        let repo = outer.join("repo");
        let deep = repo.join("deploy/windows/prod");
        std::fs::create_dir_all(&deep).expect("mkdir");
        // Above the repository: never taken.
        std::fs::write(outer.join(".winplace.yaml"), "mutate: true\n").expect("write");
        assert_eq!(
            discover_settings(&deep),
            None,
            "no .git: only the start is looked in"
        );
        // A worktree's `.git` is a file.
        std::fs::write(repo.join(".git"), "gitdir: /elsewhere\n").expect("write");
        assert_eq!(
            discover_settings(&deep),
            None,
            "above the root is not looked in"
        );
        std::fs::write(repo.join(".winplace.yml"), "mutate: true\n").expect("write");
        assert_eq!(discover_settings(&deep), Some(repo.join(".winplace.yml")));
        std::fs::write(repo.join(".winplace.yaml"), "mutate: true\n").expect("write");
        assert_eq!(discover_settings(&deep), Some(repo.join(".winplace.yaml")));
        std::fs::write(repo.join("deploy/.winplace.yml"), "mutate: true\n").expect("write");
        assert_eq!(
            discover_settings(&deep),
            Some(repo.join("deploy/.winplace.yml"))
        );
        assert_eq!(discover_settings(&repo), Some(repo.join(".winplace.yaml")));
        // A directory of that name is not a settings file.
        std::fs::create_dir_all(deep.join(".winplace.yaml")).expect("mkdir");
        assert_eq!(
            discover_settings(&deep),
            Some(repo.join("deploy/.winplace.yml"))
        );
        // Outside a repository, the start itself is looked in.
        let lone = outer.join("lone");
        std::fs::create_dir_all(&lone).expect("mkdir");
        std::fs::write(lone.join(".winplace.yaml"), "mutate: true\n").expect("write");
        assert_eq!(discover_settings(&lone), Some(lone.join(".winplace.yaml")));
        // --settings wins over what is found.
        let named = SettingsArgs {
            settings: Some(outer.join("named.yaml")),
            platform: None,
            presume_linux: false,
        };
        assert_eq!(named.file_from(&deep), Some(outer.join("named.yaml")));
        assert_eq!(
            SettingsArgs::default().file_from(&deep),
            Some(repo.join("deploy/.winplace.yml"))
        );
    }

    #[test]
    fn directories_are_walked_in_order_for_manifests_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for name in [
            "b.yaml",
            "a.yml",
            "c.json",
            "d.txt",
            "sub/z.YAML",
            "sub/y.md",
            "A.yaml",
        ] {
            let p = root.join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        let (inputs, errors) =
            expand(&[root.to_path_buf(), PathBuf::from("-"), root.join("d.txt")]);
        assert!(errors.is_empty());
        let names: Vec<String> = inputs
            .iter()
            .map(|i| match i {
                Input::Stdin => "-".to_string(),
                Input::File(p) => p
                    .strip_prefix(root)
                    .map(|r| r.display().to_string())
                    .unwrap_or_default(),
            })
            .collect();
        assert_eq!(
            names,
            [
                "A.yaml",
                "a.yml",
                "b.yaml",
                "c.json",
                "sub/z.YAML",
                "-",
                "d.txt"
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_files_and_directories_are_followed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("sub")).expect("mkdir");
        std::fs::write(real.join("a.yaml"), "").expect("write");
        std::fs::write(real.join("sub/b.yaml"), "").expect("write");
        let checked = dir.path().join("checked");
        std::fs::create_dir(&checked).expect("mkdir");
        std::os::unix::fs::symlink(real.join("a.yaml"), checked.join("a.yaml")).expect("link");
        std::os::unix::fs::symlink(real.join("sub"), checked.join("sub")).expect("link");
        let (inputs, errors) = expand(std::slice::from_ref(&checked));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            inputs,
            [
                Input::File(checked.join("a.yaml")),
                Input::File(checked.join("sub/b.yaml"))
            ]
        );
    }

    #[test]
    fn a_directory_without_manifests_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("notes.txt"), "").expect("write");
        let (inputs, errors) = expand(&[dir.path().to_path_buf()]);
        assert!(inputs.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].file, dir.path().display().to_string());
        assert!(
            errors[0].message.contains("no manifest"),
            "{}",
            errors[0].message
        );
    }

    #[test]
    fn unreadable_paths_are_errors() {
        let (inputs, errors) = expand(&[PathBuf::from("/no/such/dir")]);
        assert!(inputs.is_empty());
        assert_eq!(errors[0].file, "/no/such/dir");
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("bin.yaml");
        std::fs::write(&p, [b'a', 0xff, b'b']).expect("write");
        assert!(read_text(&p).expect_err("binary").contains("offset 1"));
    }

    #[test]
    fn seconds_are_positive_and_bounded() {
        assert_eq!(
            parse_seconds("1.5"),
            Ok(std::time::Duration::from_millis(1500))
        );
        for bad in ["0", "-1", "soon", "99999", "NaN"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
