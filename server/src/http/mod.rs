//! The HTTP side of `serve`: from the socket to the handlers, over the [`crate::state::AppState`] they
//! read.
//!
//! * [`serve`]: the listeners (main and probes) until Ctrl-C or SIGTERM, and the graceful shutdown;
//! * [`conn`]: accepting connections (hyper): the connection limit, the header-read and idle timeouts;
//! * [`router`]: the routes and their layers (compression, timeouts, body limit, JSON errors, tracing);
//! * [`routes`]: the handlers, one module per area;
//! * [`hosts`]: the `Host` names answered; [`security_headers`]: the headers every answer carries;
//! * [`error`]: the API's error type, every `/api/` error as JSON;
//! * [`probes`]: `/healthz` and `/readyz` on a listener and thread of their own;
//! * [`assets`]: the dashboard and policy.wasm, embedded.

pub mod assets;
pub mod conn;
pub mod error;
pub mod hosts;
pub mod probes;
pub mod router;
pub mod routes;
pub mod security_headers;
pub mod serve;
