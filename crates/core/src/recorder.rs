//! The trace sink: turns ticks into trace lines. Every shell that records
//! (`record`, `guard`, the menu-bar app, `serve`) goes through it, so a trace
//! means the same thing whoever wrote it.
//!
//! Each sample keeps the `top_n` largest processes, the watched tree and any
//! process the detector has flagged — a bounded line however busy the
//! machine — and every flag raised or cleared is a line of its own.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::monitor::Tick;
use crate::probe::HostInfo;
use crate::trace::{Event, Header, Mark, Record, TraceError, TraceSample, TraceWriter};

pub struct Recorder {
    writer: TraceWriter,
    top_n: usize,
    /// Sample clock value that maps to the trace's `t_ms = 0`.
    t0_ms: Option<u64>,
    samples: u64,
    last_t_ms: u64,
    /// When the last sample was written, to place marks between samples.
    last_tick_at: Option<Instant>,
    /// Time of the last mark: marks never go back in time, though the
    /// delay between a sample and its writing varies from tick to tick.
    last_mark_ms: u64,
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
            last_tick_at: None,
            last_mark_ms: 0,
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
        self.last_tick_at = Some(Instant::now());
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

impl Recorder {
    /// Writes a phase mark at this instant: the time of the last sample plus
    /// what has passed since it was written (0 before the first sample).
    /// Returns the mark's time.
    pub fn mark(&mut self, name: &str, end: bool) -> Result<u64, TraceError> {
        let since = self
            .last_tick_at
            .map_or(0, |at| at.elapsed().as_millis() as u64);
        let t_ms = self.last_t_ms.saturating_add(since).max(self.last_mark_ms);
        self.last_mark_ms = t_ms;
        self.writer.write(&Record::Mark(Mark {
            t_ms,
            name: name.into(),
            end,
        }))?;
        Ok(t_ms)
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

/// `swapsight-20261129-175645.jsonl` (UTC) in `dir`; `…-175645-2.jsonl`
/// and so on when a trace of that second exists already, so a recording
/// started right after another never overwrites it.
pub fn default_trace_path(dir: &Path, unix_ms: u64) -> PathBuf {
    let secs = unix_ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    let stem = format!(
        "swapsight-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    let mut path = dir.join(format!("{stem}.jsonl"));
    let mut n = 2;
    while path.exists() {
        path = dir.join(format!("{stem}-{n}.jsonl"));
        n += 1;
    }
    path
}

/// Where recordings go by default — the same folder for `serve` and the
/// menu-bar app: `swapsight-recordings` under the data dir (`$XDG_DATA_HOME`
/// or `~/.local/share`; `~/Library/Application Support` on macOS).
pub fn default_recordings_dir() -> PathBuf {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let data = if cfg!(target_os = "macos") {
        home.map(|h| h.join("Library/Application Support"))
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .filter(|d| Path::new(d).is_absolute())
            .map(PathBuf::from)
            .or_else(|| home.map(|h| h.join(".local/share")))
    };
    data.unwrap_or_else(|| PathBuf::from("."))
        .join("swapsight-recordings")
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_names_carry_utc_date_and_time() {
        // 2026-11-29 17:56:45 UTC
        let p = default_trace_path(Path::new("/tmp"), 1_795_975_005_000);
        assert_eq!(p, Path::new("/tmp/swapsight-20261129-175645.jsonl"));
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        let dir = std::env::temp_dir().join(format!("swapsight-names-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = default_trace_path(&dir, 1_795_975_005_000);
        std::fs::write(&first, b"").unwrap();
        let second = default_trace_path(&dir, 1_795_975_005_900);
        assert_eq!(second, dir.join("swapsight-20261129-175645-2.jsonl"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
