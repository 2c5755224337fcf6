//! Phases of a run, from the trace's marks (or, live, from the marks as
//! they come in): where each phase starts and ends. What a phase's samples
//! say is the report's table (`report::by_phase`), built on these spans.
//!
//! A phase runs from its mark to the next mark (any name), the next end
//! mark, or the last sample.

use serde::Serialize;

use crate::record::trace::Mark;

/// One phase's span in trace time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Phase {
    pub(crate) name: String,
    pub(crate) start_ms: u64,
    pub(crate) end_ms: u64,
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

#[cfg(test)]
#[path = "phases_tests.rs"]
mod tests;
