//! `winplace`: parses the command line, sets up logging and runs the command (see the library crate).

use clap::Parser;

/// mimalloc instead of glibc's malloc: the snapshot reader decodes objects on one thread and the audit
/// drops them on another, and glibc's arenas serialize those frees on a lock (a third of `audit
/// --snapshot`'s time at 150,000 pods went to malloc, free and their futexes). Not on Windows, where the
/// CLI runs `check` on build agents: mimalloc's Windows sources expand `__DATE__`, which the release's
/// reproducible cross-compile refuses (docs/dependencies.md).
#[cfg(not(windows))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its index in `mi_option_e`, `mimalloc.h` of mimalloc v3, which
/// libmimalloc-sys does not name): how long freed memory is kept before it goes back to the OS.
#[cfg(not(windows))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// When freed memory goes back to the OS. mimalloc's default (1 s) suits a server at rest but not a
/// reading: `audit --snapshot` at the envelope frees every decoded pod within the second, and gave the
/// pages back and faulted them in again 420 times (12,500 page faults instead of 640, each zeroed by the
/// kernel; a fifth of the samples in `perf`). A command that runs once keeps what it freed until it
/// exits; `serve` gives it back after 10 s unused, so that a relist reuses it.
#[cfg(not(windows))]
fn tune_allocator(serves: bool) {
    let delay_ms = if serves { 10_000 } else { -1 };
    // SAFETY: sets one of mimalloc's options, which it reads at each purge; no memory is touched.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, delay_ms) };
}

/// The system's allocator has nothing to tune.
#[cfg(windows)]
fn tune_allocator(_serves: bool) {}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = winplace::cli::Cli::parse();
    tune_allocator(cli.serves());
    winplace::logging::init(cli.log_format);
    match cli.run().await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("winplace: {error:#}");
            std::process::ExitCode::from(2)
        }
    }
}

#[cfg(all(test, not(windows)))]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // 1,000 ms is mimalloc v3's default purge delay, and no neighbouring option's: a mimalloc that
        // numbers its options otherwise fails here instead of tuning something else.
        // SAFETY: reads and sets an option.
        let default = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(default, 1_000);
        tune_allocator(false);
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) },
            -1
        );
    }
}
