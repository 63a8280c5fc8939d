//! HTTP handlers, one module per area.

pub mod api;
pub mod assets;
pub mod events;
pub mod health;
pub mod images;
pub mod placements;
