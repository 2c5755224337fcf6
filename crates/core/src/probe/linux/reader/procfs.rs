//! How the probe reaches `/proc`: files opened relative to it, the `stat`
//! descriptors kept open within the cap (and given back when descriptors run
//! out), and the listing of pids.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::super::fd::{is_out_of_fds, open_at, read_whole};
use super::super::parse::{pages_to_bytes, parse_last_pid, parse_u64, parse_vmstat_pswpout};
use super::{Kept, NativeProbe, Which, Written};
use crate::probe::tiers::FULL_EVERY;
use crate::probe::ProbeError;

/// The kept-descriptor cap from which `/proc/meminfo` and `/proc/vmstat`
/// stay open too (an open-file limit of 32 and up).
const KEEP_SYSTEM_FILES_FROM: usize = 8;

impl NativeProbe {
    /// Opens `/proc/PID/FILE` (`pid` `None`: `/proc/FILE`); out of
    /// descriptors, gives back the ones it keeps, halves its cap and tries
    /// once more.
    pub(super) fn open(&mut self, pid: Option<u32>, file: &str) -> io::Result<File> {
        self.rel.clear();
        if let Some(pid) = pid {
            let _ = write!(self.rel, "{pid}/");
        }
        let _ = write!(self.rel, "{file}\0");
        let rel = CStr::from_bytes_with_nul(&self.rel)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        match open_at(&self.proc, rel) {
            Err(e) if is_out_of_fds(&e) => {
                self.shed();
                let rel = CStr::from_bytes_with_nul(&self.rel)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
                open_at(&self.proc, rel)
            }
            r => r,
        }
    }

    /// Opens and reads `/proc/PID/FILE` (as [`NativeProbe::open`]) into
    /// `buf`; its length.
    pub(super) fn read_pid_file(&mut self, pid: Option<u32>, file: &str) -> io::Result<usize> {
        let f = self.open(pid, file)?;
        read_whole(&f, &mut self.buf, false)
    }

    /// Closes every kept descriptor and halves the cap.
    pub(super) fn shed(&mut self) {
        self.meminfo = None;
        self.vmstat = None;
        for k in self.known.values_mut() {
            k.stat = None;
            k.statm = None;
            k.keep = false;
        }
        self.cap /= 2;
    }

    /// Marks the `cap` largest processes (resident pages) to keep their
    /// `stat` open, and closes the others' now, so the room is theirs.
    pub(super) fn rank(&mut self) {
        let cap = self.cap;
        if self.known.len() <= cap {
            for k in self.known.values_mut() {
                k.keep = true;
            }
            return;
        }
        let mut sizes: Vec<u64> = self.known.values().map(|k| k.rss_pages).collect();
        let threshold = if cap == 0 {
            u64::MAX
        } else {
            let (_, nth, _) = sizes.select_nth_unstable_by(cap - 1, |a, b| b.cmp(a));
            *nth
        };
        // Those above the threshold first: in map order, processes tied at
        // it could otherwise take the room of larger ones.
        let mut room = cap;
        for k in self.known.values_mut() {
            k.keep = k.rss_pages > threshold && k.rss_pages > 0;
            room -= usize::from(k.keep);
        }
        for k in self.known.values_mut() {
            if !k.keep && room > 0 && k.rss_pages == threshold && k.rss_pages > 0 {
                k.keep = true;
                room -= 1;
            }
            if !k.keep {
                k.stat = None;
                k.statm = None;
            }
        }
    }

    /// Descriptors kept open now.
    pub(super) fn kept(&self) -> usize {
        self.kept.load(Ordering::Relaxed)
    }

    /// Keeps `f` for a process that was not known (`new`) or is among the
    /// largest, when there is room; otherwise it is closed.
    pub(super) fn keep(&mut self, file: File, wanted: bool) -> Option<Kept> {
        (wanted && self.kept() < self.cap).then(|| {
            self.kept.fetch_add(1, Ordering::Relaxed);
            Kept {
                file,
                count: Arc::clone(&self.kept),
            }
        })
    }

    /// The last pid the kernel handed out, when `/proc` is of this
    /// process's pid namespace and loadavg says.
    pub(super) fn last_pid(&mut self) -> Option<u64> {
        let f = self.loadavg.as_ref()?;
        let n = read_whole(f, &mut self.buf, true).ok()?;
        // A kernel has handed out pid 1 at least; 0 is a made-up loadavg.
        parse_last_pid(&self.buf[..n]).filter(|&p| p > 0)
    }

    /// Reads `/proc/meminfo` or `/proc/vmstat` into `buf` through its kept
    /// descriptor (opened on first use, and again after a failed read).
    pub(super) fn read_system_file(&mut self, which: Which) -> io::Result<usize> {
        let (slot, name) = match which {
            Which::Meminfo => (&mut self.meminfo, "meminfo"),
            Which::Vmstat => (&mut self.vmstat, "vmstat"),
        };
        if let Some(f) = slot.as_ref() {
            match read_whole(f, &mut self.buf, true) {
                Ok(n) if n > 0 => return Ok(n),
                _ => *slot = None,
            }
        }
        let f = self.open(None, name)?;
        let n = read_whole(&f, &mut self.buf, true)?;
        // Under a tight open-file limit (a quarter of it under 8) the two
        // descriptors are the recorder's to have: open and close each tick.
        if self.cap >= KEEP_SYSTEM_FILES_FROM {
            match which {
                Which::Meminfo => self.meminfo = Some(f),
                Which::Vmstat => self.vmstat = Some(f),
            }
        }
        Ok(n)
    }

    /// Bytes written to swap since boot (`pswpout` of `/proc/vmstat`);
    /// `None` where the file or the line cannot be read. `vmstat` is the
    /// largest file a tick reads (4 KiB, 38 µs a read here against
    /// `meminfo`'s 15): it is read again when swap used (`swap_used`, from
    /// `meminfo`) moved since the last read, and otherwise at least every
    /// [`FULL_EVERY`] calls. A page written to swap takes a free slot, so
    /// swap used moves with it; the count is cumulative, so what a skipped
    /// read leaves out shows at the next.
    pub(super) fn swap_out_bytes(&mut self, swap_used: u64) -> Option<u64> {
        if let Some(w) = self
            .written
            .as_mut()
            .filter(|w| w.swap_used == swap_used && w.age + 1 < FULL_EVERY)
        {
            w.age += 1;
            return w.bytes;
        }
        let bytes = self
            .read_system_file(Which::Vmstat)
            .ok()
            .and_then(|n| pages_to_bytes(parse_vmstat_pswpout(&self.buf[..n])?, self.page_size));
        self.written = Some(Written {
            swap_used,
            age: 0,
            bytes,
        });
        bytes
    }

    /// Lists the pids in `/proc` into `listed`; whether the listing is
    /// whole (an entry that failed to read may be a process).
    pub(super) fn list(&mut self) -> Result<bool, ProbeError> {
        let dir = match std::fs::read_dir("/proc") {
            Err(e) if is_out_of_fds(&e) => {
                self.shed();
                std::fs::read_dir("/proc")
            }
            r => r,
        }
        .map_err(|source| ProbeError::Io {
            what: "/proc".into(),
            source,
        })?;
        self.listed.clear();
        let mut whole = true;
        for entry in dir {
            let Ok(entry) = entry else {
                whole = false;
                continue;
            };
            let name = entry.file_name();
            if let Some(pid) =
                parse_u64(name.as_encoded_bytes()).and_then(|p| u32::try_from(p).ok())
            {
                self.listed.push(pid);
            }
        }
        Ok(whole)
    }
}
