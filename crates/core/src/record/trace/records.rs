//! The records of a trace, one a line: the header that names the format and
//! its schema, the lines after it, and the bounds a record's times are held
//! to (its byte counts': [`crate::util::units::MAX_BYTES`]).

use serde::{Deserialize, Serialize};

use crate::probe::{HostInfo, Sample};
use crate::step::detect::{DetectorConfig, Flag};
use crate::step::forecast::{Forecast, ForecastConfig};
use crate::step::pressure::PressureConfig;

/// `format` field of the header line.
pub const FORMAT: &str = "swapsight-trace";
/// Schema version; readers accept this and older.
pub const SCHEMA: u32 = 1;
/// Longest time a trace may span: 100 years, in ms.
pub const MAX_T_MS: u64 = 100 * 366 * 24 * 3600 * 1000;
/// Latest wall-clock start: 9999-12-31T23:59:59.999Z, in ms since the epoch.
pub const MAX_START_UNIX_MS: u64 = 253_402_300_799_999;

/// First line of every trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`], `swapsight-trace`.
    pub format: String,
    /// The schema it is written in ([`SCHEMA`]); a reader refuses a newer one.
    pub schema: u32,
    /// The host recorded.
    pub host: HostInfo,
    /// Time between samples.
    pub interval_ms: u64,
    /// Wall-clock start, ms since the Unix epoch; every `t_ms` counts from it.
    pub start_unix_ms: u64,
    /// The command run under `record`/`guard`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The root of the watched tree (the command's pid, or `--pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_pid: Option<u32>,
    /// How many of the largest processes each sample keeps besides the watched tree.
    #[serde(default)]
    pub top_n: usize,
    /// The detector's settings in force.
    #[serde(default)]
    pub detector: DetectorConfig,
    /// Thresholds of the Linux pressure level in force.
    #[serde(default)]
    pub pressure: PressureConfig,
    /// Why the samples carry no pressure (no PSI here); absent when they do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_absent: Option<String>,
    /// The forecaster's settings in force (with the guard's budget).
    #[serde(default)]
    pub forecast: ForecastConfig,
    /// Which tool wrote it, e.g. `swapsight 0.1.0 record`.
    #[serde(default)]
    pub writer: String,
}

/// What a run's footprint is of: the tree of a command or pid it watched,
/// or the whole machine. The header says which — never a sample, whose
/// `watched` list is empty both in a machine recording and once the watched
/// tree has ended (an OOM-killed pipeline, a Python script past its exit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Watching {
    /// `record`/`guard` of a command or `--pid`: the run is that tree.
    Tree,
    /// No command, no pid: the run is the machine.
    #[default]
    Machine,
}

impl Header {
    /// Whether the trace watched a tree or the machine.
    pub fn watching(&self) -> Watching {
        if self.watch_pid.is_some() || self.command.is_some() {
            Watching::Tree
        } else {
            Watching::Machine
        }
    }

    pub(crate) fn new(host: HostInfo, interval_ms: u64, start_unix_ms: u64) -> Self {
        Header {
            format: FORMAT.into(),
            schema: SCHEMA,
            host,
            interval_ms,
            start_unix_ms,
            command: None,
            watch_pid: None,
            top_n: 0,
            detector: DetectorConfig::default(),
            pressure: PressureConfig::default(),
            pressure_absent: None,
            forecast: ForecastConfig::default(),
            writer: format!("swapsight {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// One sample line: the probe's sample plus the watched pids at that tick.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSample {
    /// The sample (`t_ms`, `sys`, `procs`, `scope`).
    #[serde(flatten)]
    pub sample: Sample,
    /// Pids of the watched tree at this tick; empty when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watched: Vec<u32>,
    /// Time to trouble at this tick; absent when no limit is in sight at
    /// this rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Forecast>,
}

impl TraceSample {
    /// The sample as it is judged (`detect::judged`): inside the run's
    /// cgroup the scope's figures and the watched tree's footprints, else
    /// the host's and every process's — what the run's verdict, its phases
    /// and its replay all read.
    pub fn judged(&self) -> crate::step::detect::Judged {
        crate::step::detect::judged(
            &self.sample,
            &|pid| self.watched.contains(&pid),
            !self.watched.is_empty(),
        )
    }

    /// Σ footprints of the watched tree at this sample: 0 once the tree has
    /// ended. A machine recording has no tree: there it is the largest
    /// process's footprint (`all = false`) or every kept process's sum.
    pub fn run_footprint(&self, watching: Watching, all: bool) -> u64 {
        let fps = self.sample.processes.iter();
        match watching {
            Watching::Tree => crate::util::units::saturating_sum(
                fps.filter(|p| self.watched.contains(&p.pid))
                    .map(|p| p.footprint_bytes),
            ),
            Watching::Machine if all => {
                crate::util::units::saturating_sum(fps.map(|p| p.footprint_bytes))
            }
            Watching::Machine => fps.map(|p| p.footprint_bytes).max().unwrap_or(0),
        }
    }
}

/// Something that happened: the command started or exited, the guard
/// stopped it, the baseline was reset…
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// When (the time of the last sample).
    pub t_ms: u64,
    /// `command-start`, `command-exit`, `guard-wait`, `guard-stop`,
    /// `recording-stop`, `baseline-reset`, …
    pub kind: String,
    /// What happened, in words.
    pub message: String,
    /// The process it is about, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The exit code of a command that exited with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

/// A phase mark: the phase `name` starts at `t_ms` (and the one before it
/// ends), or, with `end`, the current phase ends. Added in schema 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// When, ms since the start.
    pub t_ms: u64,
    /// The phase that starts; with `end`, the one that ends (empty when
    /// none was named or current).
    pub name: String,
    /// The current phase ends here (no new one starts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub end: bool,
}

/// A named figure at an instant — what the PyTorch allocator holds, a
/// queue's length — written by `swapsight.counter()` or `swapsight counter`
/// through the mark path. Added in schema 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    /// When, ms since the start.
    pub t_ms: u64,
    /// The counter's name (`mps.driver_allocated`, `queue`).
    pub name: String,
    /// Its value at that instant.
    pub value: f64,
    /// What `value` counts (`bytes`, `items`, `%`, …).
    #[serde(default = "bytes_unit")]
    pub unit: String,
}

fn bytes_unit() -> String {
    "bytes".into()
}

/// One line of a trace.
// Samples are nearly every line of a trace, and the largest variant: boxing
// them, as the lint suggests, would allocate once a line for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    /// The first line: the host and the settings in force.
    Header(Header),
    /// One tick.
    Sample(TraceSample),
    /// The live detector raised or cleared a state.
    Flag(Flag),
    /// Something happened.
    Event(Event),
    /// A phase starts or ends.
    Mark(Mark),
    /// A named figure at an instant.
    Counter(Counter),
}
