//! The record: what a run leaves behind — the trace and everything that
//! writes or names it.
//!
//! - [`trace`]: the trace format: JSON Lines, read and written.
//! - [`recorder`]: ticks into trace lines.
//! - [`session`]: one recording session, as every shell records.
//! - [`marks`]: phase marks and counters from the watched command.
//! - [`counters`]: named figures a run writes beside its samples: the caps and the formatter.
//! - [`phases`]: a run's phases from its marks.
//! - [`recordings`]: the recordings folder a UI reads traces from.

pub mod counters;
pub mod marks;
pub mod phases;
pub mod recorder;
pub mod recordings;
pub mod session;
pub mod trace;
