//! Linux backend: reads `/proc/meminfo`, and per process `/proc/PID/stat`
//! (ppid, comm, major faults, start time, resident pages, kernel-thread
//! flag, stack start) and `/proc/PID/status` (Uid, RssAnon, RssShmem, VmSwap);
//! once per process (pid and start time, again after an `exec`: a new
//! `comm` or stack start), `/proc/PID/exe` and `/proc/PID/cmdline` for its
//! name (`naming`) — told what its consumers show ([`Probe::name_largest`]),
//! the first tick reads them only for those, and any other process found
//! then for the tick it moves, is watched or comes among them; the scope of
//! a pid from cgroupfs (`cgroup`). All parsing is in [`super::parse`] and `naming`; this file
//! only reads.
//!
//! What keeps a tick cheap: kernel threads are dropped after `stat`; a
//! process whose resident pages and major faults did not move since the last
//! tick keeps its last `status` figures instead of reading the file again
//! (any page going out to swap or coming back changes one of the two; an
//! `exec`, which may change the uid, reads it again too); each
//! process's `stat` stays open between ticks and is re-read with one
//! `pread` at offset 0 (procfs regenerates it), instead of a path lookup,
//! open, read and close every tick. The files that are opened are opened
//! relative to an open `/proc` (`openat`, no walk from `/`) and read with
//! one `read` into a buffer that is already large enough (no size query, no
//! second read to find the end: a procfs file smaller than the buffer comes
//! whole in one read). `/proc` itself is listed only when a pid was handed
//! out since the last listing (the last field of `/proc/loadavg`, read
//! first): otherwise no process can have started and no pid been reused,
//! and the last listing, less the processes found gone, is this tick's.
//! Every [`CHECK_EVERY`] ticks it is listed all the same; a new pid there
//! with the last pid unchanged turns this off for good.
//!
//! Tiered ticks: a process whose resident pages and major faults have not
//! moved for [`IDLE_AFTER`](tiers::IDLE_AFTER) reads is idle, and a tick
//! that is not full does not read it at all — not even its `stat` — and
//! repeats its last figures. A tick is full every
//! [`FULL_EVERY`](tiers::FULL_EVERY) ticks, and when used memory or swap
//! moved by the larger of [`FULL_STEP_BYTES`](tiers::FULL_STEP_BYTES) and
//! [`FULL_STEP_SHARE`](tiers::FULL_STEP_SHARE) of memory, or PSI `some` by
//! a point, since the last full tick: a process that starts to grow, page
//! or swap moves those first, so it is read at the very next tick.
//! Processes that moved lately are read every tick; the ones found at the
//! probe's first tick count as idle from that read, one that starts later
//! from its second. The rule, shared with
//! the macOS probe, is in [`tiers`]. At a full tick an idle process is
//! checked by its resident pages in `/proc/PID/statm` (kept open instead of
//! `stat` once it is idle; a third of the cost of a `stat` read) and read
//! in full only when they moved: a page swapped out or in, a page touched
//! or freed, an `exec` (a new memory map) all move them.
//!
//! Descriptors are capped: at most a quarter of the open-file limit (after
//! raising it towards the hard limit, as htop does), and never more than
//! [`MAX_KEPT`](super::fd::MAX_KEPT), stay open, for the largest processes, re-ranked each tick;
//! the rest are opened, read and closed each tick. The other three quarters
//! are for whoever runs the probe (`serve` takes half for connections, the
//! recordings and the runtime the rest). Under the usual limits (soft raised
//! to 65,536) every process keeps its descriptor; under `ulimit -n 1024`,
//! 256 do. If the process runs out of descriptors all the same
//! (`EMFILE`), the probe closes the ones it keeps, halves its cap and
//! retries, so a tick never fails or loses a process for it.

use rustc_hash::FxHashMap as HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::cgroup::CgroupFs;
use super::fd::kept_cap;
use super::fd::{raise_fd_limit, read_whole};
use super::parse::{
    parse_meminfo, parse_stat, parse_statm_resident, parse_status, parse_u64, StatusFigures,
};
use super::psi::PsiSource;
use crate::probe::naming::{split_nul, NameCache, Naming, ARGS_READ_MAX};
use crate::probe::tiers::{self, Unmoved};
use crate::probe::{HostInfo, Probe, ProbeError, ProcessSample, Scope, SystemSample};

mod procfs;

/// The buffer `/proc` files are read into: `stat` is under 1 KiB, `status`
/// and `meminfo` under 2 KiB, so one read fills it with the whole file.
const READ_BUF: usize = 8192;

/// Every this many ticks `/proc` is listed even with no pid handed out, to
/// check that loadavg's last pid follows this `/proc` (10 s at 2 Hz).
const CHECK_EVERY: u64 = 20;

/// A `/proc/PID/stat` kept open; counted while it lives.
struct Kept {
    file: File,
    count: Arc<AtomicUsize>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.count.fetch_sub(1, Ordering::Relaxed);
    }
}

/// What we know of one process from earlier ticks.
struct Known {
    /// `/proc/PID/stat`, kept open when the process is among the largest
    /// (`keep`) and not idle (then `statm` is); reading a process that
    /// exited (or whose pid was reused) fails, so it cannot show another
    /// process's figures.
    stat: Option<Kept>,
    start_time: u64,
    rss_pages: u64,
    majflt: u64,
    status: StatusFigures,
    tick: u64,
    /// Among the largest at the last ranking: its `stat` stays open.
    keep: bool,
    /// Reads in a row that found its resident pages and major faults
    /// unmoved.
    unmoved: Unmoved,
    /// Its last sample once it is idle ([`Unmoved::idle`]), which a tick
    /// that does not read it repeats; a kernel thread has none and is skipped.
    idle_sample: Option<ProcessSample>,
    /// A kernel thread: never sampled.
    kernel: bool,
    /// `/proc/PID/statm`, kept instead of `stat` once the process is idle
    /// and among the largest: a full tick checks its resident pages
    /// with it (a third of a `stat` read) and reads `stat` only when they
    /// moved. Like `stat`, it fails to read once the process is gone.
    statm: Option<Kept>,
    /// Resident pages as `statm` gave them when it was opened: compared
    /// with `statm` only, since `stat`'s `rss` may differ from it (see
    /// [`parse_statm_resident`]).
    statm_resident: u64,
    /// Read once so far: most processes are idle, and the next read of one
    /// kept open trades `stat` for `statm` ([`NativeProbe::stat`]).
    read_once: bool,
}

impl Known {
    fn kernel(stat: Kept, start_time: u64, tick: u64) -> Known {
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
    fn skippable(&self) -> bool {
        self.unmoved.idle() && (self.kernel || self.idle_sample.is_some())
    }
}

/// What one tick read, process by process.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    /// Processes whose `stat` was read.
    pub stat: usize,
    /// Idle processes left unread (a tick that is not full).
    pub skipped: usize,
    /// Idle processes checked with `statm` (a full tick).
    pub statm: usize,
}

/// The last read of `pswpout` ([`NativeProbe::swap_out_bytes`]).
#[derive(Debug, Clone, Copy)]
struct Written {
    /// Swap used at that read.
    swap_used: u64,
    /// Calls answered from it since.
    age: u64,
    bytes: Option<u64>,
}

/// A system file the probe keeps open.
#[derive(Debug, Clone, Copy)]
enum Which {
    Meminfo,
    Vmstat,
}

/// The Linux probe. Keeps `/proc` and the largest processes' `stat` files
/// open between ticks, with its buffers and the names it worked out.
pub struct NativeProbe {
    page_size: u64,
    /// The file last read, at its start (`read_whole`). Its length only
    /// grows, so it is zeroed once, not at every read.
    buf: Vec<u8>,
    /// `/proc/PID/cmdline` of a new process.
    args_buf: Vec<u8>,
    path: String,
    /// `PID/FILE\0`, relative to `proc`.
    rel: Vec<u8>,
    /// `/proc`, which the per-process files are opened relative to.
    proc: File,
    /// `/proc/loadavg`, kept open for the last pid handed out; `None` where
    /// `/proc` shows another pid namespace than this process's (the pid in
    /// loadavg is of the reader's namespace), so `/proc` is listed each tick.
    loadavg: Option<File>,
    /// The last pid handed out when `listed` was taken; `None`: list again.
    listed_at: Option<u64>,
    /// The pids of the last listing of `/proc`, in its order (ascending),
    /// less those found gone since.
    listed: Vec<u32>,
    known: HashMap<u32, Known>,
    names: NameCache,
    tick: u64,
    /// Descriptors kept open now (`Known::stat`), and at most.
    kept: Arc<AtomicUsize>,
    cap: usize,
    /// `/proc/pressure/memory`, or why there is none.
    psi: PsiSource,
    /// cgroupfs as this process sees it, for [`Probe::scope`].
    cgroups: CgroupFs,
    /// `MemTotal` of the last read: a limit at or above it binds nothing.
    phys_bytes: u64,
    /// The last full tick (every process read), when there was one.
    full: tiers::FullTicks,
    /// The clock full ticks are due by ([`tiers::FULL_AT_MOST_MS`]).
    born: std::time::Instant,
    /// `meminfo`'s figures a process's growth moves, of the last read.
    movers: tiers::Movers,
    /// `/proc/meminfo` and `/proc/vmstat`, kept open and re-read with one
    /// `pread` a tick (procfs makes them afresh at offset 0), as `stat` is.
    meminfo: Option<File>,
    vmstat: Option<File>,
    /// What the last tick read.
    pub(crate) last_reads: Reads,
    /// The watched tree ([`Probe::watch_closely`]), sorted: never skipped.
    closely: Vec<u32>,
    /// `closely` changed since the last tick: processes named from `comm`
    /// alone that are now in the watched tree are named at this tick.
    closely_new: bool,
    /// [`Probe::name_largest`]: how many of the largest processes are
    /// named at the first tick; `None`, every process (the default).
    named_largest: Option<usize>,
    /// Scratch for [`NativeProbe::name_shown`]: indices of a tick's
    /// processes, ordered there by size.
    by_size: Vec<usize>,
    /// The pid last found in no memory limit, and the full tick that read
    /// it: until the next full tick its scope is the host, unread.
    unscoped: Option<(u32, u64)>,
    /// Scopes read from cgroupfs (not answered from `unscoped`).
    pub(crate) scope_reads: u64,
    /// The pids whose trade of `stat` for `statm` read `stat` once more to
    /// show `statm` was the process's own (not opened ahead).
    #[cfg(test)]
    pub(crate) traded_read_again: Vec<u32>,
    /// The last `pswpout` read.
    written: Option<Written>,
}

impl NativeProbe {
    pub(crate) fn new() -> Result<Self, ProbeError> {
        // SAFETY: sysconf has no preconditions; it only reads a constant.
        let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let proc = File::open("/proc").map_err(|source| ProbeError::Io {
            what: "/proc".into(),
            source,
        })?;
        // `/proc/self` names this process by its pid in /proc's namespace.
        let same_ns = std::fs::read_link("/proc/self")
            .ok()
            .and_then(|p| parse_u64(p.as_os_str().as_encoded_bytes()))
            == Some(u64::from(std::process::id()));
        let loadavg = same_ns.then(|| File::open("/proc/loadavg").ok()).flatten();
        let mut buf = vec![0; READ_BUF];
        let psi = PsiSource::open(std::path::Path::new("/proc"), &mut buf);
        let mut probe = NativeProbe {
            page_size: u64::try_from(page_size).unwrap_or(4096),
            buf,
            args_buf: Vec::new(),
            path: String::with_capacity(32),
            rel: Vec::with_capacity(32),
            proc,
            loadavg,
            listed_at: None,
            listed: Vec::new(),
            known: HashMap::default(),
            names: NameCache::default(),
            tick: 0,
            kept: Arc::default(),
            cap: 0,
            psi,
            cgroups: CgroupFs::system(),
            phys_bytes: 0,
            full: tiers::FullTicks::default(),
            born: std::time::Instant::now(),
            movers: tiers::Movers::NONE,
            last_reads: Reads::default(),
            closely: Vec::new(),
            closely_new: false,
            named_largest: None,
            by_size: Vec::new(),
            meminfo: None,
            vmstat: None,
            unscoped: None,
            scope_reads: 0,
            #[cfg(test)]
            traded_read_again: Vec::new(),
            written: None,
        };
        probe.system()?; // fail early, with a clear error, where /proc is missing
        probe.cap = kept_cap(raise_fd_limit());
        Ok(probe)
    }

    /// One process: its sample, or nothing when it denied access, is a
    /// kernel thread or could not be read, or gone when it exited.
    fn process(&mut self, pid: u32) -> Visit {
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
    fn stat(&mut self, pid: u32) -> io::Result<(usize, Option<Kept>, Option<File>)> {
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
    fn found_at_start(&self, pid: u32) -> bool {
        self.tick == 1
            && !self.known.contains_key(&pid)
            && self.closely.binary_search(&pid).is_err()
    }

    /// The sample of a process whose `stat` (`len` bytes) is in `buf`;
    /// `statm` when [`NativeProbe::stat`] opened it before that read.
    fn sample_of(
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

    /// Whether a process read at this tick may keep (or get) a name from
    /// `comm` alone ([`Probe::name_largest`]): at the first tick, one that
    /// is not watched; later, one named so from then that neither moved
    /// (resident pages, major faults) nor is watched. A process that comes
    /// later is named at once. Flags need a process that moved or is
    /// watched (`detect::blame`), so a flagged process is always named.
    fn naming_waits(&self, pid: u32, start: u64, rss: u64, majflt: u64) -> bool {
        if self.named_largest.is_none() || self.closely.binary_search(&pid).is_ok() {
            return false;
        }
        match self.known.get(&pid) {
            Some(k) if k.start_time == start => {
                self.names.is_waiting(pid) && k.rss_pages == rss && k.majflt == majflt
            }
            _ => self.tick == 1,
        }
    }

    /// Names the processes of this tick's `processes` still named from
    /// `comm` alone that are among the [`Probe::name_largest`] largest, or
    /// in the watched tree when it changed (its members' descendants, by
    /// parent pid), before the tick's samples go out.
    fn name_shown(&mut self, processes: &mut [ProcessSample]) {
        let Some(k) = self.named_largest else {
            return;
        };
        if self.names.waiting() == 0 {
            return;
        }
        // Kept between ticks: while any process waits (on most machines,
        // for as long as the probe runs) this runs every tick.
        let mut order = std::mem::take(&mut self.by_size);
        order.clear();
        order.extend(0..processes.len());
        let by_size = |&a: &usize, &b: &usize| {
            processes[b]
                .footprint_bytes
                .cmp(&processes[a].footprint_bytes)
                .then(processes[a].pid.cmp(&processes[b].pid))
        };
        if k < order.len() {
            order.select_nth_unstable_by(k, by_size);
        }
        let mut chosen: Vec<usize> = order[..k.min(order.len())]
            .iter()
            .copied()
            .filter(|&i| self.names.is_waiting(processes[i].pid))
            .collect();
        self.by_size = order;
        if std::mem::take(&mut self.closely_new) && !self.closely.is_empty() {
            let parent: HashMap<u32, u32> = processes.iter().map(|p| (p.pid, p.ppid)).collect();
            for (i, p) in processes.iter().enumerate() {
                if self.names.is_waiting(p.pid) && in_tree(p.pid, &parent, &self.closely) {
                    chosen.push(i);
                }
            }
        }
        for i in chosen {
            let pid = processes[i].pid;
            let (proc, args_buf, path) = (&self.proc, &mut self.args_buf, &mut self.path);
            let Some(naming) = self
                .names
                .name_now(pid, |comm| read_naming(proc, pid, comm, args_buf, path))
            else {
                continue;
            };
            let (name, cmdline) = (naming.name.clone(), naming.cmdline.clone());
            if let Some(s) = self
                .known
                .get_mut(&pid)
                .and_then(|k| k.idle_sample.as_mut())
            {
                s.name = name.clone();
                s.cmdline = cmdline.clone();
            }
            let p = &mut processes[i];
            p.name = name;
            p.cmdline = cmdline;
        }
    }

    /// A process just read (`stat` in full) that is idle and keeps its
    /// `stat` open trades it for `statm`, for full ticks to check it with:
    /// `ahead` when it was opened before that read, else opened now.
    fn trade_for_statm(&mut self, pid: u32, ahead: Option<File>) {
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
fn resident_of(statm: &File, buf: &mut Vec<u8>) -> Option<u64> {
    let n = read_whole(statm, buf, true).ok()?;
    parse_statm_resident(&buf[..n])
}

/// Whether `pid` or one of its ancestors (by `parent`, at most 64 up) is
/// in `tree` (sorted).
fn in_tree(pid: u32, parent: &HashMap<u32, u32>, tree: &[u32]) -> bool {
    let mut at = pid;
    for _ in 0..64 {
        if tree.binary_search(&at).is_ok() {
            return true;
        }
        match parent.get(&at) {
            Some(&up) if up != at && up != 0 => at = up,
            _ => return false,
        }
    }
    false
}

/// A process's name from `/proc/PID/exe` (readable for the same user
/// only) and the head of `/proc/PID/cmdline` (readable where `ps` shows it),
/// both under `proc`; `rel` and `buf` are scratch.
fn read_naming(proc: &File, pid: u32, comm: &[u8], buf: &mut Vec<u8>, rel: &mut String) -> Naming {
    use rustix::fs::{Mode, OFlags};
    use std::fmt::Write;
    rel.clear();
    let _ = write!(rel, "{pid}/exe");
    let exe = rustix::fs::readlinkat(proc, rel.as_str(), Vec::new()).ok();
    rel.clear();
    let _ = write!(rel, "{pid}/cmdline");
    if buf.len() < ARGS_READ_MAX {
        buf.resize(ARGS_READ_MAX, 0);
    }
    // One read: procfs hands the command line over whole, up to the count
    // asked, stopping short only at its end or at a page it cannot read
    // (`get_mm_cmdline`, fs/proc/base.c). A second read would only find
    // that end, at the price of another look into the process's memory.
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    let n = rustix::fs::openat(proc, rel.as_str(), flags, Mode::empty())
        .map_err(io::Error::from)
        .and_then(|fd| File::from(fd).read(&mut buf[..ARGS_READ_MAX]))
        .unwrap_or(0);
    let argv = split_nul(&buf[..n]);
    Naming::of(
        exe.as_ref().map(|p| p.as_bytes()),
        &argv,
        &String::from_utf8_lossy(comm),
    )
}

/// What a visit to one listed pid found.
// Unboxed: each visit is moved straight into the tick's list; a box would
// cost an allocation per process per tick to save stack bytes.
#[allow(clippy::large_enum_variant)]
enum Visit {
    Sample(ProcessSample),
    /// Nothing to show: a kernel thread, access denied, unreadable.
    Nothing,
    /// The process exited.
    Gone,
}

impl Probe for NativeProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        let n = self
            .read_system_file(Which::Meminfo)
            .map_err(|source| ProbeError::Io {
                what: "/proc/meminfo".into(),
                source,
            })?;
        let info = parse_meminfo(&self.buf[..n]).ok_or_else(|| ProbeError::Parse {
            what: "/proc/meminfo".into(),
            detail: "no MemTotal line".into(),
        })?;
        self.phys_bytes = info.mem_total_bytes;
        self.movers = info.movers();
        Ok(SystemSample {
            phys_bytes: info.mem_total_bytes,
            free_pct: info.free_pct(),
            swap_used_bytes: info.swap_used_bytes(),
            swap_total_bytes: info.swap_total_bytes,
            compressed_bytes: 0,
            page_size: self.page_size,
            anon_bytes: info.anon_bytes(),
            pressure: self.psi.read(&mut self.buf),
            swap_out_bytes: self.swap_out_bytes(info.swap_used_bytes()),
            ..SystemSample::default()
        })
    }

    fn pressure_absent(&self) -> Option<String> {
        self.psi.absent().map(str::to_owned)
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let system = self.system()?;
        self.tick += 1;
        // Read before listing: a pid handed out after this read shows in
        // the next tick's.
        let last_pid = self.last_pid();
        let unchanged = last_pid.is_some() && last_pid == self.listed_at;
        if !unchanged || self.tick % CHECK_EVERY == 0 {
            let reused = std::mem::take(&mut self.listed);
            // Not to be reused should this listing fail.
            self.listed_at = None;
            let whole = self.list()?;
            // A pid that was not in the listing this tick would have reused,
            // with the last pid unchanged before and after the listing: this
            // loadavg does not follow this /proc (a container's virtual
            // loadavg, an emulated /proc). List every tick from now on.
            if unchanged && whole && self.last_pid() == last_pid {
                let missed = |pid: &u32| reused.binary_search(pid).is_err();
                if self.listed.iter().any(missed) {
                    self.loadavg = None;
                }
            }
            self.listed_at = last_pid.filter(|_| whole);
        }
        let mut processes = Vec::with_capacity(self.known.len().max(64));
        self.names.begin_tick();
        // New processes are read anyway (they are not known, so not idle);
        // the machine's figures moving makes the tick full. A pid reused by
        // a new process while the old one was idle shows the old figures
        // until the next full tick, at most `FULL_AT_MOST_MS` later (rare:
        // the pid must come round `pid_max`, 32768 by default, between two
        // listings, docs/detector.md).
        let ms = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let full = self.full.due(self.tick, ms, &system, self.movers);
        let tick = self.tick;
        let mut reads = Reads::default();
        let mut listed = std::mem::take(&mut self.listed);
        listed.retain(|&pid| {
            let close = self.closely.binary_search(&pid).is_ok();
            if let Some(k) = self.known.get_mut(&pid).filter(|k| !close && k.skippable()) {
                // Between full ticks an idle process is not read; at a full
                // tick one that keeps `statm` open is checked by its resident
                // pages, and read in full only when they moved (or it is
                // gone, or its pid another process's).
                let still = !full
                    || k.statm.as_ref().is_some_and(|f| {
                        reads.statm += 1;
                        resident_of(&f.file, &mut self.buf) == Some(k.statm_resident)
                    });
                if still {
                    k.tick = tick;
                    reads.skipped += usize::from(!full);
                    if let Some(p) = &k.idle_sample {
                        processes.push(p.clone());
                        self.names.keep(pid);
                    }
                    return true;
                }
                k.statm = None;
            }
            reads.stat += 1;
            match self.process(pid) {
                Visit::Sample(p) => {
                    processes.push(p);
                    true
                }
                Visit::Nothing => true,
                Visit::Gone => false,
            }
        });
        self.last_reads = reads;
        self.listed = listed;
        self.name_shown(&mut processes);
        self.known.retain(|_, k| k.tick == tick);
        self.rank();
        self.names.end_tick();
        Ok((system, processes))
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        let system = self.system()?;
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        Ok(HostInfo {
            os: "linux".into(),
            phys_bytes: system.phys_bytes,
            page_size: self.page_size,
            hostname,
        })
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        if self.closely != pids {
            self.closely_new = true;
            self.closely.clear();
            self.closely.extend_from_slice(pids);
        }
    }

    fn name_largest(&mut self, k: usize) {
        self.named_largest = Some(k);
    }

    /// A process in no memory limit is looked up in cgroupfs again at the
    /// next full tick only (a dozen files walked up its cgroup path were a
    /// sixth of an idle recording's CPU): one that is moved into a limit
    /// is judged in it from then, within [`FULL_EVERY`](tiers::FULL_EVERY)
    /// ticks — sooner when it grows, which makes the tick full. A process
    /// in a limit is read every tick (its usage is the figure that
    /// matters).
    fn scope(&mut self, pid: u32) -> Result<Option<Scope>, ProbeError> {
        let full_at = self.full.last().map(|a| a.tick);
        if full_at.is_some() && self.unscoped == full_at.map(|t| (pid, t)) {
            return Ok(None);
        }
        self.scope_reads += 1;
        let scope = self.cgroups.scope_of(pid, self.phys_bytes);
        self.unscoped = match (&scope, full_at) {
            (Ok(None), Some(t)) => Some((pid, t)),
            _ => None,
        };
        scope
    }
}

#[cfg(test)]
#[path = "reader_tests.rs"]
mod tests;
