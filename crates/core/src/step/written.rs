//! Swap written over a run: what the SSD took, from the kernel's counter of
//! bytes swapped out (`SystemSample::swap_out_bytes`). Swap *in use* can
//! stay flat while pages go out and come back; every page written is wear.

use serde::Serialize;

use crate::probe::{Scope, SystemSample};
use crate::util::units::format_bytes;

/// Swap written over a run or a phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SwapWritten {
    /// Bytes written to swap between the first and the last sample with
    /// the counter (a counter that went back — a reboot, a new cgroup — is
    /// counted from its new value).
    pub bytes: u64,
    /// The span the counter covered, in ms.
    pub span_ms: u64,
    /// Counted for the whole host, not the run's cgroup (the kernel counts
    /// no swap-out per cgroup there, or the run had no cgroup limit).
    pub host_wide: bool,
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

    /// "12.4 GB, 3.1 GB/min" (and "whole machine" where it is the host's).
    pub fn to_words(&self) -> String {
        let host = if self.host_wide {
            " (the whole machine's)"
        } else {
            ""
        };
        let bytes = |b: u64| format_bytes(i64::try_from(b).unwrap_or(i64::MAX));
        format!(
            "{}, {}/min{host}",
            bytes(self.bytes),
            bytes(self.per_minute() as u64)
        )
    }
}

/// The fold that makes a [`SwapWritten`] from samples in time order.
#[derive(Debug, Clone, Copy, Default)]
pub struct WrittenFold {
    last: Option<u64>,
    first_ms: Option<u64>,
    last_ms: u64,
    bytes: u64,
    host_wide: bool,
}

impl WrittenFold {
    /// Takes one sample's counter: the scope's own where it has one, else
    /// the host's.
    pub fn push(&mut self, t_ms: u64, host: &SystemSample, scope: Option<&Scope>) {
        let own = scope.and_then(|s| s.swap_out_bytes);
        let Some(now) = own.or(host.swap_out_bytes) else {
            return;
        };
        self.host_wide |= own.is_none();
        if let Some(before) = self.last {
            // A counter only grows; one that went back started again.
            self.bytes = self.bytes.saturating_add(now.saturating_sub(before));
        }
        self.last = Some(now);
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
    /// (a reboot) counts from its new value.
    pub fn push(&mut self, day: i64, now: Option<u64>) -> Option<u64> {
        if self.day != Some(day) {
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
