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
use crate::trace::{Trace, TraceSample};
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

/// The table for a trace with marks (empty without). `judge` gives the
/// verdict on a run of two samples or more: the report's verdict on a whole
/// run, applied to the phase's samples.
pub fn phase_rows(trace: &Trace, judge: impl Fn(&Trace) -> State) -> Vec<PhaseRow> {
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    spans(&trace.marks, last_ms)
        .into_iter()
        .map(|p| row(trace, &p, &judge))
        .collect()
}

fn row(trace: &Trace, phase: &Phase, judge: &impl Fn(&Trace) -> State) -> PhaseRow {
    // The samples in [start, end], plus the last one before start as the baseline.
    let first_in = trace
        .samples
        .partition_point(|s| s.sample.t_ms < phase.start_ms);
    let end = trace
        .samples
        .partition_point(|s| s.sample.t_ms <= phase.end_ms);
    let from = if trace
        .samples
        .get(first_in)
        .is_some_and(|s| s.sample.t_ms == phase.start_ms)
    {
        first_in
    } else {
        first_in.saturating_sub(1)
    };
    let slice = &trace.samples[from..end.max(from)];
    // A sample on the boundary between two phases is the next one's own
    // (the last phase keeps the last sample).
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let own_end = if phase.end_ms >= last_ms {
        end
    } else {
        trace
            .samples
            .partition_point(|s| s.sample.t_ms < phase.end_ms)
    };
    let inside = &trace.samples[first_in..own_end.max(first_in)];
    let watched_fp = |s: &TraceSample| {
        saturating_sum(
            s.sample
                .processes
                .iter()
                .filter(|p| s.watched.is_empty() || s.watched.contains(&p.pid))
                .map(|p| p.footprint_bytes),
        )
    };
    // The baseline sample only says where swap stood when the phase began;
    // the phase's own figures come from its own samples.
    let own = if inside.is_empty() { slice } else { inside };
    let peak_fp = own.iter().map(watched_fp).max().unwrap_or(0);
    let swap_start = slice.first().map_or(0, |s| s.sample.system.swap_used_bytes);
    let swap_max = slice
        .iter()
        .map(|s| s.sample.system.swap_used_bytes)
        .max()
        .unwrap_or(swap_start);
    let min_free = own
        .iter()
        .map(|s| s.sample.system.free_pct)
        .fold(f64::INFINITY, f64::min);
    let unexplained = own
        .iter()
        .map(|s| footprint_gap(&s.sample.system, &s.sample.processes).unexplained_bytes)
        .max();
    let verdict = if slice.len() < 2 {
        State::Fits
    } else {
        let sub = Trace {
            header: trace.header.clone(),
            samples: slice.to_vec(),
            ..Trace::default()
        };
        judge(&sub)
    };
    PhaseRow {
        name: phase.name.clone(),
        start_ms: phase.start_ms,
        duration_ms: phase.end_ms.saturating_sub(phase.start_ms),
        peak_footprint_bytes: peak_fp,
        swap_growth_bytes: signed_diff(swap_max, swap_start),
        min_free_pct: if min_free.is_finite() { min_free } else { 0.0 },
        unexplained_peak_bytes: unexplained,
        samples: inside.len(),
        verdict,
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
