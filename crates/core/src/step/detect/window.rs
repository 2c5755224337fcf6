//! The detector's memory of the last ticks, per system and per process, and
//! what it measures over its window: a sustained swap climb, each process's
//! activity and a footprint drop that free memory does not match.

use std::collections::VecDeque;

use serde::Serialize;

use super::DetectorConfig;
use crate::probe::ProcessSample;
use crate::step::sustain::sustained;
use crate::util::units::signed_diff;

#[derive(Debug, Clone, Copy)]
pub(super) struct SysPoint {
    pub(super) t_ms: u64,
    pub(super) swap_used: u64,
    pub(super) free_bytes: u64,
    pub(super) unexplained: i64,
    /// Memory processes hold (Linux `AnonPages + Shmem`), where known.
    pub(super) anon: Option<u64>,
    /// The readable footprints, summed (those the gap counts).
    pub(super) footprints: u64,
    /// macOS: the GPU's in-use system memory, where the OS gave it.
    pub(super) gpu_in_use: Option<u64>,
}

/// A footprint drop not matched by free memory, and where it may have gone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Hidden {
    /// The drop not matched, when large enough to count; 0 otherwise.
    pub(super) bytes: u64,
    /// How far the GPU's in-use memory rose over the same span, where the
    /// OS gives it and it rose: the memory that left the footprint is held
    /// by the GPU (Metal buffers outside it).
    pub(super) gpu_rise: Option<u64>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct ProcPoint {
    pub(super) t_ms: u64,
    pub(super) footprint: u64,
    pub(super) pageins: u64,
    /// Swap-ins in pages (macOS), when the OS says.
    pub(super) swapins: Option<u64>,
    /// Own swapped memory (Linux `VmSwap`, macOS compressed), when known.
    pub(super) swapped: Option<u64>,
    pub(super) owned: u64,
}

/// Swap climbed in a sustained way over the last `sustain_ms`, by the rule
/// the forecaster shares ([`crate::step::sustain::sustained`]): most of the
/// way or in steps, never by one burst of page-outs.
pub(super) fn sustained_climb(sys: &VecDeque<SysPoint>, now: u64, cfg: &DetectorConfig) -> bool {
    let recent = sys
        .iter()
        .filter(|p| now.saturating_sub(p.t_ms) <= cfg.sustain_ms)
        .map(|p| (signed_diff(p.t_ms, 0), signed_diff(p.swap_used, 0)));
    sustained(recent, cfg.min_rate_bytes_per_s as f64, 2)
}

pub(super) fn activity(
    pid: u32,
    history: &VecDeque<ProcPoint>,
    now: u64,
    window_ms: u64,
) -> Activity {
    let last = history.back().copied();
    let first = history
        .iter()
        .find(|q| now.saturating_sub(q.t_ms) <= window_ms)
        .copied();
    match (first, last) {
        (Some(a), Some(b)) if b.t_ms > a.t_ms => {
            let secs = (b.t_ms - a.t_ms) as f64 / 1000.0;
            Activity {
                pid,
                pageins_per_s: b.pageins.saturating_sub(a.pageins) as f64 / secs,
                footprint_delta_bytes: signed_diff(b.footprint, a.footprint),
                swapins_per_s: a
                    .swapins
                    .zip(b.swapins)
                    .map(|(x, y)| y.saturating_sub(x) as f64 / secs),
                process_swap_delta_bytes: a.swapped.zip(b.swapped).map(|(x, y)| signed_diff(y, x)),
                owned_delta_bytes: signed_diff(b.owned, a.owned),
            }
        }
        _ => Activity {
            pid,
            pageins_per_s: 0.0,
            footprint_delta_bytes: 0,
            swapins_per_s: last.and_then(|b| b.swapins.map(|_| 0.0)),
            process_swap_delta_bytes: last.and_then(|b| b.swapped.map(|_| 0)),
            owned_delta_bytes: 0,
        },
    }
}

/// What a process did over the detector's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Activity {
    pub(crate) pid: u32,
    pub(crate) pageins_per_s: f64,
    pub(crate) footprint_delta_bytes: i64,
    /// Swap-ins per second in pages (macOS), when the OS says.
    pub swapins_per_s: Option<f64>,
    /// Change of the process's own swap (Linux `VmSwap`), when the OS says.
    pub process_swap_delta_bytes: Option<i64>,
    /// Change of all it owns: footprint and memory outside it.
    pub owned_delta_bytes: i64,
}

/// The footprint drop not matched by free memory, when it is large enough to
/// count, and the GPU's rise over the same span.
pub(super) fn hidden_bytes(
    history: &VecDeque<ProcPoint>,
    sys: &VecDeque<SysPoint>,
    now: u64,
    cfg: &DetectorConfig,
    p: &ProcessSample,
    threshold: u64,
) -> Hidden {
    let in_window = || {
        history
            .iter()
            .filter(|q| now.saturating_sub(q.t_ms) <= cfg.hidden_window_ms)
    };
    let Some(peak_fp) = in_window().map(|q| q.footprint).max() else {
        return Hidden::default();
    };
    let drop = peak_fp.saturating_sub(p.footprint_bytes);
    if drop < threshold {
        return Hidden::default();
    }
    // What was held is read where the footprint's plateau began, not where
    // it ended: a process that hands its pages to a tmpfs file over several
    // ticks, then frees its copy, has the file's pages held already at the
    // plateau's end, and its copy would look freed in full.
    let near_peak = peak_fp.saturating_sub(threshold / 8);
    let Some(peak) = in_window().find(|q| q.footprint >= near_peak) else {
        return Hidden::default();
    };
    let then = sys.iter().find(|s| s.t_ms >= peak.t_ms);
    let now_point = sys.back();
    // Where the kernel says how much memory processes hold (Linux), that
    // is what a freed copy gives back — at once and in full. Free memory
    // is not: on a VM that reclaims and balloons it comes back late and in
    // part, and page cache growing beside it hides the rest.
    let freed = match (then, now_point) {
        (Some(a), Some(b)) if a.anon.is_some() && b.anon.is_some() => {
            let (held_then, held_now) = (a.anon.unwrap_or(0), b.anon.unwrap_or(0));
            // What another process took meanwhile (a browser, a build) is
            // held as much as the copy was: it is not the copy's memory
            // staying out of sight. So the other footprints' growth counts
            // as freed too; a tmpfs file is in no footprint, and still is
            // hidden memory.
            let others_then = a.footprints.saturating_sub(peak.footprint);
            let others_now = b.footprints.saturating_sub(p.footprint_bytes);
            held_then
                .saturating_sub(held_now)
                .saturating_add(others_now.saturating_sub(others_then))
        }
        _ => {
            let free_then = then.map_or(0, |s| s.free_bytes);
            let free_now = now_point.map_or(0, |s| s.free_bytes);
            free_now.saturating_sub(free_then)
        }
    };
    if (freed as f64) < cfg.hidden_free_share * drop as f64 {
        let gpu_rise = match (
            then.and_then(|a| a.gpu_in_use),
            now_point.and_then(|b| b.gpu_in_use),
        ) {
            (Some(a), Some(b)) if b > a => Some(b - a),
            _ => None,
        };
        Hidden {
            bytes: drop - freed.min(drop),
            gpu_rise,
        }
    } else {
        Hidden::default()
    }
}

/// What system swap did over the window at one tick.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct SwapWindow {
    /// Swap in use now − the window's minimum.
    pub(super) growth_window_bytes: i64,
    /// Swap climbed in a sustained way over the last `sustain_ms`
    /// ([`sustained_climb`]).
    pub(super) sustained: bool,
    /// Growth over the window that counts as climbing.
    pub(super) tolerance_bytes: u64,
    /// Grew by the tolerance over the window *and* sustained: swap climbs.
    pub(super) climbing: bool,
    /// Memory no footprint explains, now − the window's minimum.
    pub(super) unexplained_growth_bytes: i64,
}

/// The swap-growth window: swap climbs when it grew by at least
/// `tolerance_bytes` over `window_ms` (now − the window's minimum) and the
/// growth was sustained. `sys` is the system history, this tick last.
pub(super) fn swap_window(
    sys: &VecDeque<SysPoint>,
    now: u64,
    tolerance_bytes: u64,
    cfg: &DetectorConfig,
) -> SwapWindow {
    let Some(current) = sys.back() else {
        return SwapWindow {
            tolerance_bytes,
            ..SwapWindow::default()
        };
    };
    let in_window = || {
        sys.iter()
            .filter(move |p| now.saturating_sub(p.t_ms) <= cfg.window_ms)
    };
    let min_swap = in_window().map(|p| p.swap_used).min().unwrap_or(0);
    let growth_window_bytes = signed_diff(current.swap_used, min_swap);
    let sustained = sustained_climb(sys, now, cfg);
    let unexplained_growth_bytes = current.unexplained.saturating_sub(
        in_window()
            .map(|p| p.unexplained)
            .min()
            .unwrap_or(current.unexplained),
    );
    SwapWindow {
        growth_window_bytes,
        sustained,
        tolerance_bytes,
        climbing: growth_window_bytes >= signed_diff(tolerance_bytes, 0) && sustained,
        unexplained_growth_bytes,
    }
}
