//! `swapsight guard`: run a command once enough memory is free, record it
//! exactly as `record` does, and stop its whole process tree when swap has
//! grown past a budget (or, on request, when the detector flags a false fit).
//!
//! Glue only: the gate, the budget, the decision to stop
//! (`StopRules::decide`, with each reason's exit code), the stop line and the
//! loop that stops a tree are in `swapsight::guard`; the loop over the
//! ticks, shared with `record`, is `session::tick_loop`; the process table,
//! `kill(2)`, reaping and the child subreaper (on Linux, so that any
//! descendant orphaned by its parent — a `setsid` daemon, a child forked
//! just before its parent died — is re-parented to the guard and stays in
//! its tree) are in `process`; how a guarded run ends (the tree stopped,
//! the trace's last events, the exit code) is in `end`.

use std::ops::ControlFlow;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context;
use swapsight::guard::{
    Budget, Decision, Gate, GateState, ProcessControl, Signal, StopPlan, StopReason, StopRules,
};
use swapsight::probe::Probe;
use swapsight::tree::WatchTree;
use swapsight::units::format_bytes;
use swapsight::util::bell;
use swapsight::Tick;

use crate::exit;
use crate::process::{self, Processes, SignalNumber, Signals};
use crate::session::{self, RecordingArgs, StatusLine};
use swapsight::session::RecordingSession;

mod end;

use end::{End, Outcome};

/// What a false-fit flag on the guarded tree does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnFalseFit {
    /// Print the flag and keep going
    Warn,
    /// Stop the tree as if the budget were spent (exit code 11)
    Stop,
}

#[derive(Debug, clap::Args)]
#[command(
    override_usage = "swapsight guard [OPTIONS] -- <CMD> [ARGS]...",
    mut_arg("interval", |a| a.help("Time between samples (and between budget checks), 10ms to 1h")),
    after_help = "The command runs in a process group of its own and is recorded exactly as
`swapsight record` records it. When the budget is spent (or on Ctrl-C), every process of its
tree gets SIGTERM (Ctrl-C: SIGINT), then SIGKILL after --grace; descendants that moved to
another process group or session are tracked by parent pid and stopped too. Processes that a
command leaves behind when it exits by itself are stopped the same way. The command cannot
read from the terminal (it is not in the foreground process group).

Exit codes: the command's own when it ends by itself; 10 swap budget spent; 11 false fit
(--on-false-fit stop); 12 gave up waiting for free memory; 13 the forecast put a limit under
--stop-before; 14 memory pressure reached --stop-at-pressure; 126 cannot run; 127 not found;
130 / 143 the guard got SIGINT / SIGTERM.

Examples:
  swapsight guard --wait-free 40 --swap-budget 8G -- python generate.py
  swapsight guard --swap-budget 2G --grace 10s -o run.jsonl -- make -j8
  swapsight guard --on-false-fit stop -- python generate.py --offload"
)]
pub struct Args {
    /// Start the command only once at least PCT % of memory is available (macOS: the kernel's kern.memorystatus_level, not Activity Monitor's free; Linux: MemAvailable)
    #[arg(long, value_name = "PCT", value_parser = crate::args::percent, allow_hyphen_values = true)]
    pub wait_free: Option<f64>,
    /// Give up waiting for free memory after DUR (exit code 12) [default: wait as long as it takes]
    #[arg(long, value_name = "DUR", value_parser = crate::args::duration, allow_hyphen_values = true)]
    pub wait_timeout: Option<Duration>,
    /// Stop the tree once swap has grown by more than SIZE since the command started (exit code 10)
    #[arg(long, value_name = "SIZE", value_parser = crate::args::size, allow_hyphen_values = true)]
    pub swap_budget: Option<u64>,
    /// Stop the tree once the forecast says the swap budget or the free-memory floor is less than DUR away (exit code 13)
    #[arg(long, value_name = "DUR", value_parser = crate::args::duration, allow_hyphen_values = true)]
    pub stop_before: Option<Duration>,
    /// Stop the tree once memory pressure reaches LEVEL, warning or critical (macOS: the kernel's level; Linux: derived from PSI) (exit code 14); refused (exit 2) where the OS gives no pressure
    #[arg(long, value_name = "LEVEL", value_parser = crate::args::pressure_level, allow_hyphen_values = true)]
    pub stop_at_pressure: Option<swapsight::pressure::Level>,
    /// Time the tree gets to exit after SIGTERM, before SIGKILL
    #[arg(long, value_name = "DUR", default_value = "5s", value_parser = crate::args::duration, allow_hyphen_values = true)]
    pub grace: Duration,
    /// What a false-fit flag on the command's tree does
    #[arg(long, value_enum, value_name = "ACTION", default_value_t = OnFalseFit::Warn)]
    pub on_false_fit: OnFalseFit,
    #[command(flatten)]
    pub recording: RecordingArgs,
    /// Command to run and guard
    #[arg(last = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
}

/// How long to keep sending SIGKILL to a process that does not die (one in
/// uninterruptible sleep) before reporting it.
const KILL_WAIT: Duration = Duration::from_secs(5);

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (program, rest) = check_args(&args)?;
    let (ringer, bell) = bell::bell();
    let signals = Signals::install(ringer.clone())?;
    let (path, mut probe, host) = session::open_probe(args.recording.output.as_deref())?;
    refuse_unkept_stops(&args, &*probe)?;
    let status = StatusLine::new();

    let gate = pass_gate(&args, &mut *probe, &signals, &status, program)?;
    let Launched {
        pid,
        mut procs,
        mut rec,
        mut rules,
        header,
        started,
    } = launch(&args, &mut *probe, host, &path, &ringer, (program, rest))?;
    if let Some((gate, free_pct, waited)) = gate {
        rec.event("guard-wait", gate.passed_text(free_pct, waited), None, None);
    }
    rec.event("command-start", args.command.join(" "), Some(pid), None);
    eprintln!(
        "swapsight: {}",
        started_line(program, pid, rules.budget, &path)
    );

    let (sampler, ticks) = session::start_sampler(probe, args.recording.interval, &header, ringer);
    let mut tree = WatchTree::new(Some(std::process::id()));
    let mut root_name = program.rsplit('/').next().unwrap_or(program).to_string();
    let between = |rec: &RecordingSession| {
        if let Some(sig) = signals.received() {
            let reason = StopReason::Signal { name: sig.name() };
            return Ok(ControlFlow::Break(Outcome::Stop(reason, sig)));
        }
        // A run the trace can no longer follow is stopped as for the
        // budget: a write error never leaves the tree running unwatched.
        if let Some(why) = rec.failed() {
            let why = why.to_string();
            let reason = StopReason::TraceFailed { why };
            return Ok(ControlFlow::Break(Outcome::Stop(reason, Signal::Terminate)));
        }
        procs.reap();
        if let Some(st) = procs.main_status {
            return Ok(ControlFlow::Break(Outcome::Exited(st)));
        }
        Ok(ControlFlow::Continue(()))
    };
    let on_tick = |tick: &Tick| {
        tree.update(&tick.sample.processes);
        if let Some(p) = tick.sample.processes.iter().find(|p| p.pid == pid) {
            if *root_name != *p.name {
                root_name = p.name.to_string();
            }
        }
        match rules.decide(tick, |member| tree.contains(member)) {
            Decision::Stop(reason) => ControlFlow::Break(Outcome::Stop(reason, Signal::Terminate)),
            Decision::Continue => {
                status.show_text(&running_text(tick, started.elapsed(), rules.budget));
                ControlFlow::Continue(())
            }
        }
    };
    let outcome = session::tick_loop(&bell, &ticks, &mut rec, &status, between, on_tick)?
        .unwrap_or(Outcome::SamplerDied);
    status.clear();
    rec.finish_marks(Instant::now());

    let mut plan = StopPlan::new(Signal::Terminate, args.grace);
    plan.kill_wait = KILL_WAIT;
    plan.group = Some(pid);
    plan.exclude.insert(std::process::id());
    let end = End {
        procs,
        tree,
        rec,
        ticks: &ticks,
        pid,
        root_name,
        elapsed: started.elapsed(),
        plan,
    };
    end.close(outcome, sampler, &path)
}

/// The command started under the guard, its trace open.
struct Launched {
    pid: u32,
    procs: Processes,
    rec: RecordingSession,
    rules: StopRules,
    header: swapsight::trace::Header,
    started: Instant,
}

/// Starts the command (`program` and its arguments) with the swap baseline
/// taken just before it, in its own process group, and opens its trace;
/// a trace that cannot be made stops the command's group at once.
fn launch(
    args: &Args,
    probe: &mut dyn Probe,
    host: swapsight::probe::HostInfo,
    path: &Path,
    ringer: &bell::Ringer,
    (program, rest): (&str, &[String]),
) -> anyhow::Result<Launched> {
    let baseline = probe
        .system()
        .context("cannot read swap in use")?
        .swap_used_bytes;
    let rules = args.rules(baseline);
    process::become_subreaper();
    let mut command = std::process::Command::new(program);
    command.args(rest).process_group(0);
    let marks = session::open_marks(path, Some(&mut command), ringer);
    let pid = process::spawn_command(&mut command, program)?.id();
    process::ring_on_exit(pid, ringer.clone());
    // From here on the guard reaps its children itself (waitpid), the command
    // included: the `Child` handle is not used again.
    let started = Instant::now();
    let mut procs = Processes::new(pid)?;
    let mut header = session::header(
        &*probe,
        host,
        &args.recording,
        Some(pid),
        &args.command,
        "guard",
    );
    header.forecast.swap_budget_bytes = args.swap_budget;
    header.forecast.swap_start_bytes = Some(baseline);
    let rec = session::create_trace(path, &header, marks, || {
        procs.signal_group(pid, Signal::Kill);
        procs.wait_main(Duration::from_secs(2));
    })?;
    Ok(Launched {
        pid,
        procs,
        rec,
        rules,
        header,
        started,
    })
}

/// A stop the guard cannot keep is refused before anything starts: the
/// command would otherwise run unprotected and the guard exit 0.
fn refuse_unkept_stops(args: &Args, probe: &dyn swapsight::Probe) -> anyhow::Result<()> {
    if let (Some(level), Some(why)) = (args.stop_at_pressure, probe.pressure_absent()) {
        return Err(exit::fail(
            exit::USAGE,
            format!(
                "--stop-at-pressure {level} needs memory pressure figures, and this machine gives none: {why}"
            ),
        ));
    }
    Ok(())
}

impl Args {
    /// The stop rules of these flags, the swap budget counted from
    /// `baseline` (swap in use as the command starts).
    fn rules(&self, baseline: u64) -> StopRules {
        StopRules {
            budget: self.swap_budget.map(|b| Budget::new(b, baseline)),
            stop_before: self.stop_before,
            stop_at_pressure: self.stop_at_pressure,
            stop_on_false_fit: self.on_false_fit == OnFalseFit::Stop,
        }
    }
}

/// With `--wait-free`, waits until the gate opens: the gate, free memory
/// then and the time waited; without it, `None` at once.
fn pass_gate(
    args: &Args,
    probe: &mut dyn Probe,
    signals: &Signals,
    status: &StatusLine,
    program: &str,
) -> anyhow::Result<Option<(Gate, f64, Duration)>> {
    let Some(want_pct) = args.wait_free else {
        return Ok(None);
    };
    let gate = Gate {
        want_pct,
        timeout: args.wait_timeout,
    };
    let (free_pct, waited) = wait_for_free(probe, gate, signals, status, program)?;
    Ok(Some((gate, free_pct, waited)))
}

/// The command to guard, split into program and arguments, once the flags
/// that only make sense together are checked (here rather than by clap,
/// whose messages for these span lines).
fn check_args(args: &Args) -> anyhow::Result<(&str, &[String])> {
    let [program, rest @ ..] = args.command.as_slice() else {
        return Err(exit::fail(
            exit::USAGE,
            "no command to guard: swapsight guard [OPTIONS] -- CMD ARGS... (see --help)",
        ));
    };
    session::check_command(&args.command)?;
    args.recording.check()?;
    if args.wait_timeout.is_some() && args.wait_free.is_none() {
        return Err(exit::fail(
            exit::USAGE,
            "--wait-timeout needs --wait-free (see --help)",
        ));
    }
    Ok((program, rest))
}

/// `started python (pid 4242) with a swap budget of 8.0 GiB (swap in use:
/// 1.2 GiB); recording to run.jsonl (Ctrl-C to stop)`
fn started_line(program: &str, pid: u32, budget: Option<Budget>, path: &Path) -> String {
    let budget_text = match budget {
        Some(b) => format!(
            "with a swap budget of {} (swap in use: {})",
            format_bytes(b.budget_bytes as i64),
            format_bytes(b.baseline_bytes as i64)
        ),
        None => "without a swap budget".to_string(),
    };
    format!(
        "started {program} (pid {pid}) {budget_text}; recording to {} (Ctrl-C to stop)",
        path.display()
    )
}

/// `00:12  watched 1.2 GiB  swap +340 MiB  free 72 %  fits  budget 8.0 GiB`
fn running_text(tick: &Tick, elapsed: Duration, budget: Option<Budget>) -> String {
    let text = session::status_text(tick, elapsed);
    match budget {
        Some(b) => format!("{text}  budget {}", format_bytes(b.budget_bytes as i64)),
        None => text,
    }
}

/// Waits until the gate opens; returns free memory then and the time waited.
fn wait_for_free(
    probe: &mut dyn Probe,
    gate: Gate,
    signals: &Signals,
    status: &StatusLine,
    program: &str,
) -> anyhow::Result<(f64, Duration)> {
    const CHECK: Duration = Duration::from_millis(100);
    const NOTE_EVERY: Duration = Duration::from_secs(30);
    let start = Instant::now();
    let mut last_note: Option<Instant> = None;
    loop {
        let free_pct = probe
            .system()
            .context("cannot read free memory")?
            .available_pct();
        let waited = start.elapsed();
        match gate.check(free_pct, waited) {
            GateState::Open => {
                status.clear();
                return Ok((free_pct, waited));
            }
            GateState::TimedOut => {
                status.clear();
                return Err(exit::fail(
                    exit::WAIT_TIMEOUT,
                    format!(
                        "{}; {program} was not started",
                        gate.timeout_text(free_pct, waited)
                    ),
                ));
            }
            GateState::Waiting => {}
        }
        if let Some(sig) = signals.received() {
            status.clear();
            return Err(exit::fail(
                128u8.wrapping_add(sig.number() as u8),
                format!(
                    "interrupted by {} while waiting for free memory; {program} was not started",
                    sig.name()
                ),
            ));
        }
        let text = gate.waiting_text(free_pct, waited);
        if status.is_tty() {
            status.show_text(&text);
        } else if last_note.is_none_or(|t| t.elapsed() >= NOTE_EVERY) {
            eprintln!("swapsight: {text}");
            last_note = Some(Instant::now());
        }
        std::thread::sleep(CHECK);
    }
}
