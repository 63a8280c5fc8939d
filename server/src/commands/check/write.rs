//! Writing repaired files for `--fix`: atomically (a temporary file in the same directory, renamed over
//! the original), through symbolic links, keeping the file's mode and owner, never over a read-only
//! file.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Why a repaired file was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file (or, for a link, its target) is read-only: `--fix` does not override that.
    #[error("not rewritten: {0} is read-only (make it writable to apply the fixes)")]
    ReadOnly(PathBuf),
    /// A step of the write failed; the original file is unchanged.
    #[error("cannot write the repaired file ({step} {path}): {source}")]
    Io {
        /// What was being done.
        step: &'static str,
        /// The file it was done to.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

fn io(step: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + use<> {
    let path = path.to_path_buf();
    move |source| WriteError::Io { step, path, source }
}

/// Replaces the contents of `path` with `text` atomically: readers see the old file or the new one,
/// never half of it.
///
/// A symbolic link is followed: its target is rewritten and the link stays a link. The new file gets
/// the old one's permissions and (on Unix, when allowed) its owner and group, so running as root does
/// not take a user's file. A read-only file is refused with [`WriteError::ReadOnly`].
pub fn atomic(path: &Path, text: &str) -> Result<(), WriteError> {
    let target = std::fs::canonicalize(path).map_err(io("resolving", path))?;
    let meta = std::fs::metadata(&target).map_err(io("reading the metadata of", &target))?;
    if meta.permissions().readonly() {
        return Err(WriteError::ReadOnly(target));
    }
    let dir = target.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".winplace-fix-")
        .tempfile_in(dir)
        .map_err(io("creating a temporary file in", dir))?;
    let tmp_path = tmp.path().to_path_buf();
    tmp.write_all(text.as_bytes())
        .map_err(io("writing", &tmp_path))?;
    tmp.as_file().sync_all().map_err(io("syncing", &tmp_path))?;
    tmp.as_file()
        .set_permissions(meta.permissions())
        .map_err(io("setting the permissions of", &tmp_path))?;
    #[cfg(unix)]
    keep_owner(&tmp_path, &meta)?;
    tmp.persist(&target)
        .map_err(|e| io("renaming over", &target)(e.error))?;
    Ok(())
}

/// Gives the new file the old one's owner and group when they differ from the creator's (only root
/// can; anyone else already owns what they create, so a failure there is not an error).
#[cfg(unix)]
fn keep_owner(tmp: &Path, old: &std::fs::Metadata) -> Result<(), WriteError> {
    use std::os::unix::fs::MetadataExt as _;
    let new = std::fs::metadata(tmp).map_err(io("reading the metadata of", tmp))?;
    if new.uid() == old.uid() && new.gid() == old.gid() {
        return Ok(());
    }
    match std::os::unix::fs::chown(tmp, Some(old.uid()), Some(old.gid())) {
        Ok(()) => Ok(()),
        // Not root: the group may still be one we cannot give; the owner is ours either way.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && new.uid() == old.uid() => {
            Ok(())
        }
        Err(e) => Err(io("keeping the owner of", tmp)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_contents_and_keeps_permissions() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "old\n").expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        }
        atomic(&path, "new\n").expect("atomic write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "new\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o640);
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_stays_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("real");
        std::fs::create_dir(&real).expect("mkdir");
        let target = real.join("m.yaml");
        std::fs::write(&target, "old\n").expect("write");
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        atomic(&link, "new\n").expect("write through the link");
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("meta")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "new\n");
    }

    #[cfg(unix)]
    #[test]
    fn read_only_files_are_refused_and_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "old\n").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        let err = atomic(&path, "new\n").expect_err("read-only");
        assert!(matches!(err, WriteError::ReadOnly(_)), "{err}");
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old\n");
    }

    #[cfg(unix)]
    #[test]
    fn owner_and_group_are_kept() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "old\n").expect("write");
        // As root, the file is handed to `nobody` first (what `sudo winplace check --fix` meets); as
        // anyone else the chown fails and the owner, already the writer's, must stay so.
        let _ = std::os::unix::fs::chown(&path, Some(65534), Some(65534));
        let before = std::fs::metadata(&path).expect("meta");
        atomic(&path, "new\n").expect("write");
        let after = std::fs::metadata(&path).expect("meta");
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }
}
