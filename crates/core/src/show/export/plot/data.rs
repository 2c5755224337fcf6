//! The chart's data, apart from drawing: the time axis, the swap growth and
//! free memory curves, one footprint line per process (broken where the
//! process is missing from a sample), the shaded states, the phases and the
//! value range. Pure, so that it is tested without pixels.

use plotters::style::RGBColor;

use std::collections::HashMap;

use super::{nice_ceiling, one_line, Decimator, GIB, PALETTE};
use crate::judge::report::Report;
use crate::record::phases::Phase;
use crate::record::trace::{Counter, MarkList, Record, Trace, TraceSample};
use crate::show::export::{intervals_of, Interval, Picked, ProcessPicker, StateTimeline};
use crate::step::detect::State;
use crate::step::pressure::Level;

/// One footprint line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    pub label: String,
    pub colour: RGBColor,
    pub width: u32,
    pub segments: Vec<Vec<(f64, f64)>>,
}

/// Everything the chart shows, in seconds from the first sample and GiB.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChartData {
    /// The time of the first sample: the chart's zero.
    pub t0: u64,
    pub x_max: f64,
    /// Swap growth since the first sample, GiB.
    pub growth: Vec<(f64, f64)>,
    /// Free memory, % (right axis).
    pub free: Vec<(f64, f64)>,
    pub series: Vec<Series>,
    /// The shaded stretches, live flags and a verdict found in hindsight.
    pub intervals: Vec<Interval>,
    /// The state shaded from the report alone, if any.
    pub hindsight: Option<State>,
    /// The narrowest a shaded stretch is drawn: one sampling interval.
    pub min_width: f64,
    pub y_min: f64,
    pub y_max: f64,
    pub phases: Vec<Phase>,
    /// The run's scope's memory limit, GIB, and its words, when a memory
    /// cgroup limited it (the last limit the trace gave): a line across.
    pub limit: Option<(f64, String)>,
    /// The pipeline's own byte counters (what its allocator holds), GiB on
    /// the memory axis: a dashed line each, the first [`COUNTER_LINES`].
    pub counters: Vec<Series>,
    /// Stretches at warning or critical memory pressure, in seconds.
    pub pressure: Vec<(f64, f64, Level)>,
}

/// Most counters the chart draws a line for (the first written).
pub(crate) const COUNTER_LINES: usize = 4;

/// The chart of `trace` with the `processes` largest processes, every
/// point kept.
pub(crate) fn chart_data(trace: &Trace, report: &Report, pick: LinePick) -> ChartData {
    let mut scan = ChartScan::default();
    for s in &trace.samples {
        scan.sample(s);
    }
    scan.flags.extend(trace.flags.iter().cloned());
    for c in &trace.counters {
        scan.counter(c);
    }
    scan.marks = MarkList {
        marks: trace.marks.clone(),
        dropped: trace.marks_dropped,
    };
    let interval_ms = trace.header.as_ref().map(|h| h.interval_ms);
    let mut lines = ChartLines::new(scan, pick, None);
    for s in &trace.samples {
        lines.push(s);
    }
    lines.finish(report, interval_ms)
}

/// Which processes get a footprint line: at most `n`, the watched tree
/// first; beside it, where `others` is given, only those pids.
#[derive(Debug, Clone, Default)]
pub struct LinePick {
    n: usize,
    others: Option<Vec<u32>>,
}

impl LinePick {
    /// The options' pick: beside a watched tree, the processes the report
    /// does not judge fits (a false fit's or an overflow's suspect), or
    /// every process with `all_processes`.
    pub fn of(report: &Report, opts: &super::PlotOptions) -> Self {
        let suspects = report
            .processes
            .iter()
            .filter(|p| !p.watched && p.verdict != crate::step::detect::State::Fits)
            .map(|p| p.pid);
        LinePick {
            n: opts.processes,
            others: (!opts.all_processes).then(|| suspects.collect()),
        }
    }

    /// `n` lines, any process beside the watched tree.
    #[cfg(test)]
    pub(crate) fn all(n: usize) -> Self {
        LinePick { n, others: None }
    }
}

/// The first pass of a chart over a streamed trace: its time range, the
/// processes worth a line, the flags' states and the marks. Holds a few
/// figures a process, never a sample.
#[derive(Debug, Default)]
pub struct ChartScan {
    /// Time and swap in use at the first sample.
    first: Option<(u64, u64)>,
    last_ms: u64,
    latest_ms: u64,
    picker: ProcessPicker,
    last_seen: HashMap<u32, u64>,
    flags: Vec<crate::step::detect::Flag>,
    marks: MarkList,
    /// Byte counters' points (at most [`crate::record::trace::MAX_COUNTERS`]), of
    /// the first [`COUNTER_LINES`] names.
    counters: Vec<Counter>,
    counter_names: Vec<String>,
}

impl ChartScan {
    /// Takes the next record.
    pub fn push(&mut self, r: &Record) {
        match r {
            Record::Sample(s) => self.sample(s),
            Record::Flag(f) => self.flags.push(f.clone()),
            Record::Mark(m) => self.marks.push(m.clone()),
            Record::Counter(c) => self.counter(c),
            Record::Header(_) | Record::Event(_) => {}
        }
    }

    /// Keeps a byte counter's point, for a line on the memory axis; other
    /// units have no axis here.
    fn counter(&mut self, c: &Counter) {
        if c.unit != "bytes" || self.counters.len() >= crate::record::trace::MAX_COUNTERS {
            return;
        }
        if !self.counter_names.contains(&c.name) {
            if self.counter_names.len() >= COUNTER_LINES {
                return;
            }
            self.counter_names.push(c.name.clone());
        }
        self.counters.push(c.clone());
    }

    fn sample(&mut self, s: &TraceSample) {
        let t = s.sample.t_ms;
        self.first
            .get_or_insert((t, judged_system(s).swap_used_bytes));
        self.last_ms = t;
        self.latest_ms = self.latest_ms.max(t);
        self.picker.push(s);
        for p in &s.sample.processes {
            self.last_seen.insert(p.pid, t);
        }
    }
}

/// The swap and free memory a sample is judged on, as `report` judges it
/// ([`crate::probe::SystemSample::judged_in`]).
fn judged_system(s: &TraceSample) -> crate::probe::SystemSample {
    s.sample.system.judged_in(s.sample.scope.as_ref())
}

/// A line's points: all of them, or thinned to a chart's width as they come.
enum Line {
    All(Vec<(f64, f64)>),
    Thin(Decimator),
}

impl Line {
    fn new(x_max: f64, buckets: Option<usize>) -> Self {
        match buckets {
            Some(b) => Line::Thin(Decimator::new(0.0, x_max, b)),
            None => Line::All(Vec::new()),
        }
    }

    fn push(&mut self, p: (f64, f64)) {
        match self {
            Line::All(v) => v.push(p),
            Line::Thin(d) => d.push(p),
        }
    }

    fn finish(self) -> Vec<(f64, f64)> {
        match self {
            Line::All(v) => v,
            Line::Thin(d) => d.finish(),
        }
    }
}

/// One process's line under way: the segments done and the one being drawn.
struct ProcessLine {
    pid: u32,
    segments: Vec<Vec<(f64, f64)>>,
    current: Option<Line>,
}

/// The second pass of a chart: its lines, sample by sample, thinned to
/// `buckets` points across when given (at most four a bucket: peaks survive).
pub struct ChartLines {
    scan: ChartScan,
    picked: Vec<Picked>,
    t0: u64,
    swap0: u64,
    x_max: f64,
    buckets: Option<usize>,
    growth: Line,
    free: Line,
    lines: Vec<ProcessLine>,
    limit_bytes: Option<u64>,
    /// (from, to, level) in ms, for the stretches above normal.
    pressure: Vec<(u64, u64, Level)>,
    /// Whether the last sample was in the last stretch.
    pressure_open: bool,
}

impl ChartLines {
    pub fn new(mut scan: ChartScan, pick: LinePick, buckets: Option<usize>) -> Self {
        let (t0, swap0) = scan.first.unwrap_or((0, 0));
        // The latest sample, not the last: a sample out of order (a damaged
        // trace) must not land outside the chart, where plotters' pixel
        // arithmetic overflows.
        let x_max = (scan.latest_ms.saturating_sub(t0) as f64 / 1000.0).max(1.0);
        let picked = std::mem::take(&mut scan.picker).top_with(pick.n, |p| {
            pick.others.as_ref().map_or(true, |o| o.contains(&p.pid))
        });
        let lines = picked
            .iter()
            .map(|p| ProcessLine {
                pid: p.pid,
                segments: Vec::new(),
                current: None,
            })
            .collect();
        ChartLines {
            scan,
            picked,
            t0,
            swap0,
            x_max,
            buckets,
            growth: Line::new(x_max, buckets),
            free: Line::new(x_max, buckets),
            lines,
            limit_bytes: None,
            pressure: Vec::new(),
            pressure_open: false,
        }
    }

    /// Takes the next sample.
    pub fn push(&mut self, s: &TraceSample) {
        let x = s.sample.t_ms.saturating_sub(self.t0) as f64 / 1000.0;
        if let Some(scope) = &s.sample.scope {
            self.limit_bytes = Some(scope.limit_bytes);
        }
        self.note_pressure(&s.sample);
        let sys = judged_system(s);
        let g = sys.swap_used_bytes as f64 - self.swap0 as f64;
        self.growth.push((x, g / GIB));
        self.free.push((x, sys.free_pct.clamp(0.0, 100.0)));
        for line in &mut self.lines {
            match s.sample.processes.iter().find(|q| q.pid == line.pid) {
                Some(q) => line
                    .current
                    .get_or_insert_with(|| Line::new(self.x_max, self.buckets))
                    .push((x, q.footprint_bytes as f64 / GIB)),
                // Missing from a sample: the line breaks.
                None => {
                    if let Some(done) = line.current.take() {
                        line.segments.push(done.finish());
                    }
                }
            }
        }
    }

    /// Extends the pressure stretch under way to this sample, and starts
    /// one when the level above normal changed; a sample at normal (or
    /// without a level) ends it there.
    fn note_pressure(&mut self, s: &crate::probe::Sample) {
        let level = s.system.pressure.and_then(|p| p.level);
        let open = if self.pressure_open {
            self.pressure.last_mut()
        } else {
            None
        };
        let same = match open {
            Some((_, to, last)) => {
                *to = (*to).max(s.t_ms);
                Some(*last) == level
            }
            None => false,
        };
        self.pressure_open = level.is_some_and(|l| l > Level::Normal);
        if let (false, true, Some(l)) = (same, self.pressure_open, level) {
            self.pressure.push((s.t_ms, s.t_ms, l));
        }
    }

    /// The chart's data, with the report's hindsight; `interval_ms` is the
    /// trace's sampling interval (the narrowest shading).
    pub(crate) fn finish(self, report: &Report, interval_ms: Option<u64>) -> ChartData {
        let ChartLines {
            scan,
            picked,
            t0,
            x_max,
            growth,
            free,
            lines,
            limit_bytes,
            pressure,
            ..
        } = self;
        let limit = limit_bytes.map(|b| {
            (
                b as f64 / GIB,
                format!("cgroup limit {}", crate::util::units::format_limit(b)),
            )
        });
        let growth = growth.finish();
        let free = free.finish();
        let series: Vec<Series> = picked
            .iter()
            .zip(lines)
            .enumerate()
            .map(|(i, (p, mut line))| {
                if let Some(done) = line.current.take() {
                    line.segments.push(done.finish());
                }
                Series {
                    label: format!(
                        "{} {}{}",
                        one_line(&p.name),
                        p.pid,
                        if p.watched { " (watched)" } else { "" }
                    ),
                    colour: PALETTE[i % PALETTE.len()],
                    width: if p.watched { 3 } else { 2 },
                    segments: line.segments,
                }
            })
            .collect();
        let secs = |t_ms: u64| (t_ms.saturating_sub(t0) as f64 / 1000.0).min(x_max);
        let spans = crate::record::phases::spans(&scan.marks.marks, scan.last_ms);
        let counters = counter_series(&scan, series.len(), &spans, &secs);
        let pressure = pressure
            .into_iter()
            .map(|(from, to, l)| (secs(from), secs(to), l))
            .collect();
        let end = scan.last_ms;
        let timeline = StateTimeline::from_flags(&scan.flags);
        let mut intervals = intervals_of(&timeline, &scan.last_seen, end);
        // A verdict reached only in hindsight (no live flag of that state): shade
        // the stretch the report names, from 10 % to 90 % of the swap growth.
        let mut hindsight = None;
        if matches!(report.verdict, State::FalseFit | State::Overflow)
            && !intervals.iter().any(|i| i.state == report.verdict)
        {
            let p = report
                .processes
                .iter()
                .find(|p| p.verdict == report.verdict);
            if let Some((from_ms, to_ms)) =
                p.and_then(|p| Some((p.swap_growth_from_ms?, p.swap_growth_to_ms?)))
            {
                intervals.push(Interval {
                    state: report.verdict,
                    from_ms,
                    to_ms,
                });
                hindsight = Some(report.verdict);
            }
        }
        let y_top = series
            .iter()
            .flat_map(|s| s.segments.iter().flatten())
            .chain(counters.iter().flat_map(|s| s.segments.iter().flatten()))
            .chain(growth.iter())
            .map(|&(_, y)| y)
            .chain(limit.as_ref().map(|&(y, _)| y))
            .fold(0.0f64, f64::max);
        let y_bottom = growth
            .iter()
            .chain(counters.iter().flat_map(|s| s.segments.iter().flatten()))
            .map(|&(_, y)| y)
            .fold(0.0f64, f64::min);
        let y_max = nice_ceiling((y_top * 1.1).max(0.1));
        let y_min = if y_bottom < 0.0 {
            -nice_ceiling(-y_bottom * 1.1)
        } else {
            0.0
        };
        let min_width = interval_ms.map_or(0.5, |ms| ms as f64 / 1000.0);
        ChartData {
            t0,
            x_max,
            growth,
            free,
            series,
            intervals,
            hindsight,
            min_width,
            y_min,
            y_max,
            phases: spans,
            limit,
            counters,
            pressure,
        }
    }
}

/// A line per byte counter the scan kept, in GiB over seconds (`secs`), in
/// the colours after the `processes` lines'. A counter is a figure that
/// holds until the next one is written, so each is a step, and its last
/// value is held to the end of the phase it was written in (of the run
/// outside any phase): a counter written once is a line, not a lone point
/// a line series cannot draw.
fn counter_series(
    scan: &ChartScan,
    processes: usize,
    phases: &[Phase],
    secs: &impl Fn(u64) -> f64,
) -> Vec<Series> {
    scan.counter_names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut points: Vec<(u64, f64)> = scan
                .counters
                .iter()
                .filter(|c| &c.name == name)
                .map(|c| (c.t_ms, c.value))
                .collect();
            points.sort_by_key(|&(t, _)| t);
            let mut line: Vec<(f64, f64)> = Vec::with_capacity(points.len() * 2 + 1);
            for &(t, v) in &points {
                if let Some(&(_, held)) = line.last() {
                    line.push((secs(t), held));
                }
                line.push((secs(t), v / GIB));
            }
            if let Some(&(t, v)) = points.last() {
                line.push((secs(held_until(t, phases, scan.last_ms)), v / GIB));
            }
            Series {
                label: format!("{} (counter)", one_line(name)),
                colour: PALETTE[(processes + i) % PALETTE.len()],
                width: 2,
                segments: vec![line],
            }
        })
        .collect()
}

/// Where a counter value written at `t_ms` stops being shown: the end of
/// the phase under way then, else the end of the run (`last_ms`).
fn held_until(t_ms: u64, phases: &[Phase], last_ms: u64) -> u64 {
    crate::record::phases::phase_at(phases, t_ms)
        .map_or(last_ms, |p| p.end_ms)
        .max(t_ms)
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
