//! The offline verdict on a recorded run: fits, overflow, false fit or hidden
//! memory per process, with the evidence in words.
//!
//! It replays the trace through the same [`Detector`] the live shells use,
//! then adds what only hindsight gives: a watched process whose run saw swap
//! grow beyond the tolerance is judged on the whole run even when no tick
//! looked like a climb (early in a swap storm pages go out and nothing pages
//! in yet). When a process went through several states, the verdict is the
//! state under which most of the swap growth happened.

use std::collections::HashMap;

use serde::Serialize;

use std::io::{BufRead, Seek};

use crate::detect::{Detector, DetectorConfig, FootprintGap, State};
use crate::forecast::{Outcome, Replay};
use crate::pressure::{PressureFold, PressureSummary};
use crate::probe::Sample;
use crate::trace::{
    Header, MarkList, ReadNotes, Record, Trace, TraceError, TraceReader, TraceSample,
};
use crate::units::{format_bytes, format_duration, signed_diff};
use by_phase::PhaseTable;

pub mod by_phase;
pub mod counters;
mod process;
pub mod scope;
mod text;

use process::Stats;
use scope::{ScopeFold, ScopeSummary};

/// One process's verdict and figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessReport {
    pub pid: u32,
    pub name: String,
    /// The process's command line (capped; see `probe::naming`), the last
    /// one the trace gave; absent when the trace has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    pub verdict: State,
    pub watched: bool,
    pub first_seen_ms: u64,
    pub last_seen_ms: u64,
    pub peak_footprint_bytes: u64,
    pub peak_footprint_at_ms: u64,
    /// System swap growth while the process was seen (max − at first sight).
    pub swap_growth_bytes: i64,
    /// When that growth happened: from 10 % to 90 % of it.
    pub swap_growth_from_ms: Option<u64>,
    pub swap_growth_to_ms: Option<u64>,
    pub min_free_pct: f64,
    pub pageins_per_s: f64,
    pub peak_pageins_per_s: f64,
    /// Largest footprint drop not matched by free memory.
    pub hidden_bytes: u64,
    /// Measured swap of the process (Linux `VmSwap`), peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_swap_peak_bytes: Option<u64>,
    /// Peak swap-ins per second in pages (macOS `ledger_swapins`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_swapins_per_s: Option<f64>,
    /// Peak of the process's compressed memory (macOS, in RAM or swapped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_compressed_bytes: Option<u64>,
    /// Peak GPU memory (macOS "graphics" ledger tag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_gpu_bytes: Option<u64>,
    /// Peak memory owned outside the footprint (macOS `*_nofootprint` tags).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_outside_footprint_bytes: Option<u64>,
    /// `false` when the OS denied the process's figures at every sample.
    pub readable: bool,
    /// When the detector first raised a non-fits state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_flag_ms: Option<u64>,
    pub evidence: String,
}

/// The verdict on a whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub verdict: State,
    pub summary: String,
    pub duration_ms: u64,
    pub samples: usize,
    pub phys_bytes: u64,
    pub swap_growth_bytes: i64,
    pub swap_tolerance_bytes: u64,
    pub min_free_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The memory cgroup the run was judged against (its limit is
    /// `phys_bytes`, its swap the swap); absent: the host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeSummary>,
    pub processes: Vec<ProcessReport>,
    /// Memory not explained by footprints, at the first sample and at its
    /// peak, and how much of used memory the readable footprints covered.
    pub footprints: FootprintsSummary,
    /// Memory pressure over the run; absent when no sample carried any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureSummary>,
    /// Each limit whose forecast fired or that was reached: when the
    /// forecast first fired, its estimate then and when the limit really
    /// came (the forecaster replayed over the samples).
    pub forecasts: Vec<Outcome>,
    /// One row per phase when the trace has marks ([`by_phase`]).
    pub phases: Vec<by_phase::PhaseRow>,
    /// Peak and last value of each counter the run wrote ([`counters`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<counters::CounterRow>,
    /// The first lines the reader skipped, in words.
    pub problems: Vec<String>,
    /// How many lines the reader skipped in all.
    pub skipped_lines: usize,
    pub truncated_last_line: bool,
}

/// The system figure "memory not explained by footprints" over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FootprintsSummary {
    /// Used memory − Σ readable footprints, at the first sample.
    pub unexplained_first_bytes: i64,
    /// The same, at its peak.
    pub unexplained_peak_bytes: i64,
    /// Its growth over the run (peak − first).
    pub unexplained_growth_bytes: i64,
    /// Lowest share of used memory the readable footprints covered.
    pub min_coverage: f64,
    /// Most processes listed without figures in one sample.
    pub max_unreadable: u32,
    /// Peak of the readable processes' memory outside their footprints.
    pub outside_footprint_peak_bytes: u64,
    /// Peak of the readable processes' GPU memory.
    pub gpu_peak_bytes: u64,
}

/// Builds the report. `cfg` overrides the detector settings the trace was
/// recorded with.
pub fn report(trace: &Trace, cfg: Option<DetectorConfig>) -> Report {
    let header = trace.header();
    let mut run = RunJudge::new(header, cfg.clone());
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let mut table = PhaseTable::new(&trace.marks, last_ms, || RunJudge::new(header, cfg.clone()));
    for s in &trace.samples {
        run.push(s);
        table.push(s);
    }
    trace.events.iter().for_each(|e| run.note_event(e));
    let mut log = counters::CounterLog::default();
    trace.counters.iter().for_each(|c| log.push(c));
    with_counters(run.finish(&trace.notes()), table.finish(), &log)
}

/// The report with its phase rows, and the counters over the run and over
/// each phase.
fn with_counters(
    report: Report,
    mut phases: Vec<by_phase::PhaseRow>,
    log: &counters::CounterLog,
) -> Report {
    by_phase::attach_counters(&mut phases, log);
    Report {
        phases,
        counters: log.run(),
        ..report
    }
}

/// The report of a trace read as it streams: one pass over the file, with
/// the per-phase table folded as the marks come in (a recording writes each
/// after the samples up to its time); a second pass over the same lines only
/// when a mark is out of that order (the phases' spans are then known once
/// every mark is). Holds per-process and per-phase figures and the run's
/// swap series (16 bytes a sample), never the samples. `each` sees every
/// record of the first pass, for callers that fold more out of the same
/// read (`compare`'s row, a chart's ranges).
pub fn report_stream<R: BufRead + Seek>(
    reader: &mut TraceReader<R>,
    cfg: Option<DetectorConfig>,
    mut each: impl FnMut(&Record),
) -> Result<Report, TraceError> {
    let header = reader.header().clone();
    let new_judge = || RunJudge::new(&header, cfg.clone());
    let mut run = new_judge();
    let mut table = Some(PhaseTable::streaming(new_judge));
    let mut marks = MarkList::default();
    let mut log = counters::CounterLog::default();
    let mut last_ms = 0;
    while let Some(record) = reader.next_record()? {
        each(&record);
        match record {
            Record::Counter(c) => log.push(&c),
            Record::Sample(s) => {
                last_ms = s.sample.t_ms;
                run.push(&s);
                if let Some(t) = table.as_mut() {
                    t.push_owned(s);
                }
            }
            Record::Event(e) => run.note_event(&e),
            Record::Mark(m) => {
                let kept = marks.marks.len();
                marks.push(m);
                if let (Some(m), Some(t)) = (marks.marks.get(kept), table.as_mut()) {
                    if !t.mark(m) {
                        table = None;
                    }
                }
            }
            _ => {}
        }
    }
    let report = run.finish(reader.notes());
    if let Some(t) = table {
        return Ok(with_counters(report, t.finish(), &log));
    }
    reader.rewind()?;
    let mut table = PhaseTable::new(&marks.marks, last_ms, new_judge);
    while let Some(record) = reader.next_record()? {
        if let Record::Sample(s) = record {
            table.push_owned(s);
        }
    }
    Ok(with_counters(report, table.finish(), &log))
}

/// The report of a whole run, without the per-phase table, as a fold over
/// its samples: [`report`] and [`report_stream`] feed it the run, and the
/// per-phase table feeds one a phase.
pub struct RunJudge {
    cfg: DetectorConfig,
    header_phys: u64,
    command: Option<Vec<String>>,
    /// Physical memory: the first sample's, else the header's.
    phys: Option<u64>,
    detector: Detector,
    stats: HashMap<u32, Stats>,
    prev_swap: Option<u64>,
    min_free: f64,
    footprints: Option<FootprintsSummary>,
    /// Σ readable footprints, peak: the machine's share when no process explains the swap.
    peak_readable: u64,
    first_ms: Option<u64>,
    last_ms: u64,
    /// (t, swap in use) of every sample, for "when it grew".
    swap: Vec<(u64, u64)>,
    pressure: PressureFold,
    forecast: Replay,
    scope: ScopeFold,
}

impl RunJudge {
    pub fn new(header: &Header, cfg: Option<DetectorConfig>) -> Self {
        let cfg = cfg.unwrap_or_else(|| header.detector.clone());
        RunJudge {
            detector: Detector::new(cfg.clone()),
            cfg,
            header_phys: header.host.phys_bytes,
            command: header.command.clone(),
            phys: None,
            stats: HashMap::new(),
            prev_swap: None,
            min_free: f64::INFINITY,
            footprints: None,
            peak_readable: 0,
            first_ms: None,
            last_ms: 0,
            swap: Vec::new(),
            pressure: PressureFold::new(header.pressure.clone()),
            forecast: Replay::new(header.forecast.clone()),
            scope: ScopeFold::default(),
        }
    }

    /// Takes the next sample of the run.
    pub fn push(&mut self, ts: &TraceSample) {
        let s = &ts.sample;
        let watched = ts.watched.iter().copied().collect();
        self.detector.update(s, &watched);
        self.pressure.push(s.t_ms, s.system.pressure.as_ref());
        self.forecast.push(s.t_ms, &s.system);
        let run = self.note_run(s, &ts.watched);
        for p in &s.processes {
            let st = self
                .stats
                .entry(p.pid)
                .or_insert_with(|| Stats::new(p, s.t_ms, run.swap));
            st.watched |= ts.watched.contains(&p.pid);
            st.note_sample(p, s.t_ms, run.free_pct, run.index);
            st.note_swap(run.swap, run.footprints_share, p.footprint_bytes);
            st.note_ledgers(p, s.t_ms, run.page_size);
            if let Some((state, evidence)) = self.detector.state_of(p.pid) {
                st.note_state(state, evidence.hidden_bytes, run.swap_delta, s.t_ms);
            }
        }
    }

    /// Takes an event of the run: an `oom-kill` the recorder saw at its last
    /// look, after the samples.
    pub fn note_event(&mut self, e: &crate::trace::Event) {
        if e.kind == "oom-kill" {
            self.scope.note_oom_event(e.t_ms);
        }
    }

    /// The run's own figures at one sample: its span, swap series, free
    /// memory and the memory footprints do not explain.
    fn note_run(&mut self, s: &Sample, watched: &[u32]) -> RunSample {
        let judged = crate::detect::judged(s, &|pid| watched.contains(&pid), !watched.is_empty());
        let system = judged.system;
        // A run that enters its cgroup after it started (a command that
        // joins one first thing): its memory figures start again there.
        if self.scope.enters(s.scope.as_ref()) {
            self.footprints = None;
            self.min_free = f64::INFINITY;
        }
        self.scope.note(s.scope.as_ref(), s.t_ms);
        // The host's memory from the first sample; a scope's limit, once a
        // sample has one, is the memory the run has.
        if s.scope.is_some() {
            self.phys = Some(system.phys_bytes.max(1));
        }
        let phys = *self.phys.get_or_insert_with(|| {
            Some(system.phys_bytes)
                .filter(|&p| p > 0)
                .unwrap_or(self.header_phys)
                .max(1)
        });
        let index = self.swap.len();
        self.first_ms.get_or_insert(s.t_ms);
        self.last_ms = s.t_ms;
        let swap = system.swap_used_bytes;
        self.swap.push((s.t_ms, swap));
        let swap_delta = self.prev_swap.map_or(0, |p| signed_diff(swap, p)).max(0);
        self.prev_swap = Some(swap);
        self.min_free = self.min_free.min(system.free_pct);
        let gap = judged.gap;
        self.peak_readable = self.peak_readable.max(gap.footprints_bytes);
        self.footprints
            .get_or_insert_with(|| FootprintsSummary::starting_at(&gap))
            .note(&gap);
        RunSample {
            index,
            swap,
            swap_delta,
            footprints_share: gap.footprints_bytes as f64 / phys as f64,
            free_pct: system.free_pct,
            page_size: if system.page_size > 0 {
                system.page_size
            } else {
                4096
            },
        }
    }

    /// The report of the samples taken, with what the read skipped.
    pub fn finish(self, notes: &ReadNotes) -> Report {
        let cfg = &self.cfg;
        let phys = self.phys.unwrap_or(self.header_phys.max(1));
        let tolerance = cfg.swap_tolerance_for(phys);
        let largest_watched = self
            .stats
            .iter()
            .filter(|(_, s)| s.watched)
            .max_by_key(|(_, s)| s.peak_fp)
            .map(|(&pid, _)| pid);
        let processes = shown(
            self.stats
                .iter()
                .map(|(&pid, st)| {
                    let carries = Some(pid) == largest_watched;
                    st.report(pid, &self.swap, phys, tolerance, cfg, carries)
                })
                .collect(),
        );
        let first_swap = self.swap.first().map_or(0, |&(_, s)| s);
        let max_swap = self.swap.iter().map(|&(_, s)| s).max().unwrap_or(0);
        let swap_growth = signed_diff(max_swap, first_swap);
        let scope = self.scope.finish();
        let oom_killed = scope.as_ref().is_some_and(|s| s.oom_kills > 0);
        let verdict = run_verdict(
            processes
                .iter()
                .map(|p| p.verdict)
                .max()
                .unwrap_or_default(),
            swap_growth,
            tolerance,
            oom_killed,
            self.peak_readable as f64 / phys as f64,
            cfg,
        );
        let min_free = if self.min_free.is_finite() {
            self.min_free
        } else {
            0.0
        };
        let mut summary = match processes.iter().find(|p| p.verdict == verdict) {
            Some(p) => format!("{}: {} (pid {})", verdict.label(), p.name, p.pid),
            None if oom_killed => format!("{}: it did not fit", verdict.label()),
            None => format!(
                "{}: swap grew {} while the run lasted",
                verdict.label(),
                format_bytes(swap_growth)
            ),
        };
        if let Some(sc) = &scope {
            summary = format!("{summary} {}", sc.inside());
            if oom_killed {
                summary = format!("{summary}; ended by {}", sc.oom_words());
            }
        }
        Report {
            verdict,
            summary,
            duration_ms: self
                .first_ms
                .map_or(0, |first| self.last_ms.saturating_sub(first)),
            samples: self.swap.len(),
            phys_bytes: phys,
            swap_growth_bytes: swap_growth,
            swap_tolerance_bytes: tolerance,
            min_free_pct: min_free,
            command: self.command,
            scope,
            processes,
            footprints: self
                .footprints
                .map(|mut f| {
                    f.unexplained_growth_bytes = f
                        .unexplained_peak_bytes
                        .saturating_sub(f.unexplained_first_bytes);
                    f
                })
                .unwrap_or_default(),
            pressure: self.pressure.finish(),
            forecasts: self.forecast.finish(),
            phases: Vec::new(),
            counters: Vec::new(),
            problems: notes.problems.iter().map(|p| p.to_string()).collect(),
            skipped_lines: notes.bad_lines,
            truncated_last_line: notes.truncated_last_line,
        }
    }
}

/// What one sample of the run gives each process's figures.
struct RunSample {
    /// Its index in the run's swap series.
    index: usize,
    /// System swap in use.
    swap: u64,
    /// Swap growth since the previous sample (0 when it fell).
    swap_delta: i64,
    /// Readable footprints over physical memory.
    footprints_share: f64,
    /// Free memory in % (the scope's where a cgroup limits the run).
    free_pct: f64,
    page_size: u64,
}

impl FootprintsSummary {
    fn starting_at(gap: &FootprintGap) -> Self {
        FootprintsSummary {
            unexplained_first_bytes: gap.unexplained_bytes,
            unexplained_peak_bytes: gap.unexplained_bytes,
            min_coverage: gap.coverage,
            ..FootprintsSummary::default()
        }
    }

    fn note(&mut self, gap: &FootprintGap) {
        self.unexplained_peak_bytes = self.unexplained_peak_bytes.max(gap.unexplained_bytes);
        self.min_coverage = self.min_coverage.min(gap.coverage);
        self.max_unreadable = self.max_unreadable.max(gap.unreadable);
        self.outside_footprint_peak_bytes = self
            .outside_footprint_peak_bytes
            .max(gap.outside_footprint_bytes);
        self.gpu_peak_bytes = self.gpu_peak_bytes.max(gap.gpu_bytes);
    }
}

/// The run's verdict: its worst process's; but when swap grew by the
/// tolerance, or the scope's OOM killer ended the run (it did not fit, and
/// no swap absorbed it), and no process explains it (none is overflow or
/// false fit), the machine's, at the readable footprints' peak share of
/// memory.
fn run_verdict(
    worst_process: State,
    swap_growth: i64,
    tolerance: u64,
    oom_killed: bool,
    peak_footprints_share: f64,
    cfg: &DetectorConfig,
) -> State {
    let did_not_fit = oom_killed || swap_growth >= signed_diff(tolerance, 0);
    if worst_process < State::Overflow && did_not_fit {
        cfg.swap_verdict(peak_footprints_share)
    } else {
        worst_process
    }
}

/// The processes the report lists, in its order: the watched ones (or the
/// five largest when none was watched) plus every one with a verdict other
/// than fits; watched first, then by verdict, then by peak footprint.
fn shown(mut processes: Vec<ProcessReport>) -> Vec<ProcessReport> {
    let any_watched = processes.iter().any(|p| p.watched);
    let mut by_peak: Vec<(u64, u32)> = processes
        .iter()
        .map(|p| (p.peak_footprint_bytes, p.pid))
        .collect();
    by_peak.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<u32> = by_peak.iter().take(5).map(|&(_, pid)| pid).collect();
    processes.retain(|p| {
        p.verdict != State::Fits
            || if any_watched {
                p.watched && p.peak_footprint_bytes > 0
            } else {
                top.contains(&p.pid)
            }
    });
    processes.sort_by(|a, b| {
        b.watched
            .cmp(&a.watched)
            .then(b.verdict.cmp(&a.verdict))
            .then(b.peak_footprint_bytes.cmp(&a.peak_footprint_bytes))
            // Ties in pid order: the same report every time it is asked.
            .then(a.pid.cmp(&b.pid))
    });
    processes
}

impl by_phase::Judge for RunJudge {
    fn push(&mut self, s: &TraceSample) {
        RunJudge::push(self, s);
    }

    fn verdict(self) -> State {
        self.finish(&ReadNotes::default()).verdict
    }
}

fn secs(ms: u64) -> String {
    format_duration(std::time::Duration::from_millis(ms))
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
