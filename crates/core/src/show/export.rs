//! Exports: a trace (or a live tick) in the formats other tools read — CSV
//! for spreadsheets and pandas, Chrome trace JSON for ui.perfetto.dev,
//! Prometheus text for scrapers — and, behind the `plot` feature, a PNG or
//! SVG chart a person reads at a glance.
//!
//! Every exporter reads the same [`Trace`]; the states they show come from
//! the trace's own flag records (what the live detector said while the run
//! went on, with the whole machine in view), not from a replay over the
//! processes the trace kept. Column, series and metric names, with units,
//! are in `docs/exports.md`.

use std::collections::HashMap;
use std::io::Write;

use crate::record::trace::Trace;
use crate::step::detect::State;

#[cfg(feature = "plot")]
pub mod compare_plot;
pub mod csv;
/// Lines thinned to their pixels: the plots' and the live replay's.
pub(crate) mod decimate;
pub mod formats;
pub mod perfetto;
#[cfg(feature = "plot")]
pub mod plot;
pub mod prometheus;
pub mod remote_write;

pub use formats::{ExportFormat, ExportOptions};

/// The text formats' old name, kept for the fuzz targets and benches.
pub type Format = ExportFormat;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The output could not be written.
    #[error("cannot write the {format} output")]
    Io {
        /// The format being written (`csv`, `prometheus`, …).
        format: &'static str,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The trace holds no sample.
    #[error("the trace has no samples to export")]
    NoSamples,
    /// A chart side outside `plot::MIN_SIDE` to `plot::MAX_SIDE` pixels.
    #[error("invalid chart size {width}x{height}: {why}")]
    Size {
        /// The width asked for, in pixels.
        width: u32,
        /// The height asked for, in pixels.
        height: u32,
        /// What is wrong with it.
        why: String,
    },
    /// The chart could not be drawn or encoded.
    #[error("cannot draw the chart: {0}")]
    Draw(String),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] crate::record::trace::TraceError),
    /// JSONL asked of a read trace: that format is the trace file itself.
    #[error("{0} is the trace file itself, not drawn from a read trace")]
    NotDrawn(&'static str),
}

impl ExportError {
    pub(crate) fn io(format: &'static str) -> impl FnOnce(std::io::Error) -> ExportError {
        move |source| ExportError::Io { format, source }
    }
}

/// What the text exports need of a trace besides its samples, folded in a
/// first pass over it: the samples come again in a second, one at a time,
/// so that a trace of any size exports in bounded memory.
#[derive(Debug, Default)]
pub struct Skeleton {
    pub(crate) header: Option<crate::record::trace::Header>,
    pub(crate) flags: Vec<crate::step::detect::Flag>,
    pub(crate) events: Vec<crate::record::trace::Event>,
    pub(crate) marks: crate::record::trace::MarkList,
    /// Counter values, the first [`crate::record::trace::MAX_COUNTERS`] (the rest
    /// are counted in `counters_dropped`).
    pub counters: Vec<crate::record::trace::Counter>,
    pub(crate) counters_dropped: usize,
    /// Time and swap in use at the first sample.
    pub first: Option<(u64, u64)>,
    pub(crate) last_ms: u64,
    pub(crate) samples: usize,
    /// Every process's pid and first name, in order of first appearance.
    pub names: Vec<(u32, String)>,
    /// Every pid ever watched.
    pub watched: std::collections::HashSet<u32>,
    named: std::collections::HashSet<u32>,
}

impl Skeleton {
    /// The skeleton of a whole trace.
    pub fn of(trace: &Trace) -> Self {
        let mut k = Skeleton {
            header: trace.header.clone(),
            flags: trace.flags.clone(),
            events: trace.events.clone(),
            marks: crate::record::trace::MarkList {
                marks: trace.marks.clone(),
                dropped: trace.marks_dropped,
            },
            counters: trace.counters.clone(),
            counters_dropped: trace.counters_dropped,
            ..Skeleton::default()
        };
        for s in &trace.samples {
            k.sample(s);
        }
        k
    }

    /// Takes the next record of a first pass.
    pub fn push(&mut self, r: crate::record::trace::Record) {
        use crate::record::trace::Record;
        match r {
            Record::Header(h) => self.header = Some(h),
            Record::Sample(s) => self.sample(&s),
            Record::Flag(f) => self.flags.push(f),
            Record::Event(e) => self.events.push(e),
            Record::Mark(m) => self.marks.push(m),
            Record::Counter(c) if self.counters.len() < crate::record::trace::MAX_COUNTERS => {
                self.counters.push(c);
            }
            Record::Counter(_) => self.counters_dropped += 1,
        }
    }

    fn sample(&mut self, s: &crate::record::trace::TraceSample) {
        let t = s.sample.t_ms;
        self.first
            .get_or_insert((t, s.sample.system.swap_used_bytes));
        self.last_ms = t;
        self.samples += 1;
        self.watched.extend(s.watched.iter().copied());
        for p in &s.sample.processes {
            if self.named.insert(p.pid) {
                self.names.push((p.pid, p.name.to_string()));
            }
        }
    }

    /// The phases the marks describe.
    pub fn phases(&self) -> Vec<crate::record::phases::Phase> {
        crate::record::phases::spans(&self.marks.marks, self.last_ms)
    }
}

/// The samples of a second pass, one at a time: borrowed from a trace in
/// memory, or read again from the file.
pub type NextSample<'a> = dyn FnMut() -> Result<Option<std::borrow::Cow<'a, crate::record::trace::TraceSample>>, ExportError>
    + 'a;

/// The samples of a trace in memory, as a second pass yields them.
pub(crate) fn samples_of<'a>(
    trace: &'a Trace,
) -> impl FnMut()
    -> Result<Option<std::borrow::Cow<'a, crate::record::trace::TraceSample>>, ExportError>
       + 'a {
    let mut it = trace.samples.iter();
    move || Ok(it.next().map(std::borrow::Cow::Borrowed))
}

/// Writes `trace` as `format` with the default options (see
/// [`ExportFormat::write`]).
pub fn write(trace: &Trace, format: ExportFormat, out: &mut dyn Write) -> Result<(), ExportError> {
    format.write(trace, &ExportOptions::default(), out)
}

/// The state of each process over time, from the trace's flag records: a
/// state holds from the flag that raised it until the next flag for the same
/// pid. Processes without flags are `fits` throughout.
#[derive(Debug, Default)]
pub struct StateTimeline {
    /// Per pid, `(t_ms, state)` in time order.
    changes: HashMap<u32, Vec<(u64, State)>>,
}

impl StateTimeline {
    pub(crate) fn new(trace: &Trace) -> Self {
        Self::from_flags(&trace.flags)
    }

    /// The timeline of `flags` (in any order).
    pub fn from_flags<'a>(flags: impl IntoIterator<Item = &'a crate::step::detect::Flag>) -> Self {
        let mut changes: HashMap<u32, Vec<(u64, State)>> = HashMap::new();
        for f in flags {
            changes.entry(f.pid).or_default().push((f.t_ms, f.state));
        }
        for v in changes.values_mut() {
            v.sort_by_key(|&(t, _)| t);
        }
        StateTimeline { changes }
    }

    /// The state of `pid` at `t_ms` (a flag at `t_ms` counts).
    pub fn state_at(&self, pid: u32, t_ms: u64) -> State {
        let Some(v) = self.changes.get(&pid) else {
            return State::Fits;
        };
        let i = v.partition_point(|&(t, _)| t <= t_ms);
        if i == 0 {
            State::Fits
        } else {
            v[i - 1].1
        }
    }

    /// The last state of every flagged pid that is not `fits`.
    pub fn final_states(&self) -> Vec<(u32, State)> {
        let mut v: Vec<(u32, State)> = self
            .changes
            .iter()
            .filter_map(|(&pid, v)| v.last().map(|&(_, s)| (pid, s)))
            .filter(|&(_, s)| s != State::Fits)
            .collect();
        v.sort_unstable();
        v
    }
}

/// A stretch of time during which at least one process was in `state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub(crate) state: State,
    pub(crate) from_ms: u64,
    pub(crate) to_ms: u64,
}

/// The intervals, per non-`fits` state, during which any process was in that
/// state: a state raised at `t` lasts until its process's next flag, or until
/// the process was last seen (it exited, or the trace ends). Overlapping
/// intervals of one state are merged; sorted by state, then time.
pub fn state_intervals(trace: &Trace) -> Vec<Interval> {
    let mut last_seen: HashMap<u32, u64> = HashMap::new();
    for s in &trace.samples {
        for p in &s.sample.processes {
            last_seen.insert(p.pid, s.sample.t_ms);
        }
    }
    let end = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    intervals_of(&StateTimeline::new(trace), &last_seen, end)
}

/// [`state_intervals`] from a trace's timeline, when each process was last
/// seen and the last sample's time (what a streamed read keeps of them).
pub(crate) fn intervals_of(
    timeline: &StateTimeline,
    last_seen: &HashMap<u32, u64>,
    end: u64,
) -> Vec<Interval> {
    let mut raw: Vec<Interval> = Vec::new();
    for (pid, changes) in &timeline.changes {
        let until = last_seen.get(pid).copied().unwrap_or(end);
        for (i, &(t, state)) in changes.iter().enumerate() {
            if state == State::Fits {
                continue;
            }
            let to = changes.get(i + 1).map_or(until.max(t), |&(next, _)| next);
            raw.push(Interval {
                state,
                from_ms: t,
                to_ms: to,
            });
        }
    }
    raw.sort_by_key(|i| (i.state, i.from_ms, i.to_ms));
    let mut merged: Vec<Interval> = Vec::with_capacity(raw.len());
    for i in raw {
        match merged.last_mut() {
            Some(m) if m.state == i.state && i.from_ms <= m.to_ms => {
                m.to_ms = m.to_ms.max(i.to_ms);
            }
            _ => merged.push(i),
        }
    }
    merged
}

/// A process as the exports pick it: pid, last name, peak footprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picked {
    pub(crate) pid: u32,
    pub(crate) name: String,
    pub(crate) watched: bool,
    pub(crate) peak_footprint_bytes: u64,
}

/// The processes worth drawing: the watched tree first, then the others, each
/// group by peak footprint (largest first); at most `n`.
pub fn top_processes(trace: &Trace, n: usize) -> Vec<Picked> {
    let mut picker = ProcessPicker::default();
    for s in &trace.samples {
        picker.push(s);
    }
    picker.top(n)
}

/// [`top_processes`] as a fold over a run's samples.
#[derive(Debug, Clone, Default)]
pub struct ProcessPicker {
    by_pid: HashMap<u32, Picked>,
}

impl ProcessPicker {
    /// Takes the next sample.
    pub fn push(&mut self, s: &crate::record::trace::TraceSample) {
        for p in &s.sample.processes {
            let e = self.by_pid.entry(p.pid).or_insert_with(|| Picked {
                pid: p.pid,
                name: p.name.to_string(),
                watched: false,
                peak_footprint_bytes: 0,
            });
            e.watched |= s.watched.contains(&p.pid);
            e.peak_footprint_bytes = e.peak_footprint_bytes.max(p.footprint_bytes);
            if *e.name != *p.name {
                e.name = p.name.to_string();
            }
        }
    }

    /// The watched tree first, then the others, each group by peak
    /// footprint (largest first); at most `n`.
    pub fn top(self, n: usize) -> Vec<Picked> {
        self.top_with(n, |_| true)
    }

    /// [`ProcessPicker::top`], where a process outside a watched tree is
    /// taken only when `other` says so: a recording of a notebook's kernel
    /// charts the kernel, not the machine's largest processes (another
    /// user's compiler). A trace that watched nothing takes every process.
    pub fn top_with(self, n: usize, other: impl Fn(&Picked) -> bool) -> Vec<Picked> {
        let mut all: Vec<Picked> = self.by_pid.into_values().collect();
        if all.iter().any(|p| p.watched) {
            all.retain(|p| p.watched || other(p));
        }
        all.sort_by(|a, b| {
            b.watched
                .cmp(&a.watched)
                .then(b.peak_footprint_bytes.cmp(&a.peak_footprint_bytes))
                .then(a.pid.cmp(&b.pid))
        });
        all.truncate(n);
        all
    }
}

#[cfg(test)]
#[path = "export_tests.rs"]
mod tests;
