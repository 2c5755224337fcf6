//! [`Tick`]: everything known after one sample — the sample, the watched
//! tree, the detector's flags, view and assessments, and each process's
//! activity. What every sink (trace, terminal, tray, web view, HTTP) reads.

use serde::Serialize;

use crate::probe::{ProcessSample, Sample};
pub use crate::step::detect::Activity;
use crate::step::detect::{Assessment, Flag, SystemView};
use crate::step::forecast::{Forecast, Limit};

/// Everything known after one sample.
#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    /// The sample, with the pressure level in force written in.
    pub sample: Sample,
    /// Pids of the watched tree at this tick.
    pub watched: Vec<u32>,
    /// States raised or cleared at this tick.
    pub flags: Vec<Flag>,
    /// The detector's system-wide view after this sample.
    pub view: SystemView,
    /// Processes not in the `fits` state now or earlier since the baseline.
    pub flagged: Vec<Assessment>,
    /// Per-process activity over the detector's window, every process,
    /// sorted by pid.
    pub activity: Vec<Activity>,
    /// Time to trouble at this tick.
    pub forecast: Forecast,
    /// Limits whose forecast went under the horizon at this tick (once per
    /// episode: for notifications).
    pub forecast_fired: Vec<Limit>,
    /// Said once, on the tick where the scope's cgroup files were first
    /// found unreadable (the host is then the scope).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope_note: Option<String>,
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
        let order = |a: &&ProcessSample, b: &&ProcessSample| {
            b.footprint_bytes
                .cmp(&a.footprint_bytes)
                .then(a.pid.cmp(&b.pid))
        };
        let mut procs: Vec<_> = self.sample.processes.iter().collect();
        // Every tick of a recording: only the n largest need ordering among
        // themselves, so they are selected (linear) rather than all sorted.
        let top = n.min(procs.len());
        if top > 0 && top < procs.len() {
            procs.select_nth_unstable_by(top - 1, order);
        }
        let (largest, rest) = procs.split_at_mut(top);
        largest.sort_unstable_by(order);
        let flagged = |pid| self.flagged.iter().any(|a| a.pid == pid);
        let mut also: Vec<_> = rest
            .iter()
            .filter(|p| self.watched.contains(&p.pid) || flagged(p.pid))
            .copied()
            .collect();
        also.sort_unstable_by(order);
        let kept = largest.iter().chain(&also).map(|p| (*p).clone()).collect();
        Sample {
            t_ms: self.sample.t_ms,
            system: self.sample.system,
            processes: kept,
            scope: self.sample.scope.clone(),
        }
    }
}

#[cfg(test)]
#[path = "tick_tests.rs"]
mod tests;
