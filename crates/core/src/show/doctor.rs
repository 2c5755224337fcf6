//! `swapsight doctor`: swapsight's figures beside the same figures from the
//! OS's own tools, read at the same moment, and where they disagree.
//!
//! The parts, each apart so the pure ones are tested on every platform:
//! - [`linux`] and [`macos`]: parsers of the tools' output (`free -b`,
//!   `smaps_rollup`, `swapon`; `footprint`, `top`, `vm_stat`, `sysctl`,
//!   `memory_pressure`, `sw_vers`), pure functions of captured text;
//! - [`tools`]: finding a tool at the absolute path its OS installs it at
//!   (never on `$PATH`) and running it contained (a timeout, its own
//!   process group, a cap on its output; a missing tool is a finding, never
//!   an error);
//! - [`child`]: the process that holds a known amount of touched memory;
//! - [`examine`]: the run itself — one probe sample, the tools, a second
//!   probe sample — giving a [`Report`] of [`Row`]s judged by [`judge`];
//!   what it reads on each OS is in `examine/on_linux.rs` and
//!   `examine/on_macos.rs`;
//! - [`names`]: the rows' figure and tool names on a Mac, which tests use;
//! - `text`: the report as a table a person reads.
//!
//! What each row compares and its tolerance: `docs/doctor.md`.

use serde::Serialize;

pub mod child;
mod examine;
pub mod linux;
pub mod macos;
pub mod names;
mod text;
pub mod tools;

pub use examine::{examine, Options};
use text::{clean_text, format_bytes, trim_float};

/// What a figure is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// A size in bytes.
    Bytes,
    /// Percentage points (free memory in percent).
    Percent,
}

/// The verdict on one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Within the row's tolerance.
    Ok,
    /// Outside it: `--strict` fails.
    Off,
    /// Shown for reference: swapsight has no figure of that meaning.
    Info,
    /// One side could not be read (a missing tool, another user's process);
    /// `note` says why.
    Unreadable,
}

/// How far apart two readings of a figure may be: `bytes` (or percentage
/// points) plus `pct` % of the tool's figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    pub(crate) abs: f64,
    pub(crate) pct: f64,
}

impl Tolerance {
    pub(crate) const fn new(abs: f64, pct: f64) -> Tolerance {
        Tolerance { abs, pct }
    }

    /// The allowed difference around `tool`.
    pub fn allowed(&self, tool: f64) -> f64 {
        self.abs + self.pct / 100.0 * tool.abs()
    }

    fn describe(&self, unit: Unit) -> String {
        let abs = match unit {
            Unit::Bytes => format_bytes(self.abs),
            Unit::Percent => format!("{} pt", trim_float(self.abs)),
        };
        match (self.abs > 0.0, self.pct > 0.0) {
            (true, true) => format!("±{abs} + {} %", trim_float(self.pct)),
            (false, true) => format!("±{} %", trim_float(self.pct)),
            (true, false) => format!("±{abs}"),
            (false, false) => "exact".into(),
        }
    }
}

/// One figure read both ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// What is compared: `child footprint`, `swap used`.
    pub figure: String,
    /// The tool and the field read: `footprint -j (phys_footprint)`.
    pub tool_name: String,
    pub(crate) unit: Unit,
    /// swapsight's reading nearer to the tool's, of the two taken around it.
    #[serde(serialize_with = "whole")]
    pub swapsight: Option<f64>,
    /// swapsight's readings before and after the tool ran: a figure that
    /// moved while the tool read it is judged against the whole span.
    #[serde(serialize_with = "whole")]
    pub swapsight_before: Option<f64>,
    #[serde(serialize_with = "whole")]
    pub(crate) swapsight_after: Option<f64>,
    #[serde(serialize_with = "whole")]
    pub(crate) tool: Option<f64>,
    /// `tool − swapsight`.
    #[serde(serialize_with = "whole")]
    pub difference: Option<f64>,
    pub(crate) tolerance: Tolerance,
    /// `tolerance` in words: `±8.0 MiB + 2 %`.
    pub tolerance_text: String,
    pub(crate) status: Status,
    /// Why a figure is unreadable or only informative.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A figure as JSON: a whole number as an integer (bytes are whole), any
/// other as it is.
fn whole<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(x as i64),
        Some(x) => s.serialize_f64(x),
        None => s.serialize_none(),
    }
}

/// swapsight's two readings of a figure, before and after the tool's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bracket {
    pub(crate) before: f64,
    pub(crate) after: f64,
}

impl Bracket {
    pub(crate) fn new(before: f64, after: f64) -> Bracket {
        Bracket { before, after }
    }

    /// A figure that cannot have moved (memory size), read once.
    pub fn once(v: f64) -> Bracket {
        Bracket::new(v, v)
    }

    /// The reading nearer to `tool`, and how far `tool` lies outside the span
    /// of the two (0 inside it).
    fn nearest(&self, tool: f64) -> (f64, f64) {
        let (lo, hi) = if self.before <= self.after {
            (self.before, self.after)
        } else {
            (self.after, self.before)
        };
        let outside = if tool < lo {
            lo - tool
        } else if tool > hi {
            tool - hi
        } else {
            0.0
        };
        let near = if (tool - self.before).abs() <= (tool - self.after).abs() {
            self.before
        } else {
            self.after
        };
        (near, outside)
    }
}

/// What one side of a row gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading<T> {
    /// The figure read.
    Value(T),
    /// Not read, and why (a missing tool, a denied process).
    Unreadable(String),
}

impl<T> Reading<T> {
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Reading<U> {
        match self {
            Reading::Value(v) => Reading::Value(f(v)),
            Reading::Unreadable(why) => Reading::Unreadable(why),
        }
    }

    pub(crate) fn and_then<U>(self, f: impl FnOnce(T) -> Reading<U>) -> Reading<U> {
        match self {
            Reading::Value(v) => f(v),
            Reading::Unreadable(why) => Reading::Unreadable(why),
        }
    }

    pub(crate) fn ok(self) -> Option<T> {
        match self {
            Reading::Value(v) => Some(v),
            Reading::Unreadable(_) => None,
        }
    }
}

/// The row of a figure: ok when the tool's reading lies within `tolerance`
/// of the span of swapsight's two readings, off otherwise; unreadable when
/// either side is.
pub fn judge(
    figure: &str,
    tool_name: &str,
    unit: Unit,
    swapsight: Reading<Bracket>,
    tool: Reading<f64>,
    tolerance: Tolerance,
) -> Row {
    let mut row = Row {
        figure: figure.into(),
        tool_name: tool_name.into(),
        unit,
        swapsight: None,
        swapsight_before: None,
        swapsight_after: None,
        tool: None,
        difference: None,
        tolerance,
        tolerance_text: tolerance.describe(unit),
        status: Status::Unreadable,
        note: None,
    };
    let mut why = Vec::new();
    let bracket = match swapsight {
        Reading::Value(b) if b.before.is_finite() && b.after.is_finite() => {
            row.swapsight_before = Some(b.before);
            row.swapsight_after = Some(b.after);
            row.swapsight = Some(b.before);
            Some(b)
        }
        Reading::Value(_) => {
            why.push("swapsight's figure is not a number".to_string());
            None
        }
        Reading::Unreadable(w) => {
            why.push(format!("swapsight: {w}"));
            None
        }
    };
    let tool = match tool {
        Reading::Value(t) if t.is_finite() => {
            row.tool = Some(t);
            Some(t)
        }
        Reading::Value(_) => {
            why.push(format!("{tool_name}: not a number"));
            None
        }
        Reading::Unreadable(w) => {
            why.push(w);
            None
        }
    };
    if let (Some(b), Some(t)) = (bracket, tool) {
        let (near, outside) = b.nearest(t);
        row.swapsight = Some(near);
        row.difference = Some(t - near);
        row.status = if outside <= tolerance.allowed(t) {
            Status::Ok
        } else {
            Status::Off
        };
    } else {
        row.note = Some(clean_text(&why.join("; "), 300));
    }
    row
}

/// A row shown for reference: the tool's figure (and swapsight's, if any)
/// with no verdict, and why.
pub fn info(
    figure: &str,
    tool_name: &str,
    unit: Unit,
    swapsight: Option<f64>,
    tool: Reading<f64>,
    why: &str,
) -> Row {
    let (tool, status, note) = match tool {
        Reading::Value(t) => (Some(t), Status::Info, why.to_string()),
        Reading::Unreadable(w) => (None, Status::Unreadable, w),
    };
    Row {
        figure: figure.into(),
        tool_name: tool_name.into(),
        unit,
        swapsight,
        swapsight_before: swapsight,
        swapsight_after: swapsight,
        tool,
        difference: swapsight.zip(tool).map(|(s, t)| t - s),
        tolerance: Tolerance::new(0.0, 0.0),
        tolerance_text: "-".into(),
        status,
        note: Some(clean_text(&note, 300)),
    }
}

/// The process the doctor started, and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ChildInfo {
    pub(crate) pid: u32,
    pub(crate) size_bytes: u64,
    /// The doctor's own resident anonymous memory at the fork, which the
    /// child maps too ([`child::Held::inherited`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inherited_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A tool the doctor looked for and did not find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingTool {
    pub(crate) tool: String,
    pub(crate) why: String,
}

/// A tool the doctor ran, and the binary that answered (never one found on
/// `$PATH`: see [`tools`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsedTool {
    pub(crate) tool: String,
    pub(crate) path: String,
}

/// The doctor's findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// `linux`, `macos`.
    pub os: String,
    /// `Debian GNU/Linux 12 (bookworm)`, `macOS 14.4.1 (23E224)`.
    pub os_version: String,
    /// Kernel release (`uname -r`) or Darwin version.
    pub kernel: String,
    pub(crate) child: Option<ChildInfo>,
    pub(crate) rows: Vec<Row>,
    /// Tools not found (their rows are unreadable).
    pub missing_tools: Vec<MissingTool>,
    /// The tools that ran, each with the binary that answered.
    pub tools: Vec<UsedTool>,
    /// How long the tools took, from the first probe sample to the second.
    pub span_ms: u64,
}

impl Report {
    /// Whether any figure is off (`--strict` fails).
    pub fn any_off(&self) -> bool {
        self.rows.iter().any(|r| r.status == Status::Off)
    }

    /// How many rows have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }
}

#[cfg(test)]
#[path = "doctor_tests.rs"]
mod tests;
