//! Re-auditing what a change marked ([`Dirty`]): the node index and classes when the nodes changed, the
//! object rules, the catalogue on the templates it touches, the live-state rules on the pods it touches,
//! then the rows; returns what changed ([`Touched`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::classes::{class_representatives, per_node_keys};
use super::live::PodPass;
use super::{Audit, Dirty, Touched};
use crate::placement::NodeIndex;
use crate::rules::live_state::LiveNode;

impl Audit {
    /// Re-audits what `dirty` names and returns what changed.
    pub(super) fn flush(&mut self, mut dirty: Dirty) -> Touched {
        let mut touched_nodes: BTreeSet<String> = BTreeSet::new();
        let mut touched_workloads: BTreeSet<Arc<str>> = BTreeSet::new();
        if dirty.cluster {
            self.index = NodeIndex::new(&self.context.nodes);
            self.per_node_keys = per_node_keys(&self.context.nodes);
            self.classes.nodes = class_representatives(&self.context.nodes, &self.per_node_keys);
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
        // Which templates to run the catalogue on.
        let mut todo: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (wk, workload) in &self.workloads {
            for (rev, template) in &workload.templates {
                let named = template
                    .runtime_class
                    .as_ref()
                    .is_some_and(|rc| dirty.runtime_classes.contains(rc));
                if dirty.cluster || named || dirty.templates.contains(&(wk.clone(), rev.clone())) {
                    todo.push((wk.clone(), rev.clone()));
                }
            }
        }
        if !todo.is_empty() {
            self.evaluate_templates(&todo, &mut dirty);
            // The fit of pending pods reads the templates' placement and the nodes.
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
        let mut cx = PodPass {
            nodes: &nodes,
            index: &self.index,
            settings: &self.settings,
            fits: &mut fits,
            matrix: &mut self.matrix,
            all: dirty.all,
        };
        if dirty.all {
            for workload in self.workloads.values() {
                for key in &workload.pods {
                    if let Some(record) = self.pods.get_mut(key) {
                        cx.audit(key, record, workload);
                    }
                }
            }
        } else {
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
        for wk in workloads {
            if !self.workloads.contains_key(&wk) || self.rebuild_workload(&wk) {
                touched_workloads.insert(wk);
            }
        }
        let nodes: Vec<String> = if dirty.all {
            self.nodes.keys().cloned().collect()
        } else {
            dirty.nodes.iter().cloned().collect()
        };
        for name in nodes {
            let gone = !self.nodes.contains_key(&name) && dirty.removed_nodes.contains(&name);
            if gone || self.rebuild_node(&name) {
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
