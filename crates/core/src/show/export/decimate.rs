//! Thinning a line to the pixels that show it: the first, lowest, highest
//! and last point of each pixel column, so peaks survive.

/// Keeps the first, lowest, highest and last point of each of `buckets`
/// equal slices of x, in x order: the line looks the same, with far fewer
/// points when there are many more samples than pixels.
pub(crate) fn decimate(points: &[(f64, f64)], buckets: usize) -> Vec<(f64, f64)> {
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
    #[cfg(feature = "plot")] // the compare chart's only
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
