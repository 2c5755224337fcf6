//! Several runs side by side — the table the source articles built across
//! strategies (eager, CPU offload, staged): one row per run with its
//! duration, peak watched footprint, swap growth, minimum free memory,
//! verdict and when it was first flagged. Text, Markdown (pastes into an
//! issue or a notebook), CSV and JSON from the same rows.

use crate::step::pressure::{Level, LevelTimes};
use serde::Serialize;

use crate::judge::report::Report;
use crate::record::phases::spans;
use crate::record::trace::{Header, MarkList, Record, Trace, TraceSample, Watching};
use crate::step::detect::{Flag, State};
use crate::util::text::text_cell;
use crate::util::units::{format_bytes, format_duration, format_growth};

/// Fewest and most runs `compare` takes.
pub const MIN_RUNS: usize = 2;
/// Most runs `compare` takes.
pub const MAX_RUNS: usize = 20;

/// One run's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RunRow {
    /// The run's name in the comparison (its trace's, cleaned).
    pub label: String,
    /// The host the run was recorded on.
    pub host: String,
    /// How long the run lasted, in ms.
    pub duration_ms: u64,
    /// Peak of Σ footprints of the watched tree; without a watched tree, the
    /// largest single process's peak.
    pub peak_footprint_bytes: u64,
    /// Swap growth over the run (its report's).
    pub swap_growth_bytes: i64,
    /// The lowest free memory of the run, in %.
    pub min_free_pct: f64,
    /// The run's verdict (its report's).
    pub verdict: State,
    /// When the first process was flagged (not `fits`), from the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_flagged_ms: Option<u64>,
    /// The run's phase names in order (empty without marks).
    pub phases: Vec<String>,
    /// Peak and last value of each counter the run wrote (its report's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<crate::record::counters::CounterRow>,
    /// Memory pressure over the run: the highest level and the time at
    /// each; absent where the OS gave no pressure figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::step::pressure::LevelTimes>,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// One row a run, in the order given.
    pub runs: Vec<RunRow>,
    /// The runs come from more than one machine: figures compare less well.
    pub hosts_differ: bool,
    /// Every run carries the same phases, in the same order.
    pub same_phases: bool,
}

/// Footprint of the run at one sample: Σ of the watched tree (0 once it
/// has ended), or the largest process's in a machine recording; which of
/// the two, the header says ([`Watching`]).
pub fn watched_footprint(s: &TraceSample, watching: Watching) -> u64 {
    s.run_footprint(watching, false)
}

/// One row from a trace and its report.
pub fn row(label: &str, trace: &Trace, report: &Report) -> RunRow {
    let mut fold = RowFold::for_header(trace.header());
    for s in &trace.samples {
        fold.sample(s);
    }
    for f in &trace.flags {
        fold.flag(f);
    }
    fold.marks = MarkList {
        marks: trace.marks.clone(),
        dropped: trace.marks_dropped,
    };
    fold.row(label, trace.header(), report)
}

/// What a run's row needs besides its report, folded out of the records as
/// a trace streams (see [`crate::judge::report::report_stream`]'s `each`).
#[derive(Debug, Clone, Default)]
pub struct RowFold {
    /// Time and swap in use at the first sample.
    pub first: Option<(u64, u64)>,
    /// Time of the last sample.
    pub last_ms: u64,
    pub(crate) peak_footprint_bytes: u64,
    /// The earliest flag that was not `fits`.
    pub first_flag_ms: Option<u64>,
    pub(crate) marks: MarkList,
    /// The header's word on what the run is.
    pub watching: Watching,
}

impl RowFold {
    /// A fold for the trace with this header.
    pub fn for_header(header: &Header) -> Self {
        RowFold {
            watching: header.watching(),
            ..RowFold::default()
        }
    }

    /// Takes the next record.
    pub fn push(&mut self, r: &Record) {
        match r {
            Record::Sample(s) => self.sample(s),
            Record::Flag(f) => self.flag(f),
            Record::Mark(m) => self.marks.push(m.clone()),
            Record::Header(_) | Record::Event(_) | Record::Counter(_) => {}
        }
    }

    /// Takes the next sample.
    pub fn sample(&mut self, s: &TraceSample) {
        self.first
            .get_or_insert((s.sample.t_ms, s.sample.system.swap_used_bytes));
        self.last_ms = s.sample.t_ms;
        let fp = watched_footprint(s, self.watching);
        self.peak_footprint_bytes = self.peak_footprint_bytes.max(fp);
    }

    /// Takes the next flag.
    pub fn flag(&mut self, f: &Flag) {
        if f.state != State::Fits {
            self.first_flag_ms = Some(self.first_flag_ms.map_or(f.t_ms, |t| t.min(f.t_ms)));
        }
    }

    /// Time of the first sample.
    pub fn t0(&self) -> u64 {
        self.first.map_or(0, |(t, _)| t)
    }

    /// The run's phase boundaries, from its start ([`boundaries`]).
    pub fn boundaries(&self) -> Vec<f64> {
        boundaries_of(&self.marks.marks, self.t0(), self.last_ms)
    }

    /// The row, with the run's report.
    pub fn row(&self, label: &str, header: &Header, report: &Report) -> RunRow {
        let first_flagged = self
            .first_flag_ms
            .into_iter()
            .chain(report.processes.iter().filter_map(|p| p.first_flag_ms))
            .min();
        RunRow {
            // A label is often a file name, which may hold anything.
            label: crate::util::text::clean(label).into_owned(),
            host: header.host.hostname.clone(),
            duration_ms: report.duration_ms,
            peak_footprint_bytes: self.peak_footprint_bytes,
            swap_growth_bytes: report.swap_growth_bytes,
            min_free_pct: report.min_free_pct,
            verdict: report.verdict,
            first_flagged_ms: first_flagged.map(|t| t.saturating_sub(self.t0())),
            phases: spans(&self.marks.marks, self.last_ms)
                .into_iter()
                .map(|p| p.name)
                .collect(),
            counters: report.counters.clone(),
            pressure: report.pressure.map(|p| p.levels),
        }
    }
}

/// The comparison of `rows`.
pub fn compare(runs: Vec<RunRow>) -> Comparison {
    let hosts_differ = runs.windows(2).any(|w| w[0].host != w[1].host);
    let same_phases = runs.first().is_some_and(|f| !f.phases.is_empty())
        && runs.windows(2).all(|w| w[0].phases == w[1].phases);
    Comparison {
        runs,
        hosts_differ,
        same_phases,
    }
}

/// A run's phase boundaries, from its start: start and end of each phase.
pub fn boundaries(trace: &Trace) -> Vec<f64> {
    let t0 = trace.samples.first().map_or(0, |s| s.sample.t_ms);
    let last = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    boundaries_of(&trace.marks, t0, last)
}

fn boundaries_of(marks: &[crate::record::trace::Mark], t0: u64, last: u64) -> Vec<f64> {
    spans(marks, last)
        .iter()
        .flat_map(|p| [p.start_ms, p.end_ms])
        .map(|t| t.saturating_sub(t0) as f64 / 1000.0)
        .collect()
}

/// Maps a time of a run (seconds from its start) onto a reference run's
/// timeline so that their phase boundaries line up: linear within each
/// phase, shifted before the first and after the last. Both lists are
/// [`boundaries`] of runs with the same phases (same length, nondecreasing).
pub fn align(t: f64, own: &[f64], reference: &[f64]) -> f64 {
    let (Some(&first), Some(&last)) = (own.first(), own.last()) else {
        return t;
    };
    if own.len() != reference.len() {
        return t;
    }
    if t <= first {
        return t - first + reference[0];
    }
    if t >= last {
        return t - last + reference[reference.len() - 1];
    }
    let i = own.partition_point(|&b| b <= t).saturating_sub(1);
    let (a, b) = (own[i], own[i + 1]);
    let (ra, rb) = (reference[i], reference[i + 1]);
    if b > a {
        ra + (t - a) / (b - a) * (rb - ra)
    } else {
        ra
    }
}

/// `--format` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// An aligned table for a terminal.
    Text,
    /// A Markdown table.
    Markdown,
    /// The comparison as JSON.
    Json,
    /// One row a run, with each counter's peak as a column.
    Csv,
}

impl TableFormat {
    /// The format `--format` names: `text`, `md` (or `markdown`), `json`
    /// or `csv`; `None` for any other word.
    pub fn parse(s: &str) -> Option<TableFormat> {
        match s {
            "text" => Some(TableFormat::Text),
            "md" | "markdown" => Some(TableFormat::Markdown),
            "json" => Some(TableFormat::Json),
            "csv" => Some(TableFormat::Csv),
            _ => None,
        }
    }
}

const HEADINGS: [&str; 8] = [
    "run",
    "duration",
    "peak footprint",
    "swap growth",
    "min free",
    "verdict",
    "first flagged at",
    "pressure",
];

fn secs(ms: u64) -> String {
    format_duration(std::time::Duration::from_millis(ms))
}

fn cells(r: &RunRow) -> [String; 8] {
    [
        r.label.clone(),
        secs(r.duration_ms),
        format_bytes(r.peak_footprint_bytes as i64),
        format_growth(r.swap_growth_bytes),
        format!("{:.0} %", r.min_free_pct),
        r.verdict.label().to_string(),
        r.first_flagged_ms.map_or_else(|| "–".to_string(), secs),
        pressure_cell(r.pressure.as_ref()),
    ]
}

/// `normal`, or the highest level and the time above normal:
/// `critical (12s above normal)`; `–` without pressure figures.
fn pressure_cell(p: Option<&LevelTimes>) -> String {
    match p {
        None => "–".to_string(),
        Some(p) if p.peak == Level::Normal => "normal".to_string(),
        Some(p) => format!(
            "{} ({} above normal)",
            p.peak.as_str(),
            secs(p.warning_ms.saturating_add(p.critical_ms))
        ),
    }
}

impl Comparison {
    /// A note under the table: hosts that differ.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.hosts_differ {
            let mut hosts: Vec<&str> = self.runs.iter().map(|r| r.host.as_str()).collect();
            hosts.dedup();
            notes.push(format!(
                "the runs come from different hosts ({}): memory, swap and free % are each machine's own",
                hosts.join(", ")
            ));
        }
        notes
    }

    /// The comparison in `format`.
    pub fn render(&self, format: TableFormat) -> String {
        match format {
            TableFormat::Text => self.to_text(),
            TableFormat::Markdown => self.to_markdown(),
            TableFormat::Json => {
                serde_json::to_string_pretty(self)
                    .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
                    + "\n"
            }
            TableFormat::Csv => self.to_csv(),
        }
    }

    pub(crate) fn to_text(&self) -> String {
        use std::fmt::Write;
        let rows: Vec<[String; 8]> = self.runs.iter().map(cells).collect();
        let mut widths = HEADINGS.map(|h| h.chars().count());
        for r in &rows {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cols: &[String]| {
            let mut s = String::new();
            for (i, (c, w)) in cols.iter().zip(widths).enumerate() {
                let pad = w.saturating_sub(c.chars().count());
                if i == 0 || i == 5 || i == 7 {
                    let _ = write!(s, "{c}{}", " ".repeat(pad));
                } else {
                    let _ = write!(s, "{}{c}", " ".repeat(pad));
                }
                if i + 1 < cols.len() {
                    s.push_str("  ");
                }
            }
            s.trim_end().to_string() + "\n"
        };
        let mut out = line(&HEADINGS.map(String::from));
        for r in &rows {
            out += &line(r);
        }
        for (label, peaks) in self.counter_peaks() {
            out += &format!("counters of {label}: {peaks}\n");
        }
        for n in self.notes() {
            out += &format!("note: {n}\n");
        }
        out
    }

    /// Each run with counters and its counters' peaks in words:
    /// `("eager", "pool peak 3.0 GiB; queue peak 12 items")`.
    fn counter_peaks(&self) -> Vec<(&str, String)> {
        self.runs
            .iter()
            .filter(|r| !r.counters.is_empty())
            .map(|r| {
                let peaks: Vec<String> = r
                    .counters
                    .iter()
                    .map(|c| {
                        format!(
                            "{} peak {}",
                            c.name,
                            crate::record::counters::figure(c.peak, &c.unit)
                        )
                    })
                    .collect();
                (r.label.as_str(), peaks.join("; "))
            })
            .collect()
    }

    pub(crate) fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|").replace(['\n', '\r'], " ");
        let mut out = format!("| {} |\n", HEADINGS.join(" | "));
        out += "|---|---:|---:|---:|---:|---|---:|---|\n";
        for r in &self.runs {
            let c = cells(r).map(|c| esc(&c));
            out += &format!("| {} |\n", c.join(" | "));
        }
        for (label, peaks) in self.counter_peaks() {
            out += &format!("\nCounters of {}: {}\n", esc(label), esc(&peaks));
        }
        for n in self.notes() {
            out += &format!("\n_Note: {}._\n", esc(&n));
        }
        out
    }

    /// One row a run, each counter (of any run) as a column of its peak:
    /// `counter_peak:NAME:UNIT`, empty for a run without it.
    pub(crate) fn to_csv(&self) -> String {
        let counters = self.counter_columns();
        let mut w = csv::Writer::from_writer(Vec::new());
        let fixed = [
            "run",
            "host",
            "duration_s",
            "peak_footprint_bytes",
            "swap_growth_bytes",
            "min_free_pct",
            "verdict",
            "first_flagged_s",
            "phases",
            "peak_pressure",
            "pressure_above_normal_s",
        ];
        let named = counters
            .iter()
            .map(|(name, unit)| text_cell(&format!("counter_peak:{name}:{unit}")).into_owned());
        let _ = w.write_record(fixed.iter().map(|c| c.to_string()).chain(named));
        for r in &self.runs {
            let pressure = r.pressure.as_ref();
            let peaks = counters.iter().map(|(name, unit)| {
                r.counters
                    .iter()
                    .find(|c| &c.name == name && &c.unit == unit)
                    .map(|c| c.peak.to_string())
                    .unwrap_or_default()
            });
            let _ = w.write_record(
                [
                    text_cell(&r.label).into_owned(),
                    text_cell(&r.host).into_owned(),
                    format!("{:.3}", r.duration_ms as f64 / 1000.0),
                    r.peak_footprint_bytes.to_string(),
                    r.swap_growth_bytes.to_string(),
                    format!("{:.2}", r.min_free_pct),
                    r.verdict.as_str().to_string(),
                    r.first_flagged_ms
                        .map(|t| format!("{:.3}", t as f64 / 1000.0))
                        .unwrap_or_default(),
                    text_cell(&r.phases.join(";")).into_owned(),
                    pressure
                        .map(|p| p.peak.as_str().to_string())
                        .unwrap_or_default(),
                    pressure
                        .map(|p| {
                            let ms = p.warning_ms.saturating_add(p.critical_ms);
                            format!("{:.3}", ms as f64 / 1000.0)
                        })
                        .unwrap_or_default(),
                ]
                .into_iter()
                .chain(peaks),
            );
        }
        w.into_inner()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Every (name, unit) of a counter in any run, in the order first seen,
    /// at most [`crate::record::counters::MAX_NAMES`].
    fn counter_columns(&self) -> Vec<(&str, &str)> {
        let mut columns: Vec<(&str, &str)> = Vec::new();
        for c in self.runs.iter().flat_map(|r| &r.counters) {
            let key = (c.name.as_str(), c.unit.as_str());
            if !columns.contains(&key) && columns.len() < crate::record::counters::MAX_NAMES {
                columns.push(key);
            }
        }
        columns
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
