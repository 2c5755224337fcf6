//! The trace sink: turns ticks into trace lines. Every shell that records
//! (`record`, `guard`, the menu-bar app, `serve`) goes through it, so a trace
//! means the same thing whoever wrote it.
//!
//! Each sample keeps the `top_n` largest processes, the watched tree and any
//! process the detector has flagged — a bounded line however busy the
//! machine — and every flag raised or cleared is a line of its own. A
//! process's command line (up to 4 KiB) is written when it enters the kept
//! set or changes, not on every sample.

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::probe::{HostInfo, ProcessSample};
use crate::record::trace::{
    Counter, Event, Header, Mark, Record, TraceError, TraceSample, TraceWriter,
};
use crate::step::tick::Tick;

/// Writes a recording's trace: the header, then samples, flags, events,
/// marks and counters as they come.
pub struct Recorder {
    writer: TraceWriter,
    top_n: usize,
    /// Sample clock value that maps to the trace's `t_ms = 0`.
    t0_ms: Option<u64>,
    samples: u64,
    last_t_ms: u64,
    cmdlines: CmdlineOnce,
    /// When the last sample was written, to place marks between samples.
    last_tick_at: Option<Instant>,
    /// Time of the last mark: marks never go back in time, though the
    /// delay between a sample and its writing varies from tick to tick.
    last_mark_ms: u64,
    /// The scope's `oom_kill` count at the last sample.
    oom_kills: Option<u64>,
}

/// Drops a command line the previous sample already gave for the same
/// process (pid and start time): on a busy machine the kept processes'
/// command lines (compilers: 4 KiB each) would otherwise be most of every
/// line. Remembers the previous sample's processes only, so a process that
/// left the kept set and came back has its command line written again.
/// The owner (`uid`) goes with the command line, and only with it: it says
/// whose command line it is, and a new owner writes both again.
///
/// The previous command lines are kept as the shared text the probe hands
/// out, so an unchanged one is known by its pointer without reading its
/// 4 KiB; text is compared only when the probe read the arguments again.
#[derive(Debug, Default)]
pub struct CmdlineOnce {
    last: HashMap<(u32, u64), (Arc<str>, Option<u32>)>,
}

impl CmdlineOnce {
    pub(crate) fn strip(&mut self, processes: &mut [ProcessSample]) {
        let mut now = HashMap::with_capacity_and_hasher(processes.len(), Default::default());
        for p in processes {
            let Some(cmdline) = &p.cmdline else {
                p.uid = None;
                continue;
            };
            let key = (p.pid, p.start_time);
            let same = self.last.get(&key).is_some_and(|(was, uid)| {
                *uid == p.uid && (Arc::ptr_eq(was, cmdline) || **was == **cmdline)
            });
            now.insert(key, (Arc::clone(cmdline), p.uid));
            if same {
                p.cmdline = None;
                p.uid = None;
            }
        }
        self.last = now;
    }
}

impl Recorder {
    /// Creates the trace file and writes its header. `header.top_n` says how
    /// many of the largest processes each sample keeps.
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        Ok(Recorder {
            writer: TraceWriter::create(path, header)?,
            top_n: header.top_n,
            t0_ms: None,
            samples: 0,
            last_t_ms: 0,
            cmdlines: CmdlineOnce::default(),
            last_tick_at: None,
            last_mark_ms: 0,
            oom_kills: None,
        })
    }

    /// The trace being written.
    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Trace time of the last sample written.
    pub fn elapsed_ms(&self) -> u64 {
        self.last_t_ms
    }

    /// Writes one tick: the kept sample, then its flags.
    pub fn tick(&mut self, tick: &Tick) -> Result<(), TraceError> {
        self.tick_at(tick, Instant::now())
    }

    /// [`Recorder::tick`], written at `now` (the clock marks are placed by).
    pub fn tick_at(&mut self, tick: &Tick, now: Instant) -> Result<(), TraceError> {
        let t0 = *self.t0_ms.get_or_insert(tick.sample.t_ms);
        let mut sample = tick.kept_processes(self.top_n);
        sample.t_ms -= t0.min(sample.t_ms);
        self.cmdlines.strip(&mut sample.processes);
        self.last_t_ms = sample.t_ms;
        self.last_tick_at = Some(now);
        self.writer.write(&Record::Sample(TraceSample {
            sample,
            watched: tick.watched.clone(),
            forecast: (!tick.forecast.is_empty()).then_some(tick.forecast),
        }))?;
        self.samples += 1;
        if let Some(note) = &tick.scope_note {
            self.event("scope-unreadable", note.clone(), None, None)?;
        }
        if let Some(message) = self.oom_killed(tick.sample.scope.as_ref()) {
            self.event("oom-kill", message, None, None)?;
        }
        for f in &tick.flags {
            let mut f = f.clone();
            f.t_ms = self.last_t_ms;
            self.writer.write(&Record::Flag(f))?;
        }
        Ok(())
    }

    /// A look at the scope off the tick schedule (the sampler's
    /// [`crate::step::sampler::Sampler::scope_now`] once the command exited): an `oom-kill`
    /// event when its OOM killer killed since the last sample.
    pub fn scope_look(&mut self, scope: &crate::probe::Scope) -> Result<(), TraceError> {
        match self.oom_killed(Some(scope)) {
            Some(message) => self.event("oom-kill", message, None, None),
            None => Ok(()),
        }
    }

    /// "the cgroup's OOM killer killed 1 process in …" when the scope's
    /// `oom_kill` count rose since the last sample.
    fn oom_killed(&mut self, scope: Option<&crate::probe::Scope>) -> Option<String> {
        let scope = scope?;
        let now = scope.events.oom_kill?;
        let before = self.oom_kills.replace(now)?;
        let killed = now.checked_sub(before).filter(|&n| n > 0)?;
        Some(format!(
            "the cgroup's OOM killer killed {killed} {} in {}",
            if killed == 1 { "process" } else { "processes" },
            scope.describe()
        ))
    }

    /// Writes an event at the time of the last sample.
    pub fn event(
        &mut self,
        kind: &str,
        message: impl Into<String>,
        pid: Option<u32>,
        code: Option<i32>,
    ) -> Result<(), TraceError> {
        self.writer.write(&Record::Event(Event {
            t_ms: self.last_t_ms,
            kind: kind.into(),
            message: message.into(),
            pid,
            code,
        }))
    }
}

impl Recorder {
    /// Writes a phase mark at this instant: the time of the last sample plus
    /// what has passed since it was written (0 before the first sample).
    /// Returns the mark's time.
    pub fn mark(&mut self, name: &str, end: bool) -> Result<u64, TraceError> {
        self.mark_at(name, end, Instant::now())
    }

    /// Trace time of `now`: the time of the last sample plus what has
    /// passed since it was written (0 before the first sample), never
    /// before the last mark or counter.
    fn instant_ms(&mut self, now: Instant) -> u64 {
        let since = self.last_tick_at.map_or(0, |at| {
            u64::try_from(now.saturating_duration_since(at).as_millis()).unwrap_or(u64::MAX)
        });
        let t_ms = self.last_t_ms.saturating_add(since).max(self.last_mark_ms);
        self.last_mark_ms = t_ms;
        t_ms
    }

    /// [`Recorder::mark`] at `now`.
    pub fn mark_at(&mut self, name: &str, end: bool, now: Instant) -> Result<u64, TraceError> {
        let t_ms = self.instant_ms(now);
        self.writer.write(&Record::Mark(Mark {
            t_ms,
            name: name.into(),
            end,
        }))?;
        Ok(t_ms)
    }
}

impl Recorder {
    /// Writes a counter's value at `now`, placed in time as a mark is.
    pub fn counter_at(
        &mut self,
        name: &str,
        value: f64,
        unit: &str,
        now: Instant,
    ) -> Result<u64, TraceError> {
        let t_ms = self.instant_ms(now);
        self.writer.write(&Record::Counter(Counter {
            t_ms,
            name: name.into(),
            value,
            unit: unit.into(),
        }))?;
        Ok(t_ms)
    }
}

/// A header for a recording starting now on this host.
pub fn header_now(host: HostInfo, interval_ms: u64, top_n: usize) -> Header {
    let mut h = Header::new(host, interval_ms, crate::util::units::unix_now_ms());
    h.top_n = top_n;
    h
}

#[cfg(test)]
#[path = "recorder_tests.rs"]
mod tests;
