//! The live update stream: `GET /api/events` (Server-Sent Events, event `change`).
//!
//! [`Live`] holds one revision counter per kind of resource; resources that read a counter refetch when a
//! change touches them. The browser's `EventSource` reconnects by itself; `onerror`/`onopen` only tell the
//! banner what is going on.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use winplace_api::ChangeEvent;

/// State of the connection to the live stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// Opening the stream for the first time.
    Connecting,
    /// Events arrive.
    Open,
    /// The stream broke; the browser is retrying.
    Lost,
}

/// Reactive counters that resources read to refetch on changes (shared through context).
#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// State of the stream.
    pub connection: RwSignal<Connection>,
    /// Bumped when any change arrives: the summary (and the header's freshness) is always affected.
    pub summary_rev: RwSignal<u64>,
    /// Bumped when a change touches nodes.
    pub nodes_rev: RwSignal<u64>,
    /// Bumped when a change touches workloads.
    pub workloads_rev: RwSignal<u64>,
    /// Names of the nodes the last change touched.
    pub touched_nodes: RwSignal<Vec<String>>,
    /// The last revision announced by the server.
    pub revision: RwSignal<Option<u64>>,
}

impl Live {
    /// Counters at zero, connection opening.
    pub fn new() -> Self {
        Live {
            connection: RwSignal::new(Connection::Connecting),
            summary_rev: RwSignal::new(0),
            nodes_rev: RwSignal::new(0),
            workloads_rev: RwSignal::new(0),
            touched_nodes: RwSignal::new(Vec::new()),
            revision: RwSignal::new(None),
        }
    }

    /// Records one change event.
    pub fn apply(&self, event: &ChangeEvent) {
        self.revision.set(Some(event.revision));
        self.summary_rev.update(|r| *r += 1);
        // An event that names nothing in particular may have changed anything.
        let unspecific = event.touched.nodes.is_empty() && event.touched.workloads.is_empty();
        if unspecific || !event.touched.nodes.is_empty() {
            self.nodes_rev.update(|r| *r += 1);
        }
        if unspecific || !event.touched.workloads.is_empty() {
            self.workloads_rev.update(|r| *r += 1);
        }
        self.touched_nodes.set(event.touched.nodes.clone());
    }

    /// Refetches everything (after a reconnect, events may have been missed).
    pub fn refresh_all(&self) {
        self.summary_rev.update(|r| *r += 1);
        self.nodes_rev.update(|r| *r += 1);
        self.workloads_rev.update(|r| *r += 1);
    }

    /// The context value; panics only if the app forgot to provide it (a programming error).
    pub fn get() -> Self {
        expect_context::<Live>()
    }
}

impl Default for Live {
    fn default() -> Self {
        Self::new()
    }
}

/// Opens `/api/events` and feeds `live` for the lifetime of the page.
pub fn connect(live: Live) {
    let source = match web_sys::EventSource::new("/api/events") {
        Ok(source) => source,
        Err(_) => {
            live.connection.set(Connection::Lost);
            return;
        }
    };
    let was_lost = std::cell::Cell::new(false);
    let on_open = Closure::<dyn Fn()>::new(move || {
        if was_lost.replace(false) {
            live.refresh_all();
        }
        live.connection.set(Connection::Open);
    });
    let on_error = Closure::<dyn Fn()>::new(move || live.connection.set(Connection::Lost));
    let on_change =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            if let Some(text) = ev.data().as_string()
                && let Ok(event) = serde_json::from_str::<ChangeEvent>(&text)
            {
                live.connection.set(Connection::Open);
                live.apply(&event);
            }
        });
    source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let _ = source.add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref());
    // The stream lives as long as the page: the app is mounted once and never unmounted.
    on_open.forget();
    on_error.forget();
    on_change.forget();
    std::mem::forget(source);
}

#[cfg(test)]
mod tests {
    use super::*;
    use winplace_rules::audit::Touched;

    fn event(nodes: &[&str], workloads: &[&str]) -> ChangeEvent {
        ChangeEvent {
            revision: 7,
            touched: Touched {
                nodes: nodes.iter().map(|s| s.to_string()).collect(),
                workloads: workloads.iter().map(|s| s.to_string()).collect(),
            },
        }
    }

    #[test]
    fn a_change_bumps_only_what_it_touched() {
        let owner = Owner::new();
        owner.set();
        // (nodes touched, workloads touched) → (nodes_rev, workloads_rev) after one event.
        let cases = [
            (vec!["n1"], vec![], (1, 0)),
            (vec![], vec!["Deployment/shop/web"], (0, 1)),
            (vec!["n1"], vec!["Pod/a/b"], (1, 1)),
            (vec![], vec![], (1, 1)),
        ];
        for (nodes, workloads, (want_nodes, want_workloads)) in cases {
            let live = Live::new();
            live.apply(&event(&nodes, &workloads));
            assert_eq!(live.summary_rev.get_untracked(), 1);
            assert_eq!(
                live.nodes_rev.get_untracked(),
                want_nodes,
                "{nodes:?} {workloads:?}"
            );
            assert_eq!(
                live.workloads_rev.get_untracked(),
                want_workloads,
                "{nodes:?} {workloads:?}"
            );
            assert_eq!(live.revision.get_untracked(), Some(7));
        }
    }
}
