//! The live-state pass over pods: the live-state rules on each pod against its template's placement and
//! its node, the pod's state, winplace's fit for pending pods, and the pod's cells of the build matrix.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{PlacementState, PodRecord, Workload, share_findings, split_key};
use crate::finding::Severity;
use crate::placement::{NodeIndex, Placement, fit};
use crate::rules::live_state::{self, LiveNode};
use crate::settings::Settings;
use crate::windows::{Os, host_runs_image_build};

/// What the live-state pass over pods reads and counts.
pub(super) struct PodPass<'a> {
    pub(super) nodes: &'a FxHashMap<&'a str, LiveNode<'a>>,
    pub(super) index: &'a NodeIndex,
    pub(super) settings: &'a Settings,
    /// winplace's fit of each pending template, computed once per pass.
    pub(super) fits: &'a mut FxHashMap<(Arc<str>, Arc<str>), String>,
    pub(super) matrix: &'a mut BTreeMap<(u32, u32), usize>,
    pub(super) all: bool,
}

impl PodPass<'_> {
    /// Runs the live-state rules on one pod of `workload`; returns whether its findings or state changed
    /// (always, in a full pass).
    pub(super) fn audit(&mut self, key: &str, record: &mut PodRecord, workload: &Workload) -> bool {
        let Some(template) = workload.templates.get(&record.revision) else {
            return false;
        };
        let (namespace, name) = split_key(key);
        let exempt = self
            .settings
            .exempt_namespaces
            .iter()
            .any(|n| n == namespace);
        let node = record
            .facts
            .node
            .as_deref()
            .and_then(|n| self.nodes.get(n))
            .copied();
        let fit_text = match (&template.placement, live_state::is_pending(&record.facts)) {
            (Some(placement), true) => Some(
                self.fits
                    .entry((record.workload.clone(), record.revision.clone()))
                    .or_insert_with(|| fit_words(placement, self.index))
                    .clone(),
            ),
            _ => None,
        };
        let live = if exempt {
            Vec::new()
        } else {
            live_state::check(
                (namespace, name),
                &record.facts,
                Some(&template.facts),
                node,
                fit_text.as_deref(),
                self.settings,
            )
        };
        let state = if live.iter().any(|f| f.severity >= Severity::Warning) {
            PlacementState::Misplaced
        } else if template.at_risk {
            PlacementState::AtRisk
        } else {
            PlacementState::Fine
        };
        let mut cells: Vec<(u32, u32)> = Vec::new();
        let running = !matches!(record.facts.phase.as_str(), "Succeeded" | "Failed");
        if let (Some(n), true) = (node, running)
            && let (Some(Os::Windows), Some(host)) = (n.os, n.build)
        {
            for image in &template.facts.images {
                if image.os == Some(Os::Windows)
                    && let Some(b) = effective_image_build(host, &image.builds)
                {
                    cells.push((b, host));
                }
            }
            cells.sort_unstable();
            cells.dedup();
        }
        if cells != record.cells {
            for cell in &record.cells {
                if let Some(n) = self.matrix.get_mut(cell) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.matrix.remove(cell);
                    }
                }
            }
            for cell in &cells {
                *self.matrix.entry(*cell).or_default() += 1;
            }
            record.cells = cells;
        }
        let live_changed = share_findings(&mut record.live, live);
        let changed = self.all || live_changed || state != record.state;
        record.state = state;
        changed
    }
}

/// winplace's account of the nodes for a pending pod.
fn fit_words(placement: &Placement, index: &NodeIndex) -> String {
    if index.is_empty() {
        return String::new();
    }
    let f = fit(placement, index);
    if f.candidates.is_empty() {
        return format!(
            "winplace finds no node that can take it: {}.",
            f.summary(index)
        );
    }
    let names: Vec<&str> = f
        .candidate_nodes(index)
        .take(3)
        .map(|n| n.name.as_str())
        .collect();
    let more = if f.candidates.count() > names.len() {
        ", …"
    } else {
        ""
    };
    format!(
        "winplace finds {} node(s) that pass its taints and selectors now ({}{more}): the nodes changed since the scheduler tried, or it failed on something else.",
        f.candidates.count(),
        names.join(", ")
    )
}

/// The build an image of `builds` runs as on a host of `host`: the newest one the host runs, else (it cannot
/// run any) the newest below or at the host, else the oldest.
fn effective_image_build(host: u32, builds: &[u32]) -> Option<u32> {
    builds
        .iter()
        .copied()
        .filter(|b| host_runs_image_build(host, *b))
        .max()
        .or_else(|| builds.iter().copied().filter(|b| *b <= host).max())
        .or_else(|| builds.iter().copied().min())
}
