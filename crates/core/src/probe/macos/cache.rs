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

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::probe::naming::Naming;
use crate::probe::GpuMemory;

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

/// What is known of one pid.
#[derive(Debug, Clone)]
struct Known {
    /// `p_uniqueid`; 0 when it could not be read.
    uniqueid: u64,
    id: Identity,
    tick: u64,
}

/// Start time and name per pid, valid while the pid keeps its unique id.
#[derive(Debug, Default)]
pub struct Identities {
    known: HashMap<u32, Known>,
    tick: u64,
}

impl Identities {
    /// Starts a scan.
    pub fn begin_tick(&mut self) {
        self.tick = self.tick.wrapping_add(1);
    }

    /// What was read of `pid` when it is the process seen before (same
    /// non-zero unique id); `None` when it must be read.
    pub fn known(&mut self, pid: u32, uniqueid: u64) -> Option<Identity> {
        let tick = self.tick;
        let k = self.known.get_mut(&pid)?;
        if uniqueid == 0 || k.uniqueid != uniqueid {
            return None;
        }
        k.tick = tick;
        Some(k.id.clone())
    }

    /// What was kept of `pid` when its unique id could not be read but the
    /// start time just read is the one known: the same process.
    pub fn same_start(&self, pid: u32, start_time: u64) -> Option<Identity> {
        self.known
            .get(&pid)
            .filter(|k| k.uniqueid == 0 && k.id.start_time == start_time)
            .map(|k| k.id.clone())
    }

    /// Remembers what was just read of `pid`.
    pub fn insert(&mut self, pid: u32, uniqueid: u64, id: Identity) {
        let tick = self.tick;
        self.known.insert(pid, Known { uniqueid, id, tick });
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

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
