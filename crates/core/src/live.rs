//! The live session behind every interactive shell — the menu-bar app and
//! `swapsight serve`. It owns a [`Sampler`], turns each tick into the view a
//! UI draws ([`Snapshot`]: header figures, per-process rows, menu-bar
//! title), keeps a compact chart history, writes a recording when asked and
//! says when a notification is due. Both shells only translate its methods
//! into their transport (Tauri commands and events; HTTP and SSE), so the UI
//! sees the same JSON either way.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

use crate::detect::{Flag, State, SystemView};
use crate::monitor::Tick;
use crate::probe::{HostInfo, Probe, SystemSample};
use crate::recorder::{header_now, unix_now_ms, Recorder};
use crate::recordings::{self, default_trace_path, Recording, RecordingError};
use crate::report::Report;
use crate::sampler::{Sampler, SamplerConfig};
use crate::trace::Trace;
use crate::units::format_bytes_short;

/// How a live session runs.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    pub sampler: SamplerConfig,
    /// Seconds of chart history kept.
    pub history_secs: u64,
    /// Rows in a snapshot besides flagged and pinned processes.
    pub rows: usize,
    /// Processes drawn in the chart.
    pub chart_processes: usize,
    /// Where recordings go.
    pub recordings_dir: PathBuf,
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
        }
    }
}

/// One process row of the table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    pub pid: u32,
    pub name: String,
    /// The command line (capped), shown on hover; absent where the OS does
    /// not show it to this user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    pub footprint_bytes: u64,
    /// Footprint change over the detector's window.
    pub footprint_delta_bytes: i64,
    pub pageins_per_s: f64,
    /// Measured swap (Linux `VmSwap`); absent where the OS does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
    /// GPU memory (macOS "graphics" ledger tag); absent where unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_bytes: Option<u64>,
    /// Memory owned outside the footprint (macOS `*_nofootprint` tags).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outside_footprint_bytes: Option<u64>,
    /// Swap-ins per second in pages (macOS), over the detector's window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapins_per_s: Option<f64>,
    /// `false` when the OS denied the process's figures (shown as unknown,
    /// not as 0).
    pub readable: bool,
    pub state: State,
    pub worst: State,
    /// The evidence in words (for a tooltip); empty when it fits.
    pub evidence: String,
    pub watched: bool,
    pub pinned: bool,
}

/// The state of an ongoing recording.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RecordingStatus {
    pub path: PathBuf,
    pub samples: u64,
    pub elapsed_ms: u64,
    pub pid: Option<u32>,
}

/// Everything a UI shows at one tick.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Snapshot {
    pub t_ms: u64,
    pub system: SystemSample,
    pub view: SystemView,
    /// Worst current state of any process.
    pub state: State,
    /// Menu-bar title, e.g. `⇡2.1G ⚠ false fit`; empty when nothing to say.
    pub title: String,
    pub processes: Vec<Row>,
    pub process_count: usize,
    pub pinned: Option<u32>,
    pub recording: Option<RecordingStatus>,
    /// Whether rows carry measured swap (Linux) or not (macOS).
    pub measures_process_swap: bool,
    /// The phase under way in the recording (`swapsight mark`), if any.
    pub phase: Option<String>,
    /// Phases within the chart's history, in the points' clock.
    pub phases: Vec<crate::phases::Phase>,
}

/// One point of the chart history.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Point {
    pub t_ms: u64,
    pub swap_growth_bytes: i64,
    pub swap_used_bytes: u64,
    pub free_pct: f64,
    /// (pid, footprint) of the largest and the flagged/pinned processes.
    pub footprints: Vec<(u32, u64)>,
}

/// A false fit (or overflow) that just started: one notification.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Notice {
    pub pid: u32,
    pub name: String,
    pub state: State,
    pub title: String,
    pub body: String,
}

/// What subscribers receive every tick.
#[derive(Debug, Clone, Serialize)]
pub struct Update {
    pub snapshot: Snapshot,
    pub point: Point,
    pub notices: Vec<Notice>,
}

/// A recorded trace shown the way the live view is.
#[derive(Debug, Clone, Serialize)]
pub struct Replay {
    pub path: PathBuf,
    pub report: Report,
    pub points: Vec<Point>,
    pub processes: Vec<Row>,
    /// Names of the processes in `points`, by pid.
    pub names: Vec<(u32, String)>,
    /// The recording's phases, in the points' clock.
    pub phases: Vec<crate::phases::Phase>,
    pub problems: Vec<String>,
}

/// Errors of live commands, in words a UI can show as they are.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    #[error("already recording to {0}")]
    AlreadyRecording(PathBuf),
    #[error("not recording")]
    NotRecording,
    #[error("no recording yet")]
    NoRecording,
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    #[error(transparent)]
    Probe(#[from] crate::probe::ProbeError),
    #[error(transparent)]
    Recording(#[from] RecordingError),
}

struct Inner {
    cfg: LiveConfig,
    host: HostInfo,
    points: VecDeque<Point>,
    latest: Option<Snapshot>,
    pinned: Option<u32>,
    recorder: Option<(Recorder, Option<u32>)>,
    last_recording: Option<PathBuf>,
    subscribers: Vec<SyncSender<Arc<Update>>>,
    recording_error: Option<String>,
    /// Where `swapsight mark` reaches the recording, while one runs.
    marks: Option<crate::marks::MarkInbox>,
    phases: crate::phases::PhaseLog,
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
    pub fn start(mut probe: Box<dyn Probe + Send>, cfg: LiveConfig) -> Result<Live, LiveError> {
        let host = probe.host()?;
        let sampler = Sampler::spawn(probe, cfg.sampler.clone());
        let ticks = sampler.subscribe(8);
        let inner = Arc::new(Mutex::new(Inner {
            cfg,
            host,
            points: VecDeque::new(),
            latest: None,
            pinned: None,
            recorder: None,
            last_recording: None,
            subscribers: Vec::new(),
            recording_error: None,
            marks: None,
            phases: crate::phases::PhaseLog::default(),
        }));
        let shared = Arc::clone(&inner);
        let consumer = std::thread::Builder::new()
            .name("swapsight-live".into())
            .spawn(move || {
                for tick in ticks {
                    on_tick(&shared, &tick);
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

    /// Waits up to `timeout` for the first snapshot.
    pub fn wait_snapshot(&self, timeout: Duration) -> Option<Snapshot> {
        let until = std::time::Instant::now() + timeout;
        loop {
            if let Some(s) = self.snapshot() {
                return Some(s);
            }
            if std::time::Instant::now() > until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
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

    pub fn host(&self) -> HostInfo {
        lock(&self.inner).host.clone()
    }

    /// Pin a process (watch its tree, keep it in the table) or unpin.
    pub fn pin(&self, pid: Option<u32>) {
        lock(&self.inner).pinned = pid;
        self.sampler.watch(pid);
    }

    pub fn reset_baseline(&self) {
        self.sampler.reset_baseline();
    }

    /// Starts recording the whole machine and the pinned process (or
    /// `pid`) to a new trace in the recordings folder.
    pub fn start_recording(&self, pid: Option<u32>) -> Result<PathBuf, LiveError> {
        let mut inner = lock(&self.inner);
        if let Some((r, _)) = &inner.recorder {
            return Err(LiveError::AlreadyRecording(r.path().to_path_buf()));
        }
        let pid = pid.or(inner.pinned);
        let mut header = header_now(
            inner.host.clone(),
            inner.cfg.sampler.interval.as_millis() as u64,
            10,
        );
        header.watch_pid = pid;
        header.writer = format!("swapsight {} live", env!("CARGO_PKG_VERSION"));
        std::fs::create_dir_all(&inner.cfg.recordings_dir).map_err(|source| {
            crate::trace::TraceError::Write {
                path: inner.cfg.recordings_dir.clone(),
                source,
            }
        })?;
        let path = default_trace_path(&inner.cfg.recordings_dir, unix_now_ms());
        let recorder = Recorder::create(&path, &header)?;
        // Without a private runtime dir the recording runs unmarked.
        inner.marks = crate::marks::MarkInbox::create(&path).ok();
        inner.recorder = Some((recorder, pid));
        inner.recording_error = None;
        drop(inner);
        if pid.is_some() {
            self.sampler.watch(pid);
        }
        Ok(path)
    }

    /// Stops the recording; returns its path and sample count.
    pub fn stop_recording(&self) -> Result<(PathBuf, u64), LiveError> {
        let mut inner = lock(&self.inner);
        let (mut rec, _) = inner.recorder.take().ok_or(LiveError::NotRecording)?;
        inner.marks = None;
        let now = inner.points.back().map_or(0, |p| p.t_ms);
        inner.phases.end(now);
        let _ = rec.event("recording-stop", "stopped by the user", None, None);
        let path = rec.path().to_path_buf();
        inner.last_recording = Some(path.clone());
        Ok((path, rec.samples()))
    }

    /// Where a line marks a phase of the ongoing recording (what
    /// `swapsight mark` finds); `None` when not recording.
    pub fn mark_path(&self) -> Option<PathBuf> {
        lock(&self.inner)
            .marks
            .as_ref()
            .map(|m| m.path().to_path_buf())
    }

    /// The last finished recording, for "Export last recording…".
    pub fn last_recording(&self) -> Option<PathBuf> {
        lock(&self.inner).last_recording.clone()
    }

    pub fn recordings_dir(&self) -> PathBuf {
        lock(&self.inner).cfg.recordings_dir.clone()
    }

    /// The recordings in the folder, newest first.
    pub fn recordings(&self) -> Result<Vec<Recording>, RecordingError> {
        recordings::list(&self.recordings_dir())
    }

    /// The path of recording `name` in the folder; a name that is not a
    /// plain recording name, or no regular file there, is refused.
    pub fn recording(&self, name: &str) -> Result<PathBuf, RecordingError> {
        recordings::resolve(&self.recordings_dir(), name)
    }

    /// Recording `name` shown as the live view shows a session; its `path`
    /// is the name, not where the folder is.
    pub fn replay_recording(&self, name: &str) -> Result<Replay, LiveError> {
        let path = self.recording(name)?;
        let mut replay = replay(&path)?;
        replay.path = PathBuf::from(name);
        Ok(replay)
    }

    /// The report of recording `name`.
    pub fn report_recording(&self, name: &str) -> Result<Report, LiveError> {
        let trace = crate::trace::read(&self.recording(name)?)?;
        Ok(crate::report::report(&trace, None))
    }

    /// Prometheus text of the latest tick (an HTTP `/metrics`), with
    /// per-process series for at most `max_processes`; `None` before the
    /// first tick.
    pub fn prometheus(&self, max_processes: usize) -> Option<String> {
        let tick = self.sampler.latest()?;
        let snap = crate::export::prometheus::Snapshot::from_tick(&tick);
        Some(crate::export::prometheus::render(&snap, max_processes))
    }
}

fn on_tick(shared: &Mutex<Inner>, tick: &Tick) {
    let mut inner = lock(shared);
    let inner = &mut *inner;
    if let Some((rec, _)) = inner.recorder.as_mut() {
        let mut result = rec.tick(tick);
        if let (Ok(()), Some(inbox)) = (&result, inner.marks.as_mut()) {
            result = crate::phases::take_marks(inbox, rec, &mut inner.phases, tick.sample.t_ms);
        }
        if let Err(e) = result {
            // Keep sampling; the UI shows the error and the trace so far stays.
            inner.recording_error = Some(e.to_string());
            inner.recorder = None;
        }
    }
    let snapshot = snapshot_of(tick, inner);
    let point = point_of(tick, &snapshot, inner.cfg.chart_processes);
    let keep_ms = inner.cfg.history_secs * 1000;
    while inner
        .points
        .front()
        .is_some_and(|p| point.t_ms.saturating_sub(p.t_ms) > keep_ms)
    {
        inner.points.pop_front();
    }
    inner.points.push_back(point.clone());
    let notices = tick.flags.iter().filter_map(notice_of).collect();
    inner.latest = Some(snapshot.clone());
    let update = Arc::new(Update {
        snapshot,
        point,
        notices,
    });
    inner
        .subscribers
        .retain(|s| match s.try_send(Arc::clone(&update)) {
            Ok(()) | Err(TrySendError::Full(_)) => true,
            Err(TrySendError::Disconnected(_)) => false,
        });
}

fn snapshot_of(tick: &Tick, inner: &Inner) -> Snapshot {
    let mut procs: Vec<_> = tick.sample.processes.iter().collect();
    procs.sort_unstable_by(|a, b| {
        b.footprint_bytes
            .cmp(&a.footprint_bytes)
            .then(a.pid.cmp(&b.pid))
    });
    let activity = |pid: u32| {
        tick.activity
            .binary_search_by_key(&pid, |a| a.pid)
            .ok()
            .map(|i| &tick.activity[i])
    };
    let flagged = |pid: u32| tick.flagged.iter().find(|a| a.pid == pid);
    let mut rows = Vec::with_capacity(inner.cfg.rows + tick.flagged.len());
    for (i, p) in procs.iter().enumerate() {
        let watched = tick.watched.binary_search(&p.pid).is_ok();
        let pinned = inner.pinned == Some(p.pid);
        let f = flagged(p.pid);
        if i >= inner.cfg.rows && !watched && !pinned && f.is_none() {
            continue;
        }
        let act = activity(p.pid);
        let (state, worst) = f.map_or((State::Fits, State::Fits), |a| (a.state, a.worst));
        rows.push(Row {
            pid: p.pid,
            name: p.name.clone(),
            cmdline: p.cmdline.clone(),
            footprint_bytes: p.footprint_bytes,
            footprint_delta_bytes: act.map_or(0, |a| a.footprint_delta_bytes),
            pageins_per_s: act.map_or(0.0, |a| a.pageins_per_s),
            swap_bytes: p.swap_bytes,
            gpu_bytes: p.gpu_bytes,
            outside_footprint_bytes: p.outside_footprint_bytes,
            swapins_per_s: act.and_then(|a| a.swapins_per_s),
            readable: p.readable,
            state,
            worst,
            evidence: with_advice(
                f.map(|a| {
                    a.evidence.describe(if a.state == State::Fits {
                        a.worst
                    } else {
                        a.state
                    })
                })
                .unwrap_or_default(),
                &p.name,
                state,
                &inner.host,
            ),
            watched,
            pinned,
        });
    }
    let state = tick.view.worst;
    Snapshot {
        t_ms: tick.sample.t_ms,
        system: tick.sample.system,
        view: tick.view,
        state,
        title: title(&tick.view, state),
        process_count: tick.sample.processes.len(),
        processes: rows,
        pinned: inner.pinned,
        recording: inner.recorder.as_ref().map(|(r, pid)| RecordingStatus {
            path: r.path().to_path_buf(),
            samples: r.samples(),
            elapsed_ms: r.elapsed_ms(),
            pid: *pid,
        }),
        measures_process_swap: crate::probe::MEASURES_PROCESS_SWAP,
        phase: inner.phases.current().map(String::from),
        phases: inner.phases.recent(
            tick.sample
                .t_ms
                .saturating_sub(inner.cfg.history_secs.saturating_mul(1000)),
            tick.sample.t_ms,
        ),
    }
}

/// The evidence, and for a flagged Python process on a Mac the MPS advice
/// (`swapsight advise`), in the process's detail.
fn with_advice(evidence: String, name: &str, state: State, host: &HostInfo) -> String {
    match crate::advise::for_flagged_process(name, state, host) {
        Some(advice) => format!("{evidence}\n\n{advice}"),
        None => evidence,
    }
}

fn point_of(tick: &Tick, snapshot: &Snapshot, n: usize) -> Point {
    let mut footprints: Vec<(u32, u64)> = snapshot
        .processes
        .iter()
        .take(n)
        .map(|r| (r.pid, r.footprint_bytes))
        .collect();
    for r in &snapshot.processes[n.min(snapshot.processes.len())..] {
        if r.pinned || r.watched || r.state != State::Fits {
            footprints.push((r.pid, r.footprint_bytes));
        }
    }
    Point {
        t_ms: tick.sample.t_ms,
        swap_growth_bytes: tick.view.swap_growth_bytes,
        swap_used_bytes: tick.sample.system.swap_used_bytes,
        free_pct: tick.sample.system.free_pct,
        footprints,
    }
}

/// The menu-bar title: swap growth since the baseline and the worst state,
/// e.g. `⇡2.1G ⚠ false fit`; empty when swap did not grow and all fits (an
/// empty string, not `None`, clears the title on macOS).
pub fn title(view: &SystemView, worst: State) -> String {
    let growth = if view.swap_growth_bytes >= (64 << 20) {
        format!("⇡{}", format_bytes_short(view.swap_growth_bytes as u64))
    } else {
        String::new()
    };
    let state = match worst {
        State::Fits => "",
        State::HiddenMemory => "◌ hidden",
        State::Overflow => "⚠ overflow",
        State::FalseFit => "⚠ false fit",
    };
    match (growth.is_empty(), state.is_empty()) {
        (true, true) => String::new(),
        (false, true) => growth,
        (true, false) => state.to_string(),
        (false, false) => format!("{growth} {state}"),
    }
}

/// A notification for a false fit or overflow that just started (the
/// detector raises a state once per episode, so this is once per episode).
pub fn notice_of(flag: &Flag) -> Option<Notice> {
    if !matches!(flag.state, State::FalseFit | State::Overflow) || flag.previous >= flag.state {
        return None;
    }
    let title = match flag.state {
        State::FalseFit => format!("False fit: {}", flag.name),
        _ => format!("Overflow: {}", flag.name),
    };
    Some(Notice {
        pid: flag.pid,
        name: flag.name.clone(),
        state: flag.state,
        title,
        body: flag.message.clone(),
    })
}

/// A trace file shown as the live view shows a session: the report, the
/// chart points and the processes at the end.
pub fn replay(path: &Path) -> Result<Replay, LiveError> {
    let trace = crate::trace::read(path)?;
    Ok(replay_trace(path, &trace))
}

pub fn replay_trace(path: &Path, trace: &Trace) -> Replay {
    let report = crate::report::report(trace, None);
    let base = trace
        .samples
        .first()
        .map_or(0, |s| s.sample.system.swap_used_bytes);
    let picked: Vec<u32> = report.processes.iter().map(|p| p.pid).take(8).collect();
    let points = trace
        .samples
        .iter()
        .map(|s| Point {
            t_ms: s.sample.t_ms,
            swap_growth_bytes: s.sample.system.swap_used_bytes as i64 - base as i64,
            swap_used_bytes: s.sample.system.swap_used_bytes,
            free_pct: s.sample.system.free_pct,
            footprints: s
                .sample
                .processes
                .iter()
                .filter(|p| picked.contains(&p.pid))
                .map(|p| (p.pid, p.footprint_bytes))
                .collect(),
        })
        .collect();
    let processes = report
        .processes
        .iter()
        .map(|p| Row {
            pid: p.pid,
            name: p.name.clone(),
            cmdline: p.cmdline.clone(),
            footprint_bytes: p.peak_footprint_bytes,
            footprint_delta_bytes: 0,
            pageins_per_s: p.pageins_per_s,
            swap_bytes: p.measured_swap_peak_bytes,
            gpu_bytes: p.peak_gpu_bytes,
            outside_footprint_bytes: p.peak_outside_footprint_bytes,
            swapins_per_s: p.peak_swapins_per_s,
            readable: p.readable,
            state: p.verdict,
            worst: p.verdict,
            evidence: with_advice(p.evidence.clone(), &p.name, p.verdict, &trace.header().host),
            watched: p.watched,
            pinned: false,
        })
        .collect();
    let names = report
        .processes
        .iter()
        .map(|p| (p.pid, p.name.clone()))
        .collect();
    let last_ms = trace.samples.last().map_or(0, |s| s.sample.t_ms);
    Replay {
        path: path.to_path_buf(),
        phases: crate::phases::spans(&trace.marks, last_ms),
        problems: report.problems.clone(),
        report,
        points,
        processes,
        names,
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
