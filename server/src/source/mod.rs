//! Where cluster data comes from.

pub mod demo;
