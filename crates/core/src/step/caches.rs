//! An allocator's cache, named: where a framework's counters show its cache
//! climbing while what its tensors hold stays flat, and swap grew, `report`
//! and the live session name the cache and the setting that bounds it. The counters are
//! the ones `swapsight.watch_mlx()` and `watch_torch()` write
//! (docs/python.md): MLX's `mlx.cache` beside `mlx.active` (its cache is
//! freed buffers it keeps for reuse, bounded by `mx.set_cache_limit`), and
//! PyTorch's driver figure beside its tensors' — MPS
//! `torch.mps.driver_allocated` − `current_allocated`, CUDA
//! `torch.cuda:N.reserved` − `allocated` — the caching allocator's hold.

use serde::Serialize;

use crate::util::units::format_bytes;

/// A cache smaller than this is no finding: allocators keep some.
pub const MIN_CACHE_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;

/// PyTorch devices followed at most (MPS and CUDA devices); more are not.
pub const MAX_DEVICES: usize = 16;

/// One allocator's cache that grew while its active memory did not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CacheFinding {
    /// "MLX", "MPS", "CUDA:0".
    pub allocator: String,
    /// How far the cache grew (its peak − its first value).
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

/// A figure's first value and peak.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    first: Option<f64>,
    peak: f64,
}

impl Span {
    fn note(&mut self, v: f64) {
        if self.first.is_none() {
            self.first = Some(v);
            self.peak = v;
        }
        self.peak = self.peak.max(v);
    }

    fn growth(&self) -> f64 {
        self.first.map_or(0.0, |f| self.peak - f)
    }
}

/// One allocator: its cache and what its tensors hold.
#[derive(Debug, Clone)]
struct Allocator {
    who: Who,
    cache: Span,
    active: Span,
    /// PyTorch: the tensors' latest value, which each driver point is read
    /// against (the watch writes both in one pass; a driver point before
    /// any tensors point is left out).
    active_latest: Option<f64>,
}

/// The caches of a run as its counters come, in time order: `report` folds
/// a trace's counters through it, the live session a recording's.
#[derive(Debug, Clone, Default)]
pub struct CacheFold {
    allocators: Vec<Allocator>,
}

/// Which allocator a counter is of: told apart without a string made for
/// each point (a recording's counters come up to 50 a second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Who {
    Mlx,
    Mps,
    Cuda(u16),
}

impl Who {
    /// "MLX", "MPS", "CUDA:0".
    fn name(self) -> String {
        match self {
            Who::Mlx => "MLX".into(),
            Who::Mps => "MPS".into(),
            Who::Cuda(dev) => format!("CUDA:{dev}"),
        }
    }
}

/// What a counter name says of an allocator: (allocator, is it the cache
/// side (`true`) or the tensors' side).
fn side(name: &str) -> Option<(Who, bool)> {
    match name {
        "mlx.cache" => Some((Who::Mlx, true)),
        "mlx.active" => Some((Who::Mlx, false)),
        "torch.mps.driver_allocated" => Some((Who::Mps, true)),
        "torch.mps.current_allocated" => Some((Who::Mps, false)),
        _ => {
            let rest = name.strip_prefix("torch.cuda:")?;
            let (dev, what) = rest.split_once('.')?;
            if dev.is_empty() || dev.len() > 3 || !dev.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let dev = Who::Cuda(dev.parse().ok()?);
            match what {
                "reserved" => Some((dev, true)),
                "allocated" => Some((dev, false)),
                _ => None,
            }
        }
    }
}

impl CacheFold {
    /// Takes one counter point.
    pub fn push(&mut self, name: &str, value: f64) {
        let Some((allocator, is_cache)) = side(name) else {
            return;
        };
        if !value.is_finite() {
            return;
        }
        let i = match self.allocators.iter().position(|a| a.who == allocator) {
            Some(i) => i,
            None if self.allocators.len() < MAX_DEVICES => {
                self.allocators.push(Allocator {
                    who: allocator,
                    cache: Span::default(),
                    active: Span::default(),
                    active_latest: None,
                });
                self.allocators.len() - 1
            }
            None => return,
        };
        let a = &mut self.allocators[i];
        let mlx = a.who == Who::Mlx;
        match (is_cache, mlx) {
            // MLX writes its cache as a figure of its own.
            (true, true) => a.cache.note(value),
            // PyTorch's cache is what the driver holds beyond the tensors.
            (true, false) => {
                if let Some(held) = a.active_latest {
                    a.cache.note((value - held).max(0.0));
                }
            }
            (false, _) => {
                a.active.note(value);
                a.active_latest = Some(value);
            }
        }
    }

    /// The caches to name, when swap grew (`swap_grew`); none else. A cache
    /// is named when it grew by [`MIN_CACHE_BYTES`] or more and what the
    /// tensors hold grew by less than half as much.
    pub fn findings(&self, swap_grew: bool) -> Vec<CacheFinding> {
        if !swap_grew {
            return Vec::new();
        }
        self.allocators
            .iter()
            .filter(|a| {
                let growth = a.cache.growth();
                growth >= MIN_CACHE_BYTES && a.active.growth() < growth / 2.0
            })
            .map(finding)
            .collect()
    }
}

fn finding(a: &Allocator) -> CacheFinding {
    let name = a.who.name();
    let (setting, words) = if a.who == Who::Mlx {
        let setting =
            "mx.set_cache_limit(…)  (e.g. mx.set_cache_limit(2 * 1024**3); 0 keeps no cache)"
                .to_string();
        let words = format!(
            "MLX cache grew {} while active stayed {} — {setting}",
            bytes(a.cache.growth()),
            bytes(a.active.peak)
        );
        (setting, words)
    } else {
        let setting = if a.who == Who::Mps {
            "torch.mps.empty_cache() or a lower PYTORCH_MPS_HIGH_WATERMARK_RATIO"
        } else {
            "torch.cuda.empty_cache() or PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        }
        .to_string();
        let words = format!(
            "{name} driver holds {} more than tensors (tensors at most {}) — {setting}",
            bytes(a.cache.peak),
            bytes(a.active.peak)
        );
        (setting, words)
    };
    CacheFinding {
        allocator: name,
        cache_growth_bytes: a.cache.growth(),
        cache_peak_bytes: a.cache.peak,
        active_peak_bytes: a.active.peak,
        setting,
        words,
    }
}

fn bytes(v: f64) -> String {
    // Counter values are within ±2^53 (the reader's bound).
    format_bytes(v as i64)
}

#[cfg(test)]
#[path = "caches_tests.rs"]
mod tests;
