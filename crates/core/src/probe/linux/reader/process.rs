//! How one process is read: its `stat` (kept open, or traded for `statm`
//! once it is idle), its `status` when its resident pages or major faults
//! moved, and what is known of it between ticks. Which processes a tick
//! reads is the probe's ([`NativeProbe`]'s `sample`).

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::super::fd::read_whole;
use super::super::parse::{parse_stat, parse_statm_resident, parse_status, StatusFigures};
use super::names::read_naming;
use super::NativeProbe;
use crate::probe::tiers::Unmoved;
use crate::probe::ProcessSample;

/// A `/proc/PID/stat` kept open; counted while it lives.
pub(super) struct Kept {
    pub(super) file: File,
    pub(super) count: Arc<AtomicUsize>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What we know of one process from earlier ticks.
pub(super) struct Known {
    /// `/proc/PID/stat`, kept open when the process is among the largest
    /// (`keep`) and not idle (then `statm` is); reading a process that
    /// exited (or whose pid was reused) fails, so it cannot show another
    /// process's figures.
    pub(super) stat: Option<Kept>,
    pub(super) start_time: u64,
    pub(super) rss_pages: u64,
    pub(super) majflt: u64,
    pub(super) status: StatusFigures,
    pub(super) tick: u64,
    /// Among the largest at the last ranking: its `stat` stays open.
    pub(super) keep: bool,
    /// Reads in a row that found its resident pages and major faults
    /// unmoved.
    pub(super) unmoved: Unmoved,
    /// Its last sample once it is idle ([`Unmoved::idle`]), which a tick
    /// that does not read it repeats; a kernel thread has none and is skipped.
    pub(super) idle_sample: Option<ProcessSample>,
    /// A kernel thread: never sampled.
    pub(super) kernel: bool,
    /// `/proc/PID/statm`, kept instead of `stat` once the process is idle
    /// and among the largest: a full tick checks its resident pages
    /// with it (a third of a `stat` read) and reads `stat` only when they
    /// moved. Like `stat`, it fails to read once the process is gone.
    pub(super) statm: Option<Kept>,
    /// Resident pages as `statm` gave them when it was opened: compared
    /// with `statm` only, since `stat`'s `rss` may differ from it (see
    /// [`parse_statm_resident`]).
    pub(super) statm_resident: u64,
    /// Read once so far: most processes are idle, and the next read of one
    /// kept open trades `stat` for `statm` ([`NativeProbe::stat`]).
    pub(super) read_once: bool,
}

impl Known {
    pub(super) fn kernel(stat: Kept, start_time: u64, tick: u64) -> Known {
        Known {
            stat: Some(stat),
            start_time,
            rss_pages: 0,
            majflt: 0,
            status: StatusFigures::default(),
            tick,
            keep: false,
            unmoved: Unmoved::IDLE,
            idle_sample: None,
            kernel: true,
            statm: None,
            statm_resident: 0,
            read_once: true,
        }
    }

    /// Whether a tick that is not full may skip it.
    pub(super) fn skippable(&self) -> bool {
        self.unmoved.idle() && (self.kernel || self.idle_sample.is_some())
    }
}

impl NativeProbe {
    /// One process: its sample, or nothing when it denied access, is a
    /// kernel thread or could not be read, or gone when it exited.
    pub(super) fn process(&mut self, pid: u32) -> Visit {
        match self.stat(pid) {
            Ok((len, opened, statm)) => self
                .sample_of(pid, len, opened, statm)
                .map_or(Visit::Nothing, Visit::Sample),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ESRCH)) => Visit::Gone,
            Err(_) => Visit::Nothing,
        }
    }

    /// Reads `/proc/PID/stat` into `buf`: its length, the descriptor opened
    /// for it when it is to be kept, and `statm` when it was opened before
    /// `stat` was read again through the kept descriptor.
    ///
    /// A process read once so far is most likely idle, and this read would
    /// trade its `stat` for `statm`: opened first, `statm` is shown to be the
    /// same process's by the read of `stat` that follows (the process was
    /// alive after `statm` was opened), so the trade needs no second read
    /// of `stat`, the dearer file. A process found at the probe's first
    /// tick counts as idle from that first read, so it trades there, its
    /// `statm` opened before its first `stat` read; one that starts during
    /// the run trades at its second read. Not for a process that moved: it
    /// is likely to move again, and the `statm` would be closed unused.
    pub(super) fn stat(&mut self, pid: u32) -> io::Result<(usize, Option<Kept>, Option<File>)> {
        let trading = self
            .known
            .get(&pid)
            .is_some_and(|k| k.read_once && k.stat.is_some() && k.statm.is_none());
        // Found at the first tick: idle from this read
        // ([`Unmoved::first_read`]), so it trades now.
        let at_start = !trading && self.found_at_start(pid);
        let statm = (trading || at_start)
            .then(|| self.open(Some(pid), "statm").ok())
            .flatten();
        let reread = self
            .known
            .get(&pid)
            .and_then(|k| k.stat.as_ref())
            .map(|f| read_whole(&f.file, &mut self.buf, true));
        if let Some(Ok(n)) = reread {
            if n > 0 {
                return Ok((n, None, statm));
            }
        }
        if reread.is_some() {
            // Gone, or reused: forget it and look again from scratch.
            self.known.remove(&pid);
        }
        let f = self.open(Some(pid), "stat")?;
        let n = read_whole(&f, &mut self.buf, false)?;
        // A new process keeps it while there is room; a known one only
        // when it ranked among the largest.
        let wanted = self.known.get(&pid).map_or(true, |k| k.keep);
        // `statm` opened before this first read: the process was alive
        // after, so it is the same process's.
        Ok((n, self.keep(f, wanted), statm.filter(|_| at_start)))
    }

    /// Whether `pid`, not known yet, is read at the probe's first tick and
    /// not watched: it counts as idle from this read.
    pub(super) fn found_at_start(&self, pid: u32) -> bool {
        self.tick == 1
            && !self.known.contains_key(&pid)
            && self.closely.binary_search(&pid).is_err()
    }

    /// The sample of a process whose `stat` (`len` bytes) is in `buf`;
    /// `statm` when [`NativeProbe::stat`] opened it before that read.
    pub(super) fn sample_of(
        &mut self,
        pid: u32,
        len: usize,
        mut opened: Option<Kept>,
        statm: Option<File>,
    ) -> Option<ProcessSample> {
        let stat = parse_stat(&self.buf[..len])?;
        if stat.is_kernel_thread() {
            // Keep its descriptor too, so the next tick skips it for one pread.
            if let Some(k) = self.known.get_mut(&pid) {
                k.tick = self.tick;
                k.read_once = false;
                if k.stat.is_none() {
                    k.stat = opened;
                }
                // Seen before: a full tick checks it with `statm`.
                self.trade_for_statm(pid, statm);
            } else if let Some(f) = opened {
                self.known
                    .insert(pid, Known::kernel(f, stat.starttime, self.tick));
                // Found at the first tick: `statm` was opened ahead.
                if statm.is_some() {
                    self.trade_for_statm(pid, statm);
                }
            }
            return None;
        }
        let (ppid, majflt, start, rss) = (stat.ppid, stat.majflt, stat.starttime, stat.rss_pages);
        let wait = self.naming_waits(pid, start, rss, majflt);
        let (comm, args_buf, path) = (stat.comm, &mut self.args_buf, &mut self.path);
        let proc = &self.proc;
        // A new program (an `exec`, as the name cache tells it) may have a
        // new uid (a set-user-ID one) with resident pages and faults that
        // happen to be the same: its `status` is read again.
        let (naming, exec) =
            self.names
                .get_waiting(pid, start, comm, stat.start_stack, wait, || {
                    read_naming(proc, pid, comm, args_buf, path)
                });
        let (name, cmdline) = (naming.name.clone(), naming.cmdline.clone());
        let tick = self.tick;
        // The last figures, unless they are to be read again.
        let at_start = self.found_at_start(pid);
        let (fresh, mut status, new) = match self.known.get_mut(&pid) {
            Some(k) if k.start_time == start => {
                k.tick = tick;
                k.read_once = false;
                if k.stat.is_none() {
                    k.stat = opened.take();
                }
                let moved = exec || k.rss_pages != rss || k.majflt != majflt;
                (moved, k.status, false)
            }
            _ => {
                self.known.insert(
                    pid,
                    Known {
                        stat: opened.take(),
                        start_time: start,
                        rss_pages: rss,
                        majflt,
                        status: StatusFigures::default(),
                        tick,
                        keep: false,
                        unmoved: Unmoved::default(),
                        idle_sample: None,
                        kernel: false,
                        statm: None,
                        statm_resident: 0,
                        read_once: true,
                    },
                );
                (true, StatusFigures::default(), true)
            }
        };
        if fresh {
            let n = self.read_pid_file(Some(pid), "status").ok()?;
            status = parse_status(&self.buf[..n]);
            let k = self.known.get_mut(&pid)?;
            k.status = status;
            k.rss_pages = rss;
            k.majflt = majflt;
        }
        let sample = ProcessSample {
            pid,
            ppid,
            name,
            cmdline,
            uid: status.uid,
            footprint_bytes: status.footprint_bytes(),
            pageins: majflt,
            swap_bytes: status.vm_swap_bytes,
            start_time: start,
            readable: true,
            ..ProcessSample::default()
        };
        let k = self.known.get_mut(&pid)?;
        k.unmoved = if new {
            Unmoved::first_read(at_start)
        } else {
            k.unmoved.after_read(fresh)
        };
        k.idle_sample = k.unmoved.idle().then(|| sample.clone());
        if k.idle_sample.is_some() {
            self.trade_for_statm(pid, statm);
        }
        Some(sample)
    }
    /// A process just read (`stat` in full) that is idle and keeps its
    /// `stat` open trades it for `statm`, for full ticks to check it with:
    /// `ahead` when it was opened before that read, else opened now.
    pub(super) fn trade_for_statm(&mut self, pid: u32, ahead: Option<File>) {
        if !self
            .known
            .get(&pid)
            .is_some_and(|k| k.statm.is_none() && k.stat.is_some())
        {
            return;
        }
        let (f, shown_own) = match ahead {
            Some(f) => (f, true),
            None => match self.open(Some(pid), "statm") {
                Ok(f) => (f, false),
                Err(_) => return,
            },
        };
        let Some(resident) = resident_of(&f, &mut self.buf) else {
            return;
        };
        let count = Arc::clone(&self.kept);
        let buf = &mut self.buf;
        #[cfg(test)]
        if !shown_own {
            self.traded_read_again.push(pid);
        }
        // `stat` read after `statm` was opened (this tick's read, for one
        // opened ahead; else once more now): the process was alive then, so
        // `statm` is its own, not a new process's on its pid.
        if let Some(k) = self.known.get_mut(&pid).filter(|k| {
            shown_own
                || k.stat
                    .as_ref()
                    .is_some_and(|f| read_whole(&f.file, buf, true).is_ok_and(|n| n > 0))
        }) {
            // One descriptor for another: counted up, then down.
            count.fetch_add(1, Ordering::Relaxed);
            k.statm = Some(Kept { file: f, count });
            k.statm_resident = resident;
            k.stat = None;
        }
    }
}

/// Resident pages from a `/proc/PID/statm` kept open; `None` when the
/// process is gone or the file does not parse.
pub(super) fn resident_of(statm: &File, buf: &mut Vec<u8>) -> Option<u64> {
    let n = read_whole(statm, buf, true).ok()?;
    parse_statm_resident(&buf[..n])
}
/// What a visit to one listed pid found.
// Unboxed: each visit is moved straight into the tick's list; a box would
// cost an allocation per process per tick to save stack bytes.
#[allow(clippy::large_enum_variant)]
pub(super) enum Visit {
    Sample(ProcessSample),
    /// Nothing to show: a kernel thread, access denied, unreadable.
    Nothing,
    /// The process exited.
    Gone,
}
