//! A replay's chart points, folded as the samples stream by: one point a
//! sample while the run is short, and past [`REPLAY_POINTS`] samples two
//! points for each stretch of samples, carrying every line's lowest and
//! highest value in it. An overnight recording holds ~100,000 samples; a
//! chart draws a few hundred pixels across, and what must survive is the
//! peak (the footprint that did not fit, the swap it pushed out), not each
//! sample: a page that waited for 11 MiB of points, and a server that held
//! every sample to build them, showed nothing more.

use super::REPLAY_POINTS;
use crate::record::trace::TraceSample;
use crate::show::live::Point;

/// Builds the points of a run of `samples` samples, given beforehand (a
/// first pass counted them), so each stretch is the same length and the
/// thinning is decided before the first point.
#[derive(Debug)]
pub(super) struct Points {
    /// Samples per stretch: 1 keeps every sample as it is.
    stretch: usize,
    /// Swap in use at the first sample: growth is measured from it.
    base: Option<u64>,
    /// The processes whose footprints the points carry.
    followed: Vec<u32>,
    seen: usize,
    current: Option<Stretch>,
    out: Vec<Point>,
}

impl Points {
    pub(super) fn new(samples: usize, followed: Vec<u32>) -> Self {
        let stretches = REPLAY_POINTS / 2;
        Points {
            stretch: if samples <= REPLAY_POINTS {
                1
            } else {
                samples.div_ceil(stretches)
            },
            base: None,
            followed,
            seen: 0,
            current: None,
            out: Vec::with_capacity(samples.min(REPLAY_POINTS)),
        }
    }

    /// How many samples the points were thinned from; `None` while each
    /// sample has its point.
    pub(super) fn thinned_from(&self) -> Option<usize> {
        (self.stretch > 1).then_some(self.seen)
    }

    pub(super) fn push(&mut self, s: &TraceSample) {
        let sample = &s.sample;
        let base = *self.base.get_or_insert(sample.system.swap_used_bytes);
        let growth = sample.system.swap_used_bytes as i64 - base as i64;
        let n = self.seen;
        self.seen += 1;
        if self.stretch > 1 && n % self.stretch == 0 {
            self.flush();
        }
        let followed = &self.followed;
        let footprints = sample
            .processes
            .iter()
            .filter(|p| followed.contains(&p.pid))
            .map(|p| (p.pid, p.footprint_bytes));
        if self.stretch == 1 {
            self.out
                .push(Point::at(sample, growth, footprints.collect()));
            return;
        }
        let at = n % self.stretch;
        let st = self.current.get_or_insert_with(|| Stretch {
            first_ms: sample.t_ms,
            last_ms: sample.t_ms,
            samples: 0,
            growth: Range::first(growth, 0),
            swap_used: Range::first(sample.system.swap_used_bytes, 0),
            free_pct: Range::first(sample.system.free_pct, 0),
            footprints: Vec::new(),
        });
        st.last_ms = sample.t_ms;
        st.samples += 1;
        st.growth.note(growth, at);
        st.swap_used.note(sample.system.swap_used_bytes, at);
        st.free_pct.note(sample.system.free_pct, at);
        for (pid, bytes) in footprints {
            match st.footprints.iter_mut().find(|(p, _)| *p == pid) {
                Some((_, r)) => r.note(bytes, at),
                None => st.footprints.push((pid, Range::first(bytes, at))),
            }
        }
    }

    pub(super) fn finish(mut self) -> Vec<Point> {
        self.flush();
        self.out
    }

    /// The stretch as two points, at its first and last sample's time; each
    /// line's two extremes in the order they came, so a climb still climbs.
    fn flush(&mut self) {
        let Some(st) = self.current.take() else {
            return;
        };
        let point = |end: End| Point {
            t_ms: match end {
                End::First => st.first_ms,
                End::Last => st.last_ms,
            },
            swap_growth_bytes: st.growth.at(end),
            swap_used_bytes: st.swap_used.at(end),
            free_pct: st.free_pct.at(end),
            footprints: st.footprints.iter().map(|(p, r)| (*p, r.at(end))).collect(),
        };
        self.out.push(point(End::First));
        if st.samples > 1 {
            self.out.push(point(End::Last));
        }
    }
}

/// The samples of one stretch, folded.
#[derive(Debug)]
struct Stretch {
    first_ms: u64,
    last_ms: u64,
    samples: usize,
    growth: Range<i64>,
    swap_used: Range<u64>,
    free_pct: Range<f64>,
    footprints: Vec<(u32, Range<u64>)>,
}

#[derive(Debug, Clone, Copy)]
enum End {
    First,
    Last,
}

/// A line's lowest and highest value in a stretch, with where each came.
#[derive(Debug, Clone, Copy)]
struct Range<T> {
    low: (T, usize),
    high: (T, usize),
}

impl<T: Copy + PartialOrd> Range<T> {
    fn first(v: T, i: usize) -> Self {
        Range {
            low: (v, i),
            high: (v, i),
        }
    }

    fn note(&mut self, v: T, i: usize) {
        if v < self.low.0 {
            self.low = (v, i);
        }
        if v > self.high.0 {
            self.high = (v, i);
        }
    }

    /// The extreme that came first, or the one that came last.
    fn at(&self, end: End) -> T {
        let (early, late) = if self.low.1 <= self.high.1 {
            (self.low.0, self.high.0)
        } else {
            (self.high.0, self.low.0)
        };
        match end {
            End::First => early,
            End::Last => late,
        }
    }
}
