//! The cluster audit: the catalogue applied to every workload of a live cluster, plus the live-state and
//! node rules, kept current as objects change.
//!
//! SKELETON (types and signatures are the contract between the audit engine, the server and the
//! dashboard; the engine fills the bodies in). Pure: no I/O, no clocks — the caller passes times in.

pub mod report;

pub use report::*;

use crate::model::RuntimeClassEntry;
use crate::settings::Settings;
use k8s_openapi::api::core::v1::{Node, Pod};

/// A change to the cluster, as a watcher reports it.
#[derive(Debug, Clone)]
pub enum Change {
    /// Replace everything (first list, or a relist after `410 Gone`).
    Reset {
        /// Every node.
        nodes: Vec<Node>,
        /// Every pod in every namespace.
        pods: Vec<Pod>,
        /// Every RuntimeClass.
        runtime_classes: Vec<RuntimeClassEntry>,
    },
    /// A node was added or changed.
    Node(Box<Node>),
    /// A node was deleted (by name).
    NodeDeleted(String),
    /// A pod was added or changed.
    Pod(Box<Pod>),
    /// A pod was deleted (namespace, name).
    PodDeleted(String, String),
    /// A RuntimeClass was added or changed.
    RuntimeClass(Box<RuntimeClassEntry>),
    /// A RuntimeClass was deleted (by name).
    RuntimeClassDeleted(String),
}

/// The audit engine: holds the cluster and the findings, and re-audits only what a change touches.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    settings: Settings,
}

impl Audit {
    /// An empty audit with these settings.
    pub fn new(settings: Settings) -> Self {
        Audit { settings }
    }

    /// Applies one change; returns what it touched (for the live update stream).
    pub fn apply(&mut self, change: Change) -> Touched {
        let _ = (change, &self.settings);
        Touched::default()
    }

    /// The whole report.
    pub fn report(&self) -> AuditReport {
        AuditReport::default()
    }
}
