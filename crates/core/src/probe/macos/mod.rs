//! macOS backend: `libproc` and `sysctl` for processes and swap, one
//! `host_statistics64` call per tick for the compressor.
//!
//! | figure | source |
//! |---|---|
//! | footprint, page-ins | `proc_pid_rusage(RUSAGE_INFO_V4)`: `ri_phys_footprint`, `ri_pageins` (EPERM for other users' processes: listed with `readable: false`) |
//! | ppid, short name | `proc_pidinfo(PROC_PIDT_SHORTBSDINFO)` (answers for every user), name completed from `proc_pidpath` when `pbsi_comm` is empty or cut short |
//! | start time | `p_starttime` of `sysctl kern.proc.pid.<pid>` (`kinfo_proc`, readable for every user), µs since the epoch |
//! | swap | `sysctl vm.swapusage` |
//! | free % | `sysctl kern.memorystatus_level` |
//! | compressed | `host_statistics64(HOST_VM_INFO64).compressor_page_count × vm.pagesize` |
//! | physical memory, page size | `sysctl hw.memsize`, `vm.pagesize`, read once |
//!
//! Raw calls are in [`ffi`]; every conversion is in
//! [`super::macos_parse`], tested on Linux.

mod ffi;

use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::io;

use super::macos_parse as parse;
use super::{HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

// The pure parsers assume these layouts; check them against `libc`'s Apple
// declarations at compile time (this is evaluated by `scripts/check-macos`).
const _: () = assert!(std::mem::size_of::<libc::xsw_usage>() == parse::XSW_USAGE_SIZE);
const _: () = assert!(
    std::mem::offset_of!(libc::vm_statistics64, compressor_page_count)
        == parse::COMPRESSOR_PAGE_COUNT_INDEX * 4
);
const _: () = assert!(std::mem::size_of::<libc::integer_t>() == 4);
const _: () = assert!(libc::MAXCOMLEN == parse::MAXCOMLEN);
const _: () = assert!(libc::PROC_PIDPATHINFO_MAXSIZE as usize == parse::PID_PATH_MAX);

/// Room for one `struct kinfo_proc` (648 bytes on 64-bit macOS).
const KINFO_PROC_BUFFER: usize = 1024;

/// How many times the pid list is retried with a doubled buffer when it came
/// back full.
const PID_LIST_TRIES: usize = 4;

/// The macOS probe. Keeps its buffers, the host port and a name cache between
/// ticks.
pub struct NativeProbe {
    host: ffi::HostPort,
    phys_bytes: u64,
    page_size: u64,
    /// Pid buffer for `proc_listallpids`; only its first `n` entries of a
    /// listing are valid.
    pids: Vec<libc::pid_t>,
    /// `host_statistics64` answer buffer (256 `integer_t`).
    vm_info: Vec<libc::integer_t>,
    /// `proc_pidpath` buffer.
    path_buf: Vec<u8>,
    /// Names by (pid, start time), so a tick does not re-read them.
    names: HashMap<(u32, u64), String>,
    /// Keys seen in the current tick; the cache keeps only those.
    seen: HashSet<(u32, u64)>,
}

fn io_err(what: &str, source: io::Error) -> ProbeError {
    ProbeError::Io {
        what: what.to_owned(),
        source,
    }
}

fn parse_err(what: &str, detail: impl Into<String>) -> ProbeError {
    ProbeError::Parse {
        what: what.to_owned(),
        detail: detail.into(),
    }
}

fn is_gone(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ESRCH)
}

/// `sysctlbyname(name)` into `buf`; the bytes the kernel wrote.
fn sysctl<'b>(name: &CStr, buf: &'b mut [u8]) -> Result<&'b [u8], ProbeError> {
    let what = || format!("sysctl {}", name.to_string_lossy());
    let n = ffi::sysctl_by_name(name, buf).map_err(|e| io_err(&what(), e))?;
    Ok(&buf[..n])
}

/// An unsigned integer sysctl (4 or 8 bytes).
fn sysctl_uint(name: &CStr) -> Result<u64, ProbeError> {
    let mut buf = [0u8; 8];
    let bytes = sysctl(name, &mut buf)?;
    parse::parse_sysctl_uint(bytes).ok_or_else(|| {
        parse_err(
            &format!("sysctl {}", name.to_string_lossy()),
            format!("{} bytes, expected 4 or 8", bytes.len()),
        )
    })
}

impl NativeProbe {
    /// Opens the probe: reads the page size and physical memory once.
    pub fn new() -> Result<Self, ProbeError> {
        let page_size = sysctl_uint(c"vm.pagesize")?;
        let phys_bytes = sysctl_uint(c"hw.memsize")?;
        Ok(NativeProbe {
            host: ffi::HostPort::acquire(),
            phys_bytes,
            page_size,
            pids: Vec::new(),
            vm_info: vec![0; parse::HOST_VM_INFO64_BUFFER],
            path_buf: vec![0; parse::PID_PATH_MAX],
            names: HashMap::new(),
            seen: HashSet::new(),
        })
    }

    /// Compressor bytes; 0 when `host_statistics64` fails or answers too
    /// little (a secondary figure must not cost the whole sample).
    fn compressed_bytes(&mut self) -> u64 {
        self.vm_info.fill(0);
        match self.host.vm_info64(&mut self.vm_info) {
            Ok(count) => parse::compressed_bytes(&self.vm_info, count, self.page_size).unwrap_or(0),
            Err(_) => 0,
        }
    }

    /// Lists all pids into `self.pids`; returns how many are valid.
    fn list_pids(&mut self) -> Result<usize, ProbeError> {
        let mut capacity = parse::pid_capacity(ffi::pid_count_estimate()).max(self.pids.len());
        let mut n = 0;
        for _ in 0..PID_LIST_TRIES {
            self.pids.resize(capacity, 0);
            n = ffi::list_all_pids(&mut self.pids).map_err(|e| io_err("proc_listallpids", e))?;
            if !parse::pid_list_full(n, capacity) {
                break;
            }
            capacity = capacity.saturating_mul(2);
        }
        Ok(n.min(self.pids.len()))
    }

    /// The name of a process not in the cache yet.
    fn read_name(&mut self, pid: libc::pid_t, comm: &str) -> String {
        if !comm.is_empty() && !parse::comm_may_be_cut(comm) {
            return comm.to_owned();
        }
        let path_name = match ffi::pid_path(pid, &mut self.path_buf) {
            Ok(n) => parse::name_from_path(&self.path_buf[..n]),
            Err(_) => String::new(),
        };
        parse::choose_name(comm, &path_name)
    }

    /// One process, or `None` when it vanished mid-scan.
    fn process(&mut self, pid: libc::pid_t) -> Option<ProcessSample> {
        let pid_u32 = u32::try_from(pid).ok()?;

        let (ppid, comm) = match ffi::short_bsd_info(pid) {
            Ok(info) => (info.ppid, parse::comm_to_string(&info.comm)),
            Err(e) if is_gone(&e) => return None,
            Err(_) => (0, String::new()),
        };

        let mut kinfo = [0u8; KINFO_PROC_BUFFER];
        let start_time = match ffi::kinfo_proc(pid, &mut kinfo) {
            // The kernel answers no bytes for a pid that no longer exists.
            Ok(0) => return None,
            Ok(n) => parse::start_time_from_kinfo_proc(&kinfo[..n]).unwrap_or(0),
            Err(_) => 0,
        };

        let (footprint_bytes, pageins, readable) = match ffi::pid_rusage(pid) {
            Ok(r) => (r.phys_footprint, r.pageins, true),
            Err(e) if is_gone(&e) => return None,
            // EPERM: another user's process.
            Err(_) => (0, 0, false),
        };

        let key = (pid_u32, start_time);
        self.seen.insert(key);
        let name = match self.names.get(&key) {
            Some(name) => name.clone(),
            None => {
                let name = self.read_name(pid, &comm);
                self.names.insert(key, name.clone());
                name
            }
        };

        Some(ProcessSample {
            pid: pid_u32,
            ppid,
            name,
            footprint_bytes,
            pageins,
            swap_bytes: None,
            start_time,
            readable,
        })
    }
}

impl Probe for NativeProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        // Room beyond the 32-byte struct, so a larger future struct does not
        // fail with ENOMEM; only its documented head is read.
        let mut buf = [0u8; 64];
        let bytes = sysctl(c"vm.swapusage", &mut buf)?;
        let (swap_total_bytes, _avail, swap_used_bytes) = parse::parse_xsw_usage(bytes)
            .ok_or_else(|| {
                parse_err(
                    "sysctl vm.swapusage",
                    format!("{} bytes, expected {}", bytes.len(), parse::XSW_USAGE_SIZE),
                )
            })?;

        let mut buf = [0u8; 8];
        let bytes = sysctl(c"kern.memorystatus_level", &mut buf)?;
        let level = parse::parse_sysctl_i32(bytes).ok_or_else(|| {
            parse_err(
                "sysctl kern.memorystatus_level",
                format!("{} bytes, expected 4", bytes.len()),
            )
        })?;

        Ok(SystemSample {
            phys_bytes: self.phys_bytes,
            free_pct: parse::free_pct_from_level(level),
            swap_used_bytes,
            swap_total_bytes,
            compressed_bytes: self.compressed_bytes(),
            page_size: self.page_size,
        })
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let system = self.system()?;
        let n = self.list_pids()?;
        // Taken out for the scan so `process` may borrow `self` mutably.
        let pids = std::mem::take(&mut self.pids);
        self.seen.clear();
        let processes = pids[..n]
            .iter()
            .filter_map(|&pid| self.process(pid))
            .collect();
        self.pids = pids;
        let seen = &self.seen;
        self.names.retain(|key, _| seen.contains(key));
        Ok((system, processes))
    }

    fn host(&mut self) -> Result<HostInfo, ProbeError> {
        let mut buf = [0u8; 256];
        let hostname = match ffi::hostname(&mut buf) {
            Ok(()) => parse::comm_to_string(&buf),
            Err(_) => String::new(),
        };
        Ok(HostInfo {
            os: "macos".to_owned(),
            phys_bytes: self.phys_bytes,
            page_size: self.page_size,
            hostname,
        })
    }
}
