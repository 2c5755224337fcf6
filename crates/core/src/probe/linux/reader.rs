//! Linux backend: reads `/proc/meminfo`, and per process `/proc/PID/stat`
//! (ppid, comm, major faults, start time, resident pages, kernel-thread
//! flag, stack start) and `/proc/PID/status` (Uid, RssAnon, RssShmem, VmSwap);
//! once per process (pid and start time, again after an `exec`: a new
//! `comm` or stack start), `/proc/PID/exe` and `/proc/PID/cmdline` for its
//! name (`naming`) — told what its consumers show ([`Probe::name_largest`]),
//! the first tick reads them only for those, and any other process found
//! then for the tick it moves, is watched or comes among them; the scope of
//! a pid from cgroupfs (`cgroup`). All parsing is in [`super::parse`] and `naming`; this file
//! only reads. Which processes a tick reads is here; how one process is
//! read is in `process`, how it is named in `names`, and how `/proc` is
//! reached (descriptors opened relative to it, kept within the cap) in
//! `procfs`.
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
//! [`FULL_EVERY`](tiers::FULL_EVERY) ticks or
//! [`FULL_AT_MOST_MS`](tiers::FULL_AT_MOST_MS), and when used memory, swap
//! or one of `meminfo`'s movers (`Shmem`, `Mapped`, `AnonPages`,
//! `SwapCached`: [`tiers::Movers`]) moved by the larger of
//! [`FULL_STEP_BYTES`](tiers::FULL_STEP_BYTES) and
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
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use super::cgroup::CgroupFs;
use super::fd::kept_cap;
use super::fd::raise_fd_limit;
use super::parse::{parse_meminfo, parse_u64};
use super::psi::PsiSource;
use crate::probe::naming::NameCache;
use crate::probe::tiers;
use crate::probe::{HostInfo, Probe, ProbeError, ProcessSample, Scope, SystemSample};

mod names;
mod process;
mod procfs;

use process::{resident_of, Kept, Known, Visit};

/// The buffer `/proc` files are read into: `stat` is under 1 KiB, `status`
/// and `meminfo` under 2 KiB, so one read fills it with the whole file.
const READ_BUF: usize = 8192;

/// Every this many ticks `/proc` is listed even with no pid handed out, to
/// check that loadavg's last pid follows this `/proc` (10 s at 2 Hz).
const CHECK_EVERY: u64 = 20;

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
