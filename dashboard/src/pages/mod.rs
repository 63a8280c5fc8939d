//! One module per view.

pub mod nodes;
pub mod overview;
pub mod planner;
pub mod playground;
pub mod policy;
pub mod rules;
pub mod workloads;
