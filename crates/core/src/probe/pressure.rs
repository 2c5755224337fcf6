//! The pressure figures a sample carries, as the kernel gives them: Linux's
//! PSI lines (`/proc/pressure/memory`, Documentation/accounting/psi.rst)
//! and macOS's level (`kern.memorystatus_vm_pressure_level`: 1 normal,
//! 2 warning, 4 critical, XNU `bsd/kern/kern_memorystatus_notify.c`). What
//! they mean over time — the level PSI makes, the level in force — is the
//! step's ([`crate::step::pressure`]).

use serde::{Deserialize, Serialize};

/// One PSI line (`some` or `full`): the share of wall time in % over the
/// last 10 s and 60 s, and the total stall time since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PsiLine {
    /// % of wall time stalled over the last 10 s (the kernel's `avg10=`).
    pub avg10: f64,
    /// % of wall time stalled over the last 60 s (the kernel's `avg60=`).
    pub avg60: f64,
    /// Total stall time in µs since boot (the kernel's `total=`).
    pub total_us: u64,
}

/// The three levels people know from Activity Monitor's memory graph.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// macOS level 1; on Linux, PSI below the warning threshold.
    #[default]
    Normal,
    /// macOS level 2; on Linux, PSI `some` held at or above the warning
    /// threshold.
    Warning,
    /// macOS level 4; on Linux, PSI `some` or `full` held at or above a
    /// critical threshold.
    Critical,
}

impl Level {
    /// Every level, least severe first (the order of `Ord`).
    pub const ALL: [Level; 3] = [Level::Normal, Level::Warning, Level::Critical];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Level::Normal => "normal",
            Level::Warning => "warning",
            Level::Critical => "critical",
        }
    }

    /// The macOS value of the level (`kern.memorystatus_vm_pressure_level`,
    /// `DISPATCH_MEMORYPRESSURE_*`): 1, 2, 4. `/metrics` exports it on both
    /// OSes, so one alert rule serves both.
    pub fn value(self) -> u8 {
        match self {
            Level::Normal => 1,
            Level::Warning => 2,
            Level::Critical => 4,
        }
    }

    /// The level of a `DISPATCH_MEMORYPRESSURE_*` / `NOTE_MEMORYSTATUS_
    /// PRESSURE_*` flag (what `kern.memorystatus_vm_pressure_level` and a
    /// `DISPATCH_SOURCE_TYPE_MEMORYPRESSURE` source answer): 1, 2, 4;
    /// `None` for anything else — an unknown value is not normal.
    pub fn from_dispatch(flag: u32) -> Option<Level> {
        match flag {
            1 => Some(Level::Normal),
            2 => Some(Level::Warning),
            4 => Some(Level::Critical),
            _ => None,
        }
    }

    /// The level of the events pending on a macOS memory-pressure dispatch
    /// source (`dispatch_source_get_data`): libdispatch ORs the flags of
    /// events that arrived before the handler ran, which says nothing of
    /// their order. One flag is that level; several are resolved by
    /// `current` — the kernel's level now, which is the latest — and only
    /// without it by the highest flag.
    pub fn from_dispatch_data(
        data: usize,
        current: impl FnOnce() -> Option<Level>,
    ) -> Option<Level> {
        let flags: Vec<Level> = [4u32, 2, 1]
            .into_iter()
            .filter(|&f| data & f as usize != 0)
            .filter_map(Level::from_dispatch)
            .collect();
        match flags.as_slice() {
            [] => None,
            [one] => Some(*one),
            [highest, ..] => current().or(Some(*highest)),
        }
    }

    /// Index in [`Level::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "normal" => Ok(Level::Normal),
            "warning" => Ok(Level::Warning),
            "critical" => Ok(Level::Critical),
            _ => Err(format!(
                "'{s}' is not a pressure level (normal, warning or critical)"
            )),
        }
    }
}

/// The pressure figures of one tick. Fields may be added in later versions.
/// A sample holds this only where the OS gave pressure figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    /// Linux PSI `some`: some tasks stalled on memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub some: Option<PsiLine>,
    /// Linux PSI `full`: all non-idle tasks stalled at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full: Option<PsiLine>,
    /// macOS: the kernel's own level (`kern.memorystatus_vm_pressure_level`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_level: Option<Level>,
    /// The level in force at this tick: macOS the kernel's, Linux derived
    /// from PSI by [`crate::step::pressure::PressureGauge`]. Filled by the monitor, not the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
}
