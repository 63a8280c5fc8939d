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

/// Runs `cmd` in the workspace root, echoing it and how long it took; fails on a non-zero exit.
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
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    eprintln!("<== {:.1} s: {shown}", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed ({status})"))
    }
}

/// Output of a command, if it ran and succeeded.
pub fn output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
