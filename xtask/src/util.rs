//! Small helpers: run a command, find the workspace and the target directory.

use std::path::PathBuf;
use std::process::Command;

/// The workspace root (the parent of xtask/).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Cargo's target directory, honouring `CARGO_TARGET_DIR` and config.
pub fn target_dir() -> Result<PathBuf, String> {
    let out = Command::new(cargo())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let key = "\"target_directory\":\"";
    let start = text
        .find(key)
        .ok_or("cargo metadata: no target_directory")?
        + key.len();
    let end = text[start..]
        .find('"')
        .ok_or("cargo metadata: bad target_directory")?
        + start;
    Ok(PathBuf::from(&text[start..end]))
}

/// The cargo that runs this xtask.
pub fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Extra corpus cases to run besides `corpus/`: the folder in which new cases are handed to the project
/// before they are copied into it (`shared/corpus` in the folder that holds the repository), when it
/// exists. Tests read it through `WINPLACE_EXTRA_CORPUS`; nothing needs it.
pub fn extra_corpus() -> Option<PathBuf> {
    let dir = root().parent()?.join("shared").join("corpus");
    dir.is_dir().then_some(dir)
}

/// Runs `cmd` in the workspace root, echoing it and how long it took, in wall time and in CPU time (user +
/// system of the command and every process it waited for: on a shared machine the wall time says how busy
/// the machine was, the CPU time what the step costs); fails on a non-zero exit.
pub fn run(cmd: &mut Command) -> Result<(), String> {
    if cmd.get_current_dir().is_none() {
        cmd.current_dir(root());
    }
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    eprintln!("==> {shown}");
    let started = std::time::Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    let (status, cpu) = cpu::wait(child).map_err(|e| format!("waiting for `{shown}`: {e}"))?;
    eprintln!(
        "<== {:.1} s: {shown} (CPU {:.1} s)",
        started.elapsed().as_secs_f64(),
        cpu.as_secs_f64()
    );
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// CPU time, user + system, of a child process tree or of the calling thread.
pub mod cpu {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Child, ExitStatus};
    use std::time::Duration;

    fn total(usage: &libc::rusage) -> Duration {
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        time(usage.ru_utime) + time(usage.ru_stime)
    }

    /// Waits for `child` and returns its exit status and the CPU time it and the processes it waited for
    /// used (`wait4`: the child's own resource usage, not that of this process's other children, which
    /// other threads of the build may be running at the same time).
    pub fn wait(child: Child) -> std::io::Result<(ExitStatus, Duration)> {
        let pid = child.id() as libc::pid_t;
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: `pid` is our child, not waited for yet (we own `child` and never call its wait);
            // `status` and `usage` are valid for writes.
            let done = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if done == pid {
                return Ok((ExitStatus::from_raw(status), total(&usage)));
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::Interrupted {
                return Err(error);
            }
        }
    }

    /// The CPU time xtask itself has used so far, all its threads (the work it does in-process, the split
    /// and wasm-bindgen, runs on rayon's threads; its other threads only wait for child processes, whose
    /// time is not counted here).
    pub fn this_process() -> Duration {
        // SAFETY: a zeroed rusage is a valid value for getrusage to fill in.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is valid for writes.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        total(&usage)
    }
}

/// Output of a command, if it ran and succeeded.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
