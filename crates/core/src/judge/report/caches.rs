//! An allocator's cache, named: where a framework's counters show its cache
//! climbing while what its tensors hold stays flat, and swap grew, the
//! report names the cache and the setting that bounds it. The counters are
//! the ones `swapsight.watch_mlx()` and `watch_torch()` write
//! (docs/python.md): MLX's `mlx.cache` beside `mlx.active` (its cache is
//! freed buffers it keeps for reuse, bounded by `mx.set_cache_limit`), and
//! PyTorch's driver figure beside its tensors' — MPS
//! `torch.mps.driver_allocated` − `current_allocated`, CUDA
//! `torch.cuda:N.reserved` − `allocated` — the caching allocator's hold.

use serde::Serialize;

use crate::counters::CounterLog;
use crate::units::format_bytes;

/// A cache smaller than this is no finding: allocators keep some.
pub const MIN_CACHE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// One allocator's cache that grew while its active memory did not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheFinding {
    /// "MLX", "MPS", "CUDA:0".
    pub allocator: String,
    /// How far the cache grew over the run (its peak − its first value).
    pub cache_growth_bytes: f64,
    /// The cache at its peak.
    pub cache_peak_bytes: f64,
    /// What the tensors (MLX: arrays) held at most meanwhile.
    pub active_peak_bytes: f64,
    /// The setting that bounds the cache, to paste.
    pub setting: String,
    /// The finding in words.
    pub words: String,
}

/// The caches to name in a run whose swap grew (`swap_grew`); none else.
pub fn named(log: &CounterLog, swap_grew: bool) -> Vec<CacheFinding> {
    if !swap_grew {
        return Vec::new();
    }
    let mut found = Vec::new();
    // MLX writes its cache as a counter of its own.
    let cache: Vec<(u64, f64)> = log.series("mlx.cache").collect();
    let active: Vec<(u64, f64)> = log.series("mlx.active").collect();
    if let Some(f) = judge("MLX", &cache, &active) {
        let setting =
            "mx.set_cache_limit(…)  (e.g. mx.set_cache_limit(2 * 1024**3); 0 keeps no cache)"
                .to_string();
        found.push(CacheFinding {
            words: format!(
                "MLX cache grew {} while active stayed {} — {setting}",
                bytes(f.cache_growth_bytes),
                bytes(f.active_peak_bytes)
            ),
            setting,
            ..f
        });
    }
    // PyTorch: what the driver holds beyond the tensors, per device.
    let names: Vec<String> = log.names().map(str::to_owned).collect();
    for name in &names {
        let (allocator, tensors, setting) = if name == "torch.mps.driver_allocated" {
            (
                "MPS".to_string(),
                "torch.mps.current_allocated".to_string(),
                "torch.mps.empty_cache() or a lower PYTORCH_MPS_HIGH_WATERMARK_RATIO".to_string(),
            )
        } else if let Some(dev) = name
            .strip_prefix("torch.cuda:")
            .and_then(|r| r.strip_suffix(".reserved"))
        {
            (
                format!("CUDA:{dev}"),
                format!("torch.cuda:{dev}.allocated"),
                "torch.cuda.empty_cache() or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
                    .to_string(),
            )
        } else {
            continue;
        };
        let driver: Vec<(u64, f64)> = log.series(name).collect();
        let held: Vec<(u64, f64)> = log.series(&tensors).collect();
        let cache = difference(&driver, &held);
        if let Some(f) = judge(&allocator, &cache, &held) {
            found.push(CacheFinding {
                words: format!(
                    "{allocator} driver holds {} more than tensors (tensors at most {}) — {setting}",
                    bytes(f.cache_peak_bytes),
                    bytes(f.active_peak_bytes)
                ),
                setting,
                ..f
            });
        }
    }
    found
}

/// The cache's growth against the active figure's: a finding when the
/// cache grew by [`MIN_CACHE_BYTES`] or more and the active figure grew by
/// less than half as much.
fn judge(allocator: &str, cache: &[(u64, f64)], active: &[(u64, f64)]) -> Option<CacheFinding> {
    let first = cache.first()?.1;
    let peak = cache.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let growth = peak - first;
    let active_first = active.first().map_or(0.0, |p| p.1);
    let active_peak = active.iter().map(|p| p.1).fold(active_first, f64::max);
    let active_growth = active_peak - active_first;
    (growth >= MIN_CACHE_BYTES && active_growth < growth / 2.0).then(|| CacheFinding {
        allocator: allocator.to_string(),
        cache_growth_bytes: growth,
        cache_peak_bytes: peak,
        active_peak_bytes: active_peak,
        setting: String::new(),
        words: String::new(),
    })
}

/// `a − b` at each point of `a`, against `b`'s latest point at or before
/// it (the watch writes both in one pass; a point of `a` before any of `b`
/// is left out).
fn difference(a: &[(u64, f64)], b: &[(u64, f64)]) -> Vec<(u64, f64)> {
    let mut out = Vec::with_capacity(a.len());
    let mut j = 0;
    let mut latest: Option<f64> = None;
    for &(t, v) in a {
        while j < b.len() && b[j].0 <= t {
            latest = Some(b[j].1);
            j += 1;
        }
        if let Some(held) = latest {
            out.push((t, (v - held).max(0.0)));
        }
    }
    out
}

fn bytes(v: f64) -> String {
    // Counter values are within ±2^53 (the reader's bound).
    format_bytes(v as i64)
}

#[cfg(test)]
#[path = "caches_tests.rs"]
mod tests;
