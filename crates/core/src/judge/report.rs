//! The offline verdict on a recorded run: fits, overflow, false fit or hidden
//! memory per process, with the evidence in words.
//!
//! It replays the trace through the same [`Detector`](crate::step::detect::Detector) the live shells use,
//! then adds what only hindsight gives: a watched process whose run saw swap
//! grow beyond the tolerance is judged on the whole run even when no tick
//! looked like a climb (early in a swap storm pages go out and nothing pages
//! in yet). When a process went through several states, the verdict is the
//! state under which most of the swap growth happened.

use serde::Serialize;

use std::io::{BufRead, Seek};

use crate::record::trace::{Record, Trace, TraceError, TraceReader};
use crate::step::detect::{DetectorConfig, FootprintGap, State};
use crate::step::forecast::Outcome;
use crate::step::pressure::PressureSummary;
use crate::util::units::{format_bytes, format_duration};
pub use fold::{Finished, ReportFold, SecondPass};

pub mod by_phase;
mod fold;
pub use crate::record::counters;
pub use crate::step::caches;
mod judge;
mod process;
pub mod scope;
mod swap_off;
mod text;
pub use crate::step::written;

pub use judge::RunJudge;
#[cfg(test)]
use judge::{run_verdict, shown};
use scope::ScopeSummary;
pub use swap_off::SwapOff;

/// One process's verdict and figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProcessReport {
    /// Its pid.
    pub pid: u32,
    /// Its name as the trace shows it (a script by its file, `python -m`'s module).
    pub name: String,
    /// The process's command line (capped; see `probe::naming`), the last
    /// one the trace gave; absent when the trace has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// Its verdict over the run: the state most of the swap growth it was
    /// blamed for happened under.
    pub verdict: State,
    /// In the watched tree.
    pub watched: bool,
    /// When it was first and last seen, ms from the run's start.
    pub first_seen_ms: u64,
    /// See [`ProcessReport::first_seen_ms`].
    pub last_seen_ms: u64,
    /// Its largest footprint, and when.
    pub peak_footprint_bytes: u64,
    /// See [`ProcessReport::peak_footprint_bytes`].
    pub peak_footprint_at_ms: u64,
    /// System swap growth while the process was seen (max − at first sight).
    pub swap_growth_bytes: i64,
    /// When that growth happened: from 10 % to 90 % of it.
    pub swap_growth_from_ms: Option<u64>,
    /// See [`ProcessReport::swap_growth_from_ms`].
    pub swap_growth_to_ms: Option<u64>,
    /// The lowest free memory, in %, while it was seen.
    pub min_free_pct: f64,
    /// Page-ins per second from its first sample to its last (Linux major
    /// faults, macOS file page-ins), and the highest between two samples.
    pub pageins_per_s: f64,
    /// See [`ProcessReport::pageins_per_s`].
    pub peak_pageins_per_s: f64,
    /// Largest footprint drop not matched by free memory.
    pub hidden_bytes: u64,
    /// Measured swap of the process (Linux `VmSwap`), peak.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_swap_peak_bytes: Option<u64>,
    /// Peak swap-ins per second in pages (macOS `ledger_swapins`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_swapins_per_s: Option<f64>,
    /// Peak of the process's compressed memory (macOS, in RAM or swapped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_compressed_bytes: Option<u64>,
    /// Peak GPU memory (macOS "graphics" ledger tag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_gpu_bytes: Option<u64>,
    /// Peak memory owned outside the footprint (macOS `*_nofootprint` tags).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_outside_footprint_bytes: Option<u64>,
    /// `false` when the OS denied the process's figures at every sample.
    pub readable: bool,
    /// When the detector first raised a non-fits state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_flag_ms: Option<u64>,
    /// The evidence for the verdict, in words.
    pub evidence: String,
}

/// The verdict on a whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The run's verdict: its worst process's, or where swap grew (or the
    /// OOM killer ended the run) with no process to explain it, what the
    /// footprints' peak share of memory says.
    pub verdict: State,
    /// The verdict in one line: the process it is about, or what swap did.
    pub summary: String,
    /// From the first sample to the last.
    pub duration_ms: u64,
    /// Samples read.
    pub samples: usize,
    /// The memory the run had: the host's, or its cgroup's limit.
    pub phys_bytes: u64,
    /// Swap's growth over the run (its peak − its first value).
    pub swap_growth_bytes: i64,
    /// The growth the detector tolerates for this memory.
    pub swap_tolerance_bytes: u64,
    /// Why swap could not grow in this run, where it could not: a swap
    /// budget could not be broken, nor a false fit show as swap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_off: Option<SwapOff>,
    /// The lowest free memory of the run, in %.
    pub min_free_pct: f64,
    /// The recorded command, when the trace names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The memory cgroup the run was judged against (its limit is
    /// `phys_bytes`, its swap the swap); absent: the host.
    /// The run moved between cgroups: the worst of them
    /// ([`scope::worst`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<ScopeSummary>,
    /// Each cgroup the run was in, with its own figures, in the order it
    /// entered them (at most [`scope::MAX_SCOPES`]); empty when it was in
    /// one or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<ScopeSummary>,
    /// The processes the report lists: the watched ones with a footprint
    /// (or the five largest when none was watched) and every one not judged
    /// `fits`; watched first, then by verdict, then by peak footprint.
    pub processes: Vec<ProcessReport>,
    /// Memory not explained by footprints, at the first sample and at its
    /// peak, and how much of used memory the readable footprints covered.
    pub footprints: FootprintsSummary,
    /// Memory pressure over the run; absent when no sample carried any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<PressureSummary>,
    /// Swap written over the run (SSD wear); absent when no sample carried
    /// the counter (older traces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_written: Option<crate::step::written::SwapWritten>,
    /// Each limit whose forecast fired or that was reached: when the
    /// forecast first fired, its estimate then and when the limit really
    /// came (the forecaster replayed over the samples).
    pub forecasts: Vec<Outcome>,
    /// One row per phase when the trace has marks ([`by_phase`]).
    pub phases: Vec<by_phase::PhaseRow>,
    /// Peak and last value of each counter the run wrote ([`counters`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<counters::CounterRow>,
    /// Allocator caches that grew while their tensors did not, as swap
    /// grew, each with the setting that bounds it ([`caches`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<caches::CacheFinding>,
    /// The first lines the reader skipped, in words.
    pub problems: Vec<String>,
    /// How many lines the reader skipped in all.
    pub skipped_lines: usize,
    /// The trace's last line was cut off (a killed recorder).
    pub truncated_last_line: bool,
}

/// The system figure "memory not explained by footprints" over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FootprintsSummary {
    /// Used memory − Σ readable footprints, at the first sample.
    pub unexplained_first_bytes: i64,
    /// The same, at its peak.
    pub unexplained_peak_bytes: i64,
    /// Its growth over the run (peak − first).
    pub unexplained_growth_bytes: i64,
    /// Lowest share of used memory the readable footprints covered.
    pub min_coverage: f64,
    /// Most processes listed without figures in one sample.
    pub max_unreadable: u32,
    /// Peak of the readable processes' memory outside their footprints.
    pub outside_footprint_peak_bytes: u64,
    /// Peak of the readable processes' GPU memory.
    pub gpu_peak_bytes: u64,
    /// macOS: the figures at the sample where the memory no footprint
    /// explains peaked, with the GPU's in-use memory beside them: "GPU in
    /// use 31.2 GiB · footprints 18.5 GiB · not explained 12.9 GiB". Absent
    /// where the OS gave no GPU figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_at_peak: Option<GpuAtPeak>,
}

/// The GPU beside the footprints at the sample where the memory footprints
/// do not explain peaked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct GpuAtPeak {
    /// When, ms from the run's start.
    pub t_ms: u64,
    /// The GPU's in-use system memory then.
    pub in_use_bytes: u64,
    /// Σ readable footprints then.
    pub footprints_bytes: u64,
    /// Memory not explained by footprints then.
    pub unexplained_bytes: i64,
    /// How much of it the GPU held outside the footprints
    /// ([`FootprintGap::held_by_gpu`]).
    pub held_by_gpu_bytes: u64,
}

impl GpuAtPeak {
    /// Whether the GPU's memory outside the footprints covers most (¾) of
    /// what they do not explain: the evidence names the GPU.
    pub fn gpu_explains(&self) -> bool {
        self.unexplained_bytes > 0
            && self.held_by_gpu_bytes as f64 >= 0.75 * self.unexplained_bytes as f64
    }

    /// "GPU in use 31.2 GiB · footprints 18.5 GiB · not explained 12.9 GiB"
    /// and, where the GPU covers it, what it holds.
    pub fn to_words(&self) -> String {
        let b = |v: u64| format_bytes(i64::try_from(v).unwrap_or(i64::MAX));
        let mut line = format!(
            "GPU in use {} · footprints {} · not explained {}",
            b(self.in_use_bytes),
            b(self.footprints_bytes),
            format_bytes(self.unexplained_bytes)
        );
        if self.gpu_explains() {
            line.push_str(&format!(
                ": {} of it held by the GPU outside footprints",
                b(self.held_by_gpu_bytes)
            ));
        }
        line
    }
}

/// Builds the report. `cfg` overrides the detector settings the trace was
/// recorded with.
pub fn report(trace: &Trace, cfg: Option<DetectorConfig>) -> Report {
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    let mut fold = ReportFold::spans(trace.header(), cfg, &trace.marks, last_ms);
    trace.samples.iter().for_each(|s| fold.push_sample(s));
    trace.marks.iter().for_each(|m| fold.note_mark(m.t_ms));
    trace.events.iter().for_each(|e| fold.push_event(e));
    trace.counters.iter().for_each(|c| fold.push_counter(c));
    // The spans were known first: never a second pass.
    fold.finish(&trace.notes())
        .or_second_pass(trace.samples.iter().cloned())
}

/// The report with its phase rows, and the counters over the run and over
/// each phase.
fn with_counters(
    report: Report,
    mut phases: Vec<by_phase::PhaseRow>,
    log: &counters::CounterLog,
) -> Report {
    by_phase::attach_counters(&mut phases, log);
    let swap_grew = report.swap_growth_bytes > 0
        && report.swap_growth_bytes.unsigned_abs() >= report.swap_tolerance_bytes;
    Report {
        phases,
        counters: log.run(),
        caches: log.fold_caches().findings(swap_grew),
        ..report
    }
}

/// The report of a trace read as it streams: one pass over the file, with
/// the per-phase table folded as the marks come in (a recording writes each
/// after the samples up to its time); a second pass over the same lines only
/// when a mark is out of that order (the phases' spans are then known once
/// every mark is). Holds per-process and per-phase figures and the run's
/// swap series (16 bytes a sample), never the samples. `each` sees every
/// record of the first pass, for callers that fold more out of the same
/// read (`compare`'s row, a chart's ranges).
pub fn report_stream<R: BufRead + Seek>(
    reader: &mut TraceReader<R>,
    cfg: Option<DetectorConfig>,
    mut each: impl FnMut(&Record),
) -> Result<Report, TraceError> {
    let mut fold = ReportFold::streaming(reader.header(), cfg);
    while let Some(record) = reader.next_record()? {
        each(&record);
        fold.push(record);
    }
    let mut pass = match fold.finish(reader.notes()) {
        Finished::Report(report) => return Ok(report),
        Finished::SecondPass(pass) => pass,
    };
    reader.rewind()?;
    while let Some(record) = reader.next_record()? {
        if let Record::Sample(s) = record {
            pass.push_owned(s);
        }
    }
    Ok(pass.finish())
}

impl FootprintsSummary {
    pub(super) fn starting_at(gap: &FootprintGap) -> Self {
        FootprintsSummary {
            unexplained_first_bytes: gap.unexplained_bytes,
            unexplained_peak_bytes: gap.unexplained_bytes,
            min_coverage: gap.coverage,
            ..FootprintsSummary::default()
        }
    }

    pub(super) fn note(&mut self, gap: &FootprintGap, t_ms: u64) {
        let new_peak = gap.unexplained_bytes >= self.unexplained_peak_bytes;
        if let (Some(in_use), Some(held)) = (gap.gpu_in_use_bytes, gap.held_by_gpu()) {
            if new_peak || self.gpu_at_peak.is_none() {
                self.gpu_at_peak = Some(GpuAtPeak {
                    t_ms,
                    in_use_bytes: in_use,
                    footprints_bytes: gap.footprints_bytes,
                    unexplained_bytes: gap.unexplained_bytes,
                    held_by_gpu_bytes: held,
                });
            }
        }
        self.unexplained_peak_bytes = self.unexplained_peak_bytes.max(gap.unexplained_bytes);
        self.min_coverage = self.min_coverage.min(gap.coverage);
        self.max_unreadable = self.max_unreadable.max(gap.unreadable);
        self.outside_footprint_peak_bytes = self
            .outside_footprint_peak_bytes
            .max(gap.outside_footprint_bytes);
        self.gpu_peak_bytes = self.gpu_peak_bytes.max(gap.gpu_bytes);
    }
}

fn secs(ms: u64) -> String {
    format_duration(std::time::Duration::from_millis(ms))
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
