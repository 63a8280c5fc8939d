//! Which files `winplace check` reads (the paths given, directories walked in a stable order), and
//! reading them within the input limit ([`crate::bounded_read`]).

use std::path::{Path, PathBuf};

use winplace_rules::ParseError;
use winplace_rules::input::Limits;

use super::write::Fingerprint;

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

/// Reads a file like [`read_text`], with the [`Fingerprint`] `--fix` checks before replacing it.
pub fn read_for_fix(path: &Path) -> Result<(String, Fingerprint), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    let text = read_text(path)?;
    let fingerprint = Fingerprint::new(&meta, text.as_bytes());
    Ok((text, fingerprint))
}

/// Reads standard input as UTF-8 text, within [`input_cap`].
pub fn read_stdin(stdin: &mut dyn std::io::Read) -> Result<String, String> {
    crate::bounded_read::read_from(stdin, input_cap())
        .and_then(crate::bounded_read::text)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
