//! CSV: one row per sample and process, the system figures repeated on every
//! row so that any row stands alone (a pivot table, `pandas.read_csv`, a
//! `grep` for one pid). Units are in the column names. A sample without
//! processes still gets one row, with the process columns empty.

use std::collections::HashMap;
use std::io::Write;

use super::{ExportError, NextSample, Skeleton, StateTimeline};
pub use crate::util::text::text_cell;
use crate::util::units::signed_diff;

/// The header row, in order. Documented in `docs/exports.md`.
pub const COLUMNS: [&str; 24] = [
    "time_s",
    "unix_time_ms",
    "phys_bytes",
    "free_pct",
    "swap_used_bytes",
    "swap_growth_bytes",
    "swap_total_bytes",
    "compressed_bytes",
    "pid",
    "ppid",
    "name",
    "watched",
    "state",
    "footprint_bytes",
    "pageins_total",
    "pageins_per_s",
    "swap_bytes",
    "phase",
    "scope_limit_bytes",
    "scope_usage_bytes",
    "scope_swap_bytes",
    "pressure_level",
    "psi_some_avg10",
    "psi_full_avg10",
];

/// The columns after the phase: the scope's (empty without a scope), then
/// the pressure's (empty where the OS gave none: never a zero that reads
/// as calm).
const TAIL_COLUMNS: usize = 6;

/// Writes `trace` as CSV.
/// Writes the rows of a trace given as its [`Skeleton`] (a first pass) and
/// its samples (a second): one sample's rows at a time.
pub fn write(
    trace: &Skeleton,
    next: &mut NextSample<'_>,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    let io = ExportError::io("csv");
    let mut w = ::csv::WriterBuilder::new()
        .buffer_capacity(256 * 1024)
        .from_writer(out);
    let fail = |e: ::csv::Error| match e.into_kind() {
        ::csv::ErrorKind::Io(e) => ExportError::io("csv")(e),
        other => ExportError::io("csv")(std::io::Error::other(format!("{other:?}"))),
    };
    let mut counters = CounterColumns::new(&trace.counters);
    let header: Vec<String> = COLUMNS
        .iter()
        .map(|c| (*c).to_string())
        .chain(counters.header())
        .collect();
    w.write_record(&header).map_err(fail)?;
    let start_unix_ms = trace.header.as_ref().map_or(0, |h| h.start_unix_ms);
    let first_swap = trace.first.map_or(0, |(_, swap)| swap);
    let states = StateTimeline::from_flags(&trace.flags);
    let phases = trace.phases();
    let mut prev: HashMap<u32, (u64, u64)> = HashMap::new();
    let mut row: Vec<String> = Vec::with_capacity(COLUMNS.len());
    while let Some(ts) = next()? {
        let s = &ts.sample;
        let sys = &s.system;
        let system = [
            decimal(s.t_ms as f64 / 1000.0, 3),
            start_unix_ms.saturating_add(s.t_ms).to_string(),
            sys.phys_bytes.to_string(),
            decimal(sys.free_pct, 2),
            sys.swap_used_bytes.to_string(),
            signed_diff(sys.swap_used_bytes, first_swap).to_string(),
            sys.swap_total_bytes.to_string(),
            sys.compressed_bytes.to_string(),
        ];
        let phase =
            crate::record::phases::phase_at(&phases, s.t_ms).map_or("", |p| p.name.as_str());
        let phase = text_cell(phase);
        counters.advance(s.t_ms);
        let figure = |v: Option<u64>| v.map(|b| b.to_string()).unwrap_or_default();
        let tail = tail_cells(s);
        if s.processes.is_empty() {
            row.clear();
            row.extend(system.iter().cloned());
            row.resize(COLUMNS.len() - 1 - TAIL_COLUMNS, String::new());
            row.push(phase.to_string());
            row.extend(tail.iter().cloned());
            row.extend(counters.cells());
            w.write_record(&row).map_err(fail)?;
            continue;
        }
        for p in &s.processes {
            let rate = match prev.insert(p.pid, (s.t_ms, p.pageins)) {
                Some((t0, n0)) if s.t_ms > t0 => decimal(
                    p.pageins.saturating_sub(n0) as f64 / ((s.t_ms - t0) as f64 / 1000.0),
                    2,
                ),
                _ => String::new(),
            };
            row.clear();
            row.extend(system.iter().cloned());
            row.push(p.pid.to_string());
            row.push(p.ppid.to_string());
            row.push(text_cell(&p.name).into_owned());
            row.push(u8::from(ts.watched.contains(&p.pid)).to_string());
            row.push(states.state_at(p.pid, s.t_ms).as_str().to_string());
            row.push(p.footprint_bytes.to_string());
            row.push(p.pageins.to_string());
            row.push(rate);
            row.push(figure(p.swap_bytes));
            row.push(phase.to_string());
            row.extend(tail.iter().cloned());
            row.extend(counters.cells());
            w.write_record(&row).map_err(fail)?;
        }
    }
    w.flush().map_err(io)
}

/// The scope's and the pressure's cells of sample `s`.
fn tail_cells(s: &crate::probe::Sample) -> [String; TAIL_COLUMNS] {
    let figure = |v: Option<u64>| v.map(|b| b.to_string()).unwrap_or_default();
    let avg10 = |l: Option<crate::step::pressure::PsiLine>| {
        l.map(|l| decimal(l.avg10, 2)).unwrap_or_default()
    };
    let (scope_limit, scope_usage, scope_swap) = match &s.scope {
        Some(sc) => (
            sc.limit_bytes.to_string(),
            sc.usage_bytes.to_string(),
            figure(sc.swap_bytes),
        ),
        None => Default::default(),
    };
    let p = s.system.pressure.unwrap_or_default();
    [
        scope_limit,
        scope_usage,
        scope_swap,
        p.level.map(|l| l.as_str().to_string()).unwrap_or_default(),
        avg10(p.some),
        avg10(p.full),
    ]
}

/// A column per counter the trace holds (the first
/// [`crate::record::counters::MAX_NAMES`] names, in the order first
/// written), after the fixed ones: `counter:NAME:UNIT`, holding on each row
/// the counter's last value at or before the sample (empty before its
/// first). Without counters, no column.
struct CounterColumns<'a> {
    names: Vec<(&'a str, &'a str)>,
    /// (t_ms, column, value), in time order.
    points: Vec<(u64, usize, f64)>,
    next: usize,
    now: Vec<Option<f64>>,
}

impl<'a> CounterColumns<'a> {
    fn new(counters: &'a [crate::record::trace::Counter]) -> Self {
        let mut names: Vec<(&str, &str)> = Vec::new();
        let mut points = Vec::with_capacity(counters.len());
        for c in counters {
            let column = match names.iter().position(|(n, _)| *n == c.name) {
                Some(i) => i,
                None if names.len() < crate::record::counters::MAX_NAMES => {
                    names.push((&c.name, &c.unit));
                    names.len() - 1
                }
                None => continue,
            };
            points.push((c.t_ms, column, c.value));
        }
        points.sort_by_key(|p| p.0);
        CounterColumns {
            now: vec![None; names.len()],
            names,
            points,
            next: 0,
        }
    }

    fn header(&self) -> impl Iterator<Item = String> + '_ {
        self.names
            .iter()
            .map(|(name, unit)| format!("counter:{name}:{unit}"))
    }

    /// Takes the values written up to `t_ms`.
    fn advance(&mut self, t_ms: u64) {
        while let Some(&(t, column, value)) = self.points.get(self.next) {
            if t > t_ms {
                break;
            }
            self.now[column] = Some(value);
            self.next += 1;
        }
    }

    fn cells(&self) -> impl Iterator<Item = String> + '_ {
        self.now
            .iter()
            .map(|v| v.map(|v| decimal(v, 3)).unwrap_or_default())
    }
}

/// `x` rounded to `places` decimals, without trailing zeros: `12.5`, `38.54`.
fn decimal(x: f64, places: i32) -> String {
    let scale = 10f64.powi(places);
    let r = (x * scale).round() / scale;
    if r == r.trunc() && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

#[cfg(test)]
#[path = "csv_tests.rs"]
mod tests;
