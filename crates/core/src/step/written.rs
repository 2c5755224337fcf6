//! Swap written over a run: what the SSD took, from the kernel's counter of
//! bytes swapped out (`SystemSample::swap_out_bytes`). Swap *in use* can
//! stay flat while pages go out and come back; every page written is wear.
//!
//! A sample's counter is the scope's where its cgroup counts swap-out, else
//! the host's: two counters with nothing in common (the probe drops a
//! cgroup v2 scope when its limit is lifted, and a process can be moved to
//! another cgroup). Each figure is kept with its [`Source`], and a change
//! of source starts a new baseline: the step between two counters is no
//! swap written.

use std::hash::{Hash, Hasher};

use serde::Serialize;

use crate::probe::{Scope, SystemSample};
use crate::util::units::format_bytes;

/// Whose counter a figure is: the host's, or one cgroup's (by its path, as
/// a hash, so that the folds stay `Copy`; two paths sharing a 64-bit hash
/// would be taken for one counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `/proc/vmstat`'s or `host_statistics64`'s counter.
    Host,
    /// The `pswpout` of one cgroup's `memory.stat`.
    Scope(u64),
}

/// A sample's swap-out counter and its source: the scope's own where it
/// has one, else the host's; `None` where neither is known.
pub fn counter_of(host: &SystemSample, scope: Option<&Scope>) -> Option<(Source, u64)> {
    if let Some((s, own)) = scope.and_then(|s| Some((s, s.swap_out_bytes?))) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.path.hash(&mut h);
        return Some((Source::Scope(h.finish()), own));
    }
    Some((Source::Host, host.swap_out_bytes?))
}

/// Swap written over a run or a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SwapWritten {
    /// Bytes written to swap between the first and the last sample with
    /// the counter (a counter that went back — a reboot, a new cgroup — is
    /// counted from its new value; a change of counter, from the new one's
    /// first value).
    pub bytes: u64,
    /// The span the counter covered, in ms.
    pub span_ms: u64,
    /// Counted for the whole host, not the run's cgroup (the kernel counts
    /// no swap-out per cgroup there, or the run had no cgroup limit), for
    /// all of the run or a part of it.
    pub host_wide: bool,
    /// How many counters the figure adds up: 1, or more where the
    /// counter's source changed during the run (the scope's limit lifted,
    /// the process moved to another cgroup). Absent in JSON when 1.
    #[serde(skip_serializing_if = "is_one")]
    pub counters: u32,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl SwapWritten {
    /// Bytes a minute over the span; 0 over no time.
    pub fn per_minute(&self) -> f64 {
        if self.span_ms == 0 {
            0.0
        } else {
            self.bytes as f64 * 60_000.0 / self.span_ms as f64
        }
    }

    /// "12.4 GiB, 3.1 GiB/min" (and "whole machine" where it is the host's;
    /// the number of counters where the source changed).
    pub fn to_words(&self) -> String {
        let host = if self.host_wide {
            " (the whole machine's)"
        } else {
            ""
        };
        let counters = if self.counters > 1 {
            format!(
                "; added up from {} counters: the counter's source changed during the run, each counted from its own first value",
                self.counters
            )
        } else {
            String::new()
        };
        let bytes = |b: u64| format_bytes(i64::try_from(b).unwrap_or(i64::MAX));
        format!(
            "{}, {}/min{host}{counters}",
            bytes(self.bytes),
            bytes(self.per_minute() as u64)
        )
    }
}

/// The fold that makes a [`SwapWritten`] from samples in time order.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrittenFold {
    last: Option<(Source, u64)>,
    first_ms: Option<u64>,
    last_ms: u64,
    bytes: u64,
    host_wide: bool,
    counters: u32,
}

impl WrittenFold {
    /// Takes one sample's counter: the scope's own where it has one, else
    /// the host's ([`counter_of`]).
    pub fn push(&mut self, t_ms: u64, host: &SystemSample, scope: Option<&Scope>) {
        let Some((source, now)) = counter_of(host, scope) else {
            return;
        };
        self.host_wide |= source == Source::Host;
        match self.last {
            // A counter only grows; one that went back started again.
            Some((was, before)) if was == source => {
                self.bytes = self.bytes.saturating_add(now.saturating_sub(before));
            }
            // Another counter: its first value is a new baseline.
            _ => self.counters = self.counters.saturating_add(1),
        }
        self.last = Some((source, now));
        self.first_ms.get_or_insert(t_ms);
        self.last_ms = t_ms;
    }

    /// The figure, when any sample carried the counter.
    pub fn finish(&self) -> Option<SwapWritten> {
        let first = self.first_ms?;
        Some(SwapWritten {
            bytes: self.bytes,
            span_ms: self.last_ms.saturating_sub(first),
            host_wide: self.host_wide,
            counters: self.counters,
        })
    }
}

/// Swap written today, for a shell that runs all day (the menu bar's
/// "written today"): the counter's growth since the first sample of the
/// local day it is told. Fed in time order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Daily {
    /// The day (any key that changes at local midnight) and what was
    /// written of it so far.
    day: Option<i64>,
    last: Option<u64>,
    bytes: u64,
}

impl Daily {
    /// Takes the counter `now` (absent: nothing known) on `day`; the bytes
    /// written on that day so far, `None` until the counter is known. A new
    /// day starts from 0 at its first sample; a counter that went back
    /// (a reboot) counts from its new value. A day before the one held (the
    /// clock or the time zone set back) is still the day held: the bytes
    /// written today stay today's, and the next day starts when the day
    /// told passes the one held.
    pub fn push(&mut self, day: i64, now: Option<u64>) -> Option<u64> {
        if self.day.map_or(true, |held| day > held) {
            self.day = Some(day);
            self.bytes = 0;
        }
        let now = now?;
        if let Some(before) = self.last {
            self.bytes = self.bytes.saturating_add(now.saturating_sub(before));
        }
        self.last = Some(now);
        Some(self.bytes)
    }
}

#[cfg(test)]
#[path = "written_tests.rs"]
mod tests;
