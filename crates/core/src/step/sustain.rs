//! When a climb is sustained: the one rule the detector's swap climb and
//! the forecaster's rising series share (docs/detector.md, "The model", 1).

/// Whether a series climbed in a sustained way at `min_rate` (units a
/// second) over `points` (time in ms, value; oldest first: the last
/// `sustain_ms` of it), judged over at least `min_intervals` intervals.
///
/// Two shapes count:
/// - **most of the way**: at least two thirds of the intervals grew at the
///   rate — a smooth climb;
/// - **in steps**: the series grew at the rate from its first point to its
///   last, and no one run of growing intervals carries more than two
///   thirds of that growth. Swap written behind other I/O lands this way:
///   a filler paging 32 MiB/s beside a disk flood grew swap 35–50 MiB
///   every 1.25 s and not at all between, so on 250 ms ticks four intervals
///   in five were flat.
///
/// One burst of page-outs is one run however many ticks it spans, so it
/// never counts alone.
pub fn sustained(
    points: impl IntoIterator<Item = (i64, i64)>,
    min_rate: f64,
    min_intervals: usize,
) -> bool {
    let rate = |dy: i64, dt: i64| dy as f64 * 1000.0 / dt as f64;
    let (mut intervals, mut rising) = (0usize, 0usize);
    // The growth of the run of growing intervals going on, and the largest.
    let (mut run, mut largest) = (0i64, 0i64);
    let mut ends: Option<((i64, i64), (i64, i64))> = None;
    for (t, y) in points {
        let Some((first, (t0, y0))) = ends else {
            ends = Some(((t, y), (t, y)));
            continue;
        };
        if t <= t0 {
            continue; // a clock that did not move adds no interval
        }
        intervals += 1;
        let dy = y.saturating_sub(y0);
        if rate(dy, t.saturating_sub(t0)) >= min_rate {
            rising += 1;
            run = run.saturating_add(dy);
        } else {
            largest = largest.max(run);
            run = 0;
        }
        ends = Some((first, (t, y)));
    }
    largest = largest.max(run);
    let Some(((t_first, y_first), (t_last, y_last))) = ends else {
        return false;
    };
    if intervals < min_intervals.max(1) {
        return false;
    }
    if rising * 3 >= intervals * 2 {
        return true;
    }
    let grown = y_last.saturating_sub(y_first);
    grown > 0
        && rate(grown, t_last.saturating_sub(t_first)) >= min_rate
        && i128::from(largest) * 3 <= i128::from(grown) * 2
}

#[cfg(test)]
#[path = "sustain_tests.rs"]
mod tests;
