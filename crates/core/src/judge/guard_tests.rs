use super::*;
use std::collections::{BTreeMap, BTreeSet};

use crate::probe::{ProcessSample, Sample, SystemSample};
use crate::step::detect::{Evidence, Flag};
use crate::step::tree::WatchTree;

const GUARD: u32 = 100;
const INIT: u32 = 1;
const STRANGER: u32 = 50;

#[derive(Debug, Clone, Default)]
struct FakeProc {
    ppid: u32,
    pgid: u32,
    start: u64,
    name: String,
    ignores_term: bool,
    /// Stuck in the kernel: not even SIGKILL ends it.
    unkillable: bool,
    /// Forks a child on SIGTERM, then exits.
    forks_on_term: bool,
    /// Forks a child whenever the guard kills another process while this
    /// one runs (a busy forker racing the guard's kill).
    forks_when_racing: bool,
    stopped: bool,
    dying: bool,
}

/// A simulated process table with a clock. Orphans go to `reaper`
/// (the guard as subreaper) or init.
struct Fake {
    now: Duration,
    procs: BTreeMap<u32, FakeProc>,
    next_pid: u32,
    reaper: u32,
    signals: Vec<(u32, Signal)>,
    group_signals: Vec<(u32, Signal)>,
}

impl Fake {
    fn new(reaper: u32) -> Fake {
        let mut procs = BTreeMap::new();
        for (pid, name) in [(INIT, "init"), (STRANGER, "stranger"), (GUARD, "swapsight")] {
            procs.insert(
                pid,
                FakeProc {
                    ppid: if pid == INIT { 0 } else { INIT },
                    pgid: pid,
                    start: u64::from(pid),
                    name: name.into(),
                    ignores_term: true,
                    unkillable: true,
                    ..Default::default()
                },
            );
        }
        Fake {
            now: Duration::ZERO,
            procs,
            next_pid: 1000,
            reaper,
            signals: Vec::new(),
            group_signals: Vec::new(),
        }
    }

    fn add(&mut self, pid: u32, ppid: u32, pgid: u32, f: impl FnOnce(&mut FakeProc)) {
        let mut p = FakeProc {
            ppid,
            pgid,
            start: u64::from(pid) * 10,
            name: format!("p{pid}"),
            ..Default::default()
        };
        f(&mut p);
        self.procs.insert(pid, p);
    }

    fn fork(&mut self, parent: u32) -> u32 {
        let pid = self.next_pid;
        self.next_pid += 1;
        let pgid = self.procs[&parent].pgid;
        self.add(pid, parent, pgid, |p| p.ignores_term = true);
        pid
    }

    fn die(&mut self, pid: u32) {
        if self.procs.remove(&pid).is_some() {
            let reaper = self.reaper;
            for p in self.procs.values_mut() {
                if p.ppid == pid {
                    p.ppid = reaper;
                }
            }
        }
    }

    fn deliver(&mut self, pid: u32, sig: Signal) {
        if sig == Signal::Kill {
            let racers: Vec<u32> = self
                .procs
                .iter()
                .filter(|(&q, p)| q != pid && p.forks_when_racing && !p.stopped)
                .map(|(&q, _)| q)
                .collect();
            for q in racers {
                self.fork(q);
            }
        }
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        match sig {
            Signal::Kill if !p.unkillable => self.die(pid),
            Signal::Kill => {}
            Signal::Stop => p.stopped = true,
            Signal::Continue => p.stopped = false,
            Signal::Interrupt | Signal::Terminate => {
                if !p.ignores_term && !p.dying {
                    p.dying = true;
                    if p.forks_on_term {
                        self.fork(pid);
                    }
                }
            }
        }
    }

    fn alive(&self) -> Vec<u32> {
        self.procs
            .keys()
            .copied()
            .filter(|&p| ![INIT, STRANGER, GUARD].contains(&p))
            .collect()
    }
}

impl ProcessControl for Fake {
    fn scan(&mut self) -> Vec<ProcessSample> {
        self.procs
            .iter()
            .map(|(&pid, p)| ProcessSample {
                pid,
                ppid: p.ppid,
                name: p.name.as_str().into(),
                start_time: p.start,
                ..Default::default()
            })
            .collect()
    }
    fn signal(&mut self, pid: u32, signal: Signal) {
        self.signals.push((pid, signal));
        self.deliver(pid, signal);
    }
    fn signal_group(&mut self, pgid: u32, signal: Signal) {
        self.group_signals.push((pgid, signal));
        let members: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.pgid == pgid)
            .map(|(&pid, _)| pid)
            .collect();
        for pid in members {
            self.deliver(pid, signal);
        }
    }
    fn pause(&mut self, d: Duration) {
        self.now += d;
        let dying: Vec<u32> = self
            .procs
            .iter()
            .filter(|(_, p)| p.dying && !p.stopped)
            .map(|(&pid, _)| pid)
            .collect();
        for pid in dying {
            self.die(pid);
        }
    }
    fn elapsed(&self) -> Duration {
        self.now
    }
}

fn plan(grace_ms: u64) -> StopPlan {
    let mut plan = StopPlan::new(Signal::Terminate, Duration::from_millis(grace_ms));
    plan.kill_wait = Duration::from_secs(1);
    plan.group = Some(200);
    plan.exclude.insert(GUARD);
    plan
}

/// The guard's view: a tree rooted at the guard, brought up to date.
fn tree_of(fake: &mut Fake) -> WatchTree {
    let mut tree = WatchTree::new(Some(GUARD));
    tree.update(&fake.scan());
    tree
}

/// guard 100 → command 200 (its own group) → 201 → 202
fn simple(fake: &mut Fake) {
    fake.add(200, GUARD, 200, |_| {});
    fake.add(201, 200, 200, |_| {});
    fake.add(202, 201, 200, |_| {});
}

#[test]
fn a_tree_that_obeys_sigterm_is_stopped_without_sigkill() {
    let mut fake = Fake::new(GUARD);
    simple(&mut fake);
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(5000));
    assert!(fake.alive().is_empty(), "{:?}", fake.alive());
    assert_eq!(
        r.stopped.keys().copied().collect::<Vec<_>>(),
        [200, 201, 202]
    );
    assert!(r.killed.is_empty());
    assert!(r.survivors.is_empty());
    assert!(r.took < Duration::from_secs(1), "{:?}", r.took);
    // Never the guard, init, or a stranger.
    assert!(fake
        .signals
        .iter()
        .all(|(pid, _)| ![INIT, STRANGER, GUARD].contains(pid)));
}

#[test]
fn what_ignores_sigterm_is_killed_after_the_grace() {
    let mut fake = Fake::new(GUARD);
    simple(&mut fake);
    fake.procs.get_mut(&202).unwrap().ignores_term = true;
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(2000));
    assert!(fake.alive().is_empty(), "{:?}", fake.alive());
    assert_eq!(r.killed, BTreeSet::from([202]));
    assert!(r.took >= Duration::from_secs(2), "{:?}", r.took);
    assert!(r.took < Duration::from_millis(2500), "{:?}", r.took);
}

#[test]
fn a_member_that_called_setsid_and_was_orphaned_to_init_is_stopped() {
    let mut fake = Fake::new(INIT); // no subreaper: macOS
    simple(&mut fake);
    fake.add(203, 201, 203, |p| p.ignores_term = true); // setsid: own group
    let mut tree = tree_of(&mut fake);
    // Its parent exits: it is re-parented to init, out of the group.
    fake.die(201);
    tree.update(&fake.scan());
    assert_eq!(fake.procs[&203].ppid, INIT);
    let r = stop_tree(&mut fake, &mut tree, &plan(500));
    assert!(fake.alive().is_empty(), "{:?}", fake.alive());
    assert!(r.stopped.contains_key(&203) && r.killed.contains(&203));
}

#[test]
fn a_child_forked_while_stopping_comes_back_through_the_subreaper() {
    let mut fake = Fake::new(GUARD); // Linux: the guard is subreaper
    simple(&mut fake);
    fake.procs.get_mut(&201).unwrap().forks_on_term = true;
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(1000));
    assert!(fake.alive().is_empty(), "{:?}", fake.alive());
    // The child the dying 201 left (pid 1000, ignoring SIGTERM) was found
    // under the guard and killed.
    assert!(r.killed.contains(&1000), "{r:?}");
}

#[test]
fn the_kill_freezes_a_forking_tree_first() {
    // No subreaper, and a forker in a session of its own that forks
    // whenever the guard kills someone else: killing without freezing
    // first orphans its newest child to init.
    let mut fake = Fake::new(INIT);
    simple(&mut fake);
    fake.procs.get_mut(&202).unwrap().ignores_term = true;
    // A pid above its children's, so a kill in pid order reaches it last.
    fake.add(900_000, 201, 900_000, |p| {
        p.ignores_term = true;
        p.forks_when_racing = true;
    });
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(300));
    assert!(fake.alive().is_empty(), "left alive: {:?}", fake.alive());
    assert!(r.survivors.is_empty());
    assert!(r.killed.contains(&900_000));
}

#[test]
fn a_process_stuck_in_the_kernel_is_reported_not_waited_for_forever() {
    let mut fake = Fake::new(GUARD);
    simple(&mut fake);
    {
        let p = fake.procs.get_mut(&202).unwrap();
        p.ignores_term = true;
        p.unkillable = true;
    }
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(500));
    assert_eq!(r.survivors, [202]);
    assert!(r.took <= Duration::from_millis(1700), "{:?}", r.took);
    let line = stop_line(
        &StopReason::Leftovers,
        Duration::from_secs(3),
        (200, "sh"),
        &r,
    );
    assert!(
        line.ends_with("(1 needed SIGKILL); still alive after SIGKILL: pid 202"),
        "{line}"
    );
}

#[test]
fn an_empty_tree_is_not_signalled_at_all() {
    let mut fake = Fake::new(GUARD);
    let mut tree = tree_of(&mut fake);
    let r = stop_tree(&mut fake, &mut tree, &plan(500));
    assert_eq!(r, StopReport::default());
    assert!(fake.signals.is_empty() && fake.group_signals.is_empty());
    let line = stop_line(
        &StopReason::Leftovers,
        Duration::from_secs(1),
        (200, "sh"),
        &r,
    );
    assert_eq!(
        line,
        "the command exited after 1.0s; nothing was left to stop"
    );
}

#[test]
fn a_reused_pid_is_not_signalled() {
    let mut fake = Fake::new(GUARD);
    simple(&mut fake);
    let mut tree = tree_of(&mut fake);
    // 202 exits; its pid goes to an unrelated process started later.
    fake.die(202);
    fake.add(202, STRANGER, 202, |p| {
        p.ignores_term = true;
        p.start = 99_999;
    });
    let r = stop_tree(&mut fake, &mut tree, &plan(500));
    assert!(fake.procs.contains_key(&202));
    assert!(!r.stopped.contains_key(&202));
    assert!(!fake.signals.iter().any(|(pid, _)| *pid == 202));
}

#[test]
fn the_stop_line_reads_like_the_issue_says() {
    let mut r = StopReport::default();
    for (pid, name) in [(4242, "python"), (4243, "a"), (4244, "b"), (4250, "c")] {
        r.stopped.insert(pid, name.into());
    }
    let budget = StopReason::Budget {
        grown_bytes: 8_700_000_000,
        budget_bytes: 8 << 30,
    };
    assert_eq!(
        stop_line(&budget, Duration::from_secs(192), (4242, "python"), &r),
        "swap grew 8.1 GiB > budget 8.0 GiB after 3m12s; stopped python (pid 4242) and 3 descendants"
    );
    r.stopped.remove(&4242);
    r.killed.insert(4250);
    assert_eq!(
        stop_line(&StopReason::Leftovers, Duration::from_millis(1500), (4242, "python"), &r),
        "the command exited after 1.5s; stopped 3 processes left by python (pid 4242) (1 needed SIGKILL)"
    );
    let one = StopReport {
        stopped: BTreeMap::from([(7, "sh".to_string())]),
        ..Default::default()
    };
    assert_eq!(
        stop_line(
            &StopReason::Signal { name: "SIGINT" },
            Duration::from_secs(2),
            (7, "sh"),
            &one
        ),
        "interrupted by SIGINT after 2.0s; stopped sh (pid 7)"
    );
    let ff = StopReason::FalseFit {
        pid: 7,
        name: "python3".into(),
    };
    assert!(stop_line(
        &ff,
        Duration::from_secs(2),
        (7, "sh"),
        &StopReport::default()
    )
    .starts_with("python3 (pid 7) was flagged a false fit after 2.0s; nothing"));
}

#[test]
fn a_growth_just_past_the_budget_does_not_read_as_equal() {
    let why = |grown| {
        StopReason::Budget {
            grown_bytes: grown,
            budget_bytes: 512 << 20,
        }
        .why(Duration::from_secs(19))
    };
    assert_eq!(
        why(537_200_000),
        "swap grew 512.3 MiB > budget 512 MiB after 19.0s"
    );
    assert_eq!(
        why((512 << 20) + 4096),
        "swap grew 512.004 MiB > budget 512 MiB after 19.0s"
    );
    assert_eq!(
        why(600 << 20),
        "swap grew 600 MiB > budget 512 MiB after 19.0s"
    );
    let gb = StopReason::Budget {
        grown_bytes: (8 << 30) + (40 << 20),
        budget_bytes: 8 << 30,
    };
    assert_eq!(
        gb.why(Duration::from_secs(1)),
        "swap grew 8.04 GiB > budget 8.0 GiB after 1.0s"
    );
}

#[test]
fn the_budget_is_spent_only_past_it() {
    let b = Budget::new(256 << 20, 1 << 30);
    assert_eq!(b.spent((1 << 30) + (256 << 20)), None, "equal is within");
    assert_eq!(b.spent((1 << 30) + (256 << 20) + 1), Some((256 << 20) + 1));
    assert_eq!(b.growth_bytes(100), 0, "swap that shrank is no growth");
    assert_eq!(Budget::new(0, 5).spent(6), Some(1));
}

#[test]
fn the_budget_counts_the_scopes_own_swap_when_it_has_it() {
    use crate::probe::{Sample, Scope, SystemSample};
    let sample = |host_swap: u64, scope_swap: Option<u64>| Sample {
        system: SystemSample {
            swap_used_bytes: host_swap,
            ..SystemSample::default()
        },
        scope: Some(Scope {
            limit_bytes: 256 << 20,
            swap_bytes: scope_swap,
            ..Scope::default()
        }),
        ..Sample::default()
    };
    let mut b = Budget::new(512 << 20, 1 << 30);
    // The host's swap grows by others' pages: not the job's.
    assert_eq!(b.spent_in(&sample(4 << 30, Some(100 << 20))), None);
    assert_eq!(
        b.spent_in(&sample(4 << 30, Some(600 << 20))),
        None,
        "500 MiB grown"
    );
    assert_eq!(
        b.spent_in(&sample(1 << 30, Some(700 << 20))),
        Some(600 << 20),
        "the scope's growth since it was first seen"
    );
    // A scope that does not account swap: the system's counts.
    let mut b = Budget::new(512 << 20, 1 << 30);
    assert_eq!(b.spent_in(&sample(2 << 30, None)), Some(1 << 30));
}

#[test]
fn the_gate_opens_waits_and_times_out() {
    let g = Gate {
        want_pct: 40.0,
        timeout: Some(Duration::from_secs(10)),
    };
    assert_eq!(g.check(40.0, Duration::ZERO), GateState::Open);
    assert_eq!(g.check(39.9, Duration::from_secs(9)), GateState::Waiting);
    assert_eq!(g.check(39.9, Duration::from_secs(10)), GateState::TimedOut);
    let forever = Gate {
        want_pct: 40.0,
        timeout: None,
    };
    assert_eq!(
        forever.check(1.0, Duration::from_secs(86_400)),
        GateState::Waiting
    );
    assert_eq!(
        g.timeout_text(31.54, Duration::from_secs(10)),
        "gave up after 10.0s waiting for 40 % free memory (now 31.5 %)"
    );
    assert_eq!(
        g.waiting_text(31.5, Duration::from_secs(3)),
        "waiting for 40 % free memory: now 31.5 % (waited 3.0s of 10.0s)"
    );
    let half = Gate {
        want_pct: 40.5,
        timeout: None,
    };
    assert_eq!(
        half.passed_text(41.0, Duration::from_millis(2500)),
        "waited 2.5s for 40.5 % free memory (now 41.0 %)"
    );
}

/// A tick with swap in use at `swap_used` and these flags, `watched` the
/// tick's watched pids.
fn tick(swap_used: u64, watched: &[u32], flags: &[(u32, State)]) -> Tick {
    Tick {
        sample: Sample {
            t_ms: 0,
            system: SystemSample {
                swap_used_bytes: swap_used,
                ..Default::default()
            },
            processes: Vec::new(),
            scope: None,
        },
        watched: watched.to_vec(),
        flags: flags
            .iter()
            .map(|&(pid, state)| Flag {
                t_ms: 0,
                pid,
                name: format!("p{pid}"),
                state,
                previous: State::Fits,
                evidence: Evidence::default(),
                message: String::new(),
            })
            .collect(),
        view: Default::default(),
        flagged: Vec::new(),
        activity: Vec::new(),
        forecast: Default::default(),
        forecast_fired: Vec::new(),
        scope_note: None,
    }
}

#[test]
fn the_guard_continues_within_the_budget_and_stops_past_it_with_code_10() {
    let mut rules = StopRules {
        budget: Some(Budget::new(512 << 20, 1 << 30)),
        ..StopRules::default()
    };
    let nobody = |_| false;
    assert_eq!(
        rules.decide(&tick((1 << 30) + (512 << 20), &[], &[]), nobody),
        Decision::Continue
    );
    let stop = rules.decide(&tick((1 << 30) + (512 << 20) + 1, &[], &[]), nobody);
    assert_eq!(
        stop,
        Decision::Stop(StopReason::Budget {
            grown_bytes: (512 << 20) + 1,
            budget_bytes: 512 << 20,
        })
    );
    let Decision::Stop(reason) = stop else {
        unreachable!()
    };
    assert_eq!(reason.exit_code(), Some(10));
    // Without a budget swap can grow as it likes.
    assert_eq!(
        StopRules::default().decide(&tick(u64::MAX, &[], &[]), nobody),
        Decision::Continue
    );
}

#[test]
fn a_false_fit_stops_only_when_asked_and_only_for_a_member_of_the_tree() {
    let ff = |pid| tick(0, &[7], &[(3, State::Overflow), (pid, State::FalseFit)]);
    let in_tree = |pid| pid == 8;
    let mut warn = StopRules::default();
    assert_eq!(warn.decide(&ff(7), in_tree), Decision::Continue);
    let mut stop = StopRules {
        stop_on_false_fit: true,
        ..StopRules::default()
    };
    // A bystander's false fit is not the tree's.
    assert_eq!(stop.decide(&ff(9), in_tree), Decision::Continue);
    for member in [7, 8] {
        let decision = stop.decide(&ff(member), in_tree);
        let reason = StopReason::FalseFit {
            pid: member,
            name: format!("p{member}"),
        };
        assert_eq!(reason.exit_code(), Some(11));
        assert_eq!(decision, Decision::Stop(reason));
    }
    // The budget comes first when both are broken at one tick.
    let mut both = StopRules {
        budget: Some(Budget::new(0, 0)),
        stop_on_false_fit: true,
        ..StopRules::default()
    };
    let mut t = ff(7);
    t.sample.system.swap_used_bytes = 1;
    assert!(matches!(
        both.decide(&t, in_tree),
        Decision::Stop(StopReason::Budget { .. })
    ));
}

#[test]
fn each_stop_reason_says_its_exit_code() {
    assert_eq!(StopReason::Signal { name: "SIGINT" }.exit_code(), None);
    assert_eq!(StopReason::Leftovers.exit_code(), None);
    assert_eq!(
        StopReason::ProbeFailed { why: "x".into() }.exit_code(),
        Some(1)
    );
    assert_eq!(
        StopReason::TraceFailed { why: "x".into() }.exit_code(),
        Some(1)
    );
}

#[test]
fn stop_before_acts_on_the_budget_and_floor_forecasts_with_code_13() {
    use crate::step::forecast::{Forecast, Limit};
    let mut rules = StopRules {
        stop_before: Some(Duration::from_secs(10)),
        ..StopRules::default()
    };
    let nobody = |_| false;
    let at = |f: Forecast| {
        let mut t = tick(0, &[], &[]);
        t.forecast = f;
        t
    };
    // Not at this rate, or further than 10 s: continue.
    assert_eq!(
        rules.decide(&at(Forecast::default()), nobody),
        Decision::Continue
    );
    let far = Forecast {
        swap_budget_s: Some(10.5),
        ..Forecast::default()
    };
    assert_eq!(rules.decide(&at(far), nobody), Decision::Continue);
    // Swap full is the OS's business, not the run's: never stops it.
    let full = Forecast {
        swap_full_s: Some(1.0),
        ..Forecast::default()
    };
    assert_eq!(rules.decide(&at(full), nobody), Decision::Continue);
    // The nearest of budget and floor under 10 s.
    let near = Forecast {
        swap_budget_s: Some(8.0),
        free_floor_s: Some(6.5),
        swap_full_s: None,
        ..Forecast::default()
    };
    let Decision::Stop(reason) = rules.decide(&at(near), nobody) else {
        panic!("no stop");
    };
    assert_eq!(
        reason,
        StopReason::Forecast {
            limit: Limit::FreeFloor,
            eta_ms: 6500,
            within: Duration::from_secs(10),
        }
    );
    assert_eq!(reason.exit_code(), Some(13));
    assert_eq!(
        reason.why(Duration::from_secs(15)),
        "the forecast put the free memory floor 6.5s away (under 10.0s) after 15.0s"
    );
}

#[test]
fn stop_at_pressure_acts_on_the_level_with_code_14_and_never_without_one() {
    use crate::step::pressure::{Level, Pressure};
    let nobody = |_| false;
    let at = |level: Option<Level>| {
        let mut t = tick(0, &[], &[]);
        t.sample.system.pressure = level.map(|l| Pressure {
            level: Some(l),
            ..Pressure::default()
        });
        t
    };
    let mut warn = StopRules {
        stop_at_pressure: Some(Level::Warning),
        ..StopRules::default()
    };
    let mut crit = StopRules {
        stop_at_pressure: Some(Level::Critical),
        ..StopRules::default()
    };
    // No pressure figures: nothing to act on (never read as calm or as not).
    assert_eq!(warn.decide(&at(None), nobody), Decision::Continue);
    assert_eq!(
        warn.decide(&at(Some(Level::Normal)), nobody),
        Decision::Continue
    );
    assert_eq!(
        crit.decide(&at(Some(Level::Warning)), nobody),
        Decision::Continue
    );
    for (rules, level) in [(&mut warn, Level::Warning), (&mut crit, Level::Critical)] {
        let d = rules.decide(&at(Some(level)), nobody);
        assert_eq!(d, Decision::Stop(StopReason::Pressure { level }));
    }
    let reason = StopReason::Pressure {
        level: Level::Critical,
    };
    assert_eq!(reason.exit_code(), Some(14));
    assert_eq!(
        reason.why(Duration::from_secs(3)),
        "memory pressure reached critical after 3.0s"
    );
}

/// The macOS level through the whole pipeline: a scripted probe answers
/// the kernel's level (normal, then warning) as the Mac's does, the monitor
/// takes it as the level in force, and `--stop-at-pressure warning` stops
/// at the first warning tick.
#[test]
fn the_macos_kernel_level_from_a_scripted_probe_stops_the_guard() {
    use crate::probe::scripted::ScriptedProbe;
    use crate::probe::Probe;
    use crate::step::monitor::Monitor;
    use crate::step::pressure::{Level, Pressure};
    let mut probe = ScriptedProbe::new(16 << 30, |n| {
        let sys = SystemSample {
            phys_bytes: 16 << 30,
            free_pct: 40.0,
            available_pct: Some(40.0),
            pressure: Some(Pressure {
                kernel_level: Some(if n < 4 { Level::Normal } else { Level::Warning }),
                ..Pressure::default()
            }),
            ..SystemSample::default()
        };
        (sys, Vec::new())
    });
    let mut monitor = Monitor::new(None, crate::step::detect::DetectorConfig::default());
    let mut rules = StopRules {
        stop_at_pressure: Some(Level::Warning),
        ..StopRules::default()
    };
    let mut stopped_at = None;
    for n in 1..=6u64 {
        let (system, processes) = probe.sample().unwrap();
        let t = monitor.step(Sample {
            t_ms: n * 500,
            system,
            processes,
            ..Sample::default()
        });
        if let Decision::Stop(reason) = rules.decide(&t, |_| false) {
            assert_eq!(
                reason,
                StopReason::Pressure {
                    level: Level::Warning
                }
            );
            stopped_at = Some(n);
            break;
        }
        assert_eq!(t.sample.system.pressure.unwrap().level, Some(Level::Normal));
    }
    assert_eq!(stopped_at, Some(4));
}

#[test]
fn the_guards_decision_counts_the_scopes_swap_where_it_has_its_own() {
    let scoped = |host_swap: u64, scope_swap: u64| {
        let mut t = tick(host_swap, &[], &[]);
        t.sample.scope = Some(crate::probe::Scope {
            limit_bytes: 256 << 20,
            swap_bytes: Some(scope_swap),
            ..crate::probe::Scope::default()
        });
        t
    };
    let mut rules = StopRules {
        budget: Some(Budget::new(512 << 20, 1 << 30)),
        ..StopRules::default()
    };
    let nobody = |_| false;
    // The host's swap tripled, the job's cgroup swap barely moved.
    assert_eq!(
        rules.decide(&scoped(1 << 30, 0), nobody),
        Decision::Continue
    );
    assert_eq!(
        rules.decide(&scoped(3 << 30, 64 << 20), nobody),
        Decision::Continue
    );
    assert_eq!(
        rules.decide(&scoped(3 << 30, 600 << 20), nobody),
        Decision::Stop(StopReason::Budget {
            grown_bytes: 600 << 20,
            budget_bytes: 512 << 20,
        })
    );
}
