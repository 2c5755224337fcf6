//! The forecaster's series: a least-squares line through a sliding window,
//! kept as exact running integer sums, and the rising/not-rising state with
//! its hysteresis (the method is in the forecast module's comment and in
//! docs/detector.md, "Time to trouble").

use std::collections::VecDeque;

use super::ForecastConfig;
use crate::step::sustain::sustained;

/// A series counts as rising only where its line explains at least this
/// share of the window's variance: noise around a level has a slope too.
const MIN_R_SQUARED: f64 = 0.5;

/// Most intervals the sustain rule looks at (the last 64 where ticks come
/// faster than 64 to `sustain_ms`).
pub(super) const MAX_STEPS: usize = 64;

/// Most points kept in a window, whatever the interval: the window's
/// memory is bounded even at the 10 ms floor.
pub(super) const MAX_POINTS: usize = 1024;

/// A least-squares line through a sliding window, kept as exact running
/// sums, and the rising/not-rising state with its hysteresis.
#[derive(Debug, Clone, Default)]
pub(super) struct Series {
    pub(super) points: VecDeque<(i64, i64)>,
    pub(super) n: i128,
    pub(super) st: i128,
    pub(super) sy: i128,
    pub(super) stt: i128,
    pub(super) sty: i128,
    pub(super) syy: i128,
    pub(super) rising: bool,
    pub(super) slow_since: Option<i64>,
}

impl Series {
    fn add(&mut self, t: i64, y: i64, sign: i128) {
        let (t, y) = (i128::from(t), i128::from(y));
        self.n += sign;
        self.st += sign * t;
        self.sy += sign * y;
        self.stt += sign * t * t;
        self.sty += sign * t * y;
        self.syy += sign * y * y;
    }

    /// Adds the point at `t` ms, drops those older than the window, updates
    /// the state; the slope in bytes per second.
    pub(super) fn push(&mut self, t: i64, y: i64, cfg: &ForecastConfig) -> Option<f64> {
        let min_rate = cfg.min_rate_bytes_per_s as f64;
        if let Some(&(t0, _)) = self.points.back() {
            if t <= t0 {
                return self.slope(); // a clock that did not move adds nothing
            }
        }
        self.points.push_back((t, y));
        self.add(t, y, 1);
        while let Some(&(t_old, y_old)) = self.points.front() {
            if (t - t_old <= cfg.window_ms as i64 && self.points.len() <= MAX_POINTS)
                || self.points.len() <= 2
            {
                break;
            }
            self.points.pop_front();
            self.add(t_old, y_old, -1);
        }
        let slope = self.slope();
        let rate = slope.unwrap_or(0.0);
        let span = t - self.points.front().map_or(t, |p| p.0);
        if !self.rising {
            let sustained = sustained(self.recent(t, cfg.sustain_ms), min_rate, 1);
            let trend = self.r_squared() >= MIN_R_SQUARED;
            if rate >= min_rate && sustained && trend && span >= cfg.sustain_ms as i64 {
                self.rising = true;
                self.slow_since = None;
            }
        } else if rate < min_rate / 2.0 {
            let since = *self.slow_since.get_or_insert(t);
            if t - since >= cfg.clear_ms as i64 {
                self.rising = false;
                self.slow_since = None;
            }
        } else {
            self.slow_since = None;
        }
        slope
    }

    /// The points bounding the intervals that end in the last `sustain_ms`
    /// before `t`: at least the latest interval, at most [`MAX_STEPS`].
    pub(super) fn recent(&self, t: i64, sustain_ms: u64) -> impl Iterator<Item = (i64, i64)> + '_ {
        let sustain = i64::try_from(sustain_ms).unwrap_or(i64::MAX);
        let ending = self
            .points
            .iter()
            .rev()
            .take_while(|p| t.saturating_sub(p.0) < sustain)
            .count();
        let from = self
            .points
            .len()
            .saturating_sub(ending.clamp(1, MAX_STEPS) + 1);
        self.points.range(from..).copied()
    }

    /// Bytes per second of the least-squares line.
    pub(super) fn slope(&self) -> Option<f64> {
        let den = self.n * self.stt - self.st * self.st;
        if self.n < 2 || den <= 0 {
            return None;
        }
        let num = self.n * self.sty - self.st * self.sy;
        Some(num as f64 / den as f64 * 1000.0)
    }

    /// The share of the window's variance the line explains (R²); 0 for a
    /// flat window.
    pub(super) fn r_squared(&self) -> f64 {
        let cov = self.n * self.sty - self.st * self.sy;
        let var_t = self.n * self.stt - self.st * self.st;
        let var_y = self.n * self.syy - self.sy * self.sy;
        if var_t <= 0 || var_y <= 0 {
            return 0.0;
        }
        let (cov, var_t, var_y) = (cov as f64, var_t as f64, var_y as f64);
        (cov / var_t) * (cov / var_y)
    }

    pub(super) fn latest(&self) -> Option<i64> {
        self.points.back().map(|p| p.1)
    }

    /// Seconds until the series reaches `limit` at its slope; `None` when
    /// it is not rising.
    pub(super) fn eta(&self, slope: Option<f64>, limit: i64) -> Option<f64> {
        if !self.rising {
            return None;
        }
        let slope = slope.filter(|s| *s > 0.0)?;
        let left = (limit - self.latest()?).max(0) as f64;
        Some(left / slope)
    }
}
