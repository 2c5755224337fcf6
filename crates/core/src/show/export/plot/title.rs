//! The chart's title band: the verdict in its colour, what it is about,
//! and a line of context (command, duration, memory, host) that drops its
//! least useful parts to fit the width.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{FontStyle, RGBColor};

use super::{draw_err, one_line, state_ink, FAMILY, INK, MUTED};
use crate::judge::report::Report;
use crate::record::trace::Header;
use crate::show::export::ExportError;
use crate::step::detect::State;
use crate::util::units::{format_bytes, format_duration};

pub(super) fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    header: Option<&Header>,
    report: &Report,
    w: f64,
    px: &impl Fn(f64) -> f64,
) -> Result<(), ExportError> {
    let verdict = report.verdict.label().to_uppercase();
    let rests = rests(report);
    let margin = px(16.0);
    let fit = fit(area, &verdict, &rests, w - 2.0 * margin, px(26.0))?;
    let x0 = ((w - fit.verdict_w - fit.rest_w) / 2.0).max(margin);
    let y = px(14.0) as i32;
    let style = |c: RGBColor| {
        (FAMILY, fit.size, FontStyle::Bold)
            .into_font()
            .color(&c)
            .pos(Pos::new(HPos::Left, VPos::Top))
    };
    area.draw_text(&verdict, &style(state_ink(report.verdict)), (x0 as i32, y))
        .map_err(draw_err)?;
    area.draw_text(
        &rests[fit.pick],
        &style(INK),
        ((x0 + fit.verdict_w) as i32, y),
    )
    .map_err(draw_err)?;
    let sub_y = (px(14.0) + fit.size * 1.05 + px(8.0)) as i32;
    draw_context(area, header, report, w, w - 2.0 * margin, sub_y, px)
}

/// What follows the verdict, longest first; a narrow chart gets a shorter
/// title rather than tiny text. The last is empty: the verdict alone.
fn rests(report: &Report) -> Vec<String> {
    let mut rests = Vec::new();
    let swap = format_bytes(report.swap_growth_bytes.max(0));
    match report
        .processes
        .iter()
        .find(|p| p.verdict == report.verdict)
    {
        Some(p) if report.verdict != State::Fits => {
            let name = one_line(&p.name);
            rests.push(format!(
                "— {name} ({}): footprint peaked at {} of {}, swap grew {swap}",
                p.pid,
                format_bytes(p.peak_footprint_bytes as i64),
                format_bytes(report.phys_bytes as i64),
            ));
            rests.push(format!("— {name} ({}), swap +{swap}", p.pid));
            rests.push(format!("— {name} (pid {})", p.pid));
        }
        _ => {
            rests.push(format!(
                "— swap grew {swap} (tolerance {})",
                format_bytes(report.swap_tolerance_bytes as i64)
            ));
            rests.push(format!("— swap +{swap}"));
        }
    }
    rests.push(String::new());
    rests
}

/// The title's size and which of the rests it shows, with the widths drawn.
struct Fit {
    size: f64,
    pick: usize,
    /// The verdict's width with the gap after it.
    verdict_w: f64,
    rest_w: f64,
}

/// The longest title that fits `room` at 80 % of the `full` size or more;
/// else the shortest, shrunk until it fits.
fn fit<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    verdict: &str,
    rests: &[String],
    room: f64,
    full: f64,
) -> Result<Fit, ExportError> {
    let mut size = full;
    let mut pick = 0;
    loop {
        let font = TextStyle::from((FAMILY, size, FontStyle::Bold).into_font());
        let width = |text: &str| -> Result<f64, ExportError> {
            Ok(area.estimate_text_size(text, &font).map_err(draw_err)?.0 as f64)
        };
        let (vw, rw) = (width(verdict)?, width(&rests[pick])?);
        // An SVG viewer drops leading spaces: the gap is a position.
        let gap = size * 0.35;
        if vw + gap + rw <= room || size <= 10.0 {
            return Ok(Fit {
                size,
                pick,
                verdict_w: vw + gap,
                rest_w: rw,
            });
        }
        if size - 1.0 >= full * 0.8 || pick + 1 == rests.len() {
            size -= 1.0;
        } else {
            size = full;
            pick += 1;
        }
    }
}

/// The line under the title: command, duration, memory, host, dropping the
/// least useful parts (from the end) until it fits `room`.
fn draw_context<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    header: Option<&Header>,
    report: &Report,
    w: f64,
    room: f64,
    y: i32,
    px: &impl Fn(f64) -> f64,
) -> Result<(), ExportError> {
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
    let style = (FAMILY, px(16.0))
        .into_font()
        .color(&MUTED)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let mut line = parts.join("  ·  ");
    while parts.len() > 1
        && area.estimate_text_size(&line, &style).map_err(draw_err)?.0 as f64 > room
    {
        parts.pop();
        line = parts.join("  ·  ");
    }
    area.draw_text(&line, &style, ((w / 2.0) as i32, y))
        .map_err(draw_err)
}
