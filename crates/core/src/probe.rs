//! Platform probes: one call per tick returns the whole machine's memory
//! picture — system figures plus every process the probe can see.
//!
//! The [`Probe`] trait and the types here are shared by every platform. Each
//! OS has one folder — [`linux`] and [`macos`] — holding its reading, its
//! pure parsers and its caches; the reading is compiled for that OS only,
//! the parsers everywhere, so Linux tests cover the macOS layouts too. The
//! backend is picked once, at compile time, as [`NativeProbe`] (or an
//! `unsupported` stub that returns an error).
//!
//! Per-platform meaning of each figure is in `docs/trace-format.md`.

mod figures;
pub mod linux;
pub mod macos;
pub mod naming;
pub mod pressure;
/// A probe that plays a script, for tests.
#[cfg(any(test, feature = "test-support"))]
pub mod scripted;
pub mod tiers;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod unsupported;

pub use figures::{
    GpuMemory, HostInfo, ProcessSample, Sample, Scope, ScopeEvents, SwapRoom, SwapWall,
    SystemSample,
};

#[cfg(target_os = "linux")]
use linux::NativeProbe;
#[cfg(target_os = "macos")]
use macos::NativeProbe;
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
use unsupported::NativeProbe;

/// The guard's cheap scan of the process list (pid, ppid, name, start
/// time). On macOS it keeps the last good list when a scan fails.
#[cfg(target_os = "linux")]
pub use linux::{is_zombie, start_time, TreeScan};
#[cfg(target_os = "macos")]
pub use macos::{start_time, TreeScan};
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub use unsupported::{start_time, TreeScan};

/// Whether `pid` has exited and waits to be reaped: only Linux says so
/// cheaply; elsewhere a zombie counts as alive.
#[cfg(not(target_os = "linux"))]
pub fn is_zombie(_pid: u32) -> bool {
    false
}

/// A source of samples. Implementations keep buffers and caches between
/// calls, so one probe should be reused tick after tick.
pub trait Probe {
    /// System figures only (cheap; used by the guard's gate).
    fn system(&mut self) -> Result<SystemSample, ProbeError>;
    /// System figures plus every visible process.
    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError>;
    /// Facts about the host.
    fn host(&mut self) -> Result<HostInfo, ProbeError>;
    /// Why samples carry no memory pressure (Linux without PSI, a macOS
    /// that refuses the level), to be said once; `None` when they do.
    fn pressure_absent(&self) -> Option<String> {
        None
    }

    /// The [`Scope`] of `pid`: the innermost memory cgroup holding it with a
    /// limit below the host's memory. `Ok(None)`: the host is the scope (no
    /// limit, or an OS without cgroups). `Err`: the cgroup files cannot be
    /// read; the caller judges against the host and says so once.
    fn scope(&mut self, _pid: u32) -> Result<Option<Scope>, ProbeError> {
        Ok(None)
    }

    /// The watched tree's members (`pids`, sorted): read every tick from
    /// the next one on, never left idle between full ticks. The run a
    /// recording or a pin watches is what its figures are for: a step of
    /// it that moves no machine-wide figure by a step (a job inside a
    /// 256 MiB limit on a big host, a pause between allocations) would
    /// otherwise stand unread up to [`tiers::FULL_EVERY`] ticks. A probe
    /// that reads every process every tick ignores it.
    fn watch_closely(&mut self, _pids: &[u32]) {}

    /// What the caller shows of each sample: the `k` largest processes (by
    /// footprint), the watched tree and the flagged ones. A probe may then
    /// leave a process it found at its first sample under its kernel short
    /// name (`comm`), with no command line, as long as it is none of those
    /// — not among the `k` largest, not watched, and unmoved (flags need a
    /// process that moved or is watched) — and name it in full in the
    /// sample where it becomes one (Linux: an idle machine's first sample
    /// reads two files fewer for each of its processes). Without this call
    /// every process is named in full at once. A process that starts
    /// later is named at once.
    fn name_largest(&mut self, _k: usize) {}
}

/// The user a process belongs to, from its real, effective and saved uids:
/// that uid when all three agree, else `None` — a process between users
/// (a setuid program) is nobody's own. The same rule as the kernel's for
/// who may read a process's memory (`ptrace_may_access`, which Linux's
/// `hidepid=2` applies to `/proc/PID`).
pub fn owner(real: u32, effective: u32, saved: u32) -> Option<u32> {
    (real == effective && effective == saved).then_some(real)
}

/// Errors a probe can return. Per-process failures are never errors: the
/// process is skipped or listed unreadable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// A file or a call of the OS failed.
    #[error("cannot read {what}")]
    Io {
        /// The file or call, as the message names it (`/proc/meminfo`).
        what: String,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// The OS's answer could not be used: a file or figure that does not
    /// parse, or a cgroup the mounts do not show.
    #[error("cannot parse {what}: {detail}")]
    Parse {
        /// The file or call that answered.
        what: String,
        /// What was wrong with the answer.
        detail: String,
    },
    /// No probe for this OS (the `unsupported` backend).
    #[error("swapsight has no memory probe for this operating system")]
    Unsupported,
}

/// Environment variable that makes [`native`] withhold every per-process
/// swap figure (`VmSwap`, swap-ins, compressed bytes), so the detector works
/// as on a Mac that cannot read them. Used by the real-swap tests.
pub const WITHHOLD_PROCESS_SWAP_ENV: &str = "SWAPSIGHT_WITHHOLD_PROCESS_SWAP";

/// Environment variable that makes [`native`] judge every run against the
/// host when it is `host`, even inside a memory cgroup with a limit: the
/// scope is never read. For a job whose cgroup limit is not the question
/// (and for the real-swap tests that use a cgroup to keep memory out of a
/// process's footprint, as a Mac's GPU driver does).
pub const SCOPE_ENV: &str = "SWAPSIGHT_SCOPE";

/// The probe for the platform this was built for (per-process swap
/// withheld when [`WITHHOLD_PROCESS_SWAP_ENV`] is `1`; no scope when
/// [`SCOPE_ENV`] is `host`).
pub fn native() -> Result<Box<dyn Probe + Send>, ProbeError> {
    let probe = NativeProbe::new()?;
    let withhold = std::env::var(WITHHOLD_PROCESS_SWAP_ENV).is_ok_and(|v| v == "1");
    let host = std::env::var(SCOPE_ENV).is_ok_and(|v| v == "host");
    Ok(match (withhold, host) {
        (false, false) => Box::new(probe),
        (true, false) => Box::new(WithheldProcessSwap(probe)),
        (false, true) => Box::new(HostScope(probe)),
        (true, true) => Box::new(HostScope(WithheldProcessSwap(probe))),
    })
}

/// A probe whose runs are judged against the host: it reads no scope.
pub struct HostScope<P>(pub P);

impl<P: Probe> Probe for HostScope<P> {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.0.system()
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        self.0.sample()
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        self.0.host()
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.0.watch_closely(pids);
    }

    fn name_largest(&mut self, k: usize) {
        self.0.name_largest(k);
    }
}

/// A probe whose processes carry no per-process swap figures.
pub struct WithheldProcessSwap<P>(pub P);

impl<P: Probe> Probe for WithheldProcessSwap<P> {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.0.system()
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let (system, mut processes) = self.0.sample()?;
        processes
            .iter_mut()
            .for_each(ProcessSample::withhold_process_swap);
        Ok((system, processes))
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        self.0.host()
    }

    fn pressure_absent(&self) -> Option<String> {
        self.0.pressure_absent()
    }

    fn scope(&mut self, pid: u32) -> Result<Option<Scope>, ProbeError> {
        self.0.scope(pid)
    }

    fn watch_closely(&mut self, pids: &[u32]) {
        self.0.watch_closely(pids);
    }

    fn name_largest(&mut self, k: usize) {
        self.0.name_largest(k);
    }
}

/// The last good process list: a failed scan answers it again instead of an
/// empty list (which would read as "every process exited").
#[derive(Debug, Default)]
pub struct LastKnown {
    processes: Vec<ProcessSample>,
}

impl LastKnown {
    /// Takes a scan's result; returns the list to act on.
    pub fn update<E>(&mut self, scan: Result<Vec<ProcessSample>, E>) -> Vec<ProcessSample> {
        if let Ok(processes) = scan {
            self.processes = processes;
        }
        self.processes.clone()
    }
}

/// Whether this platform reports per-process swap (Linux does; macOS does not).
pub const MEASURES_PROCESS_SWAP: bool = cfg!(target_os = "linux");

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
