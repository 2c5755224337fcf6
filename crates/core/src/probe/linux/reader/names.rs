//! How a process is named: from `/proc/PID/exe` and `cmdline` once per
//! process (`naming`), for the processes its consumers show
//! ([`Probe::name_largest`](crate::probe::Probe::name_largest)) and the
//! watched tree; any other keeps its `comm` until it moves or is shown.

use std::fs::File;
use std::io::{self, Read};

use rustc_hash::FxHashMap as HashMap;

use super::NativeProbe;
use crate::probe::naming::{split_nul, Naming, ARGS_READ_MAX};
use crate::probe::ProcessSample;

impl NativeProbe {
    /// Whether a process read at this tick may keep (or get) a name from
    /// `comm` alone ([`Probe::name_largest`](crate::probe::Probe::name_largest)): at the first tick, one that
    /// is not watched; later, one named so from then that neither moved
    /// (resident pages, major faults) nor is watched. A process that comes
    /// later is named at once. Flags need a process that moved or is
    /// watched (`detect::blame`), so a flagged process is always named.
    pub(super) fn naming_waits(&self, pid: u32, start: u64, rss: u64, majflt: u64) -> bool {
        if self.named_largest.is_none() || self.closely.binary_search(&pid).is_ok() {
            return false;
        }
        match self.known.get(&pid) {
            Some(k) if k.start_time == start => {
                self.names.is_waiting(pid) && k.rss_pages == rss && k.majflt == majflt
            }
            _ => self.tick == 1,
        }
    }

    /// Names the processes of this tick's `processes` still named from
    /// `comm` alone that are among the [`Probe::name_largest`](crate::probe::Probe::name_largest) largest, or
    /// in the watched tree when it changed (its members' descendants, by
    /// parent pid), before the tick's samples go out.
    pub(super) fn name_shown(&mut self, processes: &mut [ProcessSample]) {
        let Some(k) = self.named_largest else {
            return;
        };
        if self.names.waiting() == 0 {
            return;
        }
        // Kept between ticks: while any process waits (on most machines,
        // for as long as the probe runs) this runs every tick.
        let mut order = std::mem::take(&mut self.by_size);
        order.clear();
        order.extend(0..processes.len());
        let by_size = |&a: &usize, &b: &usize| {
            processes[b]
                .footprint_bytes
                .cmp(&processes[a].footprint_bytes)
                .then(processes[a].pid.cmp(&processes[b].pid))
        };
        if k < order.len() {
            order.select_nth_unstable_by(k, by_size);
        }
        let mut chosen: Vec<usize> = order[..k.min(order.len())]
            .iter()
            .copied()
            .filter(|&i| self.names.is_waiting(processes[i].pid))
            .collect();
        self.by_size = order;
        if std::mem::take(&mut self.closely_new) && !self.closely.is_empty() {
            let parent: HashMap<u32, u32> = processes.iter().map(|p| (p.pid, p.ppid)).collect();
            for (i, p) in processes.iter().enumerate() {
                if self.names.is_waiting(p.pid) && in_tree(p.pid, &parent, &self.closely) {
                    chosen.push(i);
                }
            }
        }
        for i in chosen {
            let pid = processes[i].pid;
            let (proc, args_buf, path) = (&self.proc, &mut self.args_buf, &mut self.path);
            let Some(naming) = self
                .names
                .name_now(pid, |comm| read_naming(proc, pid, comm, args_buf, path))
            else {
                continue;
            };
            let (name, cmdline) = (naming.name.clone(), naming.cmdline.clone());
            if let Some(s) = self
                .known
                .get_mut(&pid)
                .and_then(|k| k.idle_sample.as_mut())
            {
                s.name = name.clone();
                s.cmdline = cmdline.clone();
            }
            let p = &mut processes[i];
            p.name = name;
            p.cmdline = cmdline;
        }
    }
}

/// Whether `pid` or one of its ancestors (by `parent`, at most 64 up) is
/// in `tree` (sorted).
fn in_tree(pid: u32, parent: &HashMap<u32, u32>, tree: &[u32]) -> bool {
    let mut at = pid;
    for _ in 0..64 {
        if tree.binary_search(&at).is_ok() {
            return true;
        }
        match parent.get(&at) {
            Some(&up) if up != at && up != 0 => at = up,
            _ => return false,
        }
    }
    false
}
/// A process's name from `/proc/PID/exe` (readable for the same user
/// only) and the head of `/proc/PID/cmdline` (readable where `ps` shows it),
/// both under `proc`; `rel` and `buf` are scratch.
pub(super) fn read_naming(
    proc: &File,
    pid: u32,
    comm: &[u8],
    buf: &mut Vec<u8>,
    rel: &mut String,
) -> Naming {
    use rustix::fs::{Mode, OFlags};
    use std::fmt::Write;
    rel.clear();
    let _ = write!(rel, "{pid}/exe");
    let exe = rustix::fs::readlinkat(proc, rel.as_str(), Vec::new()).ok();
    rel.clear();
    let _ = write!(rel, "{pid}/cmdline");
    if buf.len() < ARGS_READ_MAX {
        buf.resize(ARGS_READ_MAX, 0);
    }
    // One read: procfs hands the command line over whole, up to the count
    // asked, stopping short only at its end or at a page it cannot read
    // (`get_mm_cmdline`, fs/proc/base.c). A second read would only find
    // that end, at the price of another look into the process's memory.
    let flags = OFlags::RDONLY | OFlags::CLOEXEC;
    let n = rustix::fs::openat(proc, rel.as_str(), flags, Mode::empty())
        .map_err(io::Error::from)
        .and_then(|fd| File::from(fd).read(&mut buf[..ARGS_READ_MAX]))
        .unwrap_or(0);
    let argv = split_nul(&buf[..n]);
    Naming::of(
        exe.as_ref().map(|p| p.as_bytes()),
        &argv,
        &String::from_utf8_lossy(comm),
    )
}
