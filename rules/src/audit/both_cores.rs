//! Two parts of a large re-audit run side by side, one on a second thread: the rows of a full audit, the
//! live-state pass over a relist's pods. Where threads cannot be made (the browser, a wasm policy) or
//! there is one core, both run here, one after the other.

/// At least this many items (pods, rows) before the work is split: a thread costs tens of microseconds,
/// a watch event's re-audit touches a handful of rows.
pub(super) const SPLIT_FROM: usize = 512;

/// Runs `a` and `b`, `a` on a thread of its own when `items` (what they work through together) is at
/// least [`SPLIT_FROM`] and a second core is there; returns both results.
pub(super) fn join<RA: Send, RB>(
    items: usize,
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB,
) -> (RA, RB) {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    if items < SPLIT_FROM || cores < 2 {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let other = scope.spawn(a);
        let rb = b();
        let ra = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (ra, rb)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_results_come_back_split_or_not() {
        for items in [0, SPLIT_FROM] {
            let here = std::thread::current().id();
            let ((a, a_thread), b) = join(
                items,
                || ((0..100).sum::<u32>(), std::thread::current().id()),
                || "b",
            );
            assert_eq!((a, b), (4950, "b"));
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            assert_eq!(
                a_thread == here,
                items < SPLIT_FROM || cores < 2,
                "{items} items"
            );
        }
    }
}
