//! One step of the pipeline after the probe: a sample goes through the
//! watched tree and the detector and comes out as a [`Tick`] — what every
//! sink (trace, terminal, tray, web view, HTTP) consumes. Pure: the sampler
//! thread and the tests drive it the same way.

use crate::probe::Sample;
use crate::step::detect::{Detector, DetectorConfig};
use crate::step::forecast::{ForecastConfig, Forecaster};
use crate::step::pressure::{LevelInForce, PressureConfig};
use crate::step::tick::{Activity, Tick};
use crate::step::tree::WatchTree;

/// Watched tree + detector, stepped once per sample.
#[derive(Debug)]
pub struct Monitor {
    pub(crate) tree: WatchTree,
    pub(crate) detector: Detector,
    /// The level in force, written into each sample's `pressure.level`,
    /// and the scope's own, into its `scope.pressure.level`.
    pub pressure: LevelInForce,
    /// Time to trouble.
    pub forecaster: Forecaster,
    /// A process never counted as watched though it is in the tree: the
    /// recorder's own, when it runs inside the tree it watches (Python's
    /// `swapsight.record()` records its own process, the recorder its child).
    pub exclude: Option<u32>,
}

impl Monitor {
    /// A monitor of the tree rooted at `watch` (`None`: no tree), with the
    /// detector's `cfg` and the default pressure and forecast settings.
    pub fn new(watch: Option<u32>, cfg: DetectorConfig) -> Self {
        Monitor {
            tree: WatchTree::new(watch),
            detector: Detector::new(cfg),
            pressure: LevelInForce::new(PressureConfig::default()),
            forecaster: Forecaster::new(ForecastConfig::default()),
            exclude: None,
        }
    }

    /// Forecasts with `cfg` instead of the defaults (the guard's budget).
    pub fn with_forecast(mut self, cfg: ForecastConfig) -> Self {
        self.forecaster = Forecaster::new(cfg);
        self
    }

    /// Starts measuring swap growth (and the budget's forecast) anew.
    pub fn reset_baseline(&mut self) {
        self.detector.reset_baseline();
        self.forecaster = Forecaster::new(self.forecaster.config().clone());
    }

    /// Derives the Linux pressure level with `cfg` instead of the defaults.
    pub fn with_pressure(mut self, cfg: PressureConfig) -> Self {
        self.pressure = LevelInForce::new(cfg);
        self
    }

    /// Takes the next sample through the pressure level, the forecast, the
    /// tree and the detector: everything known after it.
    pub fn step(&mut self, mut sample: Sample) -> Tick {
        self.note_pressure(&mut sample);
        let (forecast, forecast_fired) =
            self.forecaster
                .step_in(sample.t_ms, &sample.system, sample.scope.as_ref());
        self.tree.update(&sample.processes);
        let mut watched = self.tree.pids();
        if let Some(pid) = self.exclude.filter(|&p| Some(p) != self.tree.root()) {
            watched.remove(&pid);
        }
        let flags = self.detector.update(&sample, &watched);
        let mut watched: Vec<u32> = watched.into_iter().collect();
        watched.sort_unstable();
        let flagged = self.detector.flagged().collect();
        let mut activity: Vec<Activity> = self.detector.activity().collect();
        activity.sort_unstable_by_key(|a| a.pid);
        Tick {
            sample,
            watched,
            flags,
            view: self.detector.system(),
            flagged,
            activity,
            forecast,
            forecast_fired,
            scope_note: None,
        }
    }
}

impl Monitor {
    /// Writes the levels into `sample`: the scope's from its own PSI, and
    /// the one in force, the worse of the machine's and the scope's (a job
    /// stalling inside its limit is under pressure on a calm host; a host
    /// thrashing presses every job on it).
    fn note_pressure(&mut self, sample: &mut Sample) {
        let scope_psi = sample.scope.as_ref().and_then(|s| s.pressure.as_ref());
        let (level, scope) =
            self.pressure
                .step(sample.t_ms, sample.system.pressure.as_ref(), scope_psi);
        if let Some(p) = sample.scope.as_mut().and_then(|s| s.pressure.as_mut()) {
            p.level = scope;
        }
        match sample.system.pressure.as_mut() {
            Some(p) => p.level = level,
            None if level.is_some() => {
                sample.system.pressure = Some(crate::step::pressure::Pressure {
                    level,
                    ..Default::default()
                });
            }
            None => {}
        }
    }
}

#[cfg(test)]
#[path = "monitor_tests.rs"]
mod tests;
