//! A global allocator that counts, per thread, the bytes asked of it: what the memory guards measure
//! (a count, not a time, so load does not change it).
//!
//! A test binary installs it (`#[global_allocator] static A: Counting = Counting;`) and reads what one
//! piece of work holds with [`measure`]: the bytes still allocated when it returns and the highest
//! count while it ran. The counters are the calling thread's, so tests of the same binary running on
//! other threads do not disturb them; work that frees on another thread what this one allocated (or the
//! reverse) is counted on each side, so measure single-threaded work. Bytes asked of the allocator, not
//! pages: a process's resident memory is higher by the allocator's slack.
//!
//! ```
//! // Without the allocator installed, nothing is counted.
//! let (v, m) = winplace_synthetic::counting::measure(|| vec![0u8; 1000]);
//! assert_eq!(v.len(), 1000);
//! assert!(m.held >= 0 && m.peak >= m.held);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting the bytes each thread holds and its highest count.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    // `const` and `Cell<isize>`: no lazy initialization and no destructor, so reading them never
    // allocates (which, inside the allocator, would recurse).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    // `try_with`: a thread being torn down has no counters any more; its frees are not counted.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| {
            if now > peak.get() {
                peak.set(now);
            }
        });
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; only the thread's counters change.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The bytes this thread holds now (what it allocated minus what it freed since it started).
pub fn live() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

/// What a piece of work cost, in bytes asked of the allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// Still allocated when it returned (what its result holds, and anything it leaked).
    pub held: isize,
    /// The most it held at once while it ran.
    pub peak: isize,
}

/// Runs `work` on this thread and measures it (see [`Measured`]). Zero when [`Counting`] is not the
/// global allocator.
pub fn measure<T>(work: impl FnOnce() -> T) -> (T, Measured) {
    let before = live();
    let _ = PEAK.try_with(|peak| peak.set(before));
    let result = work();
    let after = live();
    let peak = PEAK.try_with(Cell::get).unwrap_or(after);
    (
        result,
        Measured {
            held: after - before,
            peak: peak.max(after) - before,
        },
    )
}
