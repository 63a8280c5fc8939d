//! Re-auditing what a change marked ([`Dirty`]): the node index and classes when the nodes changed, the
//! object rules, the catalogue on the templates it touches, the live-state rules on the pods it touches,
//! then the rows; returns what changed ([`Touched`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::live::PodPass;
use super::{Audit, Dirty, NodeEdit, PodRecord, Touched, Workload, both_cores};
use crate::placement::{IndexedNode, NodeIndex, node_change_reaches};
use crate::rules::live_state::LiveNode;

impl Audit {
    /// Re-audits what `dirty` names and returns what changed.
    pub(super) fn flush(&mut self, mut dirty: Dirty) -> Touched {
        let mut touched_nodes: BTreeSet<String> = BTreeSet::new();
        let mut touched_workloads: BTreeSet<Arc<str>> = BTreeSet::new();
        // When every node change is local (NodeEdit::is_local), the index is updated in place and each
        // template checks whether its fit sees the change (the nodes before and after); otherwise the index is
        // rebuilt and every template re-runs.
        let mut local = dirty.cluster
            && !dirty.all
            && !dirty.all_templates
            && dirty.node_edits.iter().all(NodeEdit::is_local);
        let mut edits: Vec<(IndexedNode, IndexedNode)> = Vec::new();
        if local {
            for edit in &dirty.node_edits {
                let name = edit.after.metadata.name.as_deref().unwrap_or_default();
                let before = self.index.node(name).cloned();
                // An index half updated is rebuilt below.
                let replaced = self.index.replace_node(&edit.after);
                match (before, self.index.node(name).cloned()) {
                    (Some(before), Some(after)) if replaced => edits.push((before, after)),
                    _ => {
                        local = false;
                        break;
                    }
                }
            }
        }
        if dirty.cluster {
            if !local {
                self.index = NodeIndex::new(&self.context.nodes);
            }
            // One node per class: what the template rules read of the nodes is the same for these as for
            // all of them, as long as a template's selectors read no per-node key (classes.rs).
            let firsts = self.index.class_firsts();
            self.classes.nodes = firsts
                .filter_map(|i| self.context.nodes.get(i).cloned())
                .collect();
        }
        // The class context carries the RuntimeClasses too.
        if dirty.cluster || dirty.runtime_class_objects {
            self.classes.runtime_classes = self.context.runtime_classes.clone();
        }
        if dirty.runtime_class_objects {
            self.runtime_class_findings = self.evaluate_runtime_classes();
        }
        if dirty.all {
            dirty.node_rules = self.nodes.keys().cloned().collect();
        }
        self.run_node_rules(&dirty.node_rules);
        let rerun_all = dirty.cluster && !local;
        // Which templates to run the catalogue on.
        let mut todo: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (wk, workload) in &self.workloads {
            for (rev, template) in &workload.templates {
                let named = template
                    .runtime_class
                    .as_ref()
                    .is_some_and(|rc| dirty.runtime_classes.contains(rc));
                let reached = || match &template.placement {
                    Some(p) => edits.iter().any(|(before, after)| {
                        node_change_reaches(p, (&self.index, before), (&self.index, after))
                    }),
                    None => true,
                };
                if rerun_all
                    || named
                    || dirty.templates.contains(&(wk.clone(), rev.clone()))
                    || (dirty.cluster && reached())
                {
                    todo.push((wk.clone(), rev.clone()));
                }
            }
        }
        if !todo.is_empty() {
            self.evaluate_templates(&todo, &mut dirty);
        }
        // The fit of pending pods reads the templates' placement and the nodes: after a local node change,
        // only the pending pods of the templates it reached can fit elsewhere.
        if local {
            let reached: FxHashSet<(&str, &str)> = todo.iter().map(|(w, r)| (&**w, &**r)).collect();
            let pods = &self.pods;
            dirty.pods.extend(
                self.pending
                    .iter()
                    .filter(|key| {
                        pods.get(*key)
                            .is_some_and(|r| reached.contains(&(&*r.workload, &*r.revision)))
                    })
                    .cloned(),
            );
        } else if !todo.is_empty() || dirty.cluster {
            dirty.pods.extend(self.pending.iter().cloned());
        }
        let mut fits: FxHashMap<(Arc<str>, Arc<str>), String> = FxHashMap::default();
        let nodes: FxHashMap<&str, LiveNode<'_>> = self
            .nodes
            .iter()
            .map(|(name, e)| {
                let live = LiveNode {
                    name,
                    os: e.os,
                    build: e.build,
                };
                (name.as_str(), live)
            })
            .collect();
        if dirty.all {
            // A relist: every pod, half of them on each core, each half counting its own build matrix
            // (the pods' cells are counted anew: a relist starts from none).
            self.matrix.clear();
            let (index, settings) = (&self.index, &self.settings);
            let nodes = &nodes;
            // Hashed once: a pod's workload is then a hash away rather than a walk of the ordered map.
            let workloads: FxHashMap<&str, &Workload> =
                self.workloads.iter().map(|(k, w)| (&**k, w)).collect();
            let workloads = &workloads;
            let mut records: Vec<(&Arc<str>, &mut PodRecord)> = self
                .pods
                .iter_mut()
                .map(|(key, record)| {
                    record.cells.clear();
                    (key, &mut **record)
                })
                .collect();
            let count = records.len();
            let (first, second) = records.split_at_mut(count / 2);
            let pass = |part: &mut [(&Arc<str>, &mut PodRecord)]| {
                let mut fits = FxHashMap::default();
                let mut matrix = BTreeMap::new();
                let mut cx = PodPass {
                    nodes,
                    index,
                    settings,
                    fits: &mut fits,
                    matrix: &mut matrix,
                    all: true,
                };
                for (key, record) in part.iter_mut() {
                    if let Some(workload) = workloads.get(&*record.workload) {
                        cx.audit(key, record, workload);
                    }
                }
                matrix
            };
            let (a, b) = both_cores::join(count, || pass(first), || pass(second));
            for (cell, n) in a.into_iter().chain(b) {
                *self.matrix.entry(cell).or_default() += n;
            }
        } else {
            let mut cx = PodPass {
                nodes: &nodes,
                index: &self.index,
                settings: &self.settings,
                fits: &mut fits,
                matrix: &mut self.matrix,
                all: false,
            };
            for key in std::mem::take(&mut dirty.pods) {
                if let Some(record) = self.pods.get_mut(&key)
                    && let Some(workload) = self.workloads.get(&record.workload)
                    && cx.audit(&key, record, workload)
                {
                    dirty.workloads.insert(workload.key.clone());
                    if let Some(node) = &record.facts.node {
                        dirty.nodes.insert(node.clone());
                    }
                }
            }
        }
        drop(nodes);
        let workloads: Vec<Arc<str>> = if dirty.all {
            self.workloads.keys().cloned().collect()
        } else {
            dirty.workloads.iter().cloned().collect()
        };
        let nodes: Vec<String> = if dirty.all {
            self.nodes.keys().cloned().collect()
        } else {
            dirty.nodes.iter().cloned().collect()
        };
        // The rows read the state and each lists its pods: the workloads' on one core, the nodes' on the
        // other (both list every pod at a relist), then put in place.
        let this = &*self;
        let (workload_rows, node_rows) = both_cores::join(
            workloads.len() + nodes.len(),
            || {
                workloads
                    .iter()
                    .map(|wk| this.workload_row(wk))
                    .collect::<Vec<_>>()
            },
            || {
                nodes
                    .iter()
                    .map(|name| this.node_row(name))
                    .collect::<Vec<_>>()
            },
        );
        for (wk, row) in workloads.into_iter().zip(workload_rows) {
            if !self.workloads.contains_key(&wk) || self.store_workload_row(&wk, row) {
                touched_workloads.insert(wk);
            }
        }
        for (name, row) in nodes.into_iter().zip(node_rows) {
            let gone = !self.nodes.contains_key(&name) && dirty.removed_nodes.contains(&name);
            if gone || self.store_node_row(&name, row) {
                touched_nodes.insert(name);
            }
        }
        Touched {
            nodes: touched_nodes.into_iter().collect(),
            workloads: touched_workloads
                .into_iter()
                .map(|k| k.to_string())
                .collect(),
        }
    }
}
