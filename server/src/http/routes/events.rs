//! `GET /api/events`: Server-Sent Events announcing each new revision of the audit.
//!
//! Events: `hello` once on connect (`{"revision": n}`: fetch what you need, newer changes follow);
//! `change` per published revision (a [`ChangeEvent`]). A client that fell behind and missed changes
//! gets one `change` for the current revision that touches nothing in particular, which means "anything
//! may have changed: refetch". A refused list (`freshness.rejected`) is announced the same way, as a
//! `change` of the current revision that names nothing. A comment line keeps idle connections alive every
//! 15 s.
//!
//! At most [`EventStreams::limit`] streams are open at once (`serve --max-event-streams`, default
//! [`DEFAULT_MAX_EVENT_STREAMS`]; each holds a connection, a broadcast receiver and buffers, about
//! 25 KB): past it the answer is 503 with `Retry-After`.

pub use crate::state::event_streams::{DEFAULT_MAX_EVENT_STREAMS, EventStreams, StreamSlot};

use crate::http::error::ApiError;
use crate::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures::stream::{self, StreamExt};
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

async fn events(State(state): State<AppState>) -> Response {
    let Some(slot) = state.event_streams().try_open() else {
        let limit = state.event_streams().limit();
        tracing::debug!(limit, "an event stream refused: the limit is reached");
        let mut refused = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{limit} event streams are open, the most this server keeps (--max-event-streams): try again later"
            ),
        )
        .into_response();
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return refused;
    };
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
    let stream = stream::once(async move { Ok::<_, Infallible>(hello) })
        .chain(changes)
        .take_until(state.shutdown_signal())
        // The slot lives as long as the stream: dropped with it when the client goes away.
        .map(move |event| {
            let _held = &slot;
            event
        });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
