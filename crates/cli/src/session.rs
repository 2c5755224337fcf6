//! What `record` and `guard` both run around the command: the probe and the
//! trace path, the trace's header and the mark inbox (the recording session
//! itself is core's, `swapsight::session`), the sampler, the loop over its
//! ticks, the live status line, the flag lines and the finished line.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use swapsight::marks::{MarkInbox, ENV_VAR};
use swapsight::recorder::Recorder;
use swapsight::recordings::default_trace_path;
use swapsight::session::{Plan, RecordingSession, FIRST_SAMPLE_WAIT};
use swapsight::trace::Header;
use swapsight::units::{format_bytes, format_duration};
use swapsight::util::bell::{Bell, Ringer};
use swapsight::{Sampler, SamplerConfig, Tick};

use crate::exit;

/// The flags of a recording, declared once for `record` and `guard` so that
/// their names, defaults and bounds cannot drift apart. (`guard` words
/// `--interval`'s help its own way: it also checks the budget each sample.)
#[derive(Debug, Clone, clap::Args)]
pub struct RecordingArgs {
    /// Trace file to write [default: swapsight-YYYYMMDD-HHMMSS.jsonl]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Time between samples (10ms to 1h)
    #[arg(long, default_value = "500ms", value_parser = crate::args::interval, allow_hyphen_values = true)]
    pub interval: Duration,
    /// Also keep the N largest processes in each sample
    #[arg(long, default_value_t = 10, value_name = "N", value_parser = crate::args::count, allow_hyphen_values = true)]
    pub top: usize,
    /// Linux: how long PSI must stay over a threshold before the pressure level rises (docs/detector.md)
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = crate::args::duration, allow_hyphen_values = true)]
    pub pressure_hold: Duration,
    /// Linux: PSI `some` avg10 (% of time some task stalled on memory) at which the level is warning [default: 10, nohang's]
    #[arg(long, value_name = "PCT", value_parser = crate::args::psi_share, allow_hyphen_values = true)]
    pub pressure_warn: Option<f64>,
    /// Linux: PSI `some` avg10 at which the level is critical [default: 40, nohang's]
    #[arg(long, value_name = "PCT", value_parser = crate::args::psi_share, allow_hyphen_values = true)]
    pub pressure_critical: Option<f64>,
}

impl RecordingArgs {
    /// Refuses, in one line, what the flags cannot mean together; called
    /// before anything starts.
    pub fn check(&self) -> anyhow::Result<()> {
        match self.pressure().problem() {
            Some(why) => Err(exit::fail(exit::USAGE, format!("{why} (see --help)"))),
            None => Ok(()),
        }
    }

    /// The Linux pressure thresholds these flags ask for.
    pub fn pressure(&self) -> swapsight::pressure::PressureConfig {
        let mut cfg = swapsight::pressure::PressureConfig {
            hold_ms: u64::try_from(self.pressure_hold.as_millis()).unwrap_or(u64::MAX),
            ..Default::default()
        };
        if let Some(warn) = self.pressure_warn {
            cfg.warn_some_avg10 = warn;
        }
        if let Some(critical) = self.pressure_critical {
            cfg.critical_some_avg10 = critical;
        }
        cfg
    }
}

/// The trace's header for a recording by `verb` (`record`, `guard`) with
/// `probe`; says once on stderr when the probe has no memory pressure.
pub fn header(
    probe: &dyn swapsight::Probe,
    host: swapsight::probe::HostInfo,
    args: &RecordingArgs,
    watch: Option<u32>,
    command: &[String],
    verb: &str,
) -> Header {
    let header = swapsight::session::header(
        host,
        &Plan {
            interval: args.interval,
            top_n: args.top,
            watch,
            command,
            verb,
            detector: swapsight::DetectorConfig::default(),
            pressure: args.pressure(),
            pressure_absent: probe.pressure_absent(),
            forecast: swapsight::forecast::ForecastConfig::default(),
        },
    );
    if let Some(why) = &header.pressure_absent {
        eprintln!("swapsight: no memory pressure figures: {why}");
    }
    header
}

/// The mark inbox for a recording to `trace`, its path put in `command`'s
/// environment, ringing `ringer` when marks come. Without one (no private
/// runtime directory) the run is recorded without marks, said once.
pub fn open_marks(
    trace: &Path,
    command: Option<&mut std::process::Command>,
    ringer: &Ringer,
) -> Option<MarkInbox> {
    match MarkInbox::create(trace) {
        Ok(inbox) => {
            inbox.ring_on_marks(ringer.clone());
            if let Some(c) = command {
                c.env(ENV_VAR, inbox.path());
            }
            Some(inbox)
        }
        Err(e) => {
            eprintln!("swapsight: warning: phase marks are off: {e}");
            None
        }
    }
}

/// Creates the trace, or says why not after `on_error` (which stops the
/// command already started).
pub fn create_trace(
    path: &Path,
    header: &Header,
    marks: Option<MarkInbox>,
    on_error: impl FnOnce(),
) -> anyhow::Result<RecordingSession> {
    RecordingSession::create(path, header, marks).map_err(|e| {
        on_error();
        e.into()
    })
}

/// The sampler for a recording with `header`, and its ticks (each rings
/// `ringer`).
pub fn start_sampler(
    probe: Box<dyn swapsight::Probe + Send>,
    interval: Duration,
    header: &Header,
    ringer: Ringer,
) -> (Sampler, Receiver<Arc<Tick>>) {
    let sampler = Sampler::spawn(
        probe,
        SamplerConfig {
            interval,
            history: 4,
            watch: header.watch_pid,
            // The trace keeps the top_n largest (and the watched, flagged).
            named_largest: Some(header.top_n),
            detector: header.detector.clone(),
            pressure: header.pressure.clone(),
            forecast: header.forecast.clone(),
        },
    );
    let ticks = sampler.subscribe_ringing(64, ringer);
    (sampler, ticks)
}

/// How long the loop sleeps when nothing rings: the news that does not
/// ring (a watched `--pid` gone, the guard's SIGTERM) is seen within this
/// or the next tick, whichever comes first.
const QUIET_WAIT: Duration = Duration::from_secs(1);

/// The loop `record` and `guard` share. Before each wait, `between` may end
/// it (a signal, the command's exit, a trace that can no longer be
/// written); the wait is on `bell`, which the sampler rings with each tick
/// and the mark inbox, the command's exit and Ctrl-C ring too — so the
/// loop sleeps until there is news instead of waking on a timer. Each turn
/// of the recording session takes the ticks that came (or none) and the
/// marks that came in; a tick's flags are said above the status line, and
/// the tick is handed to `on_tick`, which may end the loop. `None` when the
/// sampler stopped sending ticks (it died). Ended by `between`, the loop
/// first writes what the sampler already measured ([`take_measured`]).
pub fn tick_loop<T>(
    bell: &Bell,
    ticks: &Receiver<Arc<Tick>>,
    rec: &mut RecordingSession,
    status: &StatusLine,
    mut between: impl FnMut(&RecordingSession) -> anyhow::Result<ControlFlow<T>>,
    mut on_tick: impl FnMut(&Tick) -> ControlFlow<T>,
) -> anyhow::Result<Option<T>> {
    loop {
        if let ControlFlow::Break(end) = between(rec)? {
            take_measured(ticks, rec, status, FIRST_SAMPLE_WAIT);
            return Ok(Some(end));
        }
        bell.wait(QUIET_WAIT);
        let mut took = false;
        loop {
            match ticks.try_recv() {
                Ok(tick) => {
                    took = true;
                    rec.turn(Some(&tick), Instant::now());
                    flag_lines(status, &tick);
                    if let ControlFlow::Break(end) = on_tick(&tick) {
                        return Ok(Some(end));
                    }
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return Ok(None),
            }
        }
        if !took {
            rec.turn(None, Instant::now());
        }
    }
}

/// At the end of a recording, the ticks the sampler already sent, and the
/// first one when none came yet (waiting at most `wait`): a command that
/// ends before the first tick is in (`/bin/true`, a script that fails at
/// once) would otherwise leave a trace with no sample, which `report`
/// cannot judge. A trace that can no longer be written is not waited for.
fn take_measured(
    ticks: &Receiver<Arc<Tick>>,
    rec: &mut RecordingSession,
    status: &StatusLine,
    wait: Duration,
) {
    let take = |rec: &mut RecordingSession, tick: &Tick| {
        rec.turn(Some(tick), Instant::now());
        flag_lines(status, tick);
    };
    while let Ok(tick) = ticks.try_recv() {
        take(rec, &tick);
    }
    if rec.recorder().samples() == 0 && rec.failed().is_none() {
        if let Ok(tick) = ticks.recv_timeout(wait) {
            take(rec, &tick);
        }
    }
}

/// One line per flag of the tick, above the status line.
pub fn flag_lines(status: &StatusLine, tick: &Tick) {
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
        || default_trace_path(std::path::Path::new("."), swapsight::units::unix_now_ms()),
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
        // Formatted only where it is shown: a log or a pipe gets none.
        if self.tty {
            self.show_text(&status_text(tick, elapsed));
        }
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

/// `00:12  watched 1.2 GiB  swap +340 MiB  free 72 %  fits`
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
