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
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle, RGBAColor, RGBColor};

use super::ExportError;
use crate::detect::State;
use crate::report::Report;
use crate::trace::{Header, Record, Trace, TraceError, TraceReader};
use crate::units::{format_bytes, format_duration};

mod data;
mod legend;

use data::{chart_data, ChartData, ChartLines, ChartScan};
use legend::{draw_legend, legend_entries, legend_rows};

/// The family the chart asks for; in an SVG it is a CSS fallback list.
pub(super) const FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
static REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

pub(super) const GB: f64 = (1u64 << 30) as f64;

/// Image format of a chart ([`super::ExportFormat::image`] from a file name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    Png,
    Svg,
}

/// What to draw and how big.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotOptions {
    pub width: u32,
    pub height: u32,
    /// Footprint lines for this many processes (watched first).
    pub processes: usize,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 1200,
            height: 675,
            processes: 5,
        }
    }
}

/// Smallest and largest chart sides, in pixels.
pub const MIN_SIDE: u32 = 320;
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
            data: chart_data(trace, report, opts.processes),
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
        let report = crate::report::report_stream(reader, None, |r| scan.push(r))?;
        let mut lines = ChartLines::new(scan, opts.processes, Some(opts.width as usize));
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

/// Something drawn on any plotters backend: the chart, the comparison.
pub(super) trait Picture {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ExportError>;
}

/// Draws `picture` as a PNG file's or an SVG document's bytes: the one
/// place either image is made (one PNG encoder, one compression).
pub(super) fn render_picture(
    format: ImageFormat,
    w: u32,
    h: u32,
    picture: &impl Picture,
) -> Result<Vec<u8>, ExportError> {
    match format {
        ImageFormat::Svg => {
            let mut out = String::new();
            {
                let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
                picture.draw(&root)?;
                root.present().map_err(draw_err)?;
            }
            Ok(out.into_bytes())
        }
        ImageFormat::Png => {
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                picture.draw(&root)?;
                root.present().map_err(draw_err)?;
            }
            encode_png(&rgb, w, h)
        }
    }
}

/// An RGB picture as a PNG file's bytes. Fast compression: a chart is
/// flat colour, so the stronger levels save little and cost several times
/// the time.
fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::with_capacity(rgb.len() / 8);
    let mut enc = ::png::Encoder::new(&mut out, w, h);
    enc.set_color(::png::ColorType::Rgb);
    enc.set_depth(::png::BitDepth::Eight);
    enc.set_compression(::png::Compression::Fast);
    let png_err = |e: ::png::EncodingError| ExportError::Draw(format!("PNG encoding: {e}"));
    let mut writer = enc.write_header().map_err(png_err)?;
    writer.write_image_data(rgb).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(out)
}

pub(super) fn draw_err(e: impl std::fmt::Display) -> ExportError {
    ExportError::Draw(e.to_string())
}

pub(super) fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Both are valid TrueType files compiled in; a failure would show as
        // a drawing error on the first text.
        let _ = register_font(FAMILY, FontStyle::Normal, REGULAR);
        let _ = register_font(FAMILY, FontStyle::Bold, BOLD);
    });
}

// Colours: processes get the palette; red, orange, purple and olive are kept
// for swap and the states so that nothing is read as something else.
pub(super) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(0, 0, 128),
    RGBColor(0, 100, 0),
];
const SWAP: RGBColor = RGBColor(214, 39, 40);
const FREE: RGBColor = RGBColor(70, 70, 70);
pub(super) const INK: RGBColor = RGBColor(30, 30, 30);
pub(super) const MUTED: RGBColor = RGBColor(95, 95, 95);
/// Phase bands: a blue-grey no state or process uses.
const PHASE: RGBColor = RGBColor(90, 90, 190);

fn state_colour(s: State) -> RGBColor {
    match s {
        State::FalseFit => RGBColor(255, 127, 14),
        State::Overflow => RGBColor(148, 103, 189),
        State::HiddenMemory => RGBColor(188, 189, 34),
        State::Fits => RGBColor(44, 140, 60),
    }
}

/// Title colour: the state's colour, darkened to read as text.
pub(super) fn state_ink(s: State) -> RGBColor {
    match s {
        State::FalseFit => RGBColor(205, 85, 0),
        State::Overflow => RGBColor(112, 62, 160),
        State::HiddenMemory => RGBColor(130, 130, 0),
        State::Fits => RGBColor(30, 120, 50),
    }
}

const SHADE_ALPHA: f64 = 0.2;

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
    opts: &PlotOptions,
) -> Result<(), ExportError> {
    let (data, report) = (&chart.data, &chart.report);
    register_fonts();
    let (w, h) = (opts.width as f64, opts.height as f64);
    // Everything scales with the picture; 1.0 at 1200×675.
    // Below ~0.7 text stops being legible: small charts get relatively larger text.
    let k = (w / 1200.0).min(h / 675.0).max(0.7);
    let px = |v: f64| (v * k).round().max(1.0);
    root.fill(&WHITE).map_err(draw_err)?;

    let (x_max, y_min, y_max) = (data.x_max, data.y_min, data.y_max);
    let secs = |t_ms: u64| t_ms.saturating_sub(data.t0) as f64 / 1000.0;
    let entries = legend_entries(&data.series, &data.intervals, data.hindsight);

    // Layout: title band, plot, legend band under the plot (covering nothing).
    let legend_font = (FAMILY, px(15.0)).into_font();
    let rows = legend_rows(root, &entries, &legend_font, w, &px)?;
    let title_h = px(78.0) as u32;
    let legend_h = (px(14.0) + rows.len() as f64 * px(26.0)) as u32;
    let (top, rest) = root.split_vertically(title_h);
    let rest_h = rest.dim_in_pixel().1;
    let (middle, bottom) = rest.split_vertically(rest_h.saturating_sub(legend_h));
    draw_title(&top, chart.header.as_ref(), report, w, &px)?;

    let label_size = px(15.0);
    let desc_size = px(16.0);
    let mut chart = ChartBuilder::on(&middle)
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
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("memory (GB)")
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
    chart
        .configure_secondary_axes()
        .y_desc("free memory (%)")
        .y_labels(6)
        .y_label_formatter(&|v| format!("{v:.0}"))
        .label_style((FAMILY, label_size).into_font().color(&INK))
        .axis_desc_style((FAMILY, desc_size).into_font().color(&INK))
        .axis_style(MUTED.stroke_width(1))
        .draw()
        .map_err(draw_err)?;

    // Shaded states, behind everything.
    chart
        .draw_series(data.intervals.iter().map(|i| {
            let from = secs(i.from_ms).min(x_max);
            let to = secs(i.to_ms).max(from + data.min_width).min(x_max);
            Rectangle::new(
                [(from, y_min), (to, y_max)],
                state_colour(i.state).mix(SHADE_ALPHA).filled(),
            )
        }))
        .map_err(draw_err)?;
    // Phases: alternating light bands, each named along the top when wide
    // enough to hold its name.
    for (i, p) in data.phases.iter().enumerate() {
        let from = secs(p.start_ms).min(x_max);
        let to = secs(p.end_ms).clamp(from, x_max);
        let tone = if i % 2 == 0 { 0.07 } else { 0.14 };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(from, y_min), (to, y_max)],
                PHASE.mix(tone).filled(),
            )))
            .map_err(draw_err)?;
        if (to - from) >= x_max * 0.04 {
            chart
                .draw_series(std::iter::once(Text::new(
                    format!(" {}", one_line(&p.name)),
                    (from, y_max - (y_max - y_min) * 0.01),
                    (FAMILY, px(14.0)).into_font().color(&MUTED),
                )))
                .map_err(draw_err)?;
        }
    }

    // Pixels across the plot: more points than ~2 per pixel are not seen.
    let buckets = (middle.dim_in_pixel().0 as usize).max(100);
    let growth_pts = decimate(&data.growth, buckets);
    chart
        .draw_series(
            AreaSeries::new(growth_pts.iter().copied(), 0.0, SWAP.mix(0.28))
                .border_style(SWAP.stroke_width(px(2.0) as u32)),
        )
        .map_err(draw_err)?;
    let free_pts = decimate(&data.free, buckets);
    chart
        .draw_secondary_series(DashedLineSeries::new(
            free_pts,
            px(7.0) as u32,
            px(5.0) as u32,
            FREE.stroke_width(px(2.0) as u32),
        ))
        .map_err(draw_err)?;
    // Lines last (largest last would hide the watched one: draw it on top).
    for s in data.series.iter().rev() {
        for seg in &s.segments {
            let pts = decimate(seg, buckets);
            chart
                .draw_series(LineSeries::new(
                    pts,
                    s.colour.stroke_width(px(s.width as f64) as u32),
                ))
                .map_err(draw_err)?;
        }
    }

    // The scope's limit: the memory the run had, a line across.
    if let Some((y, words)) = &data.limit {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, *y), (x_max, *y)],
                px(10.0) as u32,
                px(6.0) as u32,
                INK.stroke_width(px(2.0) as u32),
            ))
            .map_err(draw_err)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!(" {words}"),
                (0.0, *y + (y_max - y_min) * 0.035),
                (FAMILY, px(14.0)).into_font().color(&INK),
            )))
            .map_err(draw_err)?;
    }

    draw_legend(&bottom, &entries, &rows, &legend_font, w, &px)?;
    Ok(())
}

fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    header: Option<&Header>,
    report: &Report,
    w: f64,
    px: &impl Fn(f64) -> f64,
) -> Result<(), ExportError> {
    let verdict = report.verdict.label().to_uppercase();
    // Longest first; a narrow chart gets a shorter title rather than tiny text.
    let mut rests = Vec::new();
    match report
        .processes
        .iter()
        .find(|p| p.verdict == report.verdict)
    {
        Some(p) if report.verdict != State::Fits => {
            rests.push(format!(
                "— {} ({}): footprint peaked at {} of {}, swap grew {}",
                one_line(&p.name),
                p.pid,
                format_bytes(p.peak_footprint_bytes as i64),
                format_bytes(report.phys_bytes as i64),
                format_bytes(report.swap_growth_bytes.max(0))
            ));
            rests.push(format!(
                "— {} ({}), swap +{}",
                one_line(&p.name),
                p.pid,
                format_bytes(report.swap_growth_bytes.max(0))
            ));
            rests.push(format!("— {} (pid {})", one_line(&p.name), p.pid));
        }
        _ => {
            rests.push(format!(
                "— swap grew {} (tolerance {})",
                format_bytes(report.swap_growth_bytes.max(0)),
                format_bytes(report.swap_tolerance_bytes as i64)
            ));
            rests.push(format!(
                "— swap +{}",
                format_bytes(report.swap_growth_bytes.max(0))
            ));
        }
    }
    rests.push(String::new());
    // The longest title that fits at 80 % of the full size or more; else
    // the shortest, shrunk until it fits.
    let full = px(26.0);
    let margin = px(16.0);
    let room = w - 2.0 * margin;
    let mut size = full;
    let mut pick = 0;
    let (vw, rw) = loop {
        let font = TextStyle::from((FAMILY, size, FontStyle::Bold).into_font());
        let vw = area
            .estimate_text_size(&verdict, &font)
            .map_err(draw_err)?
            .0 as f64;
        let rw = area
            .estimate_text_size(&rests[pick], &font)
            .map_err(draw_err)?
            .0 as f64;
        // An SVG viewer drops leading spaces: the gap is a position.
        let gap = size * 0.35;
        if vw + gap + rw <= room || size <= 10.0 {
            break (vw + gap, rw);
        }
        if size - 1.0 >= full * 0.8 || pick + 1 == rests.len() {
            size -= 1.0;
        } else {
            size = full;
            pick += 1;
        }
    };
    let rest = &rests[pick];
    let x0 = ((w - vw - rw) / 2.0).max(margin);
    let y = px(14.0) as i32;
    let style = |c: RGBColor| {
        (FAMILY, size, FontStyle::Bold)
            .into_font()
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Top))
    };
    area.draw_text(&verdict, &style(state_ink(report.verdict)), (x0 as i32, y))
        .map_err(draw_err)?;
    area.draw_text(rest, &style(INK), ((x0 + vw) as i32, y))
        .map_err(draw_err)?;

    let mut parts = Vec::new();
    if let Some(cmd) = header.and_then(|h| h.command.as_ref()) {
        let mut c = one_line(&cmd.join(" "));
        if c.chars().count() > 70 {
            c = c.chars().take(69).collect::<String>() + "…";
        }
        parts.push(c);
    }
    parts.push(format!(
        "{} over {} samples",
        format_duration(std::time::Duration::from_millis(report.duration_ms)),
        report.samples
    ));
    parts.push(format!(
        "{} memory, free down to {:.0} %",
        format_bytes(report.phys_bytes as i64),
        report.min_free_pct
    ));
    if let Some(h) = header.filter(|h| !h.host.hostname.is_empty()) {
        parts.push(format!("{} ({})", h.host.hostname, h.host.os));
    }
    let sub_style = (FAMILY, px(16.0))
        .into_font()
        .color(&MUTED)
        .pos(Pos::new(HPos::Center, VPos::Top));
    // Drop the least useful parts (from the end) until the line fits.
    let mut sub = parts.join("  ·  ");
    while parts.len() > 1
        && area
            .estimate_text_size(&sub, &sub_style)
            .map_err(draw_err)?
            .0 as f64
            > room
    {
        parts.pop();
        sub = parts.join("  ·  ");
    }
    area.draw_text(
        &sub,
        &sub_style,
        ((w / 2.0) as i32, (px(14.0) + size * 1.05 + px(8.0)) as i32),
    )
    .map_err(draw_err)?;
    Ok(())
}

/// A band's colour over white, as the shading shows it.
fn shade(c: RGBColor) -> RGBAColor {
    c.mix(SHADE_ALPHA)
}

/// Text for one line of the chart: whitespace runs (newlines in a command,
/// tabs in a name) become one space; other control and bidi characters
/// ([`crate::text::is_unsafe`]) go.
pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|&c| !crate::text::is_unsafe(c))
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tick labels: whole numbers when the range is wide, otherwise up to one
/// or two decimals without trailing zeros (`0`, `0.5`, `1`, `1.5`).
pub(super) fn axis_format(range: f64) -> impl Fn(f64) -> String {
    let decimals = if range < 2.0 {
        2
    } else if range < 20.0 {
        1
    } else {
        0
    };
    move |v: f64| {
        let s = format!("{v:.decimals$}");
        let s = if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.')
        } else {
            &s
        };
        // "-0" reads as noise.
        if s == "-0" {
            "0".to_string()
        } else {
            s.to_string()
        }
    }
}

/// The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10ⁿ at or above `v`.
pub(super) fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if m * mag >= v * 0.999_999 {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Keeps the first, lowest, highest and last point of each of `buckets`
/// equal slices of x, in x order: the line looks the same, with far fewer
/// points when there are many more samples than pixels.
fn decimate(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= buckets * 4 || points.len() < 2 {
        return points.to_vec();
    }
    let (x0, x1) = (points[0].0, points[points.len() - 1].0);
    let mut d = Decimator::new(x0, x1, buckets);
    for &p in points {
        d.push(p);
    }
    d.finish()
}

/// [`decimate`] as points stream in, over an x range known beforehand (a
/// first pass over the trace): at most four points a bucket are ever held,
/// so a line of a million samples costs what its pixels do. Peaks survive.
#[derive(Debug, Clone)]
pub(crate) struct Decimator {
    x0: f64,
    span: f64,
    buckets: usize,
    /// The bucket being filled: its number and its first, lowest, highest
    /// and last point, each with its order of arrival.
    current: Option<(f64, [Kept; 4])>,
    seen: usize,
    out: Vec<(f64, f64)>,
    /// The x range is not known beforehand: buckets double in width when x
    /// passes twice their count (see [`Decimator::growing`]).
    growing: bool,
}

/// A point kept by a [`Decimator`], with its order of arrival.
type Kept = (usize, (f64, f64));

impl Decimator {
    pub(crate) fn new(x0: f64, x1: f64, buckets: usize) -> Self {
        Decimator {
            x0,
            span: (x1 - x0).max(f64::MIN_POSITIVE),
            buckets: buckets.max(1),
            current: None,
            seen: 0,
            out: Vec::new(),
            growing: false,
        }
    }

    /// A decimator over x from 0 whose end is not known (one pass over a
    /// trace): buckets start `unit` wide and double in width, the points
    /// kept so far thinned again, whenever x passes twice their count; so it
    /// keeps between `buckets` and twice that many buckets across.
    pub(crate) fn growing(unit: f64, buckets: usize) -> Self {
        let buckets = buckets.max(1);
        Decimator {
            growing: true,
            ..Decimator::new(0.0, unit.max(f64::MIN_POSITIVE) * buckets as f64, buckets)
        }
    }

    pub(crate) fn push(&mut self, p: (f64, f64)) {
        let mut b = (((p.0 - self.x0) / self.span) * self.buckets as f64).floor();
        if self.growing && b >= (2 * self.buckets) as f64 {
            self.flush();
            while b >= (2 * self.buckets) as f64 {
                self.span *= 2.0;
                b = (((p.0 - self.x0) / self.span) * self.buckets as f64).floor();
            }
            let mut again = Decimator::new(self.x0, self.x0 + self.span, self.buckets);
            for q in std::mem::take(&mut self.out) {
                again.push(q);
            }
            self.out = again.finish();
        }
        let n = self.seen;
        self.seen += 1;
        match &mut self.current {
            Some((cb, keep)) if *cb == b => {
                if p.1 < keep[1].1 .1 {
                    keep[1] = (n, p);
                }
                if p.1 > keep[2].1 .1 {
                    keep[2] = (n, p);
                }
                keep[3] = (n, p);
            }
            _ => {
                self.flush();
                self.current = Some((b, [(n, p); 4]));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((_, mut keep)) = self.current.take() {
            keep.sort_unstable_by_key(|&(i, _)| i);
            let mut last = usize::MAX;
            for (i, p) in keep {
                if i != last {
                    self.out.push(p);
                    last = i;
                }
            }
        }
    }

    /// The points kept, in x order.
    pub(crate) fn finish(mut self) -> Vec<(f64, f64)> {
        self.flush();
        self.out
    }
}

#[cfg(test)]
#[path = "plot_tests.rs"]
mod tests;
