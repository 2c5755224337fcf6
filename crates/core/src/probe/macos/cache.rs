//! The macOS probe's memory between ticks, kept platform-free so the Linux
//! tests cover the rules that make a tick cheap and kind to the kernel:
//!
//! - [`Identities`]: a process's start time (`sysctl kern.proc.pid`, which
//!   walks every process inside the kernel — O(N) per call, O(N²) per tick)
//!   and name (`KERN_PROCARGS2`, which copies the process's argument area)
//!   are read once, when its pid is new, and the name again after an
//!   `exec` (same process, new `comm`); a reused pid is told apart by
//!   `p_uniqueid` (`PROC_PIDUNIQIDENTIFIERINFO`), which the kernel never
//!   gives twice until reboot.
//! - [`VmStatsCache`]: `host_statistics64` at most once a second for the
//!   whole process, and never when the caller only polls free memory (the
//!   guard's wait-free gate).
//! - [`GpuCache`]: the IOAccelerator registry walk at most once a second,
//!   and Metal's recommended working set once, then again only when
//!   `iogpu.wired_limit_mb` changes.
//! - [`LastReads`]: tiered ticks ([`crate::probe::tiers`]): what the last
//!   read of each process gave, so that a tick that is not full reads no
//!   idle process — neither `proc_pid_rusage` nor `TASK_VM_INFO` — and
//!   repeats its last sample.

use rustc_hash::FxHashMap as HashMap;
use std::time::{Duration, Instant};

use crate::probe::naming::Naming;
use crate::probe::tiers::Unmoved;
use crate::probe::{GpuMemory, ProcessSample};

/// What is read once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub(crate) start_time: u64,
    /// `pbsi_comm` when the name was read: a new one means an `exec`.
    pub comm: String,
    pub(crate) naming: Naming,
}

impl Identity {
    /// Whether the name still belongs to a process whose short name is now
    /// `comm` (an empty `comm`, unreadable, says nothing).
    pub fn named_for(&self, comm: &str) -> bool {
        comm.is_empty() || self.comm == comm
    }
}

/// What is kept of one pid.
#[derive(Debug, Clone)]
struct Entry<T> {
    /// `p_uniqueid`; 0 when it could not be read.
    uniqueid: u64,
    /// The last scan that listed it.
    tick: u64,
    value: T,
}

/// Per pid, what is kept of the process that holds it, told apart from a
/// later one on the same pid by its unique id, and forgotten once a scan
/// does not list it ([`PerPid::end_tick`]): never more entries than the
/// process list.
#[derive(Debug)]
pub struct PerPid<T> {
    known: HashMap<u32, Entry<T>>,
    tick: u64,
}

impl<T> Default for PerPid<T> {
    fn default() -> Self {
        PerPid {
            known: HashMap::default(),
            tick: 0,
        }
    }
}

impl<T> PerPid<T> {
    /// Starts a scan.
    pub fn begin_tick(&mut self) {
        self.tick = self.tick.wrapping_add(1);
    }

    /// Ends a scan: forgets the pids it did not see.
    pub fn end_tick(&mut self) {
        let tick = self.tick;
        self.known.retain(|_, k| k.tick == tick);
    }

    /// How many pids are known.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no pid is known.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// What is kept of `pid` when it is the process seen before (same
    /// non-zero unique id), which this scan has seen.
    fn same(&mut self, pid: u32, uniqueid: u64) -> Option<&mut T> {
        let tick = self.tick;
        let k = self.known.get_mut(&pid)?;
        if uniqueid == 0 || k.uniqueid != uniqueid {
            return None;
        }
        k.tick = tick;
        Some(&mut k.value)
    }

    /// Keeps `value` for `pid`, seen by this scan.
    fn keep(&mut self, pid: u32, uniqueid: u64, value: T) {
        let tick = self.tick;
        self.known.insert(
            pid,
            Entry {
                uniqueid,
                tick,
                value,
            },
        );
    }
}

/// Start time and name per pid, valid while the pid keeps its unique id.
pub type Identities = PerPid<Identity>;

impl Identities {
    /// What was read of `pid` when it is the process seen before (same
    /// non-zero unique id); `None` when it must be read.
    pub fn known(&mut self, pid: u32, uniqueid: u64) -> Option<Identity> {
        self.same(pid, uniqueid).cloned()
    }

    /// What was kept of `pid` when its unique id could not be read but the
    /// start time just read is the one known: the same process.
    pub fn same_start(&self, pid: u32, start_time: u64) -> Option<Identity> {
        self.known
            .get(&pid)
            .filter(|k| k.uniqueid == 0 && k.value.start_time == start_time)
            .map(|k| k.value.clone())
    }

    /// Remembers what was just read of `pid`.
    pub fn insert(&mut self, pid: u32, uniqueid: u64, id: Identity) {
        self.keep(pid, uniqueid, id);
    }
}

/// The system figures `host_statistics64(HOST_VM_INFO64)` gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmStats {
    pub(crate) compressed_bytes: u64,
    pub(crate) wired_bytes: Option<u64>,
    /// Memory by kind (used, free, cached), when the answer held it.
    pub memory: Option<super::parse::VmMemory>,
    /// Bytes written to swap since boot (`swapouts × page size`).
    pub swap_out_bytes: Option<u64>,
}

/// `host_statistics64` is rate-limited for binaries that are not Apple's:
/// 2 to 10 requests in each 1 s window, then the kernel answers a cached
/// copy (`HOST_STATISTICS_TIME_WINDOW`, `rate_limit_host_statistics`,
/// `osfmk/kern/host.c`). The window and its count are one global cache per
/// flavor (`g_host_stats_cache[index]`), shared by every non-platform
/// process, not kept per caller: another app polling it can leave us the
/// cached copy, and our calls count against theirs.
pub const VM_STATS_EVERY: Duration = Duration::from_secs(1);

/// The last `host_statistics64` figures and when they were asked for.
#[derive(Debug, Default)]
pub struct VmStatsCache {
    last: Option<(Instant, VmStats)>,
}

impl VmStatsCache {
    /// An empty cache (usable in a `static`).
    pub const fn new() -> Self {
        VmStatsCache { last: None }
    }

    /// The figures at `now`. `call` (the kernel call; `None` when it failed)
    /// runs only when `refresh` is set and the last call is at least
    /// [`VM_STATS_EVERY`] old. A failed call keeps the last figures (a
    /// secondary figure must not cost a sample) and still waits out the
    /// window.
    pub fn get(
        &mut self,
        now: Instant,
        refresh: bool,
        call: impl FnOnce() -> Option<VmStats>,
    ) -> VmStats {
        let fresh = self
            .last
            .is_some_and(|(at, _)| now.saturating_duration_since(at) < VM_STATS_EVERY);
        if refresh && !fresh {
            let kept = self.last.map(|(_, s)| s).unwrap_or_default();
            let stats = match call() {
                Some(s) => VmStats {
                    compressed_bytes: s.compressed_bytes,
                    wired_bytes: s.wired_bytes.or(kept.wired_bytes),
                    memory: s.memory.or(kept.memory),
                    // A counter: the last one known, never a fall to none.
                    swap_out_bytes: s.swap_out_bytes.or(kept.swap_out_bytes),
                },
                None => kept,
            };
            self.last = Some((now, stats));
        }
        self.last.map(|(_, s)| s).unwrap_or_default()
    }
}

/// How often the IOAccelerator services are read: a registry walk that
/// copies each accelerator's property table, not worth more than once a
/// second (the same window as [`VM_STATS_EVERY`]).
pub const GPU_EVERY: Duration = Duration::from_secs(1);

/// The GPU's figures between ticks.
#[derive(Debug, Default)]
pub struct GpuCache {
    /// When the accelerators were last read, and what they gave (the
    /// in-use, alloc and driver figures).
    accelerators: Option<(Instant, Option<GpuMemory>)>,
    /// `iogpu.wired_limit_mb` as last read (`None` inside: no such sysctl)
    /// and Metal's recommended working set read for it; `None` before the
    /// first read.
    limit: Option<(Option<u64>, Option<u64>)>,
}

impl GpuCache {
    /// A cache that has read nothing yet.
    pub const fn new() -> Self {
        GpuCache {
            accelerators: None,
            limit: None,
        }
    }

    /// The figures at `now`; `None` when the OS gave none. With `refresh`
    /// set and the last read at least [`GPU_EVERY`] old, `accelerators`
    /// (the registry walk) and `wired_limit_mb` (the sysctl) run, and
    /// `working_set` (Metal) too on the first read and whenever the sysctl
    /// answers a value other than the last. Without `refresh` nothing runs.
    pub fn get(
        &mut self,
        now: Instant,
        refresh: bool,
        accelerators: impl FnOnce() -> Option<GpuMemory>,
        wired_limit_mb: impl FnOnce() -> Option<u64>,
        working_set: impl FnOnce() -> Option<u64>,
    ) -> Option<GpuMemory> {
        let fresh = self
            .accelerators
            .is_some_and(|(at, _)| now.saturating_duration_since(at) < GPU_EVERY);
        if refresh && !fresh {
            self.accelerators = Some((now, accelerators()));
            let mb = wired_limit_mb();
            let set = match self.limit {
                Some((was, set)) if was == mb => set,
                _ => working_set(),
            };
            self.limit = Some((mb, set));
        }
        let mut gpu = self.accelerators.and_then(|(_, g)| g).unwrap_or_default();
        if let Some((mb, set)) = self.limit {
            gpu.wired_limit_mb = mb;
            gpu.recommended_working_set_bytes = set;
        }
        (!gpu.is_empty()).then_some(gpu)
    }
}

/// The figures of a process's read that decide whether it moved: its
/// footprint and page-ins (`proc_pid_rusage`), and what `TASK_VM_INFO`
/// gives that can move while the footprint stands still — memory going to
/// the compressor or swap stays in `phys_footprint`, so `compressed`,
/// swap-ins and decompressions count, and GPU memory outside the footprint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moving {
    footprint_bytes: u64,
    pageins: u64,
    swapin_bytes: Option<u64>,
    decompressions: Option<u64>,
    compressed_bytes: Option<u64>,
    gpu_bytes: Option<u64>,
    outside_footprint_bytes: Option<u64>,
}

impl Moving {
    /// The figures of `p` that decide whether it moved.
    pub fn of(p: &ProcessSample) -> Moving {
        Moving {
            footprint_bytes: p.footprint_bytes,
            pageins: p.pageins,
            swapin_bytes: p.swapin_bytes,
            decompressions: p.decompressions,
            compressed_bytes: p.compressed_bytes,
            gpu_bytes: p.gpu_bytes,
            outside_footprint_bytes: p.outside_footprint_bytes,
        }
    }
}

/// What the last read of one process gave.
#[derive(Debug, Clone)]
pub struct LastRead {
    moving: Moving,
    unmoved: Unmoved,
    /// Its last sample once it is idle, which a tick that does not read it
    /// repeats.
    idle_sample: Option<ProcessSample>,
}

/// Tiered ticks for the macOS probe: per listed pid, what its last read
/// gave and how many reads in a row found it unmoved. A process unmoved
/// for [`IDLE_AFTER`](crate::probe::tiers::IDLE_AFTER) reads, or listed at
/// the first scan ([`Unmoved::first_read`]), is idle: a
/// tick that is not full does not read it and repeats its last sample. A
/// new pid, a reused one (another unique id) and one whose unique id could
/// not be read (0: a reuse could not be told) are always read. Pids the
/// scan no longer lists are forgotten at [`PerPid::end_tick`].
pub type LastReads = PerPid<LastRead>;

impl LastReads {
    /// The last sample of `pid` (unique id `uniqueid`) when this tick may
    /// leave it unread: the tick is not `full` and the process is idle.
    /// `None`: read it, and count the read with [`LastReads::read`].
    pub fn repeat(&mut self, pid: u32, uniqueid: u64, full: bool) -> Option<&ProcessSample> {
        let k = self.same(pid, uniqueid)?;
        if full || !k.unmoved.idle() {
            return None;
        }
        k.idle_sample.as_ref()
    }

    /// Counts a read of `pid` that gave `sample`: unmoved when its
    /// [`Moving`] figures are those of the last read of the same process.
    pub fn read(&mut self, pid: u32, uniqueid: u64, sample: &ProcessSample) {
        if uniqueid == 0 {
            self.forget(pid);
            return;
        }
        let moving = Moving::of(sample);
        let unmoved = match self.same(pid, uniqueid) {
            Some(k) => k.unmoved.after_read(k.moving != moving),
            // New, or reused: its first read; idle at once when listed
            // at the first scan (there before the run).
            None => Unmoved::first_read(self.tick == 1),
        };
        let last = LastRead {
            moving,
            unmoved,
            idle_sample: unmoved.idle().then(|| sample.clone()),
        };
        self.keep(pid, uniqueid, last);
    }

    /// Forgets `pid`: it exited while it was read.
    pub fn forget(&mut self, pid: u32) {
        self.known.remove(&pid);
    }
}

/// The sample a tick repeats for a process it did not read: the last one,
/// with what this tick's scan says of it — its parent, its owner and its
/// name (an `exec` keeps the unique id) — where the scan gave them (a
/// failed short BSD info gives ppid 0 and no owner).
pub fn repeated(
    last: &ProcessSample,
    ppid: u32,
    uid: Option<u32>,
    naming: Naming,
) -> ProcessSample {
    ProcessSample {
        ppid: if ppid == 0 { last.ppid } else { ppid },
        uid: uid.or(last.uid),
        name: naming.name,
        cmdline: naming.cmdline,
        ..last.clone()
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
