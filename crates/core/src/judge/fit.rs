//! Will it fit, before loading: what a model needs (its weights, a size, or
//! a past run's peak) held against each bound the machine puts on memory,
//! and the answer — fits, fits only by swapping, or does not fit.
//!
//! The decision is pure ([`answer`] over [`Figures`], the figures as the
//! probe gives them), so the bounds of a Mac are tested on Linux:
//!
//! | bound | over it | figure |
//! |---|---|---|
//! | physical memory | does not fit | `hw.memsize`, Linux `MemTotal` |
//! | the cgroup's memory limit (Linux) | does not fit | [`Scope::limit_bytes`] of this process |
//! | free memory now | fits only by swapping | memory less what is in use ([`free_now`]) |
//! | free in the cgroup now | fits only by swapping | the limit less the cgroup's usage |
//! | GPU wired limit (macOS) | fits only by swapping | [`GpuMemory::wired_limit_bytes`](crate::probe::GpuMemory::wired_limit_bytes) |
//! | Metal's recommended working set (macOS) | fits only by swapping | `recommendedMaxWorkingSetSize` |
//! | PyTorch's MPS high watermark (macOS) | PyTorch raises out of memory | `PYTORCH_MPS_HIGH_WATERMARK_RATIO` × the recommended working set |
//! | MLX's memory limit (macOS) | MLX waits, then allocates past it | MLX's default: the lesser of 1.5 × the recommended working set and 0.95 × memory |
//!
//! The two framework bounds are shown with their own answer and do not set
//! the verdict: swapsight cannot tell which framework will load the model.
//! Where a setting would lift a bound the model is over, [`settings`] gives
//! it with its risk. The bounds are in `fit/bounds.rs`, the settings in
//! `fit/settings.rs`, the weights are counted in [`weights`], a past run's
//! peak is read in [`past_run`], and the words are in `fit/text.rs`.

use serde::Serialize;

use crate::probe::{Scope, SystemSample};
use crate::util::units::format_bytes;

mod bounds;
mod history;
mod kv;
mod llama_cpp;
mod mlx;
pub mod model;
mod need;
mod past;
pub mod plan;
mod settings;
mod text;
mod text_plan;
mod verify;
pub mod weights;

pub(crate) use bounds::read_as;
pub use bounds::{bounds, mps_ratio, strtod};
pub use history::{default_history_path, History, Learnt, Run as HistoryRun, HISTORY_FILE};
pub use kv::KvDtype;
pub use need::Ask;
pub use past::{past_run, PastRun, PeakOf};
pub use plan::{Context, Input, Largest, LargestAt, NeedId, NeedLine, Runtime, PLAN_VERSION};
pub use settings::{
    margin, settings, wired_keep, wired_limit_mb_for, wired_sysctl, WIRED_KEEP_DIVISOR,
    WIRED_KEEP_MIN,
};
pub use verify::{compare, Comparison, LineError, Measured};
pub use weights::{count_weights, LeftOut, WalkLimits, WeightFile, Weights, WeightsError};

/// The environment variable PyTorch's MPS allocator reads its high
/// watermark ratio from.
pub const MPS_RATIO_ENV: &str = "PYTORCH_MPS_HIGH_WATERMARK_RATIO";
/// PyTorch's default high watermark ratio (`default_high_watermark_ratio`,
/// `aten/src/ATen/mps/MPSAllocator.h`).
pub const MPS_DEFAULT_HIGH_RATIO: f64 = 1.7;
/// The largest ratio PyTorch takes (`default_high_watermark_upper_bound`).
pub const MPS_MAX_RATIO: f64 = 2.0;
/// PyTorch's default low watermark ratio on unified memory, which may not
/// exceed the high one.
pub const MPS_DEFAULT_LOW_RATIO: f64 = 1.4;
/// The environment variable PyTorch's MPS allocator reads its low
/// watermark ratio from.
pub const MPS_LOW_RATIO_ENV: &str = "PYTORCH_MPS_LOW_WATERMARK_RATIO";
/// MLX's default memory limit, × Metal's recommended working set
/// (`mx.set_memory_limit`: "When metal is available the memory limit
/// defaults to 1.5 times the maximum recommended working set size")…
pub const MLX_LIMIT_SHARE: f64 = 1.5;
/// …and at most this share of memory: `block_limit_ = min(1.5 ×
/// max_rec_size, 0.95 × memsize)` (`mlx/backend/metal/allocator.cpp`).
pub const MLX_LIMIT_RAM_SHARE: f64 = 0.95;
const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// The answer. Ordered: the worst is the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Below every bound.
    Fits,
    /// Within physical memory (and the cgroup's limit), but above free
    /// memory now or a Mac's GPU bounds.
    FitsOnlyBySwapping,
    /// Above physical memory, or above the cgroup's limit.
    DoesNotFit,
}

impl Verdict {
    /// `swapsight fit`'s exit code: 0, 1 or 2.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Fits => 0,
            Verdict::FitsOnlyBySwapping => 1,
            Verdict::DoesNotFit => 2,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Verdict::Fits => "fits",
            Verdict::FitsOnlyBySwapping => "fits only by swapping",
            Verdict::DoesNotFit => "does not fit",
        }
    }
}

/// The machine's figures the answer is judged on, as the probe gives them.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// `macos` or `linux` ([`HostInfo::os`](crate::probe::HostInfo::os)).
    pub os: String,
    /// A live sample of the system.
    pub system: SystemSample,
    /// The memory cgroup holding this process, with a limit below the
    /// host's memory ([`Probe::scope`](crate::probe::Probe::scope)).
    pub scope: Option<Scope>,
    /// Why the scope could not be read, when it could not.
    pub scope_unread: Option<String>,
    /// `PYTORCH_MPS_HIGH_WATERMARK_RATIO` as set, if it is.
    pub mps_high_watermark_ratio: Option<String>,
    /// The macOS version (`14.5`), where read: the wired-limit setting's
    /// name changed at macOS 14.
    pub macos_version: Option<String>,
    /// `PYTORCH_MPS_LOW_WATERMARK_RATIO` as set, if it is: a high ratio
    /// under the low one makes PyTorch refuse to start.
    pub mps_low_watermark_ratio: Option<String>,
}

/// What the model is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Model {
    /// A size given on the command line (`8G`).
    Size {
        /// The size in bytes.
        bytes: u64,
        /// The size as given.
        given: String,
    },
    /// A model's files, counted.
    Files(Weights),
}

/// Which bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BoundId {
    /// Physical memory (macOS `hw.memsize`, Linux `MemTotal`).
    Memory,
    /// The limit of the memory cgroup holding `swapsight fit` (Linux).
    CgroupLimit,
    /// Memory a new job could have now without swapping.
    FreeNow,
    /// The cgroup's limit less its usage (Linux).
    CgroupFreeNow,
    /// `iogpu.wired_limit_mb` where set, else Metal's recommended working
    /// set (macOS).
    GpuWiredLimit,
    /// Metal's `recommendedMaxWorkingSetSize` of the default device (macOS).
    RecommendedWorkingSet,
    /// `PYTORCH_MPS_HIGH_WATERMARK_RATIO` × the recommended working set
    /// (macOS, PyTorch only).
    MpsHighWatermark,
    /// MLX's default limit, the lesser of [`MLX_LIMIT_SHARE`] × the
    /// recommended working set and [`MLX_LIMIT_RAM_SHARE`] × memory
    /// (macOS, MLX only).
    MlxMemoryLimit,
}

impl BoundId {
    pub(crate) fn name(self) -> &'static str {
        match self {
            BoundId::Memory => "physical memory",
            BoundId::CgroupLimit => "cgroup memory limit",
            BoundId::FreeNow => "free memory now",
            BoundId::CgroupFreeNow => "free in the cgroup now",
            BoundId::GpuWiredLimit => "GPU wired limit",
            BoundId::RecommendedWorkingSet => "Metal's recommended working set",
            BoundId::MpsHighWatermark => "PyTorch MPS high watermark",
            BoundId::MlxMemoryLimit => "MLX memory limit",
        }
    }
}

/// What happens to a model over a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum IfOver {
    /// The model does not fit.
    DoesNotFit,
    /// The model fits only by swapping.
    Swaps,
    /// The framework raises an out-of-memory error.
    Raises,
}

/// The framework a bound applies to; `None`: every job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Framework {
    /// PyTorch on Metal (MPS).
    PytorchMps,
    /// Apple's MLX.
    Mlx,
}

impl Framework {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Framework::PytorchMps => "PyTorch on MPS",
            Framework::Mlx => "MLX",
        }
    }
}

/// One bound, with its figure and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    pub(crate) id: BoundId,
    pub(crate) name: &'static str,
    pub(crate) bytes: u64,
    pub(crate) source: String,
    /// The need is above it.
    pub over: bool,
    pub(crate) if_over: IfOver,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) framework: Option<Framework>,
}

/// A bound that does not apply here, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub(crate) id: BoundId,
    pub(crate) name: &'static str,
    pub(crate) why: String,
}

/// A setting that would lift a bound the model is over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// The bounds it lifts.
    pub lifts: Vec<BoundId>,
    /// What to run or set, as typed.
    pub line: String,
    pub(crate) effect: String,
    pub(crate) risk: String,
}

/// The answer, with everything it stands on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Answer {
    /// The plan's version ([`PLAN_VERSION`]).
    pub version: u32,
    /// Fits, fits only by swapping, or does not fit.
    pub verdict: Verdict,
    /// 0 fits, 1 fits only by swapping, 2 does not fit.
    pub exit_code: u8,
    /// The answer in one line.
    pub summary: String,
    /// What is held against the bounds: the model's bytes, or the past
    /// run's peak where it is larger.
    pub needed_bytes: u64,
    /// The model's own bytes (its weights as counted).
    pub model_bytes: u64,
    /// The model as it was given: a folder or file counted, or a size.
    pub model: Model,
    /// The context judged and the choices the need rests on; `null` where
    /// the model's files say nothing of its layers (a size given).
    pub context: Option<Context>,
    /// What the model's need is made of, line by line; Σ is the model's
    /// need (`needed_bytes` unless a past run's peak is larger).
    pub need: Vec<NeedLine>,
    /// The largest context under each bound; `null` where the need does
    /// not grow with the context (no description of the model's layers).
    pub largest_context: Option<Largest>,
    /// A past run of the pipeline, where one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub past_run: Option<PastRun>,
    /// What past runs of this runtime and architecture taught, where it
    /// was applied: the estimate is Σ of `need` × its ratio.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Learnt>,
    /// The estimate against the run's measured peaks, where
    /// a run was given (`--from`, or a command run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
    /// Each bound the need is held against.
    pub bounds: Vec<Bound>,
    /// The bounds this machine does not have, and why.
    pub skipped: Vec<Skipped>,
    /// The settings that would make it fit, where one would.
    pub settings: Vec<Setting>,
    /// What else to know about the answer.
    pub notes: Vec<String>,
}

/// What the need is: the model's bytes, or a past run's peak where it is
/// larger. Not their sum: a past run of the same pipeline already held the
/// weights it loaded (in its footprint where it copied them into memory).
pub fn needed(model_bytes: u64, past: Option<&PastRun>) -> u64 {
    past.map_or(model_bytes, |p| model_bytes.max(p.peak_footprint_bytes))
}

/// Memory a new job could have now without swapping: memory less what is
/// in use — Linux `MemAvailable`; macOS memory less Activity Monitor's
/// "Memory Used" (app + wired + compressed), so free pages plus cached
/// files, which macOS drops before it swaps.
pub fn free_now(sys: &SystemSample) -> u64 {
    sys.base_bytes().saturating_sub(sys.used_bytes())
}

fn gb(b: u64) -> String {
    format_bytes(i64::try_from(b).unwrap_or(i64::MAX))
}

fn is_macos(os: &str) -> bool {
    os == "macos"
}

/// The verdict: the worst of what the bounds the need is over say, leaving
/// out the framework bounds.
pub fn verdict(bounds: &[Bound]) -> Verdict {
    bounds
        .iter()
        .filter(|b| b.over && b.framework.is_none())
        .map(|b| match b.if_over {
            IfOver::DoesNotFit => Verdict::DoesNotFit,
            IfOver::Swaps | IfOver::Raises => Verdict::FitsOnlyBySwapping,
        })
        .max()
        .unwrap_or(Verdict::Fits)
}

/// The answer for `model` (and a past run of the same pipeline) on `f`,
/// on its weights alone.
pub fn answer(model: Model, past: Option<PastRun>, f: &Figures) -> Answer {
    plan(model, &Described::default(), past, f, &Ask::default())
}

/// What the model's files say besides their size ([`model::describe`],
/// [`model::sum_safetensors`]).
#[derive(Debug, Clone, Default)]
pub struct Described {
    /// The description of its layers, where one was read.
    pub description: Option<model::Description>,
    /// Σ of its safetensors headers and how many, where every one read.
    pub tensors: Option<(model::safetensors::TensorSum, usize)>,
    /// What could not be read, and what that leaves out.
    pub notes: Vec<String>,
}

impl Described {
    /// What `model`'s own files at `path` say: its layers (config.json or
    /// a GGUF's metadata) and its tensors (the safetensors headers); a size
    /// says nothing. The command line and the MCP tool read it alike.
    pub fn of(model: &Model, path: &std::path::Path) -> Described {
        let Model::Files(w) = model else {
            return Described::default();
        };
        let (description, mut notes) = model::describe(path, w);
        let tensors = match model::sum_safetensors(path, w) {
            Ok(t) => t,
            Err(why) => {
                notes.push(format!(
                    "{why}: the weights are counted by their files' length"
                ));
                None
            }
        };
        Described {
            description,
            tensors,
            notes,
        }
    }
}

/// The answer for `model` as its files describe it, at the context and
/// with the choices `ask` makes (each unmade one by default), and a past
/// run of the same pipeline, on `f`.
pub fn plan(
    model: Model,
    described: &Described,
    past: Option<PastRun>,
    f: &Figures,
    ask: &Ask,
) -> Answer {
    let d = described.description.as_ref();
    let sizer = need::Sizer::new(&model, d, described.tensors, ask, &f.os);
    let context = sizer.context(ask.context);
    let source = if context.asked {
        "--context"
    } else {
        "default: a short context (--context to change)"
    };
    let lines = sizer.lines(context.tokens, source);
    let model_bytes = lines.first().map_or(0, |l| l.bytes);
    let own = crate::util::units::saturating_sum(lines.iter().map(|l| l.bytes));
    let learnt = match (&ask.history, d.and_then(|d| d.architecture.as_ref())) {
        (Some(h), Some(a)) => h.learnt(context.runtime, &a.value),
        _ => None,
    };
    // Past runs' ratio, on the whole estimate: it is no one line's.
    let own = learnt
        .as_ref()
        .map_or(own, |l| (own as f64 * l.ratio) as u64);
    let need = needed(own, past.as_ref());
    let (bounds, skipped) = bounds(f, need);
    let verdict = verdict(&bounds);
    let (settings, mut notes) = settings(need, f, &bounds);
    notes.splice(0..0, described.notes.iter().cloned());
    let largest = d.map(|_| sizer.largest(&bounds));
    match (d, sizer.model_max()) {
        (None, _) if ask.context.is_some() => notes.push(
            "--context: nothing describes the model's layers (no config.json or GGUF metadata): judged on its weights alone".into(),
        ),
        (Some(_), Some((max, from))) if context.tokens > max => notes.push(format!(
            "{} tokens is past the model's own maximum, {} ({from})",
            kv::thousands(context.tokens),
            kv::thousands(max)
        )),
        _ => {}
    }
    if let Some(p) = &past {
        if p.peak_footprint_bytes == 0 {
            notes.push(format!(
                "the past run's peak footprint is 0 ({} samples): judged on the model alone",
                p.samples
            ));
        } else if p.os != f.os {
            notes.push(format!(
                "the past run was on {}, this is {}: footprints are counted differently (docs/fit.md)",
                p.os, f.os
            ));
        }
    }
    if let Some(l) = &learnt {
        notes.push(format!("estimate {}", l.note));
    }
    if context.runtime == plan::Runtime::LlamaCpp {
        notes.extend(d.and_then(|d| sizer.llama_cpp_scores_note(d, context.tokens)));
    }
    let comparison = past.as_ref().map(|p| verify::compare(own, &lines, p));
    notes.extend(past.as_ref().and_then(verify::rest_unmeasured));
    let tokens = d.map(|_| context.tokens);
    let summary = text::summary(verdict, need, tokens, &bounds);
    Answer {
        version: PLAN_VERSION,
        verdict,
        exit_code: verdict.exit_code(),
        summary,
        needed_bytes: need,
        model_bytes,
        model,
        context: d.map(|_| context),
        need: lines,
        largest_context: largest,
        past_run: past,
        history: learnt,
        comparison,
        bounds,
        skipped,
        settings,
        notes,
    }
}

#[cfg(test)]
#[path = "fit_tests.rs"]
mod tests;
