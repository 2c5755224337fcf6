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

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::naming::Naming;

/// What is read once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    pub start_time: u64,
    /// `pbsi_comm` when the name was read: a new one means an `exec`.
    pub comm: String,
    pub naming: Naming,
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

    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}

/// The system figures `host_statistics64(HOST_VM_INFO64)` gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmStats {
    pub compressed_bytes: u64,
    pub wired_bytes: Option<u64>,
}

/// `host_statistics64` is rate-limited per caller for binaries that are not
/// Apple's: 2 to 10 requests in each 1 s window, then the kernel answers a
/// cached copy (`HOST_STATISTICS_TIME_WINDOW`, `rate_limit_host_statistics`,
/// `osfmk/kern/host.c`).
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
                },
                None => kept,
            };
            self.last = Some((now, stats));
        }
        self.last.map(|(_, s)| s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(start_time: u64, comm: &str, name: &str) -> Identity {
        Identity {
            start_time,
            comm: comm.into(),
            naming: Naming {
                name: name.into(),
                cmdline: Some(format!("{comm} …")),
            },
        }
    }

    #[test]
    fn start_time_and_name_are_read_once_per_process_and_again_for_a_reused_pid() {
        let mut ids = Identities::default();
        ids.begin_tick();
        assert_eq!(ids.known(42, 1001), None, "new pid: read it");
        ids.insert(42, 1001, id(5_000, "python3", "generate.py (python3)"));
        ids.end_tick();

        ids.begin_tick();
        let got = ids.known(42, 1001).unwrap();
        assert_eq!(got, id(5_000, "python3", "generate.py (python3)"));
        assert!(got.named_for("python3") && got.named_for(""));
        ids.end_tick();

        // pid 42 exited and was reused by a different program: new unique
        // id, so its start time and name are read again.
        ids.begin_tick();
        assert_eq!(ids.known(42, 2002), None);
        ids.insert(42, 2002, id(9_000, "node", "server.js (node)"));
        ids.end_tick();
        ids.begin_tick();
        assert_eq!(ids.known(42, 2002).unwrap().naming.name, "server.js (node)");
        ids.end_tick();
    }

    #[test]
    fn an_exec_is_told_by_a_new_comm() {
        // exec keeps the pid and unique id; comm changes.
        let known = id(5_000, "bash", "run.sh (bash)");
        assert!(!known.named_for("python3"));
    }

    #[test]
    fn without_a_unique_id_the_start_time_decides() {
        let mut ids = Identities::default();
        ids.begin_tick();
        ids.insert(7, 0, id(100, "daemon", "daemon"));
        ids.end_tick();
        ids.begin_tick();
        // Unique id unreadable: always read the start time again…
        assert_eq!(ids.known(7, 0), None);
        // …and keep the name only when it is the same process.
        assert_eq!(ids.same_start(7, 100).unwrap().naming.name, "daemon");
        assert_eq!(ids.same_start(7, 101), None);
        assert_eq!(ids.same_start(8, 100), None);
    }

    #[test]
    fn processes_not_seen_in_a_scan_are_forgotten() {
        let mut ids = Identities::default();
        ids.begin_tick();
        ids.insert(1, 11, id(1, "a", "a"));
        ids.insert(2, 22, id(2, "b", "b"));
        ids.end_tick();
        ids.begin_tick();
        assert!(ids.known(1, 11).is_some());
        ids.end_tick();
        assert_eq!(ids.len(), 1);
        ids.begin_tick();
        assert_eq!(ids.known(2, 22), None);
    }

    #[test]
    fn host_statistics_at_most_once_a_second_and_never_when_only_polling() {
        let mut cache = VmStatsCache::default();
        let t0 = Instant::now();
        let calls = std::cell::Cell::new(0);
        let call = |c: u64| {
            calls.set(calls.get() + 1);
            Some(VmStats {
                compressed_bytes: c,
                wired_bytes: Some(c * 2),
            })
        };
        // The gate's poll: no call, nothing known yet.
        assert_eq!(cache.get(t0, false, || call(1)), VmStats::default());
        assert_eq!(cache.get(t0, true, || call(1)).compressed_bytes, 1);
        // Ticks within the second reuse the answer.
        for ms in [100, 500, 999] {
            let s = cache.get(t0 + Duration::from_millis(ms), true, || call(2));
            assert_eq!(s.compressed_bytes, 1);
        }
        // Polling after the second still makes no call, but sees the cache.
        let s = cache.get(t0 + Duration::from_millis(1500), false, || call(3));
        assert_eq!(s.compressed_bytes, 1);
        let s = cache.get(t0 + Duration::from_millis(1500), true, || call(4));
        assert_eq!(
            s,
            VmStats {
                compressed_bytes: 4,
                wired_bytes: Some(8)
            }
        );
        assert_eq!(calls.get(), 2);
    }

    #[test]
    fn a_failed_host_statistics_call_keeps_the_last_figures() {
        let mut cache = VmStatsCache::default();
        let t0 = Instant::now();
        let ok = VmStats {
            compressed_bytes: 10,
            wired_bytes: Some(20),
        };
        cache.get(t0, true, || Some(ok));
        let s = cache.get(t0 + Duration::from_secs(2), true, || None);
        assert_eq!(s, ok);
        // An answer without the wired count keeps the last one.
        let s = cache.get(t0 + Duration::from_secs(4), true, || {
            Some(VmStats {
                compressed_bytes: 30,
                wired_bytes: None,
            })
        });
        assert_eq!(
            s,
            VmStats {
                compressed_bytes: 30,
                wired_bytes: Some(20)
            }
        );
    }
}
