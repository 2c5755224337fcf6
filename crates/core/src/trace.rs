//! The trace format: JSON Lines, append-only, one record a line, flushed after
//! every sample so that a recorder killed mid-run keeps every line before the
//! one it was writing. Schema in `docs/trace-format.md`.
//!
//! The reader is tolerant: a malformed line is reported by number and the rest
//! recovered; a truncated last line (the recorder was killed) is expected and
//! not an error; records of unknown type (from a newer swapsight) are skipped.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::detect::{DetectorConfig, Flag};
use crate::probe::{HostInfo, Sample};

/// `format` field of the header line.
pub const FORMAT: &str = "swapsight-trace";
/// Schema version; readers accept this and older.
pub const SCHEMA: u32 = 1;

/// First line of every trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub schema: u32,
    pub host: HostInfo,
    pub interval_ms: u64,
    /// Wall-clock start, ms since the Unix epoch; every `t_ms` counts from it.
    pub start_unix_ms: u64,
    /// The command run under `record`/`guard`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The root of the watched tree (the command's pid, or `--pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_pid: Option<u32>,
    /// How many of the largest processes each sample keeps besides the watched tree.
    #[serde(default)]
    pub top_n: usize,
    #[serde(default)]
    pub detector: DetectorConfig,
    /// Which tool wrote it, e.g. `swapsight 0.1.0 record`.
    #[serde(default)]
    pub writer: String,
}

impl Header {
    pub fn new(host: HostInfo, interval_ms: u64, start_unix_ms: u64) -> Self {
        Header {
            format: FORMAT.into(),
            schema: SCHEMA,
            host,
            interval_ms,
            start_unix_ms,
            command: None,
            watch_pid: None,
            top_n: 0,
            detector: DetectorConfig::default(),
            writer: format!("swapsight {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// One sample line: the probe's sample plus the watched pids at that tick.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceSample {
    #[serde(flatten)]
    pub sample: Sample,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watched: Vec<u32>,
}

/// Something that happened: the command started or exited, the guard
/// stopped it, the baseline was reset…
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub t_ms: u64,
    /// `command-start`, `command-exit`, `guard-wait`, `guard-stop`,
    /// `recording-stop`, `baseline-reset`, …
    pub kind: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
}

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Record {
    Header(Header),
    Sample(TraceSample),
    Flag(Flag),
    Event(Event),
}

/// Errors that make a trace unreadable as a whole (one bad line is not one).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("cannot read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: empty file, not a swapsight trace")]
    Empty { path: PathBuf },
    #[error("{path}:1: not a swapsight trace header ({detail})")]
    NotATrace { path: PathBuf, detail: String },
    #[error("{path}:1: trace schema {schema} is newer than this swapsight reads ({SCHEMA}); upgrade swapsight")]
    TooNew { path: PathBuf, schema: u32 },
}

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
        // other user (`KERN_PROCARGS2` answers the same user or root).
        let mut open = std::fs::OpenOptions::new();
        open.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
        let file = open.open(path).map_err(io)?;
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(64 * 1024, file),
            path: path.to_path_buf(),
            line: Vec::with_capacity(8 * 1024),
        };
        w.write(&Record::Header(header.clone()))?;
        Ok(w)
    }

    pub fn path(&self) -> &Path {
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
        self.out.flush().map_err(io)
    }
}

/// A line that could not be read, by number (1-based).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineProblem {
    pub line: usize,
    pub detail: String,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.detail)
    }
}

/// A whole trace, read back.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub header: Option<Header>,
    pub samples: Vec<TraceSample>,
    pub flags: Vec<Flag>,
    pub events: Vec<Event>,
    /// Malformed lines, skipped.
    pub problems: Vec<LineProblem>,
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

    /// Duration from the first to the last sample.
    pub fn duration_ms(&self) -> u64 {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => b.sample.t_ms.saturating_sub(a.sample.t_ms),
            _ => 0,
        }
    }
}

/// Reads a trace file. Fails only when the file cannot be read or is not a
/// trace at all; bad lines land in [`Trace::problems`].
pub fn read(path: &Path) -> Result<Trace, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_from(BufReader::with_capacity(256 * 1024, file), path)
}

/// Reads a trace from any reader; `path` is only used in messages.
pub fn read_from(mut input: impl BufRead, path: &Path) -> Result<Trace, TraceError> {
    let mut trace = Trace::default();
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = input
            .read_until(b'\n', &mut buf)
            .map_err(|source| TraceError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let complete = buf.last() == Some(&b'\n');
        let text = buf.trim_ascii();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Record>(text) {
            Ok(Record::Header(h)) if line_no == 1 => {
                if h.format != FORMAT {
                    return Err(TraceError::NotATrace {
                        path: path.to_path_buf(),
                        detail: format!("format is '{}', expected '{FORMAT}'", h.format),
                    });
                }
                if h.schema > SCHEMA {
                    return Err(TraceError::TooNew {
                        path: path.to_path_buf(),
                        schema: h.schema,
                    });
                }
                trace.header = Some(h);
            }
            Ok(_) if line_no == 1 => {
                return Err(TraceError::NotATrace {
                    path: path.to_path_buf(),
                    detail: "first record is not a header".into(),
                })
            }
            Ok(Record::Header(_)) => trace.problems.push(LineProblem {
                line: line_no,
                detail: "a second header; skipped".into(),
            }),
            Ok(Record::Sample(s)) => trace.samples.push(s),
            Ok(Record::Flag(f)) => trace.flags.push(f),
            Ok(Record::Event(e)) => trace.events.push(e),
            Err(e) => {
                if line_no == 1 {
                    return Err(TraceError::NotATrace {
                        path: path.to_path_buf(),
                        detail: e.to_string(),
                    });
                }
                if !complete && is_eof(&mut input) {
                    trace.truncated_last_line = true;
                } else if is_unknown_type(text) {
                    trace.unknown_records += 1;
                } else {
                    trace.problems.push(LineProblem {
                        line: line_no,
                        detail: e.to_string(),
                    });
                }
            }
        }
    }
    if trace.header.is_none() {
        return Err(TraceError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(trace)
}

fn is_eof(input: &mut impl BufRead) -> bool {
    input.fill_buf().map(|b| b.is_empty()).unwrap_or(true)
}

/// Valid JSON whose `type` this version does not know.
fn is_unknown_type(text: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Typed {
        #[serde(rename = "type")]
        kind: String,
    }
    serde_json::from_slice::<Typed>(text)
        .is_ok_and(|t| !matches!(t.kind.as_str(), "header" | "sample" | "flag" | "event"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{ProcessSample, SystemSample};

    fn header() -> Header {
        Header::new(
            HostInfo {
                os: "linux".into(),
                phys_bytes: 8 << 30,
                page_size: 4096,
                hostname: "h".into(),
            },
            500,
            1_700_000_000_000,
        )
    }

    fn sample(t_ms: u64) -> Record {
        Record::Sample(TraceSample {
            sample: Sample {
                t_ms,
                system: SystemSample {
                    phys_bytes: 8 << 30,
                    free_pct: 50.0,
                    swap_used_bytes: t_ms * 1000,
                    ..Default::default()
                },
                processes: vec![ProcessSample {
                    pid: 42,
                    name: "python".into(),
                    footprint_bytes: 1 << 30,
                    ..Default::default()
                }],
            },
            watched: vec![42],
        })
    }

    fn write_trace(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        for r in std::iter::once(&Record::Header(header())).chain(records) {
            serde_json::to_writer(&mut out, r).unwrap();
            out.push(b'\n');
        }
        out
    }

    fn read_bytes(bytes: &[u8]) -> Result<Trace, TraceError> {
        read_from(bytes, Path::new("t.jsonl"))
    }

    #[test]
    fn round_trip() {
        let bytes = write_trace(&[sample(0), sample(500)]);
        let t = read_bytes(&bytes).unwrap();
        assert_eq!(t.header().interval_ms, 500);
        assert_eq!(t.samples.len(), 2);
        assert_eq!(t.samples[1].sample.system.swap_used_bytes, 500_000);
        assert_eq!(t.samples[1].watched, vec![42]);
        assert!(t.problems.is_empty());
        assert!(!t.truncated_last_line);
        assert_eq!(t.duration_ms(), 500);
    }

    #[test]
    fn truncated_last_line_is_not_an_error() {
        let mut bytes = write_trace(&[sample(0), sample(500)]);
        bytes.truncate(bytes.len() - 20);
        let t = read_bytes(&bytes).unwrap();
        assert_eq!(t.samples.len(), 1);
        assert!(t.truncated_last_line);
        assert!(t.problems.is_empty());
    }

    #[test]
    fn malformed_line_is_named_and_the_rest_recovered() {
        let mut bytes = write_trace(&[sample(0)]);
        bytes.extend_from_slice(b"{\"type\":\"sample\",\"t_ms\":\"oops\"}\n");
        bytes.extend_from_slice(b"garbage\n");
        bytes.extend_from_slice(&write_trace(&[sample(1000)])[..]);
        let t = read_bytes(&bytes).unwrap();
        assert_eq!(t.samples.len(), 2);
        let lines: Vec<usize> = t.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 4, 5], "{:?}", t.problems); // 5 = the second header
    }

    #[test]
    fn unknown_record_types_are_skipped_quietly() {
        let mut bytes = write_trace(&[sample(0)]);
        bytes.extend_from_slice(b"{\"type\":\"gpu\",\"t_ms\":5}\n");
        let t = read_bytes(&bytes).unwrap();
        assert_eq!(t.unknown_records, 1);
        assert!(t.problems.is_empty());
    }

    #[test]
    fn not_a_trace() {
        assert!(matches!(read_bytes(b""), Err(TraceError::Empty { .. })));
        let e = read_bytes(b"hello\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.jsonl:1: not a swapsight trace header"),
            "{e}"
        );
        let bytes = write_trace(&[]);
        let body = String::from_utf8(bytes)
            .unwrap()
            .replace("\"schema\":1", "\"schema\":99");
        assert!(matches!(
            read_bytes(body.as_bytes()),
            Err(TraceError::TooNew { schema: 99, .. })
        ));
        let first_sample = serde_json::to_vec(&sample(0)).unwrap();
        assert!(matches!(
            read_bytes(&first_sample),
            Err(TraceError::NotATrace { .. })
        ));
    }

    #[test]
    fn writer_flushes_every_line() {
        let dir = std::env::temp_dir().join(format!("swapsight-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("w.jsonl");
        let mut w = TraceWriter::create(&path, &header()).unwrap();
        w.write(&sample(0)).unwrap();
        // Read while the writer is still open: everything written is on disk.
        let t = read(&path).unwrap();
        assert_eq!(t.samples.len(), 1);
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
