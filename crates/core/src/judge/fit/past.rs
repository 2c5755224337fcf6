//! A past run of the same pipeline, as `fit --from` takes it: the peak
//! footprint of its watched tree, read from its trace as it streams.

use std::io::{BufRead, Seek};

use serde::Serialize;

use crate::record::trace::{Record, TraceError, TraceReader, Watching};
use crate::step::detect::State;
use crate::util::text::clean;

/// What a past run held at its peak, and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PastRun {
    /// The trace, as given.
    pub path: String,
    /// Peak of the run's footprint: Σ of the watched tree, or the largest
    /// process in a recording of the whole machine (`of`).
    pub peak_footprint_bytes: u64,
    /// When it peaked, from the run's start.
    pub peak_at_ms: u64,
    /// `tree`: the watched process tree; `largest-process`: the trace
    /// watched no tree (a recording of the machine).
    pub of: PeakOf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) command: Option<String>,
    pub(crate) hostname: String,
    pub(crate) os: String,
    /// The memory it was judged against (its host's, or its cgroup's limit).
    pub phys_bytes: u64,
    /// That run's own verdict (`swapsight report`).
    pub verdict: State,
    pub(crate) swap_growth_bytes: i64,
    /// Samples in the trace (0: nothing to go by).
    pub samples: usize,
    /// The largest value of each framework counter the comparison reads
    /// that the run wrote: its peak (`mlx.peak`), what its weights and its
    /// KV cache held (`mlx.weights`, `mlx.kv`); in bytes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub framework_peaks: Vec<(String, u64)>,
}

/// Whose footprint the peak is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeakOf {
    /// The watched process tree's.
    Tree,
    /// The largest process's: the trace watched no tree.
    LargestProcess,
}

impl PeakOf {
    pub(crate) fn words(self) -> &'static str {
        match self {
            PeakOf::Tree => "its watched process tree",
            PeakOf::LargestProcess => {
                "its largest process (the trace watched no command: a recording of the machine)"
            }
        }
    }

    pub(crate) fn words_short(self) -> &'static str {
        match self {
            PeakOf::Tree => "the watched process tree",
            PeakOf::LargestProcess => "the largest process",
        }
    }
}

/// Reads the trace `reader` holds in one pass (a second only when its
/// marks are out of order, as [`report_stream`](crate::judge::report::report_stream)
/// needs): its report, with the peak of its run's footprint folded out of
/// the same read. A trace with no sample gives `samples: 0`; the caller
/// says so.
pub fn past_run<R: BufRead + Seek>(
    reader: &mut TraceReader<R>,
    path: &str,
) -> Result<PastRun, TraceError> {
    let header = reader.header().clone();
    let watching = header.watching();
    let mut peak = (0u64, 0u64);
    let mut t0 = None;
    let mut framework_peaks: Vec<(String, u64)> = Vec::new();
    let report = crate::judge::report::report_stream(reader, None, |record| match record {
        Record::Sample(s) => {
            let start = *t0.get_or_insert(s.sample.t_ms);
            let fp = crate::judge::compare::watched_footprint(s, watching);
            if fp > peak.0 {
                peak = (fp, s.sample.t_ms.saturating_sub(start));
            }
        }
        Record::Counter(c) => framework_peak(&mut framework_peaks, c),
        _ => {}
    })?;
    Ok(PastRun {
        path: clean(path).into_owned(),
        peak_footprint_bytes: peak.0,
        peak_at_ms: peak.1,
        of: match watching {
            Watching::Tree => PeakOf::Tree,
            Watching::Machine => PeakOf::LargestProcess,
        },
        command: header
            .command
            .as_ref()
            .map(|c| clean(&c.join(" ")).into_owned()),
        hostname: clean(&header.host.hostname).into_owned(),
        os: clean(&header.host.os).into_owned(),
        phys_bytes: report.phys_bytes,
        verdict: report.verdict,
        swap_growth_bytes: report.swap_growth_bytes,
        samples: report.samples,
        framework_peaks,
    })
}

/// Keeps the largest value of a framework counter the comparison reads
/// ([`compared`](super::verify::compared)), in bytes.
fn framework_peak(peaks: &mut Vec<(String, u64)>, c: &crate::record::trace::Counter) {
    if !super::verify::compared(&c.name)
        || c.unit != "bytes"
        || !c.value.is_finite()
        || c.value < 0.0
    {
        return;
    }
    // A float of bytes, as the counter line carries it; saturating.
    let v = c.value as u64;
    match peaks.iter_mut().find(|(n, _)| *n == c.name) {
        Some((_, p)) => *p = (*p).max(v),
        None => peaks.push((c.name.clone(), v)),
    }
}
