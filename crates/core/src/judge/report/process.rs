//! One process over a run: the figures the report folds out of its samples
//! ([`Stats`]), the verdict hindsight gives it ([`Stats::verdict`]) and the
//! evidence in words.

use std::collections::HashMap;

use super::{secs, ProcessReport};
use crate::probe::ProcessSample;
use crate::step::detect::{DetectorConfig, State};
use crate::util::units::{format_bytes, signed_diff};

/// What the report keeps of one process, sample by sample.
#[derive(Default)]
pub(super) struct Stats {
    name: String,
    cmdline: Option<String>,
    pub(super) watched: bool,
    first_ms: u64,
    last_ms: u64,
    swap_at_first: u64,
    pub(super) peak_fp: u64,
    peak_fp_ms: u64,
    min_free: f64,
    first_pageins: u64,
    last_pageins: u64,
    prev: Option<(u64, u64)>,
    peak_rate: f64,
    /// The samples it was seen in, as runs of indices (first, last) into
    /// the run's swap series, for "when it grew".
    seen: Vec<(usize, usize)>,
    /// System swap growth under each of its detector states.
    growth_by_state: HashMap<State, i64>,
    worst: State,
    hidden: u64,
    measured_swap: Option<u64>,
    compressed: Option<u64>,
    gpu: Option<u64>,
    outside: Option<u64>,
    /// (t, swap-ins in pages) of the last sample, for the rate.
    prev_swapins: Option<(u64, u64)>,
    peak_swapins_rate: Option<f64>,
    readable: bool,
    first_flag: Option<u64>,
    share_at_max_swap: f64,
    /// The swap (Linux `VmSwap`) that share counts beside the footprints.
    swap_in_share_at_max_swap: u64,
    max_swap: u64,
}

impl Stats {
    /// A process first seen at `t_ms` with system swap at `swap`.
    pub(super) fn new(p: &ProcessSample, t_ms: u64, swap: u64) -> Stats {
        Stats {
            name: p.name.to_string(),
            first_ms: t_ms,
            swap_at_first: swap,
            min_free: f64::INFINITY,
            first_pageins: p.pageins,
            ..Default::default()
        }
    }

    /// Its footprint, page-ins, names and when it was seen (`index` into
    /// the run's swap series).
    pub(super) fn note_sample(
        &mut self,
        p: &ProcessSample,
        t_ms: u64,
        free_pct: f64,
        index: usize,
    ) {
        self.last_ms = t_ms;
        if p.footprint_bytes > self.peak_fp {
            self.peak_fp = p.footprint_bytes;
            self.peak_fp_ms = t_ms;
        }
        self.min_free = self.min_free.min(free_pct);
        self.last_pageins = p.pageins;
        if let Some((t0, n0)) = self.prev {
            if t_ms > t0 {
                let rate =
                    p.pageins.saturating_sub(n0) as f64 / (t_ms.saturating_sub(t0) as f64 / 1000.0);
                self.peak_rate = self.peak_rate.max(rate);
            }
        }
        self.prev = Some((t_ms, p.pageins));
        match self.seen.last_mut() {
            Some((_, last)) if *last + 1 >= index => *last = index,
            _ => self.seen.push((index, index)),
        }
        if *self.name != *p.name {
            // Keep the latest name: a process that exec'd is known by what it became.
            self.name = p.name.to_string();
        }
        if p.cmdline.is_some() && self.cmdline.as_deref() != p.cmdline.as_deref() {
            self.cmdline = p.cmdline.as_deref().map(str::to_owned);
        }
    }

    /// The footprints' share when system swap was at its highest so far,
    /// and the swap of theirs (`footprints_swap`) it counts.
    pub(super) fn note_swap(&mut self, swap: u64, footprints_share: f64, footprints_swap: u64) {
        if swap >= self.max_swap {
            self.max_swap = swap;
            self.share_at_max_swap = footprints_share;
            self.swap_in_share_at_max_swap = footprints_swap;
        }
    }

    /// The peaks of what the OS's ledgers say of it: measured swap,
    /// compressed, GPU and outside-the-footprint memory, swap-ins.
    pub(super) fn note_ledgers(&mut self, p: &ProcessSample, t_ms: u64, page_size: u64) {
        if let Some(ms) = p.swap_bytes {
            self.measured_swap = Some(self.measured_swap.unwrap_or(0).max(ms));
        }
        let peak = |old: Option<u64>, new: Option<u64>| match (old, new) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.compressed = peak(self.compressed, p.compressed_bytes);
        self.gpu = peak(self.gpu, p.gpu_bytes);
        self.outside = peak(self.outside, p.outside_footprint_bytes);
        self.readable |= p.readable;
        if let Some(pages) = p.swapin_bytes.map(|b| b / page_size) {
            if let Some((t0, n0)) = self.prev_swapins {
                if t_ms > t0 {
                    let rate = pages.saturating_sub(n0) as f64 / ((t_ms - t0) as f64 / 1000.0);
                    self.peak_swapins_rate = Some(self.peak_swapins_rate.unwrap_or(0.0).max(rate));
                }
            }
            self.prev_swapins = Some((t_ms, pages));
        }
    }

    /// The detector's state of it at this sample, and the system swap
    /// growth (`swap_delta`) since the last sample, booked to that state.
    pub(super) fn note_state(
        &mut self,
        state: State,
        hidden_bytes: u64,
        swap_delta: i64,
        t_ms: u64,
    ) {
        let g = self.growth_by_state.entry(state).or_default();
        *g = g.saturating_add(swap_delta);
        self.worst = self.worst.max(state);
        self.hidden = self.hidden.max(hidden_bytes);
        if state != State::Fits && self.first_flag.is_none() {
            self.first_flag = Some(t_ms);
        }
    }

    /// System swap growth while it was seen (max − at first sight).
    fn swap_growth(&self) -> i64 {
        signed_diff(self.max_swap, self.swap_at_first)
    }

    /// The verdict hindsight gives it: the state under which most of the
    /// swap growth happened (false fit or overflow); else its worst such
    /// state; else, for the watched tree's largest member (`carries`) in a
    /// run whose swap grew by the tolerance while no tick looked like a
    /// climb, the swap verdict at the footprints' share when swap peaked,
    /// and in a run its cgroup's OOM killer ended (no swap absorbed it), the
    /// swap verdict at the footprints' peak share, as the run's; else hidden
    /// memory if it showed any; else fits.
    pub(super) fn verdict(&self, tolerance: u64, cfg: &DetectorConfig, carries: Carries) -> State {
        let grew_under = |s| self.growth_by_state.get(&s).copied().unwrap_or(0);
        let ff = grew_under(State::FalseFit);
        let of = grew_under(State::Overflow);
        if ff > 0 || of > 0 {
            if of > ff {
                State::Overflow
            } else {
                State::FalseFit
            }
        } else if self.worst == State::FalseFit || self.worst == State::Overflow {
            self.worst
        } else if let Some(share) = self.oom_share(tolerance, carries) {
            cfg.swap_verdict(share)
        } else if carries != Carries::Itself && self.swap_growth() >= signed_diff(tolerance, 0) {
            cfg.swap_verdict(self.share_at_max_swap)
        } else if self.worst == State::HiddenMemory {
            State::HiddenMemory
        } else {
            State::Fits
        }
    }

    /// The footprints' peak share of the limit, when the run's OOM killer
    /// is what this process answers for: it carries the tree of a run its
    /// cgroup's OOM killer ended, and swap did not grow by the tolerance
    /// (where it did, the swap's rule judges it).
    fn oom_share(&self, tolerance: u64, carries: Carries) -> Option<f64> {
        match carries {
            Carries::OomKill(share) if self.swap_growth() < signed_diff(tolerance, 0) => {
                Some(share)
            }
            _ => None,
        }
    }

    /// Its line in the report: figures, verdict and evidence. `swap` is the
    /// run's swap series.
    pub(super) fn report(
        &self,
        pid: u32,
        swap: &[(u64, u64)],
        memory: RunMemory,
        tolerance: u64,
        cfg: &DetectorConfig,
        carries: Carries,
    ) -> ProcessReport {
        let growth = self.swap_growth();
        let (from, to) = growth_span(swap, &self.seen, self.swap_at_first, growth);
        let verdict = self.verdict(tolerance, cfg, carries);
        let duration_s = (self.last_ms.saturating_sub(self.first_ms)) as f64 / 1000.0;
        let pageins_per_s = if duration_s > 0.0 {
            self.last_pageins.saturating_sub(self.first_pageins) as f64 / duration_s
        } else {
            0.0
        };
        ProcessReport {
            pid,
            name: self.name.clone(),
            cmdline: self.cmdline.clone(),
            verdict,
            watched: self.watched,
            first_seen_ms: self.first_ms,
            last_seen_ms: self.last_ms,
            peak_footprint_bytes: self.peak_fp,
            peak_footprint_at_ms: self.peak_fp_ms,
            swap_growth_bytes: growth,
            swap_growth_from_ms: from,
            swap_growth_to_ms: to,
            min_free_pct: if self.min_free.is_finite() {
                self.min_free
            } else {
                0.0
            },
            pageins_per_s,
            peak_pageins_per_s: self.peak_rate,
            hidden_bytes: self.hidden,
            measured_swap_peak_bytes: self.measured_swap,
            peak_swapins_per_s: self.peak_swapins_rate,
            peak_compressed_bytes: self.compressed,
            peak_gpu_bytes: self.gpu,
            peak_outside_footprint_bytes: self.outside,
            readable: self.readable,
            first_flag_ms: self.first_flag,
            evidence: self.evidence_words(verdict, (from, to), memory, tolerance, carries),
        }
    }

    /// The evidence for `verdict` in words; `span` is when swap grew.
    fn evidence_words(
        &self,
        verdict: State,
        span: (Option<u64>, Option<u64>),
        memory: RunMemory,
        tolerance: u64,
        carries: Carries,
    ) -> String {
        let growth = self.swap_growth();
        let phys = memory.bytes.max(1);
        // A cgroup's limit is said as one: "of 256 MiB" read as the
        // machine's memory beside the machine-wide swap it was judged by.
        let (of, all_of) = match memory.cgroup_limit {
            true => (
                format!("the cgroup's {} limit", format_bytes(phys as i64)),
                "its limit",
            ),
            false => (format_bytes(phys as i64), "memory"),
        };
        let peak = format!(
            "{} of {of} ({:.0} %)",
            format_bytes(self.peak_fp as i64),
            self.peak_fp as f64 / phys as f64 * 100.0
        );
        let when = match span {
            (Some(a), Some(b)) => format!(" between {} and {}", secs(a), secs(b)),
            _ => String::new(),
        };
        let measured = self
            .measured_swap
            .filter(|&m| m > 0)
            .map(|m| {
                format!(
                    "; measured swap of the process (VmSwap) peaked at {}",
                    format_bytes(m as i64)
                )
            })
            .unwrap_or_default()
            + &self
                .outside
                .filter(|&o| o > 0)
                .map(|o| {
                    format!(
                        "; it owned up to {} outside its footprint",
                        format_bytes(o as i64)
                    )
                })
                .unwrap_or_default()
            + &self
                .peak_swapins_rate
                .filter(|&r| r >= 1.0)
                .map(|r| format!("; swap-ins peaked at {r:.0} pages/s"))
                .unwrap_or_default();
        // On Linux the share counts each footprint's own swap (VmSwap),
        // which a footprint there leaves out: say so where it did.
        let together = match self.swap_in_share_at_max_swap {
            0 => "all footprints together".to_string(),
            s => format!(
                "all footprints with their {} of swap (VmSwap) together",
                format_bytes(s as i64)
            ),
        };
        match (verdict, self.oom_share(tolerance, carries)) {
            (State::FalseFit, Some(share)) => format!(
                "footprint peaked at {peak} when the cgroup's OOM killer ended the run; all footprints stayed at {:.0} % of its limit: false fit — the footprint says it fits, the OOM killer says it did not{measured}",
                share * 100.0
            ),
            (State::Overflow, Some(share)) => format!(
                "footprint reached {peak} and the cgroup's OOM killer ended the run; all footprints at {:.0} % of its limit: overflow — it did not fit, and the footprint shows it{measured}",
                share * 100.0
            ),
            (State::FalseFit, _) => format!(
                "footprint peaked at {peak} while swap grew {}{when}; when swap peaked {together} were {:.0} % of {all_of}: false fit — the footprint says it fits, swap says it does not{measured}",
                format_bytes(growth),
                self.share_at_max_swap * 100.0
            ),
            (State::Overflow, _) => format!(
                "footprint reached {peak} and swap grew {}{when}; when swap peaked {together} were {:.0} % of {all_of}: overflow — it did not fit, and the footprint shows it{measured}",
                format_bytes(growth),
                self.share_at_max_swap * 100.0
            ),
            (State::HiddenMemory, _) => format!(
                "footprint fell by {} without free memory rising to match, or memory was owned outside it: hidden memory — the memory is still held but not in the footprint (peak {peak}){measured}",
                format_bytes(self.hidden as i64)
            ),
            (State::Fits, _) => format!(
                "footprint peaked at {peak}; swap grew {} (tolerance {}): fits",
                format_bytes(growth),
                format_bytes(tolerance as i64)
            ),
        }
    }
}

/// The memory a run had, as its evidence names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RunMemory {
    /// The host's memory, or its cgroup's limit.
    pub bytes: u64,
    /// `bytes` is a cgroup's limit.
    pub cgroup_limit: bool,
}

/// What a process answers for beyond its own samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Carries {
    /// Its own figures only.
    Itself,
    /// The watched tree's largest member: the run's swap growth.
    Tree,
    /// The same, in a run its cgroup's OOM killer ended; with the readable
    /// footprints' peak share of the limit.
    OomKill(f64),
}

/// When swap went from 10 % to 90 % of its growth, over the samples a
/// process was `seen` in (runs of indices into the run's `swap` series).
fn growth_span(
    swap: &[(u64, u64)],
    seen: &[(usize, usize)],
    base: u64,
    growth: i64,
) -> (Option<u64>, Option<u64>) {
    if growth <= 0 {
        return (None, None);
    }
    let at = |share: f64| {
        let level = base as f64 + growth as f64 * share;
        seen.iter()
            .flat_map(|&(a, b)| swap.get(a..=b).unwrap_or_default())
            .find(|&&(_, s)| s as f64 >= level)
            .map(|&(t, _)| t)
    };
    (at(0.1), at(0.9))
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
