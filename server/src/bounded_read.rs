//! Reading any input with a byte cap, whatever it is: a regular file, standard input, a FIFO, a device
//! (`/dev/zero`), a process substitution (`<(cmd)`). Every file the commands read (manifests, `--cluster`
//! and `--settings` files, snapshots, the registry config, the image cache) goes through here, so none
//! can make winplace read without end.
//!
//! * A regular file larger than the cap is refused from its size, before a byte is read.
//! * Anything else is read until the cap and refused once it goes past it: at most `cap + 1` bytes are
//!   ever held.
//! * A FIFO is opened without blocking and waited on for at most a set time ([`FIFO_WRITER_WAIT`]) until
//!   a process opens it for writing: a FIFO that nobody writes to is an error, not a hang. (Linux lets a
//!   reader open a FIFO with `O_NONBLOCK` before any writer and reports neither data nor hang-up to
//!   `poll` until a writer has come: docs/reference/limits.md §5.) Once a writer came, the FIFO is read
//!   like a pipe, to its end.
//! * A directory is an error (the commands walk directories themselves).
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("a.yaml");
//! std::fs::write(&path, "kind: Pod\n").unwrap();
//! assert_eq!(winplace::bounded_read::read_path(&path, 100).unwrap(), b"kind: Pod\n");
//! let error = winplace::bounded_read::read_path(&path, 4).unwrap_err();
//! assert!(error.to_string().contains("larger than"));
//! ```

use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// How long a FIFO is waited on for a writer before it is an error.
pub const FIFO_WRITER_WAIT: Duration = Duration::from_secs(10);

/// Why an input could not be read. The text is a clause that follows the file's name.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The operating system refused (missing file, permissions, a directory, …).
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// The input is larger than the cap.
    #[error("larger than the {} limit{}: refused", size_words(*.limit), .size.map(|s| format!(" ({} bytes)", s)).unwrap_or_else(|| " (read stopped there)".into()))]
    TooLarge {
        /// The cap, in bytes.
        limit: u64,
        /// The size, when the file said it (a regular file).
        size: Option<u64>,
    },
    /// A FIFO that no process opened for writing within the wait.
    #[error("a FIFO that no process opened for writing within {0:?}: nothing to read")]
    NoWriter(Duration),
    /// Bytes that are not UTF-8 text.
    #[error("not UTF-8 text (invalid byte at offset {0})")]
    NotText(usize),
}

/// `67108864` → `64 MiB`; other sizes in bytes.
fn size_words(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes}-byte")
    }
}

/// The bytes of `path` (symbolic links followed), at most `cap`; a FIFO waits [`FIFO_WRITER_WAIT`] for
/// a writer.
pub fn read_path(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    read_path_waiting(path, cap, FIFO_WRITER_WAIT)
}

/// [`read_path`] with the FIFO wait given (tests use a short one).
pub fn read_path_waiting(path: &Path, cap: u64, fifo_wait: Duration) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() && meta.len() > cap {
        return Err(ReadError::TooLarge {
            limit: cap,
            size: Some(meta.len()),
        });
    }
    read_from(open_meta(path, &meta, fifo_wait)?, cap)
}

/// Opens `path` for a reader that streams it (`explain` reads logs line by line, so it has no total
/// cap): a directory is an error, a FIFO is waited on at most [`FIFO_WRITER_WAIT`] for a writer.
pub fn open(path: &Path) -> Result<std::fs::File, ReadError> {
    open_meta(path, &std::fs::metadata(path)?, FIFO_WRITER_WAIT)
}

fn open_meta(
    path: &Path,
    meta: &std::fs::Metadata,
    fifo_wait: Duration,
) -> Result<std::fs::File, ReadError> {
    if meta.is_dir() {
        return Err(ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if meta.file_type().is_fifo() {
            return fifo::open(path, fifo_wait);
        }
    }
    let _ = fifo_wait;
    Ok(std::fs::File::open(path)?)
}

/// The bytes of `reader` (standard input, a pipe), at most `cap`: at most `cap + 1` are read.
pub fn read_from(reader: impl Read, cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge {
            limit: cap,
            size: None,
        });
    }
    Ok(bytes)
}

/// `bytes` as UTF-8 text.
pub fn text(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| ReadError::NotText(e.utf8_error().valid_up_to()))
}

/// [`read_path`] as UTF-8 text.
pub fn read_text(path: &Path, cap: u64) -> Result<String, ReadError> {
    text(read_path(path, cap)?)
}

#[cfg(unix)]
mod fifo {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use rustix::event::{PollFd, PollFlags, poll};
    use rustix::fs::{Mode, OFlags, fcntl_getfl, fcntl_setfl, open as open_fd};

    use super::ReadError;

    /// Opens the FIFO at `path` for reading without blocking, waits at most `wait` for a writer (data
    /// or a hang-up), then makes it blocking again so that it is read to its end like a pipe.
    pub(super) fn open(path: &Path, wait: Duration) -> Result<std::fs::File, ReadError> {
        let fd = open_fd(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(std::io::Error::from)?;
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(ReadError::NoWriter(wait));
            }
            let timeout =
                rustix::event::Timespec::try_from(left).map_err(|_| ReadError::NoWriter(wait))?;
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => continue,
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(std::io::Error::from(e).into()),
            }
        }
        let flags = fcntl_getfl(&fd).map_err(std::io::Error::from)?;
        fcntl_setfl(&fd, flags - OFlags::NONBLOCK).map_err(std::io::Error::from)?;
        Ok(std::fs::File::from(fd))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_over_the_cap_are_refused_by_their_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.yaml");
        std::fs::write(&path, vec![b'a'; 2048]).expect("write");
        assert_eq!(read_path(&path, 2048).expect("at the cap").len(), 2048);
        let error = read_path(&path, 2047).expect_err("over");
        assert!(
            matches!(
                error,
                ReadError::TooLarge {
                    limit: 2047,
                    size: Some(2048)
                }
            ),
            "{error}"
        );
        assert!(read_path(dir.path(), 10).is_err(), "a directory");
    }

    #[test]
    fn streams_are_cut_at_the_cap() {
        // An endless stream (what `check - < /dev/zero` is): refused after cap + 1 bytes.
        let error = read_from(std::io::repeat(0), 1000).expect_err("endless");
        assert!(
            matches!(
                error,
                ReadError::TooLarge {
                    limit: 1000,
                    size: None
                }
            ),
            "{error}"
        );
        assert_eq!(read_from(&b"abc"[..], 3).expect("fits"), b"abc");
        assert_eq!(
            ReadError::TooLarge {
                limit: 64 * 1024 * 1024,
                size: None
            }
            .to_string(),
            "larger than the 64 MiB limit (read stopped there): refused"
        );
        assert!(matches!(text(vec![b'a', 0xff]), Err(ReadError::NotText(1))));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_are_read_to_the_cap_only() {
        let error = read_path(Path::new("/dev/zero"), 4096).expect_err("endless device");
        assert!(
            matches!(error, ReadError::TooLarge { size: None, .. }),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_is_an_error_and_with_one_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("in.fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &path, Mode::from_raw_mode(0o600)).expect("mkfifo");
        // Nobody writes: an error after the (short) wait, not a hang.
        let error =
            read_path_waiting(&path, 100, Duration::from_millis(50)).expect_err("no writer");
        assert!(matches!(error, ReadError::NoWriter(_)), "{error}");
        // A writer that comes: read to its end.
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || std::fs::write(writer_path, b"kind: Pod\n"));
        let read = read_path_waiting(&path, 100, Duration::from_secs(20)).expect("written");
        writer.join().expect("thread").expect("write");
        assert_eq!(read, b"kind: Pod\n");
        // A writer that sends more than the cap.
        let writer_path = path.clone();
        let writer = std::thread::spawn(move || {
            // The reader stops at the cap and closes; the writer then sees a broken pipe.
            let _ = std::fs::write(writer_path, vec![b'x'; 1 << 20]);
        });
        let error = read_path_waiting(&path, 1000, Duration::from_secs(20)).expect_err("too much");
        writer.join().expect("thread");
        assert!(
            matches!(error, ReadError::TooLarge { size: None, .. }),
            "{error}"
        );
    }

    #[test]
    fn open_streams_files_and_refuses_directories() {
        // `explain` streams what `open` gives it: a file whole, past any cap; a directory is an error.
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("log.txt");
        std::fs::write(&path, vec![b'x'; 5000]).expect("write");
        let mut read = Vec::new();
        open(&path)
            .expect("a file")
            .read_to_end(&mut read)
            .expect("read");
        assert_eq!(read.len(), 5000);
        let error = open(dir.path()).expect_err("a directory");
        assert!(error.to_string().contains("is a directory"), "{error}");
    }

    #[cfg(unix)]
    use rustix::fs::Mode;
}
