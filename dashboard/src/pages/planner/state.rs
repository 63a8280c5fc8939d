//! The planner page's state: its inputs (kept in the link), what they evaluate to, and the pool being
//! added; its methods are what the controls do.

use leptos::prelude::*;

use super::inputs::{AddedPool, PlanInputs};
use super::outcome::{Outcome, evaluate};
use crate::pages::playground::dom;

/// The "Add a pool" form's fields, as typed.
#[derive(Clone, Copy)]
pub struct NewPool {
    pub name: RwSignal<String>,
    pub os: RwSignal<String>,
    pub build: RwSignal<String>,
    pub taint: RwSignal<String>,
    pub count: RwSignal<String>,
}

impl NewPool {
    fn new() -> Self {
        NewPool {
            name: RwSignal::new("win25".to_string()),
            os: RwSignal::new("windows".to_string()),
            build: RwSignal::new("10.0.26100".to_string()),
            taint: RwSignal::new("os=windows:NoSchedule".to_string()),
            count: RwSignal::new("2".to_string()),
        }
    }

    /// The pool the fields describe (one node when the count does not read).
    fn pool(self) -> AddedPool {
        AddedPool {
            name: self.name.get(),
            os: self.os.get(),
            build: self.build.get(),
            taint: self.taint.get(),
            count: self.count.get().trim().parse().unwrap_or(1),
        }
    }
}

/// The planner page's state.
#[derive(Clone, Copy)]
pub struct PlannerState {
    /// What the link reproduces.
    pub inputs: RwSignal<PlanInputs>,
    /// What the inputs evaluate to.
    pub outcome: Memo<Outcome>,
    /// The pool being added.
    pub new_pool: NewPool,
}

impl PlannerState {
    /// The inputs the URL fragment holds (the sample when it holds none); the fragment follows them.
    pub fn new() -> Self {
        let state = PlannerState::from(PlanInputs::decode(&dom::fragment()).unwrap_or_default());
        let inputs = state.inputs;
        Effect::new(move |_| dom::replace_fragment(&inputs.read().encode()));
        state
    }

    /// The state of `inputs`, apart from the page (no link).
    fn from(inputs: PlanInputs) -> Self {
        let inputs = RwSignal::new(inputs);
        PlannerState {
            inputs,
            outcome: Memo::new(move |_| evaluate(&inputs.read())),
            new_pool: NewPool::new(),
        }
    }

    /// A new cluster: the pools switched off or upgraded were the old cluster's.
    pub fn set_cluster(self, text: String) {
        self.inputs.update(|s| {
            s.cluster = text;
            s.off.clear();
            s.upgrades.clear();
        });
    }

    pub fn set_manifests(self, text: String) {
        self.inputs.update(|s| s.manifests = text);
    }

    /// The plan's date, as typed.
    pub fn set_date(self, text: String) {
        self.inputs.update(|s| s.on = text);
    }

    /// Whether `pool` is kept.
    pub fn kept(self, pool: &str) -> bool {
        !self.inputs.read().off.iter().any(|p| p == pool)
    }

    /// Keeps `pool` or switches it off.
    pub fn keep(self, pool: String, keep: bool) {
        self.inputs.update(|s| {
            s.off.retain(|p| *p != pool);
            if !keep {
                s.off.push(pool);
            }
        })
    }

    /// The build `pool` is upgraded to, empty for none.
    pub fn upgrade_of(self, pool: &str) -> String {
        self.inputs
            .read()
            .upgrades
            .iter()
            .find(|(q, _)| q == pool)
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    }

    /// Upgrades `pool` to `build` in place; an empty build cancels its upgrade.
    pub fn upgrade(self, pool: String, build: String) {
        self.inputs.update(|s| {
            s.upgrades.retain(|(p, _)| *p != pool);
            if !build.is_empty() {
                s.upgrades.push((pool, build));
            }
        })
    }

    /// Adds the pool the form describes.
    pub fn add_pool(self) {
        let pool = self.new_pool.pool();
        self.inputs.update(|s| s.added.push(pool));
    }

    /// Removes the `index`th added pool.
    pub fn remove_added(self, index: usize) {
        self.inputs.update(|s| {
            if index < s.added.len() {
                s.added.remove(index);
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controls_change_the_inputs_and_the_outcome_follows() {
        let state = PlannerState::from(PlanInputs::default());
        assert!(state.kept("win19"));
        state.keep("win19".into(), false);
        assert!(!state.kept("win19"));
        assert_eq!(state.outcome.get().report.broken().count(), 1);
        state.keep("win19".into(), true);
        assert!(state.kept("win19"));
        assert_eq!(state.inputs.get().off, Vec::<String>::new());

        state.upgrade("win22".into(), "10.0.26100".into());
        state.upgrade("win22".into(), "10.0.20348".into());
        assert_eq!(state.upgrade_of("win22"), "10.0.20348");
        state.upgrade("win22".into(), String::new());
        assert_eq!(state.upgrade_of("win22"), "");

        state.new_pool.count.set("not a number".into());
        state.add_pool();
        state.new_pool.name.set("lin".into());
        state.new_pool.os.set("linux".into());
        state.new_pool.count.set(" 3 ".into());
        state.add_pool();
        let added = state.inputs.get().added;
        assert_eq!(
            added
                .iter()
                .map(|p| (p.name.as_str(), p.os.as_str(), p.count))
                .collect::<Vec<_>>(),
            [("win25", "windows", 1), ("lin", "linux", 3)]
        );
        state.remove_added(5);
        state.remove_added(0);
        assert_eq!(state.inputs.get().added.len(), 1);
        assert_eq!(state.inputs.get().added[0].name, "lin");

        // A new cluster forgets what was switched off or upgraded in the old one.
        state.keep("win19".into(), false);
        state.upgrade("win22".into(), "10.0.26100".into());
        state.set_cluster(String::new());
        let inputs = state.inputs.get();
        assert!(inputs.off.is_empty() && inputs.upgrades.is_empty());
        assert!(state.outcome.get().pools.is_empty());
    }
}
