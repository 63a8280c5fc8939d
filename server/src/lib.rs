//! `winplace`: the server (dashboard, JSON API, live updates, policy download) and the command-line
//! checks, as a library so that the router, the sources and every command are tested directly; `main.rs`
//! only parses the command line and sets up logging.
//!
//! * [`commands`]: one module per subcommand (`serve`, `check`, `audit`, `rules`, `demo-snapshot`);
//! * [`state::answers`]: the heavy JSON answers, serialized and compressed once per published state;
//! * [`app`] and [`routes`]: the axum router, composed from small handlers over [`state::AppState`];
//! * [`inputs`]: what the commands read from disk (settings and `--platform`, cluster files, manifests);
//! * [`source`]: where the cluster comes from (embedded demo, snapshot file, live cluster through kube-rs);
//! * [`conn`] and [`hosts`]: accepting connections (header-read and idle timeouts) and the `Host` names
//!   answered; [`probes`]: `/healthz` and `/readyz` on a listener and thread of their own;
//! * [`clock`]: today's date, the one the retirement calendar is read at;
//! * [`logging`]: text or JSON logs on standard error (`--log-format`);
//! * [`bounded_read`]: every input read with a byte cap (files, standard input, FIFOs, devices);
//! * [`error`]: the API's error type and the layers that make every `/api/` error JSON;
//! * [`state`]: the audit thread, freshness and the change broadcast; [`state::published`]: the published
//!   state every handler reads; [`state::readiness`]: why the server is not ready, and its changes logged once;
//! * [`metrics`]: `/metrics` in the Prometheus text format;
//! * [`registry`]: the registry client (images' manifests), and [`image_resolution`]: the server's
//!   background resolution of the workloads' images.

#![warn(missing_docs)]

pub mod app;
pub mod assets;
pub mod bounded_read;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod conn;
pub mod error;
pub mod hosts;
pub mod image_resolution;
pub mod inputs;
pub mod logging;
pub mod metrics;
pub mod place;
pub mod probes;
pub mod registry;
pub mod routes;
pub mod security_headers;
pub mod source;
pub mod state;
