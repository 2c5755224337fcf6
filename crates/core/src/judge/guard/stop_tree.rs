//! The loop that stops a process tree ([`stop_tree`]), written against the
//! small [`ProcessControl`] trait: the shell supplies the real process table
//! and `kill(2)`; the tests supply a simulated one.
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
use crate::step::tree::WatchTree;

/// The signals [`stop_tree`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// `SIGINT`.
    Interrupt,
    /// `SIGTERM`.
    Terminate,
    /// `SIGKILL`.
    Kill,
    /// `SIGSTOP`.
    Stop,
    /// `SIGCONT`.
    Continue,
}

impl Signal {
    /// The signal's name: `SIGINT`, `SIGTERM`, ….
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
    /// A plan that sends `first`, then `SIGKILL` after `grace`; kill wait
    /// 5 s, a poll every 50 ms, no group and no pid excluded.
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
    pub(crate) took: Duration,
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
                .or_insert_with(|| p.name.to_string());
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
                .or_insert_with(|| p.name.to_string());
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
