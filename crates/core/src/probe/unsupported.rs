//! Stub backend for operating systems swapsight has no probe for: every call
//! answers `ProbeError::Unsupported`, so shells can say so plainly.

use super::{HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

pub struct NativeProbe;

impl NativeProbe {
    pub fn new() -> Result<Self, ProbeError> {
        Err(ProbeError::Unsupported)
    }
}

impl Probe for NativeProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        Err(ProbeError::Unsupported)
    }
    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        Err(ProbeError::Unsupported)
    }
    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        Err(ProbeError::Unsupported)
    }
}

/// The guard's process scan: nothing to list here.
#[derive(Default)]
pub struct TreeScan;

impl TreeScan {
    /// A scanner that finds nothing.
    pub fn new() -> Self {
        TreeScan
    }

    /// No process: this OS has no probe to list them.
    pub fn scan(&mut self) -> Vec<ProcessSample> {
        Vec::new()
    }
}

/// Unknown here: a reused pid cannot be told apart.
pub fn start_time(_pid: u32) -> Option<u64> {
    None
}
