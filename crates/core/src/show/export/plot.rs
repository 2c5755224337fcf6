//! The chart of a run, PNG or SVG: footprint lines of the watched and largest
//! processes, swap growth as a filled area, free memory on the right axis,
//! and the stretches where a process was in false fit / overflow / hidden
//! memory shaded behind them. The title carries the report's verdict, so
//! the picture says at a glance what `swapsight report` says in words.
//!
//! Shaded intervals come from the trace's flag records (see
//! [`super::state_intervals`]): what the live detector raised, with the whole
//! machine in view — a replay over the processes a trace kept could differ.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (through plotters'
//! `ab_glyph`), so a PNG looks the same on Linux and macOS and needs no
//! system fonts. An SVG names the family and lets the viewer render it.

use std::io::{BufRead, Seek};

use plotters::chart::DualCoordChartContext;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

use super::ExportError;
use crate::judge::report::Report;
use crate::record::trace::{Header, Record, Trace, TraceError, TraceReader};

mod data;
mod legend;
mod render;
mod style;
mod title;

pub(crate) use super::decimate::{decimate, Decimator};
use data::{chart_data, ChartData, ChartLines, ChartScan, LinePick};
use legend::{draw_legend, legend_entries, legend_rows};
pub(crate) use render::{draw_err, register_fonts, render_picture, Picture, FAMILY};
pub(crate) use style::*;
use title::draw_title;

/// Image format of a chart ([`super::ExportFormat::image`] from a file name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// A PNG image.
    Png,
    /// An SVG document.
    Svg,
}

/// What to draw and how big.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotOptions {
    /// Width in pixels (1200 by default).
    pub width: u32,
    /// Height in pixels (675 by default).
    pub height: u32,
    /// Footprint lines for this many processes (watched first).
    pub processes: usize,
    /// Where the trace watched a tree: lines for processes outside it too,
    /// by peak footprint. Off, only those the report suspects (not judged
    /// fits) get one beside the tree.
    pub all_processes: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 1200,
            height: 675,
            processes: 5,
            all_processes: false,
        }
    }
}

/// Smallest and largest chart sides, in pixels.
pub const MIN_SIDE: u32 = 320;
/// Largest chart side, in pixels.
pub const MAX_SIDE: u32 = 8192;

impl PlotOptions {
    fn check(&self) -> Result<(), ExportError> {
        let bad = |why: String| ExportError::Size {
            width: self.width,
            height: self.height,
            why,
        };
        for side in [self.width, self.height] {
            if !(MIN_SIDE..=MAX_SIDE).contains(&side) {
                return Err(bad(format!(
                    "each side must be {MIN_SIDE} to {MAX_SIDE} pixels"
                )));
            }
        }
        Ok(())
    }
}

/// Draws the chart as a PNG file's bytes.
pub fn png(trace: &Trace, report: &Report, opts: &PlotOptions) -> Result<Vec<u8>, ExportError> {
    Chart::of(trace, report, opts).png(opts)
}

/// Draws the chart as an SVG document.
pub fn svg(trace: &Trace, report: &Report, opts: &PlotOptions) -> Result<String, ExportError> {
    Chart::of(trace, report, opts).svg(opts)
}

/// Either format, as bytes.
pub fn render(
    trace: &Trace,
    report: &Report,
    opts: &PlotOptions,
    format: ImageFormat,
) -> Result<Vec<u8>, ExportError> {
    Chart::of(trace, report, opts).render(opts, format)
}

/// What a chart shows, before the pixels: its lines, shading and phases,
/// the trace's header (the title) and the report (the verdict).
pub struct Chart {
    data: ChartData,
    header: Option<Header>,
    report: Report,
}

impl Chart {
    /// The chart of a whole trace, every point kept until drawn.
    pub fn of(trace: &Trace, report: &Report, opts: &PlotOptions) -> Chart {
        Chart {
            data: chart_data(trace, report, LinePick::of(report, opts)),
            header: trace.header.clone(),
            report: report.clone(),
        }
    }

    /// The chart of a trace as it streams: one pass for the report and the
    /// time range (two when it has phase marks), one more for the lines,
    /// each thinned to the chart's width as it comes (at most four points a
    /// pixel column, the lowest and highest among them). What it holds is
    /// the report's figures and the chart's points, never the samples.
    pub fn streamed<R: BufRead + Seek>(
        reader: &mut TraceReader<R>,
        opts: &PlotOptions,
    ) -> Result<Chart, TraceError> {
        let mut scan = ChartScan::default();
        let report = crate::judge::report::report_stream(reader, None, |r| scan.push(r))?;
        let pick = LinePick::of(&report, opts);
        let mut lines = ChartLines::new(scan, pick, Some(opts.width as usize));
        if report.samples > 0 {
            reader.rewind()?;
            while let Some(record) = reader.next_record()? {
                if let Record::Sample(s) = record {
                    lines.push(&s);
                }
            }
        }
        let header = reader.header().clone();
        Ok(Chart {
            data: lines.finish(&report, Some(header.interval_ms)),
            header: Some(header),
            report,
        })
    }

    /// The report the title carries.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Draws the chart as a PNG file's bytes.
    pub fn png(&self, opts: &PlotOptions) -> Result<Vec<u8>, ExportError> {
        self.render(opts, ImageFormat::Png)
    }

    /// Draws the chart as an SVG document.
    pub fn svg(&self, opts: &PlotOptions) -> Result<String, ExportError> {
        let bytes = self.render(opts, ImageFormat::Svg)?;
        String::from_utf8(bytes).map_err(draw_err)
    }

    /// Either format, as bytes.
    pub fn render(&self, opts: &PlotOptions, format: ImageFormat) -> Result<Vec<u8>, ExportError> {
        opts.check()?;
        render_picture(
            format,
            opts.width,
            opts.height,
            &ChartPicture { chart: self, opts },
        )
    }
}

struct ChartPicture<'a> {
    chart: &'a Chart,
    opts: &'a PlotOptions,
}

impl Picture for ChartPicture<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ExportError> {
        draw(root, self.chart, self.opts)
    }
}

/// The plot's coordinates: memory in GiB on the left, free % on the right.
type Plot<'a, DB> = DualCoordChartContext<
    'a,
    DB,
    Cartesian2d<RangedCoordf64, RangedCoordf64>,
    Cartesian2d<RangedCoordf64, RangedCoordf64>,
>;

/// Sizes scaled to the picture: 1.0 at 1200×675.
struct Scale(f64);

impl Scale {
    fn of(opts: &PlotOptions) -> Scale {
        let (w, h) = (opts.width as f64, opts.height as f64);
        // Below ~0.7 text stops being legible: small charts get relatively
        // larger text.
        Scale((w / 1200.0).min(h / 675.0).max(0.7))
    }

    fn px(&self, v: f64) -> f64 {
        (v * self.0).round().max(1.0)
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    opts: &PlotOptions,
) -> Result<(), ExportError> {
    let data = &chart.data;
    register_fonts();
    let w = opts.width as f64;
    let scale = Scale::of(opts);
    let px = |v: f64| scale.px(v);
    root.fill(&WHITE).map_err(draw_err)?;
    let entries = legend_entries(data);

    // Layout: title band, plot, legend band under the plot (covering nothing).
    let legend_font = (FAMILY, px(15.0)).into_font();
    let rows = legend_rows(root, &entries, &legend_font, w, &px)?;
    let title_h = px(78.0) as u32;
    let legend_h = (px(14.0) + rows.len() as f64 * px(26.0)) as u32;
    let (top, rest) = root.split_vertically(title_h);
    let rest_h = rest.dim_in_pixel().1;
    let (middle, bottom) = rest.split_vertically(rest_h.saturating_sub(legend_h));
    draw_title(&top, chart.header.as_ref(), &chart.report, w, &px)?;

    let mut plot = axes(&middle, data, &scale)?;
    draw_bands(&mut plot, data, &scale)?;
    // Pixels across the plot: more points than ~2 per pixel are not seen.
    let buckets = (middle.dim_in_pixel().0 as usize).max(100);
    draw_curves(&mut plot, data, &scale, buckets)?;
    draw_limit(&mut plot, data, &scale)?;
    draw_legend(&bottom, &entries, &rows, &legend_font, w, &px)
}

/// The plot area with both axes drawn and labelled.
fn axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    data: &ChartData,
    scale: &Scale,
) -> Result<Plot<'a, DB>, ExportError> {
    let px = |v: f64| scale.px(v);
    let (x_max, y_min, y_max) = (data.x_max, data.y_min, data.y_max);
    let label_size = px(15.0);
    let desc_size = px(16.0);
    let mut plot = ChartBuilder::on(area)
        .margin_left(px(12.0) as u32)
        .margin_right(px(12.0) as u32)
        .margin_top(px(8.0) as u32)
        .margin_bottom(px(4.0) as u32)
        .x_label_area_size(px(52.0) as u32)
        .y_label_area_size(px(66.0) as u32)
        .right_y_label_area_size(px(70.0) as u32)
        .build_cartesian_2d(0.0..x_max, y_min..y_max)
        .map_err(draw_err)?
        .set_secondary_coord(0.0..x_max, 0.0..100.0);

    let x_fmt = axis_format(x_max);
    let y_fmt = axis_format(y_max - y_min);
    plot.configure_mesh()
        .x_desc("time (s)")
        .y_desc("memory (GiB)")
        .x_labels(10)
        .y_labels(8)
        .x_label_formatter(&|v| x_fmt(*v))
        .y_label_formatter(&|v| y_fmt(*v))
        .label_style((FAMILY, label_size).into_font().color(&INK))
        .axis_desc_style((FAMILY, desc_size).into_font().color(&INK))
        .bold_line_style(RGBColor(220, 220, 220).stroke_width(1))
        .light_line_style(TRANSPARENT)
        .axis_style(MUTED.stroke_width(1))
        .draw()
        .map_err(draw_err)?;
    plot.configure_secondary_axes()
        .y_desc("free memory (%)")
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FAMILY, label_size).into_font().color(&INK))
        .axis_desc_style((FAMILY, desc_size).into_font().color(&INK))
        .axis_style(MUTED.stroke_width(1))
        .draw()
        .map_err(draw_err)?;
    Ok(plot)
}

/// What stands behind the lines: the shaded states, the phases as
/// alternating light bands, each named along the top when wide enough, and
/// the stretches of memory pressure as a strip along the bottom.
fn draw_bands<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    data: &ChartData,
    scale: &Scale,
) -> Result<(), ExportError> {
    let (x_max, y_min, y_max) = (data.x_max, data.y_min, data.y_max);
    let secs = |t_ms: u64| t_ms.saturating_sub(data.t0) as f64 / 1000.0;
    plot.draw_series(data.intervals.iter().map(|i| {
        let from = secs(i.from_ms).min(x_max);
        let to = secs(i.to_ms).max(from + data.min_width).min(x_max);
        Rectangle::new(
            [(from, y_min), (to, y_max)],
            state_colour(i.state).mix(SHADE_ALPHA).filled(),
        )
    }))
    .map_err(draw_err)?;
    for (i, p) in data.phases.iter().enumerate() {
        let from = secs(p.start_ms).min(x_max);
        let to = secs(p.end_ms).clamp(from, x_max);
        let tone = if i % 2 == 0 { 0.07 } else { 0.14 };
        plot.draw_series(std::iter::once(Rectangle::new(
            [(from, y_min), (to, y_max)],
            PHASE.mix(tone).filled(),
        )))
        .map_err(draw_err)?;
        if (to - from) >= x_max * 0.04 {
            plot.draw_series(std::iter::once(Text::new(
                format!(" {}", one_line(&p.name)),
                (from, y_max - (y_max - y_min) * 0.01),
                (FAMILY, scale.px(14.0)).into_font().color(&MUTED),
            )))
            .map_err(draw_err)?;
        }
    }
    // Memory pressure: a strip along the bottom, in its level's colour.
    let strip = (y_max - y_min) * 0.025;
    plot.draw_series(data.pressure.iter().map(|&(from, to, level)| {
        Rectangle::new(
            [
                (from, y_min),
                (to.max(from + data.min_width).min(x_max), y_min + strip),
            ],
            pressure_colour(level).filled(),
        )
    }))
    .map_err(draw_err)?;
    Ok(())
}

/// Swap growth as an area, free memory dashed on the right axis, the
/// footprint lines, then the pipeline's byte counters, each thinned to
/// `buckets` pixel columns.
fn draw_curves<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    data: &ChartData,
    scale: &Scale,
    buckets: usize,
) -> Result<(), ExportError> {
    let px = |v: f64| scale.px(v);
    let growth_pts = decimate(&data.growth, buckets);
    plot.draw_series(
        AreaSeries::new(growth_pts.iter().copied(), 0.0, SWAP.mix(0.28))
            .border_style(SWAP.stroke_width(px(2.0) as u32)),
    )
    .map_err(draw_err)?;
    let free_pts = decimate(&data.free, buckets);
    plot.draw_secondary_series(DashedLineSeries::new(
        free_pts,
        px(7.0) as u32,
        px(5.0) as u32,
        FREE.stroke_width(px(2.0) as u32),
    ))
    .map_err(draw_err)?;
    // Largest last would hide the watched one: draw it on top.
    for s in data.series.iter().rev() {
        for seg in &s.segments {
            let pts = decimate(seg, buckets);
            plot.draw_series(LineSeries::new(
                pts,
                s.colour.stroke_width(px(s.width as f64) as u32),
            ))
            .map_err(draw_err)?;
        }
    }
    // The pipeline's own counters, dashed: figures it reported, not read.
    for s in &data.counters {
        for seg in &s.segments {
            plot.draw_series(DashedLineSeries::new(
                decimate(seg, buckets),
                px(5.0) as u32,
                px(4.0) as u32,
                s.colour.stroke_width(px(s.width as f64) as u32),
            ))
            .map_err(draw_err)?;
        }
    }
    Ok(())
}

/// The scope's limit: the memory the run had, a line across.
fn draw_limit<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    data: &ChartData,
    scale: &Scale,
) -> Result<(), ExportError> {
    let Some((y, words)) = &data.limit else {
        return Ok(());
    };
    let px = |v: f64| scale.px(v);
    plot.draw_series(DashedLineSeries::new(
        [(0.0, *y), (data.x_max, *y)],
        px(10.0) as u32,
        px(6.0) as u32,
        INK.stroke_width(px(2.0) as u32),
    ))
    .map_err(draw_err)?;
    plot.draw_series(std::iter::once(Text::new(
        format!(" {words}"),
        (0.0, *y + (data.y_max - data.y_min) * 0.035),
        (FAMILY, px(14.0)).into_font().color(&INK),
    )))
    .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
