//! The chart's legend: an entry per line, the swap area, free memory and
//! each shaded state, in rows that fit the width under the plot.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;

use super::data::ChartData;
use super::{draw_err, pressure_colour, shade, state_colour, FREE, INK, SWAP};
use crate::show::export::{ExportError, Interval};
use crate::step::detect::State;
use crate::step::pressure::Level;

pub(super) enum Swatch {
    Line(RGBColor, u32),
    Dashed(RGBColor),
    Area(RGBColor),
    Band(RGBColor),
    /// A solid strip: memory pressure.
    Strip(RGBColor),
}

/// The legend's entries: the lines, swap, free memory, each state shaded
/// (the one from the report alone said so), the counters and each
/// pressure level the run reached.
pub(super) fn legend_entries(data: &ChartData) -> Vec<(Swatch, String)> {
    let mut entries: Vec<(Swatch, String)> = data
        .series
        .iter()
        .map(|s| (Swatch::Line(s.colour, s.width), s.label.clone()))
        .collect();
    entries.push((Swatch::Area(SWAP), "swap growth".into()));
    entries.push((Swatch::Dashed(FREE), "free memory (right axis)".into()));
    for st in [State::FalseFit, State::Overflow, State::HiddenMemory] {
        if data.intervals.iter().any(|i: &Interval| i.state == st) {
            let label = if data.hindsight == Some(st) {
                format!("{} (report, in hindsight)", st.label())
            } else {
                st.label().to_string()
            };
            entries.push((Swatch::Band(state_colour(st)), label));
        }
    }
    for s in &data.counters {
        entries.push((Swatch::Dashed(s.colour), s.label.clone()));
    }
    for level in [Level::Warning, Level::Critical] {
        if data.pressure.iter().any(|&(_, _, l)| l == level) {
            let label = format!("memory pressure {}", level.as_str());
            entries.push((Swatch::Strip(pressure_colour(level)), label));
        }
    }
    entries
}

/// Entry width in the legend: swatch, gap, text, spacing.
fn entry_width(text_w: f64, px: &impl Fn(f64) -> f64) -> f64 {
    px(30.0) + px(8.0) + text_w + px(26.0)
}

/// Legend entries in rows that fit the width: `(entry index, width)`.
pub(super) fn legend_rows<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Swatch, String)],
    font: &FontDesc<'_>,
    w: f64,
    px: &impl Fn(f64) -> f64,
) -> Result<Vec<Vec<(usize, f64)>>, ExportError> {
    let limit = w - 2.0 * px(16.0);
    let style = TextStyle::from(font.clone());
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new()];
    let mut x = 0.0;
    for (i, (_, text)) in entries.iter().enumerate() {
        let tw = area.estimate_text_size(text, &style).map_err(draw_err)?.0 as f64;
        let ew = entry_width(tw, px);
        if x > 0.0 && x + ew > limit {
            rows.push(Vec::new());
            x = 0.0;
        }
        rows.last_mut().expect("never empty").push((i, ew));
        x += ew;
    }
    Ok(rows)
}

pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(Swatch, String)],
    rows: &[Vec<(usize, f64)>],
    font: &FontDesc<'_>,
    w: f64,
    px: &impl Fn(f64) -> f64,
) -> Result<(), ExportError> {
    let row_h = px(26.0);
    for (r, row) in rows.iter().enumerate() {
        let total: f64 = row.iter().map(|&(_, ew)| ew).sum::<f64>() - px(26.0);
        let mut x = ((w - total) / 2.0).max(px(16.0));
        let cy = px(6.0) + row_h * r as f64 + row_h / 2.0;
        for &(i, ew) in row {
            let (swatch, text) = &entries[i];
            let (x0, x1) = (x as i32, (x + px(30.0)) as i32);
            let yc = cy as i32;
            let half = px(7.0) as i32;
            match *swatch {
                Swatch::Line(c, width) => area.draw(&PathElement::new(
                    vec![(x0, yc), (x1, yc)],
                    c.stroke_width(px(width as f64) as u32),
                )),
                Swatch::Dashed(c) => {
                    let dash = px(7.0) as i32;
                    let gap = px(4.0) as i32;
                    let mut a = x0;
                    while a < x1 {
                        let b = (a + dash).min(x1);
                        area.draw(&PathElement::new(
                            vec![(a, yc), (b, yc)],
                            c.stroke_width(px(2.0) as u32),
                        ))
                        .map_err(draw_err)?;
                        a = b + gap;
                    }
                    Ok(())
                }
                Swatch::Area(c) => area
                    .draw(&Rectangle::new(
                        [(x0, yc - half), (x1, yc + half)],
                        c.mix(0.28).filled(),
                    ))
                    .and_then(|()| {
                        area.draw(&PathElement::new(
                            vec![(x0, yc - half), (x1, yc - half)],
                            c.stroke_width(px(2.0) as u32),
                        ))
                    }),
                Swatch::Band(c) => area.draw(&Rectangle::new(
                    [(x0, yc - half), (x1, yc + half)],
                    shade(c).filled(),
                )),
                Swatch::Strip(c) => area.draw(&Rectangle::new(
                    [(x0, yc + half / 2), (x1, yc + half)],
                    c.filled(),
                )),
            }
            .map_err(draw_err)?;
            let style = font
                .clone()
                .color(&INK)
                .pos(Pos::new(HPos::Left, VPos::Center));
            area.draw_text(text, &style, (x1 + px(8.0) as i32, yc))
                .map_err(draw_err)?;
            x += ew;
        }
    }
    Ok(())
}
