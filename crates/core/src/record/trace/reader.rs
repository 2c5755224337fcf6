//! The trace reader: one record at a time, tolerant of bad lines and
//! bounded in what it holds and reads (the rules are in [`crate::record::trace`]).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::check::{check, Rises};
use super::clean;
use super::fast::fast_sample;
use super::records::{Header, Record, FORMAT, SCHEMA};
use crate::probe::HostInfo;

/// Longest line the reader takes. A sample of 100,000 processes is ~20 MiB;
/// this leaves three times that, and bounds what a file without newlines
/// (`/dev/zero`) costs before it is refused.
pub const MAX_LINE_BYTES: usize = 64 << 20;
/// Lines in a row that hold no record (malformed or blank) after which the
/// reader gives up: the recorder writes one record a line, so a run this long
/// is not a damaged trace but something else.
pub const MAX_BAD_RUN: usize = 1000;
/// Malformed lines kept with their reason; the rest are only counted.
pub const KEPT_PROBLEMS: usize = 10;

/// Errors that make a trace unreadable as a whole (one bad line is not one).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("cannot read {path}")]
    Io {
        /// The trace.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// A trace being recorded could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The trace.
        path: PathBuf,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The file ends before any record: it is empty, or blank lines only.
    #[error("{path}: empty file, not a swapsight trace")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// The first line that is not blank is no trace header: another kind
    /// of file.
    #[error("{path}:{line}: not a swapsight trace header ({detail})")]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// The line read as the header (1-based).
        line: usize,
        /// Why it is no header.
        detail: String,
    },
    /// The header's schema is newer than this reader's [`SCHEMA`].
    #[error("{path}:{line}: trace schema {schema} is newer than this swapsight reads ({SCHEMA}); upgrade swapsight")]
    TooNew {
        /// The trace.
        path: PathBuf,
        /// The header's line (1-based).
        line: usize,
        /// The schema the header names.
        schema: u32,
    },
    /// A line longer than the reader takes ([`MAX_LINE_BYTES`]).
    #[error("{path}:{line}: line longer than {} MiB, not a swapsight trace line", MAX_LINE_BYTES >> 20)]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// The long line (1-based).
        line: usize,
    },
    /// [`MAX_BAD_RUN`] lines in a row held no record.
    #[error(
        "{path}:{first}-{last}: {MAX_BAD_RUN} lines in a row hold no record, giving up ({problem})"
    )]
    TooManyBadLines {
        /// The file.
        path: PathBuf,
        /// The run's first line (1-based).
        first: usize,
        /// Its last line.
        last: usize,
        /// What was wrong with its first malformed line ("all blank" when
        /// none was malformed).
        problem: String,
    },
}

/// A line that could not be read, by number (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineProblem {
    /// The line's number.
    pub line: usize,
    pub(crate) detail: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.detail)
    }
}

/// What a read skipped or noticed besides the records, as [`Trace`](super::Trace) keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadNotes {
    /// The first [`KEPT_PROBLEMS`] malformed lines, skipped.
    pub problems: Vec<LineProblem>,
    /// How many lines were malformed and skipped in all.
    pub bad_lines: usize,
    /// The last line was cut off (the recorder was killed); not an error.
    pub truncated_last_line: bool,
    /// Lines of a record type this version does not know; skipped.
    pub unknown_records: usize,
}

/// A trace read one record at a time, with the tolerance and the bounds of
/// [`read`](super::read) (which is built on it): bad lines are counted by number in
/// [`TraceReader::notes`], and the same errors end the read. What it holds
/// is one line, whatever the size of the trace; the caller keeps what its
/// output needs.
pub struct TraceReader<R> {
    input: R,
    path: PathBuf,
    header: Header,
    buf: Vec<u8>,
    line_no: usize,
    /// Lines in a row without a record, and the first problem among them.
    run: usize,
    run_problem: Option<LineProblem>,
    /// Stop before this line (a second pass reads what the first one did).
    stop_at: Option<usize>,
    notes: ReadNotes,
    /// The notes of the first pass, once a second one started.
    first_notes: Option<ReadNotes>,
    /// Only this user's processes keep their command lines
    /// ([`TraceReader::keep_commands_of`]).
    commands_of: Option<u32>,
    /// The checks that span records (a counter's rise), for this pass.
    rises: Rises,
}

impl TraceReader<BufReader<File>> {
    /// Opens a trace file and reads its header.
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = File::open(path).map_err(|source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::new(BufReader::with_capacity(256 * 1024, file), path)
    }
}

impl<R: BufRead> TraceReader<R> {
    /// Reads up to and including the header; `path` is only used in messages.
    pub fn new(input: R, path: &Path) -> Result<Self, TraceError> {
        let mut reader = TraceReader {
            input,
            path: path.to_path_buf(),
            header: Header::new(HostInfo::default(), 0, 0),
            buf: Vec::with_capacity(16 * 1024),
            line_no: 0,
            run: 0,
            run_problem: None,
            stop_at: None,
            notes: ReadNotes::default(),
            first_notes: None,
            commands_of: None,
            rises: Rises::default(),
        };
        match reader.next_line(false)? {
            Some(Record::Header(h)) => reader.header = h,
            Some(_) => unreachable!("before the header, only a header is a record"),
            None => return Err(TraceError::Empty { path: reader.path }),
        }
        Ok(reader)
    }

    /// The trace's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The path given, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines read so far (the header's included).
    pub fn lines(&self) -> usize {
        self.line_no
    }

    /// What was skipped so far (in the first pass, once there is a second).
    pub fn notes(&self) -> &ReadNotes {
        self.first_notes.as_ref().unwrap_or(&self.notes)
    }

    pub(crate) fn into_notes(self) -> ReadNotes {
        self.first_notes.unwrap_or(self.notes)
    }

    /// The next record after the header (never a header), or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        let mut record = self.next_line(true)?;
        if let (Some(uid), Some(Record::Sample(s))) = (self.commands_of, record.as_mut()) {
            for p in &mut s.sample.processes {
                p.keep_command_of(uid);
            }
        }
        Ok(record)
    }

    /// Keeps the command lines of `uid`'s processes only, in every sample
    /// read from now on (`swapsight serve`: another user's arguments are
    /// theirs to read, see `live::own_commands`); `None` keeps all.
    pub fn keep_commands_of(mut self, uid: Option<u32>) -> Self {
        self.commands_of = uid;
        self
    }

    /// Reads lines until one holds a record. `started`: the header is read.
    fn next_line(&mut self, started: bool) -> Result<Option<Record>, TraceError> {
        let path = self.path.as_path();
        let io = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        loop {
            if self.stop_at.is_some_and(|n| self.line_no + 1 >= n) {
                return Ok(None);
            }
            self.line_no += 1;
            let line_no = self.line_no;
            let complete =
                match read_line(&mut self.input, &mut self.buf, MAX_LINE_BYTES).map_err(io)? {
                    Line::Eof => {
                        self.line_no -= 1;
                        return Ok(None);
                    }
                    Line::TooLong => {
                        return Err(TraceError::LineTooLong {
                            path: path.to_path_buf(),
                            line: line_no,
                        })
                    }
                    Line::Read { complete } => complete,
                };
            let text = self.buf.trim_ascii();
            let mut record = None;
            let outcome = if text.is_empty() {
                Outcome::Blank
            } else {
                let parsed = fast_sample(text)
                    .map_or_else(|| serde_json::from_slice::<Record>(text), Ok)
                    .map_err(Bad::Json)
                    .and_then(|r| check(&r).map(|()| r).map_err(Bad::Range))
                    .and_then(|r| self.rises.check(&r).map(|()| r).map_err(Bad::Range))
                    .map(clean::clean);
                match (parsed, started) {
                    (Ok(Record::Header(h)), false) => {
                        record = Some(Record::Header(accept_header(h, path, line_no)?));
                        Outcome::Record
                    }
                    (Ok(_), false) => {
                        return Err(not_a_trace(path, line_no, "first record is not a header"))
                    }
                    (Err(bad), false) => return Err(not_a_trace(path, line_no, &bad.to_string())),
                    (Ok(Record::Header(_)), true) => Outcome::Bad(Bad::SecondHeader),
                    (Ok(r), true) => {
                        record = Some(r);
                        Outcome::Record
                    }
                    (Err(_), true) if !complete && is_eof(&mut self.input) => {
                        self.notes.truncated_last_line = true;
                        Outcome::Record
                    }
                    (Err(_), true) if is_unknown_type(text) => {
                        self.notes.unknown_records += 1;
                        Outcome::Record
                    }
                    (Err(bad), true) => Outcome::Bad(bad),
                }
            };
            let bad = match outcome {
                Outcome::Record => {
                    self.run = 0;
                    self.run_problem = None;
                    match record {
                        Some(r) => return Ok(Some(r)),
                        None => continue,
                    }
                }
                Outcome::Blank => None,
                Outcome::Bad(bad) => Some(bad),
            };
            if let Some(bad) = bad {
                self.notes.bad_lines += 1;
                let keep = self.notes.problems.len() < KEPT_PROBLEMS;
                // Words only for the lines kept: a file of garbage is mostly counted.
                if keep || self.run_problem.is_none() {
                    let p = LineProblem {
                        line: line_no,
                        detail: shorten(bad.to_string()),
                    };
                    if keep {
                        self.notes.problems.push(p.clone());
                    }
                    self.run_problem.get_or_insert(p);
                }
            }
            self.run += 1;
            if self.run >= MAX_BAD_RUN {
                return Err(TraceError::TooManyBadLines {
                    path: path.to_path_buf(),
                    first: line_no + 1 - self.run,
                    last: line_no,
                    problem: self
                        .run_problem
                        .take()
                        .map_or_else(|| "all blank".into(), |p| p.to_string()),
                });
            }
        }
    }
}

impl<R: BufRead + Seek> TraceReader<R> {
    /// Reads the trace again from its first record after the header, up to
    /// the line this pass stopped at, for an output that needs totals
    /// before its figures (a chart's time range, a phase's span): a trace
    /// still being written is read the same in both passes. The notes stay
    /// those of the first pass.
    pub fn rewind(&mut self) -> Result<(), TraceError> {
        // A last line cut off in the first pass may be whole by now: the
        // second pass stops before it, so both passes read the same records.
        let stop = if self.notes().truncated_last_line {
            self.line_no
        } else {
            self.line_no + 1
        };
        self.input
            .seek(SeekFrom::Start(0))
            .map_err(|source| TraceError::Io {
                path: self.path.clone(),
                source,
            })?;
        let notes = std::mem::take(&mut self.notes);
        self.first_notes.get_or_insert(notes);
        (self.line_no, self.run, self.run_problem) = (0, 0, None);
        self.rises = Rises::default();
        self.stop_at = Some(stop);
        if self.next_line(false)?.is_none() {
            return Err(TraceError::Empty {
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

fn not_a_trace(path: &Path, line: usize, detail: &str) -> TraceError {
    TraceError::NotATrace {
        path: path.to_path_buf(),
        line,
        detail: shorten(detail.to_string()),
    }
}

/// Longest reason kept for a bad line: serde quotes the offending value,
/// which in a hostile file can be megabytes long.
const MAX_DETAIL_CHARS: usize = 200;

fn shorten(mut detail: String) -> String {
    if let Some((cut, _)) = detail.char_indices().nth(MAX_DETAIL_CHARS) {
        detail.truncate(cut);
        detail.push('…');
    }
    // One line, whatever the value quoted held, and nothing a terminal obeys.
    crate::util::text::clean(&detail.replace(['\n', '\r'], " ")).into_owned()
}

fn accept_header(h: Header, path: &Path, line: usize) -> Result<Header, TraceError> {
    if h.format != FORMAT {
        return Err(not_a_trace(
            path,
            line,
            &format!("format is '{}', expected '{FORMAT}'", h.format),
        ));
    }
    if h.schema > SCHEMA {
        return Err(TraceError::TooNew {
            path: path.to_path_buf(),
            line,
            schema: h.schema,
        });
    }
    Ok(h)
}

/// What one line held.
enum Outcome {
    /// A record (or a line that is fine to skip: unknown type, cut-off tail).
    Record,
    Blank,
    Bad(Bad),
}

/// Why a line is not a record, put in words only when it is shown.
enum Bad {
    Json(serde_json::Error),
    Range(String),
    SecondHeader,
}

impl std::fmt::Display for Bad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bad::Json(e) => e.fmt(f),
            Bad::Range(why) => f.write_str(why),
            Bad::SecondHeader => f.write_str("a second header; skipped"),
        }
    }
}

enum Line {
    Eof,
    /// `complete`: it ended in a newline.
    Read {
        complete: bool,
    },
    TooLong,
}

/// Reads one line into `buf` (cleared first), but never more than `cap`
/// bytes of it: a longer line is reported as soon as it passes the cap, so a
/// file without newlines costs `cap` bytes of memory and no more.
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>, cap: usize) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if buf.is_empty() {
                Line::Eof
            } else {
                Line::Read { complete: false }
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len().saturating_add(take) > cap {
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(&chunk[..take]);
        input.consume(take);
        if done {
            return Ok(Line::Read { complete: true });
        }
    }
}

fn is_eof(input: &mut impl BufRead) -> bool {
    input.fill_buf().map(|b| b.is_empty()).unwrap_or(true)
}

/// Valid JSON whose `type` this version does not know.
pub(super) fn is_unknown_type(text: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_slice::<Typed>(text).is_ok_and(|t| {
        !matches!(
            t.kind.as_str(),
            "header" | "sample" | "flag" | "event" | "mark" | "counter"
        )
    })
}
