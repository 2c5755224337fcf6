//! Reading a trace the way every subcommand does: unreadable or not a trace
//! is an error; each malformed line is a one-line warning, then skipped —
//! the first few of them, then one line with the total, so that a file of
//! garbage cannot flood the terminal; a trace left with no sample is an error.
//!
//! The subcommands stream ([`open_trace`]): they fold what their output needs
//! out of the records as they pass and never hold the samples, so a trace of
//! any size is read in bounded memory. A read that takes over a second shows
//! its progress on stderr when stderr is a terminal, and nothing otherwise.

use std::fs::File;
use std::io::{BufReader, IsTerminal, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use swapsight::trace::{ReadNotes, TraceError, TraceReader};

/// Malformed lines named one by one on stderr.
const SHOWN_PROBLEMS: usize = 5;

/// A read shorter than this shows no progress.
const QUIET_FOR: Duration = Duration::from_secs(1);

/// A trace being read, record by record, with its progress.
pub type Reader = TraceReader<BufReader<Progress<File>>>;

/// Opens `path` for a streamed read (its header read).
pub fn open_trace(path: &Path) -> anyhow::Result<Reader> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let progress = Progress::new(file, len, &path.display().to_string());
    Ok(TraceReader::new(
        BufReader::with_capacity(256 * 1024, progress),
        path,
    )?)
}

/// After a read of `samples` samples: an error when none was left to
/// `what` (judge, export, draw), else a warning for each malformed line.
pub fn done(path: &Path, samples: usize, notes: &ReadNotes, what: &str) -> anyhow::Result<()> {
    let file = path.display();
    if samples == 0 {
        // One line: the first bad line says why nothing is left.
        let Some(first) = notes.problems.first() else {
            anyhow::bail!("{file}: the trace has no samples: nothing to {what}");
        };
        let more = match notes.bad_lines {
            0 | 1 => String::new(),
            n => format!(" (and {} more malformed lines)", n - 1),
        };
        anyhow::bail!("{file}: {first}{more}; the trace has no samples left: nothing to {what}");
    }
    for p in notes.problems.iter().take(SHOWN_PROBLEMS) {
        eprintln!("swapsight: warning: {file}: {p} (skipped)");
    }
    let shown = notes.problems.len().min(SHOWN_PROBLEMS);
    if notes.bad_lines > shown {
        eprintln!(
            "swapsight: warning: {file}: {} malformed lines skipped in all ({} more not shown)",
            notes.bad_lines,
            notes.bad_lines - shown
        );
    }
    Ok(())
}

/// A file that shows how much of it has been read: a bar on stderr once
/// the read has taken [`QUIET_FOR`], when stderr is a terminal. A second
/// pass (a seek back to the start) starts the bar again.
pub struct Progress<R> {
    inner: R,
    bar: ProgressBar,
    started: Instant,
    shown: bool,
    terminal: bool,
    pos: u64,
}

impl<R> Progress<R> {
    fn new(inner: R, len: u64, name: &str) -> Self {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} ({eta} left)")
        {
            bar.set_style(style);
        }
        bar.set_message(format!("reading {name}"));
        Progress {
            inner,
            bar,
            started: Instant::now(),
            shown: false,
            terminal: std::io::stderr().is_terminal(),
            pos: 0,
        }
    }

    fn advance(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n as u64);
        if !self.terminal {
            return;
        }
        if !self.shown && self.started.elapsed() >= QUIET_FOR {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(self.pos);
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.advance(n);
        Ok(n)
    }
}

impl<R: Seek> Seek for Progress<R> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let at = self.inner.seek(to)?;
        self.pos = at;
        if at == 0 {
            let msg = self.bar.message();
            if !msg.ends_with("again") {
                self.bar.set_message(format!("{msg} again"));
            }
        }
        self.bar.set_position(at);
        Ok(at)
    }
}

impl<R> Drop for Progress<R> {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
