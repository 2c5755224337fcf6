//! The names of the processes seen, kept across ticks: each process is named
//! once, not at every scan.

use rustc_hash::FxHashMap as HashMap;
use std::collections::hash_map::Entry as Slot;

use super::Naming;

/// Names by process, read once per process: a process is its pid and
/// start time (a reused pid has a new start time), and its kernel short
/// name, which changes on `exec` (same pid, same start time, new program),
/// and where the probe has one, a figure of the program image that an
/// `exec` changes even when the short name stays (`python3` exec'ing
/// `python3` with another script).
/// Platform-free so the Linux tests cover the rule the probes follow.
#[derive(Debug, Default)]
pub struct NameCache {
    known: HashMap<u32, Entry>,
    tick: u64,
    reads: u64,
    /// Entries named from `comm` alone, not read yet ([`NameCache::get_waiting`]).
    waiting: usize,
}

#[derive(Debug)]
struct Entry {
    start_time: u64,
    comm: Box<[u8]>,
    /// The image figure of the last reading that had one; 0: none yet.
    image: u64,
    naming: Naming,
    tick: u64,
    /// Reads so far without a command line.
    misses: u8,
    /// Named from `comm` alone: its executable and arguments not read yet.
    waiting: bool,
}

/// How many ticks a process whose arguments could not be read is read
/// again: a process caught inside `execve` has its new name but not yet its
/// arguments (Linux sets `comm` in `begin_new_exec`, the argument area in
/// `create_elf_tables`, `fs/binfmt_elf.c`); a zombie or another user's
/// process (macOS) never has them.
pub const ARGS_RETRIES: u8 = 3;

impl NameCache {
    /// Starts a scan.
    pub fn begin_tick(&mut self) {
        self.tick = self.tick.wrapping_add(1);
    }

    /// The naming of `pid`: the cached one when it is the process seen
    /// before, else `read()` (the argument read) once.
    pub fn get(
        &mut self,
        pid: u32,
        start_time: u64,
        comm: &[u8],
        read: impl FnOnce() -> Naming,
    ) -> &Naming {
        self.get_image(pid, start_time, comm, 0, read).0
    }

    /// As [`NameCache::get`], and a process whose `image` (a figure each
    /// `exec` changes; 0 when unknown) differs from the last known one is
    /// a new program: read again. An unknown figure never causes a read (a
    /// process turning zombie shows 0). Also says whether the program is
    /// one not seen before under this pid (a new process, or an `exec`):
    /// what else the probe keeps of the process is the old program's.
    pub fn get_image(
        &mut self,
        pid: u32,
        start_time: u64,
        comm: &[u8],
        image: u64,
        read: impl FnOnce() -> Naming,
    ) -> (&Naming, bool) {
        self.get_waiting(pid, start_time, comm, image, false, read)
    }

    /// As [`NameCache::get_image`], but with `wait` a process not named
    /// yet (new, or named from `comm` alone so far) is named from `comm`
    /// alone, without `read()`: what `Naming::of` makes of `comm` when the
    /// executable and the arguments cannot be read. Its naming waits until
    /// a lookup without `wait`, or [`NameCache::name_now`].
    pub fn get_waiting(
        &mut self,
        pid: u32,
        start_time: u64,
        comm: &[u8],
        image: u64,
        wait: bool,
        read: impl FnOnce() -> Naming,
    ) -> (&Naming, bool) {
        let tick = self.tick;
        let (reads, waiting) = (&mut self.reads, &mut self.waiting);
        // A new entry: named from `comm` alone when `wait`, else read.
        let fill = |wait: bool, misses: u8| {
            let naming = if wait {
                *waiting = waiting.saturating_add(1);
                Naming::of(None, &[], &String::from_utf8_lossy(comm))
            } else {
                *reads = reads.saturating_add(1);
                read()
            };
            Entry {
                start_time,
                comm: comm.into(),
                image,
                misses: misses.saturating_add(u8::from(naming.cmdline.is_none() && !wait)),
                naming,
                tick,
                waiting: wait,
            }
        };
        let (e, new) = match self.known.entry(pid) {
            Slot::Occupied(o) => {
                let e = o.into_mut();
                let exec = image != 0 && e.image != 0 && e.image != image;
                let new = e.start_time != start_time || *e.comm != *comm || exec;
                let replaced = if new || (e.waiting && !wait) {
                    Some(fill(wait, 0))
                } else if !e.waiting && e.naming.cmdline.is_none() && e.misses <= ARGS_RETRIES {
                    // A retry reads: the process was named, with no arguments.
                    Some(fill(false, e.misses))
                } else {
                    None
                };
                if let Some(r) = replaced {
                    if e.waiting {
                        *waiting = waiting.saturating_sub(1);
                    }
                    *e = r;
                }
                (e, new)
            }
            Slot::Vacant(v) => (v.insert(fill(wait, 0)), true),
        };
        e.tick = tick;
        if image != 0 {
            e.image = image;
        }
        (&e.naming, new)
    }

    /// Whether `pid`'s naming waits ([`NameCache::get_waiting`]).
    pub fn is_waiting(&self, pid: u32) -> bool {
        self.known.get(&pid).is_some_and(|e| e.waiting)
    }

    /// Names `pid` now when its naming waits: `read(comm)` once. `None` when
    /// it does not wait (or is not known).
    pub fn name_now(&mut self, pid: u32, read: impl FnOnce(&[u8]) -> Naming) -> Option<&Naming> {
        let e = self.known.get_mut(&pid).filter(|e| e.waiting)?;
        self.reads = self.reads.saturating_add(1);
        self.waiting = self.waiting.saturating_sub(1);
        e.naming = read(&e.comm);
        e.waiting = false;
        e.misses = u8::from(e.naming.cmdline.is_none());
        Some(&e.naming)
    }

    /// How many processes are named from `comm` alone for now.
    pub fn waiting(&self) -> usize {
        self.waiting
    }

    /// Keeps the naming of `pid` through this scan without looking at it: a
    /// process the probe did not read this tick (idle) is still there.
    pub fn keep(&mut self, pid: u32) {
        let tick = self.tick;
        if let Some(e) = self.known.get_mut(&pid) {
            e.tick = tick;
        }
    }

    /// Ends a scan: forgets the pids it did not see.
    pub fn end_tick(&mut self) {
        let tick = self.tick;
        let waiting = &mut self.waiting;
        self.known.retain(|_, e| {
            let seen = e.tick == tick;
            if !seen && e.waiting {
                *waiting = waiting.saturating_sub(1);
            }
            seen
        });
    }

    /// How many times arguments were read (for the tests and the bench).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// How many processes have a cached naming.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no process has a cached naming.
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}
