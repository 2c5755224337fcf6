//! Linux backend: reads `/proc/meminfo`, and per process `/proc/PID/stat`
//! (ppid, name, major faults, start time, resident pages, kernel-thread flag)
//! and `/proc/PID/status` (RssAnon, RssShmem, VmSwap). All parsing is in
//! `linux_parse`; this file only reads.
//!
//! What keeps a tick cheap: kernel threads are dropped after `stat`; a
//! process whose resident pages and major faults did not move since the last
//! tick keeps its last `status` figures instead of reading the file again
//! (any page going out to swap or coming back changes one of the two); each
//! process's `stat` stays open between ticks and is re-read with one
//! `pread` at offset 0 (procfs regenerates it), instead of a path lookup,
//! open, read and close every tick. When descriptors run short it falls back
//! to opening the file each time.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;

use super::linux_parse::{parse_meminfo, parse_stat, parse_status, parse_u64, StatusFigures};
use super::{HostInfo, Probe, ProbeError, ProcessSample, SystemSample};

/// What we know of one process from earlier ticks.
struct Known {
    /// `/proc/PID/stat`, kept open; reading a process that exited (or whose
    /// pid was reused) fails, so it cannot show another process's figures.
    stat: Option<File>,
    start_time: u64,
    name: String,
    rss_pages: u64,
    majflt: u64,
    status: StatusFigures,
    tick: u64,
}

impl Known {
    fn kernel(stat: File, start_time: u64, tick: u64) -> Known {
        Known {
            stat: Some(stat),
            start_time,
            name: String::new(),
            rss_pages: 0,
            majflt: 0,
            status: StatusFigures::default(),
            tick,
        }
    }
}

pub struct NativeProbe {
    page_size: u64,
    buf: Vec<u8>,
    path: String,
    known: HashMap<u32, Known>,
    tick: u64,
}

impl NativeProbe {
    pub fn new() -> Result<Self, ProbeError> {
        // SAFETY: sysconf has no preconditions; it only reads a constant.
        let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let mut probe = NativeProbe {
            page_size: u64::try_from(page_size).unwrap_or(4096),
            buf: Vec::with_capacity(8192),
            path: String::with_capacity(32),
            known: HashMap::new(),
            tick: 0,
        };
        probe.system()?; // fail early, with a clear error, where /proc is missing
        raise_fd_limit();
        Ok(probe)
    }

    /// Reads a whole (small) file into `buf`: one `read` suffices for
    /// `/proc` files that fit, a second only when the buffer filled up.
    fn read_file(buf: &mut Vec<u8>, path: &str) -> std::io::Result<()> {
        buf.clear();
        let mut f = File::open(path)?;
        let cap = buf.capacity();
        buf.resize(cap, 0);
        let n = f.read(buf)?;
        buf.truncate(n);
        if n == cap {
            f.read_to_end(buf)?;
        }
        Ok(())
    }

    fn read_pid_file(&mut self, pid: u32, file: &str) -> std::io::Result<()> {
        use std::fmt::Write;
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/{file}");
        Self::read_file(&mut self.buf, &self.path)
    }

    /// One process, or `None` when it vanished, denied access or is a kernel
    /// thread.
    fn process(&mut self, pid: u32) -> Option<ProcessSample> {
        let reread = self.known.get(&pid).and_then(|k| k.stat.as_ref()).map(|f| {
            let cap = self.buf.capacity();
            self.buf.resize(cap, 0);
            let n = f.read_at(&mut self.buf, 0);
            self.buf.truncate(*n.as_ref().unwrap_or(&0));
            n.is_ok_and(|n| n > 0 && n < cap)
        });
        let mut opened = None;
        if reread != Some(true) {
            if reread == Some(false) {
                // Gone, or reused: forget it and look again from scratch.
                self.known.remove(&pid);
            }
            self.path.clear();
            let _ = std::fmt::Write::write_fmt(&mut self.path, format_args!("/proc/{pid}/stat"));
            let f = File::open(&self.path).ok()?;
            self.buf.clear();
            (&f).read_to_end(&mut self.buf).ok()?;
            opened = Some(f);
        }
        let stat = parse_stat(&self.buf)?;
        if stat.is_kernel_thread() {
            // Keep its descriptor too, so the next tick skips it for one pread.
            if let Some(f) = opened {
                self.known
                    .insert(pid, Known::kernel(f, stat.starttime, self.tick));
            } else if let Some(k) = self.known.get_mut(&pid) {
                k.tick = self.tick;
            }
            return None;
        }
        let (ppid, majflt, start, rss) = (stat.ppid, stat.majflt, stat.starttime, stat.rss_pages);
        let tick = self.tick;
        let fresh = match self.known.get_mut(&pid) {
            Some(k) if k.start_time == start => {
                // comm changes on exec (same pid, same start time).
                if k.name.as_bytes() != stat.comm {
                    k.name = String::from_utf8_lossy(stat.comm).into_owned();
                }
                k.tick = tick;
                if k.stat.is_none() {
                    k.stat = opened.take();
                }
                !(k.rss_pages == rss && k.majflt == majflt)
            }
            _ => {
                let name = String::from_utf8_lossy(stat.comm).into_owned();
                self.known.insert(
                    pid,
                    Known {
                        stat: opened.take(),
                        start_time: start,
                        name,
                        rss_pages: rss,
                        majflt,
                        status: StatusFigures::default(),
                        tick,
                    },
                );
                true
            }
        };
        if fresh {
            self.read_pid_file(pid, "status").ok()?;
            let status = parse_status(&self.buf);
            let k = self.known.get_mut(&pid)?;
            k.status = status;
            k.rss_pages = rss;
            k.majflt = majflt;
        }
        let k = self.known.get(&pid)?;
        Some(ProcessSample {
            pid,
            ppid,
            name: k.name.clone(),
            footprint_bytes: k.status.footprint_bytes(),
            pageins: majflt,
            swap_bytes: k.status.vm_swap_bytes,
            start_time: start,
            readable: true,
            ..ProcessSample::default()
        })
    }
}

/// Lets the probe keep one descriptor per process: raises the soft limit
/// on open files towards the hard one (capped), as monitors like htop need.
fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we pass and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return;
    }
    let want = lim.rlim_max.min(65_536);
    if lim.rlim_cur < want {
        lim.rlim_cur = want;
        // SAFETY: setrlimit reads the struct; raising the soft limit up to the
        // hard one needs no privilege.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

impl Probe for NativeProbe {
    fn system(&mut self) -> Result<SystemSample, ProbeError> {
        Self::read_file(&mut self.buf, "/proc/meminfo").map_err(|source| ProbeError::Io {
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
            ..SystemSample::default()
        })
    }

    fn sample(&mut self) -> Result<(SystemSample, Vec<ProcessSample>), ProbeError> {
        let system = self.system()?;
        self.tick += 1;
        let dir = std::fs::read_dir("/proc").map_err(|source| ProbeError::Io {
            what: "/proc".into(),
            source,
        })?;
        let mut processes = Vec::with_capacity(self.known.len().max(64));
        for entry in dir.flatten() {
            let name = entry.file_name();
            let Some(pid) = parse_u64(name.as_encoded_bytes()).and_then(|p| u32::try_from(p).ok())
            else {
                continue;
            };
            if let Some(p) = self.process(pid) {
                processes.push(p);
            }
        }
        let tick = self.tick;
        self.known.retain(|_, k| k.tick == tick);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_itself_with_real_figures() {
        let mut probe = NativeProbe::new().unwrap();
        let me = std::process::id();
        for _ in 0..2 {
            // Twice: the second tick may reuse cached status figures.
            let (sys, procs) = probe.sample().unwrap();
            assert!(sys.phys_bytes > 0 && sys.free_pct > 0.0 && sys.free_pct <= 100.0);
            let p = procs
                .iter()
                .find(|p| p.pid == me)
                .expect("this test process is listed");
            assert!(p.footprint_bytes > 0, "{p:?}");
            assert!(p.swap_bytes.is_some());
            assert_eq!(p.ppid, std::os::unix::process::parent_id());
            assert!(
                !procs.iter().any(|p| p.pid == 2),
                "kthreadd is a kernel thread"
            );
        }
    }

    #[test]
    fn footprint_follows_allocation_across_ticks() {
        let mut probe = NativeProbe::new().unwrap();
        let me = std::process::id();
        let before = probe
            .sample()
            .unwrap()
            .1
            .into_iter()
            .find(|p| p.pid == me)
            .unwrap()
            .footprint_bytes;
        let mut big = vec![1u8; 64 << 20];
        for (i, b) in big.iter_mut().enumerate().step_by(4096) {
            *b = i as u8;
        }
        let after = probe
            .sample()
            .unwrap()
            .1
            .into_iter()
            .find(|p| p.pid == me)
            .unwrap()
            .footprint_bytes;
        std::hint::black_box(&big);
        assert!(
            after >= before + (60 << 20),
            "before {before}, after {after}"
        );
    }
}
