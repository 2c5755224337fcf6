//! `swapsight record`: sample the machine, watch a command or a pid, write a
//! trace, show a live status line.

use std::ops::ControlFlow;
use std::process::{Child, ExitCode};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::session::{self, finished_line, RecordingArgs, StatusLine};
use crate::{exit, process};
use swapsight::session::RecordingSession;
use swapsight::util::bell;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The recording stops when the command (or --pid) exits, or on Ctrl-C; the trace on \
disk is complete either way (every line is flushed as it is written). With a command, swapsight exits \
with the command's exit code.

Examples:
  swapsight record -- python generate.py
  swapsight record -o offload.jsonl --interval 250ms -- python generate.py --offload
  swapsight record --pid 4242            watch a process that is already running
  swapsight record                       the whole machine, until Ctrl-C
  swapsight record --push https://mimir.example/api/v1/push -- python generate.py
                                         and send the series to Prometheus as it runs (docs/serve.md)"
)]
pub struct Args {
    #[command(flatten)]
    pub recording: RecordingArgs,
    /// Watch a running process (and its descendants) instead of starting one
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,
    /// Once recording, print the mark path (what $SWAPSIGHT_MARK holds for a
    /// command; empty when marks are off) as one line on stdout: for a
    /// program that records itself (Python's swapsight.record())
    #[arg(long)]
    pub print_mark_path: bool,
    #[command(flatten)]
    pub push: crate::push::PushArgs,
    /// Command to run and watch
    #[arg(last = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    Ok(record(&args)?.code)
}

/// A finished recording: the exit code `record` exits with (the
/// command's, with one) and its trace.
pub struct Recorded {
    pub code: ExitCode,
    pub path: std::path::PathBuf,
}

/// Records as `swapsight record` does (`fit -- CMD` runs its command
/// through here: the same trace), to the end of the command or the pid.
pub fn record(args: &Args) -> anyhow::Result<Recorded> {
    session::check_command(&args.command)?;
    args.recording.check()?;
    let pusher = args.push.config()?.map(crate::push::Pusher::new);
    if let Some(pid) = args.pid {
        process::ensure_pid_exists(pid)?;
    }
    let (ringer, bell) = bell::bell();
    let stop = process::ctrl_c_flag(ringer.clone())?;
    let (path, probe, host) = session::open_probe(args.recording.output.as_deref())?;

    let (marks, mut child) = match args.command.as_slice() {
        [] => (session::open_marks(&path, None, &ringer), None),
        [program, rest @ ..] => {
            let mut command = std::process::Command::new(program);
            command.args(rest);
            let marks = session::open_marks(&path, Some(&mut command), &ringer);
            let child = process::spawn_command(&mut command, program)?;
            process::ring_on_exit(child.id(), ringer.clone());
            (marks, Some(child))
        }
    };
    let watch = child.as_ref().map(Child::id).or(args.pid);

    let header = session::header(
        &*probe,
        host,
        &args.recording,
        watch,
        &args.command,
        "record",
    );
    let mut trace = session::create_trace(&path, &header, marks, || {
        if let Some(c) = child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    })?;
    if let (Some(c), Some(cmd)) = (child.as_ref(), header.command.as_ref()) {
        trace.event("command-start", cmd.join(" "), Some(c.id()), None);
    }
    eprintln!(
        "swapsight: recording to {} (Ctrl-C to stop)",
        path.display()
    );
    if args.print_mark_path {
        // A reader that went away is no reason to stop recording.
        let _ = print_mark_path(trace.mark_path());
    }

    let (sampler, ticks) = session::start_sampler(probe, args.recording.interval, &header, ringer);
    let pusher = pusher.map(|mut p| {
        p.start(exposition(sampler.subscribe(4)));
        p
    });
    let status = StatusLine::new();
    let started = Instant::now();
    // A trace that cannot be written (a full disk) does not abandon the
    // command: it runs its course, watched live, and the exit code says
    // the trace is incomplete. Without a command there is nothing to wait
    // for, so the recording ends there.
    let mut told = false;
    let between = |trace: &RecordingSession| {
        if stop.load(Ordering::SeqCst) {
            return Ok(ControlFlow::Break(Outcome::Interrupted));
        }
        if let (false, Some(why)) = (told, trace.failed()) {
            told = true;
            status.clear();
            let Some(c) = child.as_ref() else {
                return Ok(ControlFlow::Break(Outcome::TraceFailed));
            };
            eprintln!(
                "swapsight: {why}; still watching {} (pid {}) until it exits, without recording",
                args.command[0],
                c.id()
            );
        }
        if let Some(c) = child.as_mut() {
            if let Some(st) = c.try_wait()? {
                return Ok(ControlFlow::Break(Outcome::Exited(st)));
            }
        } else if let Some(pid) = args.pid {
            if !process::pid_exists(pid) {
                return Ok(ControlFlow::Break(Outcome::PidGone(pid)));
            }
        }
        Ok(ControlFlow::Continue(()))
    };
    let outcome = session::tick_loop(&bell, &ticks, &mut trace, &status, between, |tick| {
        status.show(tick, started.elapsed());
        ControlFlow::Continue(())
    })?
    .unwrap_or(Outcome::SamplerDied);
    // The last tick's flags are in the trace; end it with what happened,
    // starting with the scope's last word (an OOM kill by the cgroup).
    if matches!(outcome, Outcome::Exited(_)) {
        trace.scope_look(sampler.scope_now().as_ref());
    }
    let sampler_result = sampler.stop();
    if let Some(p) = pusher {
        p.finish();
    }
    trace.finish_marks(Instant::now());
    status.clear();
    let ran = Ran {
        command: &args.command,
        watch,
        path: &path,
    };
    let code = ran.end(outcome, &mut trace, child.as_mut(), sampler_result)?;
    if let Some(why) = trace.failed() {
        return Err(exit::fail(
            exit::ERROR,
            format!("{why}: the trace ends early"),
        ));
    }
    eprintln!("{}", finished_line(trace.recorder()));
    Ok(Recorded { code, path })
}

/// What was recorded: the command (or none), the pid watched, the trace.
struct Ran<'a> {
    command: &'a [String],
    watch: Option<u32>,
    path: &'a std::path::Path,
}

impl Ran<'_> {
    /// Ends the trace with what happened; the exit code, or the error that
    /// says the recording stopped early.
    fn end(
        &self,
        outcome: Outcome,
        trace: &mut RecordingSession,
        child: Option<&mut Child>,
        sampler_result: Result<(), swapsight::probe::ProbeError>,
    ) -> anyhow::Result<ExitCode> {
        Ok(match outcome {
            Outcome::Exited(st) => {
                trace.event("command-exit", format!("{st}"), self.watch, st.code());
                if let Some(why) = trace.failed() {
                    return Err(exit::fail(
                        exit::ERROR,
                        format!(
                            "{why}: the trace ends early; {} exited ({st})",
                            self.command[0]
                        ),
                    ));
                }
                exit::from_status(st)
            }
            Outcome::PidGone(pid) => {
                trace.event(
                    "process-exit",
                    format!("process {pid} exited"),
                    Some(pid),
                    None,
                );
                ExitCode::SUCCESS
            }
            Outcome::Interrupted => {
                trace.event("recording-stop", "interrupted (Ctrl-C)", None, None);
                if let Some(c) = child {
                    // The terminal sent SIGINT to the command too; give it a moment.
                    process::interrupt_and_wait(c, Duration::from_secs(5));
                }
                ExitCode::from(130)
            }
            Outcome::TraceFailed => {
                let why = trace.failed().unwrap_or("cannot write the trace");
                return Err(exit::fail(exit::ERROR, format!("{why}; recording stopped")));
            }
            Outcome::SamplerDied => {
                let why = match sampler_result {
                    Err(e) => e.to_string(),
                    Ok(()) => "sampler stopped".into(),
                };
                trace.event("recording-stop", format!("probe failed: {why}"), None, None);
                return Err(exit::fail(
                    exit::ERROR,
                    format!(
                        "recording stopped: {why}; trace kept in {}",
                        self.path.display()
                    ),
                ));
            }
        })
    }
}

/// What `--push` sends: the exposition of the newest tick (as `serve`'s
/// `/metrics` renders it), from a subscription of the push's own, so the
/// sampler never waits on it (a full subscription loses ticks instead).
fn exposition(
    ticks: std::sync::mpsc::Receiver<std::sync::Arc<swapsight::Tick>>,
) -> impl FnMut() -> Option<String> + Send + 'static {
    use swapsight::export::prometheus::{render, Snapshot, DEFAULT_MAX_PROCESSES};
    let mut latest = None;
    move || {
        while let Ok(tick) = ticks.try_recv() {
            latest = Some(tick);
        }
        let tick = latest.as_ref()?;
        Some(render(&Snapshot::from_tick(tick), DEFAULT_MAX_PROCESSES))
    }
}

/// The mark path as one line on stdout, flushed: the reader waits for it.
fn print_mark_path(path: Option<&std::path::Path>) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Some(p) = path {
        out.write_all(p.as_os_str().as_encoded_bytes())?;
    }
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

enum Outcome {
    Exited(std::process::ExitStatus),
    PidGone(u32),
    Interrupted,
    TraceFailed,
    SamplerDied,
}
