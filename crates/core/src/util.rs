//! Helpers every floor uses.
//!
//! - [`units`]: sizes and durations, parsed and written.
//! - [`text`]: text from outside, cleaned once.
//! - [`outpath`]: files written without following a planted link.

pub mod outpath;
pub mod text;
pub mod units;
