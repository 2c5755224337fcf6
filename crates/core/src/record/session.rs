//! One recording session: what every shell that records — `record`,
//! `guard`, the menu-bar app and `swapsight serve` (the last two through
//! [`crate::show::live::Live`]) — drives, so that a trace means the same thing
//! whoever wrote it. It holds a recording's rules, once for every shell:
//! the trace's header, the phase marks taken from the mark inbox (with the
//! `marks-dropped` event, and the last look when the recording ends), the
//! counters that come the same way (with their own `counters-dropped`
//! event), and the latch that stops writing after the first failed write (a
//! full disk), so no line can land after a partial one.
//!
//! A shell calls [`RecordingSession::turn`] on every turn of its loop, with
//! the tick when one came: the marks that came in since the last turn are
//! written first (they happened before the tick was written), then the
//! tick. [`RecordingSession::finish_marks`] takes the marks still on their
//! way when the recording ends; events (`command-exit`, `recording-stop`, …)
//! may follow it.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::probe::HostInfo;
use crate::record::counters::{self, LastCounter};
use crate::record::marks::{MarkInbox, MarkLine};
use crate::record::recorder::{header_now, Recorder};
use crate::record::trace::{Header, Mark, TraceError};
use crate::step::tick::Tick;

/// What a recording is asked to be: the settings that go in its header.
#[derive(Debug, Clone)]
pub struct Plan<'a> {
    /// Time between samples.
    pub interval: Duration,
    /// How many of the largest processes each sample keeps.
    pub top_n: usize,
    /// Root of the watched process tree.
    pub watch: Option<u32>,
    /// The command run under `record`/`guard` (empty otherwise).
    pub command: &'a [String],
    /// Who writes it: `record`, `guard`, `live`.
    pub verb: &'a str,
    /// The detector's settings in force.
    pub detector: crate::step::detect::DetectorConfig,
    /// The pressure thresholds in force, and why samples carry no pressure
    /// (the probe's word), for `report` to read back.
    pub pressure: crate::step::pressure::PressureConfig,
    /// Why the samples carry no pressure; `None` when they do.
    pub pressure_absent: Option<String>,
    /// The forecaster's settings in force.
    pub forecast: crate::step::forecast::ForecastConfig,
}

/// The trace's header for a recording starting now on `host`.
pub fn header(host: HostInfo, plan: &Plan<'_>) -> Header {
    let interval_ms = u64::try_from(plan.interval.as_millis()).unwrap_or(u64::MAX);
    let mut header = header_now(host, interval_ms, plan.top_n);
    header.watch_pid = plan.watch;
    header.command = (!plan.command.is_empty()).then(|| plan.command.to_vec());
    header.writer = format!("swapsight {} {}", env!("CARGO_PKG_VERSION"), plan.verb);
    header.detector = plan.detector.clone();
    header.pressure = plan.pressure.clone();
    header.pressure_absent = plan.pressure_absent.clone();
    header.forecast = plan.forecast.clone();
    header
}

/// The most a recording that ends before its first sample waits for one
/// (`record` or `guard` of a command that ends at once, a live recording
/// stopped within a tick of its start): without it the trace is one
/// `report` and the replay refuse ("no samples"). The next tick comes
/// within the interval, and a first tick, which names every process, takes
/// 10–20 ms here with 370 processes and over a second on a loaded machine.
pub const FIRST_SAMPLE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// A recording under way: the trace, its mark inbox and the write latch.
pub struct RecordingSession {
    rec: Recorder,
    marks: Option<MarkInbox>,
    /// The phase open now, to name an end mark that names none.
    current: Option<String>,
    /// Dropped marks already told in a `marks-dropped` event.
    dropped_told: u64,
    /// Dropped counter values already told in a `counters-dropped` event.
    counters_told: u64,
    /// Each counter's last value, for `/metrics` while the recording runs.
    last_counters: Vec<LastCounter>,
    /// The allocators' caches the counters show, for the live session.
    caches: crate::step::caches::CacheFold,
    failed: Option<String>,
}

impl RecordingSession {
    /// Creates the trace with `header`. `marks` is the inbox the command's
    /// marks come through (made before the command starts, which inherits
    /// its path); without one the run is recorded unmarked.
    pub fn create(
        path: &Path,
        header: &Header,
        marks: Option<MarkInbox>,
    ) -> Result<Self, TraceError> {
        Ok(RecordingSession {
            rec: Recorder::create(path, header)?,
            marks,
            current: None,
            dropped_told: 0,
            counters_told: 0,
            last_counters: Vec::new(),
            caches: Default::default(),
            failed: None,
        })
    }

    /// The trace being written (its path, samples and elapsed time).
    pub fn recorder(&self) -> &Recorder {
        &self.rec
    }

    pub(crate) fn path(&self) -> &Path {
        self.rec.path()
    }

    /// Each counter's last value so far (at most
    /// [`crate::record::counters::MAX_NAMES`] names).
    pub fn counters(&self) -> &[LastCounter] {
        &self.last_counters
    }

    /// The allocators' caches the recording's counters show so far.
    pub fn caches(&self) -> &crate::step::caches::CacheFold {
        &self.caches
    }

    /// Where a line marks a phase (what `swapsight mark` finds), until
    /// [`RecordingSession::finish_marks`].
    pub fn mark_path(&self) -> Option<&Path> {
        self.marks.as_ref().map(MarkInbox::path)
    }

    /// `cannot write the trace FILE (why)`, once a write has failed: from
    /// then on nothing more is written.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// One turn of the shell's loop at `now`: the marks that came in, then
    /// `tick` when one came. Returns the marks written (trace time), for a
    /// live view of the phases.
    pub fn turn(&mut self, tick: Option<&Tick>, now: Instant) -> Vec<Mark> {
        let lines = match self.marks.as_mut() {
            Some(inbox) => inbox.poll(),
            None => Vec::new(),
        };
        let written = self.write_marks(lines, now);
        if let (Some(tick), None) = (tick, &self.failed) {
            let r = self.rec.tick_at(tick, now);
            self.keep(r);
        }
        written
    }

    /// Writes an event at the time of the last sample.
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

    /// The run's scope as it is once the command exited
    /// ([`crate::step::sampler::Sampler::scope_now`]): an `oom-kill` event when its OOM
    /// killer killed since the last sample — what ended the command.
    pub fn scope_look(&mut self, scope: Option<&crate::probe::Scope>) {
        if let (Some(scope), None) = (scope, &self.failed) {
            let r = self.rec.scope_look(scope);
            self.keep(r);
        }
    }

    /// The recording ends: the marks still on their way (the reader's last
    /// look, waited for up to a second), and `swapsight mark` no longer
    /// finds it. Events may still be written after.
    pub fn finish_marks(&mut self, now: Instant) -> Vec<Mark> {
        let mut lines = match self.marks.as_mut() {
            Some(inbox) => inbox.poll(),
            None => return Vec::new(),
        };
        if let Some(inbox) = self.marks.as_mut() {
            lines.extend(inbox.finish());
        }
        let written = self.write_marks(lines, now);
        self.marks = None;
        written
    }

    fn write_marks(&mut self, lines: Vec<MarkLine>, now: Instant) -> Vec<Mark> {
        let mut written = Vec::new();
        for line in lines {
            let (name, end) = match line {
                MarkLine::Counter { name, value, unit } => {
                    if self.failed.is_none() {
                        let r = self.rec.counter_at(&name, value, &unit, now).map(drop);
                        self.keep(r);
                    }
                    counters::note_last(&mut self.last_counters, &name, value, &unit);
                    self.caches.push(&name, value);
                    continue;
                }
                MarkLine::Start(name) => {
                    self.current = Some(name.clone());
                    (name, false)
                }
                MarkLine::End(name) => {
                    let name = name.or_else(|| self.current.take()).unwrap_or_default();
                    self.current = None;
                    (name, true)
                }
            };
            if self.failed.is_some() {
                continue;
            }
            match self.rec.mark_at(&name, end, now) {
                Ok(t_ms) => written.push(Mark { t_ms, name, end }),
                Err(e) => self.keep(Err(e)),
            }
        }
        self.tell_dropped();
        written
    }

    /// A `marks-dropped` (`counters-dropped`) event when more marks
    /// (counter values) were dropped since the last one.
    fn tell_dropped(&mut self) {
        let Some(inbox) = self.marks.as_ref() else {
            return;
        };
        let (dropped, counters) = (inbox.dropped(), inbox.counters_dropped());
        if counters > self.counters_told {
            self.counters_told = counters;
            self.event(
                "counters-dropped",
                format!(
                    "{counters} counter values dropped in all: over {} a second",
                    crate::record::marks::MAX_COUNTERS_PER_SECOND
                ),
                None,
                None,
            );
        }
        if dropped > self.dropped_told {
            self.dropped_told = dropped;
            self.event(
                "marks-dropped",
                format!(
                    "{dropped} marks dropped in all: over {} a second, a write over 64 KiB cut \
                     short (the marks past the cut are not counted), or a mark path that was \
                     not a regular file",
                    crate::record::marks::MAX_PER_SECOND
                ),
                None,
                None,
            );
        }
    }

    fn keep(&mut self, r: Result<(), TraceError>) {
        if let Err(e) = r {
            let why = std::error::Error::source(&e).map_or_else(String::new, |s| format!(" ({s})"));
            self.failed = Some(format!(
                "cannot write the trace {}{why}",
                self.rec.path().display()
            ));
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
