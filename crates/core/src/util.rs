//! Helpers every floor uses.
//!
//! - [`bell`]: one loop woken by whoever has news, not by a timer.
//! - [`units`]: sizes and durations, parsed and written.
//! - [`text`]: text from outside, cleaned once.
//! - [`outpath`]: files written without following a planted link.
//! - [`inpath`]: files read without waiting on a FIFO by their name.

pub mod bell;
pub mod inpath;
pub mod outpath;
pub mod text;
pub mod units;
