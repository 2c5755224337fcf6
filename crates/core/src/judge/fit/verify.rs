//! The estimate held against a run (`fit -- CMD`, `fit --from TRACE`):
//! the need's Σ against the watched tree's peak footprint, and against the
//! framework's own peak where its counters give one (`mlx.peak`, which
//! `swapsight.watch_mlx()` writes from `mx.get_peak_memory()`).

use serde::Serialize;

use super::PastRun;

/// Counters that hold a framework's own peak, in bytes: the largest value
/// a run wrote is its peak.
pub(crate) const PEAK_COUNTERS: [(&str, &str); 1] = [("mlx.peak", "MLX's own peak (mlx.peak)")];

/// The estimate against what a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Σ of the need's lines: the estimate of the run's peak.
    pub estimated_bytes: u64,
    /// Each figure the run measured, with the estimate's error against it.
    pub measured: Vec<Measured>,
}

/// One measured peak and the estimate's error against it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// `footprint` (the watched tree's peak footprint) or the counter's
    /// name (`mlx.peak`).
    pub id: String,
    /// What it is, in words.
    pub name: String,
    /// The measured peak.
    pub bytes: u64,
    /// estimate − measured: negative where the estimate was short.
    pub error_bytes: i64,
    /// (estimate − measured) / measured × 100; `null` where nothing was
    /// measured (0 bytes).
    pub error_pct: Option<f64>,
}

impl Measured {
    fn new(id: &str, name: &str, bytes: u64, estimated: u64) -> Measured {
        let error = i128::from(estimated) - i128::from(bytes);
        Measured {
            id: id.into(),
            name: name.into(),
            bytes,
            error_bytes: i64::try_from(error).unwrap_or(if error < 0 {
                i64::MIN
            } else {
                i64::MAX
            }),
            error_pct: (bytes > 0).then(|| error as f64 / bytes as f64 * 100.0),
        }
    }
}

/// The estimate `estimated` against the peaks `run` measured.
pub fn compare(estimated: u64, run: &PastRun) -> Comparison {
    let mut measured = vec![Measured::new(
        "footprint",
        &format!("peak footprint of {}", run.of.words_short()),
        run.peak_footprint_bytes,
        estimated,
    )];
    for (id, name) in PEAK_COUNTERS {
        if let Some((_, bytes)) = run.framework_peaks.iter().find(|(n, _)| n == id) {
            measured.push(Measured::new(id, name, *bytes, estimated));
        }
    }
    Comparison {
        estimated_bytes: estimated,
        measured,
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
