//! The guard's decisions: run a command once enough memory is free, stop its
//! whole process tree once swap has grown past a budget.
//!
//! Everything here is platform-free so that tests can drive it: the
//! free-memory [`Gate`], the swap [`Budget`], the one-line stop message
//! ([`stop_line`]) and the loop that stops a process tree ([`stop_tree`]),
//! written against the small [`ProcessControl`] trait. The shell supplies the
//! real process table and `kill(2)`; the tests supply a simulated one.
//!
//! Stopping a tree so that nothing survives is harder than signalling a
//! process group: descendants may have moved to another group or session
//! (`setsid`), may ignore `SIGTERM`, and may fork between the moment the
//! process list was read and the moment a signal lands. [`stop_tree`]
//! therefore works from the [`WatchTree`] (members remembered by pid and
//! start time, children found by parent pid), re-reads the process list every
//! round and signals new children as they appear; before `SIGKILL` it first
//! freezes every member with `SIGSTOP`, so that no member can fork a child
//! that would be orphaned — and lost — by the kill.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Duration;

use crate::probe::ProcessSample;
use crate::tree::WatchTree;
use crate::units::{format_bytes, format_duration};

/// The free-memory gate: the command starts once at least `want_pct` % of
/// memory is free, or the guard gives up after `timeout`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    pub want_pct: f64,
    /// `None` waits as long as it takes.
    pub timeout: Option<Duration>,
}

/// What the gate says at one look at free memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateState {
    /// Enough memory is free: start the command.
    Open,
    /// Not yet; look again.
    Waiting,
    /// The timeout has passed: give up without starting the command.
    TimedOut,
}

impl Gate {
    /// Judges one reading of free memory after having waited `waited`.
    pub fn check(&self, free_pct: f64, waited: Duration) -> GateState {
        if free_pct >= self.want_pct {
            GateState::Open
        } else if self.timeout.is_some_and(|t| waited >= t) {
            GateState::TimedOut
        } else {
            GateState::Waiting
        }
    }

    /// `waiting for 40 % free memory: now 31.5 % (waited 12.0s)`
    pub fn waiting_text(&self, free_pct: f64, waited: Duration) -> String {
        let limit = self
            .timeout
            .map(|t| format!(" of {}", format_duration(t)))
            .unwrap_or_default();
        format!(
            "waiting for {} free memory: now {free_pct:.1} % (waited {}{limit})",
            pct_text(self.want_pct),
            format_duration(waited)
        )
    }

    /// `gave up after 10.0s waiting for 40 % free memory (now 31.5 %)`
    pub fn timeout_text(&self, free_pct: f64, waited: Duration) -> String {
        format!(
            "gave up after {} waiting for {} free memory (now {free_pct:.1} %)",
            format_duration(waited),
            pct_text(self.want_pct)
        )
    }

    /// `waited 2.5s for 40 % free memory (now 41.2 %)` — the trace's
    /// `guard-wait` event.
    pub fn passed_text(&self, free_pct: f64, waited: Duration) -> String {
        format!(
            "waited {} for {} free memory (now {free_pct:.1} %)",
            format_duration(waited),
            pct_text(self.want_pct)
        )
    }
}

/// `40 %`, `40.5 %`.
/// As typed, to two decimals: `40 %`, `40.5 %`, `99.99 %` (not a rounded
/// `100.0 %` that could never be met).
fn pct_text(pct: f64) -> String {
    format!("{} %", (pct * 100.0).round() / 100.0)
}

/// The swap budget: how much swap may grow over its level when the command
/// started — system swap, or the scope's own where a memory cgroup holds the
/// command and accounts its swap (`memory.swap.current`, v1 `total_swap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub budget_bytes: u64,
    /// System swap in use when the command started.
    pub baseline_bytes: u64,
    /// The scope's swap when the command was first seen in it.
    pub scope_baseline_bytes: Option<u64>,
}

impl Budget {
    pub fn new(budget_bytes: u64, baseline_bytes: u64) -> Self {
        Budget {
            budget_bytes,
            baseline_bytes,
            scope_baseline_bytes: None,
        }
    }

    /// The growth that counts at this sample, once it is *more* than the
    /// budget: the scope's swap where the sample has a scope with swap of
    /// its own (its growth since the first such sample), else the system's.
    pub fn spent_in(&mut self, sample: &crate::probe::Sample) -> Option<u64> {
        match sample.scope.as_ref().and_then(|s| s.swap_bytes) {
            Some(swap) => {
                let base = *self.scope_baseline_bytes.get_or_insert(swap);
                let growth = swap.saturating_sub(base);
                (growth > self.budget_bytes).then_some(growth)
            }
            None => self.spent(sample.system.swap_used_bytes),
        }
    }

    /// Swap growth since the command started; swap that shrank below the
    /// baseline counts as no growth.
    pub fn growth_bytes(&self, swap_used_bytes: u64) -> u64 {
        swap_used_bytes.saturating_sub(self.baseline_bytes)
    }

    /// The growth, once it is *more* than the budget.
    pub fn spent(&self, swap_used_bytes: u64) -> Option<u64> {
        let growth = self.growth_bytes(swap_used_bytes);
        (growth > self.budget_bytes).then_some(growth)
    }
}

/// Why the guard stops a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// Swap grew past the budget.
    Budget { grown_bytes: u64, budget_bytes: u64 },
    /// The detector flagged a member of the tree as a false fit
    /// (`--on-false-fit stop`).
    FalseFit { pid: u32, name: String },
    /// The guard itself was sent a signal (Ctrl-C, `kill`); `name` is e.g.
    /// `SIGINT`.
    Signal { name: &'static str },
    /// The memory probe failed: the budget can no longer be enforced.
    ProbeFailed { why: String },
    /// The trace could not be written (a full disk): the run would go on
    /// unrecorded, so it is stopped. `why` names the file and the error.
    TraceFailed { why: String },
    /// The command exited by itself but left processes running.
    Leftovers,
}

impl StopReason {
    /// The first half of the stop line: why, and after how long.
    pub fn why(&self, elapsed: Duration) -> String {
        let after = format_duration(elapsed);
        match self {
            StopReason::Budget {
                grown_bytes,
                budget_bytes,
            } => {
                let (grown, budget) = over_budget_text(*grown_bytes, *budget_bytes);
                format!("swap grew {grown} > budget {budget} after {after}")
            }
            StopReason::FalseFit { pid, name } => {
                format!("{name} (pid {pid}) was flagged a false fit after {after}")
            }
            StopReason::Signal { name } => format!("interrupted by {name} after {after}"),
            StopReason::ProbeFailed { why } => {
                format!("the memory probe failed after {after} ({why}); the budget cannot be kept")
            }
            StopReason::TraceFailed { why } => format!("{why} after {after}"),
            StopReason::Leftovers => format!("the command exited after {after}"),
        }
    }
}

/// Growth and budget as text that shows the growth is larger: `512 MB`
/// beside a budget of `512 MB` would read as a contradiction, so the growth
/// gets decimals until it differs (`512.3 MB > budget 512 MB`).
fn over_budget_text(grown_bytes: u64, budget_bytes: u64) -> (String, String) {
    let budget = format_bytes(budget_bytes as i64);
    let mut grown = format_bytes(grown_bytes as i64);
    if grown == budget {
        let (unit, name) = if budget_bytes >= 1 << 30 {
            ((1u64 << 30) as f64, "GB")
        } else {
            ((1u64 << 20) as f64, "MB")
        };
        let value = grown_bytes as f64 / unit;
        for decimals in 1..=4 {
            grown = format!("{value:.decimals$} {name}");
            if value > (budget_bytes as f64 / unit)
                && grown != format!("{:.decimals$} {name}", budget_bytes as f64 / unit)
            {
                break;
            }
        }
    }
    (grown, budget)
}

/// The one line the guard prints (after `swapsight: `) and writes as the
/// trace's `guard-stop` event, e.g.
/// `swap grew 8.1 GB > budget 8.0 GB after 3m12s; stopped python (pid 4242) and 3 descendants`.
///
/// `root` is the command's pid and name; `report` says what was stopped.
pub fn stop_line(
    reason: &StopReason,
    elapsed: Duration,
    root: (u32, &str),
    report: &StopReport,
) -> String {
    let (root_pid, root_name) = root;
    let why = reason.why(elapsed);
    let n = report.stopped.len();
    if n == 0 {
        return format!("{why}; nothing was left to stop");
    }
    let what = if report.stopped.contains_key(&root_pid) {
        match n - 1 {
            0 => format!("stopped {root_name} (pid {root_pid})"),
            1 => format!("stopped {root_name} (pid {root_pid}) and 1 descendant"),
            d => format!("stopped {root_name} (pid {root_pid}) and {d} descendants"),
        }
    } else {
        let procs = if n == 1 { "process" } else { "processes" };
        format!("stopped {n} {procs} left by {root_name} (pid {root_pid})")
    };
    let mut line = format!("{why}; {what}");
    if !report.killed.is_empty() {
        line.push_str(&format!(" ({} needed SIGKILL)", report.killed.len()));
    }
    if !report.survivors.is_empty() {
        let pids: Vec<String> = report.survivors.iter().map(u32::to_string).collect();
        line.push_str(&format!(
            "; still alive after SIGKILL: pid {}",
            pids.join(", ")
        ));
    }
    line
}

/// The signals [`stop_tree`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    Interrupt,
    Terminate,
    Kill,
    Stop,
    Continue,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Kill => "SIGKILL",
            Signal::Stop => "SIGSTOP",
            Signal::Continue => "SIGCONT",
        }
    }
}

/// What [`stop_tree`] needs from the operating system.
pub trait ProcessControl {
    /// Every process alive now (not zombies), with pid, ppid, start time and
    /// name filled in.
    fn scan(&mut self) -> Vec<ProcessSample>;
    /// Sends `signal` to one process; a process that is gone is not an error.
    fn signal(&mut self, pid: u32, signal: Signal);
    /// Sends `signal` to a process group.
    fn signal_group(&mut self, pgid: u32, signal: Signal);
    /// Lets `d` pass (and reaps the guard's own exited children).
    fn pause(&mut self, d: Duration);
    /// Monotonic time, from any origin.
    fn elapsed(&self) -> Duration;
}

/// How to stop a tree.
#[derive(Debug, Clone)]
pub struct StopPlan {
    /// Sent first: `SIGTERM`, or the signal the guard itself received.
    pub first: Signal,
    /// How long members may take to exit before `SIGKILL`.
    pub grace: Duration,
    /// How long to keep sending `SIGKILL` before giving up on a process
    /// (one stuck in the kernel cannot die until it returns).
    pub kill_wait: Duration,
    /// Time between rounds of re-reading the process list.
    pub poll: Duration,
    /// The command's process group, signalled as a whole besides each member.
    pub group: Option<u32>,
    /// Pids never signalled: the guard itself (the root of its watch tree).
    pub exclude: HashSet<u32>,
}

impl StopPlan {
    pub fn new(first: Signal, grace: Duration) -> Self {
        StopPlan {
            first,
            grace,
            kill_wait: Duration::from_secs(5),
            poll: Duration::from_millis(50),
            group: None,
            exclude: HashSet::new(),
        }
    }
}

/// What [`stop_tree`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopReport {
    /// Every process of the tree that was signalled: pid → name.
    pub stopped: BTreeMap<u32, String>,
    /// Those still alive after the grace period (sent `SIGKILL`).
    pub killed: BTreeSet<u32>,
    /// Those still alive when the guard gave up (`kill_wait` after the first
    /// `SIGKILL`).
    pub survivors: Vec<u32>,
    pub took: Duration,
}

/// How many times one freeze re-reads the process list for new children.
const FREEZE_PASSES: usize = 10;
/// Time for `SIGSTOP` to land before the process list is read again.
const FREEZE_SETTLE: Duration = Duration::from_millis(5);

/// Stops every process of `tree` (except `plan.exclude`):
///
/// 1. `plan.first` (then `SIGCONT`, so that a stopped member can act on it)
///    to the process group and to every member; the process list is re-read
///    every `plan.poll` and each new child of a member gets the same, until
///    no member is alive or `plan.grace` has passed;
/// 2. then, every round: freeze the tree with `SIGSTOP` (re-reading until no
///    new child shows up), `SIGKILL` the group and every member, until none is
///    alive or `plan.kill_wait` has passed.
///
/// The tree is brought up to date by every read of the process list; give it
/// a root whose orphans come back to it (the guard as a Linux subreaper) and
/// a member whose parent died between two reads is still found.
pub fn stop_tree(
    ctl: &mut dyn ProcessControl,
    tree: &mut WatchTree,
    plan: &StopPlan,
) -> StopReport {
    let t0 = ctl.elapsed();
    let mut report = StopReport::default();
    // Phase 1: the polite signal, once to each member.
    let mut told: HashSet<(u32, u64)> = HashSet::new();
    loop {
        let live = live_members(ctl, tree, plan);
        if live.is_empty() {
            report.took = ctl.elapsed().saturating_sub(t0);
            return report;
        }
        if told.is_empty() {
            if let Some(g) = plan.group {
                ctl.signal_group(g, plan.first);
                ctl.signal_group(g, Signal::Continue);
            }
        }
        for p in &live {
            report
                .stopped
                .entry(p.pid)
                .or_insert_with(|| p.name.clone());
            if told.insert((p.pid, p.start_time)) {
                ctl.signal(p.pid, plan.first);
                ctl.signal(p.pid, Signal::Continue);
            }
        }
        if ctl.elapsed().saturating_sub(t0) >= plan.grace {
            break;
        }
        ctl.pause(plan.poll);
    }
    // Phase 2: freeze, then kill, until nothing is left.
    let t1 = ctl.elapsed();
    loop {
        let live = freeze(ctl, tree, plan, &mut report);
        if live.is_empty() {
            break;
        }
        if ctl.elapsed().saturating_sub(t1) >= plan.kill_wait {
            report.survivors = live.iter().map(|p| p.pid).collect();
            break;
        }
        if let Some(g) = plan.group {
            ctl.signal_group(g, Signal::Kill);
        }
        for p in &live {
            report.killed.insert(p.pid);
            ctl.signal(p.pid, Signal::Kill);
        }
        ctl.pause(plan.poll);
    }
    report.took = ctl.elapsed().saturating_sub(t0);
    report
}

/// Reads the process list, updates the tree, returns its live members.
fn live_members(
    ctl: &mut dyn ProcessControl,
    tree: &mut WatchTree,
    plan: &StopPlan,
) -> Vec<ProcessSample> {
    let procs = ctl.scan();
    tree.update(&procs);
    procs
        .into_iter()
        .filter(|p| p.pid > 1 && tree.contains(p.pid) && !plan.exclude.contains(&p.pid))
        .collect()
}

/// `SIGSTOP`s every member, re-reading the list until no new member shows
/// up: a stopped process cannot fork, and a stopped parent keeps its
/// children's parent pid pointing into the tree.
fn freeze(
    ctl: &mut dyn ProcessControl,
    tree: &mut WatchTree,
    plan: &StopPlan,
    report: &mut StopReport,
) -> Vec<ProcessSample> {
    if let Some(g) = plan.group {
        ctl.signal_group(g, Signal::Stop);
    }
    let mut frozen: HashSet<(u32, u64)> = HashSet::new();
    let mut live = Vec::new();
    for _ in 0..FREEZE_PASSES {
        live = live_members(ctl, tree, plan);
        let mut new = false;
        for p in &live {
            report
                .stopped
                .entry(p.pid)
                .or_insert_with(|| p.name.clone());
            if frozen.insert((p.pid, p.start_time)) {
                ctl.signal(p.pid, Signal::Stop);
                new = true;
            }
        }
        if !new {
            break;
        }
        ctl.pause(FREEZE_SETTLE);
    }
    live
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
