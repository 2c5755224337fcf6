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

use crate::detect::{Detector, DetectorConfig, State};
use crate::trace::{
    Header, MarkList, ReadNotes, Record, Trace, TraceError, TraceReader, TraceSample,
};
use crate::units::{format_bytes, format_duration, saturating_sum, signed_diff};
use by_phase::PhaseTable;

pub mod by_phase;
pub mod counters;
mod text;

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
    pub processes: Vec<ProcessReport>,
    /// Memory not explained by footprints, at the first sample and at its
    /// peak, and how much of used memory the readable footprints covered.
    pub footprints: FootprintsSummary,
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

#[derive(Default)]
struct Stats {
    name: String,
    cmdline: Option<String>,
    watched: bool,
    first_ms: u64,
    last_ms: u64,
    swap_at_first: u64,
    peak_fp: u64,
    peak_fp_ms: u64,
    min_free: f64,
    first_pageins: u64,
    last_pageins: u64,
    prev: Option<(u64, u64)>,
    peak_rate: f64,
    /// The samples it was seen in, as runs of indices (first, last) into
    /// the run's swap series, for "when it grew".
    seen: Vec<(usize, usize)>,
    growth_by_state: HashMap<State, i64>,
    worst: State,
    hidden: u64,
    measured_swap: Option<u64>,
    compressed: Option<u64>,
    gpu: Option<u64>,
    outside: Option<u64>,
    /// (t, swap-ins in pages) of the last sample, for the rate.
    prev_swapins: Option<(u64, u64)>,
    peak_swapins_rate: Option<f64>,
    readable: bool,
    first_flag: Option<u64>,
    share_at_max_swap: f64,
    fp_at_max_swap: u64,
    max_swap: u64,
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
    log.attach(&mut phases);
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
        }
    }

    /// Takes the next sample of the run.
    pub fn push(&mut self, ts: &TraceSample) {
        let s = &ts.sample;
        let phys = *self.phys.get_or_insert_with(|| {
            Some(s.system.phys_bytes)
                .filter(|&p| p > 0)
                .unwrap_or(self.header_phys)
                .max(1)
        });
        let index = self.swap.len();
        self.first_ms.get_or_insert(s.t_ms);
        self.last_ms = s.t_ms;
        let watched = ts.watched.iter().copied().collect();
        let detector = &mut self.detector;
        detector.update(s, &watched);
        let swap = s.system.swap_used_bytes;
        self.swap.push((s.t_ms, swap));
        let delta = self.prev_swap.map_or(0, |p| signed_diff(swap, p)).max(0);
        self.prev_swap = Some(swap);
        self.min_free = self.min_free.min(s.system.free_pct);
        self.peak_readable = self.peak_readable.max(saturating_sum(
            s.processes
                .iter()
                .filter(|p| p.readable)
                .map(|p| p.footprint_bytes),
        ));
        let gap = crate::detect::footprint_gap(&s.system, &s.processes);
        let f = self.footprints.get_or_insert(FootprintsSummary {
            unexplained_first_bytes: gap.unexplained_bytes,
            unexplained_peak_bytes: gap.unexplained_bytes,
            min_coverage: gap.coverage,
            ..FootprintsSummary::default()
        });
        f.unexplained_peak_bytes = f.unexplained_peak_bytes.max(gap.unexplained_bytes);
        f.min_coverage = f.min_coverage.min(gap.coverage);
        f.max_unreadable = f.max_unreadable.max(gap.unreadable);
        f.outside_footprint_peak_bytes = f
            .outside_footprint_peak_bytes
            .max(gap.outside_footprint_bytes);
        f.gpu_peak_bytes = f.gpu_peak_bytes.max(gap.gpu_bytes);
        let share: f64 = gap.footprints_bytes as f64 / phys as f64;
        let page_size = if s.system.page_size > 0 {
            s.system.page_size
        } else {
            4096
        };
        for p in &s.processes {
            let st = self.stats.entry(p.pid).or_insert_with(|| Stats {
                name: p.name.clone(),
                first_ms: s.t_ms,
                swap_at_first: swap,
                min_free: f64::INFINITY,
                first_pageins: p.pageins,
                ..Default::default()
            });
            st.watched |= ts.watched.contains(&p.pid);
            st.last_ms = s.t_ms;
            if p.footprint_bytes > st.peak_fp {
                st.peak_fp = p.footprint_bytes;
                st.peak_fp_ms = s.t_ms;
            }
            st.min_free = st.min_free.min(s.system.free_pct);
            st.last_pageins = p.pageins;
            if let Some((t0, n0)) = st.prev {
                if s.t_ms > t0 {
                    let rate = p.pageins.saturating_sub(n0) as f64
                        / (s.t_ms.saturating_sub(t0) as f64 / 1000.0);
                    st.peak_rate = st.peak_rate.max(rate);
                }
            }
            st.prev = Some((s.t_ms, p.pageins));
            match st.seen.last_mut() {
                Some((_, last)) if *last + 1 >= index => *last = index,
                _ => st.seen.push((index, index)),
            }
            if swap >= st.max_swap {
                st.max_swap = swap;
                st.share_at_max_swap = share;
                st.fp_at_max_swap = p.footprint_bytes;
            }
            if let Some(ms) = p.swap_bytes {
                st.measured_swap = Some(st.measured_swap.unwrap_or(0).max(ms));
            }
            let peak = |old: Option<u64>, new: Option<u64>| match (old, new) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            st.compressed = peak(st.compressed, p.compressed_bytes);
            st.gpu = peak(st.gpu, p.gpu_bytes);
            st.outside = peak(st.outside, p.outside_footprint_bytes);
            st.readable |= p.readable;
            if let Some(pages) = p.swapin_bytes.map(|b| b / page_size) {
                if let Some((t0, n0)) = st.prev_swapins {
                    if s.t_ms > t0 {
                        let rate =
                            pages.saturating_sub(n0) as f64 / ((s.t_ms - t0) as f64 / 1000.0);
                        st.peak_swapins_rate = Some(st.peak_swapins_rate.unwrap_or(0.0).max(rate));
                    }
                }
                st.prev_swapins = Some((s.t_ms, pages));
            }
            if st.name != p.name {
                // Keep the latest name: a process that exec'd is known by what it became.
                st.name.clone_from(&p.name);
            }
            if p.cmdline.is_some() && st.cmdline != p.cmdline {
                st.cmdline.clone_from(&p.cmdline);
            }
            if let Some((state, evidence)) = detector.state_of(p.pid) {
                let g = st.growth_by_state.entry(state).or_default();
                *g = g.saturating_add(delta);
                st.worst = st.worst.max(state);
                st.hidden = st.hidden.max(evidence.hidden_bytes);
                if state != State::Fits && st.first_flag.is_none() {
                    st.first_flag = Some(s.t_ms);
                }
            }
        }
    }

    /// The report of the samples taken, with what the read skipped.
    pub fn finish(self, notes: &ReadNotes) -> Report {
        let cfg = &self.cfg;
        let phys = self.phys.unwrap_or(self.header_phys.max(1));
        let tolerance = cfg.swap_tolerance_for(phys);
        let stats = &self.stats;
        let any_watched = stats.values().any(|s| s.watched);
        let largest_watched = stats
            .iter()
            .filter(|(_, s)| s.watched)
            .max_by_key(|(_, s)| s.peak_fp)
            .map(|(&pid, _)| pid);
        let mut processes: Vec<ProcessReport> = stats
            .iter()
            .map(|(&pid, st)| {
                let carries = Some(pid) == largest_watched;
                judge(pid, st, &self.swap, phys, tolerance, cfg, carries)
            })
            .collect();
        // Watched processes (or the top ones when none was watched), plus every
        // process with a verdict other than fits.
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
        });

        let first_swap = self.swap.first().map_or(0, |&(_, s)| s);
        let max_swap = self.swap.iter().map(|&(_, s)| s).max().unwrap_or(0);
        let swap_growth = signed_diff(max_swap, first_swap);
        let mut verdict = processes
            .iter()
            .map(|p| p.verdict)
            .max()
            .unwrap_or_default();
        if verdict < State::Overflow && swap_growth >= signed_diff(tolerance, 0) {
            // Swap grew and no process explains it: judge the machine.
            verdict = cfg.swap_verdict(self.peak_readable as f64 / phys as f64);
        }
        let min_free = if self.min_free.is_finite() {
            self.min_free
        } else {
            0.0
        };
        let summary = match processes.iter().find(|p| p.verdict == verdict) {
            Some(p) => format!("{}: {} (pid {})", verdict.label(), p.name, p.pid),
            None => format!(
                "{}: swap grew {} while the run lasted",
                verdict.label(),
                format_bytes(swap_growth)
            ),
        };
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
            phases: Vec::new(),
            counters: Vec::new(),
            problems: notes.problems.iter().map(|p| p.to_string()).collect(),
            skipped_lines: notes.bad_lines,
            truncated_last_line: notes.truncated_last_line,
        }
    }
}

impl by_phase::Judge for RunJudge {
    fn push(&mut self, s: &TraceSample) {
        RunJudge::push(self, s);
    }

    fn verdict(self) -> State {
        self.finish(&ReadNotes::default()).verdict
    }
}

fn judge(
    pid: u32,
    st: &Stats,
    swap: &[(u64, u64)],
    phys: u64,
    tolerance: u64,
    cfg: &DetectorConfig,
    carries_tree: bool,
) -> ProcessReport {
    let growth = signed_diff(st.max_swap, st.swap_at_first);
    let (from, to) = growth_span(swap, &st.seen, st.swap_at_first, growth);
    let ff = st
        .growth_by_state
        .get(&State::FalseFit)
        .copied()
        .unwrap_or(0);
    let of = st
        .growth_by_state
        .get(&State::Overflow)
        .copied()
        .unwrap_or(0);
    let verdict = if ff > 0 || of > 0 {
        if of > ff {
            State::Overflow
        } else {
            State::FalseFit
        }
    } else if st.worst == State::FalseFit || st.worst == State::Overflow {
        st.worst
    } else if carries_tree && growth >= signed_diff(tolerance, 0) {
        cfg.swap_verdict(st.share_at_max_swap)
    } else if st.worst == State::HiddenMemory {
        State::HiddenMemory
    } else {
        State::Fits
    };
    let duration_s = (st.last_ms.saturating_sub(st.first_ms)) as f64 / 1000.0;
    let pageins_per_s = if duration_s > 0.0 {
        st.last_pageins.saturating_sub(st.first_pageins) as f64 / duration_s
    } else {
        0.0
    };
    let peak = format!(
        "{} of {} ({:.0} %)",
        format_bytes(st.peak_fp as i64),
        format_bytes(phys as i64),
        st.peak_fp as f64 / phys as f64 * 100.0
    );
    let when = match (from, to) {
        (Some(a), Some(b)) => format!(" between {} and {}", secs(a), secs(b)),
        _ => String::new(),
    };
    let measured = st
        .measured_swap
        .filter(|&m| m > 0)
        .map(|m| {
            format!(
                "; measured swap of the process (VmSwap) peaked at {}",
                format_bytes(m as i64)
            )
        })
        .unwrap_or_default()
        + &st
            .outside
            .filter(|&o| o > 0)
            .map(|o| {
                format!(
                    "; it owned up to {} outside its footprint",
                    format_bytes(o as i64)
                )
            })
            .unwrap_or_default()
        + &st
            .peak_swapins_rate
            .filter(|&r| r >= 1.0)
            .map(|r| format!("; swap-ins peaked at {r:.0} pages/s"))
            .unwrap_or_default();
    let evidence = match verdict {
        State::FalseFit => format!(
            "footprint peaked at {peak} while swap grew {}{when}; all footprints stayed at {:.0} % of memory: false fit — the footprint says it fits, swap says it does not{measured}",
            format_bytes(growth),
            st.share_at_max_swap * 100.0
        ),
        State::Overflow => format!(
            "footprint reached {peak} and swap grew {}{when}; all footprints at {:.0} % of memory: overflow — it did not fit, and the footprint shows it{measured}",
            format_bytes(growth),
            st.share_at_max_swap * 100.0
        ),
        State::HiddenMemory => format!(
            "footprint fell by {} without free memory rising to match, or memory was owned outside it: hidden memory — the memory is still held but not in the footprint (peak {peak}){measured}",
            format_bytes(st.hidden as i64)
        ),
        State::Fits => format!(
            "footprint peaked at {peak}; swap grew {} (tolerance {}): fits",
            format_bytes(growth),
            format_bytes(tolerance as i64)
        ),
    };
    ProcessReport {
        pid,
        name: st.name.clone(),
        cmdline: st.cmdline.clone(),
        verdict,
        watched: st.watched,
        first_seen_ms: st.first_ms,
        last_seen_ms: st.last_ms,
        peak_footprint_bytes: st.peak_fp,
        peak_footprint_at_ms: st.peak_fp_ms,
        swap_growth_bytes: growth,
        swap_growth_from_ms: from,
        swap_growth_to_ms: to,
        min_free_pct: if st.min_free.is_finite() {
            st.min_free
        } else {
            0.0
        },
        pageins_per_s,
        peak_pageins_per_s: st.peak_rate,
        hidden_bytes: st.hidden,
        measured_swap_peak_bytes: st.measured_swap,
        peak_swapins_per_s: st.peak_swapins_rate,
        peak_compressed_bytes: st.compressed,
        peak_gpu_bytes: st.gpu,
        peak_outside_footprint_bytes: st.outside,
        readable: st.readable,
        first_flag_ms: st.first_flag,
        evidence,
    }
}

/// When swap went from 10 % to 90 % of its growth, over the samples a
/// process was `seen` in (runs of indices into the run's `swap` series).
fn growth_span(
    swap: &[(u64, u64)],
    seen: &[(usize, usize)],
    base: u64,
    growth: i64,
) -> (Option<u64>, Option<u64>) {
    if growth <= 0 {
        return (None, None);
    }
    let at = |share: f64| {
        let level = base as f64 + growth as f64 * share;
        seen.iter()
            .flat_map(|&(a, b)| swap.get(a..=b).unwrap_or_default())
            .find(|&&(_, s)| s as f64 >= level)
            .map(|&(t, _)| t)
    };
    (at(0.1), at(0.9))
}

fn secs(ms: u64) -> String {
    format_duration(std::time::Duration::from_millis(ms))
}
