//! The recorder's end of the mark path, read on a thread of its own.
//!
//! The mark file is the command's to play with, and a command may make it
//! anything: a FIFO (whose `open` would block forever), a link to
//! `/dev/zero` (endless bytes), a link to a file it should not see through
//! us. So it is opened `O_NONBLOCK | O_NOFOLLOW` relative to the recorder's
//! folder descriptor, taken only when `fstat` says it is a regular file,
//! and read up to a fixed size per look. And the looking happens on this
//! thread, never on the one that samples and checks the guard's budget:
//! whatever the command does to its mark path, the next check is on time.
//! The thread sleeps until the folder is written to (`watch`), so a
//! recording nobody marks costs no wakes.

use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::registry::{self, RuntimeDir};
use super::watch::{FolderWatch, StopSwitch, Woke, LOOK_EVERY};
use super::{
    split_lines, MarkLine, RateLimit, MAX_COUNTERS_PER_SECOND, MAX_PER_SECOND, MAX_READ_BYTES,
};
use crate::util::bell::Ringer;

/// Marks waiting for the recorder; past this they are dropped and counted.
const QUEUE: usize = 1024;
/// How long `finish` waits for the reader's last look.
const FINISH_WAIT: Duration = Duration::from_secs(1);

/// What the reader could not keep, for the `marks-dropped` event.
#[derive(Debug, Default)]
struct Counts {
    /// Mark lines read but over the rate limit (or the queue).
    dropped: AtomicU64,
    /// Looks that found more than [`MAX_READ_BYTES`]: the rest is left
    /// unread, and the marks in it are not counted.
    cut: AtomicU64,
    /// Mark paths that were not a regular file (a FIFO, a link, a folder).
    refused: AtomicU64,
    /// Counter lines over their own rate limit (or the queue).
    counters_dropped: AtomicU64,
    /// Looks taken: the cost a recording nobody marks should not pay.
    looks: AtomicU64,
}

/// One look at the mark file: the synchronous part, on the reader thread.
pub(crate) struct Looker {
    dir: OwnedFd,
    /// The file taken last round, read again once for a writer that opened
    /// it just before the rename.
    previous: Option<File>,
    generation: u64,
    limit: RateLimit,
    counter_limit: RateLimit,
    counts: Arc<Counts>,
}

impl Looker {
    /// Takes what was written since the last look, within the limits.
    pub(crate) fn look(&mut self) -> Vec<MarkLine> {
        self.counts.looks.fetch_add(1, Ordering::Relaxed);
        let mut bytes = Vec::new();
        if let Some(mut f) = self.previous.take() {
            self.read_capped(&mut f, &mut bytes);
        }
        self.generation += 1;
        let taken = format!("taken-{}", self.generation % 2);
        if rustix::fs::renameat(&self.dir, "mark", &self.dir, taken.as_str()).is_ok() {
            if let Some(mut f) = self.open_regular(&taken) {
                if self.read_capped(&mut f, &mut bytes) {
                    self.previous = Some(f);
                }
            }
            // Open files keep the data; the name is not needed any more.
            if rustix::fs::unlinkat(&self.dir, taken.as_str(), AtFlags::empty()).is_err() {
                let _ = rustix::fs::unlinkat(&self.dir, taken.as_str(), AtFlags::REMOVEDIR);
            }
        }
        let now = Instant::now();
        let mut out = Vec::new();
        for line in split_lines(&bytes) {
            let (limit, dropped) = match line {
                MarkLine::Counter { .. } => {
                    (&mut self.counter_limit, &self.counts.counters_dropped)
                }
                _ => (&mut self.limit, &self.counts.dropped),
            };
            if limit.allow(now) {
                out.push(line);
            } else {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        out
    }

    fn open_regular(&self, name: &str) -> Option<File> {
        let opened = rustix::fs::openat(
            &self.dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        );
        let regular = opened.as_ref().ok().and_then(|fd| {
            let st = rustix::fs::fstat(fd).ok()?;
            (FileType::from_raw_mode(st.st_mode) == FileType::RegularFile).then_some(())
        });
        match (opened, regular) {
            (Ok(fd), Some(())) => Some(File::from(fd)),
            _ => {
                self.counts.refused.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Reads at most [`MAX_READ_BYTES`] more; false when the cap was hit
    /// (the file is then dropped, its rest never read).
    fn read_capped(&self, f: &mut File, bytes: &mut Vec<u8>) -> bool {
        let start = bytes.len();
        let cap = MAX_READ_BYTES + 1;
        let _ = f.by_ref().take(cap).read_to_end(bytes);
        if (bytes.len() - start) as u64 > MAX_READ_BYTES {
            bytes.truncate(start + MAX_READ_BYTES as usize);
            // The line cut in the middle is not a mark.
            if let Some(end) = bytes[start..].iter().rposition(|&b| b == b'\n') {
                bytes.truncate(start + end + 1);
            } else {
                bytes.truncate(start);
            }
            self.counts.cut.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }
}

/// The recorder's end of the mark path: a private folder holding `mark`,
/// registered so that `swapsight mark` finds it.
pub struct MarkInbox {
    dir: OwnedFd,
    path: PathBuf,
    lines: Receiver<MarkLine>,
    stop: Option<StopSwitch>,
    done: Receiver<()>,
    reader: Option<JoinHandle<()>>,
    counts: Arc<Counts>,
    ringer: Arc<OnceLock<Ringer>>,
    watching: bool,
}

impl MarkInbox {
    /// Creates a private folder for this recorder under the per-user
    /// runtime directory and registers `trace` as what it records.
    pub fn create(trace: &Path) -> std::io::Result<MarkInbox> {
        MarkInbox::create_in(&registry::runtime_dir()?, trace)
    }

    /// [`MarkInbox::create`] under `base`.
    pub fn create_in(base: &RuntimeDir, trace: &Path) -> std::io::Result<MarkInbox> {
        registry::remove_stale(base);
        let pid = std::process::id();
        // Two recordings of one process may start in the same millisecond
        // (the app's and a test's): the later one takes the next free one.
        let now = crate::util::units::unix_now_ms();
        let mut made = None;
        for ms in now..now.saturating_add(64) {
            let name = format!("rec-{pid}-{ms}");
            match rustix::fs::mkdirat(&base.fd, name.as_str(), Mode::from_raw_mode(0o700)) {
                Err(rustix::io::Errno::EXIST) => continue,
                other => {
                    other?;
                    made = Some(name);
                    break;
                }
            }
        }
        let name = made.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::AlreadyExists))?;
        let dir = rustix::fs::openat(
            &base.fd,
            name.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        // Watched before `swapsight mark` can find it (the `trace` file).
        let looker_dir = dir.try_clone()?;
        let folder = base.path.join(&name);
        let (watch, stop) = FolderWatch::new(&looker_dir, &folder)?;
        let key = registry::trace_key(trace);
        registry::write_new(&dir, "trace", key.as_os_str().as_encoded_bytes())?;
        if let Some(start) = crate::probe::start_time(pid) {
            registry::write_new(&dir, "start", start.to_string().as_bytes())?;
        }
        let counts = Arc::new(Counts::default());
        let looker = Looker {
            dir: looker_dir,
            previous: None,
            generation: 0,
            limit: RateLimit::new(MAX_PER_SECOND),
            counter_limit: RateLimit::new(MAX_COUNTERS_PER_SECOND),
            counts: counts.clone(),
        };
        let watching = watch.watching();
        let (line_tx, lines) = mpsc::sync_channel(QUEUE);
        let (done_tx, done) = mpsc::sync_channel(1);
        let ringer = Arc::new(OnceLock::new());
        let reader_ringer = Arc::clone(&ringer);
        let reader = std::thread::Builder::new()
            .name("swapsight-marks".into())
            .spawn(move || read_marks(looker, watch, &line_tx, &reader_ringer, &done_tx))?;
        Ok(MarkInbox {
            dir,
            path: folder.join("mark"),
            lines,
            stop: Some(stop),
            done,
            reader: Some(reader),
            counts,
            ringer,
            watching,
        })
    }

    /// The path to put in [`super::ENV_VAR`].
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Marks dropped so far: over the rate limit, plus writes cut at the
    /// read cap and mark paths that were not a regular file (each counted
    /// once; the marks inside them are not known).
    pub fn dropped(&self) -> u64 {
        self.counts.dropped.load(Ordering::Relaxed)
            + self.counts.cut.load(Ordering::Relaxed)
            + self.counts.refused.load(Ordering::Relaxed)
    }

    /// Counter values dropped so far: over their rate limit, or while the
    /// queue was full.
    pub fn counters_dropped(&self) -> u64 {
        self.counts.counters_dropped.load(Ordering::Relaxed)
    }

    /// Rings `ringer` whenever marks come in, so that a loop waiting on its
    /// bell takes them at once. Set once; later calls are ignored.
    pub fn ring_on_marks(&self, ringer: Ringer) {
        let _ = self.ringer.set(ringer);
    }

    /// Whether the reader sleeps until the mark file is written (false: it
    /// looks every 50 ms, where the folder cannot be watched).
    pub fn watching(&self) -> bool {
        self.watching
    }

    /// Looks the reader took at the mark file so far.
    pub fn looks(&self) -> u64 {
        self.counts.looks.load(Ordering::Relaxed)
    }

    /// The marks the reader took since the last call; never blocks.
    pub fn poll(&mut self) -> Vec<MarkLine> {
        self.lines.try_iter().collect()
    }

    /// The recording ended: one last look (waited for, up to a second), and
    /// `swapsight mark` no longer finds it. The folder stays, so that a late
    /// writer gets no error.
    pub fn finish(&mut self) -> Vec<MarkLine> {
        if let Some(stop) = self.stop.take() {
            stop.throw();
            if self.done.recv_timeout(FINISH_WAIT).is_ok() {
                if let Some(r) = self.reader.take() {
                    let _ = r.join();
                }
            }
            let _ = rustix::fs::unlinkat(&self.dir, "trace", AtFlags::empty());
        }
        self.poll()
    }
}

impl Drop for MarkInbox {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The reader's loop: a look when the folder is written to (at most one
/// per [`LOOK_EVERY`], so a burst of writes is read in one), and one more
/// [`LOOK_EVERY`] after a look that kept a file open for a late writer.
fn read_marks(
    mut looker: Looker,
    mut watch: FolderWatch,
    lines: &SyncSender<MarkLine>,
    ringer: &OnceLock<Ringer>,
    done: &SyncSender<()>,
) {
    let mut last_look: Option<Instant> = None;
    loop {
        let timeout = looker.previous.is_some().then_some(LOOK_EVERY);
        let mut last = match watch.wait(timeout) {
            Woke::Stop => true,
            Woke::Look | Woke::Quiet => false,
        };
        if let Some(gap) = last_look.and_then(|t| LOOK_EVERY.checked_sub(t.elapsed())) {
            last |= watch.pause(gap);
        }
        last_look = Some(Instant::now());
        let mut sent = false;
        for line in looker.look() {
            let counts = &looker.counts;
            let dropped = match line {
                MarkLine::Counter { .. } => &counts.counters_dropped,
                _ => &counts.dropped,
            };
            match lines.try_send(line) {
                Ok(()) => sent = true,
                Err(TrySendError::Full(_)) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
        if sent {
            if let Some(r) = ringer.get() {
                r.ring();
            }
        }
        if last {
            let _ = done.try_send(());
            return;
        }
    }
}
