//! The sampler: a thread that asks the probe for one sample every interval,
//! steps the [`Monitor`], keeps the recent ticks in a bounded ring buffer and
//! hands each tick to its subscribers.
//!
//! It owns the probe and the monitor; others talk to it only through its
//! handle (commands in, ticks out). Ticks are scheduled on absolute deadlines
//! so the interval does not drift by the cost of a tick, and `t_ms` is the
//! real elapsed time. A subscriber that does not keep up loses ticks (its
//! channel is bounded), it never makes the sampler buffer without limit.

use std::collections::VecDeque;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::probe::{Probe, ProbeError, Sample};
use crate::step::detect::DetectorConfig;
use crate::step::forecast::ForecastConfig;
use crate::step::monitor::Monitor;
use crate::step::pressure::PressureConfig;
use crate::step::tick::Tick;
use crate::util::bell::Ringer;

/// Shortest sampling interval: below this the probe's own cost (a walk of
/// every process) is most of the interval. `--interval` takes no less.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// How a sampler runs.
#[derive(Debug, Clone)]
pub struct SamplerConfig {
    /// Time between samples (500 ms by default).
    pub interval: Duration,
    /// Ticks kept in the ring buffer.
    pub history: usize,
    /// Root of the watched tree.
    pub watch: Option<u32>,
    /// How many of the largest processes the ticks' consumers show (a
    /// trace's `top_n`, a table's rows), for [`Probe::name_largest`]: a
    /// process none of them shows may be named from its kernel short name
    /// until it moves. `None`: every process is named at once.
    pub named_largest: Option<usize>,
    /// The detector's settings.
    pub detector: DetectorConfig,
    /// Thresholds of the Linux pressure level.
    pub pressure: PressureConfig,
    /// The forecaster's settings (the guard's budget among them).
    pub forecast: ForecastConfig,
}

impl Default for SamplerConfig {
    fn default() -> Self {
        SamplerConfig {
            interval: Duration::from_millis(500),
            history: 120,
            watch: None,
            named_largest: None,
            detector: DetectorConfig::default(),
            pressure: PressureConfig::default(),
            forecast: ForecastConfig::default(),
        }
    }
}

enum Command {
    Subscribe(SyncSender<Arc<Tick>>, Option<Ringer>),
    ResetBaseline,
    Watch(Option<u32>),
    Interval(Duration),
    ScopeNow(SyncSender<Option<crate::probe::Scope>>),
    Stop,
}

/// Sets a running sampler's interval (see [`Sampler::pacer`]).
#[derive(Clone)]
pub struct Pacer(Sender<Command>);

impl Pacer {
    /// From now on one tick every `interval`. A shorter one starts with a
    /// tick at once, so the figures are fresh when someone starts looking.
    pub fn set_interval(&self, interval: Duration) {
        let _ = self.0.send(Command::Interval(interval));
    }
}

/// Handle to a running sampler; dropping it stops the thread.
pub struct Sampler {
    commands: Sender<Command>,
    recent: Arc<Mutex<VecDeque<Arc<Tick>>>>,
    thread: Option<JoinHandle<Result<(), ProbeError>>>,
    started: Instant,
}

impl Sampler {
    /// Starts sampling at once; the first tick comes without waiting.
    pub fn spawn(mut probe: Box<dyn Probe + Send>, cfg: SamplerConfig) -> Sampler {
        let (tx, rx) = mpsc::channel();
        let recent = Arc::new(Mutex::new(VecDeque::with_capacity(cfg.history)));
        let ring = Arc::clone(&recent);
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("swapsight-sampler".into())
            .spawn(move || run(&mut *probe, cfg, rx, ring, started))
            .expect("spawning the sampler thread");
        Sampler {
            commands: tx,
            recent,
            thread: Some(thread),
            started,
        }
    }

    /// A channel of every tick from now on; `capacity` ticks are buffered
    /// before this subscriber starts losing them.
    pub fn subscribe(&self, capacity: usize) -> Receiver<Arc<Tick>> {
        let (tx, rx) = mpsc::sync_channel(capacity.max(1));
        let _ = self.commands.send(Command::Subscribe(tx, None));
        rx
    }

    /// [`Sampler::subscribe`], and `ringer` rung after each tick is sent:
    /// for a loop that waits on a bell for ticks and other news alike.
    pub fn subscribe_ringing(&self, capacity: usize, ringer: Ringer) -> Receiver<Arc<Tick>> {
        let (tx, rx) = mpsc::sync_channel(capacity.max(1));
        let _ = self.commands.send(Command::Subscribe(tx, Some(ringer)));
        rx
    }

    /// The ticks in the ring buffer, oldest first.
    pub fn recent(&self) -> Vec<Arc<Tick>> {
        self.recent
            .lock()
            .map(|r| r.iter().cloned().collect())
            .unwrap_or_default()
    }

    pub(crate) fn latest(&self) -> Option<Arc<Tick>> {
        self.recent.lock().ok().and_then(|r| r.back().cloned())
    }

    /// Starts swap growth, the worst states and the budget's forecast anew
    /// ([`Monitor::reset_baseline`]) before the next sample.
    pub fn reset_baseline(&self) {
        let _ = self.commands.send(Command::ResetBaseline);
    }

    pub(crate) fn watch(&self, pid: Option<u32>) {
        let _ = self.commands.send(Command::Watch(pid));
    }

    /// The run's scope read now, off the tick schedule: a recording's last
    /// look once its command exited (a command its cgroup's OOM killer
    /// killed is gone before the next tick; its cgroup still counts the
    /// kill). `None` when the host is the scope or the sampler stopped.
    pub fn scope_now(&self) -> Option<crate::probe::Scope> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.commands.send(Command::ScopeNow(tx)).ok()?;
        rx.recv_timeout(Duration::from_secs(5)).ok().flatten()
    }

    /// A handle that changes the interval, for whoever decides the pace.
    pub fn pacer(&self) -> Pacer {
        Pacer(self.commands.clone())
    }

    /// When the sampler started: the zero of its samples' `t_ms`.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Stops the thread and returns the probe error that ended it, if any.
    pub fn stop(mut self) -> Result<(), ProbeError> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), ProbeError> {
        let _ = self.commands.send(Command::Stop);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            _ => Ok(()),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

fn run(
    probe: &mut dyn Probe,
    cfg: SamplerConfig,
    commands: Receiver<Command>,
    ring: Arc<Mutex<VecDeque<Arc<Tick>>>>,
    started: Instant,
) -> Result<(), ProbeError> {
    let mut monitor = Monitor::new(cfg.watch, cfg.detector.clone())
        .with_pressure(cfg.pressure.clone())
        .with_forecast(cfg.forecast.clone());
    // A recorder inside the tree it watches does not watch itself.
    monitor.exclude = Some(std::process::id());
    if let Some(k) = cfg.named_largest {
        probe.name_largest(k);
    }
    // The root is watched from the first sample on (the tree follows
    // from the first step).
    probe.watch_closely(cfg.watch.as_slice());
    let mut interval = cfg.interval;
    let mut subscribers: Vec<(SyncSender<Arc<Tick>>, Option<Ringer>)> = Vec::new();
    // `None`: the interval reaches past the end of the clock; no more ticks.
    let mut next = Some(Instant::now());
    let mut failures = 0u32;
    let mut scopes = ScopeWatch::default();
    loop {
        // Sleep until the next deadline, serving commands meanwhile.
        loop {
            let command = match next {
                Some(at) => commands.recv_timeout(at.saturating_duration_since(Instant::now())),
                None => commands.recv().map_err(|_| RecvTimeoutError::Disconnected),
            };
            match command {
                Ok(Command::Subscribe(tx, ringer)) => subscribers.push((tx, ringer)),
                Ok(Command::ResetBaseline) => monitor.reset_baseline(),
                Ok(Command::Watch(pid)) => {
                    monitor.tree.set_root(pid);
                    probe.watch_closely(pid.as_slice());
                }
                Ok(Command::Interval(d)) => {
                    let d = d.max(MIN_INTERVAL);
                    if d < interval {
                        next = Some(Instant::now());
                    }
                    interval = d;
                }
                Ok(Command::ScopeNow(reply)) => {
                    let _ = reply.try_send(scopes.read(probe, monitor.tree.root()).0);
                }
                Ok(Command::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
                Err(RecvTimeoutError::Timeout) => break,
            }
        }
        let now = Instant::now();
        next = match next.and_then(|n| n.checked_add(interval)) {
            Some(n) if n >= now => Some(n),
            // We fell behind (machine asleep or swapping hard): skip, don't burst.
            _ => now.checked_add(interval),
        };
        let (system, processes) = match probe.sample() {
            Ok(s) => {
                failures = 0;
                s
            }
            Err(e) => {
                failures += 1;
                if failures >= 10 {
                    return Err(e);
                }
                continue;
            }
        };
        let t_ms = now.duration_since(started).as_millis() as u64;
        let (scope, scope_note) = scopes.read(probe, monitor.tree.root());
        let mut tick = monitor.step(Sample {
            t_ms,
            system,
            processes,
            scope,
        });
        tick.scope_note = scope_note;
        probe.watch_closely(&tick.watched);
        let tick = Arc::new(tick);
        if let Ok(mut r) = ring.lock() {
            if r.len() >= cfg.history.max(1) {
                r.pop_front();
            }
            r.push_back(Arc::clone(&tick));
        }
        subscribers.retain(|(s, ringer)| {
            let kept = match s.try_send(Arc::clone(&tick)) {
                Ok(()) | Err(TrySendError::Full(_)) => true,
                Err(TrySendError::Disconnected(_)) => false,
            };
            if let (true, Some(r)) = (kept, ringer) {
                r.ring();
            }
            kept
        });
    }
}

/// Reads the run's scope each tick: the watched tree's root's, else
/// swapsight's own (a container limits it too). Where the cgroup files
/// cannot be read the host is the scope, and that is said once.
#[derive(Debug, Default)]
pub struct ScopeWatch {
    said: bool,
}

impl ScopeWatch {
    /// The scope of `root` (or of this process), and the note to say once
    /// when it cannot be read.
    pub fn read(
        &mut self,
        probe: &mut dyn Probe,
        root: Option<u32>,
    ) -> (Option<crate::probe::Scope>, Option<String>) {
        let pid = root.unwrap_or_else(std::process::id);
        match probe.scope(pid) {
            Ok(scope) => (scope, None),
            Err(e) if !self.said => {
                self.said = true;
                let why = std::error::Error::source(&e)
                    .map_or_else(|| e.to_string(), |s| format!("{e}: {s}"));
                let note = format!(
                    "the memory cgroup of pid {pid} cannot be read ({why}); judging against the host"
                );
                (None, Some(crate::util::text::clean(&note).into_owned()))
            }
            Err(_) => (None, None),
        }
    }
}

#[cfg(test)]
#[path = "sampler_tests.rs"]
mod tests;
