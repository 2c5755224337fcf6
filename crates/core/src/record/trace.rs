//! The trace format: JSON Lines, append-only, one record a line, flushed after
//! every sample so that a recorder killed mid-run keeps every line before the
//! one it was writing. Schema in `docs/trace-format.md`.
//!
//! The reader is tolerant: a malformed line is reported by number and the rest
//! recovered; a truncated last line (the recorder was killed) is expected and
//! not an error; records of unknown type (from a newer swapsight) are skipped.
//! It is also bounded, because a trace may come from anywhere: a line longer
//! than [`MAX_LINE_BYTES`] or [`MAX_BAD_RUN`] lines in a row without a record
//! end the read, only the first [`KEPT_PROBLEMS`] bad lines are kept (the rest
//! are counted), and figures no OS produces are refused line by line (see
//! [`check`]), so that nothing downstream does arithmetic on them. Every
//! string a record holds is cleaned of control and bidi characters
//! ([`crate::util::text`]) before it is kept.

use std::fs::File;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::step::detect::Flag;

mod check;
mod clean;
mod fast;
mod reader;
mod records;
pub use crate::util::units::MAX_BYTES;
pub use check::check;
pub use reader::{
    LineProblem, ReadNotes, TraceError, TraceReader, KEPT_PROBLEMS, MAX_BAD_RUN, MAX_LINE_BYTES,
};
pub use records::{
    Counter, Event, Header, Mark, Record, TraceSample, Watching, FORMAT, MAX_START_UNIX_MS,
    MAX_T_MS, SCHEMA,
};

/// Most counter points a reader keeps; the rest are counted in
/// [`Trace::counters_dropped`].
pub const MAX_COUNTERS: usize = 200_000;

/// Most marks a reader keeps; the rest are counted in [`Trace::marks_dropped`].
pub const MAX_MARKS: usize = 100_000;

/// Appends records to a trace file, one flushed line each.
pub struct TraceWriter {
    out: BufWriter<File>,
    path: PathBuf,
    line: Vec<u8>,
}

impl TraceWriter {
    /// Creates (truncates) `path` and writes the header line.
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        let io = |source| TraceError::Write {
            path: path.to_path_buf(),
            source,
        };
        // Owner-only: a trace holds command lines, which macOS shows no
        // other user (`KERN_PROCARGS2` answers the same user or root). Never
        // through another user's link (see `outpath`).
        let file = crate::util::outpath::locate(path)
            .and_then(|place| place.create_owner_only())
            .map_err(io)?;
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(64 * 1024, file),
            path: path.to_path_buf(),
            line: Vec::with_capacity(8 * 1024),
        };
        w.write(&Record::Header(header.clone()))?;
        Ok(w)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one record as one line and hands it to the OS at once.
    pub fn write(&mut self, record: &Record) -> Result<(), TraceError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, record).map_err(|e| TraceError::Write {
            path: self.path.clone(),
            source: e.into(),
        })?;
        self.line.push(b'\n');
        let io = |source| TraceError::Write {
            path: self.path.clone(),
            source,
        };
        self.out.write_all(&self.line).map_err(io)?;
        self.out.flush().map_err(io)?;
        // Writes to a file whose last name is gone (`rm -rf` of its folder)
        // succeed and land nowhere: a write error all the same.
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::nlink(&self.out.get_ref().metadata().map_err(io)?) == 0 {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the trace file was deleted while recording",
            )));
        }
        Ok(())
    }
}

/// A whole trace, read back.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The header line; `Some` in every trace [`read`] returns.
    pub header: Option<Header>,
    /// The samples, in order.
    pub samples: Vec<TraceSample>,
    /// The flags the live detector wrote.
    pub flags: Vec<Flag>,
    /// The events, in order.
    pub events: Vec<Event>,
    /// Phase marks, in the order written (at most [`MAX_MARKS`]).
    pub marks: Vec<Mark>,
    /// Marks past [`MAX_MARKS`], counted and not kept.
    pub marks_dropped: usize,
    /// Counter points, in the order written (at most [`MAX_COUNTERS`]).
    pub counters: Vec<Counter>,
    /// Counter points past [`MAX_COUNTERS`], counted and not kept.
    pub counters_dropped: usize,
    /// The first [`KEPT_PROBLEMS`] malformed lines, skipped.
    pub problems: Vec<LineProblem>,
    /// How many lines were malformed and skipped in all.
    pub bad_lines: usize,
    /// The last line was cut off (the recorder was killed); not an error.
    pub truncated_last_line: bool,
    /// Lines of a record type this version does not know; skipped.
    pub unknown_records: usize,
}

impl Trace {
    /// The header; every trace read by [`read`] has one.
    pub fn header(&self) -> &Header {
        self.header.as_ref().expect("read() guarantees a header")
    }

    /// What the read skipped, as a [`TraceReader`] tells it.
    pub fn notes(&self) -> ReadNotes {
        ReadNotes {
            problems: self.problems.clone(),
            bad_lines: self.bad_lines,
            truncated_last_line: self.truncated_last_line,
            unknown_records: self.unknown_records,
        }
    }

    /// Duration from the first to the last sample.
    pub fn duration_ms(&self) -> u64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => b.sample.t_ms.saturating_sub(a.sample.t_ms),
            _ => 0,
        }
    }
}

/// Reads a trace file. Fails only when the file cannot be read or is not a
/// trace at all; bad lines land in [`Trace::problems`]. Holds every record:
/// for a trace of any size, fold over a [`TraceReader`] instead.
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    read_all(TraceReader::open(path)?)
}

/// Reads a trace from any reader; `path` is only used in messages.
pub fn read_from(input: impl BufRead, path: &Path) -> Result<Trace, TraceError> {
    read_all(TraceReader::new(input, path)?)
}

/// The rest of the trace a reader yields, kept whole.
pub fn read_all<R: BufRead>(mut reader: TraceReader<R>) -> Result<Trace, TraceError> {
    let mut trace = Trace {
        header: Some(reader.header().clone()),
        ..Trace::default()
    };
    let mut marks = MarkList::default();
    while let Some(record) = reader.next_record()? {
        match record {
            Record::Header(_) => {}
            Record::Sample(s) => trace.samples.push(s),
            Record::Flag(f) => trace.flags.push(f),
            Record::Event(e) => trace.events.push(e),
            Record::Mark(m) => marks.push(m),
            Record::Counter(c) if trace.counters.len() < MAX_COUNTERS => trace.counters.push(c),
            Record::Counter(_) => trace.counters_dropped += 1,
        }
    }
    (trace.marks, trace.marks_dropped) = (marks.marks, marks.dropped);
    let notes = reader.into_notes();
    trace.problems = notes.problems;
    trace.bad_lines = notes.bad_lines;
    trace.truncated_last_line = notes.truncated_last_line;
    trace.unknown_records = notes.unknown_records;
    Ok(trace)
}

/// The marks a reader keeps: the first [`MAX_MARKS`], the rest counted.
#[derive(Debug, Clone, Default)]
pub struct MarkList {
    pub(crate) marks: Vec<Mark>,
    pub(crate) dropped: usize,
}

impl MarkList {
    pub(crate) fn push(&mut self, m: Mark) {
        if self.marks.len() < MAX_MARKS {
            self.marks.push(m);
        } else {
            self.dropped += 1;
        }
    }
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
