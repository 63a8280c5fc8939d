//! `GET /api/events`: Server-Sent Events announcing each new revision of the audit.
//!
//! Events: `hello` once on connect (`{"revision": n}`: fetch what you need, newer changes follow);
//! `change` per published revision (a [`ChangeEvent`]). A client that fell behind and missed changes
//! gets one `change` for the current revision that touches nothing in particular, which means "anything
//! may have changed: refetch". A refused list (`freshness.rejected`) is announced the same way, as a
//! `change` of the current revision that names nothing. A comment line keeps idle connections alive every
//! 15 s.

use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures::stream::{self, Stream, StreamExt};
use serde_json::json;
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use winplace_api::ChangeEvent;
use winplace_rules::audit::Touched;

/// The live stream's route.
pub fn router() -> Router<AppState> {
    Router::new().route("/api/events", get(events))
}

async fn events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    // Subscribe before reading the revision, so nothing falls between them.
    let changes = BroadcastStream::new(state.subscribe());
    let hello = Event::default()
        .event("hello")
        .data(json!({ "revision": state.published().revision }).to_string());
    let later = state.clone();
    let changes = changes.map(move |item| {
        Ok(match item {
            Ok(change) => Event::default()
                .event("change")
                .data(serde_json::to_string(&change).unwrap_or_default()),
            Err(BroadcastStreamRecvError::Lagged(_)) => {
                let catch_up = ChangeEvent {
                    revision: later.published().revision,
                    touched: Touched::default(),
                };
                Event::default()
                    .event("change")
                    .data(serde_json::to_string(&catch_up).unwrap_or_default())
            }
        })
    });
    let stream = stream::once(async move { Ok(hello) })
        .chain(changes)
        .take_until(state.shutdown_signal());
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
