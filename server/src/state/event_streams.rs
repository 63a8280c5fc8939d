//! How many live event streams (`GET /api/events`) are open and how many may be: held by the app's state,
//! counted by the route.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default of `serve --max-event-streams`.
pub const DEFAULT_MAX_EVENT_STREAMS: usize = 1000;

/// The event streams open now, and how many may be.
#[derive(Debug)]
pub struct EventStreams {
    open: Arc<AtomicUsize>,
    limit: AtomicUsize,
}

impl Default for EventStreams {
    fn default() -> Self {
        EventStreams {
            open: Arc::new(AtomicUsize::new(0)),
            limit: AtomicUsize::new(DEFAULT_MAX_EVENT_STREAMS),
        }
    }
}

/// One open stream's place, given back when the stream ends (its connection closed).
#[derive(Debug)]
pub struct StreamSlot {
    open: Arc<AtomicUsize>,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl EventStreams {
    /// Sets how many streams may be open at once (streams already open stay).
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Release);
    }

    /// How many streams may be open at once.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Acquire)
    }

    /// How many are open now.
    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// A place for one more stream, or `None` when [`Self::limit`] are open.
    ///
    /// ```
    /// let streams = winplace::state::event_streams::EventStreams::default();
    /// streams.set_limit(1);
    /// let first = streams.try_open().expect("a place");
    /// assert!(streams.try_open().is_none());
    /// drop(first);
    /// assert!(streams.try_open().is_some());
    /// ```
    pub fn try_open(&self) -> Option<StreamSlot> {
        let limit = self.limit();
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < limit).then_some(open + 1)
            })
            .ok()
            .map(|_| StreamSlot {
                open: self.open.clone(),
            })
    }
}
