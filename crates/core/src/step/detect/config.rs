//! The detector's thresholds and the product's central rule (overflow or
//! false fit), documented in `docs/detector.md`.

use serde::{Deserialize, Serialize};

use super::State;

/// Thresholds. `None` sizes scale with physical memory (see each field).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DetectorConfig {
    /// Window over which swap growth and per-process activity are measured.
    pub window_ms: u64,
    /// Swap growth over the window that counts as climbing.
    /// Default: max(128 MiB, 0.5 % of physical memory).
    pub swap_tolerance_bytes: Option<u64>,
    /// Swap must also have grown at this rate over the last `sustain_ms`.
    pub min_rate_bytes_per_s: u64,
    /// Two thirds of the intervals of this span must have grown at
    /// `min_rate_bytes_per_s` for swap to count as climbing: one burst of
    /// page-outs never counts alone.
    pub sustain_ms: u64,
    /// Footprints (all processes) at or above this share of physical memory
    /// explain the swap: overflow rather than false fit. On the seeds' 48 GiB
    /// Mac swap began when the footprint passed 33.5–36.2 GiB (0.70–0.75).
    pub overflow_share: f64,
    /// Swap-ins (macOS, pages) or page-ins (Linux major faults; macOS
    /// without swap-in figures) per second over the window that count as
    /// "touching swap".
    pub min_pageins_per_s: f64,
    /// Footprint growth over the window that counts as "allocating"; also
    /// the growth of a process's own swapped memory that counts.
    pub min_growth_bytes: u64,
    /// Footprint drop that counts as hidden memory.
    /// Default: max(512 MiB, 2 % of physical memory).
    pub hidden_drop_bytes: Option<u64>,
    /// The window a footprint must drop within to count as hidden memory.
    pub hidden_window_ms: u64,
    /// Free memory must rise by at least this share of a drop to explain it.
    pub hidden_free_share: f64,
    /// A state must hold this long before it is raised.
    pub raise_ms: u64,
    /// A raised state is kept until the process looked fine this long.
    pub clear_ms: u64,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            window_ms: 10_000,
            swap_tolerance_bytes: None,
            min_rate_bytes_per_s: 1 << 20,
            sustain_ms: 3_000,
            overflow_share: 0.65,
            min_pageins_per_s: 64.0,
            min_growth_bytes: 64 << 20,
            hidden_drop_bytes: None,
            hidden_window_ms: 5_000,
            hidden_free_share: 0.5,
            raise_ms: 1_000,
            clear_ms: 20_000,
        }
    }
}

impl DetectorConfig {
    /// The product's central rule, for swap that grew: with the readable
    /// footprints at or above `overflow_share` of physical memory they
    /// explain it (overflow: Activity Monitor would show it), below it they
    /// do not (false fit). Unreadable processes count 0, so the share is a
    /// lower bound and only a share at or above the line settles overflow.
    /// The live detector and the offline report both ask here.
    pub fn swap_verdict(&self, footprints_share: f64) -> State {
        if footprints_share >= self.overflow_share {
            State::Overflow
        } else {
            State::FalseFit
        }
    }

    pub(crate) fn swap_tolerance_for(&self, phys_bytes: u64) -> u64 {
        self.swap_tolerance_bytes
            .unwrap_or_else(|| (128u64 << 20).max(phys_bytes / 200))
    }

    pub(crate) fn hidden_drop_for(&self, phys_bytes: u64) -> u64 {
        self.hidden_drop_bytes
            .unwrap_or_else(|| (512u64 << 20).max(phys_bytes / 50))
    }
}
