//! The process list of the macOS probe, with each process's identity and
//! name: cheap enough for the guard's scan (per pid one short BSD info and
//! one unique id a tick), and what the probe reads memory figures for.

use std::io;

use super::cache::{Identities, Identity};
use super::ffi;
use super::parse;
use super::parse_process;
use crate::probe::naming::{Naming, ARGS_READ_MAX};
use crate::probe::{ProbeError, ProcessSample};

/// Room for one `struct kinfo_proc` (648 bytes on 64-bit macOS).
const KINFO_PROC_BUFFER: usize = 1024;

/// How many times the pid list is retried with a doubled buffer when it came
/// back full.
const PID_LIST_TRIES: usize = 4;

/// One process of a scan: identity and tree figures.
pub(super) struct Listed {
    pub(super) pid: libc::pid_t,
    /// `p_uniqueid`; 0 when it could not be read.
    pub(super) uniqueid: u64,
    pub(super) ppid: u32,
    /// Whose process it is (`PROC_PIDT_SHORTBSDINFO`, every tick).
    pub(super) uid: Option<u32>,
    pub(super) start_time: u64,
    pub(super) naming: Naming,
}

/// The process list with the identity of each process, cheap enough for
/// the guard: per pid one short BSD info and one unique id per tick; start
/// time (a kernel-wide walk) and name only for processes not seen before.
pub(super) struct ProcessTable {
    /// Pid buffer for `proc_listallpids`; only the first `n` entries of a
    /// listing are valid.
    pids: Vec<libc::pid_t>,
    /// `proc_pidpath` buffer.
    path_buf: Vec<u8>,
    /// `KERN_PROCARGS2` buffer.
    args_buf: Vec<u8>,
    identities: Identities,
}

impl ProcessTable {
    pub(super) fn new() -> Self {
        ProcessTable {
            pids: Vec::new(),
            path_buf: vec![0; parse_process::PID_PATH_MAX],
            args_buf: Vec::new(),
            identities: Identities::default(),
        }
    }

    /// Lists all pids into `self.pids`; returns how many are valid.
    fn list_pids(&mut self) -> Result<usize, ProbeError> {
        let mut capacity =
            parse_process::pid_capacity(ffi::pid_count_estimate()).max(self.pids.len());
        let mut n = 0;
        for _ in 0..PID_LIST_TRIES {
            self.pids.resize(capacity, 0);
            n = ffi::list_all_pids(&mut self.pids).map_err(|e| io_err("proc_listallpids", e))?;
            if !parse_process::pid_list_full(n, capacity) {
                break;
            }
            capacity = capacity.saturating_mul(2);
        }
        Ok(n.min(self.pids.len()))
    }

    /// The name of a process not in the cache yet.
    fn read_name(&mut self, pid: libc::pid_t, comm: &str) -> String {
        if !comm.is_empty() && !parse_process::comm_may_be_cut(comm) {
            return comm.to_owned();
        }
        let path_name = match ffi::pid_path(pid, &mut self.path_buf) {
            Ok(n) => parse_process::name_from_path(&self.path_buf[..n]),
            Err(_) => String::new(),
        };
        parse_process::choose_name(comm, &path_name)
    }

    /// The name and command line of a process not in the cache yet (or
    /// that exec'd): from its arguments where the kernel shows them (the
    /// caller's own user's processes, as `ps` does), else its executable
    /// name.
    fn read_naming(&mut self, pid: libc::pid_t, comm: &str, owner: Option<u32>) -> Naming {
        // SAFETY: geteuid cannot fail and touches no memory.
        let me = unsafe { libc::geteuid() };
        let size = if parse_process::procargs_readable(owner, me) {
            ffi::procargs2_size(pid).unwrap_or(0)
        } else {
            0
        };
        if size > 0 {
            // Sized to the whole answer: a shorter buffer gets the tail
            // (the environment), not the head.
            self.args_buf.clear();
            self.args_buf
                .resize(size.min(parse_process::ARG_MAX + 4), 0);
            if let Ok(n) = ffi::procargs2(pid, &mut self.args_buf) {
                let naming = parse_process::parse_procargs2(&self.args_buf[..n])
                    .map(|a| Naming::of(Some(a.exec_path), &a.argv, comm));
                if self.args_buf.capacity() > ARGS_READ_MAX {
                    self.args_buf = Vec::new();
                }
                if let Some(naming) = naming {
                    return naming;
                }
            }
        }
        Naming::of(None, &[], &self.read_name(pid, comm))
    }

    /// One process, or `None` when it vanished mid-scan (or is a zombie).
    fn listed(&mut self, pid: libc::pid_t) -> Option<Listed> {
        let pid_u32 = u32::try_from(pid).ok()?;
        let (ppid, comm, uid) = match ffi::short_bsd_info(pid) {
            Ok(info) => (info.ppid, parse::comm_to_string(&info.comm), info.uid),
            Err(e) if is_gone(&e) => return None,
            Err(_) => (0, String::new(), None),
        };
        let mut uniq = [0u8; parse_process::PROC_UNIQIDENTIFIERINFO_SIZE];
        let uniqueid = match ffi::uniq_identifier_info(pid, &mut uniq) {
            Ok(n) => parse_process::parse_uniqueid(&uniq[..n]).unwrap_or(0),
            Err(e) if is_gone(&e) => return None,
            Err(_) => 0,
        };
        if let Some(mut id) = self.identities.known(pid_u32, uniqueid) {
            // exec keeps the process (and its unique id) but changes comm.
            if !id.named_for(&comm) {
                id.naming = self.read_naming(pid, &comm, uid);
                id.comm = comm;
                self.identities.insert(pid_u32, uniqueid, id.clone());
            }
            return Some(Listed {
                pid,
                uniqueid,
                ppid,
                uid,
                start_time: id.start_time,
                naming: id.naming,
            });
        }
        // New (or reused) pid: the one expensive read.
        let mut kinfo = [0u8; KINFO_PROC_BUFFER];
        let start_time = match ffi::kinfo_proc(pid, &mut kinfo) {
            // The kernel answers no bytes for a pid that no longer exists.
            Ok(0) => return None,
            Ok(n) => parse_process::start_time_from_kinfo_proc(&kinfo[..n]).unwrap_or(0),
            Err(_) => 0,
        };
        let id = match self.identities.same_start(pid_u32, start_time) {
            Some(id) if id.named_for(&comm) => id,
            _ => Identity {
                start_time,
                naming: self.read_naming(pid, &comm, uid),
                comm,
            },
        };
        self.identities.insert(pid_u32, uniqueid, id.clone());
        Some(Listed {
            pid,
            uniqueid,
            ppid,
            uid,
            start_time,
            naming: id.naming,
        })
    }

    /// Every live process; forgets the ones that are gone.
    pub(super) fn scan(&mut self) -> Result<Vec<Listed>, ProbeError> {
        let n = self.list_pids()?;
        self.identities.begin_tick();
        // Taken out for the scan so `listed` may borrow `self` mutably.
        let pids = std::mem::take(&mut self.pids);
        let listed = pids[..n]
            .iter()
            .filter_map(|&pid| self.listed(pid))
            .collect();
        self.pids = pids;
        self.identities.end_tick();
        Ok(listed)
    }
}

/// The cheap process scan of the guard: pid, ppid, name and start time of
/// every live process, and the last good list when a scan fails, so that
/// one failed scan never makes the guard forget the tree it must stop.
pub struct TreeScan {
    table: ProcessTable,
    last: crate::probe::LastKnown,
}

impl TreeScan {
    /// A scanner with an empty process table and no last list yet.
    pub fn new() -> Self {
        TreeScan {
            table: ProcessTable::new(),
            last: crate::probe::LastKnown::default(),
        }
    }

    /// Every live process (not zombies), or the last known list on error.
    pub fn scan(&mut self) -> Vec<ProcessSample> {
        let result = self.table.scan().map(|listed| {
            listed
                .into_iter()
                .filter_map(|l| {
                    Some(ProcessSample {
                        pid: u32::try_from(l.pid).ok()?,
                        ppid: l.ppid,
                        name: l.naming.name,
                        start_time: l.start_time,
                        ..ProcessSample::default()
                    })
                })
                .collect()
        });
        self.last.update(result)
    }
}

/// When `pid` started (`p_starttime`, µs since the epoch): with the pid, it
/// names one process, even after the pid is reused.
pub fn start_time(pid: u32) -> Option<u64> {
    let raw = libc::pid_t::try_from(pid).ok()?;
    let mut kinfo = [0u8; KINFO_PROC_BUFFER];
    match ffi::kinfo_proc(raw, &mut kinfo) {
        Ok(0) | Err(_) => None,
        Ok(n) => parse_process::start_time_from_kinfo_proc(&kinfo[..n]),
    }
}

impl Default for TreeScan {
    fn default() -> Self {
        TreeScan::new()
    }
}

pub(super) fn io_err(what: &str, source: io::Error) -> ProbeError {
    ProbeError::Io {
        what: what.to_owned(),
        source,
    }
}

pub(super) fn is_gone(err: &io::Error) -> bool {
    err.raw_os_error() == Some(libc::ESRCH)
}
