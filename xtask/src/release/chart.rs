//! The Helm chart of the release (`winplace-<version>.tgz`): deploy/chart with the image's and the policy's
//! digests written into its values.yaml, so that the packaged chart pins both by digest, packaged by Helm
//! itself (helm-python-sdk's `package`, Helm v4's library).
//!
//! Helm dates each archive entry with its file's modification time: the copy's files are dated at the
//! release's time first, so that two checkouts of one commit package the same bytes.

use crate::image::Source;
use std::path::{Path, PathBuf};

/// Writes the packaged chart into `output`; returns its file name.
pub fn package(
    output: &Path,
    image_digest: &str,
    policy_digest: &str,
    source: &Source,
) -> Result<String, String> {
    let work = output.join(".chart");
    let _ = std::fs::remove_dir_all(&work);
    let chart = work.join("winplace");
    copy_tree(&crate::util::root().join("deploy/chart"), &chart)?;
    let values = chart.join("values.yaml");
    let text =
        std::fs::read_to_string(&values).map_err(|e| format!("{}: {e}", values.display()))?;
    let text = pin(&text, "\nimage:\n", "\n  digest: \"\"\n", image_digest)?;
    let text = pin(
        &text,
        "\n  module:\n",
        "\n    digest: \"\"\n",
        policy_digest,
    )?;
    std::fs::write(&values, text).map_err(|e| format!("{}: {e}", values.display()))?;
    date_tree(&chart, source.epoch)?;
    let python = crate::setup::python_dir().join("bin/python");
    crate::util::run(
        std::process::Command::new(python)
            .args([
                "-c",
                "import sys, helm_python as helm; helm.package(sys.argv[1], destination=sys.argv[2])",
            ])
            .arg(&chart)
            .arg(output),
    )?;
    std::fs::remove_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let name = format!("winplace-{}.tgz", source.version);
    if !output.join(&name).exists() {
        return Err(format!("helm package wrote no {name}"));
    }
    Ok(name)
}

/// `text` with the first `empty` line after `section` set to `digest`.
fn pin(text: &str, section: &str, empty: &str, digest: &str) -> Result<String, String> {
    let start = text
        .find(section)
        .ok_or_else(|| format!("deploy/chart/values.yaml: no {:?}", section.trim()))?;
    let at = text[start..]
        .find(empty)
        .map(|i| start + i)
        .ok_or_else(|| {
            format!(
                "deploy/chart/values.yaml: no empty digest under {:?}",
                section.trim()
            )
        })?;
    let indent = &empty[..empty.find('d').unwrap_or(1)];
    Ok(format!(
        "{}{indent}digest: \"{digest}\"\n{}",
        &text[..at],
        &text[at + empty.len()..]
    ))
}

/// Copies `from` into `to`, following symbolic links (the chart's exported policies are links to
/// deploy/vap/).
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .is_dir()
        {
            copy_tree(&path, &target)?;
        } else {
            std::fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Sets the modification time of every file under `dir` to `epoch`.
fn date_tree(dir: &Path, epoch: u64) -> Result<(), String> {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(epoch);
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                std::fs::File::options()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_modified(time))
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_go_where_the_values_leave_them_empty() {
        let values = "image:\n  repository: r\n  digest: \"\"\nkubewarden:\n  module:\n    repository: m\n    digest: \"\"\n";
        let text = pin(
            &format!("\n{values}"),
            "\nimage:\n",
            "\n  digest: \"\"\n",
            "sha256:aa",
        )
        .expect("image");
        let text =
            pin(&text, "\n  module:\n", "\n    digest: \"\"\n", "sha256:bb").expect("module");
        assert_eq!(
            text,
            "\nimage:\n  repository: r\n  digest: \"sha256:aa\"\nkubewarden:\n  module:\n    repository: m\n    digest: \"sha256:bb\"\n"
        );
        assert!(
            pin(
                "\nimage:\n  digest: \"sha256:aa\"\n",
                "\nimage:\n",
                "\n  digest: \"\"\n",
                "x"
            )
            .is_err()
        );
    }
}
