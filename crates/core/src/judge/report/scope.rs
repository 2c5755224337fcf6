//! The run's scope in the report: the memory cgroup whose limit the run was
//! judged against, what it used of it, and whether its OOM killer ended the
//! run (`oom_kill` of v2 `memory.events`, of v1 `memory.oom_control`).

use serde::Serialize;

use crate::probe::Scope;
use crate::util::units::{format_bytes, format_limit};

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
    pub(crate) high_bytes: Option<u64>,
    /// Its own swap limit; absent: the host's swap bounds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_limit_bytes: Option<u64>,
    pub(crate) peak_usage_bytes: u64,
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
    pub peak_pressure: Option<crate::step::pressure::Level>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pressure_some_avg10_peak: Option<f64>,
}

/// Most cgroups a report lists: a run moves between a few (a job that
/// joins its cgroup, a step in another); a trace that names more is folded
/// into the last one, so no trace grows the report without bound.
pub const MAX_SCOPES: usize = 16;

/// One cgroup the run was in, as it folds.
#[derive(Debug)]
struct Entry {
    summary: ScopeSummary,
    /// Its counters (limit hits, OOM kills) at its first sample, and last.
    first: (u64, u64),
    last: (u64, u64),
}

/// Folds each sample's scope into a [`ScopeSummary`] per cgroup the run
/// was in: a process that moves from one to another has each one's figures
/// under that one's name.
#[derive(Debug, Default)]
pub(super) struct ScopeFold {
    /// In the order the run first entered them; the current one is
    /// `entries[current]`.
    entries: Vec<Entry>,
    current: usize,
    /// `oom-kill` events of the trace, and the first one's time.
    oom_events: u64,
    first_oom_event_ms: Option<u64>,
}

impl ScopeFold {
    /// Whether `scope` is another cgroup than the last sample's (the first
    /// one included).
    pub(super) fn enters(&self, scope: Option<&Scope>) -> bool {
        match (scope, self.entries.get(self.current)) {
            (Some(sc), Some(e)) => sc.path != e.summary.path || sc.version != e.summary.version,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// Whether a sample had a scope already.
    pub(super) fn seen_any(&self) -> bool {
        !self.entries.is_empty()
    }

    pub(super) fn note(&mut self, scope: Option<&Scope>, t_ms: u64) {
        let Some(sc) = scope else {
            return;
        };
        let counts = (sc.events.max.unwrap_or(0), sc.events.oom_kill.unwrap_or(0));
        if self.enters(Some(sc)) {
            let known = self
                .entries
                .iter()
                .position(|e| e.summary.path == sc.path && e.summary.version == sc.version);
            match known {
                // Back in a cgroup it was in: its counters go on from here.
                Some(i) => {
                    self.current = i;
                    let e = &mut self.entries[i];
                    e.first = (
                        counts.0.saturating_sub(e.last.0.saturating_sub(e.first.0)),
                        counts.1.saturating_sub(e.last.1.saturating_sub(e.first.1)),
                    );
                    e.last = counts;
                }
                None if self.entries.len() < MAX_SCOPES => {
                    self.entries.push(Entry {
                        summary: ScopeSummary::starting(sc),
                        first: counts,
                        last: counts,
                    });
                    self.current = self.entries.len() - 1;
                }
                None => {}
            }
        }
        let Some(e) = self.entries.get_mut(self.current) else {
            return;
        };
        let s = &mut e.summary;
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
        if counts.0 < e.last.0 || counts.1 < e.last.1 {
            e.first = counts;
        }
        if counts.1 > e.last.1 && s.first_oom_kill_ms.is_none() {
            s.first_oom_kill_ms = Some(t_ms);
        }
        e.last = counts;
        s.limit_hits = s.limit_hits.max(counts.0.saturating_sub(e.first.0));
        s.oom_kills = s.oom_kills.max(counts.1.saturating_sub(e.first.1));
    }

    /// An `oom-kill` event: the recorder saw the count rise (at a tick, or
    /// at its last look once the command had exited, after the samples).
    /// Each stands for one kill at least, in the cgroup the run was in last.
    pub(super) fn note_oom_event(&mut self, t_ms: u64) {
        self.oom_events = self.oom_events.saturating_add(1);
        self.first_oom_event_ms.get_or_insert(t_ms);
    }

    /// Every cgroup the run was in, in the order it entered them.
    pub(super) fn finish_all(mut self) -> Vec<ScopeSummary> {
        if let Some(e) = self.entries.get_mut(self.current) {
            let s = &mut e.summary;
            if self.oom_events > s.oom_kills {
                s.oom_kills = self.oom_events;
            }
            s.first_oom_kill_ms = match (s.first_oom_kill_ms, self.first_oom_event_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        self.entries.into_iter().map(|e| e.summary).collect()
    }

    /// The cgroup the run fared worst in ([`worst`]).
    #[cfg(test)]
    pub(super) fn finish(self) -> Option<ScopeSummary> {
        worst(&self.finish_all()).cloned()
    }
}

/// The cgroup a run fared worst in: where its OOM killer killed most, else
/// where usage came nearest the limit. The run is judged and summed up
/// there; the report lists the others beside it.
pub fn worst(scopes: &[ScopeSummary]) -> Option<&ScopeSummary> {
    let share = |s: &ScopeSummary| s.peak_usage_bytes as f64 / s.limit_bytes.max(1) as f64;
    scopes.iter().max_by(|a, b| {
        a.oom_kills
            .cmp(&b.oom_kills)
            .then(share(a).total_cmp(&share(b)))
    })
}

impl ScopeSummary {
    /// A summary of `sc` before any sample is folded in.
    fn starting(sc: &Scope) -> Self {
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
    }

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
