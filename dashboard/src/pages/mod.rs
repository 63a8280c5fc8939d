//! One module per view.

pub mod nodes;
pub mod playground;
