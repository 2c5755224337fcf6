//! Container scopes: the innermost memory cgroup with a limit that holds a
//! process, read from cgroupfs (v1 and v2), so that a job in a Docker or
//! Kubernetes container, a Slurm job or a systemd slice is judged against
//! its limit, not against the host.
//!
//! The reader is rooted at paths it is given — a procfs and the cgroupfs
//! mounts — so the same code reads the live system and a fake tree laid out
//! as the kernel writes it (`cgroup_tests.rs`). It only uses `std::fs`, so
//! it compiles, and its tests run, on every OS; only Linux probes use it
//! live. Every figure read is bounded: a file is read up to
//! [`FILE_READ_MAX`] bytes, numbers are parsed with checked arithmetic, and
//! the literal `max` is the only word taken for "no limit".
//!
//! Kernel sources of each format:
//! - `/proc/PID/cgroup`: `hierarchy-ID:controller-list:cgroup-path`, one line
//!   per hierarchy; cgroup v2's is `0::$PATH` (Documentation/admin-guide/
//!   cgroup-v2.rst, "Processes"; man 7 cgroups);
//! - `/proc/self/mountinfo`: `ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS] -
//!   FSTYPE SOURCE SUPER-OPTIONS`, spaces in paths as `\040` (man 5 proc);
//!   a v1 hierarchy holds the memory controller when its super options say
//!   `memory`;
//! - v2 (cgroup-v2.rst, "Memory Interface Files"; all amounts in bytes):
//!   `memory.max` and `memory.high` ("A read-write single value file which
//!   exists on non-root cgroups. The default is "max""), `memory.swap.max`
//!   (same), `memory.current` and `memory.swap.current` (read-only single
//!   values, "the cgroup and its descendants"), `memory.events` (flat-keyed:
//!   `low`, `high`, `max`, `oom`, `oom_kill`, hierarchical), `memory.stat`
//!   (flat-keyed, "new entries can show up in the middle": looked up by key),
//!   `memory.pressure` (nested-keyed PSI, `some`/`full` lines as
//!   `/proc/pressure/memory` has them: Documentation/accounting/psi.rst,
//!   "Cgroup2 interface");
//! - v1 (Documentation/admin-guide/cgroup-v1/memory.rst): `memory.limit_in_bytes`
//!   (no limit reads as a page-aligned `PAGE_COUNTER_MAX`, 9223372036854771712
//!   with 4 KiB pages), `memory.usage_in_bytes`, `memory.memsw.limit_in_bytes`
//!   and `memory.memsw.usage_in_bytes` (memory + swap, where swap accounting is
//!   on), `memory.failcnt` and `memory.memsw.failcnt` (times usage hit the
//!   limit: memory's or memory+swap's), `memory.oom_control`
//!   (flat-keyed: `oom_kill_disable`, `under_oom`, `oom_kill`), `memory.stat`
//!   (`total_rss`, `total_swap`, … the hierarchy's sums).
//!
//! `memory.pressure` is left out here: pressure is read on its own.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::probe::{ProbeError, Scope};

mod parse;
pub use parse::{
    flat_key, parse_bytes, parse_events_v2, parse_limit, parse_mountinfo, parse_proc_cgroup,
    scope_v1, scope_v2, stat_says_exiting, Files, Limit, Mount, Mounts, ProcCgroup, PATH_MAX,
};

/// Most bytes read of one cgroupfs or procfs file: `memory.stat` is about
/// 1.5 KiB (v2) to 2 KiB (v1), `mountinfo` a few KiB on a busy host.
pub const FILE_READ_MAX: usize = 256 * 1024;

/// Most directories walked up from a process's cgroup looking for a limit.
const MAX_DEPTH: usize = 64;

/// Reads scopes from a procfs and the cgroupfs mounts it is given.
#[derive(Debug, Clone)]
pub struct CgroupFs {
    proc_root: PathBuf,
    mounts: Mounts,
    /// The last pid read and where it was: a process that exited (killed
    /// by its cgroup's OOM killer, say) has no `/proc/PID/cgroup` any more,
    /// but its cgroup still tells what happened to it.
    last: Option<(u32, ProcCgroup)>,
    page_size: u64,
}

impl CgroupFs {
    /// The live system: `/proc`, and the mounts `/proc/self/mountinfo`
    /// lists.
    pub fn system() -> CgroupFs {
        let mounts = read_capped(Path::new("/proc/self/mountinfo"))
            .ok()
            .flatten()
            .map(|t| parse_mountinfo(&t))
            .unwrap_or_default();
        CgroupFs::rooted("/proc", mounts)
    }

    /// A procfs at `proc_root` and the given mounts (tests: a fake tree).
    pub fn rooted(proc_root: impl Into<PathBuf>, mounts: Mounts) -> CgroupFs {
        CgroupFs {
            proc_root: proc_root.into(),
            mounts,
            last: None,
            // SAFETY: sysconf has no preconditions; it only reads a constant.
            page_size: u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096),
        }
    }

    /// The scope of `pid`: the innermost cgroup holding it whose memory
    /// limit is below `ceiling` (the host's memory). `Ok(None)`: no limit
    /// anywhere, or no memory cgroup, or the process is gone — the host is
    /// the scope. `Err`: the process is in a memory cgroup that cannot be
    /// read (another user's slice, a mount this process cannot see). A
    /// process gone since the last call for it is read where it last was.
    pub fn scope_of(&mut self, pid: u32, ceiling: u64) -> Result<Option<Scope>, ProbeError> {
        let file = self.proc_root.join(pid.to_string()).join("cgroup");
        // A process on its way out is as gone: from the moment it exits
        // (before it is a zombie) the kernel shows it in the root cgroups.
        let read = match self.is_exiting(pid) {
            true => None,
            false => read_capped(&file).map_err(|e| io_error(&file, e))?,
        };
        let at = match read.map(|text| parse_proc_cgroup(&text)) {
            Some(at) if at != ProcCgroup::default() => at,
            _ => match &self.last {
                Some((last, at)) if *last == pid => at.clone(),
                _ => return Ok(None),
            },
        };
        if self.last.as_ref() != Some(&(pid, at.clone())) {
            self.last = Some((pid, at.clone()));
        }
        // The v1 memory controller, where a hierarchy has it, holds the
        // limits (a controller is on one hierarchy at a time, so a hybrid
        // machine's v2 tree has no memory files then).
        if let (Some(path), Some(mount)) = (&at.v1_memory, &self.mounts.v1_memory) {
            return self.walk(mount, path, 1, ceiling);
        }
        if let (Some(path), Some(mount)) = (&at.v2, &self.mounts.v2) {
            return self.walk(mount, path, 2, ceiling);
        }
        match (&at.v1_memory, &self.mounts.v2) {
            (Some(path), None) if path != "/" => Err(ProbeError::Parse {
                what: file.display().to_string(),
                detail: format!(
                    "memory cgroup {path} is not mounted where this process can see it"
                ),
            }),
            _ => Ok(None),
        }
    }

    /// Whether `pid` is exiting or has exited ([`stat_says_exiting`]).
    fn is_exiting(&self, pid: u32) -> bool {
        let stat = self.proc_root.join(pid.to_string()).join("stat");
        read_capped(&stat)
            .ok()
            .flatten()
            .is_some_and(|s| stat_says_exiting(&s))
    }

    fn walk(
        &self,
        mount: &Mount,
        path: &str,
        version: u8,
        ceiling: u64,
    ) -> Result<Option<Scope>, ProbeError> {
        // The part of the path below the mount's root; a path outside it
        // (another namespace's cgroup) cannot be read from this mount.
        let rel = match relative(path, &mount.root) {
            Some(rel) => rel,
            None => {
                return Err(ProbeError::Parse {
                    what: mount.point.display().to_string(),
                    detail: format!("cgroup {path} is outside the mount's root {}", mount.root),
                })
            }
        };
        let mut parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        if parts.len() > MAX_DEPTH || parts.iter().any(|p| *p == "." || *p == "..") {
            return Ok(None);
        }
        loop {
            let dir = parts.iter().fold(mount.point.clone(), |d, p| d.join(p));
            let shown = shown_path(&mount.root, &parts);
            let files = read_files(&dir, version, ceiling)?;
            let scope = match version {
                1 => scope_v1(&shown, &files, ceiling),
                _ => scope_v2(&shown, &files, ceiling, self.page_size),
            };
            if scope.is_some() {
                return Ok(scope);
            }
            if parts.pop().is_none() {
                return Ok(None);
            }
        }
    }
}

/// `path` below `root` (`/docker/abc` below `/docker` is `/abc`).
fn relative(path: &str, root: &str) -> Option<String> {
    if root == "/" {
        return Some(path.to_string());
    }
    let rest = path.strip_prefix(root)?;
    (rest.is_empty() || rest.starts_with('/')).then(|| rest.to_string())
}

/// The cgroup's path in its hierarchy, as `/proc/PID/cgroup` writes it.
fn shown_path(root: &str, parts: &[&str]) -> String {
    let mut s = if root == "/" {
        String::new()
    } else {
        root.to_string()
    };
    for p in parts {
        s.push('/');
        s.push_str(p);
    }
    if s.is_empty() {
        s.push('/');
    }
    s
}

/// The files of one cgroup folder; only its limits where none binds below
/// `ceiling` (the host's memory), as [`scope_v1`] and [`scope_v2`] judge.
fn read_files(dir: &Path, version: u8, ceiling: u64) -> Result<Files, ProbeError> {
    let read = |name: &str| {
        let p = dir.join(name);
        read_capped(&p).map_err(|e| io_error(&p, e))
    };
    Ok(match version {
        1 => {
            let max = read("memory.limit_in_bytes")?;
            // Nothing more to read where no limit binds (most ancestors:
            // v1 writes "no limit" as a number near 2^63, above any host).
            let binds = max.as_deref().and_then(parse_bytes);
            if !binds.is_some_and(|b| b < ceiling) {
                return Ok(Files::default());
            }
            Files {
                max,
                current: read("memory.usage_in_bytes")?,
                stat: read("memory.stat")?,
                memsw_limit: read("memory.memsw.limit_in_bytes")?,
                memsw_usage: read("memory.memsw.usage_in_bytes")?,
                failcnt: read("memory.failcnt")?,
                memsw_failcnt: read("memory.memsw.failcnt")?,
                oom_control: read("memory.oom_control")?,
                ..Files::default()
            }
        }
        _ => {
            let max = read("memory.max")?;
            let high = read("memory.high")?;
            if max.is_none() && high.is_none() {
                return Ok(Files::default());
            }
            Files {
                max,
                high,
                swap_max: read("memory.swap.max")?,
                current: read("memory.current")?,
                swap_current: read("memory.swap.current")?,
                events: read("memory.events")?,
                stat: read("memory.stat")?,
                pressure: read("memory.pressure")?,
                ..Files::default()
            }
        }
    })
}

/// A file's text, at most [`FILE_READ_MAX`] bytes; `Ok(None)` when it does
/// not exist (a controller not enabled there, a process gone).
pub fn read_capped(path: &Path) -> io::Result<Option<String>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        // ESRCH: a /proc/PID whose process exited between the lookup and
        // the open.
        Err(e) if e.raw_os_error() == Some(3) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut buf = Vec::with_capacity(4096);
    match file.take(FILE_READ_MAX as u64).read_to_end(&mut buf) {
        Ok(_) => Ok(Some(String::from_utf8_lossy(&buf).into_owned())),
        Err(e) if e.raw_os_error() == Some(3) => Ok(None),
        Err(e) => Err(e),
    }
}

fn io_error(path: &Path, source: io::Error) -> ProbeError {
    ProbeError::Io {
        what: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
