//! The verdict on a whole run as a fold over its samples: the same
//! detector the live shells use, then hindsight — which state most of the
//! swap growth happened under, and the machine's verdict when swap grew
//! and no process explains it.

use std::collections::HashMap;

use super::process::{Carries, RunMemory, Stats};
use super::scope::ScopeFold;
use super::swap_off::SwapOffFold;
use super::{by_phase, FootprintsSummary, ProcessReport, Report};
use crate::probe::Sample;
use crate::record::trace::{Header, ReadNotes, TraceSample};
use crate::step::detect::{Detector, DetectorConfig, State};
use crate::step::forecast::Replay;
use crate::step::pressure::PressureFold;
use crate::step::written::WrittenFold;
use crate::util::units::{format_bytes, signed_diff};

/// The report of a whole run, without the per-phase table, as a fold over
/// its samples: [`report`](super::report()) and
/// [`report_stream`](super::report_stream) feed it the run, and the
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
    /// Σ readable footprints with their own swap ([`FootprintGap::held_bytes`]),
    /// peak: the machine's share when no process explains the swap.
    ///
    /// [`FootprintGap::held_bytes`]: crate::step::detect::FootprintGap::held_bytes
    peak_held: u64,
    first_ms: Option<u64>,
    last_ms: u64,
    /// The latest phase mark: a phase may end after the last sample (a
    /// command that exits between ticks), and the run's span covers it.
    last_mark_ms: u64,
    /// (t, swap in use) of every sample, for "when it grew".
    swap: Vec<(u64, u64)>,
    pressure: PressureFold,
    forecast: Replay,
    scope: ScopeFold,
    written: WrittenFold,
    swap_off: SwapOffFold,
}

impl RunJudge {
    pub(crate) fn new(header: &Header, cfg: Option<DetectorConfig>) -> Self {
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
            peak_held: 0,
            first_ms: None,
            last_ms: 0,
            last_mark_ms: 0,
            swap: Vec::new(),
            pressure: PressureFold::new(header.pressure.clone()),
            forecast: Replay::new(header.forecast.clone()),
            scope: ScopeFold::default(),
            written: WrittenFold::default(),
            swap_off: SwapOffFold::new(&header.host.os),
        }
    }

    /// Takes the next sample of the run.
    pub fn push(&mut self, ts: &TraceSample) {
        let s = &ts.sample;
        let watched = ts.watched.iter().copied().collect();
        self.detector.update(s, &watched);
        let scope_psi = s.scope.as_ref().and_then(|sc| sc.pressure.as_ref());
        self.pressure
            .push(s.t_ms, s.system.pressure.as_ref(), scope_psi);
        self.forecast.push_in(s.t_ms, &s.system, s.scope.as_ref());
        self.written.push(s.t_ms, &s.system, s.scope.as_ref());
        self.swap_off.push(&s.system, s.scope.as_ref());
        let run = self.note_run(s, &ts.watched);
        for p in &s.processes {
            let st = self
                .stats
                .entry(p.pid)
                .or_insert_with(|| Stats::new(p, s.t_ms, run.swap));
            st.watched |= ts.watched.contains(&p.pid);
            st.note_sample(p, s.t_ms, run.free_pct, run.index);
            st.note_swap(run.swap, run.footprints_share, run.footprints_swap);
            st.note_ledgers(p, s.t_ms, run.page_size);
            if let Some((state, evidence)) = self.detector.state_of(p.pid) {
                st.note_state(state, evidence.hidden_bytes, run.swap_delta, s.t_ms);
            }
        }
    }

    /// Takes the time of a phase mark of the run.
    pub fn note_mark(&mut self, t_ms: u64) {
        self.last_mark_ms = self.last_mark_ms.max(t_ms);
    }

    /// Takes an event of the run: an `oom-kill` the recorder saw at its last
    /// look, after the samples.
    pub fn note_event(&mut self, e: &crate::record::trace::Event) {
        if e.kind == "oom-kill" {
            self.scope.note_oom_event(e.t_ms);
        }
    }

    /// The run's own figures at one sample: its span, swap series, free
    /// memory and the memory footprints do not explain.
    fn note_run(&mut self, s: &Sample, watched: &[u32]) -> RunSample {
        let judged =
            crate::step::detect::judged(s, &|pid| watched.contains(&pid), !watched.is_empty());
        let system = judged.system;
        // A run that enters its cgroup after it started (a command that
        // joins one first thing): its memory figures start again there. A
        // move from one cgroup to another keeps the run's worst so far.
        if self.scope.enters(s.scope.as_ref()) && !self.scope.seen_any() {
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
        self.peak_held = self.peak_held.max(gap.held_bytes);
        self.footprints
            .get_or_insert_with(|| FootprintsSummary::starting_at(&gap))
            .note(&gap, s.t_ms);
        RunSample {
            index,
            swap,
            swap_delta,
            footprints_share: gap.held_bytes as f64 / phys as f64,
            footprints_swap: gap.footprints_swap_bytes(),
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
        let scopes = self.scope.finish_all();
        let scope = super::scope::worst(&scopes).cloned();
        let oom_killed = scope.as_ref().is_some_and(|s| s.oom_kills > 0);
        let peak_share = self.peak_held as f64 / phys as f64;
        let processes = shown(
            self.stats
                .iter()
                .map(|(&pid, st)| {
                    let carries = match Some(pid) == largest_watched {
                        false => Carries::Itself,
                        true if oom_killed => Carries::OomKill(peak_share),
                        true => Carries::Tree,
                    };
                    let memory = RunMemory {
                        bytes: phys,
                        cgroup_limit: scope.is_some(),
                    };
                    st.report(pid, &self.swap, memory, tolerance, cfg, carries)
                })
                .collect(),
        );
        let first_swap = self.swap.first().map_or(0, |&(_, s)| s);
        let max_swap = self.swap.iter().map(|&(_, s)| s).max().unwrap_or(0);
        let swap_growth = signed_diff(max_swap, first_swap);
        let verdict = run_verdict(
            processes
                .iter()
                .map(|p| p.verdict)
                .max()
                .unwrap_or_default(),
            swap_growth,
            tolerance,
            oom_killed,
            peak_share,
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
            duration_ms: self.first_ms.map_or(0, |first| {
                self.last_ms.max(self.last_mark_ms).saturating_sub(first)
            }),
            samples: self.swap.len(),
            phys_bytes: phys,
            swap_growth_bytes: swap_growth,
            swap_tolerance_bytes: tolerance,
            swap_off: self.swap_off.finish(),
            min_free_pct: min_free,
            command: self.command,
            scope,
            scopes: if scopes.len() > 1 { scopes } else { Vec::new() },
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
            swap_written: self.written.finish(),
            forecasts: self.forecast.finish(),
            phases: Vec::new(),
            counters: Vec::new(),
            caches: Vec::new(),
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
    /// Readable footprints with their own swap (Linux `VmSwap`) over
    /// physical memory: what tells overflow from false fit.
    footprints_share: f64,
    /// The swap that share counts beside the footprints.
    footprints_swap: u64,
    /// Free memory in % (the scope's where a cgroup limits the run).
    free_pct: f64,
    page_size: u64,
}

/// The run's verdict: its worst process's; but when swap grew by the
/// tolerance, or the scope's OOM killer ended the run (it did not fit, and
/// no swap absorbed it), and no process explains it (none is overflow or
/// false fit), the machine's, at the readable footprints' peak share of
/// memory.
pub(super) fn run_verdict(
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
pub(super) fn shown(mut processes: Vec<ProcessReport>) -> Vec<ProcessReport> {
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
