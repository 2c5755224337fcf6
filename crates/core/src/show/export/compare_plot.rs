//! The chart of `swapsight compare --plot`: runs overlaid, each in its own
//! colour — watched footprint as a solid line, swap growth dashed — against
//! time from each run's start. When every run carries the same phases, each
//! run's time is stretched phase by phase onto the first run's
//! ([`crate::judge::compare::align`]) and the phases are labelled along the top,
//! so that "decode" lines up with "decode" however long each run took.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::plot::Decimator;
use super::plot::{
    axis_format, draw_err, nice_ceiling, one_line, register_fonts, render_picture, ImageFormat,
    Picture, FAMILY, GIB, INK, MUTED, PALETTE,
};
use super::ExportError;
use crate::judge::compare::{align, boundaries, watched_footprint, Comparison};
use crate::record::trace::{Trace, TraceSample, Watching};

struct Run {
    label: String,
    colour: RGBColor,
    footprint: Vec<(f64, f64)>,
    growth: Vec<(f64, f64)>,
}

/// What the chart draws of one run: its phase boundaries and its two lines
/// (seconds from the run's start, bytes), decimated to the chart's width.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSeries {
    pub(crate) boundaries: Vec<f64>,
    pub(crate) footprint: Vec<(f64, f64)>,
    pub(crate) growth: Vec<(f64, f64)>,
}

impl RunSeries {
    /// The series of a whole trace, `width` pixels wide.
    pub fn of(trace: &Trace, width: u32) -> Self {
        let mut b = SeriesBuilder::new(width, trace.header().watching());
        for s in &trace.samples {
            b.push(s);
        }
        b.finish(boundaries(trace))
    }
}

/// A run's [`RunSeries`] as its samples stream by, in the same pass as its
/// report: the lines are thinned to between `width` and twice that many
/// columns as they come, the run's length not being known yet.
pub struct SeriesBuilder {
    /// Time and swap in use at the first sample.
    first: Option<(u64, u64)>,
    footprint: Decimator,
    growth: Decimator,
    watching: Watching,
}

impl SeriesBuilder {
    /// A builder for a run whose header says `watching`.
    pub fn new(width: u32, watching: Watching) -> Self {
        // Columns a second wide to start with: a run shorter than the chart
        // is wide keeps every sample.
        let d = Decimator::growing(1.0, width as usize);
        SeriesBuilder {
            first: None,
            footprint: d.clone(),
            growth: d,
            watching,
        }
    }

    /// Takes the run's next sample: the watched tree's footprint (else the
    /// largest process's) and swap growth since the first sample.
    pub fn push(&mut self, s: &TraceSample) {
        let (t0, swap0) = *self
            .first
            .get_or_insert((s.sample.t_ms, s.sample.system.swap_used_bytes));
        let x = s.sample.t_ms.saturating_sub(t0) as f64 / 1000.0;
        self.footprint
            .push((x, watched_footprint(s, self.watching) as f64));
        let g = s.sample.system.swap_used_bytes as f64 - swap0 as f64;
        self.growth.push((x, g));
    }

    /// The run's series, with its phase `boundaries` (seconds from its start).
    pub fn finish(self, boundaries: Vec<f64>) -> RunSeries {
        RunSeries {
            boundaries,
            footprint: self.footprint.finish(),
            growth: self.growth.finish(),
        }
    }
}

/// Draws the runs (in the order of `cmp.runs`) as PNG or SVG bytes.
pub fn render(
    traces: &[&Trace],
    cmp: &Comparison,
    width: u32,
    height: u32,
    format: ImageFormat,
) -> Result<Vec<u8>, ExportError> {
    let runs: Vec<RunSeries> = traces.iter().map(|t| RunSeries::of(t, width)).collect();
    render_series(&runs, cmp, width, height, format)
}

/// Draws runs given as their series ([`SeriesBuilder`] over a streamed
/// trace, or [`RunSeries::of`]).
pub fn render_series(
    traces: &[RunSeries],
    cmp: &Comparison,
    width: u32,
    height: u32,
    format: ImageFormat,
) -> Result<Vec<u8>, ExportError> {
    render_picture(format, width, height, &ComparisonPicture { traces, cmp })
}

struct ComparisonPicture<'a> {
    traces: &'a [RunSeries],
    cmp: &'a Comparison,
}

impl Picture for ComparisonPicture<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, plotters::coord::Shift>,
    ) -> Result<(), ExportError> {
        draw(root, self.traces, self.cmp)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    traces: &[RunSeries],
    cmp: &Comparison,
) -> Result<(), ExportError> {
    register_fonts();
    root.fill(&WHITE).map_err(draw_err)?;
    let reference = match (cmp.same_phases, traces.first()) {
        (true, Some(t)) => t.boundaries.clone(),
        _ => Vec::new(),
    };
    let runs = aligned_runs(traces, cmp, &reference);
    let (x_min, x_max, y_min, y_max) = bounds(&runs);
    let (top, body) = root.split_vertically(70);
    draw_heading(&top, cmp)?;
    let x_desc = if reference.is_empty() {
        "time from each run's start (s)".to_string()
    } else {
        format!(
            "time (s), each run's phases stretched onto {}'s",
            one_line(&cmp.runs[0].label)
        )
    };
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x_min..x_max, y_min..y_max)
        .map_err(draw_err)?;
    let x_fmt = axis_format(x_max - x_min);
    let y_fmt = axis_format(y_max - y_min);
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("GiB: footprint (solid), swap growth (dashed)")
        .x_label_formatter(&|v| x_fmt(*v))
        .y_label_formatter(&|v| y_fmt(*v))
        .label_style((FAMILY, 14).into_font().color(&INK))
        .axis_desc_style((FAMILY, 15).into_font().color(&INK))
        .bold_line_style(RGBColor(225, 225, 225).stroke_width(1))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(draw_err)?;
    let names = cmp.runs.first().map_or(&[][..], |r| &r.phases[..]);
    draw_phases(&mut chart, &reference, names, (y_min, y_max))?;
    for r in &runs {
        let c = r.colour;
        chart
            .draw_series(LineSeries::new(
                r.footprint.iter().copied(),
                c.stroke_width(2),
            ))
            .map_err(draw_err)?
            .label(r.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(3)));
        chart
            .draw_series(DashedLineSeries::new(
                r.growth.iter().copied(),
                8,
                5,
                c.stroke_width(2),
            ))
            .map_err(draw_err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperMiddle)
        .background_style(WHITE.mix(0.85))
        .border_style(MUTED)
        .label_font((FAMILY, 14).into_font().color(&INK))
        .draw()
        .map_err(draw_err)?;
    Ok(())
}

/// Each run's lines in GiB, its time stretched phase by phase onto the
/// `reference` boundaries (the first run's) when the runs share phases.
fn aligned_runs(traces: &[RunSeries], cmp: &Comparison, reference: &[f64]) -> Vec<Run> {
    traces
        .iter()
        .zip(&cmp.runs)
        .enumerate()
        .map(|(i, (t, row))| {
            let own: &[f64] = if reference.is_empty() {
                &[]
            } else {
                &t.boundaries
            };
            let x = |secs: f64| align(secs, own, reference);
            Run {
                label: one_line(&row.label),
                colour: PALETTE[i % PALETTE.len()],
                footprint: t.footprint.iter().map(|&(s, b)| (x(s), b / GIB)).collect(),
                growth: t.growth.iter().map(|&(s, b)| (x(s), b / GIB)).collect(),
            }
        })
        .collect()
}

/// The axes' ranges: every point, from 0, with headroom above for the
/// phase labels and the legend.
fn bounds(runs: &[Run]) -> (f64, f64, f64, f64) {
    let all = runs
        .iter()
        .flat_map(|r| r.footprint.iter().chain(&r.growth));
    let (mut x_min, mut x_max, mut y_min, mut y_max) = (0.0f64, 1.0f64, 0.0f64, 0.1f64);
    for &(x, y) in all {
        x_min = x_min.min(x);
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    let y_max = nice_ceiling(y_max * 1.3);
    let y_min = if y_min < 0.0 {
        -nice_ceiling(-y_min * 1.1)
    } else {
        0.0
    };
    (x_min, x_max, y_min, y_max)
}

/// The title and each run's verdict.
fn draw_heading<DB: DrawingBackend>(
    top: &DrawingArea<DB, plotters::coord::Shift>,
    cmp: &Comparison,
) -> Result<(), ExportError> {
    top.draw(&Text::new(
        format!("swapsight compare — {} runs", cmp.runs.len()),
        (16, 10),
        (FAMILY, 24).into_font().style(FontStyle::Bold).color(&INK),
    ))
    .map_err(draw_err)?;
    let verdicts: Vec<String> = cmp
        .runs
        .iter()
        .map(|r| format!("{}: {}", one_line(&r.label), r.verdict.label()))
        .collect();
    let mut sub = verdicts.join(" · ");
    if cmp.hosts_differ {
        sub.push_str("  (different hosts)");
    }
    top.draw(&Text::new(
        sub,
        (16, 42),
        (FAMILY, 15).into_font().color(&MUTED),
    ))
    .map_err(draw_err)?;
    Ok(())
}

/// The reference run's phases as shaded bands, named at the top.
fn draw_phases<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    reference: &[f64],
    names: &[String],
    (y_min, y_max): (f64, f64),
) -> Result<(), ExportError> {
    for (i, name) in names.iter().enumerate() {
        let (Some(&a), Some(&b)) = (reference.get(2 * i), reference.get(2 * i + 1)) else {
            break;
        };
        let shade = if i % 2 == 0 {
            RGBColor(120, 120, 200).mix(0.08)
        } else {
            RGBColor(120, 120, 200).mix(0.16)
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, y_min), (b, y_max)],
                shade.filled(),
            )))
            .map_err(draw_err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!(" {}", one_line(name)),
                (a, y_max - (y_max - y_min) * 0.01),
                (FAMILY, 14).into_font().color(&MUTED),
            )))
            .map_err(draw_err)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "compare_plot_tests.rs"]
mod tests;
