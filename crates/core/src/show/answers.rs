//! The answers to the live session's commands: what the UI reads back from
//! a command (`pin`, `reset_baseline`, a recording started or stopped, one
//! process), defined once so that the menu-bar app's commands and
//! `swapsight serve`'s routes answer the same JSON by construction. What the
//! UI draws of each tick is `live/display.rs`. The larger views — [`Snapshot`],
//! [`Point`], [`Replay`] — are [`Live`]'s own; recordings in the folder are
//! listed as [`Recording`]s. No view here carries a path of the machine: a
//! recording is named by its file name in the folder.
//!
//! [`Snapshot`]: crate::show::live::Snapshot
//! [`Point`]: crate::show::live::Point
//! [`Replay`]: crate::show::live::Replay
//! [`Live`]: crate::show::live::Live

use std::path::Path;

use serde::Serialize;

use crate::record::recordings::file_name;
pub use crate::record::recordings::Recording;
pub use crate::show::live::{Replay, Row};

/// One process: its row and its footprint history.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProcessView {
    /// The process's row, as the table shows it.
    pub row: Row,
    /// `[t_ms, footprint_bytes]` pairs, oldest first.
    pub series: Vec<(u64, u64)>,
}

/// The answer to `pin`: the pid now pinned, `null` once unpinned.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Pinned {
    /// The pid now pinned; `None` once unpinned.
    pub pinned: Option<u32>,
}

/// The answer to a command with nothing to tell but that it ran
/// (`reset_baseline`): `{"ok": true}`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Done {
    pub(crate) ok: bool,
}

impl Done {
    /// `{"ok": true}`.
    pub const OK: Done = Done { ok: true };
}

/// A recording that just started (`{name}`) or stopped (`{name, samples}`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RecordingInfo {
    /// File name in the recordings folder (what `replay` and `report` take).
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) samples: Option<u64>,
}

impl RecordingInfo {
    /// The answer for a recording started at `path`.
    pub fn started(path: &Path) -> RecordingInfo {
        RecordingInfo {
            name: file_name(path),
            samples: None,
        }
    }

    /// The answer for a recording at `path` stopped after `samples` samples.
    pub fn stopped(path: &Path, samples: u64) -> RecordingInfo {
        RecordingInfo {
            name: file_name(path),
            samples: Some(samples),
        }
    }
}

#[cfg(test)]
#[path = "answers_tests.rs"]
mod tests;
