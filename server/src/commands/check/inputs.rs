//! Which files `winplace check` reads: the paths given, directories walked in a stable order.

use std::path::{Path, PathBuf};

use winplace_rules::ParseError;

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
/// every `.yaml`, `.yml` and `.json` file under it, sorted by path. Paths that cannot be read are errors.
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
                for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
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
            }
            Ok(_) => inputs.push(Input::File(path.clone())),
        }
    }
    (inputs, errors)
}

/// Reads a file as UTF-8 text; the error says why not.
pub fn read_text(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
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
