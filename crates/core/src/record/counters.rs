//! Counters in a report: for each named figure a run wrote
//! (`swapsight.counter()`, `swapsight counter`, `watch_torch`), its peak and
//! last value over the run and over each phase, beside the phase's peak
//! footprint and swap growth.
//!
//! The points are kept compactly (a name index, not the name) and bounded:
//! at most [`MAX_NAMES`] names and [`crate::record::trace::MAX_COUNTERS`] points,
//! the rest counted, so a trace of any size costs at most a few MB here.

use serde::Serialize;

use crate::record::trace::{Counter, MAX_COUNTERS};

/// Counter names a report follows; the points of more are counted, not kept.
pub const MAX_NAMES: usize = 32;

/// One counter over a span: the run, or a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterRow {
    pub(crate) name: String,
    pub(crate) unit: String,
    pub(crate) peak: f64,
    pub(crate) last: f64,
    /// Values written in the span.
    pub points: usize,
}

/// The counter points of a run, as read.
#[derive(Debug, Default, Clone)]
pub struct CounterLog {
    /// (name, unit): the unit of a name's first point.
    names: Vec<(String, String)>,
    /// (t_ms, name index, value).
    points: Vec<(u64, usize, f64)>,
    /// Points not kept: past [`MAX_COUNTERS`], or of a name past [`MAX_NAMES`].
    pub dropped: usize,
}

impl CounterLog {
    pub(crate) fn push(&mut self, c: &Counter) {
        let index = match self.names.iter().position(|(n, _)| *n == c.name) {
            Some(i) => i,
            None if self.names.len() < MAX_NAMES => {
                self.names.push((c.name.clone(), c.unit.clone()));
                self.names.len() - 1
            }
            None => {
                self.dropped += 1;
                return;
            }
        };
        if self.points.len() < MAX_COUNTERS {
            self.points.push((c.t_ms, index, c.value));
        } else {
            self.dropped += 1;
        }
    }

    /// Whether no point was kept.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The allocators' caches of the points kept, folded in the order
    /// written ([`crate::step::caches`]).
    pub fn fold_caches(&self) -> crate::step::caches::CacheFold {
        let mut fold = crate::step::caches::CacheFold::default();
        for &(_, i, v) in &self.points {
            fold.push(&self.names[i].0, v);
        }
        fold
    }

    /// Each counter over the points `keep` takes, in the order first written.
    fn rows(&self, keep: impl Fn(u64) -> bool) -> Vec<CounterRow> {
        let mut rows: Vec<Option<CounterRow>> = vec![None; self.names.len()];
        let mut last_t = vec![0u64; self.names.len()];
        for &(t, i, v) in self.points.iter().filter(|p| keep(p.0)) {
            let (name, unit) = &self.names[i];
            let row = rows[i].get_or_insert_with(|| CounterRow {
                name: name.clone(),
                unit: unit.clone(),
                peak: v,
                last: v,
                points: 0,
            });
            row.peak = row.peak.max(v);
            // Written in time order; a point out of order is not the last.
            if t >= last_t[i] {
                row.last = v;
                last_t[i] = t;
            }
            row.points += 1;
        }
        rows.into_iter().flatten().collect()
    }

    /// Each counter over the whole run.
    pub fn run(&self) -> Vec<CounterRow> {
        self.rows(|_| true)
    }

    /// The counters of the span from `start_ms` to `end_ms`: its points
    /// from its start to its end (the end belongs to the next span), and,
    /// for the `last` span, a point at or after its end too.
    pub fn in_span(&self, start_ms: u64, end_ms: u64, last: bool) -> Vec<CounterRow> {
        self.rows(|t| t >= start_ms && (t < end_ms || last || start_ms == end_ms && t == end_ms))
    }
}

/// The counters of a run as a person reads them: one line each.
pub fn to_text(rows: &[CounterRow]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{}: peak {}, last {} ({} value{})\n",
                r.name,
                figure(r.peak, &r.unit),
                figure(r.last, &r.unit),
                r.points,
                if r.points == 1 { "" } else { "s" }
            )
        })
        .collect()
}

/// `1.2 GiB` for bytes, `12.5 items` otherwise.
pub fn figure(value: f64, unit: &str) -> String {
    if unit == "bytes" {
        // Within ±2^53 (the reader's bound), so the cast keeps the figure.
        crate::util::units::format_bytes(value as i64)
    } else {
        let v = if value.fract() == 0.0 {
            format!("{value:.0}")
        } else {
            format!("{value:.2}")
        };
        format!("{v} {unit}")
    }
}

/// A counter's last value, as `/metrics` shows it while a recording runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LastCounter {
    pub(crate) name: String,
    pub(crate) value: f64,
    pub(crate) unit: String,
}

/// Each name's last value of `counters` (in time order), at most
/// [`MAX_NAMES`] names, in the order first seen.
pub fn last_counters<'c>(
    counters: impl IntoIterator<Item = &'c crate::record::trace::Counter>,
) -> Vec<LastCounter> {
    let mut last = Vec::new();
    for c in counters {
        note_last(&mut last, &c.name, c.value, &c.unit);
    }
    last
}

/// `name`'s value is now `value`: in `last`, which holds at most
/// [`MAX_NAMES`] names (a name past them is not kept).
pub fn note_last(last: &mut Vec<LastCounter>, name: &str, value: f64, unit: &str) {
    if let Some(l) = last.iter_mut().find(|l| l.name == name) {
        l.value = value;
        if l.unit != unit {
            l.unit = unit.to_string();
        }
    } else if last.len() < MAX_NAMES {
        last.push(LastCounter {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
        });
    }
}

#[cfg(test)]
#[path = "counters_tests.rs"]
mod tests;
