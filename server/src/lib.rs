//! `winplace`: the server (dashboard, JSON API, live updates, policy download) and the command-line
//! checks, as a library so that the router, the sources and every command are tested directly; `main.rs`
//! only parses the command line and sets up logging.
//!
//! * [`commands`]: one module per subcommand (`serve`, `check`, `audit`, `rules`, `demo-snapshot`);
//! * [`app`] and [`routes`]: the axum router, composed from small handlers over [`state::AppState`];
//! * [`source`]: where the cluster comes from (embedded demo, snapshot file, live cluster through kube-rs);
//! * [`state`]: the audit thread and the published report every handler reads;
//! * [`metrics`]: `/metrics` in the Prometheus text format;
//! * [`registry`]: the registry client (images' manifests), and [`image_resolution`]: the server's
//!   background resolution of the workloads' images.

#![warn(missing_docs)]

pub mod app;
pub mod assets;
pub mod cli;
pub mod commands;
pub mod image_resolution;
pub mod metrics;
pub mod registry;
pub mod routes;
pub mod source;
pub mod state;
