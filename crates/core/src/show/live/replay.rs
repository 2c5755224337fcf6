//! A recorded trace shown the way the live view shows a session: the
//! report, chart points built as live builds them, and the processes.
//!
//! A recording is read as it streams, twice: the first pass is the report's
//! own ([`report_stream`]), which also counts the samples and keeps the
//! marks and counters; the second builds the points of the processes the
//! report names, thinned to [`REPLAY_POINTS`] ([`replay_points`]). Nothing
//! holds the samples, so a replay of any size costs about what its report
//! does, however many are asked for at once.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::display::{with_advice, Point, Row};
use super::LiveError;
use crate::judge::report::{report_stream, Report};
use crate::probe::HostInfo;
use crate::record::trace::{Counter, MarkList, Record, Trace, TraceReader, MAX_COUNTERS};

#[path = "replay_points.rs"]
mod replay_points;

use replay_points::Points;

/// Most points a replay's chart gets (as many as a counter's line keeps).
pub const REPLAY_POINTS: usize = 2000;

/// A recorded trace shown the way the live view is.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    pub(crate) path: PathBuf,
    /// The run's report.
    pub report: Report,
    /// At most [`REPLAY_POINTS`]: a sample each, or past that many samples
    /// two a stretch of them, with each line's lowest and highest value.
    pub points: Vec<Point>,
    /// How many samples `points` were thinned from; absent when there is a
    /// point for each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinned_from: Option<usize>,
    /// The report's processes as rows, the first [`REPLAY_ROWS`] of them.
    pub processes: Vec<Row>,
    /// Names of the processes in `points`, by pid.
    pub names: Vec<(u32, String)>,
    /// The recording's phases, in the points' clock.
    pub phases: Vec<crate::record::phases::Phase>,
    /// The pipeline's own byte counters (what its allocator holds), a line
    /// each beside the footprints: the first [`REPLAY_COUNTERS`] names.
    pub counters: Vec<CounterLine>,
    pub(crate) problems: Vec<String>,
}

/// Most counters a replay draws.
pub const REPLAY_COUNTERS: usize = 4;

/// Most rows a replay's table gets: the report lists the watched and the
/// flagged processes first, and a run can flag hundreds of short ones.
pub const REPLAY_ROWS: usize = 200;

/// Most processes a replay's chart follows.
const FOLLOWED: usize = 8;

/// Points a counter's line keeps at most (thinned, peaks kept): a page
/// draws a few hundred pixels across.
const COUNTER_POINTS: usize = 2000;

/// One counter's line in a replay, in the points' clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterLine {
    pub name: String,
    pub unit: String,
    pub points: Vec<CounterPoint>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CounterPoint {
    pub t_ms: u64,
    pub value: f64,
}

/// The byte counters' lines of a run, folded as its counters come: the
/// first [`REPLAY_COUNTERS`] names among the first [`MAX_COUNTERS`]
/// counter points (what a [`Trace`] keeps, so at most 3 MiB of them held
/// until the end sorts them), each thinned to [`COUNTER_POINTS`].
#[derive(Debug, Default)]
struct CounterLines {
    seen: usize,
    lines: Vec<(String, Vec<(f64, f64)>)>,
}

impl CounterLines {
    fn push(&mut self, c: &Counter) {
        if self.seen >= MAX_COUNTERS {
            return;
        }
        self.seen += 1;
        if c.unit != "bytes" {
            return;
        }
        let at = match self.lines.iter().position(|(name, _)| *name == c.name) {
            Some(i) => i,
            None if self.lines.len() < REPLAY_COUNTERS => {
                self.lines.push((c.name.clone(), Vec::new()));
                self.lines.len() - 1
            }
            None => return,
        };
        self.lines[at].1.push((c.t_ms as f64, c.value));
    }

    fn finish(self) -> Vec<CounterLine> {
        self.lines
            .into_iter()
            .map(|(name, mut points)| {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let points = crate::show::export::decimate::decimate(&points, COUNTER_POINTS / 4);
                CounterLine {
                    name,
                    unit: "bytes".into(),
                    points: points
                        .into_iter()
                        .map(|(t, value)| CounterPoint {
                            t_ms: t as u64,
                            value,
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// What the first pass keeps besides the report: the samples' count and
/// the last one's time, the marks and the counters.
#[derive(Debug, Default)]
struct FirstPass {
    samples: usize,
    last_ms: u64,
    marks: MarkList,
    counters: CounterLines,
}

impl FirstPass {
    fn note(&mut self, record: &Record) {
        match record {
            Record::Sample(s) => {
                self.samples += 1;
                self.last_ms = s.sample.t_ms;
            }
            Record::Mark(m) => self.marks.push(m.clone()),
            Record::Counter(c) => self.counters.push(c),
            _ => {}
        }
    }
}

/// A trace file shown as the live view shows a session: the report, the
/// chart points and the processes at the end.
pub fn replay(path: &Path) -> Result<Replay, LiveError> {
    replay_file(path, path, None)
}

/// The replay of the trace at `file`, its `path` given as `shown_as`, with
/// the command lines of `commands_of`'s processes only (all when `None`).
pub(super) fn replay_file(
    file: &Path,
    shown_as: &Path,
    commands_of: Option<u32>,
) -> Result<Replay, LiveError> {
    let mut reader = TraceReader::open(file)?.keep_commands_of(commands_of);
    let mut first = FirstPass::default();
    let report = report_stream(&mut reader, None, |r| first.note(r))?;
    let mut points = Points::new(first.samples, followed(&report));
    if first.samples > 0 {
        // A reader of its own, not a rewind (the report may have read the
        // file twice already, for marks out of time order), stopped at the
        // samples the first pass counted: a recording still being written
        // gives the same samples both times. Points carry no command line.
        let mut again = TraceReader::open(file)?;
        let mut left = first.samples;
        while left > 0 {
            match again.next_record()? {
                Some(Record::Sample(s)) => {
                    points.push(&s);
                    left -= 1;
                }
                Some(_) => {}
                None => break,
            }
        }
    }
    let host = reader.header().host.clone();
    Ok(assemble(
        shown_as,
        report,
        points,
        crate::record::phases::spans(&first.marks.marks, first.last_ms),
        first.counters.finish(),
        &host,
    ))
}

/// The replay of a trace already read, built the same way.
pub fn replay_trace(path: &Path, trace: &Trace) -> Replay {
    let report = crate::judge::report::report(trace, None);
    let mut points = Points::new(trace.samples.len(), followed(&report));
    trace.samples.iter().for_each(|s| points.push(s));
    let mut counters = CounterLines::default();
    trace.counters.iter().for_each(|c| counters.push(c));
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    assemble(
        path,
        report,
        points,
        crate::record::phases::spans(&trace.marks, last_ms),
        counters.finish(),
        &trace.header().host,
    )
}

/// The processes a replay's chart follows. Not the live rule (the largest
/// at each tick): a replay knows the whole run, so it follows the processes
/// the report names, watched and flagged first.
fn followed(report: &Report) -> Vec<u32> {
    report
        .processes
        .iter()
        .map(|p| p.pid)
        .take(FOLLOWED)
        .collect()
}

/// The replay of a run from its report and what its passes folded.
fn assemble(
    path: &Path,
    report: Report,
    points: Points,
    phases: Vec<crate::record::phases::Phase>,
    counters: Vec<CounterLine>,
    host: &HostInfo,
) -> Replay {
    let thinned_from = points.thinned_from();
    let processes = report
        .processes
        .iter()
        .take(REPLAY_ROWS)
        .map(|p| Row {
            pid: p.pid,
            name: p.name.clone(),
            cmdline: p.cmdline.clone(),
            footprint_bytes: p.peak_footprint_bytes,
            footprint_delta_bytes: 0,
            pageins_per_s: p.pageins_per_s,
            swap_bytes: p.measured_swap_peak_bytes,
            gpu_bytes: p.peak_gpu_bytes,
            outside_footprint_bytes: p.peak_outside_footprint_bytes,
            swapins_per_s: p.peak_swapins_per_s,
            readable: p.readable,
            state: p.verdict,
            worst: p.verdict,
            evidence: with_advice(p.evidence.clone(), &p.name, p.verdict, host),
            watched: p.watched,
            pinned: false,
        })
        .collect();
    let names = report
        .processes
        .iter()
        .take(FOLLOWED)
        .map(|p| (p.pid, p.name.clone()))
        .collect();
    Replay {
        path: path.to_path_buf(),
        phases,
        counters,
        problems: report.problems.clone(),
        thinned_from,
        points: points.finish(),
        report,
        processes,
        names,
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
