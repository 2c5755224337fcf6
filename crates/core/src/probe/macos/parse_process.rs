//! Pure conversions of the macOS kernel's answers about one process: its
//! names (`pbsi_comm`, `proc_pidpath`), start time (`kinfo_proc`), unique id,
//! memory (`task_info(TASK_VM_INFO)`) and arguments (`KERN_PROCARGS2`), and
//! the sizing of the pid list. Compiled and tested on every OS, as
//! [`super::parse`] is, whose byte layout rules hold here too.

use super::parse::{u32_at, u64_at};

/// `MAXCOMLEN` of `<sys/param.h>`: size of `pbsi_comm`/`p_comm` as exported by
/// `proc_pidinfo` (the kernel keeps at most `MAXCOMLEN - 1` characters there,
/// plus the terminating NUL).
pub const MAXCOMLEN: usize = 16;

/// Whether `KERN_PROCARGS2` of a process owned by `owner` is worth asking:
/// the kernel answers the size query for any process but refuses the read
/// (EINVAL) unless the caller is root or the owner — the uid check comes
/// after `calculate_size` (`sysctl_procargsx`, XNU `bsd/kern/kern_sysctl.c`)
/// — so for another user's process it would cost an allocation of up to
/// `ARG_MAX` for nothing. An unknown owner is tried.
pub fn procargs_readable(owner: Option<u32>, me: u32) -> bool {
    me == 0 || owner.map_or(true, |o| o == me)
}

/// Extra pid slots on top of the kernel's estimate, so processes started
/// between the sizing call and the listing call still fit.
pub const PID_SLACK: usize = 64;

/// Size of the buffer `proc_pidpath` wants (`PROC_PIDPATHINFO_MAXSIZE`).
pub const PID_PATH_MAX: usize = 4096;

/// The executable's name from a `proc_pidpath` answer: the last path
/// component. Stops at a NUL, ignores a trailing `/`; empty for an empty path.
pub fn name_from_path(path: &[u8]) -> String {
    let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
    let mut path = &path[..end];
    while let [rest @ .., b'/'] = path {
        path = rest;
    }
    let start = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    String::from_utf8_lossy(&path[start..]).into_owned()
}

/// Whether `comm` is as long as the kernel keeps (`MAXCOMLEN - 1` bytes), so
/// the real name may be longer: only then is `proc_pidpath` worth a call.
pub fn comm_may_be_cut(comm: &str) -> bool {
    comm.len() >= MAXCOMLEN - 1
}

/// The name to show for a process, from its `comm` (short BSD name) and the
/// last component of its executable path (either may be empty).
///
/// `comm` is preferred, except when it is empty, or when it is cut short at
/// `MAXCOMLEN - 1` characters and the path's name continues it (e.g. comm
/// `com.apple.WebKi`, path name `com.apple.WebKit.WebContent`): then the path
/// name is the full one.
pub fn choose_name(comm: &str, path_name: &str) -> String {
    if comm.is_empty()
        || (comm_may_be_cut(comm) && path_name.len() > comm.len() && path_name.starts_with(comm))
    {
        path_name.to_owned()
    } else {
        comm.to_owned()
    }
}

/// Start time of a process in µs since the epoch, from the `struct
/// kinfo_proc` answered by `sysctl {CTL_KERN, KERN_PROC, KERN_PROC_PID, pid}`
/// (readable for every user's processes, unlike `PROC_PIDTBSDINFO`).
///
/// `kinfo_proc` starts with `struct extern_proc`, which starts with the union
/// `p_un` whose `__p_starttime` is a `struct timeval`: `tv_sec` (`i64`) at
/// offset 0, `tv_usec` (`i32`, then 4 bytes of padding) at offset 8.
///
/// `None` when the kernel answered fewer than 16 bytes (it answers 0 bytes,
/// not an error, for a pid that no longer exists) or a negative time.
pub fn start_time_from_kinfo_proc(buf: &[u8]) -> Option<u64> {
    if buf.len() < 16 {
        return None;
    }
    let sec = u64_at(buf, 0)? as i64;
    let usec = u32_at(buf, 8)? as i32;
    timeval_to_us(sec, usec)
}

/// A `struct timeval` as µs since the epoch; `None` if negative.
pub fn timeval_to_us(sec: i64, usec: i32) -> Option<u64> {
    let sec = u64::try_from(sec).ok()?;
    let usec = u64::try_from(usec).ok()?;
    sec.checked_mul(1_000_000)?.checked_add(usec)
}

/// How many pid slots to offer `proc_listallpids`, from the kernel's estimate
/// (the answer to a call with a null buffer; negative on error).
pub fn pid_capacity(estimate: i32) -> usize {
    usize::try_from(estimate).unwrap_or(0) + PID_SLACK
}

/// Whether a `proc_listallpids` answer of `returned` pids into `capacity`
/// slots may have been cut short (the buffer was full): then list again with
/// a larger buffer.
pub fn pid_list_full(returned: usize, capacity: usize) -> bool {
    returned >= capacity
}

/// `TASK_VM_INFO`, the `task_info` flavor of `<mach/task_info.h>`.
pub const TASK_VM_INFO: u32 = 22;

/// The count the probe passes to `task_info(TASK_VM_INFO)` first:
/// `TASK_VM_INFO_REV7_COUNT` = `TASK_VM_INFO_COUNT` of xnu-11215 (macOS 15)
/// and later, revision 7,
/// `sizeof(struct task_vm_info) / sizeof(natural_t)` = 376 / 4. A kernel with
/// a smaller struct answers its own count, which the probe then passes from
/// the next call on (a count above the kernel's `TASK_VM_INFO_COUNT` makes
/// it log "possibly invalid task_info_count", `osfmk/kern/task.c`).
pub const TASK_VM_INFO_REV7_COUNT: usize = 94;

/// Byte offsets in `struct task_vm_info` (`osfmk/mach/task_info.h`,
/// xnu-11417), on both Apple targets (`mach_vm_size_t` and `int64_t` are 8
/// bytes, aligned to 8; `integer_t` is 4):
///
/// | offset | field | revision |
/// |---|---|---|
/// | 0 | `virtual_size` | 0 |
/// | 8, 12 | `region_count`, `page_size` (`integer_t`) | 0 |
/// | 16 … 112 | `resident_size` … `purgeable_volatile_virtual` (13 × 8) | 0 |
/// | 120 | `compressed` | 0 |
/// | 128, 136 | `compressed_peak`, `compressed_lifetime` | 0 |
/// | 144 | `phys_footprint` | 1 |
/// | 152, 160 | `min_address`, `max_address` | 2 |
/// | 168 | `ledger_phys_footprint_peak` | 3 |
/// | 176 … 232 | purgeable and `network` tag ledgers (8 × 8) | 3 |
/// | 240 … 264 | `ledger_tag_media_{footprint, footprint_compressed, nofootprint, nofootprint_compressed}` | 3 |
/// | 272 … 296 | `ledger_tag_graphics_…`, same four | 3 |
/// | 304 … 328 | `ledger_tag_neural_…`, same four | 3 |
/// | 336 | `limit_bytes_remaining` | 4 |
/// | 344 | `decompressions` (`integer_t`), then 4 bytes of padding | 5 |
/// | 352 | `ledger_swapins` | 6 |
/// | 360, 368 | `ledger_tag_neural_nofootprint_{total, peak}` | 7 |
pub mod task_vm_info_offsets {
    pub(crate) const COMPRESSED: usize = 120;
    pub(crate) const PHYS_FOOTPRINT: usize = 144;
    pub(crate) const LEDGER_PHYS_FOOTPRINT_PEAK: usize = 168;
    pub(crate) const TAG_MEDIA: usize = 240;
    pub(crate) const TAG_GRAPHICS: usize = 272;
    pub(crate) const TAG_NEURAL: usize = 304;
    pub(crate) const DECOMPRESSIONS: usize = 344;
    pub(crate) const LEDGER_SWAPINS: usize = 352;
}

/// The revision of a `task_info(TASK_VM_INFO)` answer, from the count the
/// kernel wrote back; `None` below revision 0 (the kernel then fails the
/// call anyway).
///
/// The kernel answers its `TASK_VM_INFO_REVn_COUNT` for the newest revision
/// that fits the caller's count (`osfmk/kern/task.c`, `task_info`). Those
/// counts are derived from `sizeof` and shifted by one when revision 5 added
/// a 4-byte `decompressions` before 8-byte-aligned fields:
///
/// | revision | 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 |
/// |---|---|---|---|---|---|---|---|---|
/// | count, xnu before 6153 (no rev 5) | 36 | 38 | 42 | 84 | 86 | – | – | – |
/// | count, xnu 6153 and later | 37 | 39 | 43 | 85 | 87 | 88 | 90 | 94 |
///
/// Both columns map to the same revision here; every field of revision n
/// ends at or before 4 × (its smaller count), so a field is read only when
/// the kernel filled it.
pub fn task_vm_info_revision(count: usize) -> Option<u8> {
    Some(match count {
        94.. => 7,
        90.. => 6,
        88.. => 5,
        86.. => 4,
        84.. => 3,
        42.. => 2,
        38.. => 1,
        36.. => 0,
        _ => return None,
    })
}

/// One ledger tag's four balances (bytes) in `struct task_vm_info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagLedgers {
    /// Resident memory of this tag charged to the task's footprint.
    pub footprint: u64,
    /// The same, held by the compressor (in RAM or swapped out).
    pub footprint_compressed: u64,
    /// Resident memory of this tag the task owns but that is **not** in its
    /// footprint (`vo_no_footprint`, `osfmk/vm/vm_object.c`
    /// `vm_object_ledger_tag_ledgers`).
    pub nofootprint: u64,
    /// The same, held by the compressor.
    pub nofootprint_compressed: u64,
}

impl TagLedgers {
    /// Everything of this tag the task owns, in or out of its footprint.
    pub fn total(&self) -> u64 {
        self.footprint
            .saturating_add(self.footprint_compressed)
            .saturating_add(self.nofootprint)
            .saturating_add(self.nofootprint_compressed)
    }

    /// What of this tag the task owns outside its footprint.
    pub fn outside_footprint(&self) -> u64 {
        self.nofootprint.saturating_add(self.nofootprint_compressed)
    }
}

/// What swapsight keeps of one `task_info(TASK_VM_INFO)` answer. Fields of a
/// revision the kernel did not fill are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskVmInfo {
    pub(crate) revision: u8,
    /// `compressed`: bytes of this task's memory held by the compressor, in
    /// RAM or paged out to the swap files (revision 0).
    pub compressed: u64,
    /// `phys_footprint` (revision 1); the same figure as `ri_phys_footprint`.
    pub phys_footprint: Option<u64>,
    /// `ledger_phys_footprint_peak`: the footprint's lifetime maximum
    /// (revision 3).
    pub phys_footprint_peak: Option<u64>,
    /// Ledger tags (revision 3). "graphics" is memory a driver tagged as
    /// graphics memory for this task (IOKit `kIOMemoryLedgerTagGraphics`);
    /// that Metal buffers are tagged so is likely but not established from
    /// the sources.
    pub graphics: Option<TagLedgers>,
    pub(crate) neural: Option<TagLedgers>,
    pub(crate) media: Option<TagLedgers>,
    /// `decompressions` of the task and its threads, capped at `i32::MAX`
    /// by the kernel (revision 5): pages taken back from the compressor,
    /// from RAM or from swap.
    pub decompressions: Option<u64>,
    /// `ledger_swapins`: bytes this task brought back from the swap files
    /// (`PAGE_SIZE` per page, credited in `c_decompress_page`,
    /// `osfmk/vm/vm_compressor.c`; revision 6). Cumulative.
    pub swapins: Option<u64>,
}

/// Reads the `int64_t`/`mach_vm_size_t` at byte `offset` from the
/// `integer_t` array `task_info` filled (two little-endian halves);
/// negative ledger balances read as 0.
fn word_u64(words: &[i32], offset: usize) -> Option<u64> {
    let i = offset / 4;
    let lo = *words.get(i)? as u32;
    let hi = *words.get(i.checked_add(1)?)? as u32;
    let v = u64::from(lo) | (u64::from(hi) << 32);
    Some(if (v as i64) < 0 { 0 } else { v })
}

fn tag_ledgers(words: &[i32], offset: usize) -> Option<TagLedgers> {
    Some(TagLedgers {
        footprint: word_u64(words, offset)?,
        footprint_compressed: word_u64(words, offset + 8)?,
        nofootprint: word_u64(words, offset + 16)?,
        nofootprint_compressed: word_u64(words, offset + 24)?,
    })
}

/// Parses a `task_info(TASK_VM_INFO)` answer: `words` is the `integer_t`
/// buffer, `count` the count the kernel wrote back (clamped to the buffer).
/// Each field is read only when the revision that `count` tells
/// ([`task_vm_info_revision`]) has it. `None` below revision 0.
pub fn parse_task_vm_info(words: &[i32], count: usize) -> Option<TaskVmInfo> {
    use task_vm_info_offsets as off;
    let words = &words[..count.min(words.len())];
    let revision = task_vm_info_revision(words.len())?;
    let at_least = |rev: u8, offset: usize| {
        if revision >= rev {
            word_u64(words, offset)
        } else {
            None
        }
    };
    let tags = |offset: usize| {
        if revision >= 3 {
            tag_ledgers(words, offset)
        } else {
            None
        }
    };
    Some(TaskVmInfo {
        revision,
        compressed: word_u64(words, off::COMPRESSED)?,
        phys_footprint: at_least(1, off::PHYS_FOOTPRINT),
        phys_footprint_peak: at_least(3, off::LEDGER_PHYS_FOOTPRINT_PEAK),
        graphics: tags(off::TAG_GRAPHICS),
        neural: tags(off::TAG_NEURAL),
        media: tags(off::TAG_MEDIA),
        decompressions: if revision >= 5 {
            words
                .get(off::DECOMPRESSIONS / 4)
                .map(|&d| u64::try_from(d).unwrap_or(0))
        } else {
            None
        },
        swapins: at_least(6, off::LEDGER_SWAPINS),
    })
}

impl TaskVmInfo {
    /// GPU memory: everything the task owns under the "graphics" ledger tag,
    /// in or out of its footprint, resident or compressed.
    pub fn gpu_bytes(&self) -> Option<u64> {
        self.graphics.map(|g| g.total())
    }

    /// Memory the task owns that its footprint does not count: the
    /// `*_nofootprint` balances (and their `_compressed`) of the graphics,
    /// neural and media tags. The "network" tag, never in the footprint, is
    /// left out: it holds network buffers, not what swapsight looks for.
    pub fn outside_footprint_bytes(&self) -> Option<u64> {
        let (g, n, m) = (self.graphics?, self.neural?, self.media?);
        Some(
            g.outside_footprint()
                .saturating_add(n.outside_footprint())
                .saturating_add(m.outside_footprint()),
        )
    }
}

/// `PROC_PIDUNIQIDENTIFIERINFO` (`bsd/sys/proc_info_private.h`), a
/// `proc_pidinfo` flavor every user may ask for any process
/// (`bsd/kern/proc_info.c`, "Certain operations don't require privileges").
pub const PROC_PIDUNIQIDENTIFIERINFO: i32 = 17;

/// `sizeof(struct proc_uniqidentifierinfo)`, asserted to be 56 by XNU:
/// `p_uuid[16]`, `p_uniqueid` (`u64`, offset 16), `p_puniqueid`,
/// `p_idversion`, `p_orig_ppidversion`, two reserved `u64`.
pub const PROC_UNIQIDENTIFIERINFO_SIZE: usize = 56;

/// `p_uniqueid` from a `proc_uniqidentifierinfo` answer: an id the kernel
/// never gives to two processes until reboot, unlike a pid. `None` for a
/// short answer.
pub fn parse_uniqueid(buf: &[u8]) -> Option<u64> {
    if buf.len() < PROC_UNIQIDENTIFIERINFO_SIZE {
        return None;
    }
    u64_at(buf, 16)
}

/// `kern.argmax` on macOS (`ARG_MAX`, `bsd/sys/syslimits.h`): the kernel
/// refuses a `KERN_PROCARGS2` buffer larger than this (plus the `argc`
/// word) with EINVAL.
pub const ARG_MAX: usize = 1024 * 1024;

/// A process's arguments from a `KERN_PROCARGS2` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcArgs<'a> {
    /// The path the process was executed by (`executable_path=` stripped
    /// by the kernel).
    pub exec_path: &'a [u8],
    pub(crate) argv: Vec<&'a [u8]>,
}

/// Parses `sysctl {CTL_KERN, KERN_PROCARGS2, pid}` as `sysctl_procargsx`
/// lays it out (XNU `bsd/kern/kern_sysctl.c`): `int argc` (native endian),
/// then the top of the process's stack — the executable path, NUL, NUL
/// padding to the next word, then `argc` NUL-terminated arguments, then the
/// environment (read no further: it may hold secrets). A process with the
/// no-read-procargs entitlement gets a synthetic answer of the same shape
/// (`sysctl_procargs_no_read`: argc 1, path, one NUL, the path again).
///
/// Arguments are taken until `argc` of them or [`crate::probe::naming::ARGS_READ_MAX`]
/// bytes; an argument cut by the end of the buffer is kept as far as it
/// goes. `None` for a buffer shorter than the `argc` word, a negative
/// `argc` or an empty path.
pub fn parse_procargs2(buf: &[u8]) -> Option<ProcArgs<'_>> {
    let argc = i32::from_ne_bytes(buf.get(..4)?.try_into().ok()?);
    let argc = usize::try_from(argc).ok()?;
    let rest = &buf[4..];
    let path_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let exec_path = &rest[..path_end];
    if exec_path.is_empty() {
        return None;
    }
    let mut at = path_end;
    while rest.get(at) == Some(&0) {
        at += 1;
    }
    let mut argv = Vec::new();
    let mut taken = 0usize;
    while argv.len() < argc && at < rest.len() && taken < crate::probe::naming::ARGS_READ_MAX {
        let tail = &rest[at..];
        let len = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        argv.push(&tail[..len]);
        taken = taken.saturating_add(len + 1);
        at = at.saturating_add(len + 1);
    }
    Some(ProcArgs { exec_path, argv })
}
