//! The guard's decisions: run a command once enough memory is free, stop its
//! whole process tree once swap has grown past a budget.
//!
//! Everything here is platform-free so that tests can drive it: the
//! free-memory [`Gate`], the swap [`Budget`], what stops a running tree
//! ([`StopRules::decide`]: continue, or stop with a [`StopReason`] and its
//! exit code), the one-line stop message ([`stop_line`]) and the loop that
//! stops a process tree so that nothing survives ([`stop_tree`], in
//! `guard/stop_tree.rs`, written against the small [`ProcessControl`]
//! trait). The shell supplies the real process table and `kill(2)`; the
//! tests supply a simulated one.

use std::time::Duration;

use crate::step::detect::State;
use crate::step::forecast::{BudgetSwap, Limit};
use crate::step::pressure::Level;
use crate::step::tick::Tick;
use crate::util::units::{format_bytes, format_duration};

mod stop_tree;
pub use stop_tree::{stop_tree, ProcessControl, Signal, StopPlan, StopReport};

/// The free-memory gate: the command starts once at least `want_pct` % of
/// memory is free, or the guard gives up after `timeout`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    /// Free memory, in %, the command waits for.
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
    /// How far swap may grow (`--swap-budget`).
    pub budget_bytes: u64,
    /// System swap in use when the command started.
    pub baseline_bytes: u64,
    /// Which swap counts, from where ([`BudgetSwap`], shared with the
    /// forecast).
    swap: BudgetSwap,
}

impl Budget {
    /// A budget of `budget_bytes` over system swap at `baseline_bytes`.
    pub fn new(budget_bytes: u64, baseline_bytes: u64) -> Self {
        Budget {
            budget_bytes,
            baseline_bytes,
            swap: BudgetSwap::from_host(baseline_bytes),
        }
    }

    /// The growth that counts at this sample, once it is *more* than the
    /// budget: the scope's swap where the sample has a scope with swap of
    /// its own (its growth since the first such sample), else the system's.
    pub fn spent_in(&mut self, sample: &crate::probe::Sample) -> Option<u64> {
        let scope_swap = sample.scope.as_ref().and_then(|s| s.swap_bytes);
        let growth = self
            .swap
            .count(sample.system.swap_used_bytes, scope_swap)
            .growth();
        (growth > self.budget_bytes).then_some(growth)
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

/// The guard's settings that stop a running tree: `--swap-budget`,
/// `--stop-before`, `--stop-at-pressure` and `--on-false-fit stop`. A new stop rule is a setting here, one check in
/// [`StopRules::decide`] and a [`StopReason`] with its exit code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StopRules {
    /// Stop once swap grew past it.
    pub budget: Option<Budget>,
    /// Stop once the forecast puts the swap budget or the free-memory floor
    /// less than this away (the tick's [`Tick::forecast`]).
    pub stop_before: Option<Duration>,
    /// Stop once the memory pressure level (macOS the kernel's, Linux the
    /// one derived from PSI) is at least this.
    pub stop_at_pressure: Option<Level>,
    /// Stop once a member of the tree is flagged a false fit.
    pub stop_on_false_fit: bool,
}

/// The limits `--stop-before` watches: the budget and the free-memory
/// floor (swap full is the OS's to handle, and not a run's own limit).
pub const STOP_BEFORE_LIMITS: [Limit; 2] = [Limit::SwapBudget, Limit::FreeFloor];

/// What the guard does after a tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Keep watching.
    Continue,
    /// Stop the tree, for this reason (its exit code:
    /// [`StopReason::exit_code`]).
    Stop(StopReason),
}

impl StopRules {
    /// The decision at one tick. `in_tree` says whether a pid belongs to the
    /// guarded tree (the tick's watched pids count as members too). The
    /// rules in order of precedence: the budget, then the forecast
    /// (`stop_before`), then the pressure level, then a false fit (the first
    /// flag of the tick on a member).
    pub fn decide(&mut self, tick: &Tick, in_tree: impl Fn(u32) -> bool) -> Decision {
        self.budget_spent(tick)
            .or_else(|| self.forecast_near(tick))
            .or_else(|| self.pressure_reached(tick))
            .or_else(|| self.false_fit(tick, in_tree))
            .map_or(Decision::Continue, Decision::Stop)
    }

    fn forecast_near(&self, tick: &Tick) -> Option<StopReason> {
        let within = self.stop_before?;
        let (limit, secs) = tick
            .forecast
            .first_within(&STOP_BEFORE_LIMITS, within.as_secs_f64())?;
        Some(StopReason::Forecast {
            limit,
            eta_ms: (secs * 1000.0) as u64,
            within,
        })
    }

    fn pressure_reached(&self, tick: &Tick) -> Option<StopReason> {
        let at = self.stop_at_pressure?;
        let level = tick.sample.system.pressure?.level?;
        (level >= at).then_some(StopReason::Pressure { level })
    }

    fn budget_spent(&mut self, tick: &Tick) -> Option<StopReason> {
        let budget = self.budget.as_mut()?;
        let grown = budget.spent_in(&tick.sample)?;
        Some(StopReason::Budget {
            grown_bytes: grown,
            budget_bytes: budget.budget_bytes,
        })
    }

    fn false_fit(&self, tick: &Tick, in_tree: impl Fn(u32) -> bool) -> Option<StopReason> {
        if !self.stop_on_false_fit {
            return None;
        }
        let f = tick.flags.iter().find(|f| {
            f.state == State::FalseFit && (tick.watched.contains(&f.pid) || in_tree(f.pid))
        })?;
        Some(StopReason::FalseFit {
            pid: f.pid,
            name: f.name.clone(),
        })
    }
}

/// Why the guard stops a tree, and with which exit code
/// ([`StopReason::exit_code`]; docs/guard.md lists them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// Swap grew past the budget (`--swap-budget`). Exit code 10.
    Budget {
        /// How far the counted swap had grown.
        grown_bytes: u64,
        /// The budget.
        budget_bytes: u64,
    },
    /// The detector flagged a member of the tree as a false fit
    /// (`--on-false-fit stop`). Exit code 11.
    FalseFit {
        /// The member flagged.
        pid: u32,
        /// Its name.
        name: String,
    },
    /// The forecast put `limit` `eta_ms` away, less than `within`
    /// (`--stop-before`). Exit code 13.
    Forecast {
        /// The limit forecast.
        limit: Limit,
        /// Time left to it at the current rate.
        eta_ms: u64,
        /// `--stop-before`.
        within: Duration,
    },
    /// The memory pressure level reached `level` (`--stop-at-pressure`).
    /// Exit code 14.
    Pressure {
        /// The level reached.
        level: Level,
    },
    /// The guard itself was sent a signal (Ctrl-C, `kill`); `name` is e.g.
    /// `SIGINT`. Exit code 128 + the signal's number.
    Signal {
        /// The signal's name.
        name: &'static str,
    },
    /// The memory probe failed: the budget can no longer be enforced. Exit
    /// code 1.
    ProbeFailed {
        /// What failed, in words.
        why: String,
    },
    /// The trace could not be written (a full disk): the run would go on
    /// unrecorded, so it is stopped. `why` names the file and the error.
    /// Exit code 1.
    TraceFailed {
        /// The file and the error.
        why: String,
    },
    /// The command exited by itself but left processes running. The exit
    /// code is the command's own.
    Leftovers,
}

impl StopReason {
    /// The guard's exit code for this stop; `None` where it is not the
    /// guard's to choose: 128 + the signal's number for
    /// [`StopReason::Signal`] (the number is the platform's), the command's
    /// own for [`StopReason::Leftovers`].
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            StopReason::Budget { .. } => Some(10),
            StopReason::FalseFit { .. } => Some(11),
            StopReason::Forecast { .. } => Some(13),
            StopReason::Pressure { .. } => Some(14),
            StopReason::ProbeFailed { .. } | StopReason::TraceFailed { .. } => Some(1),
            StopReason::Signal { .. } | StopReason::Leftovers => None,
        }
    }

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
            StopReason::Forecast {
                limit,
                eta_ms,
                within,
            } => format!(
                "the forecast put the {} {} away (under {}) after {after}",
                limit.label(),
                format_duration(Duration::from_millis(*eta_ms)),
                format_duration(*within)
            ),
            StopReason::Pressure { level } => {
                format!("memory pressure reached {level} after {after}")
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

/// Growth and budget as text that shows the growth is larger: `512 MiB`
/// beside a budget of `512 MiB` would read as a contradiction, so the growth
/// gets decimals until it differs (`512.3 MiB > budget 512 MiB`).
fn over_budget_text(grown_bytes: u64, budget_bytes: u64) -> (String, String) {
    let budget = format_bytes(budget_bytes as i64);
    let mut grown = format_bytes(grown_bytes as i64);
    if grown == budget {
        let (unit, name) = if budget_bytes >= 1 << 30 {
            ((1u64 << 30) as f64, "GiB")
        } else {
            ((1u64 << 20) as f64, "MiB")
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
/// `swap grew 8.1 GiB > budget 8.0 GiB after 3m12s; stopped python (pid 4242) and 3 descendants`.
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

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
