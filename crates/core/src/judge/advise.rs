//! The one setting that turns a silent slide into swap into a clean error,
//! for PyTorch on Apple Silicon (docs/background.md §4).
//!
//! The MPS allocator refuses an allocation past
//! `PYTORCH_MPS_HIGH_WATERMARK_RATIO × torch.mps.recommended_max_memory()`.
//! The default ratio, 1.7, puts that above physical memory, so a job that
//! does not fit swaps instead of raising "MPS backend out of memory". A
//! ratio that caps the pool below where the machine swaps makes it fail
//! fast. The low ratio (default 1.4) may not exceed the high one — setting
//! only the high ratio below 1.4 fails at the first MPS use with "invalid
//! low watermark ratio" — so both are given, equal (the source's 0.8/0.8
//! gave a clean error at 29.95 GiB with no swap).
//!
//! Where the machine swaps: physical memory less a reserve for macOS, other
//! apps and what the job holds outside the MPS pool. The default reserve,
//! 30 % of memory, is the source's: on the 48 GB Mac swap began once the
//! process passed 33.5 GiB (70 %). With a trace, what the run needed is its
//! peak watched footprint plus the growth of the memory no footprint
//! explains (where the GPU driver's share shows).

use serde::Serialize;

use crate::judge::fit::{mps_ratio, read_as, MPS_LOW_RATIO_ENV, MPS_RATIO_ENV};
use crate::record::trace::{Header, Trace, TraceSample};
use crate::util::units::signed_diff;

/// Default reserve, as a share of physical memory.
pub const DEFAULT_RESERVE_SHARE: f64 = 0.30;
/// `recommended_max_memory()` as a share of physical memory when not given:
/// 37.44 GiB of 48 GiB on the source's Mac (Metal's
/// `recommendedMaxWorkingSetSize`).
pub const RECOMMENDED_SHARE: f64 = 0.78;
/// The Python line that prints the exact figure.
pub const READ_RECOMMENDED: &str =
    "python3 -c 'import torch; print(torch.mps.recommended_max_memory())'";

const GIB: f64 = (1u64 << 30) as f64;

/// What the advice is computed from.
#[derive(Debug, Clone, Default)]
pub struct AdviceInput {
    /// `macos` or `linux` (the trace's host, or this machine).
    pub os: String,
    /// The host's name, for the words of an advice that does not apply.
    pub hostname: String,
    /// Physical memory.
    pub phys_bytes: u64,
    /// Memory kept back for the OS, other apps and what the job holds
    /// outside the MPS pool (`--reserve`); `None`: [`DEFAULT_RESERVE_SHARE`]
    /// of memory.
    pub reserve_bytes: Option<u64>,
    /// `torch.mps.recommended_max_memory()`, when known.
    pub recommended_max_bytes: Option<u64>,
    /// `recommended_max_bytes` was read from Metal on this Mac (the probe's
    /// `recommendedMaxWorkingSetSize`, the figure torch's call returns),
    /// not given by the user.
    pub recommended_read_from_metal: bool,
    /// `PYTORCH_MPS_HIGH_WATERMARK_RATIO` as this shell sets it, if it
    /// does: what the job would run with instead of the advice.
    pub high_ratio_set: Option<String>,
    /// `PYTORCH_MPS_LOW_WATERMARK_RATIO` as this shell sets it, if it does.
    pub low_ratio_set: Option<String>,
}

/// The run a trace recorded, as the advice judges it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunCheck {
    /// Peak of watched footprint + growth of unexplained memory.
    pub needed_bytes: u64,
    /// When the run first held more than the cap (from its start).
    pub over_cap_ms: Option<u64>,
    /// When swap first grew past the tolerance.
    pub swap_grew_ms: Option<u64>,
    /// The cap would have raised PyTorch's error before swap grew.
    pub stopped_before_swap: bool,
    pub(crate) words: String,
}

/// The advice.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Advice {
    /// `false`: not a Mac (and no `--recommended-max`): nothing to set.
    pub applies: bool,
    pub(crate) high_ratio: f64,
    pub(crate) low_ratio: f64,
    /// The most the MPS pool may hold under the ratio advised: the high
    /// ratio × `recommended_max_memory()`.
    pub cap_bytes: u64,
    pub(crate) limit_bytes: u64,
    pub(crate) recommended_max_bytes: u64,
    pub(crate) recommended_estimated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<RunCheck>,
    /// What PyTorch makes of the ratios this shell sets, where it sets
    /// one: read as PyTorch reads them (`strtod`), so "1.5x" is 1.5, a
    /// word is 0 (no limit), and a setting it refuses is said to be one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set_here: Option<String>,
    /// The whole advice in words: `export` lines first.
    pub text: String,
}

fn gib(b: u64) -> String {
    format!("{:.2} GiB", b as f64 / GIB)
}

/// Rounds down to two decimals, so that the cap stays at or below the limit.
fn floor2(x: f64) -> f64 {
    (x * 100.0).floor() / 100.0
}

/// Why `input` leaves no setting that does what its words say, if it does
/// not: a reserve of all the memory, or a `recommended_max_memory()` so
/// large that even the smallest ratio (0.01) lets the pool past where the
/// machine swaps (the ratio would have to be rounded *up*, and the cap in
/// the text would be above the machine's memory).
pub fn check_input(input: &AdviceInput) -> Result<(), String> {
    let phys = input.phys_bytes;
    if phys == 0 {
        return Ok(());
    }
    if let Some(reserve) = input.reserve_bytes {
        if reserve >= phys {
            return Err(format!(
                "--reserve {} is all of the machine's {} of memory: nothing is left for the job",
                gib(reserve),
                gib(phys)
            ));
        }
    }
    if let Some(rec) = input.recommended_max_bytes {
        if rec > phys {
            return Err(format!(
                "--recommended-max {} is more than the machine's {} of memory; \
                 torch.mps.recommended_max_memory() is below it (run {READ_RECOMMENDED})",
                gib(rec),
                gib(phys)
            ));
        }
    }
    let rec = input
        .recommended_max_bytes
        .unwrap_or(default_recommended(phys));
    let limit = phys
        - input
            .reserve_bytes
            .unwrap_or(default_reserve(phys))
            .min(phys);
    if (limit as f64) < 0.01 * rec as f64 {
        return Err(format!(
            "the reserve leaves {} for the job, under 1 % of recommended_max_memory() ({}): \
             no ratio (0.01 or more) caps the pool there",
            gib(limit),
            gib(rec)
        ));
    }
    Ok(())
}

fn default_reserve(phys: u64) -> u64 {
    (phys as f64 * DEFAULT_RESERVE_SHARE) as u64
}

fn default_recommended(phys: u64) -> u64 {
    (phys as f64 * RECOMMENDED_SHARE) as u64
}

/// The advice for `input`, with the run of `trace` checked when given.
/// `input` is one [`check_input`] accepts.
pub fn advise(input: &AdviceInput, trace: Option<&Trace>) -> Advice {
    let mut advice = advise_alone(input);
    if let (true, Some(t)) = (advice.applies, trace) {
        let run = check_run(t, advice.cap_bytes);
        advice.add_run(run);
    }
    advice
}

impl Advice {
    /// Adds the check of a recorded run (a [`RunCheck`] folded over a
    /// streamed trace, or [`check_run`]) to the advice and its words.
    pub fn add_run(&mut self, run: RunCheck) {
        self.text += &format!("\n{}\n", run.words);
        self.run = Some(run);
    }
}

/// The advice for `input`, without a run to check.
pub fn advise_alone(input: &AdviceInput) -> Advice {
    let not_applicable = input.os != "macos" && input.recommended_max_bytes.is_none();
    if not_applicable || input.phys_bytes == 0 {
        let on = if input.hostname.is_empty() {
            input.os.clone()
        } else {
            format!("{} ({})", input.hostname, input.os)
        };
        return Advice {
            applies: false,
            high_ratio: 0.0,
            low_ratio: 0.0,
            cap_bytes: 0,
            limit_bytes: 0,
            recommended_max_bytes: 0,
            recommended_estimated: false,
            run: None,
            set_here: None,
            text: format!(
                "no MPS watermark to set on {on}: PyTorch's MPS allocator runs on Apple Silicon Macs only (give --recommended-max to compute anyway)\n"
            ),
        };
    }
    let phys = input.phys_bytes;
    let reserve = input
        .reserve_bytes
        .unwrap_or(default_reserve(phys))
        .min(phys);
    let limit = phys - reserve;
    let estimated = input.recommended_max_bytes.is_none();
    let rec = input
        .recommended_max_bytes
        .unwrap_or(default_recommended(phys))
        .max(1);
    // The allocator takes ratios in (0, ...]; below 0.01 nothing would run.
    let high = floor2(limit as f64 / rec as f64).max(0.01);
    let low = high;
    let cap = (high * rec as f64) as u64;
    let mut text = format!(
        "export PYTORCH_MPS_HIGH_WATERMARK_RATIO={high:.2}\nexport PYTORCH_MPS_LOW_WATERMARK_RATIO={low:.2}\n\n"
    );
    let reserve_words = match input.reserve_bytes {
        Some(_) => "the reserve you gave".to_string(),
        None => format!(
            "a reserve of {:.0} % (the OS, other apps, and what the job holds outside the MPS pool; --reserve to change it)",
            DEFAULT_RESERVE_SHARE * 100.0
        ),
    };
    text += &format!(
        "Memory {} less {reserve_words}, {}, leaves {} the job may use before the machine swaps.\n",
        gib(phys),
        gib(reserve),
        gib(limit)
    );
    text += &if estimated {
        format!(
            "torch.mps.recommended_max_memory() is about {} here ({:.0} % of memory, as on the source's 48 GB Mac); for the exact figure run\n  {READ_RECOMMENDED}\nand pass it with --recommended-max.\n",
            gib(rec),
            RECOMMENDED_SHARE * 100.0
        )
    } else if input.recommended_read_from_metal {
        format!(
            "torch.mps.recommended_max_memory() is {} ({rec} bytes), read from Metal on this Mac (recommendedMaxWorkingSetSize, the figure it returns).\n",
            gib(rec)
        )
    } else {
        format!(
            "torch.mps.recommended_max_memory() is {} ({rec} bytes).\n",
            gib(rec)
        )
    };
    text += &format!(
        "High ratio {} / {} = {high:.2} (rounded down), so the MPS pool may hold at most {high:.2} × {} = {}; past that PyTorch raises \"MPS backend out of memory\" instead of swapping (the default 1.7 allows {}).\n",
        gib(limit),
        gib(rec),
        gib(rec),
        gib(cap),
        gib((1.7 * rec as f64) as u64)
    );
    text += &format!(
        "The low ratio may not exceed the high one (its default 1.4 would fail at the first MPS use), so it is {low:.2} too. Set both before the first tensor reaches mps.\n"
    );
    let set_here = set_here(input, rec, high);
    if let Some(words) = &set_here {
        text += &format!("\n{words}\n");
    }
    Advice {
        applies: true,
        high_ratio: high,
        low_ratio: low,
        cap_bytes: cap,
        limit_bytes: limit,
        recommended_max_bytes: rec,
        recommended_estimated: estimated,
        run: None,
        set_here,
        text,
    }
}

/// What PyTorch makes of the ratios this shell sets (`None` where it sets
/// neither), read as `swapsight fit` reads them ([`mps_ratio`]): a word
/// there would otherwise look like a setting and be no limit at all, and
/// a high ratio under the low one's default stops PyTorch before any cap.
fn set_here(input: &AdviceInput, rec: u64, advised: f64) -> Option<String> {
    let (high, low) = (
        input.high_ratio_set.as_deref(),
        input.low_ratio_set.as_deref(),
    );
    if high.is_none() && low.is_none() {
        return None;
    }
    let shown = |name: &str, raw: Option<&str>| {
        raw.map(|raw| format!("{name}='{}'", crate::util::text::clean(raw)))
    };
    let set: Vec<String> = [shown(MPS_RATIO_ENV, high), shown(MPS_LOW_RATIO_ENV, low)]
        .into_iter()
        .flatten()
        .collect();
    let said = set.join(" and ");
    let read = |v: f64| high.and_then(|raw| read_as(raw, v)).unwrap_or_default();
    Some(match mps_ratio(high, low) {
        Err(why) => format!("This shell sets {said}: {why}."),
        Ok(None) => format!(
            "This shell sets {said}{}: a high ratio of 0, no limit on the MPS pool, so a job that does not fit swaps instead of raising out of memory. The export lines above replace it.",
            read(0.0)
        ),
        Ok(Some((ratio, set))) => {
            let cap = (ratio * rec as f64) as u64;
            let unset = if set { "" } else { ", the high ratio unset (PyTorch's default)" };
            let against = if ratio > advised {
                format!("above the {advised:.2} advised: the pool may grow past where this machine swaps")
            } else {
                format!("at or below the {advised:.2} advised")
            };
            format!(
                "This shell sets {said}{}{unset}: PyTorch caps the MPS pool at {ratio} × {} = {}, {against}.",
                read(ratio),
                gib(rec),
                gib(cap)
            )
        }
    })
}

/// The advice a UI adds to the detail of a process flagged as a false fit
/// (or overflow) when it is a Python process on a Mac — the likely PyTorch
/// job the MPS cap is for; `None` otherwise.
pub fn for_flagged_process(
    name: &str,
    state: crate::step::detect::State,
    host: &crate::probe::HostInfo,
) -> Option<String> {
    use crate::step::detect::State;
    let python = name.to_ascii_lowercase().starts_with("python");
    if !python || !matches!(state, State::FalseFit | State::Overflow) || host.os != "macos" {
        return None;
    }
    let a = advise(
        &AdviceInput {
            os: host.os.clone(),
            hostname: host.hostname.clone(),
            phys_bytes: host.phys_bytes,
            ..AdviceInput::default()
        },
        None,
    );
    a.applies.then(|| {
        format!(
            "If this is PyTorch on MPS, cap its pool so that it fails with an out-of-memory error instead of swapping (swapsight advise):\n{}",
            a.text
        )
    })
}

/// Whether a cap of `cap` bytes would have stopped the run in `trace`
/// before its swap grew.
pub fn check_run(trace: &Trace, cap: u64) -> RunCheck {
    let mut check = RunChecker::new(trace.header(), cap);
    for s in &trace.samples {
        check.push(s);
    }
    check.finish()
}

/// [`check_run`] as a fold over a run's samples, for a streamed trace.
#[derive(Debug, Clone)]
pub struct RunChecker {
    cap: u64,
    watching: crate::record::trace::Watching,
    tolerance: u64,
    /// Time, swap and unexplained memory at the first sample.
    first: Option<(u64, u64, i64)>,
    needed: u64,
    over_cap: Option<u64>,
    swap_grew: Option<u64>,
}

impl RunChecker {
    /// A checker of the run `header` opens, against the pool's `cap` in
    /// bytes.
    pub fn new(header: &Header, cap: u64) -> Self {
        let phys = header.host.phys_bytes.max(1);
        RunChecker {
            cap,
            watching: header.watching(),
            tolerance: header.detector.swap_tolerance_for(phys),
            first: None,
            needed: 0,
            over_cap: None,
            swap_grew: None,
        }
    }

    /// Takes the next sample.
    pub fn push(&mut self, s: &TraceSample) {
        let gap = crate::step::detect::footprint_gap(&s.sample.system, &s.sample.processes)
            .unexplained_bytes;
        let swap = s.sample.system.swap_used_bytes;
        let (t0, first_swap, gap0) = *self.first.get_or_insert((s.sample.t_ms, swap, gap));
        let held = crate::judge::compare::watched_footprint(s, self.watching)
            .saturating_add(u64::try_from(gap.saturating_sub(gap0)).unwrap_or(0));
        self.needed = self.needed.max(held);
        let t = s.sample.t_ms.saturating_sub(t0);
        if held > self.cap && self.over_cap.is_none() {
            self.over_cap = Some(t);
        }
        if self.swap_grew.is_none()
            && signed_diff(swap, first_swap) >= signed_diff(self.tolerance, 0)
        {
            self.swap_grew = Some(t);
        }
    }

    /// The check, in figures and words.
    pub fn finish(self) -> RunCheck {
        let RunChecker {
            needed,
            over_cap,
            swap_grew,
            ..
        } = self;
        words(needed, over_cap, swap_grew)
    }
}

fn words(needed: u64, over_cap: Option<u64>, swap_grew: Option<u64>) -> RunCheck {
    let secs = |ms: u64| crate::util::units::format_duration(std::time::Duration::from_millis(ms));
    let stopped = matches!((over_cap, swap_grew), (Some(a), Some(b)) if a <= b);
    let words = match (over_cap, swap_grew) {
        (Some(a), Some(b)) if a <= b => format!(
            "The recorded run needed {} (peak footprint plus memory no footprint explains): this cap would have stopped it at {} with PyTorch's out-of-memory error, before swap grew at {}.",
            gib(needed), secs(a), secs(b)
        ),
        (Some(a), Some(b)) => format!(
            "The recorded run needed {}, but swap grew at {}, before it held more than the cap (at {}): this cap would not have stopped it in time; a larger --reserve lowers it.",
            gib(needed), secs(b), secs(a)
        ),
        (None, Some(b)) => format!(
            "The recorded run needed {} and never held more than the cap, yet swap grew at {}: the machine swapped for other reasons (other apps, a smaller machine than this reserve assumes); a larger --reserve lowers the cap.",
            gib(needed), secs(b)
        ),
        (Some(a), None) => format!(
            "The recorded run needed {} without swapping: this cap would have stopped at {} a run that fit; a smaller --reserve raises it.",
            gib(needed), secs(a)
        ),
        (None, None) => format!(
            "The recorded run needed {} and did not swap: this cap leaves it room.",
            gib(needed)
        ),
    };
    RunCheck {
        needed_bytes: needed,
        over_cap_ms: over_cap,
        swap_grew_ms: swap_grew,
        stopped_before_swap: stopped,
        words,
    }
}

#[cfg(test)]
#[path = "advise_tests.rs"]
mod tests;
