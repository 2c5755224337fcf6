//! Phases of a run, from the trace's marks, and the per-phase table the
//! source articles printed by hand: one row per phase with its peak watched
//! footprint, swap growth, minimum free memory, the memory no footprint
//! explains and the verdict of that phase alone.
//!
//! A phase runs from its mark to the next mark (any name), the next end
//! mark, or the last sample. Each phase is judged by the same
//! [`report`](crate::report) as a whole run, on the samples of that phase
//! plus the one just before it (its baseline): swap that grew before a
//! phase began is not charged to it.

use serde::Serialize;

use crate::detect::{DetectorConfig, State};
use crate::trace::{Mark, Trace};
use crate::units::{saturating_sum, signed_diff};

/// One phase's span in trace time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub name: String,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// The spans the marks describe, in order. Marks are taken in trace order
/// sorted by time (a stable sort: equal times keep their order).
pub fn spans(marks: &[Mark], last_ms: u64) -> Vec<Phase> {
    let mut sorted: Vec<&Mark> = marks.iter().collect();
    sorted.sort_by_key(|m| m.t_ms);
    let mut out: Vec<Phase> = Vec::new();
    let mut open: Option<(&str, u64)> = None;
    for m in sorted {
        if let Some((name, start)) = open.take() {
            out.push(Phase {
                name: name.to_string(),
                start_ms: start,
                end_ms: m.t_ms,
            });
        }
        if !m.end {
            open = Some((&m.name, m.t_ms));
        }
    }
    if let Some((name, start)) = open {
        out.push(Phase {
            name: name.to_string(),
            start_ms: start,
            end_ms: last_ms.max(start),
        });
    }
    out
}

/// The phase under way at `t_ms`, if any.
pub fn phase_at(phases: &[Phase], t_ms: u64) -> Option<&Phase> {
    phases.iter().rev().find(|p| {
        p.start_ms <= t_ms && (t_ms < p.end_ms || p.start_ms == p.end_ms && t_ms == p.start_ms)
    })
}

/// Phases of a live session as marks come in: the finished ones (the last
/// [`PhaseLog::KEPT`]) and the one under way.
#[derive(Debug, Clone, Default)]
pub struct PhaseLog {
    done: std::collections::VecDeque<Phase>,
    open: Option<(String, u64)>,
}

impl PhaseLog {
    /// Finished phases kept (a chart shows minutes, not thousands of phases).
    pub const KEPT: usize = 200;

    /// A phase starts at `t_ms` (and the one under way ends).
    pub fn start(&mut self, name: &str, t_ms: u64) {
        self.end(t_ms);
        self.open = Some((name.to_string(), t_ms));
    }

    /// The phase under way ends at `t_ms`.
    pub fn end(&mut self, t_ms: u64) {
        if let Some((name, start_ms)) = self.open.take() {
            if self.done.len() == Self::KEPT {
                self.done.pop_front();
            }
            self.done.push_back(Phase {
                name,
                start_ms,
                end_ms: t_ms.max(start_ms),
            });
        }
    }

    /// The phase under way.
    pub fn current(&self) -> Option<&str> {
        self.open.as_ref().map(|(n, _)| n.as_str())
    }

    /// The phases that overlap `[from_ms, now_ms]`, the one under way last
    /// (ending `now_ms`).
    pub fn recent(&self, from_ms: u64, now_ms: u64) -> Vec<Phase> {
        let mut v: Vec<Phase> = self
            .done
            .iter()
            .filter(|p| p.end_ms >= from_ms)
            .cloned()
            .collect();
        if let Some((name, start_ms)) = &self.open {
            v.push(Phase {
                name: name.clone(),
                start_ms: *start_ms,
                end_ms: now_ms.max(*start_ms),
            });
        }
        v
    }
}

/// Takes the marks waiting in `inbox` into the recording and the live log,
/// at the time of the tick just written (`t_ms`, the points' clock).
pub fn take_marks(
    inbox: &mut crate::marks::MarkInbox,
    rec: &mut crate::recorder::Recorder,
    log: &mut PhaseLog,
    t_ms: u64,
) -> Result<(), crate::trace::TraceError> {
    use crate::marks::MarkLine;
    for line in inbox.poll() {
        match line {
            MarkLine::Start(name) => {
                rec.mark(&name, false)?;
                log.start(&name, t_ms);
            }
            MarkLine::End(name) => {
                let name = name
                    .or_else(|| log.current().map(String::from))
                    .unwrap_or_default();
                rec.mark(&name, true)?;
                log.end(t_ms);
            }
        }
    }
    Ok(())
}

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

/// The table for a trace with marks (empty without). `cfg` as in
/// [`crate::report::report`].
pub fn phase_rows(trace: &Trace, cfg: Option<&DetectorConfig>) -> Vec<PhaseRow> {
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    spans(&trace.marks, last_ms)
        .into_iter()
        .map(|p| row(trace, &p, cfg))
        .collect()
}

fn row(trace: &Trace, phase: &Phase, cfg: Option<&DetectorConfig>) -> PhaseRow {
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
    let watched_fp = |s: &crate::trace::TraceSample| {
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
        .map(|s| {
            crate::detect::footprint_gap(&s.sample.system, &s.sample.processes).unexplained_bytes
        })
        .max();
    let verdict = if slice.len() < 2 {
        State::Fits
    } else {
        let sub = Trace {
            header: trace.header.clone(),
            samples: slice.to_vec(),
            ..Trace::default()
        };
        crate::report::judge_run(&sub, cfg.cloned()).verdict
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
    use crate::units::{format_bytes, format_duration, format_growth};
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
#[path = "phases_tests.rs"]
mod tests;
