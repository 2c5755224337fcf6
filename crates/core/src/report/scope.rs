//! The run's scope in the report: the memory cgroup whose limit the run was
//! judged against, what it used of it, and whether its OOM killer ended the
//! run (`oom_kill` of v2 `memory.events`, of v1 `memory.oom_control`).

use serde::Serialize;

use crate::probe::Scope;
use crate::units::{format_bytes, format_limit};

/// The scope of a run, over its samples. Absent from a report when no
/// sample had one (the host was the scope).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScopeSummary {
    /// The cgroup's path in its hierarchy (the last one seen).
    pub path: String,
    /// cgroup version, 1 or 2.
    pub version: u8,
    /// Its memory limit: what the run was judged against.
    pub limit_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high_bytes: Option<u64>,
    /// Its own swap limit; absent: the host's swap bounds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_limit_bytes: Option<u64>,
    pub peak_usage_bytes: u64,
    /// Peak of the scope's swap; absent where the cgroup does not account it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_swap_bytes: Option<u64>,
    /// Times usage hit the limit during the run (v2 `max` events, v1
    /// `failcnt`).
    pub limit_hits: u64,
    /// Processes of the scope its OOM killer killed during the run.
    pub oom_kills: u64,
    /// When the first of them was seen (ms since the start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_oom_kill_ms: Option<u64>,
    /// Samples taken inside the scope.
    pub samples: usize,
    /// v2: the highest level of the scope's own PSI (`memory.pressure`)
    /// and the highest `some` avg10 seen; absent without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_pressure: Option<crate::pressure::Level>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure_some_avg10_peak: Option<f64>,
}

/// Folds each sample's scope into a [`ScopeSummary`].
#[derive(Debug, Default)]
pub(super) struct ScopeFold {
    summary: Option<ScopeSummary>,
    /// The counters at the first sample, and at the last.
    first: (u64, u64),
    last: (u64, u64),
    /// `oom-kill` events of the trace, and the first one's time.
    oom_events: u64,
    first_oom_event_ms: Option<u64>,
}

impl ScopeFold {
    /// Whether `scope` is another cgroup than the last sample's (the first
    /// one included).
    pub(super) fn enters(&self, scope: Option<&Scope>) -> bool {
        match (scope, &self.summary) {
            (Some(sc), Some(s)) => sc.path != s.path || sc.version != s.version,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    pub(super) fn note(&mut self, scope: Option<&Scope>, t_ms: u64) {
        let Some(sc) = scope else {
            return;
        };
        let counts = (sc.events.max.unwrap_or(0), sc.events.oom_kill.unwrap_or(0));
        let s = self.summary.get_or_insert_with(|| {
            self.first = counts;
            self.last = counts;
            ScopeSummary {
                path: String::new(),
                version: sc.version,
                limit_bytes: sc.limit_bytes,
                high_bytes: None,
                swap_limit_bytes: None,
                peak_usage_bytes: 0,
                peak_swap_bytes: None,
                limit_hits: 0,
                oom_kills: 0,
                first_oom_kill_ms: None,
                samples: 0,
                peak_pressure: None,
                pressure_some_avg10_peak: None,
            }
        });
        if s.path != sc.path {
            s.path.clone_from(&sc.path);
        }
        s.version = sc.version;
        s.limit_bytes = sc.limit_bytes;
        s.high_bytes = sc.high_bytes;
        s.swap_limit_bytes = sc.swap_limit_bytes;
        s.peak_usage_bytes = s.peak_usage_bytes.max(sc.usage_bytes);
        s.peak_swap_bytes = match (s.peak_swap_bytes, sc.swap_bytes) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        s.samples = s.samples.saturating_add(1);
        if let Some(p) = &sc.pressure {
            s.peak_pressure = s.peak_pressure.max(p.level);
            if let Some(some) = p.some {
                let peak = s.pressure_some_avg10_peak.unwrap_or(0.0).max(some.avg10);
                s.pressure_some_avg10_peak = Some(peak);
            }
        }
        // Counters only grow; a smaller one is another cgroup's (counted
        // again from there).
        if counts.0 < self.last.0 || counts.1 < self.last.1 {
            self.first = counts;
        }
        if counts.1 > self.last.1 && s.first_oom_kill_ms.is_none() {
            s.first_oom_kill_ms = Some(t_ms);
        }
        self.last = counts;
        s.limit_hits = s.limit_hits.max(counts.0.saturating_sub(self.first.0));
        s.oom_kills = s.oom_kills.max(counts.1.saturating_sub(self.first.1));
    }

    /// An `oom-kill` event: the recorder saw the count rise (at a tick, or
    /// at its last look once the command had exited, after the samples).
    /// Each stands for one kill at least.
    pub(super) fn note_oom_event(&mut self, t_ms: u64) {
        self.oom_events = self.oom_events.saturating_add(1);
        self.first_oom_event_ms.get_or_insert(t_ms);
    }

    pub(super) fn finish(self) -> Option<ScopeSummary> {
        let mut s = self.summary?;
        if self.oom_events > s.oom_kills {
            s.oom_kills = self.oom_events;
        }
        s.first_oom_kill_ms = match (s.first_oom_kill_ms, self.first_oom_event_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        Some(s)
    }
}

impl ScopeSummary {
    /// "inside a 256 MiB cgroup limit".
    pub fn inside(&self) -> String {
        format!("inside a {} cgroup limit", format_limit(self.limit_bytes))
    }

    /// The report's lines on the scope.
    pub fn to_text(&self) -> String {
        let swap_limit = match self.swap_limit_bytes {
            Some(b) => format!("its swap limit {}", format_limit(b)),
            None => "no swap limit of its own".to_string(),
        };
        let swap = match self.peak_swap_bytes {
            Some(b) => format!("its swap peaked at {}", format_bytes(b as i64)),
            None => "its swap is not accounted".to_string(),
        };
        let mut out = format!(
            "scope: {} (cgroup v{} {}): usage peaked at {}; {swap} ({swap_limit}); the limit was hit {} times",
            self.inside(),
            self.version,
            self.path,
            format_bytes(self.peak_usage_bytes as i64),
            self.limit_hits
        );
        if let Some(high) = self.high_bytes {
            out.push_str(&format!("; memory.high {}", format_limit(high)));
        }
        match (self.peak_pressure, self.pressure_some_avg10_peak) {
            (Some(level), Some(some)) => out.push_str(&format!(
                "; its own pressure peaked at {level} (PSI some avg10 up to {some:.1} %)"
            )),
            (Some(level), None) => out.push_str(&format!("; its own pressure peaked at {level}")),
            _ => {}
        }
        if self.oom_kills > 0 {
            out.push_str(&format!("\nended by: {}", self.oom_words()));
        }
        out
    }

    /// "the cgroup's OOM killer (1 process killed at 7.5s)".
    pub fn oom_words(&self) -> String {
        format!(
            "the cgroup's OOM killer ({} {} killed{})",
            self.oom_kills,
            if self.oom_kills == 1 {
                "process"
            } else {
                "processes"
            },
            self.first_oom_kill_ms
                .map(|t| format!(" at {}", super::secs(t)))
                .unwrap_or_default()
        )
    }
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;
