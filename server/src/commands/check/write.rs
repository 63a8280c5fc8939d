//! Writing repaired files for `--fix`: atomically (a temporary file in the same directory, renamed over
//! the original), through symbolic links, keeping the file's mode and owner, never over a read-only
//! file, and never over a file that changed since it was read ([`Fingerprint`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::Digest as _;

/// What a file was when it was read: its length, modification time and a hash of its contents. The
/// repaired file replaces it only if it is still that, checked just before the rename: an editor or a
/// formatter that saved in the meantime keeps its version.
///
/// The check and the rename are two steps: a write that lands between them (microseconds) is not
/// seen. POSIX offers no "rename if unchanged"; a lock would bind only the writers that take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    len: u64,
    modified: Option<SystemTime>,
    sha256: [u8; 32],
}

impl Fingerprint {
    /// The fingerprint of `contents` read from a file whose metadata, taken before the read, was
    /// `meta` (a write during the read then shows as a changed time).
    pub fn new(meta: &std::fs::Metadata, contents: &[u8]) -> Self {
        Fingerprint {
            len: meta.len(),
            modified: meta.modified().ok(),
            sha256: sha2::Sha256::digest(contents).into(),
        }
    }

    /// Whether the file at `path` is still what was read (its length and time first, then its
    /// contents, read with the input cap).
    fn still_matches(&self, path: &Path) -> Result<bool, WriteError> {
        let meta = std::fs::metadata(path).map_err(io("reading the metadata of", path))?;
        if meta.len() != self.len || meta.modified().ok() != self.modified {
            return Ok(false);
        }
        let cap = self.len.saturating_add(1);
        let now = crate::bounded_read::read_path(path, cap).map_err(|e| WriteError::Io {
            step: "reading again",
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(<[u8; 32]>::from(sha2::Sha256::digest(&now)) == self.sha256)
    }
}

/// Reads a file like [`crate::inputs::read_text`], with the [`Fingerprint`] checked before it is replaced.
pub fn read_for_fix(path: &Path) -> Result<(String, Fingerprint), String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    let text = crate::inputs::read_text(path)?;
    let fingerprint = Fingerprint::new(&meta, text.as_bytes());
    Ok((text, fingerprint))
}

/// Why a repaired file was not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file (or, for a link, its target) is read-only: `--fix` does not override that.
    #[error("not rewritten: {0} is read-only (make it writable to apply the fixes)")]
    ReadOnly(PathBuf),
    /// The file changed after it was read: its new contents are kept.
    #[error(
        "not rewritten: {0} changed while it was being checked, and its new contents are kept (run the check again)"
    )]
    Changed(PathBuf),
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
/// not take a user's file. A read-only file is refused with [`WriteError::ReadOnly`]; a file that is no
/// longer what `read` fingerprinted, with [`WriteError::Changed`].
pub fn atomic(path: &Path, text: &str, read: &Fingerprint) -> Result<(), WriteError> {
    atomic_checked(path, text, read, || {})
}

/// [`atomic`], with `before_check` run after the new contents are written to the temporary file and
/// before the file is compared with what was read: the seam through which tests play the concurrent
/// writer at the worst moment.
pub(crate) fn atomic_checked(
    path: &Path,
    text: &str,
    read: &Fingerprint,
    before_check: impl FnOnce(),
) -> Result<(), WriteError> {
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
    before_check();
    if !read.still_matches(&target)? {
        return Err(WriteError::Changed(target));
    }
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

    /// The fingerprint of `path` as it is now (what `check` takes when it reads the file).
    fn fingerprint(path: &Path) -> Fingerprint {
        let meta = std::fs::metadata(path).expect("meta");
        Fingerprint::new(&meta, &std::fs::read(path).expect("read"))
    }

    #[test]
    fn a_file_changed_after_it_was_read_is_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m.yaml");
        std::fs::write(&path, "old\n").expect("write");
        let read = fingerprint(&path);
        // Another writer replaces the file (as an editor saves: a new file renamed over it) after
        // the repair was computed and written aside, just before it would be renamed over.
        let err = atomic_checked(&path, "repaired\n", &read, || {
            let other = dir.path().join("editor.tmp");
            std::fs::write(&other, "newer\n").expect("write");
            std::fs::rename(&other, &path).expect("rename");
        })
        .expect_err("changed");
        assert!(matches!(err, WriteError::Changed(_)), "{err}");
        assert!(
            err.to_string()
                .contains("changed while it was being checked"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "newer\n");
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .flatten()
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");

        // The same length written in place, the time set back: the contents still tell.
        let read = fingerprint(&path);
        let modified = std::fs::metadata(&path)
            .expect("meta")
            .modified()
            .expect("mtime");
        let err = atomic_checked(&path, "repaired\n", &read, || {
            std::fs::write(&path, "NEWER\n").expect("write");
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(modified).expect("set mtime");
        })
        .expect_err("changed in place");
        assert!(matches!(err, WriteError::Changed(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "NEWER\n");

        // Unchanged: replaced.
        let read = fingerprint(&path);
        atomic(&path, "repaired\n", &read).expect("unchanged file");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "repaired\n");
    }

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
        atomic(&path, "new\n", &fingerprint(&path)).expect("atomic write");
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
        atomic(&link, "new\n", &fingerprint(&link)).expect("write through the link");
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
        let err = atomic(&path, "new\n", &fingerprint(&path)).expect_err("read-only");
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
        atomic(&path, "new\n", &fingerprint(&path)).expect("write");
        let after = std::fs::metadata(&path).expect("meta");
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    }
}
