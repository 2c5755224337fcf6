//! One step of the pipeline after the probe: a sample goes through the
//! watched tree and the detector and comes out as a [`Tick`] — what every
//! sink (trace, terminal, tray, web view, HTTP) consumes. Pure: the sampler
//! thread and the tests drive it the same way.

use crate::detect::{Detector, DetectorConfig};
use crate::probe::Sample;
use crate::tick::{Activity, Tick};
use crate::tree::WatchTree;

/// Watched tree + detector, stepped once per sample.
#[derive(Debug)]
pub struct Monitor {
    pub tree: WatchTree,
    pub detector: Detector,
    /// A process never counted as watched though it is in the tree: the
    /// recorder's own, when it runs inside the tree it watches (Python's
    /// `swapsight.record()` records its own process, the recorder its child).
    pub exclude: Option<u32>,
}

impl Monitor {
    pub fn new(watch: Option<u32>, cfg: DetectorConfig) -> Self {
        Monitor {
            tree: WatchTree::new(watch),
            detector: Detector::new(cfg),
            exclude: None,
        }
    }

    pub fn step(&mut self, sample: Sample) -> Tick {
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
            scope_note: None,
        }
    }
}

#[cfg(test)]
#[path = "monitor_tests.rs"]
mod tests;
