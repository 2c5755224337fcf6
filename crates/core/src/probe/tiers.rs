//! Tiered ticks, one rule for both probes: which ticks read every process
//! ("full" ticks), and when a process counts as idle, so that a tick that
//! is not full may leave it unread and repeat its last figures.
//!
//! - A process whose cheap figures did not move for [`IDLE_AFTER`] reads in
//!   a row is idle ([`Unmoved`]); which figures are cheap is the probe's
//!   (Linux: resident pages and major faults from `stat`; macOS: the
//!   figures of its last read, see `macos::cache::LastReads`).
//! - A tick is full ([`FullTicks::due`]) at the first tick, every
//!   [`FULL_EVERY`] ticks or [`FULL_AT_MOST_MS`], whichever comes first,
//!   and when used memory, swap or one of the probe's [`Movers`] moved by
//!   the larger of [`FULL_STEP_BYTES`] and [`FULL_STEP_SHARE`] of memory
//!   since the last full tick, or memory pressure moved: Linux PSI `some`
//!   avg10 by a point, macOS the kernel's level
//!   (`kern.memorystatus_vm_pressure_level`) changing. A process that
//!   starts to grow, page or swap moves those machine-wide figures first,
//!   so it is read at the very next tick — one that maps shared memory
//!   already in RAM moves no used memory, but moves `Mapped`.
//!
//! A process that starts during the run is read at once and again the
//! next tick; the processes found at the first tick, there before the run,
//! count as idle from that first read ([`Unmoved::first_read`]). All of it
//! is plain arithmetic on figures, tested on every OS.

use crate::probe::pressure::Level;
use crate::probe::SystemSample;

/// A process whose cheap figures have not moved for this many reads in a
/// row is idle: between full ticks it is not read at all, and its last
/// figures stand (see [`FullTicks::due`]). One: a process that moved is
/// read again the next tick, and skipped from the first read that found
/// it still. Waiting for more reads guarded nothing the machine's figures
/// do not (a process growing by a step makes the next tick full, one
/// growing slower is read within [`FULL_EVERY`] ticks), and it read every
/// process of a new recording in full three more times (ticks 2–4: 10 of
/// a 20 s recording's 71 ms of CPU at 366 processes, docs/benchmarks.md).
/// By the same argument, the processes found at the first tick need no
/// second read to count as idle ([`Unmoved::first_read`]).
pub const IDLE_AFTER: u32 = 1;

/// Every this many ticks every process is read, idle or not (4 s at 2 Hz):
/// with [`FULL_AT_MOST_MS`], the most an idle process's figures can lag
/// when nothing else moves.
pub const FULL_EVERY: u64 = 8;

/// A full tick at least this often, whatever the interval: 4 s, the count
/// rule's period at the default interval (500 ms), so the tick's cost
/// measured there (docs/benchmarks.md) stands; at a longer interval every
/// tick is full (at `--interval 1h` the count rule alone let an idle
/// process's figures lag 8 h), at a shorter one the count rule comes first.
/// Growth that moves a machine-wide figure is read the next tick; this
/// bounds what moves none (one process freeing what another takes).
pub const FULL_AT_MOST_MS: u64 = 4000;

/// The machine's figures moving by this much since the last full tick make
/// the next tick full: used memory or swap by the larger of this and
/// [`FULL_STEP_SHARE`] of memory.
pub const FULL_STEP_BYTES: u64 = 16 << 20;

/// See [`FULL_STEP_BYTES`]: 0.25 % of memory (40 MiB on a 16 GiB machine).
pub const FULL_STEP_SHARE: f64 = 0.0025;

/// How far used memory or swap must move to make a tick full, on a machine
/// with `phys_bytes` of memory.
pub fn full_step_bytes(phys_bytes: u64) -> u64 {
    FULL_STEP_BYTES.max((phys_bytes as f64 * FULL_STEP_SHARE) as u64)
}

/// Machine-wide figures besides used memory and swap that a process's
/// growth moves, each compared with the step like them. Linux: `Shmem`,
/// `Mapped`, `AnonPages` and `SwapCached` of `/proc/meminfo` (a process
/// mapping a tmpfs file already in memory raises its `RssShmem` and
/// `Mapped`, while `MemAvailable` stays flat). macOS: app, cached, wired
/// and compressed memory (pages that trade between app and cached leave
/// Memory Used flat). Absent figures are never a move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Movers(pub [Option<u64>; 4]);

impl Movers {
    /// None known: only used memory, swap and pressure decide.
    pub const NONE: Movers = Movers([None; 4]);

    /// macOS's, from the sample's figures of `host_statistics64`: app,
    /// cached, wired and compressed memory.
    pub fn of_macos(system: &SystemSample) -> Movers {
        Movers([
            system.app_bytes,
            system.cached_bytes,
            system.wired_bytes,
            Some(system.compressed_bytes),
        ])
    }

    /// Whether any figure known in both moved by `step` or more.
    fn moved(&self, since: &Movers, step: u64) -> bool {
        self.0
            .iter()
            .zip(since.0)
            .any(|(now, was)| matches!((now, was), (Some(a), Some(b)) if a.abs_diff(b) >= step))
    }
}

/// The machine's figures at the last full tick, which decide the next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtFull {
    /// The probe's tick count at that tick.
    pub tick: u64,
    /// The probe's clock at that tick, in ms (monotonic).
    pub ms: u64,
    /// The probe's [`Movers`] then.
    pub movers: Movers,
    /// [`SystemSample::used_bytes`].
    pub used_bytes: u64,
    /// [`SystemSample::swap_used_bytes`].
    pub swap_used_bytes: u64,
    /// Linux PSI `some` avg10, in hundredths of a percent.
    pub psi_some: Option<u64>,
    /// macOS: the kernel's pressure level.
    pub kernel_level: Option<Level>,
}

impl AtFull {
    /// The figures of `system` and `movers` at `tick`, `ms` on the probe's
    /// clock.
    pub fn of(tick: u64, ms: u64, system: &SystemSample, movers: Movers) -> AtFull {
        AtFull {
            tick,
            ms,
            movers,
            used_bytes: system.used_bytes(),
            swap_used_bytes: system.swap_used_bytes,
            psi_some: system
                .pressure
                .and_then(|p| p.some)
                .map(|l| (l.avg10 * 100.0) as u64),
            kernel_level: system.pressure.and_then(|p| p.kernel_level),
        }
    }
}

/// When a tick reads every process: the last full tick, and the rule.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FullTicks {
    last: Option<AtFull>,
}

impl FullTicks {
    /// Whether tick `tick`, at `ms` on the probe's monotonic clock, whose
    /// machine figures are `system` and `movers`, reads every process: the
    /// first tick, every [`FULL_EVERY`] ticks or [`FULL_AT_MOST_MS`], and
    /// when used memory, swap, a mover or memory pressure moved past a
    /// small step since the last full tick — what a process that starts to
    /// grow or page moves first. Otherwise idle processes keep their last
    /// figures. A full tick is remembered as the base of the next decision.
    pub fn due(&mut self, tick: u64, ms: u64, system: &SystemSample, movers: Movers) -> bool {
        let now = AtFull::of(tick, ms, system, movers);
        let step = full_step_bytes(system.phys_bytes);
        let full = match self.last {
            None => true,
            Some(at) => {
                tick.saturating_sub(at.tick) >= FULL_EVERY
                    || ms.saturating_sub(at.ms) >= FULL_AT_MOST_MS
                    || now.movers.moved(&at.movers, step)
                    || now.used_bytes.abs_diff(at.used_bytes) >= step
                    || now.swap_used_bytes.abs_diff(at.swap_used_bytes) >= step
                    // A point of PSI `some` over 10 s: tasks began to stall.
                    || match (now.psi_some, at.psi_some) {
                        (Some(a), Some(b)) => a.abs_diff(b) >= 100,
                        (a, b) => a.is_some() != b.is_some(),
                    }
                    // macOS: the kernel changed its level (or stopped or
                    // began to answer).
                    || now.kernel_level != at.kernel_level
            }
        };
        if full {
            self.last = Some(now);
        }
        full
    }

    /// The figures of the last full tick; `None` before the first.
    pub fn last(&self) -> Option<AtFull> {
        self.last
    }
}

/// Reads in a row that found a process's cheap figures unmoved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unmoved(u32);

impl Unmoved {
    /// Idle from the start (a Linux kernel thread, never sampled).
    pub const IDLE: Unmoved = Unmoved(IDLE_AFTER);

    /// The count after a process's first read: idle at once when it was
    /// `found_at_start` — listed at the probe's first tick, so there before
    /// the run began, where most of a machine's processes sit still (one
    /// that grows moves the machine's figures and makes the next tick full;
    /// one that grows slower is read within [`FULL_EVERY`] ticks, as any
    /// idle process is) — else not yet: a process that starts during the
    /// run is likely to move again.
    pub fn first_read(found_at_start: bool) -> Unmoved {
        if found_at_start {
            Unmoved::IDLE
        } else {
            Unmoved(0)
        }
    }

    /// The count after one more read, which found the figures `moved` or not.
    #[must_use]
    pub fn after_read(self, moved: bool) -> Unmoved {
        if moved {
            Unmoved(0)
        } else {
            Unmoved(self.0.saturating_add(1))
        }
    }

    /// Unmoved for [`IDLE_AFTER`] reads: a tick that is not full may skip it.
    pub fn idle(self) -> bool {
        self.0 >= IDLE_AFTER
    }
}

#[cfg(test)]
#[path = "tiers_tests.rs"]
mod tests;
