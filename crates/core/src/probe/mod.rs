//! Platform probes: one call per tick returns the whole machine's memory
//! picture — system figures plus every process the probe can see.
//!
//! The types here are shared by every platform; the backend is picked once,
//! at compile time, as `sys` (macOS, Linux, or an `unsupported` stub that
//! returns an error). Each backend keeps its FFI or file reading thin and
//! hands raw bytes or text to pure `parse_*` functions that Linux tests cover.
//!
//! Per-platform meaning of each figure is in `docs/trace-format.md`.

use serde::{Deserialize, Serialize};

#[cfg(target_os = "linux")]
#[path = "linux.rs"]
mod sys;

#[cfg(target_os = "macos")]
#[path = "macos/mod.rs"]
mod sys;

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
#[path = "unsupported.rs"]
mod sys;

pub mod linux_parse;
pub mod macos_parse;
pub mod scripted;

/// System-wide figures of one tick. Fields may be added in later versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemSample {
    /// Physical memory (macOS `hw.memsize`, Linux `MemTotal`).
    pub phys_bytes: u64,
    /// Free memory in percent (macOS `kern.memorystatus_level`, Linux
    /// `MemAvailable / MemTotal × 100`).
    pub free_pct: f64,
    /// Swap in use (macOS `vm.swapusage` used, Linux `SwapTotal − SwapFree`).
    pub swap_used_bytes: u64,
    /// Swap configured or currently allocated.
    pub swap_total_bytes: u64,
    /// Memory held by the compressor (macOS); 0 on Linux.
    #[serde(default)]
    pub compressed_bytes: u64,
    /// Kernel page size.
    #[serde(default)]
    pub page_size: u64,
}

impl SystemSample {
    /// Free memory in bytes, derived from the percentage.
    pub fn free_bytes(&self) -> u64 {
        (self.phys_bytes as f64 * self.free_pct / 100.0) as u64
    }
}

/// One process at one tick. Fields may be added in later versions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessSample {
    pub pid: u32,
    #[serde(default)]
    pub ppid: u32,
    pub name: String,
    /// macOS `phys_footprint`; Linux `RssAnon + RssShmem`. Swapped pages are
    /// not in it on either platform — that is the whole point of swapsight.
    pub footprint_bytes: u64,
    /// Cumulative page-ins (macOS `ri_pageins`, Linux `majflt`).
    #[serde(default)]
    pub pageins: u64,
    /// Measured swap of this process (Linux `VmSwap`); `None` where the OS
    /// does not say (macOS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_bytes: Option<u64>,
    /// Start time in the OS's own unit (Linux: clock ticks since boot; macOS:
    /// µs since the epoch); tells a reused pid apart.
    #[serde(default)]
    pub start_time: u64,
    /// `false` when the OS listed the process but denied its figures
    /// (another user's process on macOS): footprint and page-ins are then 0.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub readable: bool,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// One tick: system figures and the processes seen. `t_ms` counts from the
/// sampler's (or trace's) start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub t_ms: u64,
    #[serde(rename = "sys")]
    pub system: SystemSample,
    #[serde(rename = "procs")]
    pub processes: Vec<ProcessSample>,
}

/// Facts about the host that do not change between ticks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostInfo {
    pub os: String,
    pub phys_bytes: u64,
    pub page_size: u64,
    #[serde(default)]
    pub hostname: String,
}

/// Errors a probe can return. Per-process failures are never errors: the
/// process is skipped or listed unreadable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    #[error("cannot read {what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot parse {what}: {detail}")]
    Parse { what: String, detail: String },
    #[error("swapsight has no memory probe for this operating system")]
    Unsupported,
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
}

/// The probe for the platform this was built for.
pub fn native() -> Result<Box<dyn Probe + Send>, ProbeError> {
    Ok(Box::new(sys::NativeProbe::new()?))
}

/// Whether this platform reports per-process swap (Linux does; macOS does not).
pub const MEASURES_PROCESS_SWAP: bool = cfg!(target_os = "linux");
