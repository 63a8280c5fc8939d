//! winplace rules: which OS and which Windows build a Kubernetes workload needs, where the scheduler could
//! put it, and what is wrong with it.
//!
//! The crate is pure (no I/O, no clocks, no globals) so that the same findings come out of the Kubewarden
//! policy (`wasm32-wasip1`), the browser playground (`wasm32-unknown-unknown`) and the native CLI and server.
//!
//! Where the code follows Kubernetes or Windows, its comments cite `kubernetes-windows-rules.md §N`: the
//! section of `docs/reference/kubernetes-windows-rules.md` (in the repository) that holds the upstream
//! fact, with its source.
//!
//! The way in is [`Checker`]: built once with the settings, the cluster and what is known about the
//! images, then asked about texts (findings handed on document by document), objects and the files
//! given as cluster context.
//!
//! ```
//! use winplace_rules::{Checker, Settings};
//! let input = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n  - name: app\n    image: mcr.microsoft.com/windows/servercore:ltsc2022\n";
//! let settings = Settings::default();
//! let checker = Checker::builder().settings(&settings).build();
//! let report = checker.report("pod.yaml", input);
//! assert!(report.findings.iter().any(|f| f.rule == "windows-pod-without-os-selector"));
//! ```

#![warn(missing_docs)]

pub mod audit;
pub mod catalog;
pub mod check;
pub mod explain;
pub mod export;
pub mod finding;
pub mod fix;
pub mod infra;
pub mod input;
pub mod invalid_setting;
pub mod lifecycle;
pub mod model;
pub mod path;
pub mod placement;
pub mod platform;
pub mod rules;
pub mod schedule;
pub mod settings;
pub mod what_if;
pub mod windows;

// The tests' Node builder.
#[cfg(test)]
mod test_kit;

pub use check::{Checker, CheckerBuilder, LINUX_NODES, NOT_LINUX_NODES};
pub use finding::{Finding, Fix, ObjectRef, Patch, Report, Severity};
pub use input::{ParseError, ParsedInput};
pub use model::{ClusterContext, Object};
pub use path::FieldPath;
pub use settings::Settings;
