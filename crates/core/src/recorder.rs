//! The trace sink: turns ticks into trace lines. Every shell that records
//! (`record`, `guard`, the menu-bar app, `serve`) goes through it, so a trace
//! means the same thing whoever wrote it.
//!
//! Each sample keeps the `top_n` largest processes, the watched tree and any
//! process the detector has flagged — a bounded line however busy the
//! machine — and every flag raised or cleared is a line of its own.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::monitor::Tick;
use crate::probe::HostInfo;
use crate::trace::{Event, Header, Record, TraceError, TraceSample, TraceWriter};

// Where recordings go and what they are called is the recordings folder's
// business; these names stay for the shells that record.
pub use crate::recordings::{default_recordings_dir, default_trace_path};

pub struct Recorder {
    writer: TraceWriter,
    top_n: usize,
    /// Sample clock value that maps to the trace's `t_ms = 0`.
    t0_ms: Option<u64>,
    samples: u64,
    last_t_ms: u64,
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
        })
    }

    pub fn path(&self) -> &Path {
        self.writer.path()
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Trace time of the last sample written.
    pub fn elapsed_ms(&self) -> u64 {
        self.last_t_ms
    }

    /// Writes one tick: the kept sample, then its flags.
    pub fn tick(&mut self, tick: &Tick) -> Result<(), TraceError> {
        let t0 = *self.t0_ms.get_or_insert(tick.sample.t_ms);
        let mut sample = tick.kept_processes(self.top_n);
        sample.t_ms -= t0.min(sample.t_ms);
        self.last_t_ms = sample.t_ms;
        self.writer.write(&Record::Sample(TraceSample {
            sample,
            watched: tick.watched.clone(),
        }))?;
        self.samples += 1;
        for f in &tick.flags {
            let mut f = f.clone();
            f.t_ms = self.last_t_ms;
            self.writer.write(&Record::Flag(f))?;
        }
        Ok(())
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

/// Milliseconds since the Unix epoch, now.
pub fn unix_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A header for a recording starting now on this host.
pub fn header_now(host: HostInfo, interval_ms: u64, top_n: usize) -> Header {
    let mut h = Header::new(host, interval_ms, unix_now_ms());
    h.top_n = top_n;
    h
}
