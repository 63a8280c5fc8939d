//! `winplace`: the server (dashboard, JSON API, live updates, policy download, placement) and the
//! command-line checks, as a library so that the router, the sources and every command are tested
//! directly; `main.rs` only parses the command line and sets up logging.
//!
//! The crate's map, lowest layer first (a module imports only those above it in this list:
//! `cargo xtask imports` checks it):
//!
//! * [`bounded_read`]: every input read with a byte cap (files, standard input, FIFOs, devices);
//! * [`clock`]: today's date, the one the retirement calendar is read at;
//! * [`kube_client`]: how every command reaches the Kubernetes API (User-Agent, kubectl's proxy);
//! * [`logging`]: text or JSON logs on standard error (`--log-format`);
//! * [`inputs`]: what the commands read (settings and `--platform`, cluster files, manifests, seconds);
//! * [`metrics`]: `/metrics` in the Prometheus text format;
//! * [`registry`]: the registry client (images' manifests: credentials, limits, caches);
//! * [`source`]: where the cluster comes from (embedded demo, snapshot file, live cluster through
//!   kube-rs), streamed object by object;
//! * [`lease`]: leader election over a Lease, held only while the work it guards can act;
//! * [`place`]: the placement controller (`serve --place`): caches, reconcile, deadlines, retries, pull
//!   secrets;
//! * [`state`]: what every handler reads ([`state::AppState`]): the published audit and its answers,
//!   freshness and readiness, the change broadcast; and the audit thread that applies the source's
//!   changes ([`state::applier`]);
//! * [`image_resolution`]: the server's background resolution of the workloads' images;
//! * [`http`]: from the socket to the handlers: listeners, connections, `Host` names, security headers,
//!   the router and its layers, the routes, API errors, the probe listener, the embedded assets;
//! * [`commands`]: one module per subcommand (`serve`, `check`, `audit`, `what-if`, `explain`, `export`,
//!   `rules`, `demo-snapshot`);
//! * [`cli`]: the command line (clap).

#![warn(missing_docs)]

pub mod bounded_read;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod http;
pub mod image_resolution;
pub mod inputs;
pub mod kube_client;
pub mod lease;
pub mod logging;
pub mod metrics;
pub mod place;
pub mod registry;
pub mod source;
pub mod state;
