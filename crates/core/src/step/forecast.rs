//! Time to trouble: at the current rate, when will swap growth reach the
//! guard's budget, free memory reach its floor, or the swap volume be full?
//! Recomputed every tick from the recent window and said as "not at this
//! rate" when the trend is flat or falling — the figure no Mac monitor
//! gives, and what `guard --stop-before` acts on.
//!
//! Method (docs/detector.md, "Time to trouble"): an ordinary least-squares
//! line through the last `window_ms` of each series (swap in use; memory
//! not free), kept as running integer sums (n, Σt, Σy, Σt², Σty in `i128`,
//! exact, so adding the new point and taking out the oldest never drifts):
//! O(1) per tick, never a re-fit over the history. The line's slope is the
//! rate; the time left is the distance to the limit from the latest value
//! over that rate. Hysteresis keeps one burst from raising it and a hover
//! from flapping it: a series is *rising* only once the slope is at least
//! `min_rate_bytes_per_s`, the line explains half the window's variance
//! (R² ≥ 0.5), **and** the last `sustain_ms` climbed in a sustained way
//! (most of the way or in steps, never one burst: the detector's rule for
//! swap climbing, [`crate::step::sustain`]), and it stops rising only when
//! the slope stayed under half that rate for `clear_ms`. A limit's forecast
//! *fires* when its time left drops to `horizon_ms`, and stops firing only
//! above 1.25 × the horizon.

use serde::{Deserialize, Serialize};

use crate::probe::{Scope, SwapWall, SystemSample};

mod replay;
mod series;
pub use replay::{Outcome, Replay};
use series::Series;
#[cfg(test)]
use series::{MAX_POINTS, MAX_STEPS};

/// Settings of the forecaster. Written into each trace's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ForecastConfig {
    /// The least-squares window.
    pub window_ms: u64,
    /// Slower than this is "not at this rate".
    pub min_rate_bytes_per_s: u64,
    /// Two thirds of the intervals of this span must have grown at
    /// `min_rate_bytes_per_s` before a series counts as rising.
    pub sustain_ms: u64,
    /// A rising series stops rising once its slope stayed below half of
    /// `min_rate_bytes_per_s` this long.
    pub clear_ms: u64,
    /// A forecast under this fires (title, notification, report).
    pub horizon_ms: u64,
    /// The free-memory floor, in % of the memory `free_pct` is measured
    /// over.
    pub free_floor_pct: f64,
    /// The guard's swap budget: growth of swap in use since the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_budget_bytes: Option<u64>,
    /// Swap in use the budget counts from (the guard's baseline, read just
    /// before the command started); absent: the first sample's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_start_bytes: Option<u64>,
    /// Whether swap has a fixed size to run out of (Linux `SwapTotal`).
    /// macOS grows swap files on demand, so its total is no wall: there
    /// swap is full when the volume holding the swap files is (a sample's
    /// `swap_volume_free_bytes`), whatever this says.
    pub swap_full: bool,
}

impl Default for ForecastConfig {
    fn default() -> Self {
        ForecastConfig {
            window_ms: 10_000,
            min_rate_bytes_per_s: 1 << 20,
            sustain_ms: 3_000,
            clear_ms: 5_000,
            horizon_ms: 300_000,
            free_floor_pct: 5.0,
            swap_budget_bytes: None,
            swap_start_bytes: None,
            swap_full: !cfg!(target_os = "macos"),
        }
    }
}

/// The limits a run can run into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Swap growth since the start reaches the guard's budget.
    SwapBudget,
    /// Free memory falls to the floor.
    FreeFloor,
    /// Swap in use reaches the swap configured (Linux `SwapTotal`).
    SwapFull,
}

impl Limit {
    /// Every limit: the budget, the free floor, swap full.
    pub const ALL: [Limit; 3] = [Limit::SwapBudget, Limit::FreeFloor, Limit::SwapFull];

    /// `swap-budget`, `free-floor`, `swap-full`: the trace's and the
    /// `limit` label's word.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::SwapBudget => "swap-budget",
            Limit::FreeFloor => "free-floor",
            Limit::SwapFull => "swap-full",
        }
    }

    /// `swap budget`, `free memory floor`, `swap full`: for people.
    pub fn label(self) -> &'static str {
        match self {
            Limit::SwapBudget => "swap budget",
            Limit::FreeFloor => "free memory floor",
            Limit::SwapFull => "swap full",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Seconds left to each limit at the current rate; `None`: not at this
/// rate (flat or falling), or no such limit (no budget set, no fixed-size
/// swap). Fields may be added in later versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    /// Until swap growth since the start reaches the guard's budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_budget_s: Option<f64>,
    /// Until free memory reaches the floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_floor_s: Option<f64>,
    /// Until swap in use reaches its limit: Linux `SwapTotal`, a scope's
    /// swap limit, or on a Mac the nearest of the kernel's walls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_full_s: Option<f64>,
    /// macOS: which of the kernel's walls swap full is forecast at (the
    /// nearest of the sample's [`SwapRoom`](crate::probe::SwapRoom)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_full_wall: Option<SwapWall>,
}

impl Forecast {
    pub(crate) fn get(&self, limit: Limit) -> Option<f64> {
        match limit {
            Limit::SwapBudget => self.swap_budget_s,
            Limit::FreeFloor => self.free_floor_s,
            Limit::SwapFull => self.swap_full_s,
        }
    }

    /// No limit in sight.
    pub fn is_empty(&self) -> bool {
        Limit::ALL.iter().all(|&l| self.get(l).is_none())
    }

    /// The nearest limit and its seconds left.
    pub fn nearest(&self) -> Option<(Limit, f64)> {
        Limit::ALL
            .iter()
            .filter_map(|&l| self.get(l).map(|s| (l, s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The nearest of `limits` that is at most `within_s` away.
    pub fn first_within(&self, limits: &[Limit], within_s: f64) -> Option<(Limit, f64)> {
        limits
            .iter()
            .filter_map(|&l| self.get(l).map(|s| (l, s)))
            .filter(|(_, s)| *s <= within_s)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Which swap a swap budget counts, and from where: the scope's own swap
/// where a memory cgroup holds the run and accounts its swap, from its
/// first reading; else the host's swap in use, from the baseline. The one
/// home of that rule: the guard's budget ([`crate::judge::guard::Budget`]) and the
/// forecaster both count through it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BudgetSwap {
    /// Host swap in use the budget counts from (`None` until set: the
    /// forecaster takes its first sample's).
    pub host_start: Option<u64>,
    /// The scope's swap at its first reading.
    pub scope_start: Option<u64>,
}

/// The swap a budget counts at one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub(crate) now: u64,
    pub(crate) start: u64,
    /// Whether it is the scope's own swap.
    pub on_scope: bool,
}

impl Counted {
    /// Growth since the start; swap that shrank below it is no growth.
    pub fn growth(&self) -> u64 {
        self.now.saturating_sub(self.start)
    }
}

impl BudgetSwap {
    /// Counting the host's swap from `host_start`.
    pub fn from_host(host_start: u64) -> Self {
        BudgetSwap {
            host_start: Some(host_start),
            scope_start: None,
        }
    }

    /// Takes one sample's host swap in use and the scope's own swap where
    /// it accounts it: the first reading of each becomes its start.
    pub fn count(&mut self, host_swap: u64, scope_swap: Option<u64>) -> Counted {
        self.host_start.get_or_insert(host_swap);
        if let Some(s) = scope_swap {
            self.scope_start.get_or_insert(s);
        }
        self.peek(host_swap, scope_swap)
    }

    /// What [`BudgetSwap::count`] answers, without taking the sample.
    pub fn peek(&self, host_swap: u64, scope_swap: Option<u64>) -> Counted {
        match scope_swap {
            Some(now) => Counted {
                now,
                start: self.scope_start.unwrap_or(now),
                on_scope: true,
            },
            None => Counted {
                now: host_swap,
                start: self.host_start.unwrap_or(host_swap),
                on_scope: false,
            },
        }
    }
}

/// The forecaster: fed one system sample a tick, answers a [`Forecast`].
///
/// Inside a scope (a memory cgroup limiting the run) it forecasts what the
/// guard and the detector count there: the swap budget on the scope's own
/// swap where the cgroup accounts it (from its first such reading, as
/// [`crate::judge::guard::Budget::spent_in`] counts it), the free floor on the
/// scope's free memory, and swap full on the scope's swap limit where it
/// has one (else the host's swap volume).
#[derive(Debug, Clone, Default)]
pub struct Forecaster {
    cfg: ForecastConfig,
    /// Swap in use on the host, bytes.
    swap: Series,
    /// The scope's own swap, bytes, while the run has one that accounts it.
    scope_swap: Series,
    /// Memory not free (base − free), bytes: the scope's inside one.
    used: Series,
    /// The swap the budget counts and its baselines.
    budget_swap: BudgetSwap,
    /// The scope the series are of (`None`: the host), to start them anew
    /// when the run enters or leaves one.
    scope_key: Option<(u8, String)>,
    firing: [bool; 3],
}

/// The figures of one tick each limit is forecast on: (series value, limit).
struct Figures {
    budget: Option<(i64, i64)>,
    floor: (i64, i64),
    full: Option<(i64, i64)>,
    /// The wall `full` is, on a Mac's host swap.
    full_wall: Option<SwapWall>,
    /// Whether the budget and full limits are on the scope's swap.
    budget_on_scope: bool,
    full_on_scope: bool,
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

impl Forecaster {
    /// A forecaster with `cfg` and no history yet.
    pub fn new(cfg: ForecastConfig) -> Self {
        Forecaster {
            cfg,
            ..Forecaster::default()
        }
    }

    pub(crate) fn config(&self) -> &ForecastConfig {
        &self.cfg
    }

    /// [`Forecaster::step_in`] on the host (no scope).
    pub fn step(&mut self, t_ms: u64, sys: &SystemSample) -> (Forecast, Vec<Limit>) {
        self.step_in(t_ms, sys, None)
    }

    /// Steps with the sample at `t_ms` (`sys` the host's figures, `scope`
    /// the run's cgroup when it has one); the forecast and the limits whose
    /// forecast went under the horizon at this tick (once per episode).
    pub fn step_in(
        &mut self,
        t_ms: u64,
        sys: &SystemSample,
        scope: Option<&Scope>,
    ) -> (Forecast, Vec<Limit>) {
        let t = to_i64(t_ms);
        let same = match (&self.scope_key, scope) {
            (Some((v, path)), Some(s)) => *v == s.version && *path == s.path,
            (None, None) => true,
            _ => false,
        };
        if !same {
            // Another memory to count: the old points say nothing of it.
            // (Compared in place: the path is cloned only when it changes,
            // not every tick.)
            self.used = Series::default();
            self.scope_swap = Series::default();
            self.scope_key = scope.map(|s| (s.version, s.path.clone()));
        }
        let swap_slope = self.swap.push(t, to_i64(sys.swap_used_bytes), &self.cfg);
        if self.budget_swap.host_start.is_none() {
            self.budget_swap.host_start = self.cfg.swap_start_bytes;
        }
        let scope_swap = scope.and_then(|s| s.swap_bytes);
        self.budget_swap.count(sys.swap_used_bytes, scope_swap);
        let scope_slope = scope_swap.and_then(|v| self.scope_swap.push(t, to_i64(v), &self.cfg));
        let fig = self.figures(sys, scope);
        let used_slope = self.used.push(t, fig.floor.0, &self.cfg);
        let on = |scoped: bool| {
            if scoped {
                (&self.scope_swap, scope_slope)
            } else {
                (&self.swap, swap_slope)
            }
        };
        let (budget_series, budget_slope) = on(fig.budget_on_scope);
        let (full_series, full_slope) = on(fig.full_on_scope);
        let f = Forecast {
            swap_budget_s: fig
                .budget
                .and_then(|(_, l)| budget_series.eta(budget_slope, l)),
            free_floor_s: self.used.eta(used_slope, fig.floor.1),
            swap_full_s: fig.full.and_then(|(_, l)| full_series.eta(full_slope, l)),
            swap_full_wall: None,
        };
        let f = Forecast {
            swap_full_wall: f.swap_full_s.and(fig.full_wall),
            ..f
        };
        let fired = self.fire(&f);
        (f, fired)
    }

    /// The limits whose forecast went under the horizon now; a limit fires
    /// again only once it was back above 1.25 × the horizon.
    fn fire(&mut self, f: &Forecast) -> Vec<Limit> {
        let horizon = self.cfg.horizon_ms as f64 / 1000.0;
        let mut fired = Vec::new();
        for limit in Limit::ALL {
            let i = limit.index();
            match f.get(limit) {
                Some(s) if s <= horizon => {
                    if !self.firing[i] {
                        self.firing[i] = true;
                        fired.push(limit);
                    }
                }
                Some(s) if s <= horizon * 1.25 => {}
                _ => self.firing[i] = false,
            }
        }
        fired
    }

    /// Each limit with the value of its series now: swap the budget
    /// counts, memory not free, swap against the volume (or the scope's
    /// swap limit); `None` where there is no such limit.
    fn figures(&self, sys: &SystemSample, scope: Option<&Scope>) -> Figures {
        let counted = self
            .budget_swap
            .peek(sys.swap_used_bytes, scope.and_then(|s| s.swap_bytes));
        let budget = self.cfg.swap_budget_bytes.map(|b| {
            let (now, start) = (to_i64(counted.now), to_i64(counted.start));
            (now, start.saturating_add(to_i64(b)))
        });
        let judged = sys.judged_in(scope);
        let base = judged.base_bytes();
        let floor_pct = self.cfg.free_floor_pct.clamp(0.0, 100.0);
        let floor = (base as f64 * floor_pct / 100.0) as u64;
        let floor = (not_free_bytes(&judged), to_i64(base.saturating_sub(floor)));
        let scope_full = scope
            .and_then(|s| Some((s.swap_bytes?, s.swap_limit_bytes?)))
            .map(|(now, lim)| (to_i64(now), to_i64(lim)));
        let swap_now = to_i64(sys.swap_used_bytes);
        let room = |bytes: u64| Some((swap_now, swap_now.saturating_add(to_i64(bytes))));
        let mut full_wall = None;
        let full = match (scope_full, sys.swap_room, sys.swap_volume_free_bytes) {
            // A cgroup that may not swap (memory.swap.max 0, v1 memsw at the
            // limit) has no swap to fill: its trouble is the OOM killer,
            // which the free floor foresees. "Full at 0 s" would say nothing.
            (Some((_, 0)), _, _) => None,
            (Some(full), _, _) => Some(full),
            // macOS: swap files grow on demand until the first of the
            // kernel's walls: their count, the compressor pool, the volume.
            (None, Some(walls), _) => {
                let (wall, bytes) = walls.nearest();
                full_wall = Some(wall);
                room(bytes)
            }
            // macOS traces from before the walls were read: the volume.
            (None, None, Some(free)) => room(free),
            (None, None, None) => (self.cfg.swap_full && sys.swap_total_bytes > 0)
                .then(|| (swap_now, to_i64(sys.swap_total_bytes))),
        };
        Figures {
            budget,
            floor,
            full,
            full_wall,
            budget_on_scope: counted.on_scope,
            full_on_scope: scope_full.is_some(),
        }
    }

    /// The limits `sys` has reached (or passed), on the host.
    pub fn reached(&self, sys: &SystemSample) -> Vec<Limit> {
        self.reached_in(sys, None)
    }

    /// The limits reached (or passed) at this sample, in `scope` when the
    /// run has one.
    pub fn reached_in(&self, sys: &SystemSample, scope: Option<&Scope>) -> Vec<Limit> {
        let fig = self.figures(sys, scope);
        let at = |l: Limit| match l {
            Limit::SwapBudget => fig.budget,
            Limit::FreeFloor => Some(fig.floor),
            Limit::SwapFull => fig.full,
        };
        Limit::ALL
            .into_iter()
            .filter(|&l| at(l).is_some_and(|(now, lim)| now >= lim))
            .collect()
    }

    /// Whether `limit`'s forecast is under the horizon now.
    pub fn firing(&self, limit: Limit) -> bool {
        self.firing[limit.index()]
    }
}

/// Memory not free: the base of `free_pct` less free memory. Not
/// [`SystemSample::used_bytes`] (macOS's "Memory Used", which leaves out
/// cached files): the free floor is a floor on free memory, so its series
/// is what free memory is not.
fn not_free_bytes(sys: &SystemSample) -> i64 {
    i64::try_from(sys.base_bytes().saturating_sub(sys.free_bytes())).unwrap_or(i64::MAX)
}

/// `swap budget in ~40 s`, `free memory floor in ~3 min`.
pub fn describe(limit: Limit, secs: f64) -> String {
    format!("{} in {}", limit.label(), short_eta(secs))
}

/// `~40 s`, `~3 min`, `~2 h`, `now`.
pub fn short_eta(secs: f64) -> String {
    if !secs.is_finite() || secs >= 360_000.0 {
        return "a long while".to_owned();
    }
    if secs < 1.0 {
        "now".to_owned()
    } else if secs < 90.0 {
        format!("~{:.0} s", secs)
    } else if secs < 5400.0 {
        format!("~{:.0} min", secs / 60.0)
    } else {
        format!("~{:.0} h", secs / 3600.0)
    }
}

#[cfg(test)]
#[path = "forecast_tests.rs"]
mod tests;
