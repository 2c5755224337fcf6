//! The guard's cheap scan of the process list on Linux: pid, ppid, start
//! time and name from `/proc/PID/stat`, without the per-process memory reads
//! of the full probe. Also whether one pid is a zombie.

use std::io::Read;

use super::parse::{parse_stat, parse_u64};
use crate::probe::ProcessSample;

/// Every live process from `/proc/PID/stat`. Zombies are dead for this
/// purpose, kernel threads are skipped.
#[derive(Debug, Default)]
pub struct TreeScan;

impl TreeScan {
    /// A scanner; it holds nothing between scans.
    pub fn new() -> Self {
        TreeScan
    }

    /// Every live process but kernel threads: pid, ppid, name (`comm`) and
    /// start time; empty when `/proc` cannot be listed.
    pub fn scan(&mut self) -> Vec<ProcessSample> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut buf = Vec::with_capacity(512);
        let mut out = Vec::with_capacity(256);
        for entry in dir.flatten() {
            let Some(pid) =
                parse_u64(entry.file_name().as_encoded_bytes()).and_then(|p| u32::try_from(p).ok())
            else {
                continue;
            };
            buf.clear();
            let read = std::fs::File::open(format!("/proc/{pid}/stat"))
                .and_then(|mut f| f.read_to_end(&mut buf));
            if read.is_err() {
                continue;
            }
            let Some(stat) = parse_stat(&buf) else {
                continue;
            };
            if stat.is_kernel_thread() || matches!(stat.state, b'Z' | b'X' | b'x') {
                continue;
            }
            out.push(ProcessSample {
                pid,
                ppid: stat.ppid,
                name: String::from_utf8_lossy(stat.comm).into(),
                start_time: stat.starttime,
                ..Default::default()
            });
        }
        out
    }
}

/// Whether `pid` has exited and waits to be reaped by its parent.
pub fn is_zombie(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|b| parse_stat(&b).map(|s| s.state == b'Z'))
        .unwrap_or(false)
}

/// When `pid` started, in clock ticks since boot (`/proc/PID/stat` field
/// 22): with the pid, it names one process, even after the pid is reused.
pub fn start_time(pid: u32) -> Option<u64> {
    std::fs::read(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|b| parse_stat(&b).map(|s| s.starttime))
}
