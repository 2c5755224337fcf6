//! A recorded trace shown the way the live view shows a session: the
//! report, chart points built as live builds them, and the processes.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::display::{with_advice, Point, Row};
use super::LiveError;
use crate::report::Report;
use crate::trace::Trace;

/// A recorded trace shown the way the live view is.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    pub path: PathBuf,
    pub report: Report,
    pub points: Vec<Point>,
    pub processes: Vec<Row>,
    /// Names of the processes in `points`, by pid.
    pub names: Vec<(u32, String)>,
    /// The recording's phases, in the points' clock.
    pub phases: Vec<crate::phases::Phase>,
    /// The pipeline's own byte counters (what its allocator holds), a line
    /// each beside the footprints: the first [`REPLAY_COUNTERS`] names.
    pub counters: Vec<CounterLine>,
    pub problems: Vec<String>,
}

/// Most counters a replay draws.
pub const REPLAY_COUNTERS: usize = 4;

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

/// A line per byte counter of `trace` (other units have no axis on the
/// chart), each thinned to [`COUNTER_POINTS`].
fn counter_lines(trace: &Trace) -> Vec<CounterLine> {
    let mut names: Vec<&str> = Vec::new();
    for c in trace.counters.iter().filter(|c| c.unit == "bytes") {
        if !names.contains(&c.name.as_str()) && names.len() < REPLAY_COUNTERS {
            names.push(&c.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut points: Vec<(f64, f64)> = trace
                .counters
                .iter()
                .filter(|c| c.unit == "bytes" && c.name == name)
                .map(|c| (c.t_ms as f64, c.value))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let points = crate::export::plot::decimate(&points, COUNTER_POINTS / 4);
            CounterLine {
                name: name.to_string(),
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

/// A trace file shown as the live view shows a session: the report, the
/// chart points and the processes at the end.
pub fn replay(path: &Path) -> Result<Replay, LiveError> {
    let trace = crate::trace::read(path)?;
    Ok(replay_trace(path, &trace))
}

pub fn replay_trace(path: &Path, trace: &Trace) -> Replay {
    let report = crate::report::report(trace, None);
    let base = trace
        .samples
        .first()
        .map_or(0, |s| s.sample.system.swap_used_bytes);
    // Not the live rule (the largest at each tick): a replay knows the whole run, so it
    // follows the processes the report names (watched and flagged first), at most 8.
    let picked: Vec<u32> = report.processes.iter().map(|p| p.pid).take(8).collect();
    let points = trace
        .samples
        .iter()
        .map(|s| {
            let footprints = s
                .sample
                .processes
                .iter()
                .filter(|p| picked.contains(&p.pid))
                .map(|p| (p.pid, p.footprint_bytes))
                .collect();
            let growth = s.sample.system.swap_used_bytes as i64 - base as i64;
            Point::at(&s.sample, growth, footprints)
        })
        .collect();
    let processes = report
        .processes
        .iter()
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
            evidence: with_advice(p.evidence.clone(), &p.name, p.verdict, &trace.header().host),
            watched: p.watched,
            pinned: false,
        })
        .collect();
    let names = report
        .processes
        .iter()
        .map(|p| (p.pid, p.name.clone()))
        .collect();
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    Replay {
        path: path.to_path_buf(),
        phases: crate::phases::spans(&trace.marks, last_ms),
        counters: counter_lines(trace),
        problems: report.problems.clone(),
        report,
        points,
        processes,
        names,
    }
}
