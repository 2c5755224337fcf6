//! The chart's look, shared with the comparison chart: colours, the state
//! shading, tick labels and the text a chart may show.

use plotters::style::{Color, RGBAColor, RGBColor};

use crate::step::detect::State;
use crate::step::pressure::Level;

/// Bytes in a GiB, the unit of the memory axis.
pub(crate) const GIB: f64 = (1u64 << 30) as f64;

// Colours: processes get the palette; red, orange, purple and olive are kept
// for swap and the states so that nothing is read as something else.
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(0, 0, 128),
    RGBColor(0, 100, 0),
];
pub(crate) const SWAP: RGBColor = RGBColor(214, 39, 40);
pub(crate) const FREE: RGBColor = RGBColor(70, 70, 70);
pub(crate) const INK: RGBColor = RGBColor(30, 30, 30);
pub(crate) const MUTED: RGBColor = RGBColor(95, 95, 95);
/// Phase bands: a blue-grey no state or process uses.
pub(crate) const PHASE: RGBColor = RGBColor(90, 90, 190);

pub(crate) fn state_colour(s: State) -> RGBColor {
    match s {
        State::FalseFit => RGBColor(255, 127, 14),
        State::Overflow => RGBColor(148, 103, 189),
        State::HiddenMemory => RGBColor(188, 189, 34),
        State::Fits => RGBColor(44, 140, 60),
    }
}

/// Title colour: the state's colour, darkened to read as text.
pub(crate) fn state_ink(s: State) -> RGBColor {
    match s {
        State::FalseFit => RGBColor(205, 85, 0),
        State::Overflow => RGBColor(112, 62, 160),
        State::HiddenMemory => RGBColor(130, 130, 0),
        State::Fits => RGBColor(30, 120, 50),
    }
}

pub(crate) const SHADE_ALPHA: f64 = 0.2;

/// A band's colour over white, as the shading shows it.
pub(crate) fn shade(c: RGBColor) -> RGBAColor {
    c.mix(SHADE_ALPHA)
}

/// Text for one line of the chart: whitespace runs (newlines in a command,
/// tabs in a name) become one space; other control and bidi characters
/// ([`crate::util::text::is_unsafe`]) go.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|&c| !crate::util::text::is_unsafe(c))
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Tick labels: whole numbers when the range is wide, otherwise up to one
/// or two decimals without trailing zeros (`0`, `0.5`, `1`, `1.5`).
pub(crate) fn axis_format(range: f64) -> impl Fn(f64) -> String {
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
pub(crate) fn nice_ceiling(v: f64) -> f64 {
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

/// Memory pressure's strip: amber at warning, deep red at critical (a red
/// darker than swap's, so the two are not read as one).
pub(crate) fn pressure_colour(l: Level) -> RGBColor {
    match l {
        Level::Normal => RGBColor(200, 200, 200),
        Level::Warning => RGBColor(235, 170, 0),
        Level::Critical => RGBColor(140, 0, 20),
    }
}
