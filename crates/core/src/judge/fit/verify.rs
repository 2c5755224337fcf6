//! The estimate held against a run (`fit -- CMD`, `fit --from TRACE`):
//! the need's Σ against the watched tree's peak footprint, and against the
//! framework's own peak where its counters give one (`mlx.peak`, which
//! `swapsight.watch_mlx()` writes from `mx.get_peak_memory()`); and, where
//! the run also said what its weights and its KV cache held (`mlx.weights`,
//! `mlx.kv`: `swapsight.mlx_sizes()`), the need line by line.

use serde::Serialize;

use super::plan::{NeedId, NeedLine};
use super::PastRun;

/// Counters that hold a framework's own peak, in bytes: the largest value
/// a run wrote is its peak.
pub(crate) const PEAK_COUNTERS: [(&str, &str); 1] = [("mlx.peak", "MLX's own peak (mlx.peak)")];

/// A framework's counters of what its weights and its KV cache held, and
/// the peak counter both are part of: the rest of the need is that peak
/// less the two.
pub(crate) struct LineCounters {
    pub weights: &'static str,
    pub kv: &'static str,
    pub peak: &'static str,
}

pub(crate) const LINE_COUNTERS: [LineCounters; 1] = [LineCounters {
    weights: "mlx.weights",
    kv: "mlx.kv",
    peak: "mlx.peak",
}];

/// Whether a trace's counter `name` is one the comparison reads: its
/// largest value is kept in [`PastRun::framework_peaks`].
pub(crate) fn compared(name: &str) -> bool {
    PEAK_COUNTERS.iter().any(|(n, _)| *n == name)
        || LINE_COUNTERS
            .iter()
            .any(|c| c.weights == name || c.kv == name)
}

/// The estimate against what a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Σ of the need's lines: the estimate of the run's peak.
    pub estimated_bytes: u64,
    /// Each figure the run measured, with the estimate's error against it.
    pub measured: Vec<Measured>,
    /// The need by part (weights, KV cache, the rest) against what the
    /// run's counters say each held; empty where the run wrote none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub by_line: Vec<LineError>,
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

/// One part of the need against what the run held of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineError {
    /// `weights`, `kv-cache` or `rest`.
    pub id: &'static str,
    /// As the text says it.
    pub name: &'static str,
    /// The need's lines it sums (the KV cache's kinds together: the
    /// framework's cache holds them all).
    pub lines: Vec<NeedId>,
    /// Σ of those lines as the need has them: past runs' ratio is the
    /// whole estimate's, no line's.
    pub estimated_bytes: u64,
    /// What the run held: the counter's largest value; for the rest, the
    /// peak less both.
    pub measured_bytes: u64,
    /// The counters it comes from (`mlx.weights`, `mlx.kv`,
    /// `mlx.peak − mlx.weights − mlx.kv`).
    pub measured_from: String,
    /// estimate − measured: negative where the estimate was short.
    pub error_bytes: i64,
    /// (estimate − measured) / measured × 100; `null` where the run held
    /// none of it.
    pub error_pct: Option<f64>,
}

/// estimate − measured, in bytes (clamped to i64) and in % of measured.
fn error(estimated: u64, measured: u64) -> (i64, Option<f64>) {
    let error = i128::from(estimated) - i128::from(measured);
    (
        crate::util::units::signed_diff(estimated, measured),
        (measured > 0).then(|| error as f64 / measured as f64 * 100.0),
    )
}

impl Measured {
    fn new(id: &str, name: &str, bytes: u64, estimated: u64) -> Measured {
        let (error_bytes, error_pct) = error(estimated, bytes);
        Measured {
            id: id.into(),
            name: name.into(),
            bytes,
            error_bytes,
            error_pct,
        }
    }
}

/// Which part of the need a line is, as a framework's counters split it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Weights,
    Kv,
    Rest,
}

fn part(id: NeedId) -> Part {
    match id {
        NeedId::Weights => Part::Weights,
        NeedId::KvCache
        | NeedId::KvCacheSliding
        | NeedId::KvCacheLatent
        | NeedId::RecurrentState => Part::Kv,
        NeedId::Runtime | NeedId::AttentionScores => Part::Rest,
    }
}

fn line_error(
    (id, name): (&'static str, &'static str),
    need: &[NeedLine],
    of: Part,
    measured: u64,
    from: String,
) -> LineError {
    let mine: Vec<&NeedLine> = need.iter().filter(|l| part(l.id) == of).collect();
    let estimated = crate::util::units::saturating_sum(mine.iter().map(|l| l.bytes));
    let (error_bytes, error_pct) = error(estimated, measured);
    LineError {
        id,
        name,
        lines: mine.iter().map(|l| l.id).collect(),
        estimated_bytes: estimated,
        measured_bytes: measured,
        measured_from: from,
        error_bytes,
        error_pct,
    }
}

/// The largest value `run` wrote of counter `name`.
fn counter(run: &PastRun, name: &str) -> Option<u64> {
    run.framework_peaks
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, b)| *b)
}

/// The need by part against the counters `run` wrote: weights and KV cache
/// where their counter is there, the rest where the peak is too.
fn by_line(need: &[NeedLine], run: &PastRun) -> Vec<LineError> {
    let mut out = Vec::new();
    for c in &LINE_COUNTERS {
        let parts = [
            (("weights", "weights"), Part::Weights, c.weights),
            (("kv-cache", "KV cache"), Part::Kv, c.kv),
        ];
        for (said, of, name) in parts {
            if let Some(held) = counter(run, name) {
                out.push(line_error(said, need, of, held, name.into()));
            }
        }
        if let Some(rest) = rest(c, run) {
            out.push(line_error(
                ("rest", "the rest"),
                need,
                Part::Rest,
                rest,
                format!("{} − {} − {}", c.peak, c.weights, c.kv),
            ));
        }
    }
    out
}

/// The peak less the weights and the KV cache; `None` where a counter is
/// missing or the two are more than the peak (written at other moments
/// than it, or a cache allocated ahead and never filled).
fn rest(c: &LineCounters, run: &PastRun) -> Option<u64> {
    let peak = counter(run, c.peak)?;
    peak.checked_sub(counter(run, c.weights)?)?
        .checked_sub(counter(run, c.kv)?)
}

/// Why the rest of the need was not compared though the run wrote all
/// three counters: the weights and the KV cache are more than the peak.
pub(crate) fn rest_unmeasured(run: &PastRun) -> Option<String> {
    LINE_COUNTERS.iter().find_map(|c| {
        let peak = counter(run, c.peak)?;
        let held = counter(run, c.weights)?.checked_add(counter(run, c.kv)?);
        if rest(c, run).is_some() {
            return None;
        }
        let held = held.map_or_else(|| "more than 2^64 bytes".into(), super::gb);
        Some(format!(
            "the rest of the need is not compared: {} + {} ({held}) is more than {} ({}): \
             counters written at other moments than the peak",
            c.weights,
            c.kv,
            c.peak,
            super::gb(peak)
        ))
    })
}

/// The estimate `estimated` (Σ of `need`, after any ratio of past runs)
/// against the peaks `run` measured, and `need`'s parts against what its
/// counters say each held.
pub fn compare(estimated: u64, need: &[NeedLine], run: &PastRun) -> Comparison {
    let mut measured = vec![Measured::new(
        "footprint",
        &format!("peak footprint of {}", run.of.words_short()),
        run.peak_footprint_bytes,
        estimated,
    )];
    for (id, name) in PEAK_COUNTERS {
        if let Some(bytes) = counter(run, id) {
            measured.push(Measured::new(id, name, bytes, estimated));
        }
    }
    Comparison {
        estimated_bytes: estimated,
        measured,
        by_line: by_line(need, run),
    }
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
