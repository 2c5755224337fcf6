//! The per-phase table the source articles printed by hand: one row per
//! phase with its peak watched footprint, swap growth, minimum free memory,
//! the memory no footprint explains and the verdict of that phase alone.
//!
//! Each phase is judged by the same rule as a whole run (the report hands
//! that rule in, so the table depends on the spans and not back on the
//! report), on the samples of that phase plus the one just before it (its
//! baseline): swap that grew before a phase began is not charged to it.

use serde::Serialize;

use crate::detect::{footprint_gap, State};
use crate::phases::{spans, Phase};
use crate::trace::{Mark, Trace, TraceSample};
use crate::units::{format_bytes, format_duration, format_growth, saturating_sum, signed_diff};

/// One row of the per-phase table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseRow {
    pub name: String,
    pub start_ms: u64,
    pub duration_ms: u64,
    /// Peak of Σ footprints of the watched tree (of every kept process when
    /// none was watched) over the phase's samples.
    pub peak_footprint_bytes: u64,
    /// Highest swap in use during the phase − swap in use at its start.
    pub swap_growth_bytes: i64,
    pub min_free_pct: f64,
    /// Peak of the memory not explained by footprints (`detect::footprint_gap`),
    /// absent when the phase holds no sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unexplained_peak_bytes: Option<i64>,
    pub samples: usize,
    pub verdict: State,
}

/// The verdict on a run as a fold over its samples: the report's rule on a
/// whole run, fed one phase's samples.
pub trait Judge {
    fn push(&mut self, s: &TraceSample);
    fn verdict(self) -> State;
}

/// The table for a trace with marks (empty without). `new_judge` gives the
/// verdict on a run of two samples or more: the report's verdict on a whole
/// run, applied to the phase's samples.
pub fn phase_rows<J: Judge>(trace: &Trace, new_judge: impl Fn() -> J) -> Vec<PhaseRow> {
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let mut table = PhaseTable::new(&trace.marks, last_ms, new_judge);
    for s in &trace.samples {
        table.push(s);
    }
    table.finish()
}

/// The per-phase table as a fold over a run's samples, in time order:
/// every phase's figures and judge, never its samples. The spans need the
/// marks and the last sample's time first (a second pass over a file).
pub struct PhaseTable<J, F> {
    phases: Vec<Acc<J>>,
    last_ms: u64,
    /// Phases before this one are over.
    open_from: usize,
    /// The sample before the current one: a phase's baseline.
    prev: Option<TraceSample>,
    new_judge: F,
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
    fn add(&mut self, s: &TraceSample) {
        let watched_fp = saturating_sum(
            s.sample
                .processes
                .iter()
                .filter(|p| s.watched.is_empty() || s.watched.contains(&p.pid))
                .map(|p| p.footprint_bytes),
        );
        let gap = footprint_gap(&s.sample.system, &s.sample.processes).unexplained_bytes;
        if self.len == 0 {
            self.min_free = f64::INFINITY;
        }
        self.len += 1;
        self.peak_fp = self.peak_fp.max(watched_fp);
        self.min_free = self.min_free.min(s.sample.system.free_pct);
        self.unexplained = Some(self.unexplained.map_or(gap, |u| u.max(gap)));
    }
}

/// One phase under way: the samples of its span plus its baseline
/// (`slice`, what it is judged on) and its own samples (`inside`).
struct Acc<J> {
    phase: Phase,
    started: bool,
    judge: Option<J>,
    slice: Figures,
    swap_start: Option<u64>,
    swap_max: u64,
    inside: Figures,
}

impl<J: Judge> Acc<J> {
    fn add_slice(&mut self, s: &TraceSample, new_judge: &impl Fn() -> J) {
        let swap = s.sample.system.swap_used_bytes;
        self.swap_start.get_or_insert(swap);
        self.swap_max = self.swap_max.max(swap);
        self.slice.add(s);
        self.judge.get_or_insert_with(new_judge).push(s);
    }

    fn row(self) -> PhaseRow {
        // The baseline sample only says where swap stood when the phase began;
        // the phase's own figures come from its own samples.
        let own = if self.inside.len == 0 {
            &self.slice
        } else {
            &self.inside
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
            samples: self.inside.len,
            verdict,
        }
    }
}

impl<J: Judge, F: Fn() -> J> PhaseTable<J, F> {
    /// The table of the phases `marks` describe in a run whose last sample
    /// is at `last_ms`.
    pub fn new(marks: &[Mark], last_ms: u64, new_judge: F) -> Self {
        PhaseTable {
            phases: spans(marks, last_ms)
                .into_iter()
                .map(|phase| Acc {
                    phase,
                    started: false,
                    judge: None,
                    slice: Figures::default(),
                    swap_start: None,
                    swap_max: 0,
                    inside: Figures::default(),
                })
                .collect(),
            last_ms,
            open_from: 0,
            prev: None,
            new_judge,
        }
    }

    /// Takes the next sample (samples come in time order).
    pub fn push(&mut self, s: &TraceSample) {
        if self.phases.is_empty() {
            return;
        }
        let t = s.sample.t_ms;
        for acc in &mut self.phases[self.open_from..] {
            let (start, end) = (acc.phase.start_ms, acc.phase.end_ms);
            if t < start && !acc.started {
                // Phases start in order: none after this one has begun either.
                break;
            }
            if !acc.started {
                acc.started = true;
                // The last sample before the start is the phase's baseline.
                if t != start {
                    if let Some(prev) = &self.prev {
                        acc.add_slice(prev, &self.new_judge);
                    }
                }
            }
            if t <= end {
                acc.add_slice(s, &self.new_judge);
            }
            // A sample on the boundary between two phases is the next one's
            // own (the last phase keeps the last sample).
            if t >= start && (t < end || (end >= self.last_ms && t <= end)) {
                acc.inside.add(s);
            }
        }
        while self
            .phases
            .get(self.open_from)
            .is_some_and(|a| a.started && t > a.phase.end_ms)
        {
            self.open_from += 1;
        }
        match &mut self.prev {
            Some(p) => p.clone_from(s),
            None => self.prev = Some(s.clone()),
        }
    }

    /// The rows, one a phase, in order.
    pub fn finish(mut self) -> Vec<PhaseRow> {
        // A phase that starts after the last sample has that sample as its baseline.
        if let Some(last) = self.prev.take() {
            for acc in self.phases.iter_mut().filter(|a| !a.started) {
                acc.add_slice(&last, &self.new_judge);
            }
        }
        self.phases.into_iter().map(Acc::row).collect()
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
        "{:<width$}  {:>8}  {:>8}  {:>12}  {:>11}  {:>8}  {:>11}  verdict",
        "phase", "start", "duration", "peak watched", "swap growth", "min free", "unexplained"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:>8}  {:>8}  {:>12}  {:>11}  {:>6.0} %  {:>11}  {}",
            r.name,
            secs(r.start_ms),
            secs(r.duration_ms),
            format_bytes(r.peak_footprint_bytes as i64),
            format_growth(r.swap_growth_bytes),
            r.min_free_pct,
            r.unexplained_peak_bytes
                .map_or_else(|| "–".to_string(), format_bytes),
            r.verdict.label()
        );
    }
    out
}

#[cfg(test)]
#[path = "by_phase_tests.rs"]
mod tests;
