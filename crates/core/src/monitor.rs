//! One step of the pipeline after the probe: a sample goes through the
//! watched tree and the detector and comes out as a [`Tick`] — what every
//! sink (trace, terminal, tray, web view, HTTP) consumes. Pure: the sampler
//! thread and the tests drive it the same way.

use serde::Serialize;

use crate::detect::{Assessment, Detector, DetectorConfig, Flag, SystemView};
use crate::probe::Sample;
use crate::tree::WatchTree;

/// Everything known after one sample.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    pub sample: Sample,
    /// Pids of the watched tree at this tick.
    pub watched: Vec<u32>,
    /// States raised or cleared at this tick.
    pub flags: Vec<Flag>,
    pub view: SystemView,
    /// Processes not in the `fits` state now or earlier since the baseline.
    pub flagged: Vec<Assessment>,
    /// Per-process activity over the detector's window, every process,
    /// sorted by pid.
    pub activity: Vec<Activity>,
}

/// What a process did over the detector's window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Activity {
    pub pid: u32,
    pub pageins_per_s: f64,
    pub footprint_delta_bytes: i64,
    /// Swap-ins per second in pages (macOS), when the OS says.
    pub swapins_per_s: Option<f64>,
}

impl Tick {
    /// Combined footprint of the watched tree.
    pub fn watched_footprint_bytes(&self) -> u64 {
        self.sample
            .processes
            .iter()
            .filter(|p| self.watched.contains(&p.pid))
            .map(|p| p.footprint_bytes)
            .sum()
    }

    /// The `n` largest processes by footprint plus the watched tree, in
    /// footprint order: what a trace keeps of each sample.
    pub fn kept_processes(&self, n: usize) -> Sample {
        let mut procs: Vec<_> = self.sample.processes.iter().collect();
        procs.sort_unstable_by(|a, b| {
            b.footprint_bytes
                .cmp(&a.footprint_bytes)
                .then(a.pid.cmp(&b.pid))
        });
        let flagged = |pid| self.flagged.iter().any(|a| a.pid == pid);
        let kept = procs
            .iter()
            .enumerate()
            .filter(|(i, p)| *i < n || self.watched.contains(&p.pid) || flagged(p.pid))
            .map(|(_, p)| (*p).clone())
            .collect();
        Sample {
            t_ms: self.sample.t_ms,
            system: self.sample.system,
            processes: kept,
        }
    }
}

/// Watched tree + detector, stepped once per sample.
#[derive(Debug)]
pub struct Monitor {
    pub tree: WatchTree,
    pub detector: Detector,
}

impl Monitor {
    pub fn new(watch: Option<u32>, cfg: DetectorConfig) -> Self {
        Monitor {
            tree: WatchTree::new(watch),
            detector: Detector::new(cfg),
        }
    }

    pub fn step(&mut self, sample: Sample) -> Tick {
        self.tree.update(&sample.processes);
        let watched = self.tree.pids();
        let flags = self.detector.update(&sample, &watched);
        let mut watched: Vec<u32> = watched.into_iter().collect();
        watched.sort_unstable();
        let flagged = self
            .detector
            .assessments()
            .filter(|a| {
                a.state != crate::detect::State::Fits || a.worst != crate::detect::State::Fits
            })
            .collect();
        let mut activity: Vec<Activity> = self
            .detector
            .evidence()
            .map(|(pid, e)| Activity {
                pid,
                pageins_per_s: e.pageins_per_s,
                footprint_delta_bytes: e.footprint_delta_bytes,
                swapins_per_s: e.swapins_per_s,
            })
            .collect();
        activity.sort_unstable_by_key(|a| a.pid);
        Tick {
            sample,
            watched,
            flags,
            view: self.detector.system(),
            flagged,
            activity,
        }
    }
}
