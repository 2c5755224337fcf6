//! The false-fit detector: samples in, per-process states and evidence out.
//!
//! It is pure — no clock, no I/O — so the live shells, `report` and the tests
//! all run the same code over the same samples. It uses the strongest
//! per-process swap evidence each platform gives, and works without it:
//! macOS swap-ins (`ledger_swapins`) and growth of the process's compressed
//! memory; Linux major faults and growth of `VmSwap`; without either (another
//! user's process, an old macOS, or figures withheld) page-ins, the watched
//! tree and unmatched footprint drops. The Linux real-swap tests run it both
//! ways against `VmSwap` ground truth.
//!
//! The model (thresholds in [`DetectorConfig`], documented in
//! `docs/detector.md`):
//! - **swap climbing**: system swap grew by at least the tolerance over the
//!   window *and* kept growing at the minimum rate over the last
//!   `sustain_ms` — one burst of page-outs is not a climb.
//! - **whose swap**: while swap climbs, a process is blamed when it swaps in
//!   (macOS swap-ins, else page-ins: Linux major faults), when its own
//!   swapped memory grew along with everything it owns (Linux `VmSwap`,
//!   macOS compressed bytes — a process whose pages were merely pushed out
//!   owns no more than before), when it owns memory outside its footprint
//!   (macOS `*_nofootprint` ledger tags), when its footprint grows, when its
//!   footprint just fell with no matching rise in free memory, or when it is
//!   the largest member of the watched tree. A big idle process is not, and a
//!   process whose figures the OS denied (`readable: false`) never is.
//! - **overflow** when the footprints of all readable processes reach
//!   `overflow_share` of physical memory (Activity Monitor would show it);
//!   **false fit** when they leave clear room. A footprint counts with the
//!   process's own swap where the OS keeps that outside it (Linux `VmSwap`;
//!   a macOS footprint holds its compressed memory already). Unreadable processes count 0,
//!   so the share is a lower bound; [`FootprintGap`] says how much of used
//!   memory the readable footprints cover.
//! - **hidden memory**: a footprint fell by at least the drop threshold within
//!   `hidden_window_ms` while free memory rose by less than
//!   `hidden_free_share` of the drop, or the process owns at least that much
//!   memory outside its footprint.
//! - A state is raised after it held for `raise_ms` and cleared after the
//!   process looked fine for `clear_ms`: no flag flaps tick to tick.

use std::collections::{HashSet, VecDeque};

use rustc_hash::FxHashMap as HashMap;

use serde::{Deserialize, Serialize};

use crate::probe::{ProcessSample, Sample};
use crate::util::units::signed_diff;

mod blame;
mod config;
pub use config::DetectorConfig;
mod episode;
mod evidence;
pub use evidence::Evidence;

mod gap;
mod window;
use blame::Blame;
use episode::{debounce, Track};
pub use gap::{footprint_gap, judged, FootprintGap, Judged};
pub use window::Activity;
use window::{activity, hidden_bytes, swap_window, Hidden, SwapWindow, SysPoint};

/// A process's memory state. Ordered by severity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Swap did not climb while it ran, or it is not to blame.
    #[default]
    Fits,
    /// Its footprint fell without free memory rising: memory held out of sight.
    HiddenMemory,
    /// Swap climbed and the footprints explain it.
    Overflow,
    /// Swap climbed while the footprints left clear room: the hidden case.
    FalseFit,
}

impl State {
    /// The name a trace and the API use: `fits`, `hidden-memory`,
    /// `overflow` or `false-fit`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Fits => "fits",
            State::HiddenMemory => "hidden-memory",
            State::Overflow => "overflow",
            State::FalseFit => "false-fit",
        }
    }

    /// Words for a title or notification.
    pub fn label(self) -> &'static str {
        match self {
            State::Fits => "fits",
            State::HiddenMemory => "hidden memory",
            State::Overflow => "overflow",
            State::FalseFit => "false fit",
        }
    }

    /// Every state, least severe first (the order of `Ord`).
    pub const ALL: [State; 4] = [
        State::Fits,
        State::HiddenMemory,
        State::Overflow,
        State::FalseFit,
    ];

    /// The state [`State::as_str`] names `s`; `None` for any other word.
    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A raised or cleared state: one line in a trace, one notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    /// When, ms since the start.
    pub t_ms: u64,
    /// The process.
    pub pid: u32,
    /// Its name, as in [`ProcessSample::name`](crate::probe::ProcessSample::name).
    pub name: String,
    /// The new state.
    pub state: State,
    /// The state before.
    pub previous: State,
    /// The figures behind it.
    pub evidence: Evidence,
    /// `evidence.describe(state)`, kept so a reader needs no detector.
    pub message: String,
}

/// The detector's current view of one process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// The process.
    pub pid: u32,
    pub(crate) name: String,
    /// Debounced state.
    pub state: State,
    /// Worst state since the baseline.
    pub worst: State,
    pub(crate) evidence: Evidence,
    /// Since when `state` holds (ms on the sample clock).
    pub since_ms: u64,
}

/// System-wide view at the last tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemView {
    pub(crate) swap_climbing: bool,
    pub(crate) swap_growth_window_bytes: i64,
    /// Swap in use now less at the baseline (monitor start or reset); the
    /// scope's where a limit binds.
    pub swap_growth_bytes: i64,
    pub(crate) swap_tolerance_bytes: u64,
    /// Readable footprints, with their own swap where the OS keeps it
    /// outside them ([`FootprintGap::held_bytes`]), over physical memory: a
    /// lower bound.
    pub footprints_share: f64,
    pub(crate) worst: State,
    /// Used memory against the footprints that explain it.
    #[serde(default)]
    pub gap: FootprintGap,
    /// Growth of `gap.unexplained_bytes` over the window: a false fit is
    /// this gap growing while swap climbs.
    #[serde(default)]
    pub unexplained_growth_window_bytes: i64,
    /// Swap written since the baseline (monitor start or reset), the
    /// scope's where the kernel counts it per cgroup; absent where the OS
    /// gives no counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_written_bytes: Option<u64>,
}

/// The detector. Feed it every sample in order with [`Detector::update`].
#[derive(Debug)]
pub struct Detector {
    cfg: DetectorConfig,
    sys: VecDeque<SysPoint>,
    procs: HashMap<u32, Track>,
    baseline_swap: Option<u64>,
    /// Swap written since the baseline.
    written: crate::step::written::WrittenFold,
    view: SystemView,
    tick: u64,
    /// The scope the history was taken in (`None`: the host).
    scope: Option<crate::probe::Scope>,
}

impl Detector {
    pub(crate) fn new(cfg: DetectorConfig) -> Self {
        Detector {
            cfg,
            sys: VecDeque::new(),
            procs: HashMap::default(),
            baseline_swap: None,
            written: Default::default(),
            view: SystemView::default(),
            tick: 0,
            scope: None,
        }
    }

    /// The settings it runs with.
    pub fn config(&self) -> &DetectorConfig {
        &self.cfg
    }

    /// Forget swap growth and worst states so far; the next sample is the
    /// new baseline.
    pub fn reset_baseline(&mut self) {
        self.baseline_swap = None;
        self.written = Default::default();
        for t in self.procs.values_mut() {
            t.worst = t.state;
        }
    }

    pub(crate) fn system(&self) -> SystemView {
        self.view
    }

    /// Current assessments, one per live process, in no order.
    pub fn assessments(&self) -> impl Iterator<Item = Assessment> + '_ {
        self.procs.iter().map(|(&pid, t)| t.assessment(pid))
    }

    /// Assessments of the processes not in the `fits` state now or earlier
    /// since the baseline, in no order. Only these are cloned: most
    /// processes fit, and a tick should not copy every name.
    pub fn flagged(&self) -> impl Iterator<Item = Assessment> + '_ {
        self.procs
            .iter()
            .filter(|(_, t)| t.state != State::Fits || t.worst != State::Fits)
            .map(|(&pid, t)| t.assessment(pid))
    }

    /// The assessment of `pid`; `None` for a pid it does not track.
    pub fn assessment(&self, pid: u32) -> Option<Assessment> {
        self.procs.get(&pid).map(|t| t.assessment(pid))
    }

    /// Every live process's activity over the window, in no order.
    pub fn activity(&self) -> impl Iterator<Item = Activity> + '_ {
        self.procs.values().map(|t| t.activity)
    }

    /// Every live process's latest evidence (figures over the window).
    pub fn evidence(&self) -> impl Iterator<Item = (u32, &Evidence)> + '_ {
        self.procs.iter().map(|(&pid, t)| (pid, &t.evidence))
    }

    /// Debounced state and evidence of one process, without cloning.
    pub fn state_of(&self, pid: u32) -> Option<(State, &Evidence)> {
        self.procs.get(&pid).map(|t| (t.state, &t.evidence))
    }

    /// Takes one sample (and the pids of the watched tree), returns the
    /// states raised or cleared at this tick.
    pub fn update(&mut self, sample: &Sample, watched: &HashSet<u32>) -> Vec<Flag> {
        self.tick += 1;
        let tick = self.observe_system(sample, watched);
        let mut flags = Vec::new();
        for p in &sample.processes {
            let is_watched = watched.contains(&p.pid);
            if let Some(flag) = self.assess(p, is_watched, &tick) {
                flags.push(flag);
            }
        }
        let now_tick = self.tick;
        self.procs.retain(|_, t| t.seen_tick == now_tick);
        let worst = self
            .procs
            .values()
            .map(|t| t.state)
            .max()
            .unwrap_or_default();
        self.view = tick.view(worst);
        flags
    }

    /// How long a history the windows need.
    fn keep_ms(&self) -> u64 {
        self.cfg.window_ms.max(self.cfg.hidden_window_ms)
    }

    /// Takes the tick's system figures into the history and reads what they
    /// say for every process: the swap-growth window, the footprint gap, the
    /// footprints' share and the verdict it gives swap that grew.
    fn observe_system(&mut self, sample: &Sample, watched: &HashSet<u32>) -> TickFigures {
        let now = sample.t_ms;
        self.enter_scope(sample.scope.as_ref());
        let Judged { system, gap } =
            judged(sample, &|pid| watched.contains(&pid), !watched.is_empty());
        let sys = &system;
        let phys = sys.phys_bytes.max(1);
        let keep_ms = self.keep_ms();
        let baseline = *self.baseline_swap.get_or_insert(sys.swap_used_bytes);
        self.written
            .push(now, &sample.system, sample.scope.as_ref());
        self.sys.push_back(SysPoint {
            t_ms: now,
            swap_used: sys.swap_used_bytes,
            free_bytes: sys.free_bytes(),
            unexplained: gap.unexplained_bytes,
            anon: sys.anon_bytes,
            footprints: gap.footprints_bytes,
            gpu_in_use: gap.gpu_in_use_bytes,
        });
        while self
            .sys
            .front()
            .is_some_and(|p| now.saturating_sub(p.t_ms) > keep_ms)
        {
            self.sys.pop_front();
        }
        let swap = swap_window(&self.sys, now, self.cfg.swap_tolerance_for(phys), &self.cfg);
        // Unreadable processes count 0: a lower bound. Own swap counts
        // where a footprint leaves it out (Linux VmSwap).
        let footprints_share = gap.held_bytes as f64 / phys as f64;
        TickFigures {
            now,
            phys_bytes: phys,
            page_size: if sys.page_size > 0 {
                sys.page_size
            } else {
                4096
            },
            free_pct: sys.free_pct,
            swap,
            swap_growth_bytes: signed_diff(sys.swap_used_bytes, baseline),
            gap,
            footprints_share,
            swap_verdict: self.cfg.swap_verdict(footprints_share),
            hidden_drop_bytes: self.cfg.hidden_drop_for(phys),
            watched_top: watched_top(sample, watched),
            scoped: sample.scope.is_some() && !watched.is_empty(),
            swap_written_bytes: self.written.finish().map(|w| w.bytes),
        }
    }

    /// A run that enters another scope (its command joined a cgroup, or
    /// left it) starts its system history again: the scope's swap and free
    /// memory are not the host's, and a window across the change would
    /// compare one with the other.
    fn enter_scope(&mut self, scope: Option<&crate::probe::Scope>) {
        let same = match (&self.scope, scope) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same_cgroup(b),
            _ => false,
        };
        if !same {
            self.sys.clear();
            self.baseline_swap = None;
            self.written = Default::default();
            self.scope = scope.cloned();
        }
    }

    /// One process at this tick: its history, evidence and instant state,
    /// debounced; the flag when its state changed.
    fn assess(&mut self, p: &ProcessSample, is_watched: bool, tick: &TickFigures) -> Option<Flag> {
        let keep_ms = self.keep_ms();
        let cfg = &self.cfg;
        let track = self
            .procs
            .entry(p.pid)
            .or_insert_with(|| Track::new(p, tick.now));
        track.observe(p, tick.now, tick.page_size, keep_ms, self.tick);
        let activity = activity(p.pid, &track.history, tick.now, cfg.window_ms);
        track.activity = activity;
        // A footprint that stood still over the hidden window dropped by
        // nothing: no need to look through its points.
        let flat =
            tick.hidden_drop_bytes > 0 && track.footprint_flat_for(cfg.hidden_window_ms, tick.now);
        let hidden = if p.readable && !flat {
            hidden_bytes(
                &track.history,
                &self.sys,
                tick.now,
                cfg,
                p,
                tick.hidden_drop_bytes,
            )
        } else {
            Hidden::default()
        };
        let evidence = tick.evidence(p, &activity, hidden, is_watched, cfg.window_ms);
        let instant = Blame::of(
            p,
            &activity,
            hidden.bytes,
            track.state,
            is_watched,
            tick,
            cfg,
        )
        .state(tick.swap_verdict);
        debounce(track, p.pid, instant, evidence, tick.now, cfg)
    }
}

/// The system's figures at one tick, shared by every process's assessment.
#[derive(Debug, Clone, Copy)]
struct TickFigures {
    now: u64,
    phys_bytes: u64,
    page_size: u64,
    free_pct: f64,
    swap: SwapWindow,
    /// System swap growth since the baseline.
    swap_growth_bytes: i64,
    gap: FootprintGap,
    /// [`FootprintGap::held_bytes`] over physical memory: a lower bound.
    footprints_share: f64,
    /// What swap that grew means at this share: overflow or false fit.
    swap_verdict: State,
    /// Footprint drop, or memory outside the footprint, that counts as hidden.
    hidden_drop_bytes: u64,
    /// The watched tree's largest readable member.
    watched_top: Option<u32>,
    /// Judged against the watched tree's scope: the processes outside the
    /// tree are outside it.
    scoped: bool,
    /// Swap written since the baseline.
    swap_written_bytes: Option<u64>,
}

impl TickFigures {
    /// The figures behind process `p`'s state at this tick.
    fn evidence(
        &self,
        p: &ProcessSample,
        activity: &Activity,
        hidden: Hidden,
        watched: bool,
        window_ms: u64,
    ) -> Evidence {
        Evidence {
            footprint_bytes: p.footprint_bytes,
            phys_bytes: self.phys_bytes,
            footprints_share: self.footprints_share,
            footprints_swap_bytes: self.gap.footprints_swap_bytes(),
            swap_growth_window_bytes: self.swap.growth_window_bytes,
            swap_growth_bytes: self.swap_growth_bytes,
            window_ms,
            free_pct: self.free_pct,
            pageins_per_s: activity.pageins_per_s,
            footprint_delta_bytes: activity.footprint_delta_bytes,
            hidden_bytes: hidden.bytes,
            hidden_gpu_rise_bytes: hidden.gpu_rise.filter(|_| hidden.bytes > 0),
            watched,
            swapins_per_s: activity.swapins_per_s,
            process_swap_delta_bytes: activity.process_swap_delta_bytes,
            outside_footprint_bytes: p.outside_footprint_bytes.unwrap_or(0),
            gpu_bytes: p.gpu_bytes.unwrap_or(0),
            unexplained_bytes: self.gap.unexplained_bytes,
            footprint_coverage: self.gap.coverage,
        }
    }

    fn view(&self, worst: State) -> SystemView {
        SystemView {
            swap_climbing: self.swap.climbing,
            swap_growth_window_bytes: self.swap.growth_window_bytes,
            swap_growth_bytes: self.swap_growth_bytes,
            swap_tolerance_bytes: self.swap.tolerance_bytes,
            footprints_share: self.footprints_share,
            worst,
            gap: self.gap,
            unexplained_growth_window_bytes: self.swap.unexplained_growth_bytes,
            swap_written_bytes: self.swap_written_bytes,
        }
    }
}

/// The watched tree's largest readable member, which carries the tree's blame.
fn watched_top(sample: &Sample, watched: &HashSet<u32>) -> Option<u32> {
    sample
        .processes
        .iter()
        .filter(|p| p.readable && watched.contains(&p.pid))
        .max_by_key(|p| p.footprint_bytes)
        .map(|p| p.pid)
}

#[cfg(test)]
#[path = "detect_tests.rs"]
mod tests;
