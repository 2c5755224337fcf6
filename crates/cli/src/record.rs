//! `swapsight record`: sample the machine, watch a command or a pid, write a
//! trace, show a live status line.

use std::path::PathBuf;
use std::process::{Child, ExitCode};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Context;
use swapsight::recorder::{default_trace_path, header_now, Recorder};
use swapsight::units::{format_bytes, format_duration};
use swapsight::{SamplerConfig, Tick};

use crate::{exit, process};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The recording stops when the command (or --pid) exits, or on Ctrl-C; the trace on \
disk is complete either way (every line is flushed as it is written). With a command, swapsight exits \
with the command's exit code.

Examples:
  swapsight record -- python generate.py
  swapsight record -o offload.jsonl --interval 250ms -- python generate.py --offload
  swapsight record --pid 4242            watch a process that is already running
  swapsight record                       the whole machine, until Ctrl-C"
)]
pub struct Args {
    /// Trace file to write [default: swapsight-YYYYMMDD-HHMMSS.jsonl]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Time between samples (10ms to 1h)
    #[arg(long, default_value = "500ms", value_parser = crate::args::interval, allow_hyphen_values = true)]
    pub interval: Duration,
    /// Also keep the N largest processes in each sample
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = crate::args::count, allow_hyphen_values = true)]
    pub top: usize,
    /// Watch a running process (and its descendants) instead of starting one
    #[arg(long, value_name = "PID", conflicts_with = "command")]
    pub pid: Option<u32>,
    /// Command to run and watch
    #[arg(last = true, value_name = "CMD ARGS")]
    pub command: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    check_command(&args.command)?;
    if let Some(pid) = args.pid {
        process::ensure_pid_exists(pid)?;
    }
    let stop = process::ctrl_c_flag()?;
    let (path, probe, host) = crate::record::open_probe(args.output.as_deref())?;
    let mut marks = crate::marking::Marks::open(&path);

    let mut child = match args.command.as_slice() {
        [] => None,
        [program, rest @ ..] => {
            let mut command = std::process::Command::new(program);
            command.args(rest);
            marks.export(&mut command);
            Some(process::spawn_command(&mut command, program)?)
        }
    };
    let watch = child.as_ref().map(Child::id).or(args.pid);

    let mut header = header_now(host, args.interval.as_millis() as u64, args.top);
    header.watch_pid = watch;
    header.command = (!args.command.is_empty()).then(|| args.command.clone());
    header.writer = format!("swapsight {} record", env!("CARGO_PKG_VERSION"));
    let mut trace = match Recorder::create(&path, &header) {
        Ok(r) => TraceSink::new(r),
        Err(e) => {
            if let Some(c) = child.as_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(e.into());
        }
    };
    if let (Some(c), Some(cmd)) = (child.as_ref(), header.command.as_ref()) {
        trace.event("command-start", cmd.join(" "), Some(c.id()), None);
    }
    eprintln!(
        "swapsight: recording to {} (Ctrl-C to stop)",
        path.display()
    );

    let sampler = swapsight::Sampler::spawn(
        probe,
        SamplerConfig {
            interval: args.interval,
            history: 4,
            watch,
            detector: header.detector.clone(),
        },
    );
    let ticks = sampler.subscribe(64);
    let status = StatusLine::new();
    let started = Instant::now();
    // A trace that cannot be written (a full disk) does not abandon the
    // command: it runs its course, watched live, and the exit code says
    // the trace is incomplete. Without a command there is nothing to wait
    // for, so the recording ends there.
    let mut told = false;
    let outcome = loop {
        if stop.load(Ordering::SeqCst) {
            break Outcome::Interrupted;
        }
        if let (false, Some(why)) = (told, trace.failed()) {
            told = true;
            status.clear();
            let Some(c) = child.as_ref() else {
                break Outcome::TraceFailed;
            };
            eprintln!(
                "swapsight: {why}; still watching {} (pid {}) until it exits, without recording",
                args.command[0],
                c.id()
            );
        }
        if let Some(c) = child.as_mut() {
            if let Some(st) = c.try_wait()? {
                break Outcome::Exited(st);
            }
        } else if let Some(pid) = args.pid {
            if !process::pid_exists(pid) {
                break Outcome::PidGone(pid);
            }
        }
        marks.pump(&mut trace);
        match ticks.recv_timeout(Duration::from_millis(100)) {
            Ok(tick) => {
                trace.tick(&tick);
                for f in &tick.flags {
                    status.clear();
                    eprintln!(
                        "swapsight: {} ({}): {} — {}",
                        f.name,
                        f.pid,
                        f.state.label(),
                        f.message
                    );
                }
                status.show(&tick, started.elapsed());
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break Outcome::SamplerDied,
        }
    };
    // The last tick's flags are in the trace; end it with what happened.
    let sampler_result = sampler.stop();
    marks.finish(&mut trace);
    status.clear();
    let code = match outcome {
        Outcome::Exited(st) => {
            trace.event("command-exit", format!("{st}"), watch, st.code());
            if let Some(why) = trace.failed() {
                return Err(exit::fail(
                    exit::ERROR,
                    format!(
                        "{why}: the trace ends early; {} exited ({st})",
                        args.command[0]
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
            if let Some(c) = child.as_mut() {
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
                format!("recording stopped: {why}; trace kept in {}", path.display()),
            ));
        }
    };
    if let Some(why) = trace.failed() {
        return Err(exit::fail(
            exit::ERROR,
            format!("{why}: the trace ends early"),
        ));
    }
    eprintln!("{}", finished_line(trace.recorder()));
    Ok(code)
}

/// `-- ''`: say so, rather than "command not found: " with no name.
pub fn check_command(command: &[String]) -> anyhow::Result<()> {
    if command.first().is_some_and(|p| p.trim().is_empty()) {
        return Err(exit::fail(
            exit::USAGE,
            "the command is empty: give a program after -- (see --help)",
        ));
    }
    Ok(())
}

/// The trace while it can be written. After the first failed write (a full
/// disk) nothing more is written, so no line can land after a partial one;
/// the failure is kept to be said once.
pub struct TraceSink {
    rec: Recorder,
    failed: Option<String>,
}

impl TraceSink {
    pub fn new(rec: Recorder) -> TraceSink {
        TraceSink { rec, failed: None }
    }

    pub fn recorder(&self) -> &Recorder {
        &self.rec
    }

    /// `cannot write the trace FILE (why)`, once a write has failed.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    pub fn tick(&mut self, tick: &Tick) {
        if self.failed.is_none() {
            let r = self.rec.tick(tick);
            self.keep(r);
        }
    }

    pub fn event(
        &mut self,
        kind: &str,
        message: impl Into<String>,
        pid: Option<u32>,
        code: Option<i32>,
    ) {
        if self.failed.is_none() {
            let r = self.rec.event(kind, message, pid, code);
            self.keep(r);
        }
    }

    pub fn mark(&mut self, name: &str, end: bool) {
        if self.failed.is_none() {
            let r = self.rec.mark(name, end).map(drop);
            self.keep(r);
        }
    }

    fn keep(&mut self, r: Result<(), swapsight::trace::TraceError>) {
        if let Err(e) = r {
            let why = std::error::Error::source(&e).map_or_else(String::new, |s| format!(" ({s})"));
            self.failed = Some(format!(
                "cannot write the trace {}{why}",
                self.rec.path().display()
            ));
        }
    }
}

/// The trace path (`output`, or a dated name in the current folder) and the
/// platform probe with the host's facts.
pub fn open_probe(
    output: Option<&std::path::Path>,
) -> anyhow::Result<(
    PathBuf,
    Box<dyn swapsight::Probe + Send>,
    swapsight::probe::HostInfo,
)> {
    let path = output.map_or_else(
        || {
            default_trace_path(
                std::path::Path::new("."),
                swapsight::recorder::unix_now_ms(),
            )
        },
        std::path::Path::to_path_buf,
    );
    let mut probe = swapsight::probe::native().context("cannot start the memory probe")?;
    let host = probe
        .host()
        .context("cannot read the host's memory facts")?;
    Ok((path, probe, host))
}

/// `swapsight: 64 samples over 31.5s in run.jsonl; next: swapsight report run.jsonl`
pub fn finished_line(rec: &Recorder) -> String {
    let path = rec.path().display();
    format!(
        "swapsight: {} samples over {} in {path}; next: swapsight report {path}",
        rec.samples(),
        format_duration(Duration::from_millis(rec.elapsed_ms())),
    )
}

enum Outcome {
    Exited(std::process::ExitStatus),
    PidGone(u32),
    Interrupted,
    TraceFailed,
    SamplerDied,
}

/// The live one-line status on stderr, redrawn in place when stderr is a
/// terminal; silent otherwise (logs get the flag lines only).
pub struct StatusLine {
    tty: bool,
}

impl StatusLine {
    pub fn new() -> Self {
        StatusLine {
            // SAFETY: isatty only inspects the descriptor.
            tty: unsafe { libc::isatty(2) } == 1,
        }
    }

    pub fn show(&self, tick: &Tick, elapsed: Duration) {
        self.show_text(&status_text(tick, elapsed));
    }

    /// Any text as the status line (on a terminal only).
    pub(crate) fn show_text(&self, text: &str) {
        if self.tty {
            eprint!("\r\x1b[K{text}");
        }
    }

    pub(crate) fn is_tty(&self) -> bool {
        self.tty
    }

    pub fn clear(&self) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
    }
}

/// `00:12  watched 1.2 GB  swap +340 MB  free 72 %  fits`
pub fn status_text(tick: &Tick, elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    let state = tick
        .flagged
        .iter()
        .filter(|a| tick.watched.is_empty() || tick.watched.contains(&a.pid))
        .map(|a| a.state)
        .max()
        .unwrap_or_default();
    let watched = if tick.watched.is_empty() {
        String::new()
    } else {
        format!(
            "watched {}  ",
            format_bytes(tick.watched_footprint_bytes() as i64)
        )
    };
    format!(
        "{:02}:{:02}  {watched}swap {}{}  free {:.0} %  {}",
        secs / 60,
        secs % 60,
        if tick.view.swap_growth_bytes >= 0 {
            "+"
        } else {
            ""
        },
        format_bytes(tick.view.swap_growth_bytes),
        tick.sample.system.free_pct,
        state.label()
    )
}
