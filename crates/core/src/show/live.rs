//! The live session behind every interactive shell — the menu-bar app and
//! `swapsight serve`. It owns a [`Sampler`], turns each tick into the view a
//! UI draws ([`Snapshot`]: header figures, per-process rows, menu-bar
//! title), keeps a compact chart history, writes a recording when asked and
//! says when a notification is due. Both shells only translate its methods
//! into their transport (Tauri commands and events; HTTP and SSE), so the UI
//! sees the same JSON either way.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::probe::{HostInfo, Probe};
use crate::record::recordings::RecordingError;
use crate::record::session::RecordingSession;
use crate::step::sampler::{Sampler, SamplerConfig};

mod display;
mod on_tick;
mod own_commands;
mod recording;
mod replay;

use on_tick::{log_marks, on_tick};

pub use crate::record::session::FIRST_SAMPLE_WAIT;
pub use display::{
    forecast_notices, full_title, notice_of, pressure_notice, title, Notice, Point,
    PressureAnnouncer, RecordingStatus, Row, Snapshot, Update, LOW_FREE_PCT,
};
pub use own_commands::keep_commands_in_jsonl;
pub use replay::{replay, replay_trace, Replay, REPLAY_COUNTERS, REPLAY_POINTS, REPLAY_ROWS};

/// How a live session runs.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// The sampler's settings.
    pub sampler: SamplerConfig,
    /// Seconds of chart history kept.
    pub history_secs: u64,
    /// Rows in a snapshot besides flagged and pinned processes.
    pub rows: usize,
    /// Processes drawn in the chart.
    pub chart_processes: usize,
    /// Where recordings go.
    pub recordings_dir: PathBuf,
    /// Whose command lines the session shows: `None`, every one the OS
    /// shows its user (the app, which serves that user alone); `Some(uid)`,
    /// those of `uid`'s processes only, in rows, events, the recordings it
    /// writes and the ones it reads (`swapsight serve`, which other users
    /// can reach). See `own_commands`.
    pub commands_of: Option<u32>,
}

impl Default for LiveConfig {
    fn default() -> Self {
        LiveConfig {
            sampler: SamplerConfig {
                history: 2,
                ..SamplerConfig::default()
            },
            history_secs: 300,
            rows: 40,
            chart_processes: 5,
            recordings_dir: std::env::temp_dir(),
            commands_of: None,
        }
    }
}

/// Errors of live commands, in words a UI can show as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// A recording is running already, to this trace.
    #[error("already recording to {0}")]
    AlreadyRecording(PathBuf),
    /// A stop with no recording running.
    #[error("not recording")]
    NotRecording,
    /// A command named pid 0, which is no process to watch (the kernel's
    /// scheduler on Linux, `kernel_task` on macOS).
    #[error("bad pid 0: expected a process id")]
    BadPid,
    /// A pid no process has: above any kernel's pid limit, or not running
    /// (a trace would watch nothing, and a pid past `i32` reads negative).
    #[error("no process {0} to watch")]
    NoSuchPid(u32),
    /// A trace could not be written or read.
    #[error(transparent)]
    Trace(#[from] crate::record::trace::TraceError),
    /// The probe could not start or read the host.
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
    /// A recording's name is bad or not in the folder, or the folder
    /// cannot be listed.
    #[error(transparent)]
    Recording(#[from] RecordingError),
}

/// The largest pid any kernel hands out: Linux's `PID_MAX_LIMIT` on 64-bit
/// (4 × 1024 × 1024, `include/linux/threads.h`), above macOS's `PID_MAX`
/// (99999, `bsd/sys/proc_internal.h`).
pub const PID_MAX_LIMIT: u32 = 1 << 22;

impl Live {
    /// pid 0 names no process a user can watch; a pid past the kernels'
    /// limit or of no running process (in the latest tick, or to the OS
    /// for one started since) names none either.
    fn check_pid(&self, pid: Option<u32>) -> Result<(), LiveError> {
        let Some(pid) = pid else {
            return Ok(());
        };
        if pid == 0 {
            return Err(LiveError::BadPid);
        }
        let seen = || {
            self.sampler
                .latest()
                .is_some_and(|t| t.sample.processes.iter().any(|p| p.pid == pid))
        };
        if pid > PID_MAX_LIMIT || !(seen() || crate::record::marks::pid_exists(pid)) {
            return Err(LiveError::NoSuchPid(pid));
        }
        Ok(())
    }
}

struct Inner {
    cfg: LiveConfig,
    host: HostInfo,
    /// Why the probe gives no pressure figures; `None` when it does.
    pressure_absent: Option<String>,
    points: VecDeque<Point>,
    latest: Option<Snapshot>,
    pinned: Option<u32>,
    recorder: Option<(RecordingSession, Option<u32>)>,
    last_recording: Option<PathBuf>,
    subscribers: Vec<SyncSender<Arc<Update>>>,
    recording_error: Option<String>,
    phases: crate::record::phases::PhaseLog,
    /// Nobody is looking (the app's popover is closed): see [`Live::set_idle`].
    idle: bool,
    pacer: crate::step::sampler::Pacer,
    /// The interval last asked of the sampler.
    paced: std::time::Duration,
    /// The pressure level at the last tick, for a notification when it rises.
    last_level: Option<crate::step::pressure::Level>,
}

/// How many of the largest processes a live recording keeps each sample.
pub const RECORDING_TOP_N: usize = 10;

/// How much slower the sampler runs while nobody looks and nothing records.
pub const IDLE_SLOWDOWN: u32 = 2;

/// The sampler's interval for this state: the configured one while someone
/// looks or a recording runs (a trace keeps its interval), else
/// [`IDLE_SLOWDOWN`] times it — the detector's windows are in time, not
/// ticks, so flags and notifications still come, at most one interval later.
fn pace(inner: &Inner) -> std::time::Duration {
    let base = inner.cfg.sampler.interval;
    if inner.idle && inner.recorder.is_none() {
        base.saturating_mul(IDLE_SLOWDOWN)
    } else {
        base
    }
}

/// Asks the sampler for the pace the state calls for, when it changed.
fn repace(inner: &mut Inner) {
    let want = pace(inner);
    if want != inner.paced {
        inner.paced = want;
        inner.pacer.set_interval(want);
    }
}

/// A running live session. Cheap to share behind an `Arc`.
pub struct Live {
    sampler: Sampler,
    inner: Arc<Mutex<Inner>>,
    _consumer: std::thread::JoinHandle<()>,
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(|e| e.into_inner())
}

impl Live {
    /// Starts sampling with `probe`.
    pub fn start(mut probe: Box<dyn Probe + Send>, mut cfg: LiveConfig) -> Result<Live, LiveError> {
        // What a session shows: its rows, a recording's top, `/metrics`.
        cfg.sampler.named_largest = Some(
            cfg.sampler
                .named_largest
                .unwrap_or(0)
                .max(cfg.rows)
                .max(RECORDING_TOP_N)
                .max(crate::show::export::prometheus::DEFAULT_MAX_PROCESSES),
        );
        if let Some(uid) = cfg.commands_of {
            probe = Box::new(own_commands::OwnCommands { probe, uid });
        }
        let host = probe.host()?;
        // Said by the probe before it goes to the sampler's thread: a
        // recording's header carries it, as `record`'s does.
        let pressure_absent = probe.pressure_absent();
        let sampler = Sampler::spawn(probe, cfg.sampler.clone());
        let ticks = sampler.subscribe(8);
        let paced = cfg.sampler.interval;
        let inner = Arc::new(Mutex::new(Inner {
            idle: false,
            pacer: sampler.pacer(),
            paced,
            last_level: None,
            cfg,
            host,
            pressure_absent,
            points: VecDeque::new(),
            latest: None,
            pinned: None,
            recorder: None,
            last_recording: None,
            subscribers: Vec::new(),
            recording_error: None,
            phases: crate::record::phases::PhaseLog::default(),
        }));
        let shared = Arc::clone(&inner);
        let consumer = std::thread::Builder::new()
            .name("swapsight-live".into())
            .spawn(move || {
                for tick in ticks {
                    on_tick(&shared, &tick, std::time::Instant::now());
                }
            })
            .expect("spawning the live thread");
        Ok(Live {
            sampler,
            inner,
            _consumer: consumer,
        })
    }

    /// Starts with the platform's probe and default settings.
    pub fn start_native(recordings_dir: PathBuf) -> Result<Live, LiveError> {
        Live::start(
            crate::probe::native()?,
            LiveConfig {
                recordings_dir,
                ..LiveConfig::default()
            },
        )
    }

    /// Every update from now on; a subscriber that falls `capacity` updates
    /// behind loses updates (and is dropped once it hangs up).
    pub fn subscribe(&self, capacity: usize) -> Receiver<Arc<Update>> {
        let (tx, rx) = std::sync::mpsc::sync_channel(capacity.max(1));
        lock(&self.inner).subscribers.push(tx);
        rx
    }

    /// The latest snapshot; `None` before the first tick.
    pub fn snapshot(&self) -> Option<Snapshot> {
        lock(&self.inner).latest.clone()
    }

    /// A session on the scripted false-fit probe, sampling every 20 ms,
    /// recording into `dir` (tests of core and of the shells).
    #[cfg(any(test, feature = "test-support"))]
    pub fn scripted(dir: &std::path::Path) -> Live {
        Live::scripted_every(dir, std::time::Duration::from_millis(20))
    }

    /// [`Live::scripted`], sampling every `interval`.
    #[cfg(any(test, feature = "test-support"))]
    pub fn scripted_every(dir: &std::path::Path, interval: std::time::Duration) -> Live {
        let cfg = LiveConfig {
            sampler: SamplerConfig {
                interval,
                history: 2,
                ..SamplerConfig::default()
            },
            rows: 10,
            recordings_dir: dir.to_path_buf(),
            ..LiveConfig::default()
        };
        let probe = crate::probe::scripted::ScriptedProbe::false_fit();
        Live::start(Box::new(probe), cfg).expect("the scripted probe starts")
    }

    /// Waits up to `timeout` for the first snapshot (tests).
    #[cfg(any(test, feature = "test-support"))]
    pub fn wait_snapshot(&self, timeout: std::time::Duration) -> Option<Snapshot> {
        let until = std::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.snapshot() {
                return Some(s);
            }
            if std::time::Instant::now() > until {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Chart history of the last `seconds` (all kept when `None`).
    pub fn history(&self, seconds: Option<u64>) -> Vec<Point> {
        let inner = lock(&self.inner);
        let last = inner.points.back().map_or(0, |p| p.t_ms);
        let from = seconds.map_or(0, |s| last.saturating_sub(s * 1000));
        inner
            .points
            .iter()
            .filter(|p| p.t_ms >= from)
            .cloned()
            .collect()
    }

    /// One process's row and its footprint history.
    pub fn process(&self, pid: u32) -> Option<(Row, Vec<(u64, u64)>)> {
        let inner = lock(&self.inner);
        let row = inner
            .latest
            .as_ref()?
            .processes
            .iter()
            .find(|r| r.pid == pid)?
            .clone();
        let series = inner
            .points
            .iter()
            .filter_map(|p| {
                p.footprints
                    .iter()
                    .find(|(q, _)| *q == pid)
                    .map(|&(_, b)| (p.t_ms, b))
            })
            .collect();
        Some((row, series))
    }

    /// The host the session samples.
    pub fn host(&self) -> HostInfo {
        lock(&self.inner).host.clone()
    }

    /// Pin a process (watch its tree, keep it in the table) or unpin.
    /// Pins `pid` (watches its tree, keeps it first) or unpins with `None`.
    /// The shells (the app's commands, `serve`'s API) forward here and
    /// refuse what this refuses.
    pub fn pin(&self, pid: Option<u32>) -> Result<(), LiveError> {
        self.check_pid(pid)?;
        lock(&self.inner).pinned = pid;
        self.sampler.watch(pid);
        Ok(())
    }

    /// Starts swap growth, the worst states and the budget's forecast anew
    /// from the next sample ([`Sampler::reset_baseline`]).
    pub fn reset_baseline(&self) {
        self.sampler.reset_baseline();
    }

    /// Whether anybody is looking: the menu-bar app says no while its
    /// popover is closed, and the sampler slows to [`IDLE_SLOWDOWN`] times
    /// its interval (half the reads of every process's files) unless a
    /// recording runs; saying yes again brings a tick at once.
    pub fn set_idle(&self, idle: bool) {
        let mut inner = lock(&self.inner);
        inner.idle = idle;
        repace(&mut inner);
    }

    /// The sampler's interval now (slower while idle).
    pub fn interval(&self) -> std::time::Duration {
        lock(&self.inner).paced
    }

    /// Prometheus text of the latest tick (an HTTP `/metrics`), with
    /// per-process series for at most `max_processes`; `None` before the
    /// first tick. Past [`crate::show::export::prometheus::DEFAULT_MAX_PROCESSES`]
    /// (and the session's rows) an idle process found at the start may be
    /// named by its kernel short name ([`crate::probe::Probe::name_largest`]).
    pub fn prometheus(&self, max_processes: usize) -> Option<String> {
        let tick = self.sampler.latest()?;
        let mut snap = crate::show::export::prometheus::Snapshot::from_tick(&tick);
        // The counters of the recording under way: what the pipeline says
        // its allocator holds, beside the footprints.
        if let Some((rec, _)) = &lock(&self.inner).recorder {
            snap.counters = rec.counters().to_vec();
        }
        Some(crate::show::export::prometheus::render(
            &snap,
            max_processes,
        ))
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
