//! The chart's data, apart from drawing: the time axis, the swap growth and
//! free memory curves, one footprint line per process (broken where the
//! process is missing from a sample), the shaded states, the phases and the
//! value range. Pure, so that it is tested without pixels.

use plotters::style::RGBColor;

use super::{nice_ceiling, one_line, GB, PALETTE};
use crate::detect::State;
use crate::export::{state_intervals, top_processes, Interval};
use crate::phases::Phase;
use crate::report::Report;
use crate::trace::Trace;

/// One footprint line of the chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    pub label: String,
    pub colour: RGBColor,
    pub width: u32,
    pub segments: Vec<Vec<(f64, f64)>>,
}

/// Everything the chart shows, in seconds from the first sample and GB.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChartData {
    pub x_max: f64,
    /// Swap growth since the first sample, GB.
    pub growth: Vec<(f64, f64)>,
    /// Free memory, % (right axis).
    pub free: Vec<(f64, f64)>,
    pub series: Vec<Series>,
    /// The shaded stretches, live flags and a verdict found in hindsight.
    pub intervals: Vec<Interval>,
    /// The state shaded from the report alone, if any.
    pub hindsight: Option<State>,
    /// The narrowest a shaded stretch is drawn: one sampling interval.
    pub min_width: f64,
    pub y_min: f64,
    pub y_max: f64,
    pub phases: Vec<Phase>,
}

/// The time of the first sample: the chart's zero.
pub(crate) fn data_t0(trace: &Trace) -> u64 {
    trace.samples.first().map_or(0, |s| s.sample.t_ms)
}

/// The chart of `trace` with the `processes` largest processes.
pub(crate) fn chart_data(trace: &Trace, report: &Report, processes: usize) -> ChartData {
    let t0 = data_t0(trace);
    let secs = |t_ms: u64| t_ms.saturating_sub(t0) as f64 / 1000.0;
    // The latest sample, not the last: a sample out of order (a damaged
    // trace) must not land outside the chart, where plotters' pixel
    // arithmetic overflows.
    let x_max = trace
        .samples
        .iter()
        .map(|s| secs(s.sample.t_ms))
        .fold(1.0, f64::max);
    let first_swap = trace
        .samples
        .first()
        .map_or(0, |s| s.sample.system.swap_used_bytes);
    let growth: Vec<(f64, f64)> = trace
        .samples
        .iter()
        .map(|s| {
            let g = s.sample.system.swap_used_bytes as f64 - first_swap as f64;
            (secs(s.sample.t_ms), g / GB)
        })
        .collect();
    let free: Vec<(f64, f64)> = trace
        .samples
        .iter()
        .map(|s| {
            (
                secs(s.sample.t_ms),
                s.sample.system.free_pct.clamp(0.0, 100.0),
            )
        })
        .collect();
    let picked = top_processes(trace, processes);
    let series: Vec<Series> = picked
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut segments = vec![Vec::new()];
            for s in &trace.samples {
                match s.sample.processes.iter().find(|q| q.pid == p.pid) {
                    Some(q) => segments
                        .last_mut()
                        .expect("never empty")
                        .push((secs(s.sample.t_ms), q.footprint_bytes as f64 / GB)),
                    None if segments.last().is_some_and(|v| !v.is_empty()) => {
                        segments.push(Vec::new());
                    }
                    None => {}
                }
            }
            segments.retain(|v| !v.is_empty());
            Series {
                label: format!(
                    "{} {}{}",
                    one_line(&p.name),
                    p.pid,
                    if p.watched { " (watched)" } else { "" }
                ),
                colour: PALETTE[i % PALETTE.len()],
                width: if p.watched { 3 } else { 2 },
                segments,
            }
        })
        .collect();
    let mut intervals = state_intervals(trace);
    // A verdict reached only in hindsight (no live flag of that state): shade
    // the stretch the report names, from 10 % to 90 % of the swap growth.
    let mut hindsight = None;
    if matches!(report.verdict, State::FalseFit | State::Overflow)
        && !intervals.iter().any(|i| i.state == report.verdict)
    {
        let p = report
            .processes
            .iter()
            .find(|p| p.verdict == report.verdict);
        if let Some((from_ms, to_ms)) =
            p.and_then(|p| Some((p.swap_growth_from_ms?, p.swap_growth_to_ms?)))
        {
            intervals.push(Interval {
                state: report.verdict,
                from_ms,
                to_ms,
            });
            hindsight = Some(report.verdict);
        }
    }
    let y_top = series
        .iter()
        .flat_map(|s| s.segments.iter().flatten())
        .chain(growth.iter())
        .map(|&(_, y)| y)
        .fold(0.0f64, f64::max);
    let y_bottom = growth.iter().map(|&(_, y)| y).fold(0.0f64, f64::min);
    let y_max = nice_ceiling((y_top * 1.1).max(0.1));
    let y_min = if y_bottom < 0.0 {
        -nice_ceiling(-y_bottom * 1.1)
    } else {
        0.0
    };

    let min_width = trace
        .header
        .as_ref()
        .map_or(0.5, |h| h.interval_ms as f64 / 1000.0);
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let spans = crate::phases::spans(&trace.marks, last_ms);
    ChartData {
        x_max,
        growth,
        free,
        series,
        intervals,
        hindsight,
        min_width,
        y_min,
        y_max,
        phases: spans,
    }
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
