//! Linux backend: reads `/proc/meminfo`, and per process `/proc/PID/stat`
//! (ppid, name, major faults, start time, kernel-thread flag) and
//! `/proc/PID/status` (RssAnon, RssShmem, VmSwap). Kernel threads are skipped
//! after `stat`, so their `status` is never read. All parsing is in
//! `linux_parse`; this file only reads, reusing one buffer for every file.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;

use super::linux_parse::{parse_meminfo, parse_stat, parse_status, parse_u64};
use super::{HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

pub struct NativeProbe {
    page_size: u64,
    buf: Vec<u8>,
    path: String,
    /// Names decoded once per (pid, start time, comm).
    names: HashMap<u32, (u64, String)>,
    /// Pids seen this tick, to prune `names` of processes that are gone.
    seen: Vec<u32>,
}

impl NativeProbe {
    pub fn new() -> Result<Self, ProbeError> {
        // SAFETY: sysconf has no preconditions; it only reads a constant.
        let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let mut probe = NativeProbe {
            page_size: u64::try_from(page_size).unwrap_or(4096),
            buf: Vec::with_capacity(4096),
            path: String::with_capacity(32),
            names: HashMap::new(),
            seen: Vec::new(),
        };
        probe.system()?; // fail early, with a clear error, where /proc is missing
        Ok(probe)
    }

    fn read_file(&mut self, path: &str) -> std::io::Result<()> {
        self.buf.clear();
        File::open(path)?.read_to_end(&mut self.buf)?;
        Ok(())
    }

    fn read_pid_file(&mut self, pid: u32, file: &str) -> std::io::Result<()> {
        use std::fmt::Write;
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/{file}");
        let path = std::mem::take(&mut self.path);
        let result = self.read_file(&path);
        self.path = path;
        result
    }

    /// One process, or `None` when it vanished, denied access or is a kernel
    /// thread.
    fn process(&mut self, pid: u32) -> Option<ProcessSample> {
        self.read_pid_file(pid, "stat").ok()?;
        let stat = parse_stat(&self.buf)?;
        if stat.is_kernel_thread() {
            return None;
        }
        let (ppid, majflt, start) = (stat.ppid, stat.majflt, stat.starttime);
        // comm changes on exec (same pid, same start time): compare bytes,
        // decode only when it changed.
        let name = match self.names.get(&pid) {
            Some((s, name)) if *s == start && name.as_bytes() == stat.comm => name.clone(),
            _ => {
                let name = String::from_utf8_lossy(stat.comm).into_owned();
                self.names.insert(pid, (start, name.clone()));
                name
            }
        };
        self.read_pid_file(pid, "status").ok()?;
        let status = parse_status(&self.buf);
        Some(ProcessSample {
            pid,
            ppid,
            name,
            footprint_bytes: status.footprint_bytes(),
            pageins: majflt,
            swap_bytes: status.vm_swap_bytes,
            start_time: start,
            readable: true,
        })
    }
}

impl Probe for NativeProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        self.read_file("/proc/meminfo")
            .map_err(|source| ProbeError::Io {
                what: "/proc/meminfo".into(),
                source,
            })?;
        let info = parse_meminfo(&self.buf).ok_or_else(|| ProbeError::Parse {
            what: "/proc/meminfo".into(),
            detail: "no MemTotal line".into(),
        })?;
        Ok(SystemSample {
            phys_bytes: info.mem_total_bytes,
            free_pct: info.free_pct(),
            swap_used_bytes: info.swap_used_bytes(),
            swap_total_bytes: info.swap_total_bytes,
            compressed_bytes: 0,
            page_size: self.page_size,
        })
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let system = self.system()?;
        let dir = std::fs::read_dir("/proc").map_err(|source| ProbeError::Io {
            what: "/proc".into(),
            source,
        })?;
        let mut processes = Vec::with_capacity(self.seen.len().max(64));
        self.seen.clear();
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = parse_u64(name.as_encoded_bytes()).and_then(|p| u32::try_from(p).ok())
            else {
                continue;
            };
            self.seen.push(pid);
            if let Some(p) = self.process(pid) {
                processes.push(p);
            }
        }
        if self.names.len() > self.seen.len() + 64 {
            self.seen.sort_unstable();
            let seen = &self.seen;
            self.names.retain(|pid, _| seen.binary_search(pid).is_ok());
        }
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
}
