//! The scope's figures: the memory cgroup that holds a run, its limit,
//! usage, swap and events, and the scope as the memory a run has.

use serde::{Deserialize, Serialize};

use super::SystemSample;
use crate::probe::pressure::Pressure;

/// The scope of a run: the innermost memory cgroup (a container, a Slurm
/// job, a systemd slice) whose limit holds the watched tree — or swapsight
/// itself when nothing is watched. Its limit is the run's RAM, its usage and
/// swap the used memory and swap. Read from cgroupfs by
/// [`linux::cgroup`](crate::probe::linux::cgroup); the meaning of each figure per cgroup version is in
/// `docs/trace-format.md`. Fields may be added in later versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scope {
    /// The cgroup's path in its hierarchy, as `/proc/PID/cgroup` shows it.
    pub path: String,
    /// cgroup version: 1 or 2.
    pub version: u8,
    /// The memory limit: v2 `memory.max` (else `memory.high`), v1
    /// `memory.limit_in_bytes`.
    pub limit_bytes: u64,
    /// v2 `memory.high`, where set below the host's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_bytes: Option<u64>,
    /// The scope's own swap limit: v2 `memory.swap.max`; v1
    /// `memory.memsw.limit_in_bytes − memory.limit_in_bytes`. Absent: no
    /// limit of its own (the host's swap is the bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_limit_bytes: Option<u64>,
    /// Memory charged to the scope: v2 `memory.current`, v1
    /// `memory.usage_in_bytes` (page cache included).
    pub usage_bytes: u64,
    /// The scope's swap: v2 `memory.swap.current`, v1 `total_swap` of
    /// `memory.stat`. Absent where swap is not accounted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
    /// Anonymous and shared (tmpfs) memory of the scope: v2 `anon + shmem`
    /// of `memory.stat`, v1 `total_rss + total_shmem`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anon_bytes: Option<u64>,
    /// Cumulative events (counts since the cgroup was made).
    #[serde(default)]
    pub events: ScopeEvents,
    /// Bytes the scope's processes wrote to swap since the cgroup was made,
    /// a counter: v2 `pswpout` of `memory.stat` × page size, where the
    /// kernel counts it per cgroup (newer kernels). Absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_out_bytes: Option<u64>,
    /// v2: the cgroup's own PSI (`memory.pressure`, the format of
    /// `/proc/pressure/memory`: cgroup-v2.rst, "memory.pressure"), with the
    /// level derived from it as from the system's. Absent on v1 and where
    /// the kernel has no PSI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
}

/// A scope's cumulative events: v2 `memory.events`; v1 `memory.failcnt`
/// (as `max`) and `oom_kill` of `memory.oom_control`. Absent: the kernel
/// does not count it for that version.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeEvents {
    /// Times the processes were throttled over `memory.high` (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<u64>,
    /// Times usage was about to go over the limit (v2 `max`, v1 `failcnt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    /// Times usage reached the limit and an allocation was about to fail (v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom: Option<u64>,
    /// Processes of the scope killed by an OOM killer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kill: Option<u64>,
}

impl Scope {
    /// The scope's free memory: limit − usage.
    pub fn free_bytes(&self) -> u64 {
        self.limit_bytes.saturating_sub(self.usage_bytes)
    }

    /// Free memory in % of the limit.
    pub fn free_pct(&self) -> f64 {
        if self.limit_bytes == 0 {
            return 0.0;
        }
        self.free_bytes() as f64 * 100.0 / self.limit_bytes as f64
    }

    /// The scope as the memory a run has, for judging it: the limit is the
    /// memory, limit − usage the free memory, the scope's swap the swap (the
    /// host's where the cgroup does not account swap), its swap limit the
    /// swap there is (else the host's).
    pub fn as_system(&self, host: &SystemSample) -> SystemSample {
        SystemSample {
            phys_bytes: self.limit_bytes.max(1),
            free_pct: self.free_pct(),
            swap_used_bytes: self.swap_bytes.unwrap_or(host.swap_used_bytes),
            swap_total_bytes: self.swap_limit_bytes.unwrap_or(host.swap_total_bytes),
            compressed_bytes: 0,
            page_size: host.page_size,
            anon_bytes: self.anon_bytes,
            // The scope's own where the kernel counts it per cgroup, else
            // the host's: swap written by anyone still wears the same SSD.
            swap_out_bytes: self.swap_out_bytes.or(host.swap_out_bytes),
            ..SystemSample::default()
        }
    }

    /// Whether `other` is the same cgroup.
    pub fn same_cgroup(&self, other: &Scope) -> bool {
        self.version == other.version && self.path == other.path
    }

    /// "a 256 MiB cgroup limit (v1 /swapsight-test-42)".
    pub fn describe(&self) -> String {
        format!(
            "a {} cgroup limit (v{} {})",
            crate::util::units::format_limit(self.limit_bytes),
            self.version,
            self.path
        )
    }
}
