//! The header strip every page shows: where the data comes from, how fresh it is, and the live stream.

use super::live::{Connection, Live};
use crate::api::ApiResult;
use leptos::prelude::*;
use std::time::Duration;
use winplace_api::{Meta, SummaryResponse};

/// The app-wide summary (source, freshness, counts), refetched on every change; shared through context.
#[derive(Clone, Copy)]
pub struct SummaryData(pub LocalResource<ApiResult<SummaryResponse>>);

impl SummaryData {
    /// The context value.
    pub fn get() -> Self {
        expect_context::<SummaryData>()
    }
}

/// `hh:mm:ss` in the browser's time zone.
fn clock(ms: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    format!(
        "{:02}:{:02}:{:02}",
        date.get_hours(),
        date.get_minutes(),
        date.get_seconds()
    )
}

/// `just now`, `42 s ago`, `3 min ago`, `2 h ago`.
pub fn ago(now_ms: u64, then_ms: u64) -> String {
    let s = now_ms.saturating_sub(then_ms) / 1000;
    match s {
        0..=4 => "just now".into(),
        5..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        _ => format!("{} h ago", s / 3600),
    }
}

fn now_ms() -> u64 {
    js_sys::Date::now() as u64
}

/// Source badge, freshness and live-stream state.
#[component]
pub fn DataStatus() -> impl IntoView {
    let summary = SummaryData::get().0;
    let live = Live::get();
    let now = RwSignal::new(now_ms());
    set_interval(move || now.set(now_ms()), Duration::from_secs(5));
    let meta = move || -> Option<Meta> { summary.get().and_then(|r| r.ok()).map(|r| r.meta) };
    view! {
        <div class="source" role="group" aria-label="Data source and freshness">
            {move || match meta() {
                None => view! { <span class="badge">"…"</span> }.into_any(),
                Some(meta) => {
                    let fresh = meta.freshness;
                    let kind = meta.source.kind.as_str();
                    let updated = fresh
                        .last_update_ms
                        .map(|ms| {
                            format!("updated {} ({})", clock(ms), ago(now.get().max(ms), ms))
                        });
                    view! {
                        <span
                            class=format!("badge badge-{kind}")
                            data-source=kind
                            title=meta.source.description.clone()
                        >
                            {kind}
                        </span>
                        <span class="source-description">{meta.source.description.clone()}</span>
                        <span class="freshness" data-revision=fresh.revision.to_string()>
                            {if fresh.synced { "synced" } else { "syncing…" }}
                            {updated.map(|u| format!(", {u}"))}
                            {format!(", revision {}", fresh.revision)}
                        </span>
                        {fresh
                            .stale
                            .then(|| {
                                view! {
                                    <span class="stale" role="status">
                                        "stale: the watch is broken, data may be out of date"
                                    </span>
                                }
                            })}
                        // A watch is failing (before the grace period too): what the API server said.
                        {fresh
                            .error
                            .map(|error| {
                                view! {
                                    <span class="watch-error" role="status" title=error.clone()>
                                        {format!("watch failing: {error}")}
                                    </span>
                                }
                            })}
                        // A flood of events not applied yet: what is shown is that far behind.
                        {(fresh.behind > 0)
                            .then(|| {
                                view! {
                                    <span class="behind" role="status">
                                        {format!("catching up: {} events behind", fresh.behind)}
                                    </span>
                                }
                            })}
                        // The source's last list was refused (a snapshot cut short, not a cluster): what is
                        // shown is the last complete state, or nothing before the first.
                        {fresh
                            .rejected
                            .map(|why| {
                                view! {
                                    <span class="rejected" role="status" title=why.clone()>
                                        {format!("not published: {why}")}
                                    </span>
                                }
                            })}
                    }
                        .into_any()
                }
            }}
            <span
                class="live"
                data-connection=move || format!("{:?}", live.connection.get()).to_lowercase()
            >
                {move || match live.connection.get() {
                    Connection::Connecting => "live: connecting…",
                    Connection::Open => "live",
                    Connection::Lost => "live: reconnecting…",
                }}
            </span>
        </div>
    }
}

/// A banner while the live stream is broken.
#[component]
pub fn ConnectionBanner() -> impl IntoView {
    let live = Live::get();
    view! {
        <Show when=move || live.connection.get() == Connection::Lost>
            <div class="banner" role="alert">
                "Lost the connection to the server. Retrying… What you see may be out of date."
            </div>
        </Show>
    }
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn ages_read_naturally() {
        let cases = [
            (1_000, 1_000, "just now"),
            (10_000, 1_000, "9 s ago"),
            (181_000, 1_000, "3 min ago"),
            (7_201_000, 1_000, "2 h ago"),
            (0, 5_000, "just now"),
        ];
        for (now, then, want) in cases {
            assert_eq!(ago(now, then), want);
        }
    }
}
