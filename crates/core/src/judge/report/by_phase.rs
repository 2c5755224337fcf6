//! The per-phase table the source articles printed by hand: one row per
//! phase with its peak watched footprint, swap growth, minimum free memory,
//! the memory no footprint explains and the verdict of that phase alone.
//!
//! Each phase is judged by the same rule as a whole run (the report hands
//! that rule in, so the table depends on the spans and not back on the
//! report), on the samples of that phase plus the one just before it (its
//! baseline): swap that grew before a phase began is not charged to it.

use serde::Serialize;

use crate::record::phases::{spans, Phase};
use crate::record::trace::{Mark, Trace, TraceSample, Watching};
use crate::step::detect::State;
use crate::step::pressure::{PressureFold, PressureSummary};
use crate::util::units::{format_bytes, format_duration, format_growth, signed_diff};

/// One row of the per-phase table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseRow {
    pub(crate) name: String,
    pub(crate) start_ms: u64,
    pub(crate) duration_ms: u64,
    /// Peak of Σ footprints of the watched tree (of every kept process when
    /// none was watched) over the phase's samples.
    pub peak_footprint_bytes: u64,
    /// Highest swap in use during the phase − swap in use at its start.
    pub swap_growth_bytes: i64,
    pub(crate) min_free_pct: f64,
    /// Peak of the memory not explained by footprints (`detect::footprint_gap`),
    /// absent when the phase holds no sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unexplained_peak_bytes: Option<i64>,
    pub(crate) samples: usize,
    pub(crate) verdict: State,
    /// Memory pressure over the phase's samples and its baseline, as its
    /// verdict: the highest level and the time at each; absent without
    /// pressure figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureSummary>,
    /// Swap written from the phase's start to its end (its baseline sample
    /// to its last); absent without the counter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_written: Option<crate::step::written::SwapWritten>,
    /// Peak and last value of each counter written in the phase
    /// ([`super::counters`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<super::counters::CounterRow>,
}

/// The verdict on a run as a fold over its samples: the report's rule on a
/// whole run, fed one phase's samples.
pub trait Judge {
    /// Takes the phase's next sample.
    fn push(&mut self, s: &TraceSample);
    /// The verdict on the samples taken.
    fn verdict(self) -> State;
}

/// The table for a trace with marks (empty without). `new_judge` gives the
/// verdict on a run of two samples or more: the report's verdict on a whole
/// run, applied to the phase's samples.
pub fn phase_rows<J: Judge>(trace: &Trace, new_judge: impl Fn() -> J) -> Vec<PhaseRow> {
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let mut table = PhaseTable::new(&trace.marks, last_ms, trace.header().watching(), new_judge);
    for s in &trace.samples {
        table.push(s);
    }
    table.finish()
}

/// The per-phase table as a fold over a run's samples, in time order:
/// every phase's figures and judge, never its samples. Either the spans are
/// known first ([`PhaseTable::new`]: the marks and the last sample's time,
/// from a first pass over a file), or the marks come in with the samples
/// ([`PhaseTable::streaming`]), as a recording writes them: each after the
/// samples up to its time.
pub struct PhaseTable<J, F> {
    phases: Vec<Acc<J>>,
    /// The last sample's time, when known beforehand.
    last_ms: Option<u64>,
    /// Phases before this one are over.
    open_from: usize,
    /// The sample before the current one: a phase's baseline.
    prev: Option<TraceSample>,
    /// The sample before `prev` had the same time.
    prev_twin: bool,
    /// The time of the last mark taken (streaming).
    last_mark_ms: u64,
    new_judge: F,
    /// What the run's footprint is of (the header's word).
    watching: Watching,
}

/// Figures over a set of samples.
#[derive(Default)]
struct Figures {
    len: usize,
    peak_fp: u64,
    min_free: f64,
    unexplained: Option<i64>,
}

impl Figures {
    fn add(&mut self, s: &TraceSample, watching: Watching) {
        let watched_fp = s.run_footprint(watching, true);
        // Judged where the run is: inside its cgroup, the scope's free
        // memory and the footprints of what it holds, as the run's row.
        let judged = s.judged();
        let gap = judged.gap.unexplained_bytes;
        self.merge(Figures {
            len: 1,
            peak_fp: watched_fp,
            min_free: judged.system.free_pct,
            unexplained: Some(gap),
        });
    }

    fn merge(&mut self, other: Figures) {
        if other.len == 0 {
            return;
        }
        if self.len == 0 {
            *self = other;
            return;
        }
        self.len += other.len;
        self.peak_fp = self.peak_fp.max(other.peak_fp);
        self.min_free = self.min_free.min(other.min_free);
        self.unexplained = self.unexplained.max(other.unexplained);
    }
}

/// One phase under way: the samples of its span plus its baseline
/// (`slice`, what it is judged on) and its own samples, those before its
/// end (`before_end`) and those at it (`at_end`), which are its own only
/// when it ends with the run (else the next phase's).
struct Acc<J> {
    phase: Phase,
    /// Its end is known (a mark closed it, or the spans were known).
    closed: bool,
    started: bool,
    judge: Option<J>,
    slice: Figures,
    swap_start: Option<u64>,
    swap_max: u64,
    before_end: Figures,
    at_end: Figures,
    /// While open: the time of the samples in `at_end` (the latest).
    at_ms: Option<u64>,
    pressure: PressureFold,
    written: crate::step::written::WrittenFold,
}

impl<J: Judge> Acc<J> {
    fn new(phase: Phase, closed: bool) -> Self {
        Acc {
            phase,
            closed,
            started: false,
            judge: None,
            slice: Figures::default(),
            swap_start: None,
            swap_max: 0,
            before_end: Figures::default(),
            at_end: Figures::default(),
            at_ms: None,
            pressure: PressureFold::default(),
            written: Default::default(),
        }
    }

    fn add_slice(&mut self, s: &TraceSample, w: Watching, new_judge: &impl Fn() -> J) {
        let swap = s
            .sample
            .system
            .judged_in(s.sample.scope.as_ref())
            .swap_used_bytes;
        self.swap_start.get_or_insert(swap);
        self.swap_max = self.swap_max.max(swap);
        self.slice.add(s, w);
        self.pressure
            .push(s.sample.t_ms, s.sample.system.pressure.as_ref(), {
                let sc = s.sample.scope.as_ref();
                sc.and_then(|sc| sc.pressure.as_ref())
            });
        self.written
            .push(s.sample.t_ms, &s.sample.system, s.sample.scope.as_ref());
        self.judge.get_or_insert_with(new_judge).push(s);
    }

    /// A sample at or after the phase's start.
    fn add_own(&mut self, s: &TraceSample, w: Watching) {
        let t = s.sample.t_ms;
        if self.closed {
            let end = self.phase.end_ms;
            if t < end {
                self.before_end.add(s, w);
            } else if t == end {
                self.at_end.add(s, w);
            }
            return;
        }
        // Open: whether it is before the end is told when the end is known;
        // only the latest samples may be at it.
        if self.at_ms.is_some_and(|at| t > at) {
            self.before_end.merge(std::mem::take(&mut self.at_end));
        }
        if self.at_ms.is_some_and(|at| t < at) {
            self.before_end.add(s, w);
        } else {
            self.at_end.add(s, w);
            self.at_ms = Some(t);
        }
    }

    fn close(&mut self, end_ms: u64) {
        self.phase.end_ms = end_ms;
        self.closed = true;
        if self.at_ms != Some(end_ms) {
            self.before_end.merge(std::mem::take(&mut self.at_end));
        }
    }

    fn row(mut self, last_ms: u64) -> PhaseRow {
        // A sample on the boundary between two phases is the next one's
        // own (the last phase keeps the last sample).
        if self.phase.end_ms >= last_ms {
            self.before_end.merge(std::mem::take(&mut self.at_end));
        }
        let inside = self.before_end;
        // The baseline sample only says where swap stood when the phase began;
        // the phase's own figures come from its own samples.
        let own = if inside.len == 0 {
            &self.slice
        } else {
            &inside
        };
        let swap_start = self.swap_start.unwrap_or(0);
        let verdict = match self.judge {
            Some(j) if self.slice.len >= 2 => j.verdict(),
            _ => State::Fits,
        };
        PhaseRow {
            name: self.phase.name,
            start_ms: self.phase.start_ms,
            duration_ms: self.phase.end_ms.saturating_sub(self.phase.start_ms),
            peak_footprint_bytes: own.peak_fp,
            swap_growth_bytes: signed_diff(self.swap_max.max(swap_start), swap_start),
            min_free_pct: if own.len > 0 && own.min_free.is_finite() {
                own.min_free
            } else {
                0.0
            },
            unexplained_peak_bytes: own.unexplained,
            samples: inside.len,
            verdict,
            pressure: self.pressure.finish(),
            swap_written: self.written.finish(),
            counters: Vec::new(),
        }
    }
}

impl<J: Judge, F: Fn() -> J> PhaseTable<J, F> {
    /// The table of the phases `marks` describe in a run whose last sample
    /// is at `last_ms`.
    pub fn new(marks: &[Mark], last_ms: u64, watching: Watching, new_judge: F) -> Self {
        let mut table = Self::streaming(watching, new_judge);
        table.phases = spans(marks, last_ms)
            .into_iter()
            .map(|phase| Acc::new(phase, true))
            .collect();
        table.last_ms = Some(last_ms);
        table
    }

    /// A table whose marks come in with the samples ([`PhaseTable::mark`]).
    pub fn streaming(watching: Watching, new_judge: F) -> Self {
        PhaseTable {
            phases: Vec::new(),
            last_ms: None,
            open_from: 0,
            prev: None,
            prev_twin: false,
            last_mark_ms: 0,
            new_judge,
            watching,
        }
    }

    /// Takes a mark in the order of the file. `false` when it is out of the
    /// order this fold can follow — before a mark already taken, or before
    /// a sample already taken (not at its time) — and the table is then
    /// not to be used: the spans need every mark first ([`PhaseTable::new`]
    /// on a second pass).
    pub fn mark(&mut self, m: &Mark) -> bool {
        let t = m.t_ms;
        let prev_ms = self.prev.as_ref().map(|p| p.sample.t_ms);
        if t < self.last_mark_ms || prev_ms.is_some_and(|p| p > t || (p == t && self.prev_twin)) {
            return false;
        }
        self.last_mark_ms = t;
        if let Some(open) = self.phases.last_mut().filter(|a| !a.closed) {
            open.close(t);
        }
        if !m.end {
            let mut acc = Acc::new(
                Phase {
                    name: m.name.clone(),
                    start_ms: t,
                    end_ms: t,
                },
                false,
            );
            // The sample just taken is at the start: the phase's first own one.
            if let Some(prev) = self.prev.as_ref().filter(|p| p.sample.t_ms == t) {
                acc.started = true;
                acc.add_slice(prev, self.watching, &self.new_judge);
                acc.add_own(prev, self.watching);
            }
            self.phases.push(acc);
        }
        true
    }

    /// Takes the next sample (samples come in time order).
    pub fn push(&mut self, s: &TraceSample) {
        self.step(s);
        match &mut self.prev {
            Some(p) => p.clone_from(s),
            None => self.prev = Some(s.clone()),
        }
    }

    /// [`PhaseTable::push`] of a sample the caller no longer needs: kept
    /// as the next one's baseline without a copy.
    pub fn push_owned(&mut self, s: TraceSample) {
        self.step(&s);
        self.prev = Some(s);
    }

    fn step(&mut self, s: &TraceSample) {
        let t = s.sample.t_ms;
        self.prev_twin = self.prev.as_ref().is_some_and(|p| p.sample.t_ms == t);
        if !self.phases.is_empty() {
            for acc in &mut self.phases[self.open_from..] {
                let start = acc.phase.start_ms;
                if t < start && !acc.started {
                    // Phases start in order: none after this one has begun either.
                    break;
                }
                if !acc.started {
                    acc.started = true;
                    // The last sample before the start is the phase's baseline.
                    if t != start {
                        if let Some(prev) = &self.prev {
                            acc.add_slice(prev, self.watching, &self.new_judge);
                        }
                    }
                }
                if !acc.closed || t <= acc.phase.end_ms {
                    acc.add_slice(s, self.watching, &self.new_judge);
                }
                if t >= start {
                    acc.add_own(s, self.watching);
                }
            }
            while self
                .phases
                .get(self.open_from)
                .is_some_and(|a| a.started && a.closed && t > a.phase.end_ms)
            {
                self.open_from += 1;
            }
        }
    }

    /// The rows, one a phase, in order.
    pub fn finish(mut self) -> Vec<PhaseRow> {
        let last_ms = self
            .last_ms
            .unwrap_or_else(|| self.prev.as_ref().map_or(0, |p| p.sample.t_ms));
        if let Some(open) = self.phases.last_mut().filter(|a| !a.closed) {
            let end = last_ms.max(open.phase.start_ms);
            open.close(end);
        }
        // A phase that starts after the last sample has that sample as its baseline.
        if let Some(last) = self.prev.take() {
            for acc in self.phases.iter_mut().filter(|a| !a.started) {
                acc.add_slice(&last, self.watching, &self.new_judge);
            }
        }
        self.phases.into_iter().map(|a| a.row(last_ms)).collect()
    }
}

/// The table in text: one line a phase, figures in columns.
pub fn to_text(rows: &[PhaseRow]) -> String {
    use std::fmt::Write;
    let secs = |ms: u64| format_duration(std::time::Duration::from_millis(ms));
    let width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  {:>8}  {:>8}  {:>12}  {:>11}  {:>12}  {:>8}  {:>11}  {:>8}  verdict",
        "phase",
        "start",
        "duration",
        "peak watched",
        "swap growth",
        "swap written",
        "min free",
        "unexplained",
        "pressure"
    );
    for r in rows {
        if r.samples == 0 {
            // Its figures would be the sample before it: said as not its own.
            let _ = writeln!(
                out,
                "{:<width$}  {:>8}  {:>8}  not sampled: no sample fell in it (shorter than the interval), not judged",
                r.name,
                secs(r.start_ms),
                secs(r.duration_ms),
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:<width$}  {:>8}  {:>8}  {:>12}  {:>11}  {:>12}  {:>6.0} %  {:>11}  {:>8}  {}",
            r.name,
            secs(r.start_ms),
            secs(r.duration_ms),
            format_bytes(r.peak_footprint_bytes as i64),
            format_growth(r.swap_growth_bytes),
            r.swap_written.map_or_else(
                || "–".to_string(),
                |w| format_bytes(i64::try_from(w.bytes).unwrap_or(i64::MAX))
            ),
            r.min_free_pct,
            r.unexplained_peak_bytes
                .map_or_else(|| "–".to_string(), format_bytes),
            r.pressure.map_or("–", |p| p.levels.peak.as_str()),
            r.verdict.label()
        );
        for c in &r.counters {
            let _ = writeln!(
                out,
                "{:<width$}    {}: peak {}, last {}",
                "",
                c.name,
                super::counters::figure(c.peak, &c.unit),
                super::counters::figure(c.last, &c.unit)
            );
        }
    }
    out
}

/// Each phase's counters: the points from its start to its end (the next
/// phase's start is the next phase's; the last phase keeps a point at or
/// after its end).
pub fn attach_counters(phases: &mut [PhaseRow], log: &super::counters::CounterLog) {
    let count = phases.len();
    for (i, row) in phases.iter_mut().enumerate() {
        let end = row.start_ms.saturating_add(row.duration_ms);
        row.counters = log.in_span(row.start_ms, end, i + 1 == count);
    }
}

#[cfg(test)]
#[path = "by_phase_tests.rs"]
mod tests;
