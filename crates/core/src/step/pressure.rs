//! Memory pressure: the kernel's own word on how hard memory is to get,
//! beside swapsight's footprints and swap. Linux measures it as PSI, the
//! share of time tasks stalled waiting for memory (`/proc/pressure/memory`,
//! Documentation/accounting/psi.rst); macOS answers a level
//! (`kern.memorystatus_vm_pressure_level`: 1 normal, 2 warning, 4 critical,
//! XNU `bsd/kern/kern_memorystatus_notify.c`). This module holds the one
//! field a sample carries for it ([`Pressure`]), the rule that turns PSI
//! into a level ([`PressureGauge`], thresholds in [`PressureConfig`]) and
//! the level in force, the worse of the host's and the scope's
//! ([`LevelInForce`]): the live monitor ([`crate::step::monitor::Monitor`]) writes it into
//! each sample, and `report` ([`PressureFold`]) derives it the same way for
//! a trace that carries none. Where PSI is absent the sample has no
//! pressure at all — never zeros that would read as calm.

use serde::{Deserialize, Serialize};

pub use crate::probe::pressure::{Level, Pressure, PsiLine};

/// Thresholds of the Linux level, from tools people trust with their
/// machines. Written into each trace's header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PressureConfig {
    /// `warning` when PSI `some` avg10 is at or above this (nohang's
    /// PSI warning threshold, 10 %).
    pub warn_some_avg10: f64,
    /// `critical` when PSI `some` avg10 is at or above this (nohang's PSI
    /// action threshold, 40 %) …
    pub critical_some_avg10: f64,
    /// … or PSI `full` avg10 at or above this (systemd-oomd's
    /// `DefaultMemoryPressureLimit=60%`, oomd.conf(5)).
    pub critical_full_avg10: f64,
    /// A level is raised once its condition held this long (nohang's PSI
    /// duration and systemd-oomd's `DefaultMemoryPressureDurationSec`, both
    /// 30 s).
    pub hold_ms: u64,
    /// A raised level falls back once its condition was false this long.
    pub clear_ms: u64,
}

impl Default for PressureConfig {
    fn default() -> Self {
        PressureConfig {
            warn_some_avg10: 10.0,
            critical_some_avg10: 40.0,
            critical_full_avg10: 60.0,
            hold_ms: 30_000,
            clear_ms: 10_000,
        }
    }
}

impl PressureConfig {
    /// Why these thresholds cannot work together (warning at or above
    /// critical), in the words of the flags that set them; `None` when they
    /// can.
    pub fn problem(&self) -> Option<String> {
        (self.warn_some_avg10 >= self.critical_some_avg10).then(|| {
            format!(
                "--pressure-warn {} must be below --pressure-critical {}",
                self.warn_some_avg10, self.critical_some_avg10
            )
        })
    }

    /// The level the PSI figures of one tick point at, before any holding.
    pub fn raw_level(&self, p: &Pressure) -> Level {
        let some = p.some.map_or(0.0, |l| l.avg10);
        let full = p.full.map_or(0.0, |l| l.avg10);
        if some >= self.critical_some_avg10 || full >= self.critical_full_avg10 {
            Level::Critical
        } else if some >= self.warn_some_avg10 {
            Level::Warning
        } else {
            Level::Normal
        }
    }
}

/// Turns each tick's pressure into the level in force. macOS: the kernel's
/// level as is (it has its own hysteresis, `memorystatus_notify.md`).
/// Linux: a level is raised when the PSI condition for it (or a higher one)
/// held for `hold_ms`, and lowered one step when its condition was false
/// for `clear_ms`, so a PSI average hovering at a threshold does not flap.
/// O(1) per tick.
#[derive(Debug, Clone, Default)]
pub struct PressureGauge {
    cfg: PressureConfig,
    level: Level,
    /// Since when each level's condition held without a break (index by
    /// [`Level::index`]; `Normal`'s is unused).
    held_since: [Option<u64>; 3],
    /// Since when the current level's condition has been false.
    false_since: Option<u64>,
}

impl PressureGauge {
    /// A gauge with the thresholds of `cfg`, at `normal`.
    pub fn new(cfg: PressureConfig) -> Self {
        PressureGauge {
            cfg,
            ..PressureGauge::default()
        }
    }

    /// The thresholds it applies.
    pub fn config(&self) -> &PressureConfig {
        &self.cfg
    }

    /// The level in force at `t_ms`; `None` where the tick has no pressure
    /// figures.
    pub fn step(&mut self, t_ms: u64, pressure: Option<&Pressure>) -> Option<Level> {
        let p = pressure?;
        if let Some(kernel) = p.kernel_level {
            self.level = kernel;
            return Some(kernel);
        }
        if p.some.is_none() && p.full.is_none() {
            return None;
        }
        let raw = self.cfg.raw_level(p);
        for level in [Level::Warning, Level::Critical] {
            let i = level.index();
            if raw >= level {
                self.held_since[i].get_or_insert(t_ms);
            } else {
                self.held_since[i] = None;
            }
        }
        let held =
            |since: Option<u64>, ms: u64| since.is_some_and(|s| t_ms.saturating_sub(s) >= ms);
        // Up: the highest level whose condition held long enough.
        for level in [Level::Critical, Level::Warning] {
            if level > self.level && held(self.held_since[level.index()], self.cfg.hold_ms) {
                self.level = level;
                self.false_since = None;
                break;
            }
        }
        // Down: one step once the current level's condition was false long
        // enough.
        if self.level > Level::Normal {
            if raw >= self.level {
                self.false_since = None;
            } else if held(
                Some(*self.false_since.get_or_insert(t_ms)),
                self.cfg.clear_ms,
            ) {
                self.level = if self.level == Level::Critical && raw >= Level::Warning {
                    Level::Warning
                } else {
                    Level::Normal
                };
                self.false_since = None;
            }
        }
        Some(self.level)
    }
}

/// Time spent at each level over a run or a phase, and the highest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LevelTimes {
    pub(crate) peak: Level,
    pub(crate) normal_ms: u64,
    pub(crate) warning_ms: u64,
    pub(crate) critical_ms: u64,
}

impl LevelTimes {
    fn add(&mut self, level: Level, dt_ms: u64) {
        self.peak = self.peak.max(level);
        let slot = match level {
            Level::Normal => &mut self.normal_ms,
            Level::Warning => &mut self.warning_ms,
            Level::Critical => &mut self.critical_ms,
        };
        *slot = slot.saturating_add(dt_ms);
    }

    pub(crate) fn ms_at(&self, level: Level) -> u64 {
        match level {
            Level::Normal => self.normal_ms,
            Level::Warning => self.warning_ms,
            Level::Critical => self.critical_ms,
        }
    }
}

/// The level in force at a tick: the worse of the machine's and the run's
/// scope's own (a cgroup v2's `memory.pressure`), each derived by its own
/// [`PressureGauge`] — a job stalling inside its limit is under pressure on
/// a calm host, and a host thrashing presses every job on it. The one rule
/// for the live monitor, which writes the level into each sample, and for
/// the report, which applies it to a trace that carries no level.
#[derive(Debug, Clone, Default)]
pub struct LevelInForce {
    host: PressureGauge,
    scope: PressureGauge,
}

impl LevelInForce {
    pub(crate) fn new(cfg: PressureConfig) -> Self {
        LevelInForce {
            host: PressureGauge::new(cfg.clone()),
            scope: PressureGauge::new(cfg),
        }
    }

    /// The level in force at `t_ms`, and the scope's own level.
    pub fn step(
        &mut self,
        t_ms: u64,
        host: Option<&Pressure>,
        scope: Option<&Pressure>,
    ) -> (Option<Level>, Option<Level>) {
        let host = self.host.step(t_ms, host);
        let scope = scope.and_then(|p| self.scope.step(t_ms, Some(p)));
        (host.max(scope), scope)
    }
}

/// Memory pressure over a run or a phase, for `report`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PressureSummary {
    #[serde(flatten)]
    pub(crate) levels: LevelTimes,
    /// Highest PSI `some` / `full` avg10 seen (Linux).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub some_avg10_peak: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) full_avg10_peak: Option<f64>,
    /// Time some tasks stalled on memory over the span (growth of PSI
    /// `some` total), in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub some_stall_ms: Option<u64>,
}

/// Folds samples' pressure into a [`PressureSummary`]. The level is the
/// one the trace recorded (what the live monitor decided); a trace without
/// it has it derived again by the monitor's own rule ([`LevelInForce`]).
/// Each sample counts for the time since the one before it, at its own
/// level.
#[derive(Debug, Clone, Default)]
pub struct PressureFold {
    levels: LevelInForce,
    last_t: Option<u64>,
    summary: Option<PressureSummary>,
    some_first_us: Option<u64>,
}

impl PressureFold {
    pub(crate) fn new(cfg: PressureConfig) -> Self {
        PressureFold {
            levels: LevelInForce::new(cfg),
            ..PressureFold::default()
        }
    }

    /// Takes one sample's host pressure and its scope's own.
    pub fn push(&mut self, t_ms: u64, pressure: Option<&Pressure>, scope: Option<&Pressure>) {
        let (derived, _) = self.levels.step(t_ms, pressure, scope);
        let dt = self.last_t.map_or(0, |last| t_ms.saturating_sub(last));
        self.last_t = Some(t_ms);
        let Some(p) = pressure else { return };
        let Some(level) = p.level.or(derived) else {
            return;
        };
        let s = self.summary.get_or_insert_with(PressureSummary::default);
        s.levels.add(level, dt);
        let peak = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        s.some_avg10_peak = peak(s.some_avg10_peak, p.some.map(|l| l.avg10));
        s.full_avg10_peak = peak(s.full_avg10_peak, p.full.map(|l| l.avg10));
        if let Some(total) = p.some.map(|l| l.total_us) {
            let first = *self.some_first_us.get_or_insert(total);
            s.some_stall_ms = Some(total.saturating_sub(first) / 1000);
        }
    }

    /// `None` when no sample carried pressure.
    pub fn finish(self) -> Option<PressureSummary> {
        self.summary
    }
}

#[cfg(test)]
#[path = "pressure_tests.rs"]
mod tests;
