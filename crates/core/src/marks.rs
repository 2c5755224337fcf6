//! Phase marks: how a command under `record`/`guard` (or any shell, through
//! `swapsight mark`) says "the decode phase starts now".
//!
//! The recorder puts a path in the command's environment
//! ([`ENV_VAR`]); writing a line to it — `echo decode > "$SWAPSIGHT_MARK"`,
//! `open(os.environ["SWAPSIGHT_MARK"], "a").write("decode\n")` — marks a
//! phase from the moment the recorder picks it up (it looks every 100 ms).
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

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The environment variable that holds the mark path.
pub const ENV_VAR: &str = "SWAPSIGHT_MARK";
/// Longest phase name kept, in characters.
pub const MAX_NAME_CHARS: usize = 64;
/// Marks a second kept (a burst of this many, refilled at this rate).
pub const MAX_PER_SECOND: u32 = 50;
/// Bytes read from the mark file per look; the rest of a larger write is dropped.
pub const MAX_READ_BYTES: u64 = 64 * 1024;
/// Leftover mark directories of ended recorders are removed after this.
const STALE_AFTER: Duration = Duration::from_secs(24 * 3600);

/// One line written to the mark file, cleaned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkLine {
    /// A phase starts.
    Start(String),
    /// The current phase ends (`/` or `/NAME`; the name is informative).
    End(Option<String>),
}

/// A phase name as it may appear anywhere: control and bidi characters
/// ([`crate::text::is_unsafe`]) replaced by `?`, invalid UTF-8 by U+FFFD,
/// surrounding blanks trimmed, cut to [`MAX_NAME_CHARS`]. `None` when
/// nothing is left.
pub fn clean_name(raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let cleaned: String = text
        .trim()
        .chars()
        .map(crate::text::safe_char)
        .take(MAX_NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().to_string();
    (!cleaned.is_empty()).then_some(cleaned)
}

/// Parses one line of the mark file (without its newline).
pub fn parse_line(raw: &[u8]) -> Option<MarkLine> {
    let trimmed = raw.trim_ascii();
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
    pub fn new(per_second: u32) -> Self {
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

/// The recorder's end of the mark path: a private directory holding `mark`.
pub struct MarkInbox {
    dir: PathBuf,
    path: PathBuf,
    /// The file renamed away last round, read again once for stragglers.
    previous: Option<File>,
    limit: RateLimit,
    dropped: u64,
    generation: u64,
}

impl MarkInbox {
    /// Creates a private directory for this recorder under the per-user
    /// runtime directory and registers `trace` as what it records.
    pub fn create(trace: &Path) -> std::io::Result<MarkInbox> {
        MarkInbox::create_in(&runtime_dir()?, trace)
    }

    /// [`MarkInbox::create`] under `base` (a private directory).
    pub fn create_in(base: &Path, trace: &Path) -> std::io::Result<MarkInbox> {
        remove_stale(base);
        let dir = base.join(format!(
            "rec-{}-{}",
            std::process::id(),
            crate::recorder::unix_now_ms()
        ));
        std::fs::create_dir(&dir)?;
        let trace = std::fs::canonicalize(trace).unwrap_or_else(|_| trace.to_path_buf());
        std::fs::write(dir.join("trace"), trace.as_os_str().as_encoded_bytes())?;
        Ok(MarkInbox {
            path: dir.join("mark"),
            dir,
            previous: None,
            limit: RateLimit::new(MAX_PER_SECOND),
            dropped: 0,
            generation: 0,
        })
    }

    /// The path to put in [`ENV_VAR`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks dropped so far by the rate limit or the read cap.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Takes what was written since the last look, within the limits.
    pub fn poll(&mut self) -> Vec<MarkLine> {
        let mut bytes = Vec::new();
        if let Some(mut f) = self.previous.take() {
            self.read_capped(&mut f, &mut bytes);
        }
        self.generation += 1;
        let taken = self.dir.join(format!("taken-{}", self.generation % 2));
        if std::fs::rename(&self.path, &taken).is_ok() {
            if let Ok(mut f) = File::open(&taken) {
                self.read_capped(&mut f, &mut bytes);
                self.previous = Some(f);
            }
            // Open files keep the data; the name is not needed any more.
            let _ = std::fs::remove_file(&taken);
        }
        let now = Instant::now();
        let mut out = Vec::new();
        for line in split_lines(&bytes) {
            if self.limit.allow(now) {
                out.push(line);
            } else {
                self.dropped += 1;
            }
        }
        out
    }

    fn read_capped(&mut self, f: &mut File, bytes: &mut Vec<u8>) {
        let start = bytes.len();
        let _ = f.by_ref().take(MAX_READ_BYTES).read_to_end(bytes);
        // More than the cap: drop the rest unread, counting one mark per
        // line is not worth reading it for; count it as one.
        let mut probe = [0u8; 1];
        if bytes.len() - start >= MAX_READ_BYTES as usize && f.read(&mut probe).is_ok_and(|n| n > 0)
        {
            self.dropped += 1;
            let _ = std::io::copy(f, &mut std::io::sink());
        }
    }

    /// The recording ended: `swapsight mark` must not find it any more.
    /// The directory stays, so that a late writer gets no error.
    pub fn finish(&mut self) {
        let _ = std::fs::remove_file(self.dir.join("trace"));
    }
}

impl Drop for MarkInbox {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The per-user directory where recorders register: `$XDG_RUNTIME_DIR/swapsight`
/// when set, else `swapsight-UID` in the temp dir; created mode 0700, and
/// refused when it is not ours (another user could read or plant marks).
pub fn runtime_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .map_or_else(
            || std::env::temp_dir().join(format!("swapsight-{uid}")),
            |d| d.join("swapsight"),
        );
    match std::fs::DirBuilder::new().mode(0o700).create(&base) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(&base)?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::other(format!(
            "{} is not a private directory of this user",
            base.display()
        )));
    }
    Ok(base)
}

/// A running recorder found in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub pid: u32,
    pub started_unix_ms: u64,
    pub mark_path: PathBuf,
    pub trace: PathBuf,
}

/// `rec-PID-MS` → (pid, ms).
fn parse_dir_name(name: &str) -> Option<(u32, u64)> {
    let rest = name.strip_prefix("rec-")?;
    let (pid, ms) = rest.split_once('-')?;
    Some((pid.parse().ok()?, ms.parse().ok()?))
}

fn pid_alive(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(raw, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The running recorders of this user, newest first.
pub fn running() -> Vec<Running> {
    runtime_dir().map_or_else(|_| Vec::new(), |base| running_in(&base))
}

/// [`running`] registered under `base`.
pub fn running_in(base: &Path) -> Vec<Running> {
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut found: Vec<Running> = entries
        .flatten()
        .take(10_000)
        .filter_map(|e| {
            let (pid, ms) = parse_dir_name(&e.file_name().to_string_lossy())?;
            let mut trace = Vec::new();
            File::open(e.path().join("trace"))
                .ok()?
                .take(64 * 1024)
                .read_to_end(&mut trace)
                .ok()?;
            (pid_alive(pid)).then(|| Running {
                pid,
                started_unix_ms: ms,
                mark_path: e.path().join("mark"),
                trace: PathBuf::from(String::from_utf8_lossy(&trace).into_owned()),
            })
        })
        .collect();
    found.sort_by_key(|r| std::cmp::Reverse(r.started_unix_ms));
    found
}

/// Removes directories of recorders that are gone and quiet for a day.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten().take(10_000) {
        let Some((pid, _)) = parse_dir_name(&e.file_name().to_string_lossy()) else {
            continue;
        };
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if old && !pid_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Appends one line to a mark path, the way a command would: never blocks
/// (a regular file), and says why when it cannot.
pub fn write_mark(path: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    f.write_all(format!("{line}\n").as_bytes())
}

#[cfg(test)]
#[path = "marks_tests.rs"]
mod tests;
