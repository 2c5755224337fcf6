//! `swapsight doctor`: swapsight's figures beside the same figures from the
//! OS's own tools, read at the same moment, and where they disagree.
//!
//! The parts, each apart so the pure ones are tested on every platform:
//! - [`linux`] and [`macos`]: parsers of the tools' output (`free -b`,
//!   `smaps_rollup`, `swapon`; `footprint`, `top`, `vm_stat`, `sysctl`,
//!   `memory_pressure`, `sw_vers`), pure functions of captured text;
//! - [`tools`]: finding and running a tool (a timeout, a cap on its output;
//!   a missing tool is a finding, never an error);
//! - [`child`]: the process that holds a known amount of touched memory;
//! - [`examine`]: the run itself — one probe sample, the tools, a second
//!   probe sample — giving a [`Report`] of [`Row`]s judged by [`judge`].
//!
//! What each row compares and its tolerance: `docs/doctor.md`.

use serde::Serialize;

pub mod child;
mod examine;
pub mod linux;
pub mod macos;
pub mod tools;

pub use examine::{examine, Options};

/// What a figure is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
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
    pub abs: f64,
    pub pct: f64,
}

impl Tolerance {
    pub const fn new(abs: f64, pct: f64) -> Tolerance {
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
    pub unit: Unit,
    /// swapsight's reading nearer to the tool's, of the two taken around it.
    #[serde(serialize_with = "whole")]
    pub swapsight: Option<f64>,
    /// swapsight's readings before and after the tool ran: a figure that
    /// moved while the tool read it is judged against the whole span.
    #[serde(serialize_with = "whole")]
    pub swapsight_before: Option<f64>,
    #[serde(serialize_with = "whole")]
    pub swapsight_after: Option<f64>,
    #[serde(serialize_with = "whole")]
    pub tool: Option<f64>,
    /// `tool − swapsight`.
    #[serde(serialize_with = "whole")]
    pub difference: Option<f64>,
    pub tolerance: Tolerance,
    /// `tolerance` in words: `±8.0 MB + 2 %`.
    pub tolerance_text: String,
    pub status: Status,
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
    pub before: f64,
    pub after: f64,
}

impl Bracket {
    pub fn new(before: f64, after: f64) -> Bracket {
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
    Value(T),
    /// Not read, and why (a missing tool, a denied process).
    Unreadable(String),
}

impl<T> Reading<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reading<U> {
        match self {
            Reading::Value(v) => Reading::Value(f(v)),
            Reading::Unreadable(why) => Reading::Unreadable(why),
        }
    }

    pub fn and_then<U>(self, f: impl FnOnce(T) -> Reading<U>) -> Reading<U> {
        match self {
            Reading::Value(v) => f(v),
            Reading::Unreadable(why) => Reading::Unreadable(why),
        }
    }

    pub fn ok(self) -> Option<T> {
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
    pub pid: u32,
    pub size_bytes: u64,
}

/// A tool the doctor looked for and did not find.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingTool {
    pub tool: String,
    pub why: String,
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
    pub child: Option<ChildInfo>,
    pub rows: Vec<Row>,
    /// Tools not found (their rows are unreadable).
    pub missing_tools: Vec<MissingTool>,
    /// How long the tools took, from the first probe sample to the second.
    pub span_ms: u64,
}

impl Report {
    /// Whether any figure is off (`--strict` fails).
    pub fn any_off(&self) -> bool {
        self.rows.iter().any(|r| r.status == Status::Off)
    }

    pub fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    /// The table a person reads (and pastes into a bug report).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "swapsight doctor on {} (kernel {}, {}); the tools read within {} ms\n",
            clean_text(&self.os_version, 120),
            clean_text(&self.kernel, 80),
            clean_text(&self.os, 40),
            self.span_ms
        ));
        if let Some(c) = self.child {
            out.push_str(&format!(
                "child: pid {} holding {} of touched memory\n",
                c.pid,
                format_bytes(c.size_bytes as f64)
            ));
        }
        out.push('\n');
        let header = [
            "figure",
            "swapsight",
            "tool",
            "difference",
            "tolerance",
            "",
            "read with",
        ];
        let mut cells: Vec<[String; 7]> = vec![header.map(String::from)];
        for r in &self.rows {
            cells.push([
                clean_text(&r.figure, 60),
                r.swapsight.map_or("-".into(), |v| show(v, r.unit)),
                r.tool.map_or("-".into(), |v| show(v, r.unit)),
                r.difference.map_or("-".into(), |v| show_signed(v, r.unit)),
                r.tolerance_text.clone(),
                status_word(r.status).into(),
                clean_text(&r.tool_name, 80),
            ]);
        }
        let widths: Vec<usize> = (0..7)
            .map(|i| {
                cells
                    .iter()
                    .map(|c| c[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for c in &cells {
            let mut line = String::new();
            for (i, cell) in c.iter().enumerate() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                // Figures right-aligned, words left-aligned.
                if (1..=3).contains(&i) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if i + 1 < c.len() {
                        line.push_str(&" ".repeat(pad));
                    }
                }
                if i + 1 < c.len() {
                    line.push_str("  ");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let notes: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.note.is_some() && r.status != Status::Ok)
            .collect();
        if !notes.is_empty() {
            out.push('\n');
            for r in notes {
                out.push_str(&format!(
                    "{} ({}): {}\n",
                    clean_text(&r.figure, 60),
                    status_word(r.status),
                    clean_text(r.note.as_deref().unwrap_or(""), 300)
                ));
            }
        }
        if !self.missing_tools.is_empty() {
            out.push('\n');
            for m in &self.missing_tools {
                out.push_str(&format!(
                    "missing tool: {} ({})\n",
                    clean_text(&m.tool, 40),
                    clean_text(&m.why, 200)
                ));
            }
        }
        out.push_str(&format!(
            "\n{} ok, {} off, {} unreadable, {} for reference\n",
            self.count(Status::Ok),
            self.count(Status::Off),
            self.count(Status::Unreadable),
            self.count(Status::Info)
        ));
        out
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Off => "OFF",
        Status::Info => "info",
        Status::Unreadable => "unreadable",
    }
}

fn show(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Bytes => format_bytes(v),
        Unit::Percent => format!("{v:.1} %"),
    }
}

fn show_signed(v: f64, unit: Unit) -> String {
    let sign = if v > 0.0 { "+" } else { "" };
    format!("{sign}{}", show(v, unit))
}

/// Bytes to the precision a comparison needs: `1.23 GB`, `256.0 MB`,
/// `12 KB`, `512 B` (binary units, as the rest of swapsight shows them).
pub fn format_bytes(b: f64) -> String {
    const KIB: f64 = 1024.0;
    const MIB: f64 = KIB * 1024.0;
    const GIB: f64 = MIB * 1024.0;
    let a = b.abs();
    if !a.is_finite() {
        "?".into()
    } else if a >= GIB {
        format!("{:.2} GB", b / GIB)
    } else if a >= MIB {
        format!("{:.1} MB", b / MIB)
    } else if a >= KIB {
        format!("{:.0} KB", b / KIB)
    } else {
        format!("{b:.0} B")
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Text from outside (a tool's words, a process name) as it may reach a
/// terminal: control and bidi characters as `?` (the house rule,
/// [`crate::text::is_unsafe`]), at most `max` characters.
pub fn clean_text(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).map(crate::text::safe_char).collect();
    if s.chars().nth(max).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
