//! Phase marks: how a command under `record`/`guard` (or any shell, through
//! `swapsight mark`) says "the decode phase starts now".
//!
//! The recorder puts a path in the command's environment
//! ([`ENV_VAR`]); writing a line to it — `echo decode > "$SWAPSIGHT_MARK"`,
//! `open(os.environ["SWAPSIGHT_MARK"], "a").write("decode\n")` — marks a
//! phase from the moment the recorder picks it up (at once: the reader
//! wakes on the write, at most one look per 50 ms).
//! A line `/` (or `/NAME`) ends the current phase without starting another.
//!
//! Why a regular file and not a FIFO: a FIFO blocks its writer's `open`
//! until a reader holds it, so once the recorder is gone (killed with
//! SIGKILL, or the command outlives it) `echo x > fifo` would hang the
//! pipeline forever — and removing the FIFO on exit is not possible after
//! a SIGKILL. Writes to a regular file never block and never fail with
//! EPIPE, whether anyone reads them or not. Shell `>` truncates, which would
//! make a file the recorder tails by offset lose or misread lines, so the
//! recorder does not tail: it *renames* the file away each time it looks
//! (the next writer creates a fresh one — `>`, `>>` and Python's `"a"` all
//! create) and reads the renamed file whole, keeping it open one more
//! round for a writer that opened it just before the rename. The directory
//! is left in place when the recorder ends (a write after that creates a
//! small file nobody reads, never an error); the next recorder removes such
//! leftovers once they are a day old.
//!
//! Everything read is bounded: [`MAX_READ_BYTES`] per look, names cut to
//! [`MAX_NAME_CHARS`] with odd bytes replaced, and at most
//! [`MAX_PER_SECOND`] marks a second (the rest are counted as dropped).
//! The reading is done by descriptor on a thread of its own (`inbox`), in a
//! per-user folder found safely even under another user's environment
//! (`registry`).

use std::path::Path;
use std::time::Instant;

mod inbox;
mod registry;
mod watch;

pub use inbox::MarkInbox;
pub(crate) use registry::pid_exists;
pub use registry::{
    is_private, parent_is_safe, private_dir_in, recorder_alive, running, running_in, runtime_dir,
    trace_key, Running, RuntimeDir,
};

/// The environment variable that holds the mark path.
pub const ENV_VAR: &str = "SWAPSIGHT_MARK";
/// Longest phase name kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Marks a second kept (a burst of this many, refilled at this rate).
pub const MAX_PER_SECOND: u32 = 50;
/// Counter values a second kept (a burst of this many, refilled at this
/// rate), apart from the marks' own allowance.
pub const MAX_COUNTERS_PER_SECOND: u32 = 50;
/// Longest counter unit, in characters.
pub const MAX_UNIT_CHARS: usize = 16;
/// What starts a counter line in the mark file: `#counter VALUE UNIT NAME`.
pub const COUNTER_PREFIX: &str = "#counter ";
/// Bytes read from the mark file per look; the rest of a larger write is dropped.
pub const MAX_READ_BYTES: u64 = 64 * 1024;

/// One line written to the mark file, cleaned.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkLine {
    /// A phase starts.
    Start(String),
    /// The current phase ends (`/` or `/NAME`; the name is informative).
    End(Option<String>),
    /// A counter's value now (`#counter VALUE UNIT NAME`).
    Counter {
        /// The counter's name, cleaned as a phase name is.
        name: String,
        /// Its value.
        value: f64,
        /// What the value counts (`bytes`, `items`, …).
        unit: String,
    },
}

/// A counter unit: 1 to [`MAX_UNIT_CHARS`] ASCII letters, digits or
/// `_ % / . -` (a unit is shown beside figures and in CSV headers).
pub fn is_unit(unit: &str) -> bool {
    (1..=MAX_UNIT_CHARS).contains(&unit.len())
        && unit
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_%/.-".contains(&b))
}

/// A counter value a trace may hold: finite, at most 2^53 either side of 0
/// (what a double and the web UI hold exactly as an integer).
pub fn is_counter_value(value: f64) -> bool {
    value.is_finite() && value.abs() <= crate::util::units::MAX_BYTES as f64
}

/// The line that writes a counter into the mark file; `None` when the name
/// is empty once cleaned, the unit is not a unit or the value is out of
/// range. The name goes last, cleaned, so it may hold spaces.
pub fn counter_line(name: &str, value: f64, unit: &str) -> Option<String> {
    let name = clean_name(name.as_bytes())?;
    (is_unit(unit) && is_counter_value(value))
        .then(|| format!("{COUNTER_PREFIX}{value} {unit} {name}"))
}

/// Parses what follows [`COUNTER_PREFIX`]; `None` when malformed.
fn parse_counter(rest: &[u8]) -> Option<MarkLine> {
    let text = std::str::from_utf8(rest).ok()?;
    let mut parts = text.trim_start().splitn(3, ' ');
    let value: f64 = parts.next()?.parse().ok()?;
    let unit = parts.next()?;
    let name = clean_name(parts.next()?.as_bytes())?;
    (is_unit(unit) && is_counter_value(value)).then(|| MarkLine::Counter {
        name,
        value,
        unit: unit.to_string(),
    })
}

/// A phase name as it may appear anywhere: control and bidi characters
/// ([`crate::util::text::is_unsafe`]) replaced by `?`, invalid UTF-8 by U+FFFD,
/// surrounding blanks trimmed, cut to [`MAX_NAME_CHARS`]. `None` when
/// nothing is left.
pub fn clean_name(raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let cleaned: String = text
        .trim()
        .chars()
        .map(crate::util::text::safe_char)
        .take(MAX_NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().to_string();
    (!cleaned.is_empty()).then_some(cleaned)
}

/// What a line holding only a clean phase name is read as, when it is not
/// the start of that phase ([`parse_line`]'s rule, which `swapsight mark`
/// and Python's `mark()` keep to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAPhase {
    /// It starts with `/`: the end of a phase.
    End,
    /// It starts with [`COUNTER_PREFIX`]: a counter.
    Counter,
}

/// `None` when `name` (already clean) written alone on a line starts phase
/// `name`; else what the recorder would read it as instead.
pub fn not_a_phase(name: &str) -> Option<NotAPhase> {
    if name.starts_with('/') {
        Some(NotAPhase::End)
    } else if name.starts_with(COUNTER_PREFIX) {
        Some(NotAPhase::Counter)
    } else {
        None
    }
}

/// Parses one line of the mark file (without its newline).
pub fn parse_line(raw: &[u8]) -> Option<MarkLine> {
    let trimmed = raw.trim_ascii();
    if let Some(rest) = trimmed.strip_prefix(COUNTER_PREFIX.as_bytes()) {
        return parse_counter(rest);
    }
    if let Some(rest) = trimmed.strip_prefix(b"/") {
        return Some(MarkLine::End(clean_name(rest)));
    }
    clean_name(trimmed).map(MarkLine::Start)
}

/// A token bucket: [`MAX_PER_SECOND`] marks a second, in bursts of as many.
#[derive(Debug, Clone)]
pub struct RateLimit {
    tokens: f64,
    last: Option<Instant>,
    per_second: f64,
}

impl RateLimit {
    pub(crate) fn new(per_second: u32) -> Self {
        RateLimit {
            tokens: f64::from(per_second),
            last: None,
            per_second: f64::from(per_second),
        }
    }

    /// Whether one more mark may be kept at `now`.
    pub fn allow(&mut self, now: Instant) -> bool {
        if let Some(last) = self.last {
            let dt = now.saturating_duration_since(last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.per_second).min(self.per_second);
        }
        self.last = Some(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Splits bytes read from the mark file into lines. A last line without a
/// newline counts too: the writer's bytes are all there once it is renamed
/// away and the straggler round is over.
pub fn split_lines(bytes: &[u8]) -> impl Iterator<Item = MarkLine> + '_ {
    bytes.split(|&b| b == b'\n').filter_map(parse_line)
}

/// Appends one line to a mark path, the way a command would: never blocks
/// and never writes through a link or into a FIFO (`O_NONBLOCK |
/// O_NOFOLLOW`, then a regular file or nothing), and says why when it cannot.
pub fn write_mark(path: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .mode(0o600)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("the mark path is not a regular file"));
    }
    f.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
#[path = "marks_tests.rs"]
mod tests;
