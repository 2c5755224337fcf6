//! The show: what the shells put in front of a person or another tool.
//!
//! - [`export`]: cSV, Perfetto JSON, Prometheus text and plots.
//! - [`live`]: the live session behind the app and `serve`.
//! - [`answers`]: the answers to the live session's commands.
//! - [`doctor`]: swapsight's figures beside the OS's own tools.

pub mod answers;
pub mod doctor;
pub mod export;
pub mod live;
